/*
 * repeat: copies of a template, one per combination of the for_each lists
 * (or the lists side by side with permutations: false), resolved and
 * checked as Heat does (cases from heat/tests/test_hot.py), within the
 * resolver's budget.
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

static void test_repeat_replaces_the_variable_in_each_copy(void **state)
{
    (void)state;
    assert_resolves("{\"repeat\": {\"template\": \"this is %var%\","
                    " \"for_each\": {\"%var%\": [\"a\", \"b\", \"c\"]}}}",
                    "[\"this is a\", \"this is b\", \"this is c\"]");
}

static void test_repeat_replaces_in_lists_maps_and_keys(void **state)
{
    (void)state;
    assert_resolves("{\"repeat\": {\"template\": {\"key-%var%\": \"value-%var%\"},"
                    " \"for_each\": {\"%var%\": [\"a\", \"b\"]}}}",
                    "[{\"key-a\": \"value-a\"}, {\"key-b\": \"value-b\"}]");
    assert_resolves("{\"repeat\": {\"template\": [\"this is %var%\", \"static\", 5, null],"
                    " \"for_each\": {\"%var%\": [\"a\", \"b\"]}}}",
                    "[[\"this is a\", \"static\", 5, null], [\"this is b\", \"static\", 5, null]]");
}

static void test_repeat_takes_every_combination_of_several_lists(void **state)
{
    (void)state;
    assert_resolves("{\"repeat\": {\"template\": \"key-%k%-%v%\","
                    " \"for_each\": {\"%k%\": [\"a\", \"b\"], \"%v%\": [\"x\", \"y\"]}}}",
                    "[\"key-a-x\", \"key-a-y\", \"key-b-x\", \"key-b-y\"]");
}

static void test_repeat_over_a_map_uses_its_keys(void **state)
{
    (void)state;
    assert_resolves(
        "{\"repeat\": {\"template\": \"key-%k%-%v%\","
        " \"for_each\": {\"%k%\": [\"a\", \"b\"], \"%v%\": {\"x\": \"f\", \"y\": \"g\"}}}}",
        "[\"key-a-x\", \"key-a-y\", \"key-b-x\", \"key-b-y\"]");
}

static void test_repeat_without_permutations_takes_the_lists_side_by_side(void **state)
{
    (void)state;
    assert_resolves(
        "{\"repeat\": {\"template\": {\"network\": \"%net%\", \"port\": \"%port%\"},"
        " \"for_each\": {\"%net%\": [\"n1\", \"n2\"], \"%port%\": [\"p1\", \"p2\"]},"
        " \"permutations\": false}}",
        "[{\"network\": \"n1\", \"port\": \"p1\"}, {\"network\": \"n2\", \"port\": \"p2\"}]");
    assert_fails_with(
        "{\"repeat\": {\"template\": \"%a%%b%\","
        " \"for_each\": {\"%a%\": [\"1\", \"2\"], \"%b%\": [\"1\"]}, \"permutations\": false}}",
        "For repeat, the length of for_each values should be equal if no nested loop.");
    assert_fails_with("{\"repeat\": {\"template\": \"%a%\","
                      " \"for_each\": {\"%a%\": {\"x\": 1}}, \"permutations\": false}}",
                      "The values of the \"for_each\" argument to \"repeat\" must be lists");
}

static void test_repeat_over_null_gives_nothing(void **state)
{
    (void)state;
    assert_resolves(
        "{\"repeat\": {\"template\": {\"ROLE\": \"ROLE\"}, \"for_each\": {\"ROLE\": null}}}", "[]");
    assert_resolves("{\"repeat\": {\"template\": {\"ROLE\": \"ROLE\", \"NAME\": \"NAME\"},"
                    " \"for_each\": {\"ROLE\": null, \"NAME\": [\"n1\", \"n2\"]},"
                    " \"permutations\": false}}",
                    "[]");
    assert_resolves("{\"map_merge\": {\"repeat\": {\"template\": {\"ROLE\": \"ROLE\"},"
                    " \"for_each\": {\"ROLE\": [\"role1\", \"role2\"]}}}}",
                    "{\"role1\": \"role1\", \"role2\": \"role2\"}");
}

/* Heat replaces one variable after the other with str.replace. */
static void test_repeat_replaces_variables_in_order_as_python_does(void **state)
{
    (void)state;
    assert_resolves("{\"repeat\": {\"template\": \"<%a%>\","
                    " \"for_each\": {\"%a%\": [\"%b%\"], \"%b%\": [\"B\"]}}}",
                    "[\"<B>\"]");
    assert_resolves("{\"repeat\": {\"template\": \"h\\u00e9\", \"for_each\": {\"\": [\"-\"]}}}",
                    "[\"-h-\\u00e9-\"]");
}

