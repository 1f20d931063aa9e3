/*
 * Specification of the reading of librdkafka's statistics
 * (proto/io/cv_kafka_conf.h cv__kafka_stats_lag): the consumer lag of the
 * partitions assigned, nothing of the internal partition -1 nor of
 * partitions whose lag librdkafka does not know.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_kafka_conf.h"

#include <string.h>

static int lag_of(const char *json, cv_kafka_lag_t *out, int max)
{
    return cv__kafka_stats_lag(json, strlen(json), out, max);
}

static void test_the_lag_of_each_known_partition_is_read(void **state)
{
    (void)state;
    const char *json = "{\"name\": \"rdkafka#consumer-1\", \"topics\": {"
                       "\"converge.check\": {\"topic\": \"converge.check\", \"partitions\": {"
                       "\"0\": {\"partition\": 0, \"consumer_lag\": 12},"
                       "\"3\": {\"partition\": 3, \"consumer_lag\": -1},"
                       "\"-1\": {\"partition\": -1, \"consumer_lag\": -1}}},"
                       "\"converge.check.express\": {\"partitions\": {"
                       "\"7\": {\"partition\": 7, \"consumer_lag\": 0}}}}}";
    cv_kafka_lag_t lag[8];
    assert_int_equal(lag_of(json, lag, 8), 2);
    assert_string_equal(lag[0].topic, "converge.check");
    assert_int_equal(lag[0].partition, 0);
    assert_int_equal(lag[0].lag, 12);
    assert_string_equal(lag[1].topic, "converge.check.express");
    assert_int_equal(lag[1].partition, 7);
    assert_int_equal(lag[1].lag, 0);
}

static void test_no_more_than_max_partitions_are_written(void **state)
{
    (void)state;
    const char *json = "{\"topics\": {\"t\": {\"partitions\": {"
                       "\"0\": {\"consumer_lag\": 1}, \"1\": {\"consumer_lag\": 2},"
                       "\"2\": {\"consumer_lag\": 3}}}}}";
    cv_kafka_lag_t lag[2];
    assert_int_equal(lag_of(json, lag, 2), 2);
    assert_int_equal(lag[1].lag, 2);
}

static void test_statistics_without_topics_have_no_lag(void **state)
{
    (void)state;
    cv_kafka_lag_t lag[2];
    assert_int_equal(lag_of("{\"name\": \"rdkafka#producer-1\", \"brokers\": {}}", lag, 2), 0);
}

static void test_text_that_is_not_a_json_object_is_refused(void **state)
{
    (void)state;
    cv_kafka_lag_t lag[2];
    assert_int_equal(lag_of("{\"topics\": ", lag, 2), -1);
    assert_int_equal(lag_of("[1, 2]", lag, 2), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_lag_of_each_known_partition_is_read),
        cmocka_unit_test(test_no_more_than_max_partitions_are_written),
        cmocka_unit_test(test_statistics_without_topics_have_no_lag),
        cmocka_unit_test(test_text_that_is_not_a_json_object_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
