/*
 * Specification of property schemas: unknown, missing and mistyped
 * properties are errors naming where they are; defaults are applied; values
 * that spell the right type are converted as Heat converts them; and the
 * schema decides which changes need a replacement.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_rtype.h"
#include "test_util.h"

#include <string.h>

#define WHERE "resources.r.properties"

static const cv_rtype_t *type(const char *name)
{
    const cv_rtype_t *t = cv_rtype_find(name);
    assert_non_null(t);
    return t;
}

/* Applies the schema of `type_name` to `props_json`; NULL on error, with
 * the message in errstr. */
static json_t *apply(const char *type_name, const char *props_json, bool literal_only, char *errstr,
                     size_t errstr_size)
{
    json_t *props = tu_json(props_json);
    errstr[0] = '\0';
    json_t *out =
        cv_rtype_apply_schema(type(type_name), props, WHERE, literal_only, errstr, errstr_size);
    json_decref(props);
    return out;
}

static void expect_error(const char *type_name, const char *props_json, const char *message)
{
    char err[512];
    json_t *out = apply(type_name, props_json, false, err, sizeof(err));
    if (out) {
        json_decref(out);
        fail_msg("%s accepted by %s", props_json, type_name);
    }
    assert_string_equal(err, message);
}

/* Applies the schema and checks one resulting property against JSON text. */
static void expect_prop(const char *type_name, const char *props_json, const char *prop,
                        const char *want_json)
{
    char err[512];
    json_t *out = apply(type_name, props_json, false, err, sizeof(err));
    if (!out)
        fail_msg("%s refused: %s", props_json, err);
    json_t *want = tu_json(want_json);
    json_t *got = json_object_get(out, prop);
    if (!got || !json_equal(got, want) || json_typeof(got) != json_typeof(want)) {
        char *text = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL;
        fail_msg("%s: %s is %s, want %s", props_json, prop, text ? text : "absent", want_json);
    }
    json_decref(want);
    json_decref(out);
}

/* ---------------------------------------------------------------- errors */

static void test_unknown_property_is_named(void **state)
{
    (void)state;
    expect_error("OS::Heat::TestResource", "{\"value\": \"x\", \"bogus\": 1}",
                 WHERE ".bogus: unknown property");
}

static void test_missing_required_property_is_named(void **state)
{
    (void)state;
    expect_error("OS::Heat::Value", "{\"type\": \"string\"}",
                 WHERE ".value: required property is missing");
}

static void test_null_required_property_counts_as_missing(void **state)
{
    (void)state;
    expect_error("OS::Heat::Value", "{\"value\": null}",
                 WHERE ".value: required property is missing");
}

static void test_wrong_types_name_the_expected_type_and_the_value(void **state)
{
    (void)state;
    expect_error("OS::Heat::TestResource", "{\"fail\": \"maybe\"}",
                 WHERE ".fail: expected boolean, got \"maybe\"");
    expect_error("OS::Heat::TestResource", "{\"value\": {\"a\": 1}}",
                 WHERE ".value: expected string, got {\"a\":1}");
    expect_error("OS::Heat::TestResource", "{\"wait_secs\": \"soon\"}",
                 WHERE ".wait_secs: expected number, got \"soon\"");
    expect_error("OS::Heat::TestResource", "{\"action_wait_secs\": 5}",
                 WHERE ".action_wait_secs: expected map, got 5");
    expect_error("OS::Heat::RandomString", "{\"length\": [1]}",
                 WHERE ".length: expected integer, got [1]");
    expect_error("OS::Heat::RandomString", "{\"character_classes\": \"digits\"}",
                 WHERE ".character_classes: expected list, got \"digits\"");
}

static void test_integers_must_be_integral(void **state)
{
    (void)state;
    expect_error("OS::Heat::RandomString", "{\"length\": 12.5}",
                 WHERE ".length: expected integer, got 12.5");
    expect_error("OS::Heat::RandomString", "{\"length\": \"12.5\"}",
                 WHERE ".length: expected integer, got \"12.5\"");
}

