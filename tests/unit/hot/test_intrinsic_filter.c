/*
 * filter (2017-02-24) and contains (2017-09-01) as functions of property
 * and output values, with Heat's semantics and messages
 * (heat/engine/hot/functions.py Filter, Contains); cases from Heat's
 * heat/tests/test_hot.py test_filter* and test_contains*.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_intrinsic_fixture.h"

static void test_filter_removes_the_values_from_the_list(void **state)
{
    (void)state;
    assert_resolves("{\"filter\": [[null], [1, null, 4, 2, null]]}", "[1, 4, 2]");
    assert_resolves("{\"filter\": [[\"a\", 1], [\"a\", \"b\", 1.0, 2]]}", "[\"b\", 2]");
    assert_resolves("{\"filter\": [[{\"k\": 1}], [{\"k\": 1}, {\"k\": 2}]]}", "[{\"k\": 2}]");
}

/* Heat returns the sequence as it is when it or the values are empty. */
static void test_filter_with_nothing_to_filter_gives_the_sequence(void **state)
{
    (void)state;
    assert_resolves("{\"filter\": [[], [1, 2]]}", "[1, 2]");
    assert_resolves("{\"filter\": [null, [1, 2]]}", "[1, 2]");
    assert_resolves("{\"filter\": [[1], []]}", "[]");
    assert_resolves("{\"filter\": [[1], null]}", "null");
}

static void test_filter_refuses_what_is_not_a_list(void **state)
{
    (void)state;
    assert_fails("{\"filter\": \"foo\"}", "Argument to \"filter\" must be a list");
    assert_fails("{\"filter\": [[null], [1, 2], \"foo\"]}",
                 "\"filter\" expected 2 arguments of the form [values, sequence] but got 3 "
                 "arguments instead");
    assert_fails("{\"filter\": [[null], {\"a\": 1}]}", "\"filter\" only works with lists");
    assert_fails("{\"filter\": [[\"a\"], \"abcd\"]}", "\"filter\" only works with lists");
    assert_fails("{\"filter\": [\"abcd\", [\"a\", \"b\", \"c\", \"d\"]]}",
                 "\"filter\" filters a list of values");
}

static void test_filter_is_checked_at_validation(void **state)
{
    (void)state;
    accept_output("2017-02-24", "{filter: [[a], {get_param: m}]}");
    reject_output("2017-02-24", "{filter: foo}", "Argument to \"filter\" must be a list");
    reject_output("2017-02-24", "{filter: [[a], [b], c]}",
                  "\"filter\" expected 2 arguments of the form [values, sequence] but got 3 "
                  "arguments instead");
    reject_output("2017-02-24", "{filter: [[{get_resource: nope}], [b]]}",
                  "The specified reference \"nope\"");
}

/* Heat's tables add filter in 2017-02-24: before it the map is data. */
static void test_filter_before_2017_02_24_is_plain_data(void **state)
{
    (void)state;
    assert_output_is("2016-10-14", "{filter: [[a], [a, b]]}",
                     "{\"filter\": [[\"a\"], [\"a\", \"b\"]]}");
    assert_output_is("2017-02-24", "{filter: [[a], [a, b]]}", "[\"b\"]");
}

static void test_contains_tells_whether_the_value_is_in_the_sequence(void **state)
{
    (void)state;
    assert_resolves("{\"contains\": [\"v1\", [\"v1\", \"v2\"]]}", "true");
    assert_resolves("{\"contains\": [\"a\", \"abc\"]}", "true");
    assert_resolves("{\"contains\": [\"v3\", [\"v1\", \"v2\"]]}", "false");
    assert_resolves("{\"contains\": [1, [1.0]]}", "true");
}

static void test_contains_refuses_bad_arguments(void **state)
{
    (void)state;
    assert_fails("{\"contains\": {\"key\": \"value\"}}", "Incorrect arguments to \"contains\"");
    assert_fails("{\"contains\": [\"v1\", [\"v1\", \"v2\"], \"redundant\"]}",
                 "must be of the form: [value1, [value1, value2]]");
    assert_fails("{\"contains\": [\"v1\", {\"key\": \"value\"}]}", "should be a sequence");
    reject_output("2017-09-01", "{contains: [a, [a], b]}",
                  "must be of the form: [value1, [value1, value2]]");
    accept_output("2017-09-01", "{contains: [a, {get_param: m}]}");
}

/* Heat's tables add contains in 2017-09-01: before it the map is data. */
static void test_contains_before_2017_09_01_is_plain_data(void **state)
{
    (void)state;
    assert_output_is("2017-02-24", "{contains: [a, [a]]}", "{\"contains\": [\"a\", [\"a\"]]}");
    assert_output_is("2017-09-01", "{contains: [a, [a]]}", "true");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_removes_the_values_from_the_list),
        cmocka_unit_test(test_filter_with_nothing_to_filter_gives_the_sequence),
        cmocka_unit_test(test_filter_refuses_what_is_not_a_list),
        cmocka_unit_test(test_filter_is_checked_at_validation),
        cmocka_unit_test(test_filter_before_2017_02_24_is_plain_data),
        cmocka_unit_test(test_contains_tells_whether_the_value_is_in_the_sequence),
        cmocka_unit_test(test_contains_refuses_bad_arguments),
        cmocka_unit_test(test_contains_before_2017_09_01_is_plain_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
