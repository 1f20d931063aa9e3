/*
 * Specification of what `convergectl topics` decides without Kafka
 * (cli/cli_topics.h): from a metadata snapshot, whether each of Converge's
 * topics exists as asked, what is to be created, and the replication a new
 * topic gets by default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_topics.h"

#include <string.h>

static const cli_topics_ask_t any = {0, 0, 0};

/* The three topics as a fresh deployment has them: 8, 8 and 1 partitions,
 * replication factor 3, every partition led. */
static cli_topic_md_t complete[] = {
    {"converge.check", 8, 3, 0, NULL},
    {"converge.observe", 8, 3, 0, NULL},
    {"__consumer_offsets", 50, 3, 0, NULL},
    {"converge.dead", 1, 3, 0, NULL},
};

static cli_topics_md_t snapshot(cli_topic_md_t *topics, size_t n)
{
    cli_topics_md_t md = {3, topics, n};
    return md;
}

static void test_three_topics_led_are_as_asked(void **state)
{
    (void)state;
    cli_topic_row_t rows[CLI_TOPICS_COUNT];
    cli_topics_md_t md = snapshot(complete, 4);
    cli_topics_check(&md, &any, rows);
    assert_true(cli_topics_all_ok(rows));
    assert_string_equal(rows[0].topic, "converge.check");
    assert_string_equal(rows[1].topic, "converge.observe");
    assert_string_equal(rows[2].topic, "converge.dead");
    assert_int_equal(rows[2].partitions, 1);
    assert_int_equal(rows[0].replication_factor, 3);
    assert_true(rows[0].exists && rows[0].leaders && !rows[0].created);
    assert_false(cli_topics_should_create(rows));
}

static void test_a_missing_topic_is_named_and_to_be_created(void **state)
{
    (void)state;
    cli_topic_row_t rows[CLI_TOPICS_COUNT];
    cli_topics_md_t md = snapshot(complete, 3); /* no converge.dead */
    cli_topics_check(&md, &any, rows);
    assert_false(cli_topics_all_ok(rows));
    assert_false(rows[2].exists);
    assert_false(rows[2].leaders);
    assert_non_null(strstr(rows[2].problem, "converge.dead does not exist"));
    assert_true(cli_topics_should_create(rows));
    assert_false(cli_topics_all_led(rows));
}

static void test_another_partition_count_differs_only_when_asked(void **state)
{
    (void)state;
    cli_topic_row_t rows[CLI_TOPICS_COUNT];
    cli_topics_md_t md = snapshot(complete, 4);
    cli_topics_ask_t three = {3, 0, 0};
    cli_topics_check(&md, &three, rows);
    assert_false(cli_topics_all_ok(rows));
    assert_true(rows[0].differs && rows[1].differs);
    assert_string_equal(rows[0].problem,
                        "converge.check has 8 partitions, not 3; delete it to change the count");
    assert_false(rows[2].differs); /* converge.dead: 1 whatever --partitions says */
    assert_string_equal(rows[2].problem, "");
    cli_topics_ask_t eight = {8, 0, 0};
    cli_topics_check(&md, &eight, rows);
    assert_true(cli_topics_all_ok(rows));
}

static void test_a_dead_topic_of_several_partitions_differs(void **state)
{
    (void)state;
    cli_topic_row_t rows[CLI_TOPICS_COUNT];
    cli_topic_md_t topics[] = {{"converge.dead", 4, 1, 0, NULL}};
    cli_topics_md_t md = snapshot(topics, 1);
    cli_topics_ask_t eight = {8, 0, 0};
    cli_topics_check(&md, &eight, rows);
    assert_string_equal(rows[2].problem,
                        "converge.dead has 4 partitions, not 1; delete it to change the count");
}

static void test_nothing_is_created_when_an_existing_topic_differs(void **state)
{
    (void)state;
    cli_topic_row_t rows[CLI_TOPICS_COUNT];
    cli_topic_md_t topics[] = {{"converge.check", 4, 1, 0, NULL}};
    cli_topics_md_t md = snapshot(topics, 1);
    cli_topics_ask_t eight = {8, 0, 0};
    cli_topics_check(&md, &eight, rows);
    assert_true(cli_topics_any_differ(rows));
    assert_false(cli_topics_should_create(rows));
    cli_topics_check(&md, &any, rows); /* any count: the others are made */
    assert_false(cli_topics_any_differ(rows));
    assert_true(cli_topics_should_create(rows));
}

static void test_another_replication_factor_differs_only_when_asked(void **state)
{
    (void)state;
    cli_topic_row_t rows[CLI_TOPICS_COUNT];
    cli_topics_md_t md = snapshot(complete, 4);
    cli_topics_ask_t one = {0, 1, 0};
    cli_topics_check(&md, &one, rows);
    assert_true(rows[0].differs);
    assert_non_null(strstr(rows[0].problem, "converge.check has replication factor 3, not 1"));
}