static void test_only_decimal_strings_are_numbers(void **state)
{
    (void)state;
    const char *bad[] = {"\"\"",   "\"0x10\"", "\"inf\"", "\"nan\"", "\" 5\"",
                         "\"5 \"", "\"1e\"",   "\"-\"",   "true",    "null"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char props[64], err[256];
        snprintf(props, sizeof(props), "{\"wait_secs\": %s}", bad[i]);
        json_t *out = apply("OS::Heat::TestResource", props, false, err, sizeof(err));
        if (strcmp(bad[i], "null") == 0) { /* null is absent: the default */
            assert_non_null(out);
            json_decref(out);
            continue;
        }
        if (out)
            fail_msg("%s accepted as a number", bad[i]);
    }
}

static void test_long_values_are_shortened_in_messages(void **state)
{
    (void)state;
    char props[512], err[512];
    memset(props, 0, sizeof(props));
    strcpy(props, "{\"fail\": \"");
    memset(props + strlen(props), 'x', 300);
    strcat(props, "\"}");
    assert_null(apply("OS::Heat::TestResource", props, false, err, sizeof(err)));
    assert_true(strlen(err) < 200);
    assert_string_equal(err + strlen(err) - 6, "xxx...");
}

static void test_properties_must_be_a_map(void **state)
{
    (void)state;
    expect_error("OS::Heat::TestResource", "\"value\"", WHERE ": expected map, got \"value\"");
}

static void test_errors_tolerate_a_missing_errstr(void **state)
{
    (void)state;
    json_t *props = tu_json("{\"bogus\": 1}");
    assert_null(
        cv_rtype_apply_schema(type("OS::Heat::TestResource"), props, WHERE, false, NULL, 0));
    json_decref(props);
}

/* ---------------------------------------------------------------- defaults and conversions */

static void test_defaults_are_applied(void **state)
{
    (void)state;
    char err[256];
    json_t *out = apply("OS::Heat::TestResource", "{}", false, err, sizeof(err));
    assert_non_null(out);
    json_t *want =
        tu_json("{\"value\": \"test_string\", \"update_replace\": false, \"fail\": false,"
                " \"client_name\": \"\", \"entity_name\": \"\", \"wait_secs\": 0,"
                " \"attr_wait_secs\": 0, \"constraint_prop_secs\": 0}");
    assert_true(json_equal(out, want));
    json_decref(want);
    json_decref(out);
    expect_prop("OS::Heat::RandomString", "{}", "length", "32");
}

static void test_a_null_optional_property_takes_its_default(void **state)
{
    (void)state;
    expect_prop("OS::Heat::TestResource", "{\"value\": null}", "value", "\"test_string\"");
    char err[256];
    json_t *out = apply("OS::Heat::RandomString", "{\"salt\": null}", false, err, sizeof(err));
    assert_non_null(out);
    assert_null(json_object_get(out, "salt"));
    json_decref(out);
}

static void test_numeric_strings_become_numbers(void **state)
{
    (void)state;
    expect_prop("OS::Heat::TestResource", "{\"wait_secs\": \"5\"}", "wait_secs", "5");
    expect_prop("OS::Heat::TestResource", "{\"wait_secs\": \"2.5\"}", "wait_secs", "2.5");
    expect_prop("OS::Heat::TestResource", "{\"wait_secs\": \"-1\"}", "wait_secs", "-1");
    expect_prop("OS::Heat::TestResource", "{\"wait_secs\": \"1e2\"}", "wait_secs", "100.0");
    expect_prop("OS::Heat::RandomString", "{\"length\": \"12\"}", "length", "12");
    expect_prop("OS::Heat::RandomString", "{\"length\": 12.0}", "length", "12");
    expect_prop("OS::Heat::RandomString", "{\"length\": \"12.0\"}", "length", "12");
}

static void test_true_and_false_strings_become_booleans(void **state)
{
    (void)state;
    expect_prop("OS::Heat::TestResource", "{\"fail\": \"true\"}", "fail", "true");
    expect_prop("OS::Heat::TestResource", "{\"fail\": \"TRUE\"}", "fail", "true");
    expect_prop("OS::Heat::TestResource", "{\"fail\": \"False\"}", "fail", "false");
    expect_error("OS::Heat::TestResource", "{\"fail\": 1}", WHERE ".fail: expected boolean, got 1");
}

