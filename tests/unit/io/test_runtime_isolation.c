/* When a worker cut off from Redis or Kafka alone steps aside, and when it
 * comes back (cv_isolation). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cv_isolation.h"

static cv_isolation_t decide(double redis_down, double kafka_down, double now, bool isolated,
                             const char **why)
{
    cv_isolation_in_t in = {.redis_down_since = redis_down,
                            .kafka_down_since = kafka_down,
                            .now = now,
                            .bound = 5.0,
                            .isolated = isolated};
    return cv_isolation_decide(&in, why);
}

static void test_a_worker_reaching_both_consumes(void **state)
{
    (void)state;
    const char *why = "x";
    assert_int_equal(decide(0, 0, 100, false, &why), CV_ISOLATION_CONSUME);
    assert_string_equal(why, "");
}

static void test_a_short_one_sided_outage_is_waited_out(void **state)
{
    (void)state;
    assert_int_equal(decide(96, 0, 100, false, NULL), CV_ISOLATION_CONSUME);
    assert_int_equal(decide(0, 95.01, 100, false, NULL), CV_ISOLATION_CONSUME);
}

static void test_redis_alone_unreachable_past_the_bound_steps_aside(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_int_equal(decide(95, 0, 100, false, &why), CV_ISOLATION_STEP_ASIDE);
    assert_string_equal(why, "redis");
}

static void test_kafka_alone_unreachable_past_the_bound_steps_aside(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_int_equal(decide(0, 90, 100, false, &why), CV_ISOLATION_STEP_ASIDE);
    assert_string_equal(why, "kafka");
}

static void test_a_whole_outage_keeps_the_worker_in_place(void **state)
{
    (void)state;
    /* nobody can work: stepping aside would only add a rebalance */
    assert_int_equal(decide(50, 50, 100, false, NULL), CV_ISOLATION_CONSUME);
    assert_int_equal(decide(50, 99, 100, false, NULL), CV_ISOLATION_CONSUME);
}

static void test_an_isolated_worker_stays_aside_until_both_answer(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_int_equal(decide(95, 0, 200, true, &why), CV_ISOLATION_STEP_ASIDE);
    assert_string_equal(why, "redis");
    /* the other service failing meanwhile keeps it aside, too */
    assert_int_equal(decide(95, 150, 200, true, NULL), CV_ISOLATION_STEP_ASIDE);
    assert_int_equal(decide(0, 150, 200, true, &why), CV_ISOLATION_STEP_ASIDE);
    assert_string_equal(why, "kafka");
    assert_int_equal(decide(0, 0, 200, true, &why), CV_ISOLATION_CONSUME);
    assert_string_equal(why, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_worker_reaching_both_consumes),
        cmocka_unit_test(test_a_short_one_sided_outage_is_waited_out),
        cmocka_unit_test(test_redis_alone_unreachable_past_the_bound_steps_aside),
        cmocka_unit_test(test_kafka_alone_unreachable_past_the_bound_steps_aside),
        cmocka_unit_test(test_a_whole_outage_keeps_the_worker_in_place),
        cmocka_unit_test(test_an_isolated_worker_stays_aside_until_both_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