static void test_a_partition_without_leader_is_counted(void **state)
{
    (void)state;
    cli_topic_row_t rows[CLI_TOPICS_COUNT];
    cli_topic_md_t topics[] = {
        {"converge.check", 8, 3, 2, NULL},
        {"converge.observe", 8, 3, 0, NULL},
        {"converge.dead", 1, 3, 0, NULL},
    };
    cli_topics_md_t md = snapshot(topics, 3);
    cli_topics_check(&md, &any, rows);
    assert_false(rows[0].leaders);
    assert_false(rows[0].differs); /* a leader comes back by itself */
    assert_string_equal(rows[0].problem, "converge.check: 2 of its 8 partitions have no leader");
    assert_false(cli_topics_all_led(rows));
    topics[0].leaderless = 0;
    cli_topics_check(&md, &any, rows);
    assert_true(cli_topics_all_led(rows));
}

static void test_a_topic_the_broker_reports_an_error_for_has_no_leaders(void **state)
{
    (void)state;
    cli_topic_row_t rows[CLI_TOPICS_COUNT];
    cli_topic_md_t topics[] = {{"converge.observe", 0, 0, 0, "Broker: Leader not available"}};
    cli_topics_md_t md = snapshot(topics, 1);
    cli_topics_check(&md, &any, rows);
    assert_true(rows[1].exists);
    assert_false(rows[1].leaders);
    assert_string_equal(rows[1].problem,
                        "converge.observe: Kafka reports: Broker: Leader not available");
}

static void test_replication_defaults_to_three_where_the_brokers_are(void **state)
{
    (void)state;
    assert_int_equal(cli_topics_default_replication(1), 1);
    assert_int_equal(cli_topics_default_replication(2), 2);
    assert_int_equal(cli_topics_default_replication(3), 3);
    assert_int_equal(cli_topics_default_replication(9), 3);
    assert_int_equal(cli_topics_default_replication(0), 1);
}

static void test_min_insync_is_two_from_three_replicas(void **state)
{
    (void)state;
    assert_int_equal(cli_topics_default_min_insync(1), 1);
    assert_int_equal(cli_topics_default_min_insync(2), 1);
    assert_int_equal(cli_topics_default_min_insync(3), 2);
    assert_int_equal(cli_topics_default_min_insync(5), 2);
}

static void test_the_dead_letter_topic_has_one_partition(void **state)
{
    (void)state;
    assert_int_equal(cli_topics_create_partitions("converge.check", 0), 8);
    assert_int_equal(cli_topics_create_partitions("converge.observe", 16), 16);
    assert_int_equal(cli_topics_create_partitions("converge.dead", 16), 1);
}

static void test_create_settings_follow_the_cluster(void **state)
{
    (void)state;
    char err[256];
    cli_topics_create_t set;
    assert_int_equal(cli_topics_create_settings(&any, 5, &set, err, sizeof(err)), 0);
    assert_int_equal(set.replication_factor, 3);
    assert_int_equal(set.min_insync, 2);
    assert_int_equal(cli_topics_create_settings(&any, 1, &set, err, sizeof(err)), 0);
    assert_int_equal(set.replication_factor, 1);
    assert_int_equal(set.min_insync, 1);
    cli_topics_ask_t asked = {0, 2, 2};
    assert_int_equal(cli_topics_create_settings(&asked, 3, &set, err, sizeof(err)), 0);
    assert_int_equal(set.replication_factor, 2);
    assert_int_equal(set.min_insync, 2);
}

static void test_replication_beyond_the_brokers_is_refused(void **state)
{
    (void)state;
    char err[256];
    cli_topics_create_t set;
    cli_topics_ask_t three = {0, 3, 0};
    assert_int_equal(cli_topics_create_settings(&three, 1, &set, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--replication-factor 3: the cluster has 1 broker(s)"));
}

static void test_min_insync_beyond_the_replicas_is_refused(void **state)
{
    (void)state;
    char err[256];
    cli_topics_create_t set;
    cli_topics_ask_t two = {0, 0, 2};
    assert_int_equal(cli_topics_create_settings(&two, 1, &set, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--min-insync-replicas 2 is more than the replication factor 1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_topics_led_are_as_asked),
        cmocka_unit_test(test_a_missing_topic_is_named_and_to_be_created),
        cmocka_unit_test(test_another_partition_count_differs_only_when_asked),
        cmocka_unit_test(test_a_dead_topic_of_several_partitions_differs),
        cmocka_unit_test(test_nothing_is_created_when_an_existing_topic_differs),
        cmocka_unit_test(test_another_replication_factor_differs_only_when_asked),
        cmocka_unit_test(test_a_partition_without_leader_is_counted),
        cmocka_unit_test(test_a_topic_the_broker_reports_an_error_for_has_no_leaders),
        cmocka_unit_test(test_replication_defaults_to_three_where_the_brokers_are),
        cmocka_unit_test(test_min_insync_is_two_from_three_replicas),
        cmocka_unit_test(test_the_dead_letter_topic_has_one_partition),
        cmocka_unit_test(test_create_settings_follow_the_cluster),
        cmocka_unit_test(test_replication_beyond_the_brokers_is_refused),
        cmocka_unit_test(test_min_insync_beyond_the_replicas_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