static void test_numbers_and_booleans_become_strings(void **state)
{
    (void)state;
    expect_prop("OS::Heat::TestResource", "{\"value\": 42}", "value", "\"42\"");
    expect_prop("OS::Heat::TestResource", "{\"value\": -7}", "value", "\"-7\"");
    expect_prop("OS::Heat::TestResource", "{\"value\": 0.1}", "value", "\"0.1\"");
    expect_prop("OS::Heat::TestResource", "{\"value\": 2.5}", "value", "\"2.5\"");
    expect_prop("OS::Heat::TestResource", "{\"value\": true}", "value", "\"true\"");
    expect_prop("OS::Heat::TestResource", "{\"value\": false}", "value", "\"false\"");
}

/* Heat writes numbers into text as Python does: 100.0, not 1e+02. */
static void test_reals_become_strings_as_python_writes_them(void **state)
{
    (void)state;
    expect_prop("OS::Heat::TestResource", "{\"value\": 100.0}", "value", "\"100.0\"");
    expect_prop("OS::Heat::TestResource", "{\"value\": 1e16}", "value", "\"1e+16\"");
    expect_prop("OS::Heat::TestResource", "{\"value\": 0.00001}", "value", "\"1e-05\"");
    expect_prop("OS::Heat::TestResource", "{\"value\": 123456.5}", "value", "\"123456.5\"");
}

static void test_any_takes_every_value_as_it_is(void **state)
{
    (void)state;
    expect_prop("OS::Heat::Value", "{\"value\": [1, {\"a\": null}]}", "value",
                "[1, {\"a\": null}]");
    expect_prop("OS::Heat::Value", "{\"value\": 3}", "value", "3");
}

static void test_intrinsics_pass_the_type_check_only_when_literal_only(void **state)
{
    (void)state;
    const char *props = "{\"length\": {\"get_param\": \"n\"}, \"salt\": {\"get_attr\": [\"a\", "
                        "\"b\"]}}";
    char err[256];
    json_t *out = apply("OS::Heat::RandomString", props, true, err, sizeof(err));
    if (!out)
        fail_msg("refused: %s", err);
    json_t *want = tu_json("{\"get_param\": \"n\"}");
    assert_true(json_equal(json_object_get(out, "length"), want));
    json_decref(want);
    json_decref(out);
    assert_null(apply("OS::Heat::RandomString", props, false, err, sizeof(err)));
    assert_string_equal(err, WHERE ".length: expected integer, got {\"get_param\":\"n\"}");
}

static void test_the_result_is_independent_of_the_input(void **state)
{
    (void)state;
    json_t *props = tu_json("{\"value\": [1, 2]}");
    char err[256];
    json_t *out =
        cv_rtype_apply_schema(type("OS::Heat::Value"), props, WHERE, false, err, sizeof(err));
    assert_non_null(out);
    json_array_append_new(json_object_get(props, "value"), json_integer(3));
    assert_int_equal(json_array_size(json_object_get(out, "value")), 2);
    json_decref(props);
    json_decref(out);
}

/* ---------------------------------------------------------------- replacement */

static bool replaces(const char *type_name, const char *old_json, const char *new_json)
{
    json_t *o = tu_json(old_json), *n = tu_json(new_json);
    bool yes = cv_rtype_needs_replacement(type(type_name), o, n);
    json_decref(o);
    json_decref(n);
    return yes;
}

static void test_an_update_allowed_change_is_done_in_place(void **state)
{
    (void)state;
    assert_false(replaces("OS::Heat::TestResource", "{\"value\": \"a\"}", "{\"value\": \"b\"}"));
    assert_false(replaces("OS::Heat::TestResource", "{\"wait_secs\": 1}", "{\"wait_secs\": 2}"));
    assert_false(
        replaces("OS::Heat::Value", "{\"value\": 1}", "{\"value\": 2, \"type\": \"number\"}"));
}