static void test_repeat_with_wrong_arguments_is_an_error(void **state)
{
    (void)state;
    assert_fails_with(
        "{\"repeat\": {\"template\": \"this is %var%\", \"foreach\": {\"%var%\": [\"a\"]}}}",
        "\"repeat\" syntax should be repeat:\n"
        "              template: This is %var%\n"
        "              for_each:\n"
        "                %var%: ['a', 'b', 'c']");
    assert_fails_with("{\"repeat\": {\"template\": \"this is %var%\", \"for_each\": \"%var%\"}}",
                      "The \"for_each\" argument to \"repeat\" must contain a map");
    assert_fails_with(
        "{\"repeat\": {\"template\": \"x\", \"for_each\": {\"%var%\": \"abc\"}}}",
        "The values of the \"for_each\" argument to \"repeat\" must be lists or maps");
    assert_fails_with("{\"repeat\": {\"template\": \"x\", \"for_each\": {\"%v%\": [\"a\"]},"
                      " \"permutations\": \"non bool\"}}",
                      "\"permutations\" should be boolean type for repeat function.");
    assert_fails("{\"repeat\": {\"template\": \"x %v%\", \"for_each\": {\"%v%\": [5]}}}",
                 "repeat: the items of for_each must be strings to replace in the template, got 5");
    assert_fails_with("{\"repeat\": [1]}", "Arguments to \"repeat\" must be a map");
    assert_fails("{\"repeat\": {\"template\": \"x\", \"for_each\": {}}}",
                 "repeat: the \"for_each\" map is empty");
}

static void test_repeat_is_checked_at_validation(void **state)
{
    (void)state;
    accept_output("2015-04-30",
                  "{repeat: {template: {get_resource: r}, for_each: {'%v%': [{get_param: p}]}}}");
    accept_output("2016-10-14", "{repeat: {template: '%v%', for_each: {'%v%': {a: 1}}}}");
    accept_output("pike",
                  "{repeat: {template: '%v%', for_each: {'%v%': [a]}, permutations: false}}");
    reject_output_with("2015-04-30", "{repeat: {template: '%v%', for_each: {'%v%': {a: 1}}}}",
                       "The values of the \"for_each\" argument to \"repeat\" must be lists");
    reject_output_with(
        "pike", "{repeat: {template: '%v%', for_each: {'%v%': {a: 1}}, permutations: false}}",
        "The values of the \"for_each\" argument to \"repeat\" must be lists");
    reject_output_with(
        "pike", "{repeat: {template: '%v%', for_each: {'%v%': abc}}}",
        "The values of the \"for_each\" argument to \"repeat\" must be lists or maps");
    reject_output("2017-02-24",
                  "{repeat: {template: '%v%', for_each: {'%v%': [a]}, permutations: false}}",
                  "repeat: permutations needs heat_template_version 2017-09-01 or later");
    reject_output_with("pike",
                       "{repeat: {template: '%v%', for_each: {'%v%': [a]}, permutations: 1}}",
                       "\"permutations\" should be boolean type for repeat function.");
    reject_output_with("pike", "{repeat: {get_param: m}}", "Arguments to \"repeat\" must be a map");
    reject_output_with("pike", "{repeat: {template: a, for_each: abc}}",
                       "The \"for_each\" argument to \"repeat\" must contain a map");
    reject_output_with("pike", "{repeat: {template: a}}",
                       "\"repeat\" syntax should be repeat:\n"
                       "              template: This is %var%\n"
                       "              for_each:\n"
                       "                %var%: ['a', 'b', 'c']");
    reject_output("pike", "{repeat: {template: {get_attr: [nope, x]}, for_each: {a: [b]}}}",
                  "The specified reference \"nope\" (in unknown) is incorrect.");
}

