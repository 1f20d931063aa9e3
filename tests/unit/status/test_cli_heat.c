/*
 * Specification of what convergectl writes as Heat writes it, without
 * Redis: a stack's parameters as Heat's stack show gives them
 * (cli/status/cli_secret.h), Python's json.dumps (cli/status/cli_output.h), limit hints
 * that name what a user can set, the failed resources a --wait reports, and
 * how a nested stack's name is searched for (cli/status/cli_list.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_list.h"
#include "cli_output.h"
#include "cli_secret.h"
#include "cv_contract.h"

#include <stdlib.h>
#include <string.h>

static void assert_dumps(json_t *v, const char *want)
{
    char *got = cli_py_json_dumps(v);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
    json_decref(v);
}

/* ------------------------------------------------------------------------ */
/* json.dumps                                                               */
/* ------------------------------------------------------------------------ */

static void test_json_dumps_separates_items_as_python_does(void **state)
{
    (void)state;
    assert_dumps(json_pack("{s:i, s:[f, s], s:b, s:n}", "a", 1, "b", 1.5, "x", "c", 1, "d"),
                 "{\"a\": 1, \"b\": [1.5, \"x\"], \"c\": true, \"d\": null}");
    assert_dumps(json_pack("[]"), "[]");
    assert_dumps(json_pack("{}"), "{}");
}

static void test_json_dumps_writes_reals_as_python_repr(void **state)
{
    (void)state;
    assert_dumps(json_pack("[f, f, f, f]", 0.1, 1e16, 1000.0, 1.5e-05),
                 "[0.1, 1e+16, 1000.0, 1.5e-05]");
}

static void test_json_dumps_escapes_what_is_not_printable_ascii(void **state)
{
    (void)state;
    assert_dumps(json_pack("[s, s, s]", "caf\xc3\xa9", "\xf0\x9f\x98\x80", "a\"b\\c\n\x7f"),
                 "[\"caf\\u00e9\", \"\\ud83d\\ude00\", \"a\\\"b\\\\c\\n\\u007f\"]");
}

/* ------------------------------------------------------------------------ */
/* Parameters as stack show gives them                                      */
/* ------------------------------------------------------------------------ */

static json_t *declarations(void)
{
    return json_pack("{s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s, s:b}}}",
                     "parameters", "name", "type", "string", "size", "type", "number", "ratio",
                     "type", "number", "on", "type", "boolean", "zones", "type",
                     "comma_delimited_list", "meta", "type", "json", "password", "type", "string",
                     "hidden", 1);
}

static json_t *stored_values(void)
{
    return json_pack("{s:s, s:i, s:f, s:b, s:[s, s], s:{s:[i, i]}, s:s}", "name", "web", "size", 42,
                     "ratio", 2.0, "on", 1, "zones", "az1", "az2", "meta", "k", 1, 2, "password",
                     "s3cret");
}

static const char *shown(const json_t *params, const char *name)
{
    const char *v = json_string_value(json_object_get(params, name));
    assert_non_null(v); /* every value is text */
    return v;
}

static void test_parameters_are_text_as_heat_stack_show_gives_them(void **state)
{
    (void)state;
    json_t *tree = declarations(), *values = stored_values();
    json_t *p = cli_secret_show_params(tree, values, "0123456789abcdef", "app", false);
    assert_string_equal(shown(p, "name"), "web");
    assert_string_equal(shown(p, "size"), "42");
    assert_string_equal(shown(p, "ratio"), "2.0"); /* Python's str of a float */
    assert_string_equal(shown(p, "on"), "True");   /* Python's str(True) */
    assert_string_equal(shown(p, "zones"), "az1,az2");
    assert_string_equal(shown(p, "meta"), "{\"k\": [1, 2]}");
    assert_string_equal(shown(p, "password"), "******");
    json_decref(p);
    json_decref(values);
    json_decref(tree);
}

static void test_parameters_include_heat_pseudo_parameters(void **state)
{
    (void)state;
    json_t *tree = declarations(), *values = stored_values();
    json_t *p = cli_secret_show_params(tree, values, "0123456789abcdef", "app", false);
    assert_string_equal(shown(p, "OS::stack_id"), "0123456789abcdef");
    assert_string_equal(shown(p, "OS::stack_name"), "app");
    assert_string_equal(shown(p, "OS::project_id"), "");
    json_decref(p);
    json_decref(values);
    json_decref(tree);
}

