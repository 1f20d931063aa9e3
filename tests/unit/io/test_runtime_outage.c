/* Outages of Redis and Kafka as a worker reports them, and what an outage
 * means for a failing job's attempt limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cv_outage.h"

static void test_an_outage_starts_once_however_many_failures_it_sees(void **state)
{
    (void)state;
    cv_outage_t o;
    cv_outage_init(&o, "redis");
    assert_true(cv_outage_down(&o, 100.0, "connection refused"));
    assert_false(cv_outage_down(&o, 100.5, "connection refused"));
    assert_false(cv_outage_down(&o, 101.0, "connect timed out"));
    assert_true(o.down);
    assert_int_equal(o.count, 1);
    assert_string_equal(o.why, "connection refused");
}

static void test_an_outage_ends_once_with_its_duration(void **state)
{
    (void)state;
    cv_outage_t o;
    double duration = 0;
    cv_outage_init(&o, "kafka");
    assert_false(cv_outage_up(&o, 99.0, &duration)); /* up while up: no outage ended */
    cv_outage_down(&o, 100.0, "all brokers down");
    assert_true(cv_outage_up(&o, 103.5, &duration));
    assert_true(duration > 3.49 && duration < 3.51);
    assert_false(cv_outage_up(&o, 104.0, &duration));
    assert_false(o.down);
    cv_outage_down(&o, 110.0, "all brokers down");
    assert_int_equal(o.count, 2);
}

static void test_the_last_outage_is_the_latest_of_either_service(void **state)
{
    (void)state;
    cv_outage_t r, k;
    char text[256];
    double d;
    cv_outage_init(&r, "redis");
    cv_outage_init(&k, "kafka");
    cv_outage_describe_last(&r, &k, text, sizeof(text));
    assert_string_equal(text, "");
    cv_outage_down(&r, 100.0, "connection refused");
    cv_outage_up(&r, 102.5, &d);
    cv_outage_describe_last(&r, &k, text, sizeof(text));
    assert_string_equal(text, "redis 100.000-102.500 (2.5 s): connection refused");
    cv_outage_down(&k, 200.0, "1/1 brokers are down");
    cv_outage_describe_last(&r, &k, text, sizeof(text));
    assert_string_equal(text, "kafka since 200.000 (ongoing): 1/1 brokers are down");
}

static void test_failures_while_services_answer_exhaust_the_attempts(void **state)
{
    (void)state;
    cv_retry_t r = {0, 0};
    assert_false(cv_retry_exhausted(&r, true, 3));
    assert_false(cv_retry_exhausted(&r, true, 3));
    assert_true(cv_retry_exhausted(&r, true, 3));
    assert_int_equal(r.attempt, 3);
    assert_int_equal(r.failures, 3);
}

static void test_failures_during_an_outage_only_grow_the_backoff(void **state)
{
    (void)state;
    cv_retry_t r = {0, 0};
    for (int i = 0; i < 100; i++)
        assert_false(cv_retry_exhausted(&r, false, 3));
    assert_int_equal(r.attempt, 100);
    assert_int_equal(r.failures, 0);
    assert_false(cv_retry_exhausted(&r, true, 3));
    assert_int_equal(r.failures, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_outage_starts_once_however_many_failures_it_sees),
        cmocka_unit_test(test_an_outage_ends_once_with_its_duration),
        cmocka_unit_test(test_the_last_outage_is_the_latest_of_either_service),
        cmocka_unit_test(test_failures_while_services_answer_exhaust_the_attempts),
        cmocka_unit_test(test_failures_during_an_outage_only_grow_the_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