static void test_a_change_without_update_allowed_needs_replacement(void **state)
{
    (void)state;
    assert_true(replaces("OS::Heat::TestResource", "{\"update_replace_value\": \"a\"}",
                         "{\"update_replace_value\": \"b\"}"));
    assert_true(replaces("OS::Heat::TestResource", "{}", "{\"update_replace_value\": \"b\"}"));
    assert_true(replaces("OS::Heat::RandomString", "{\"length\": 8}", "{\"length\": 9}"));
    assert_true(replaces("OS::Heat::RandomString", "{\"salt\": \"1\"}", "{\"salt\": \"2\"}"));
    assert_true(replaces("OS::Heat::RandomString", "{}", "{\"salt\": \"2\"}"));
}

static void test_no_change_needs_no_replacement(void **state)
{
    (void)state;
    assert_false(replaces("OS::Heat::RandomString", "{\"length\": 8, \"salt\": \"s\"}",
                          "{\"salt\": \"s\", \"length\": 8}"));
    assert_false(replaces("OS::Heat::TestResource", "{}", "{}"));
}

static void test_changes_are_compared_after_defaults(void **state)
{
    (void)state;
    assert_false(replaces("OS::Heat::RandomString", "{}", "{\"length\": 32}"));
    assert_false(replaces("OS::Heat::RandomString", "{\"length\": 32}", "{\"length\": null}"));
    assert_false(replaces("OS::Heat::TestResource", "{\"update_replace\": true}",
                          "{\"update_replace\": true, \"value\": \"test_string\"}"));
}

static void test_update_replace_replaces_a_test_resource_on_any_change(void **state)
{
    (void)state;
    assert_true(replaces("OS::Heat::TestResource", "{\"value\": \"a\"}",
                         "{\"value\": \"b\", \"update_replace\": true}"));
    assert_true(replaces("OS::Heat::TestResource", "{\"update_replace\": true, \"wait_secs\": 1}",
                         "{\"update_replace\": true, \"wait_secs\": 2}"));
    assert_false(replaces("OS::Heat::TestResource", "{\"update_replace\": true, \"value\": \"a\"}",
                          "{\"update_replace\": true, \"value\": \"a\"}"));
    assert_false(replaces("OS::Heat::TestResource", "{\"update_replace\": true, \"value\": \"a\"}",
                          "{\"update_replace\": false, \"value\": \"b\"}"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_property_is_named),
        cmocka_unit_test(test_missing_required_property_is_named),
        cmocka_unit_test(test_null_required_property_counts_as_missing),
        cmocka_unit_test(test_wrong_types_name_the_expected_type_and_the_value),
        cmocka_unit_test(test_integers_must_be_integral),
        cmocka_unit_test(test_only_decimal_strings_are_numbers),
        cmocka_unit_test(test_long_values_are_shortened_in_messages),
        cmocka_unit_test(test_properties_must_be_a_map),
        cmocka_unit_test(test_errors_tolerate_a_missing_errstr),
        cmocka_unit_test(test_defaults_are_applied),
        cmocka_unit_test(test_a_null_optional_property_takes_its_default),
        cmocka_unit_test(test_numeric_strings_become_numbers),
        cmocka_unit_test(test_true_and_false_strings_become_booleans),
        cmocka_unit_test(test_numbers_and_booleans_become_strings),
        cmocka_unit_test(test_reals_become_strings_as_python_writes_them),
        cmocka_unit_test(test_any_takes_every_value_as_it_is),
        cmocka_unit_test(test_intrinsics_pass_the_type_check_only_when_literal_only),
        cmocka_unit_test(test_the_result_is_independent_of_the_input),
        cmocka_unit_test(test_an_update_allowed_change_is_done_in_place),
        cmocka_unit_test(test_a_change_without_update_allowed_needs_replacement),
        cmocka_unit_test(test_no_change_needs_no_replacement),
        cmocka_unit_test(test_changes_are_compared_after_defaults),
        cmocka_unit_test(test_update_replace_replaces_a_test_resource_on_any_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
