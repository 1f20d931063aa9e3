/*
 * map_merge and map_replace: resolved as Heat resolves them (inputs and
 * results from heat/tests/test_hot.py), checked at validation, refused on
 * template versions older than Heat's.
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

/* ---------------------------------------------------------------- map_merge */

static void test_map_merge_later_maps_win(void **state)
{
    (void)state;
    assert_resolves("{\"map_merge\": [{\"f1\": \"b1\", \"f2\": \"b2\"}, {\"f1\": \"b2\"}]}",
                    "{\"f1\": \"b2\", \"f2\": \"b2\"}");
    assert_resolves("{\"map_merge\": [{\"a\": {\"x\": 1}}, {\"a\": {\"y\": 2}}]}",
                    "{\"a\": {\"y\": 2}}");
    assert_resolves("{\"map_merge\": []}", "{}");
}

static void test_map_merge_skips_null(void **state)
{
    (void)state;
    assert_resolves("{\"map_merge\": [{\"f1\": \"b1\", \"f2\": \"b2\"}, null]}",
                    "{\"f1\": \"b1\", \"f2\": \"b2\"}");
}

#define MERGE_USAGE                                                                                \
    "Incorrect arguments to \"map_merge\" should be: \"map_merge\" : [ { \"key1\": \"val1\" }, { " \
    "\"key2\": \"val2\" } ]"
#define REPLACE_EXAMPLE                                                                            \
    "\"map_replace\" : [ { \"key1\": \"val1\" }, {\"keys\": {\"key1\": \"key2\"}, \"values\": "    \
    "{\"val1\": \"val2\"}}]"
#define REPLACE_USAGE "Incorrect arguments to \"map_replace\" should be: " REPLACE_EXAMPLE
#define REPLACE_MAPS                                                                               \
    "Incorrect arguments: to \"map_replace\", arguments must be a list of maps. Example: "         \
    " " REPLACE_EXAMPLE

static void test_map_merge_of_a_non_map_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"map_merge\": [{\"f1\": \"b1\"}, [\"f1\", \"b2\"]]}",
                      "Incorrect arguments: Items to merge must be maps. ['f1', 'b2'] is type "
                      "<class 'list'> instead of a dict");
    assert_fails_with("{\"map_merge\": [\"it's\", 1.5, true]}",
                      "Incorrect arguments: Items to merge must be maps. \"it's\" is type "
                      "<class 'str'> instead of a dict");
    assert_fails_with("{\"map_merge\": [1.5]}",
                      "Incorrect arguments: Items to merge must be "
                      "maps. 1.5 is type <class 'float'> instead of a dict");
    assert_fails_with("{\"map_merge\": {\"f1\": \"b1\"}}", MERGE_USAGE);
}

static void test_map_merge_is_checked_at_validation(void **state)
{
    (void)state;
    accept_output("2016-04-08", "{map_merge: [{get_param: m}, {x: {get_resource: r}}, null]}");
    accept_output("2016-04-08", "{map_merge: {get_param: m}}");
    reject_output_with("2016-04-08", "{map_merge: abc}", MERGE_USAGE);
    reject_output_with("2016-04-08", "{map_merge: [{a: b}, [c]]}",
                       "Incorrect arguments: Items to merge must be maps. ['c'] is type "
                       "<class 'list'> instead of a dict");
    reject_output("2016-04-08", "{map_merge: [{a: {get_param: nope}}]}",
                  "The Parameter (nope) was not provided.");
}

/* Heat's tables add map_merge in 2016-04-08: before it the map is data. */
static void test_map_merge_before_2016_04_08_is_plain_data(void **state)
{
    (void)state;
    assert_output_is("2015-10-15", "{map_merge: [{a: b}, {c: d}]}",
                     "{\"map_merge\": [{\"a\": \"b\"}, {\"c\": \"d\"}]}");
    assert_output_is("2016-04-08", "{map_merge: [{a: b}, {c: d}]}", "{\"a\": \"b\", \"c\": \"d\"}");
}

/* ---------------------------------------------------------------- map_replace */