static void test_show_secrets_shows_a_hidden_parameter_as_text(void **state)
{
    (void)state;
    json_t *tree = declarations(), *values = stored_values();
    json_t *p = cli_secret_show_params(tree, values, "0123456789abcdef", "app", true);
    assert_string_equal(shown(p, "password"), "s3cret");
    assert_string_equal(shown(p, "on"), "True");
    json_decref(p);
    json_decref(values);
    json_decref(tree);
}

static void test_a_list_of_numbers_and_booleans_joins_their_python_text(void **state)
{
    (void)state;
    json_t *tree = declarations();
    json_t *values = json_pack("{s:[i, f, b]}", "zones", 1, 2.5, 0);
    json_t *p = cli_secret_show_params(tree, values, "0123456789abcdef", "app", false);
    assert_string_equal(shown(p, "zones"), "1,2.5,False");
    json_decref(p);
    json_decref(values);
    json_decref(tree);
}

/* ------------------------------------------------------------------------ */
/* Limit hints                                                              */
/* ------------------------------------------------------------------------ */

static void test_a_limit_hint_names_the_environment_and_the_workers_option(void **state)
{
    (void)state;
    cv_limits_t l;
    char err[512];
    cv_limits_init(&l);
    assert_int_not_equal(
        cv_limits_check(&l, CV_LIMIT_RESOURCES, l.resources + 1, "app.yaml", err, sizeof(err)), 0);
    char *said = cli_limit_hints(err);
    assert_non_null(said);
    assert_non_null(strstr(said, "(CONVERGE_MAX_RESOURCES, or the workers' --max-resources)"));
    assert_null(strstr(said, "(--max-resources"));
    assert_non_null(strstr(said, "app.yaml: number of resources")); /* the rest as it was */
    free(said);
}

static void test_every_limit_hint_is_rephrased(void **state)
{
    (void)state;
    cv_limits_t l;
    cv_limits_init(&l);
    for (int i = 0; i < CV_LIMIT__COUNT; i++) {
        char err[512];
        cv_limit_t which = (cv_limit_t)i;
        assert_int_not_equal(
            cv_limits_check(&l, which, cv_limits_get(&l, which) + 1, "x", err, sizeof(err)), 0);
        char *said = cli_limit_hints(err);
        char want[160];
        snprintf(want, sizeof(want), "(%s, or the workers' --%s)", cv_limit_env(which),
                 cv_limit_option(which));
        assert_non_null(strstr(said, want));
        free(said);
    }
}

static void test_the_nesting_depth_error_which_names_its_settings_is_kept(void **state)
{
    (void)state;
    const char *msg = "a.yaml: b.yaml would nest stacks deeper than 5 levels (the limit), set by "
                      "CONVERGE_MAX_NESTING_DEPTH, or the workers' --max-nesting-depth";
    char *said = cli_limit_hints(msg);
    assert_string_equal(said, msg); /* said once, not twice */
    free(said);
}

static void test_other_text_in_parentheses_is_left_alone(void **state)
{
    (void)state;
    const char *msg = "stack a (0123) failed (--max-what, CONVERGE_MAX_WHAT) (";
    char *said = cli_limit_hints(msg);
    assert_string_equal(said, msg);
    free(said);
}

/* ------------------------------------------------------------------------ */
/* Failed resources                                                         */
/* ------------------------------------------------------------------------ */

static json_t *event(const char *resource, const char *action, const char *status,
                     const char *reason, int traversal)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:i}", "resource", resource, "action", action, "status",
                     status, "reason", reason, "traversal", traversal);
}

static void test_failed_resources_of_the_traversal_and_later_each_once(void **state)
{
    (void)state;
    json_t *events = json_array();
    json_array_append_new(events, event("old", "CREATE", "FAILED", "before", 1));
    json_array_append_new(events, event("b", "CREATE", "FAILED", "first", 2));
    json_array_append_new(events, event("a", "CREATE", "COMPLETE", "", 2));
    json_array_append_new(events, event("app", "CREATE", "FAILED", "stack", 2));
    json_array_append_new(events, event("c", "CREATE", "FAILED", "c broke", 2));
    json_array_append_new(events, event("h", "SIGNAL", "FAILED", "refused", 2));
    json_array_append_new(events, event("b", "DELETE", "FAILED", "again", 3));
    json_t *failed = cli_failed_resources(events, 2, "app");
    assert_int_equal(json_array_size(failed), 2);
    const json_t *b = json_array_get(failed, 0), *c = json_array_get(failed, 1);
    assert_string_equal(cli_field_str(b, "resource"), "b");
    assert_string_equal(cli_field_str(b, "action"), "DELETE"); /* its latest failure */
    assert_string_equal(cli_field_str(b, "reason"), "again");
    assert_string_equal(cli_field_str(c, "resource"), "c");
    assert_string_equal(cli_field_str(c, "reason"), "c broke");
    json_decref(failed);
    json_decref(events);
}

