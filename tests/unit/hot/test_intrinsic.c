/*
 * cv_intrinsic_resolve and cv_intrinsic_references: Heat's functions
 * evaluated against parameters and a table of known resources.
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
#include "test_util.h"

static char err[1024];

/* Resources the tests can refer to: name -> {"id": ..., "attrs": {...}}. */
static const char *resources_json =
    "{\"server\": {\"id\": \"srv-1\", \"attrs\": {\"networks\": {\"private\": [\"10.0.0.1\", "
    "\"10.0.0.2\"]}, \"name\": \"web\"}},"
    " \"disk\": {\"id\": \"vol-9\", \"attrs\": {}}}";

static int lookup(void *ud, const char *name, const char **physical_id, const json_t **attributes)
{
    json_t *entry = json_object_get((json_t *)ud, name);
    if (!entry)
        return CV_ENOENT;
    *physical_id = json_string_value(json_object_get(entry, "id"));
    *attributes = json_object_get(entry, "attrs");
    return 0;
}

static json_t *params;
static json_t *resources;

static int setup(void **state)
{
    (void)state;
    params = json_loads("{\"name\": \"app\", \"port\": 8080, \"ratio\": 1.5, \"flag\": true,"
                        " \"cfg\": {\"zones\": [\"a\", \"b\"], \"owner\": {\"id\": 7}},"
                        " \"names\": [\"x\", \"y\"]}",
                        0, NULL);
    resources = json_loads(resources_json, 0, NULL);
    return params && resources ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(params);
    json_decref(resources);
    return 0;
}

/* Resolves the YAML-ish JSON expression `expr_json`. */
static json_t *resolve(const char *expr_json)
{
    json_error_t jerr;
    json_t *expr = json_loads(expr_json, JSON_DECODE_ANY, &jerr);
    if (!expr)
        fail_msg("bad test expression %s: %s", expr_json, jerr.text);
    cv_resolve_ctx_t ctx = {.parameters = params, .resource = lookup, .ud = resources};
    err[0] = '\0';
    json_t *out = cv_intrinsic_resolve(expr, &ctx, "outputs.o.value", err, sizeof(err));
    json_decref(expr);
    return out;
}

static void assert_resolves(const char *expr_json, const char *expected_json)
{
    json_t *got = resolve(expr_json);
    if (!got)
        fail_msg("%s failed: %s", expr_json, err);
    json_t *want = json_loads(expected_json, JSON_DECODE_ANY, NULL);
    if (!json_equal(got, want)) {
        char *s = json_dumps(got, JSON_ENCODE_ANY);
        fail_msg("%s gave %s, expected %s", expr_json, s, expected_json);
    }
    json_decref(got);
    json_decref(want);
}

static void assert_fails(const char *expr_json, const char *fragment)
{
    json_t *got = resolve(expr_json);
    if (got)
        fail_msg("%s resolved", expr_json);
    assert_contains(err, "outputs.o.value");
    assert_contains(err, fragment);
}

/* Fails with exactly `message` (Heat's text) after the location. */
static void assert_fails_with(const char *expr_json, const char *message)
{
    char want[1024];
    json_t *got = resolve(expr_json);
    if (got)
        fail_msg("%s resolved", expr_json);
    snprintf(want, sizeof(want), "outputs.o.value: %s", message);
    size_t n = strlen(err), m = strlen(want);
    if (n < m || strcmp(err + n - m, want) != 0)
        fail_msg("error \"%s\" does not end with \"%s\"", err, want);
}

/* ---------------------------------------------------------------- data */

static void test_plain_data_resolves_to_an_equal_copy(void **state)
{
    (void)state;
    assert_resolves("{\"a\": [1, {\"b\": null}], \"c\": \"d\"}",
                    "{\"a\": [1, {\"b\": null}], \"c\": \"d\"}");
    assert_resolves("42", "42");
}

/* ---------------------------------------------------------------- get_param */

static void test_get_param_returns_the_typed_value(void **state)
{
    (void)state;
    assert_resolves("{\"get_param\": \"port\"}", "8080");
    assert_resolves("{\"get_param\": \"cfg\"}",
                    "{\"zones\": [\"a\", \"b\"], \"owner\": {\"id\": 7}}");
}