static void test_map_replace_renames_keys_and_replaces_values(void **state)
{
    (void)state;
    assert_resolves("{\"map_replace\": [{\"f1\": \"b1\", \"f2\": \"b2\"},"
                    " {\"keys\": {\"f1\": \"F1\"}, \"values\": {\"b2\": \"B2\"}}]}",
                    "{\"F1\": \"b1\", \"f2\": \"B2\"}");
    assert_resolves("{\"map_replace\": [{\"f1\": \"b1\", \"f2\": \"b2\"},"
                    " {\"values\": {\"b2\": \"B2\"}}]}",
                    "{\"f1\": \"b1\", \"f2\": \"B2\"}");
    assert_resolves("{\"map_replace\": [{\"f1\": \"b1\", \"f2\": \"b2\"},"
                    " {\"keys\": {\"f2\": \"F2\"}}]}",
                    "{\"f1\": \"b1\", \"F2\": \"b2\"}");
}

static void test_map_replace_may_rename_a_key_to_itself(void **state)
{
    (void)state;
    assert_resolves("{\"map_replace\": [{\"f1\": \"b1\", \"f2\": \"b2\"},"
                    " {\"keys\": {\"f2\": \"f2\"}}]}",
                    "{\"f1\": \"b1\", \"f2\": \"b2\"}");
}

static void test_map_replace_null_replacements_change_nothing(void **state)
{
    (void)state;
    assert_resolves("{\"map_replace\": [{\"f1\": \"b1\"}, {\"values\": null}]}",
                    "{\"f1\": \"b1\"}");
    assert_resolves("{\"map_replace\": [{\"f1\": \"b1\"}, {\"keys\": null}]}", "{\"f1\": \"b1\"}");
    assert_resolves("{\"map_replace\": [{\"f1\": \"b1\"}, {\"keys\": {\"f1\": null}}]}",
                    "{\"f1\": \"b1\"}");
    assert_resolves("{\"map_replace\": [null, {}]}", "{}");
}

static void test_map_replace_replaces_string_values_only(void **state)
{
    (void)state;
    /* Heat looks up hashable values: lists and maps stay, and a number is
     * not the string key "1". */
    assert_resolves("{\"map_replace\": [{\"f1\": \"b1\", \"f2\": [], \"f3\": 1},"
                    " {\"values\": {\"1\": \"one\"}}]}",
                    "{\"f1\": \"b1\", \"f2\": [], \"f3\": 1}");
    assert_resolves("{\"map_replace\": [{\"a\": \"x\", \"b\": \"x\"},"
                    " {\"values\": {\"x\": {\"deep\": [1]}}}]}",
                    "{\"a\": {\"deep\": [1]}, \"b\": {\"deep\": [1]}}");
}

static void test_map_replace_key_collisions_are_errors(void **state)
{
    (void)state;
    assert_fails("{\"map_replace\": [{\"f1\": \"b1\", \"f2\": \"b2\"},"
                 " {\"keys\": {\"f2\": \"f1\"}}]}",
                 "key replacement f1 collides with a key in the input map");
    assert_fails("{\"map_replace\": [{\"f1\": \"b1\", \"f2\": \"b2\"},"
                 " {\"keys\": {\"f1\": \"f3\", \"f2\": \"f3\"}}]}",
                 "key replacement f3 collides with a key in the output map");
}

static void test_map_replace_with_malformed_arguments_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"map_replace\": \"ab\"}", REPLACE_USAGE);
    assert_fails_with("{\"map_replace\": []}", REPLACE_USAGE);
    assert_fails_with("{\"map_replace\": [{\"f1\": \"b1\"}]}", REPLACE_USAGE);
    assert_fails_with("{\"map_replace\": [{\"keys\": {\"f1\": \"f3\"}}]}", REPLACE_USAGE);
    assert_fails_with("{\"map_replace\": [{\"f1\": \"b1\"}, \"ab\"]}", REPLACE_MAPS);
    assert_fails_with("{\"map_replace\": [{\"f1\": \"b1\"}, {\"notkeys\": {\"f2\": \"F2\"}}]}",
                      REPLACE_USAGE);
    assert_fails_with("{\"map_replace\": [{\"f1\": \"b1\"}, {\"keys\": [1]}]}", REPLACE_MAPS);
    assert_fails("{\"map_replace\": [{\"f1\": \"b1\"}, {\"keys\": {\"f1\": 5}}]}",
                 "map_replace: key replacements must be strings, got 5");
}