static void test_a_nested_stack_shows_the_failures_of_its_last_failed_traversal(void **state)
{
    (void)state;
    json_t *events = json_array();
    json_array_append_new(events, event("x", "CREATE", "FAILED", "long ago", 1));
    json_array_append_new(events, event("y", "UPDATE", "FAILED", "this time", 3));
    json_array_append_new(events, event("y", "DELETE", "COMPLETE", "", 4));
    json_t *failed = cli_failed_resources(events, -1, "child");
    assert_int_equal(json_array_size(failed), 1);
    assert_string_equal(cli_field_str(json_array_get(failed, 0), "reason"), "this time");
    json_decref(failed);
    json_decref(events);
}

static void test_no_failure_no_row(void **state)
{
    (void)state;
    json_t *events = json_array();
    json_array_append_new(events, event("a", "CREATE", "COMPLETE", "", 4));
    json_t *failed = cli_failed_resources(events, 4, "app");
    assert_int_equal(json_array_size(failed), 0);
    json_decref(failed);
    json_decref(events);
}

/* ------------------------------------------------------------------------ */
/* Nested stacks by name                                                    */
/* ------------------------------------------------------------------------ */

static void test_top_level_names_may_end_before_any_dash(void **state)
{
    (void)state;
    size_t ends[8];
    size_t n = cli_list_name_prefixes("my-app-web-0123456789ab", ends, 8);
    assert_int_equal(n, 3);
    assert_int_equal(ends[0], 2); /* "my" */
    assert_int_equal(ends[1], 6); /* "my-app" */
    assert_int_equal(ends[2], 10);
    assert_int_equal(cli_list_name_prefixes("plain", ends, 8), 0);
    assert_int_equal(cli_list_name_prefixes("-x", ends, 8), 0); /* no empty name */
}

static void test_a_name_is_below_the_stacks_it_continues(void **state)
{
    (void)state;
    assert_true(cli_list_name_below("app-web-0123456789ab", "app"));
    assert_true(
        cli_list_name_below("app-web-0123456789ab-db-ba9876543210", "app-web-0123456789ab"));
    assert_false(cli_list_name_below("app-web-0123456789ab", "ap"));
    assert_false(cli_list_name_below("app", "app"));
    assert_false(cli_list_name_below("app-", "app"));
    assert_false(cli_list_name_below("apple-web", "app"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_dumps_separates_items_as_python_does),
        cmocka_unit_test(test_json_dumps_writes_reals_as_python_repr),
        cmocka_unit_test(test_json_dumps_escapes_what_is_not_printable_ascii),
        cmocka_unit_test(test_parameters_are_text_as_heat_stack_show_gives_them),
        cmocka_unit_test(test_parameters_include_heat_pseudo_parameters),
        cmocka_unit_test(test_show_secrets_shows_a_hidden_parameter_as_text),
        cmocka_unit_test(test_a_list_of_numbers_and_booleans_joins_their_python_text),
        cmocka_unit_test(test_a_limit_hint_names_the_environment_and_the_workers_option),
        cmocka_unit_test(test_every_limit_hint_is_rephrased),
        cmocka_unit_test(test_the_nesting_depth_error_which_names_its_settings_is_kept),
        cmocka_unit_test(test_other_text_in_parentheses_is_left_alone),
        cmocka_unit_test(test_failed_resources_of_the_traversal_and_later_each_once),
        cmocka_unit_test(test_a_nested_stack_shows_the_failures_of_its_last_failed_traversal),
        cmocka_unit_test(test_no_failure_no_row),
        cmocka_unit_test(test_top_level_names_may_end_before_any_dash),
        cmocka_unit_test(test_a_name_is_below_the_stacks_it_continues),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
