/*
 * str_split, list_concat and list_concat_unique: resolved as Heat resolves
 * them (inputs and results from heat/tests/test_hot.py), checked at
 * validation, refused on template versions older than Heat's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_template.h"
#include "test_intrinsic_fixture.h"

/* ---------------------------------------------------------------- str_split */

static void test_str_split_gives_the_pieces(void **state)
{
    (void)state;
    assert_resolves("{\"str_split\": [\",\", \"bar,baz\"]}", "[\"bar\", \"baz\"]");
    assert_resolves("{\"str_split\": [\",\", \",a,,\"]}", "[\"\", \"a\", \"\", \"\"]");
    assert_resolves("{\"str_split\": [\", \", \"a, b, c\"]}", "[\"a\", \"b\", \"c\"]");
    assert_resolves("{\"str_split\": [\",\", \"\"]}", "[\"\"]");
}

static void test_str_split_with_an_index_gives_one_piece(void **state)
{
    (void)state;
    assert_resolves("{\"str_split\": [\",\", \"bar,baz\", 1]}", "\"baz\"");
    assert_resolves("{\"str_split\": [\",\", \"bar,baz\", \"1\"]}", "\"baz\"");
    assert_resolves("{\"str_split\": [\",\", \"bar,baz\", -1]}", "\"baz\"");
    assert_resolves("{\"str_split\": [\",\", \"bar,baz\", \" 0 \"]}", "\"bar\"");
}

static void test_str_split_of_null_is_null(void **state)
{
    (void)state;
    assert_resolves("{\"str_split\": [\".\", null]}", "null");
}

static void test_str_split_on_null_splits_on_whitespace(void **state)
{
    (void)state;
    assert_resolves("{\"str_split\": [null, \"check\"]}", "[\"check\"]");
    assert_resolves("{\"str_split\": [null, \"  a \\t b\\n\"]}", "[\"a\", \"b\"]");
    assert_resolves("{\"str_split\": [null, \"   \"]}", "[]");
}

#define SPLIT_USAGE                                                                                \
    "Incorrect arguments to \"str_split\" should be: \"str_split\" : [ \",\", \"apples,pears\", "  \
    "<index>]"
#define SPLIT_INDEX                                                                                \
    "Incorrect index to \"str_split\" should be: \"str_split\" : [ \",\", \"apples,pears\", "      \
    "<index>]"

static void test_str_split_with_a_bad_index_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"str_split\": [\",\", \"bar,baz\", \"bad\"]}", SPLIT_INDEX);
    assert_fails_with("{\"str_split\": [\",\", \"bar,baz\", null]}", SPLIT_INDEX);
    assert_fails_with("{\"str_split\": [\",\", \"bar,baz\", \"2\"]}",
                      "Incorrect index to \"str_split\" should be between 0 and 1");
    assert_fails_with("{\"str_split\": [\",\", \"bar,baz\", -3]}",
                      "Incorrect index to \"str_split\" should be between 0 and 1");
    assert_fails_with("{\"str_split\": [\",\", \"bar\", \"99999999999999999999\"]}",
                      "Incorrect index to \"str_split\" should be between 0 and 0");
}

static void test_str_split_needs_a_delimiter_and_a_string(void **state)
{
    (void)state;
    assert_fails_with("{\"str_split\": [\",\"]}", SPLIT_USAGE);
    assert_fails_with("{\"str_split\": []}", SPLIT_USAGE);
    assert_fails_with("{\"str_split\": \"a,b\"}", SPLIT_USAGE);
    assert_fails("{\"str_split\": [\",\", 5]}", "str_split: the value to split must be a string");
    assert_fails("{\"str_split\": [1, \"a1b\"]}", "str_split: the delimiter must be a string");
    assert_fails("{\"str_split\": [\"\", \"ab\"]}", "str_split: empty separator");
}

static void test_str_split_is_checked_at_validation(void **state)
{
    (void)state;
    accept_output("2015-10-15", "{str_split: [',', {get_param: p}, 0]}");
    accept_output("2015-10-15", "{str_split: [',', {get_param: p}]}");
    reject_output_with("2015-10-15", "{str_split: 'a,b'}", SPLIT_USAGE);
    reject_output_with("2015-10-15", "{str_split: [',']}", SPLIT_USAGE);
    reject_output("2015-10-15", "{str_split: [[x], a]}", "the delimiter must be a string");
    reject_output("2015-10-15", "{str_split: ['', a]}", "str_split: empty separator");
    reject_output("2015-10-15", "{str_split: [',', {get_param: q}]}",
                  "The Parameter (q) was not provided.");
}