static void test_map_replace_is_checked_at_validation(void **state)
{
    (void)state;
    accept_output("2016-10-14",
                  "{map_replace: [{get_param: m}, {values: {b: {get_resource: r}}}]}");
    accept_output("2016-10-14", "{map_replace: [{a: b}, {get_param: m}]}");
    accept_output("newton", "{map_replace: {get_param: m}}");
    reject_output_with("2016-10-14", "{map_replace: [{a: b}]}", REPLACE_USAGE);
    reject_output_with("2016-10-14", "{map_replace: [[a], {}]}", REPLACE_MAPS);
    reject_output_with("2016-10-14", "{map_replace: [{a: b}, {kyes: {a: c}}]}", REPLACE_USAGE);
    reject_output_with("2016-10-14", "{map_replace: [{a: b}, {keys: abc}]}", REPLACE_MAPS);
    reject_output("2016-10-14", "{map_replace: [{a: b}, {keys: {a: [c]}}]}",
                  "map_replace: key replacements must be strings, got [\"c\"]");
}

/* Heat's tables add map_replace in 2016-10-14: before it the map is data. */
static void test_map_replace_before_2016_10_14_is_plain_data(void **state)
{
    (void)state;
    assert_output_is("2016-04-08", "{map_replace: [{a: b}, {keys: {a: c}}]}",
                     "{\"map_replace\": [{\"a\": \"b\"}, {\"keys\": {\"a\": \"c\"}}]}");
    assert_output_is("2016-10-14", "{map_replace: [{a: b}, {keys: {a: c}}]}", "{\"c\": \"b\"}");
}

/* ---------------------------------------------------------------- budget */

/* One 1 MB value put in place of forty keys is forty copies: refused. */
static void test_map_replace_value_copies_count_against_the_budget(void **state)
{
    (void)state;
    size_t n = 1024 * 1024;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'x', n);
    big[n] = '\0';
    json_t *params = json_pack("{s:{s:s}}", "values", "v", big);
    free(big);
    char expr[4096] = "{\"map_replace\": [{";
    for (int i = 0; i < 40; i++) {
        char item[32];
        snprintf(item, sizeof(item), "%s\"k%d\": \"v\"", i ? ", " : "", i);
        strcat(expr, item);
    }
    strcat(expr, "}, {\"values\": {\"get_param\": \"values\"}}]}");
    json_t *got = resolve_with(expr, params);
    assert_null(got);
    assert_contains(err, "map_replace: the resolved value would be larger than");
    json_decref(params);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_merge_later_maps_win),
        cmocka_unit_test(test_map_merge_skips_null),
        cmocka_unit_test(test_map_merge_of_a_non_map_is_an_error),
        cmocka_unit_test(test_map_merge_is_checked_at_validation),
        cmocka_unit_test(test_map_merge_before_2016_04_08_is_plain_data),
        cmocka_unit_test(test_map_replace_renames_keys_and_replaces_values),
        cmocka_unit_test(test_map_replace_may_rename_a_key_to_itself),
        cmocka_unit_test(test_map_replace_null_replacements_change_nothing),
        cmocka_unit_test(test_map_replace_replaces_string_values_only),
        cmocka_unit_test(test_map_replace_key_collisions_are_errors),
        cmocka_unit_test(test_map_replace_with_malformed_arguments_is_an_error),
        cmocka_unit_test(test_map_replace_is_checked_at_validation),
        cmocka_unit_test(test_map_replace_before_2016_10_14_is_plain_data),
        cmocka_unit_test(test_map_replace_value_copies_count_against_the_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
