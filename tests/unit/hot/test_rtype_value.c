/*
 * Specification of OS::Heat::Value: the `value` attribute is the `value`
 * property converted to `type` as a HOT parameter of that type would be.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_rtype.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define WHERE "resources.v.properties"
#define UUID "abcdefabcdef1234"

static const cv_rtype_t *value_type(void)
{
    return cv_rtype_find("OS::Heat::Value");
}

/* Runs create on `props_json` as given (the engine's resolved properties,
 * schema applied with literal_only so that conversion errors surface at
 * create); returns the create result and the attribute in *attr. */
static int create(const char *props_json, json_t **attr, char *reason, size_t reason_size)
{
    json_t *props = tu_json(props_json);
    cv_rstate_t st = {.stack_name = "stk",
                      .resource_name = "v",
                      .uuid = UUID,
                      .props = props,
                      .now = 1,
                      .data = json_object(),
                      .attrs = json_object()};
    int rc = value_type()->create(&st);
    if (rc == 0) {
        assert_string_equal(st.physical_id, "stk-v-abcdefabcdef");
        assert_int_equal(value_type()->observe(&st, CV_ACTION_CREATE), CV_OBSERVED_COMPLETE);
    }
    *attr = json_incref(json_object_get(st.attrs, "value"));
    snprintf(reason, reason_size, "%s", st.reason);
    json_decref(st.data);
    json_decref(st.attrs);
    json_decref(props);
    return rc;
}

static void expect_attr(const char *props_json, const char *want_json)
{
    json_t *attr, *want = tu_json(want_json);
    char reason[512];
    if (create(props_json, &attr, reason, sizeof(reason)) != 0)
        fail_msg("%s failed: %s", props_json, reason);
    if (!json_equal(attr, want) || json_typeof(attr) != json_typeof(want)) {
        char *got = json_dumps(attr, JSON_ENCODE_ANY);
        fail_msg("%s gave %s, want %s", props_json, got, want_json);
    }
    json_decref(attr);
    json_decref(want);
}

static void expect_failure(const char *props_json, const char *reason_want)
{
    json_t *attr;
    char reason[512];
    assert_int_equal(create(props_json, &attr, reason, sizeof(reason)), CV_EFAILED);
    assert_null(attr);
    assert_string_equal(reason, reason_want);
}

static void test_without_a_type_the_value_is_kept_as_it_is(void **state)
{
    (void)state;
    expect_attr("{\"value\": {\"a\": [1, \"2\"]}}", "{\"a\": [1, \"2\"]}");
    expect_attr("{\"value\": \"5\"}", "\"5\"");
}

static void test_string_type(void **state)
{
    (void)state;
    expect_attr("{\"value\": \"x\", \"type\": \"string\"}", "\"x\"");
    expect_attr("{\"value\": 42, \"type\": \"string\"}", "\"42\"");
    expect_attr("{\"value\": true, \"type\": \"string\"}", "\"true\"");
    expect_failure("{\"value\": {\"a\": 1}, \"type\": \"string\"}",
                   WHERE ".value: cannot convert {\"a\":1} to string");
}

static void test_number_type(void **state)
{
    (void)state;
    expect_attr("{\"value\": \"5\", \"type\": \"number\"}", "5");
    expect_attr("{\"value\": \"2.5\", \"type\": \"number\"}", "2.5");
    expect_attr("{\"value\": 7, \"type\": \"number\"}", "7");
    expect_failure("{\"value\": \"abc\", \"type\": \"number\"}",
                   WHERE ".value: cannot convert \"abc\" to number");
}

static void test_boolean_type(void **state)
{
    (void)state;
    expect_attr("{\"value\": \"true\", \"type\": \"boolean\"}", "true");
    expect_attr("{\"value\": \"FALSE\", \"type\": \"boolean\"}", "false");
    expect_attr("{\"value\": false, \"type\": \"boolean\"}", "false");
    expect_failure("{\"value\": \"perhaps\", \"type\": \"boolean\"}",
                   WHERE ".value: cannot convert \"perhaps\" to boolean");
}