static void test_get_param_path_walks_maps_and_lists(void **state)
{
    (void)state;
    assert_resolves("{\"get_param\": [\"cfg\", \"zones\", 1]}", "\"b\"");
    assert_resolves("{\"get_param\": [\"cfg\", \"zones\", \"0\"]}", "\"a\"");
    assert_resolves("{\"get_param\": [\"cfg\", \"owner\", \"id\"]}", "7");
    assert_resolves("{\"get_param\": [\"names\", -1]}", "\"y\"");
}

/* A string is a sequence to Python: Heat's path picks a character of it. */
static void test_a_path_index_into_a_string_picks_a_character(void **state)
{
    (void)state;
    assert_resolves("{\"get_param\": [\"name\", 0]}", "\"a\"");
    assert_resolves("{\"get_param\": [\"name\", \"-1\"]}", "\"p\"");
    assert_resolves("{\"get_param\": [\"name\", 3]}", "\"\"");
    assert_resolves("{\"get_attr\": [\"server\", \"name\", 1]}", "\"e\"");
    assert_resolves("{\"get_attr\": [\"server\", \"name\", \"1\"]}", "null");
}

/* get_attr [R] (GetAttAllAttributes, 2015-10-15): every attribute. */
static void test_get_attr_of_a_resource_alone_gives_every_attribute(void **state)
{
    (void)state;
    assert_resolves(
        "{\"get_attr\": [\"server\"]}",
        "{\"networks\": {\"private\": [\"10.0.0.1\", \"10.0.0.2\"]}, \"name\": \"web\"}");
    assert_resolves("{\"get_attr\": [\"disk\"]}", "{}");
}

static void test_get_param_path_that_is_not_there_gives_an_empty_string(void **state)
{
    (void)state;
    assert_resolves("{\"get_param\": [\"cfg\", \"nope\"]}", "\"\"");
    assert_resolves("{\"get_param\": [\"cfg\", \"zones\", 5]}", "\"\"");
    assert_resolves("{\"get_param\": [\"port\", \"x\"]}", "\"\"");
}

static void test_get_param_of_an_unknown_parameter_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"get_param\": \"nope\"}", "The Parameter (nope) was not provided.");
}

static void test_get_param_with_bad_arguments_says_what_heat_says(void **state)
{
    (void)state;
    assert_fails_with("{\"get_param\": []}", "Function \"get_param\" must have arguments");
    assert_fails_with("{\"get_param\": null}", "Function \"get_param\" must have arguments");
    assert_fails_with("{\"get_param\": 3}", "Argument to \"get_param\" must be string or list");
    assert_fails_with("{\"get_param\": [3]}", "Parameter name in \"get_param\" must be string");
}

/* ---------------------------------------------------------------- get_resource */

static void test_get_resource_gives_the_physical_id(void **state)
{
    (void)state;
    assert_resolves("{\"get_resource\": \"server\"}", "\"srv-1\"");
}

static void test_get_resource_of_an_unknown_resource_is_an_error(void **state)
{
    (void)state;
    assert_fails("{\"get_resource\": \"ghost\"}",
                 "get_resource: resource \"ghost\" is not available");
}

/* ---------------------------------------------------------------- get_attr */

static void test_get_attr_gives_the_attribute(void **state)
{
    (void)state;
    assert_resolves("{\"get_attr\": [\"server\", \"name\"]}", "\"web\"");
}

static void test_get_attr_path_walks_into_the_attribute(void **state)
{
    (void)state;
    assert_resolves("{\"get_attr\": [\"server\", \"networks\", \"private\", 1]}", "\"10.0.0.2\"");
}

static void test_get_attr_of_a_missing_attribute_or_path_is_null(void **state)
{
    (void)state;
    assert_resolves("{\"get_attr\": [\"disk\", \"size\"]}", "null");
    assert_resolves("{\"get_attr\": [\"server\", \"networks\", \"public\", 0]}", "null");
    assert_resolves("{\"get_attr\": [\"server\", \"networks\", \"private\", \"0\"]}", "null");
}

static void test_get_attr_of_an_unknown_resource_is_an_error(void **state)
{
    (void)state;
    assert_fails("{\"get_attr\": [\"ghost\", \"x\"]}",
                 "get_attr: resource \"ghost\" is not available");
}