/* Heat's tables add str_split in 2015-10-15: before it the map is data. */
static void test_str_split_before_2015_10_15_is_plain_data(void **state)
{
    (void)state;
    assert_output_is("2015-04-30", "{str_split: [',', 'a,b']}",
                     "{\"str_split\": [\",\", \"a,b\"]}");
    assert_output_is("2015-10-15", "{str_split: [',', 'a,b']}", "[\"a\", \"b\"]");
}

/* ---------------------------------------------------------------- list_concat */

static void test_list_concat_joins_the_lists_in_order(void **state)
{
    (void)state;
    assert_resolves("{\"list_concat\": [[\"v1\", \"v2\"], [\"v3\", \"v4\"]]}",
                    "[\"v1\", \"v2\", \"v3\", \"v4\"]");
    assert_resolves("{\"list_concat\": [[\"v1\", \"v2\"], [\"v2\", \"v3\"]]}",
                    "[\"v1\", \"v2\", \"v2\", \"v3\"]");
    assert_resolves("{\"list_concat\": [[{\"v1\": \"v2\"}], [{\"v1\": \"v2\"}]]}",
                    "[{\"v1\": \"v2\"}, {\"v1\": \"v2\"}]");
    assert_resolves("{\"list_concat\": [[], []]}", "[]");
    assert_resolves("{\"list_concat\": []}", "[]");
}

static void test_list_concat_skips_null(void **state)
{
    (void)state;
    assert_resolves("{\"list_concat\": [[\"v1\", \"v2\"], null]}", "[\"v1\", \"v2\"]");
}

static void test_list_concat_unique_keeps_the_first_of_equal_items(void **state)
{
    (void)state;
    assert_resolves("{\"list_concat_unique\": [[\"v1\", \"v2\"], [\"v1\", \"v3\"]]}",
                    "[\"v1\", \"v2\", \"v3\"]");
    assert_resolves("{\"list_concat_unique\": [[{\"v1\": \"v2\"}], [{\"v1\": \"v2\"}]]}",
                    "[{\"v1\": \"v2\"}]");
    /* Python's equality: 1 == 1.0 == True. */
    assert_resolves("{\"list_concat_unique\": [[1, \"1\"], [1.0, true, [1], [1.0]]]}",
                    "[1, \"1\", [1]]");
}

static void test_list_concat_of_a_non_list_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"list_concat\": [[\"v1\", \"v2\"], \"I am string\"]}",
                      "Incorrect arguments: Items to concat must be lists. [[\"v1\", \"v2\"], "
                      "\"I am string\"] contains an item that is not a list: \"I am string\"");
    assert_fails_with("{\"list_concat\": \"I am string\"}",
                      "Incorrect arguments to \"list_concat\" should be: \"list_concat\" : "
                      "[ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]");
    assert_fails_with("{\"list_concat_unique\": {\"a\": [1]}}",
                      "Incorrect arguments to \"list_concat_unique\" should be: "
                      "\"list_concat_unique\" : [ [ <value 1>, <value 2> ], [ <value 3>, "
                      "<value 4> ] ]");
    assert_fails_with("{\"list_concat_unique\": [[1], 2]}",
                      "Incorrect arguments: Items to concat must be lists. [[1], 2] contains an "
                      "item that is not a list: 2");
}

static void test_list_concat_is_checked_at_validation(void **state)
{
    (void)state;
    accept_output("2017-09-01", "{list_concat: [[a], {str_split: [',', {get_param: p}]}, null]}");
    accept_output("2017-09-01", "{list_concat_unique: {str_split: [',', 'a,b']}}");
    reject_output_with("2017-09-01", "{list_concat: abc}",
                       "Incorrect arguments to \"list_concat\" should be: \"list_concat\" : "
                       "[ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]");
    reject_output_with("2017-09-01", "{list_concat_unique: [[a], b]}",
                       "Incorrect arguments: Items to concat must be lists. [[\"a\"], \"b\"] "
                       "contains an item that is not a list: \"b\"");
    reject_output("2017-09-01", "{list_concat: [[{get_resource: nope}]]}",
                  "The specified reference \"nope\" (in unknown) is incorrect.");
}