static void test_comma_delimited_list_type(void **state)
{
    (void)state;
    expect_attr("{\"value\": \"a,b,,c\", \"type\": \"comma_delimited_list\"}",
                "[\"a\", \"b\", \"\", \"c\"]");
    expect_attr("{\"value\": \"a, b\", \"type\": \"comma_delimited_list\"}", "[\"a\", \" b\"]");
    expect_attr("{\"value\": \"a,\", \"type\": \"comma_delimited_list\"}", "[\"a\", \"\"]");
    expect_attr("{\"value\": \"\", \"type\": \"comma_delimited_list\"}", "[]");
    expect_attr("{\"value\": [\"x\", 1], \"type\": \"comma_delimited_list\"}", "[\"x\", 1]");
    expect_failure("{\"value\": 5, \"type\": \"comma_delimited_list\"}",
                   WHERE ".value: cannot convert 5 to comma_delimited_list");
}

static void test_json_type(void **state)
{
    (void)state;
    expect_attr("{\"value\": \"{\\\"a\\\": 1}\", \"type\": \"json\"}", "{\"a\": 1}");
    expect_attr("{\"value\": \"[1, 2]\", \"type\": \"json\"}", "[1, 2]");
    expect_attr("{\"value\": {\"k\": \"v\"}, \"type\": \"json\"}", "{\"k\": \"v\"}");
    expect_failure("{\"value\": \"5\", \"type\": \"json\"}",
                   WHERE ".value: cannot convert \"5\" to json");
    expect_failure("{\"value\": \"{oops\", \"type\": \"json\"}",
                   WHERE ".value: cannot convert \"{oops\" to json");
}

static void test_update_recomputes_the_attribute(void **state)
{
    (void)state;
    json_t *props = tu_json("{\"value\": \"1,2\", \"type\": \"comma_delimited_list\"}");
    cv_rstate_t st = {.stack_name = "stk",
                      .resource_name = "v",
                      .uuid = UUID,
                      .props = props,
                      .data = json_object(),
                      .attrs = json_object()};
    strcpy(st.physical_id, "kept");
    assert_int_equal(value_type()->update(&st), 0);
    assert_string_equal(st.physical_id, "kept");
    assert_int_equal(json_array_size(json_object_get(st.attrs, "value")), 2);
    assert_int_equal(value_type()->remove(&st), 0);
    assert_int_equal(value_type()->observe(&st, CV_ACTION_DELETE), CV_OBSERVED_COMPLETE);
    json_decref(st.data);
    json_decref(st.attrs);
    json_decref(props);
}

static void expect_invalid(const char *props_json, const char *message)
{
    json_t *raw = tu_json(props_json);
    char err[256] = "";
    json_t *out = cv_rtype_apply_schema(value_type(), raw, WHERE, true, err, sizeof(err));
    if (out)
        fail_msg("%s accepted", props_json);
    assert_string_equal(err, message);
    json_decref(raw);
}

static void test_validation_refuses_unknown_types_and_bad_literals(void **state)
{
    (void)state;
    expect_invalid("{\"value\": 1, \"type\": \"integer\"}",
                   WHERE ".type: \"integer\" is not one of string, number, comma_delimited_list, "
                         "json, boolean");
    expect_invalid("{\"value\": \"abc\", \"type\": \"number\"}",
                   WHERE ".value: cannot convert \"abc\" to number");
}

static void test_validation_leaves_values_with_intrinsics_for_later(void **state)
{
    (void)state;
    const char *ok[] = {
        "{\"value\": {\"get_param\": \"p\"}, \"type\": \"number\"}",
        "{\"value\": [{\"get_attr\": [\"a\", \"b\"]}], \"type\": \"string\"}",
        "{\"value\": 1, \"type\": {\"get_param\": \"t\"}}",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        json_t *raw = tu_json(ok[i]);
        char err[256] = "";
        json_t *out = cv_rtype_apply_schema(value_type(), raw, WHERE, true, err, sizeof(err));
        if (!out)
            fail_msg("%s refused: %s", ok[i], err);
        json_decref(out);
        json_decref(raw);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_without_a_type_the_value_is_kept_as_it_is),
        cmocka_unit_test(test_string_type),
        cmocka_unit_test(test_number_type),
        cmocka_unit_test(test_boolean_type),
        cmocka_unit_test(test_comma_delimited_list_type),
        cmocka_unit_test(test_json_type),
        cmocka_unit_test(test_update_recomputes_the_attribute),
        cmocka_unit_test(test_validation_refuses_unknown_types_and_bad_literals),
        cmocka_unit_test(test_validation_leaves_values_with_intrinsics_for_later),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