static void test_get_attr_with_bad_arguments_says_what_heat_says(void **state)
{
    (void)state;
    assert_fails_with("{\"get_attr\": []}",
                      "Arguments to \"get_attr\" can be of the next forms: [resource_name] or "
                      "[resource_name, attribute, (path), ...]");
    assert_fails_with("{\"get_attr\": \"server\"}", "Argument to \"get_attr\" must be a list");
}

/* ---------------------------------------------------------------- str_replace */

static void test_str_replace_replaces_every_occurrence(void **state)
{
    (void)state;
    assert_resolves("{\"str_replace\": {\"template\": \"$x-$x-$y\", \"params\": {\"$x\": \"1\", "
                    "\"$y\": \"2\"}}}",
                    "\"1-1-2\"");
}

static void test_str_replace_prefers_longer_keys(void **state)
{
    (void)state;
    assert_resolves("{\"str_replace\": {\"template\": \"$host:$hostname\", \"params\": {\"$host\": "
                    "\"H\", \"$hostname\": \"N\"}}}",
                    "\"H:N\"");
}

static void test_str_replace_does_not_rescan_replacements(void **state)
{
    (void)state;
    assert_resolves("{\"str_replace\": {\"template\": \"aa b\", \"params\": {\"aa\": \"b\", "
                    "\"b\": \"c\"}}}",
                    "\"b c\"");
}

static void test_str_replace_writes_values_as_heat_does(void **state)
{
    (void)state;
    assert_resolves("{\"str_replace\": {\"template\": \"a b c d e f g\", \"params\": {\"a\": 5, "
                    "\"b\": 1.5, \"c\": 100.0, \"d\": 1e16, \"e\": true, \"f\": null, \"g\": "
                    "{\"k\": [1]}}}}",
                    "\"5 1.5 100.0 1e+16 True  {\\\"k\\\": [1]}\"");
}

static void test_str_replace_with_a_non_string_template_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"str_replace\": {\"template\": 5, \"params\": {}}}",
                      "\"str_replace\" template must be a string");
    assert_fails_with("{\"str_replace\": {\"template\": \"x\", \"params\": [1]}}",
                      "\"str_replace\" params must be a map");
}

static void test_str_replace_with_bad_arguments_says_what_heat_says(void **state)
{
    (void)state;
    assert_fails_with("{\"str_replace\": [1]}", "Arguments to \"str_replace\" must be a map");
    assert_fails_with("{\"str_replace\": {\"template\": \"x\"}}",
                      "\"str_replace\" syntax should be str_replace:\n"
                      "              template: This is var1 template var2\n"
                      "              params:\n"
                      "                var1: a\n"
                      "                var2: string");
}

/* ---------------------------------------------------------------- list_join */

static void test_list_join_joins_several_lists(void **state)
{
    (void)state;
    assert_resolves("{\"list_join\": [\", \", [\"a\", \"b\"], [], [\"c\"], null]}", "\"a, b, c\"");
}

static void test_list_join_converts_numbers_and_serialises_maps(void **state)
{
    (void)state;
    assert_resolves("{\"list_join\": [\"|\", [1, 2.5, null, {\"b\": 1, \"a\": [2]}]]}",
                    "\"1|2.5||{\\\"a\\\": [2], \\\"b\\\": 1}\"");
}

static void test_list_join_of_a_non_list_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"list_join\": [\",\", \"abc\"]}", "\"list_join\" must operate on a list");
    assert_fails_with("{\"list_join\": [1, [\"a\"]]}", "\"list_join\" delimiter must be a string");
    assert_fails_with("{\"list_join\": [\",\", [true]]}",
                      "Items to join must be string, map or list not True");
    assert_fails_with("{\"list_join\": [\",\"]}",
                      "Incorrect arguments to \"list_join\" should be: "
                      "\"list_join\" : [ \" \", [ \"str1\", \"str2\"] ...]");
}

/* ---------------------------------------------------------------- composition */

static void test_nested_functions_are_evaluated_first(void **state)
{
    (void)state;
    assert_resolves("{\"str_replace\": {\"template\": {\"list_join\": [\"/\", [\"http:\", \"\", "
                    "\"$ip:$port\"]]}, \"params\": {\"$ip\": {\"get_attr\": [\"server\", "
                    "\"networks\", \"private\", 0]}, \"$port\": {\"get_param\": \"port\"}}}}",
                    "\"http://10.0.0.1:8080\"");
    assert_resolves("{\"list_join\": [\"-\", {\"get_param\": \"names\"}, [{\"get_resource\": "
                    "\"disk\"}]]}",
                    "\"x-y-vol-9\"");
}