/* Heat's tables add list_concat and list_concat_unique in 2017-09-01
 * (pike): before it the map is data. */
static void test_list_concat_before_2017_09_01_is_plain_data(void **state)
{
    (void)state;
    assert_output_is("2017-02-24", "{list_concat: [[a], [b]]}",
                     "{\"list_concat\": [[\"a\"], [\"b\"]]}");
    assert_output_is("ocata", "{list_concat_unique: [[a], [b]]}",
                     "{\"list_concat_unique\": [[\"a\"], [\"b\"]]}");
    assert_output_is("2017-09-01", "{list_concat: [[a], [b]]}", "[\"a\", \"b\"]");
    assert_output_is("pike", "{list_concat_unique: [[a], [b], [a]]}", "[\"a\", \"b\"]");
}

static void test_list_concat_references_are_found(void **state)
{
    (void)state;
    json_t *expr = json_loads("{\"list_concat\": [[{\"get_resource\": \"a\"}],"
                              " {\"str_split\": [\",\", {\"get_attr\": [\"b\", \"x\"]}]}]}",
                              0, NULL);
    json_t *refs = json_array();
    cv_intrinsic_references(expr, refs);
    json_t *want = json_loads("[\"a\", \"b\"]", 0, NULL);
    assert_true(json_equal(refs, want));
    json_decref(want);
    json_decref(refs);
    json_decref(expr);
}

/* ---------------------------------------------------------------- budget */

/* Splitting a 1 MB string into half a million pieces, or concatenating a
 * list of 5000 sixty times, each costs more than the budget has left:
 * refused, not built. */
static void test_str_split_and_list_concat_count_against_the_budget(void **state)
{
    (void)state;
    size_t n = 1024 * 1024;
    char *big = malloc(n + 1);
    assert_non_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = i % 2 ? ',' : 'x';
    big[n] = '\0';
    json_t *params = json_pack("{s:s}", "s", big);
    free(big);
    json_t *got = resolve_with("{\"str_split\": [\",\", {\"get_param\": \"s\"}]}", params);
    assert_null(got);
    assert_contains(err, "str_split: the resolved value would be larger than");

    char expr[4096] = "{\"list_concat\": [";
    for (int i = 0; i < 60; i++)
        strcat(expr, i ? ", {\"get_param\": \"l\"}" : "{\"get_param\": \"l\"}");
    strcat(expr, "]}");
    json_t *list = json_array();
    for (int i = 0; i < 5000; i++)
        json_array_append_new(list, json_integer(i));
    json_object_set_new(params, "l", list);
    got = resolve_with(expr, params);
    assert_null(got);
    assert_contains(err, "list_concat: the resolved value would be larger than");
    json_decref(params);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_str_split_gives_the_pieces),
        cmocka_unit_test(test_str_split_with_an_index_gives_one_piece),
        cmocka_unit_test(test_str_split_of_null_is_null),
        cmocka_unit_test(test_str_split_on_null_splits_on_whitespace),
        cmocka_unit_test(test_str_split_with_a_bad_index_is_an_error),
        cmocka_unit_test(test_str_split_needs_a_delimiter_and_a_string),
        cmocka_unit_test(test_str_split_is_checked_at_validation),
        cmocka_unit_test(test_str_split_before_2015_10_15_is_plain_data),
        cmocka_unit_test(test_list_concat_joins_the_lists_in_order),
        cmocka_unit_test(test_list_concat_skips_null),
        cmocka_unit_test(test_list_concat_unique_keeps_the_first_of_equal_items),
        cmocka_unit_test(test_list_concat_of_a_non_list_is_an_error),
        cmocka_unit_test(test_list_concat_is_checked_at_validation),
        cmocka_unit_test(test_list_concat_before_2017_09_01_is_plain_data),
        cmocka_unit_test(test_list_concat_references_are_found),
        cmocka_unit_test(test_str_split_and_list_concat_count_against_the_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