/* Heat's tables add repeat in 2015-04-30: before it the map is data. */
static void test_repeat_before_2015_04_30_is_plain_data(void **state)
{
    (void)state;
    assert_output_is("2014-10-16", "{repeat: {template: a, for_each: {a: [b, c]}}}",
                     "{\"repeat\": {\"template\": \"a\", \"for_each\": {\"a\": [\"b\", "
                     "\"c\"]}}}");
    assert_output_is("2015-04-30", "{repeat: {template: a, for_each: {a: [b, c]}}}",
                     "[\"b\", \"c\"]");
}

static void test_repeat_references_are_found(void **state)
{
    (void)state;
    json_t *expr = json_loads("{\"repeat\": {\"template\": {\"get_attr\": [\"a\", \"x\"]},"
                              " \"for_each\": {\"%v%\": [{\"get_resource\": \"b\"}]}}}",
                              0, NULL);
    json_t *refs = json_array();
    cv_intrinsic_references(expr, refs);
    assert_int_equal(json_array_size(refs), 2);
    json_decref(refs);
    json_decref(expr);
}

/* Ten lists of ten items are ten billion copies: refused before any is
 * made. A 1 MB item put into a body that names it a hundred times is
 * refused as well. */
static void test_repeat_counts_against_the_budget(void **state)
{
    (void)state;
    char expr[4096] = "{\"repeat\": {\"template\": \"x\", \"for_each\": {";
    for (int v = 0; v < 10; v++) {
        char item[128];
        snprintf(item, sizeof(item),
                 "%s\"%%v%d%%\": [\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]",
                 v ? ", " : "", v);
        strcat(expr, item);
    }
    strcat(expr, "}}}");
    assert_fails(expr, "repeat: the resolved value would be larger than");

    size_t n = 1024 * 1024;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'x', n);
    big[n] = '\0';
    json_t *params = json_pack("{s:[s]}", "l", big);
    free(big);
    char body[512] = "";
    for (int i = 0; i < 100; i++)
        strcat(body, "%v%");
    char expr2[1024];
    snprintf(
        expr2, sizeof(expr2),
        "{\"repeat\": {\"template\": \"%s\", \"for_each\": {\"%%v%%\": {\"get_param\": \"l\"}}}}",
        body);
    json_t *got = resolve_with(expr2, params);
    assert_null(got);
    assert_contains(err, "repeat: the resolved value would be larger than");
    json_decref(params);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeat_replaces_the_variable_in_each_copy),
        cmocka_unit_test(test_repeat_replaces_in_lists_maps_and_keys),
        cmocka_unit_test(test_repeat_takes_every_combination_of_several_lists),
        cmocka_unit_test(test_repeat_over_a_map_uses_its_keys),
        cmocka_unit_test(test_repeat_without_permutations_takes_the_lists_side_by_side),
        cmocka_unit_test(test_repeat_over_null_gives_nothing),
        cmocka_unit_test(test_repeat_replaces_variables_in_order_as_python_does),
        cmocka_unit_test(test_repeat_with_wrong_arguments_is_an_error),
        cmocka_unit_test(test_repeat_is_checked_at_validation),
        cmocka_unit_test(test_repeat_before_2015_04_30_is_plain_data),
        cmocka_unit_test(test_repeat_references_are_found),
        cmocka_unit_test(test_repeat_counts_against_the_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