static void test_functions_inside_plain_data_are_resolved_in_place(void **state)
{
    (void)state;
    assert_resolves("{\"a\": [{\"get_param\": \"name\"}], \"b\": {\"get_resource\": \"disk\"}}",
                    "{\"a\": [\"app\"], \"b\": \"vol-9\"}");
}

static void test_unsupported_function_is_an_error(void **state)
{
    (void)state;
    assert_fails("{\"x\": {\"get_file\": \"a.sh\"}}", "function get_file is not supported");
}

static void test_error_names_where_and_the_path_inside(void **state)
{
    (void)state;
    assert_fails("{\"a\": [1, {\"get_param\": \"nope\"}]}",
                 "outputs.o.value.a[1]: The Parameter (nope)");
}

static void test_error_inside_arguments_is_reported_at_the_call(void **state)
{
    (void)state;
    assert_fails("{\"a\": {\"list_join\": [\",\", [{\"get_param\": \"nope\"}]]}}",
                 "outputs.o.value.a: The Parameter (nope) was not provided.");
}

/* Resolves `expr_json` with one parameter, "big": a string of `len` "x". */
static json_t *resolve_with_big(const char *expr_json, size_t len)
{
    char *text = malloc(len + 1);
    memset(text, 'x', len);
    text[len] = '\0';
    json_t *saved = params;
    params = json_pack("{s:s}", "big", text);
    json_t *out = resolve(expr_json);
    json_decref(params);
    params = saved;
    free(text);
    return out;
}

/* `n` times `item`, comma-separated, between `prefix` and `suffix`. */
static char *repeated(const char *prefix, const char *item, size_t n, const char *suffix)
{
    char *s = malloc(strlen(prefix) + n * (strlen(item) + 1) + strlen(suffix) + 1);
    strcpy(s, prefix);
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(s, ",");
        strcat(s, item);
    }
    return strcat(s, suffix);
}

/* Found by fuzzing (tests/fuzz/corpus/template/regress_get_param_amplified):
 * every get_param copies its value, so a list of aliased calls in 900 bytes
 * of YAML resolved to gigabytes. One resolution copies at most 16 MiB. */
static void test_get_param_copies_count_against_a_budget(void **state)
{
    (void)state;
    char *expr = repeated("[", "{\"get_param\": \"big\"}", 15, "]");
    json_t *list = resolve_with_big(expr, 1024 * 1024);
    assert_non_null(list);
    assert_int_equal(json_array_size(list), 15);
    json_decref(list);
    free(expr);
    expr = repeated("[", "{\"get_param\": \"big\"}", 17, "]");
    assert_null(resolve_with_big(expr, 1024 * 1024));
    assert_contains(err, "outputs.o.value[15]: get_param: the resolved value would be larger than "
                         "16777216 bytes");
    free(expr);
}

/* Found by fuzzing (tests/fuzz/corpus/intrinsic/regress_str_replace_amplified):
 * every placeholder repeats the value, so 3 KB of YAML built a gigabyte. */
static void test_a_str_replace_result_past_the_budget_is_refused(void **state)
{
    (void)state;
    char *expr = repeated("{\"str_replace\": {\"template\": \"", "$v", 9000,
                          "\", \"params\": {\"$v\": {\"get_param\": \"big\"}}}}");
    assert_null(resolve_with_big(expr, 2000));
    assert_contains(err, "str_replace: the resolved value would be larger than 16777216 bytes");
    free(expr);
}

static void test_a_list_join_result_past_the_budget_is_refused(void **state)
{
    (void)state;
    char *expr = repeated("{\"list_join\": [\",\", [", "{\"get_param\": \"big\"}", 9, "]]}");
    assert_null(resolve_with_big(expr, 1024 * 1024));
    assert_contains(err, "list_join: the resolved value would be larger than 16777216 bytes");
    free(expr);
}

static void test_resolving_without_a_resource_callback_reports_unavailable(void **state)
{
    (void)state;
    json_t *expr = json_pack("{s:s}", "get_resource", "server");
    cv_resolve_ctx_t ctx = {.parameters = params};
    assert_null(cv_intrinsic_resolve(expr, &ctx, "x", err, sizeof(err)));
    assert_contains(err, "x: get_resource: resource \"server\" is not available");
    json_decref(expr);
}

