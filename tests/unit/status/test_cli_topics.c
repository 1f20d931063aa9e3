/*
 * Specification of what `convergectl topics` wants of Kafka (cli/status/cli_topics.h,
 * docs/kafka.md): the three topics and their partitions, the replication
 * defaults by cluster size, and what is wrong with a topic as found.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_topics.h"

#include <string.h>

static const char *const names[CLI_NTOPICS] = {"converge.check", "converge.observe",
                                               "converge.check.express", "converge.observe.express",
                                               "converge.dead"};
enum { DEAD = CLI_NTOPICS - 1 };

static void found(cli_topic_t *t, int partitions, int replicas, bool leaders)
{
    t->exists = true;
    t->partitions = partitions;
    t->replicas = replicas;
    t->leaders = leaders;
}

static void test_the_three_topics_and_their_partitions(void **state)
{
    (void)state;
    cli_topic_t t[CLI_NTOPICS];
    cli_topics_init(t, names, 0);
    assert_string_equal(t[0].name, "converge.check");
    assert_string_equal(t[1].name, "converge.observe");
    assert_string_equal(t[2].name, "converge.check.express");
    assert_string_equal(t[3].name, "converge.observe.express");
    assert_string_equal(t[DEAD].name, "converge.dead");
    /* not asked: any count is accepted, 8 are created; dead letters in one */
    assert_int_equal(t[0].want, 0);
    assert_int_equal(t[0].create, 8);
    assert_int_equal(t[1].create, 8);
    assert_int_equal(t[3].create, 8); /* the express twins as the others */
    assert_int_equal(t[DEAD].create, 1);
    cli_topics_init(t, names, 24);
    assert_int_equal(t[0].want, 24);
    assert_int_equal(t[1].create, 24);
    assert_int_equal(t[DEAD].want, 0);
    assert_int_equal(t[DEAD].create, 1);
    assert_false(t[0].exists || t[0].created);
}

static void test_replication_follows_the_cluster_size(void **state)
{
    (void)state;
    assert_int_equal(cli_topics_default_replication(1), 1);
    assert_int_equal(cli_topics_default_replication(2), 2);
    assert_int_equal(cli_topics_default_replication(3), 3);
    assert_int_equal(cli_topics_default_replication(7), 3);
    assert_int_equal(cli_topics_default_min_insync(1), 1);
    assert_int_equal(cli_topics_default_min_insync(2), 1);
    assert_int_equal(cli_topics_default_min_insync(3), 2);
}

static void test_a_topic_as_wanted_has_no_problem(void **state)
{
    (void)state;
    cli_topic_t t[CLI_NTOPICS];
    char buf[256];
    cli_topics_init(t, names, 8);
    found(&t[0], 8, 3, true);
    found(&t[DEAD], 5, 1, true); /* dead letters: any count */
    assert_null(cli_topic_problem(&t[0], buf, sizeof(buf)));
    assert_null(cli_topic_problem(&t[DEAD], buf, sizeof(buf)));
}

static void test_each_problem_is_named(void **state)
{
    (void)state;
    cli_topic_t t[CLI_NTOPICS];
    char buf[256];
    cli_topics_init(t, names, 8);
    assert_non_null(
        strstr(cli_topic_problem(&t[1], buf, sizeof(buf)), "converge.observe does not exist"));
    found(&t[0], 4, 1, true);
    assert_non_null(strstr(cli_topic_problem(&t[0], buf, sizeof(buf)),
                           "converge.check has 4 partition(s), not 8"));
    found(&t[0], 8, 1, false);
    assert_non_null(strstr(cli_topic_problem(&t[0], buf, sizeof(buf)),
                           "converge.check has a partition without a leader"));
    /* any count when none was asked */
    cli_topics_init(t, names, 0);
    found(&t[0], 4, 1, true);
    assert_null(cli_topic_problem(&t[0], buf, sizeof(buf)));
}

static void test_only_an_existing_topic_of_another_count_differs(void **state)
{
    (void)state;
    cli_topic_t t[CLI_NTOPICS];
    cli_topics_init(t, names, 8);
    assert_false(cli_topics_any_differ(t)); /* missing: to be created */
    found(&t[DEAD], 1, 1, true);
    found(&t[1], 8, 1, false); /* no leader yet: settles by itself */
    assert_false(cli_topics_any_differ(t));
    found(&t[0], 4, 1, true);
    assert_true(cli_topics_any_differ(t));
    cli_topics_init(t, names, 0); /* any count asked */
    found(&t[0], 4, 1, true);
    assert_false(cli_topics_any_differ(t));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_three_topics_and_their_partitions),
        cmocka_unit_test(test_replication_follows_the_cluster_size),
        cmocka_unit_test(test_a_topic_as_wanted_has_no_problem),
        cmocka_unit_test(test_each_problem_is_named),
        cmocka_unit_test(test_only_an_existing_topic_of_another_count_differs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