/* ---------------------------------------------------------------- references */

static void test_references_lists_get_resource_and_get_attr_targets(void **state)
{
    (void)state;
    json_t *expr = json_loads("{\"a\": {\"get_resource\": \"r1\"}, \"b\": [{\"get_attr\": [\"r2\", "
                              "\"x\"]}], \"c\": {\"get_param\": \"p\"}}",
                              0, NULL);
    json_t *out = json_array();
    cv_intrinsic_references(expr, out);
    json_t *expected = json_loads("[\"r1\", \"r2\"]", 0, NULL);
    assert_true(json_equal(out, expected));
    json_decref(expected);
    json_decref(out);
    json_decref(expr);
}

static void test_references_are_found_inside_nested_functions(void **state)
{
    (void)state;
    json_t *expr = json_loads("{\"str_replace\": {\"template\": {\"get_resource\": \"t\"}, "
                              "\"params\": {\"$a\": {\"list_join\": [\",\", [{\"get_attr\": "
                              "[\"u\", \"v\"]}, {\"get_resource\": \"t\"}]]}}}}",
                              0, NULL);
    json_t *out = json_array();
    cv_intrinsic_references(expr, out);
    json_t *expected = json_loads("[\"t\", \"u\", \"t\"]", 0, NULL);
    assert_true(json_equal(out, expected));
    json_decref(expected);
    json_decref(out);
    json_decref(expr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_data_resolves_to_an_equal_copy),
        cmocka_unit_test(test_get_param_returns_the_typed_value),
        cmocka_unit_test(test_get_param_path_walks_maps_and_lists),
        cmocka_unit_test(test_a_path_index_into_a_string_picks_a_character),
        cmocka_unit_test(test_get_attr_of_a_resource_alone_gives_every_attribute),
        cmocka_unit_test(test_get_param_path_that_is_not_there_gives_an_empty_string),
        cmocka_unit_test(test_get_param_of_an_unknown_parameter_is_an_error),
        cmocka_unit_test(test_get_param_with_bad_arguments_says_what_heat_says),
        cmocka_unit_test(test_get_resource_gives_the_physical_id),
        cmocka_unit_test(test_get_resource_of_an_unknown_resource_is_an_error),
        cmocka_unit_test(test_get_attr_gives_the_attribute),
        cmocka_unit_test(test_get_attr_path_walks_into_the_attribute),
        cmocka_unit_test(test_get_attr_of_a_missing_attribute_or_path_is_null),
        cmocka_unit_test(test_get_attr_of_an_unknown_resource_is_an_error),
        cmocka_unit_test(test_get_attr_with_bad_arguments_says_what_heat_says),
        cmocka_unit_test(test_str_replace_replaces_every_occurrence),
        cmocka_unit_test(test_str_replace_prefers_longer_keys),
        cmocka_unit_test(test_str_replace_does_not_rescan_replacements),
        cmocka_unit_test(test_str_replace_writes_values_as_heat_does),
        cmocka_unit_test(test_str_replace_with_a_non_string_template_is_an_error),
        cmocka_unit_test(test_str_replace_with_bad_arguments_says_what_heat_says),
        cmocka_unit_test(test_list_join_joins_several_lists),
        cmocka_unit_test(test_list_join_converts_numbers_and_serialises_maps),
        cmocka_unit_test(test_list_join_of_a_non_list_is_an_error),
        cmocka_unit_test(test_nested_functions_are_evaluated_first),
        cmocka_unit_test(test_functions_inside_plain_data_are_resolved_in_place),
        cmocka_unit_test(test_unsupported_function_is_an_error),
        cmocka_unit_test(test_error_names_where_and_the_path_inside),
        cmocka_unit_test(test_error_inside_arguments_is_reported_at_the_call),
        cmocka_unit_test(test_get_param_copies_count_against_a_budget),
        cmocka_unit_test(test_a_str_replace_result_past_the_budget_is_refused),
        cmocka_unit_test(test_a_list_join_result_past_the_budget_is_refused),
        cmocka_unit_test(test_resolving_without_a_resource_callback_reports_unavailable),
        cmocka_unit_test(test_references_lists_get_resource_and_get_attr_targets),
        cmocka_unit_test(test_references_are_found_inside_nested_functions),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
