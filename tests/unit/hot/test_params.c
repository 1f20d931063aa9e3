/*
 * Template parameters: declarations, conversion of user values to the
 * declared type, constraints, and environment files feeding the values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_template.h"
#include "test_util.h"

#define HOT "heat_template_version: 2018-08-31\n"

static char err[1024];

/* Parses a template with parameter declaration `decl` for parameter "p" and
 * the user values `values_json` (NULL for none); returns p's typed value
 * (a new reference) or NULL with err set. */
static json_t *param_value_v(const char *version, const char *decl, const char *values_json)
{
    char doc[2048];
    snprintf(doc, sizeof(doc), "%sparameters:\n  p: %s\n", version, decl);
    json_t *values = values_json ? json_loads(values_json, 0, NULL) : NULL;
    cv_template_t *tpl = NULL;
    err[0] = '\0';
    int rc = cv_template_parse(doc, strlen(doc), "stack.yaml", values, &tpl, err, sizeof(err));
    json_decref(values);
    json_t *v = rc == 0 ? json_incref(json_object_get(tpl->parameters, "p")) : NULL;
    cv_template_free(tpl);
    return v;
}

static json_t *param_value(const char *decl, const char *values_json)
{
    return param_value_v(HOT, decl, values_json);
}

/* Asserts that p ends up equal to the JSON `expected`. */
static void assert_param(const char *decl, const char *values_json, const char *expected)
{
    json_t *v = param_value(decl, values_json);
    if (!v)
        fail_msg("%s rejected: %s", decl, err);
    json_t *want = json_loads(expected, JSON_DECODE_ANY, NULL);
    if (!json_equal(v, want)) {
        char *got = json_dumps(v, JSON_ENCODE_ANY);
        fail_msg("%s with %s gave %s, expected %s", decl, values_json, got, expected);
    }
    json_decref(want);
    json_decref(v);
}

static void assert_param_rejected(const char *decl, const char *values_json, const char *f1,
                                  const char *f2)
{
    json_t *v = param_value(decl, values_json);
    if (v)
        fail_msg("%s with %s accepted", decl, values_json ? values_json : "no values");
    assert_contains(err, "stack.yaml: parameters.p");
    assert_contains(err, f1);
    if (f2)
        assert_contains(err, f2);
}

/* ---------------------------------------------------------------- values */

static void test_string_parameter_takes_the_user_value(void **state)
{
    (void)state;
    assert_param("{type: string}", "{\"p\": \"abc\"}", "\"abc\"");
}

static void test_string_parameter_from_number_or_boolean_is_text_as_heat_writes_it(void **state)
{
    (void)state;
    assert_param("{type: string}", "{\"p\": 5}", "\"5\"");
    assert_param("{type: string}", "{\"p\": 1.5}", "\"1.5\"");
    assert_param("{type: string}", "{\"p\": true}", "\"True\"");
}

static void test_number_parameter_from_integer_text_is_an_integer(void **state)
{
    (void)state;
    assert_param("{type: number}", "{\"p\": \"42\"}", "42");
    assert_param("{type: number}", "{\"p\": \" -7 \"}", "-7");
}

static void test_number_parameter_from_decimal_text_is_a_real(void **state)
{
    (void)state;
    assert_param("{type: number}", "{\"p\": \"1.5\"}", "1.5");
    assert_param("{type: number}", "{\"p\": \"1e3\"}", "1000.0");
    assert_param("{type: number, default: 2.5}", NULL, "2.5");
}

static void test_number_parameter_rejects_text_naming_the_parameter(void **state)
{
    (void)state;
    assert_param_rejected("{type: number}", "{\"p\": \"abc\"}", "expected a number, got \"abc\"",
                          NULL);
    assert_param_rejected("{type: number}", "{\"p\": \"0x10\"}", "expected a number", NULL);
    assert_param_rejected("{type: number}", "{\"p\": \"nan\"}", "expected a number", NULL);
}

static void test_boolean_parameter_accepts_heat_spellings(void **state)
{
    (void)state;
    const char *yes[] = {"\"yes\"", "\"True\"", "\"ON\"", "\"1\"", "\"t\"", "\"y\"", "1", "true"};
    const char *no[] = {"\"no\"", "\"FALSE\"", "\"off\"", "\"0\"", "\"f\"", "\"n\"", "0", "false"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        char values[64];
        snprintf(values, sizeof(values), "{\"p\": %s}", yes[i]);
        assert_param("{type: boolean}", values, "true");
        snprintf(values, sizeof(values), "{\"p\": %s}", no[i]);
        assert_param("{type: boolean}", values, "false");
    }
}

static void test_boolean_parameter_rejects_other_values(void **state)
{
    (void)state;
    assert_param_rejected("{type: boolean}", "{\"p\": \"maybe\"}", "expected a boolean", "maybe");
    assert_param_rejected("{type: boolean}", "{\"p\": 2}", "expected a boolean", NULL);
}

static void test_comma_delimited_list_from_text_is_split_and_stripped(void **state)
{
    (void)state;
    assert_param("{type: comma_delimited_list}", "{\"p\": \" a, b ,c\"}", "[\"a\", \"b\", \"c\"]");
    assert_param("{type: comma_delimited_list}", "{\"p\": \"\"}", "[]");
    assert_param("{type: comma_delimited_list}", "{\"p\": \"a,\"}", "[\"a\", \"\"]");
}

static void test_comma_delimited_list_from_a_list_keeps_items_as_text(void **state)
{
    (void)state;
    assert_param("{type: comma_delimited_list}", "{\"p\": [\"a\", 2]}", "[\"a\", \"2\"]");
    assert_param_rejected("{type: comma_delimited_list}", "{\"p\": {\"a\": 1}}",
                          "expected a comma-delimited string", NULL);
}

static void test_json_parameter_from_text_is_parsed(void **state)
{
    (void)state;
    assert_param("{type: json}", "{\"p\": \"{\\\"a\\\": [1, 2]}\"}", "{\"a\": [1, 2]}");
}

static void test_json_parameter_from_a_map_is_kept(void **state)
{
    (void)state;
    assert_param("{type: json, default: {a: {b: 1}}}", NULL, "{\"a\": {\"b\": 1}}");
}

static void test_json_parameter_rejects_text_that_is_not_json(void **state)
{
    (void)state;
    assert_param_rejected("{type: json}", "{\"p\": \"{not json\"}", "expected a JSON map or list",
                          NULL);
}

/* ---------------------------------------------------------------- declarations */

static void test_default_is_used_when_no_value_is_given(void **state)
{
    (void)state;
    assert_param("{type: string, default: dflt}", NULL, "\"dflt\"");
    assert_param("{type: string, default: dflt}", "{}", "\"dflt\"");
}

static void test_user_value_overrides_the_default(void **state)
{
    (void)state;
    assert_param("{type: string, default: dflt}", "{\"p\": \"mine\"}", "\"mine\"");
}

static void test_missing_value_without_default_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected("{type: string}", NULL, "no value given and no default", NULL);
}

static void test_value_for_an_undeclared_parameter_is_rejected(void **state)
{
    (void)state;
    json_t *v = param_value("{type: string, default: x}", "{\"q\": \"1\"}");
    assert_null(v);
    assert_contains(err, "stack.yaml: parameters: parameter \"q\" is not defined in the template");
}

static void test_pseudo_parameter_values_are_kept_for_get_param(void **state)
{
    (void)state;
    const char *doc = HOT "outputs:\n  name: {value: {get_param: OS::stack_name}}\n";
    json_t *values = json_pack("{s:s}", "OS::stack_name", "prod");
    cv_template_t *tpl = NULL;
    assert_int_equal(
        cv_template_parse(doc, strlen(doc), "stack.yaml", values, &tpl, err, sizeof(err)), 0);
    cv_resolve_ctx_t ctx = {.parameters = tpl->parameters};
    json_t *name =
        cv_intrinsic_resolve(json_object_get(json_object_get(tpl->outputs, "name"), "value"), &ctx,
                             "outputs.name", err, sizeof(err));
    assert_string_equal(json_string_value(name), "prod");
    json_decref(name);
    json_decref(values);
    cv_template_free(tpl);
}

static void test_parameter_without_type_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected("{default: 1}", NULL, "needs a \"type\"", NULL);
}

static void test_unknown_parameter_type_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected("{type: list, default: []}", NULL, "unknown type \"list\"",
                          "comma_delimited_list");
}

static void test_unknown_parameter_key_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected("{type: string, default: x, requried: true}", NULL,
                          "unknown key \"requried\"", NULL);
}

static void test_parameter_attributes_are_accepted(void **state)
{
    (void)state;
    assert_param("{type: string, default: x, label: L, description: D, immutable: true, "
                 "tags: [a, b]}",
                 NULL, "\"x\"");
}

static void test_tags_need_2018_03_02(void **state)
{
    (void)state;
    json_t *v = param_value_v("heat_template_version: 2017-09-01\n",
                              "{type: string, default: x, tags: [a]}", NULL);
    assert_null(v);
    assert_contains(err, "parameters.p: unknown key \"tags\"");
}

static void test_hidden_parameter_is_listed_and_masked_in_errors(void **state)
{
    (void)state;
    const char *doc = HOT "parameters:\n  secret: {type: string, hidden: true, default: s3cret}\n"
                          "  open: {type: string, default: x}\n";
    cv_template_t *tpl = NULL;
    assert_int_equal(
        cv_template_parse(doc, strlen(doc), "stack.yaml", NULL, &tpl, err, sizeof(err)), 0);
    json_t *expected = json_loads("[\"secret\"]", 0, NULL);
    assert_true(json_equal(tpl->hidden, expected));
    json_decref(expected);
    cv_template_free(tpl);
    assert_param_rejected("{type: string, hidden: true, constraints: [{length: {min: 10}}]}",
                          "{\"p\": \"s3cret\"}", "******", NULL);
    assert_null(strstr(err, "s3cret"));
}

/* ---------------------------------------------------------------- constraints */

static void test_range_accepts_a_value_inside(void **state)
{
    (void)state;
    assert_param("{type: number, constraints: [{range: {min: 1, max: 10}}]}", "{\"p\": \"10\"}",
                 "10");
}

static void test_range_rejects_a_value_outside_naming_parameter_and_range(void **state)
{
    (void)state;
    assert_param_rejected("{type: number, constraints: [{range: {min: 1, max: 10}}]}",
                          "{\"p\": 99}", "parameters.p: value 99 is outside range 1..10", NULL);
}

static void test_range_with_only_a_minimum(void **state)
{
    (void)state;
    assert_param("{type: number, constraints: [{range: {min: 1}}]}", "{\"p\": 1e6}", "1000000.0");
    assert_param_rejected("{type: number, constraints: [{range: {min: 1}}]}", "{\"p\": 0.5}",
                          "value 0.5 is below the minimum 1", NULL);
}

static void test_length_of_a_string_passes_and_fails(void **state)
{
    (void)state;
    const char *decl = "{type: string, constraints: [{length: {min: 2, max: 4}}]}";
    assert_param(decl, "{\"p\": \"abcd\"}", "\"abcd\"");
    assert_param_rejected(decl, "{\"p\": \"abcde\"}", "length 5 of value \"abcde\"",
                          "outside range 2..4");
}

static void test_length_counts_characters_not_bytes(void **state)
{
    (void)state;
    assert_param("{type: string, constraints: [{length: {max: 2}}]}",
                 "{\"p\": \"\xc3\xa9\xc3\xa9\"}", "\"\xc3\xa9\xc3\xa9\"");
}

static void test_length_of_a_list_counts_items(void **state)
{
    (void)state;
    const char *decl = "{type: comma_delimited_list, constraints: [{length: {min: 2}}]}";
    assert_param(decl, "{\"p\": \"a,b\"}", "[\"a\", \"b\"]");
    assert_param_rejected(decl, "{\"p\": \"abc\"}", "length 1", "below the minimum 2");
}

static void test_allowed_values_pass_and_fail(void **state)
{
    (void)state;
    const char *decl = "{type: string, constraints: [{allowed_values: [small, large]}]}";
    assert_param(decl, "{\"p\": \"large\"}", "\"large\"");
    assert_param_rejected(decl, "{\"p\": \"huge\"}",
                          "value \"huge\" is not one of the allowed values [\"small\",\"large\"]",
                          NULL);
}

static void test_allowed_values_of_numbers_compare_numerically(void **state)
{
    (void)state;
    const char *decl = "{type: number, constraints: [{allowed_values: [1, 2.5, \"4\"]}]}";
    assert_param(decl, "{\"p\": \"2.5\"}", "2.5");
    assert_param(decl, "{\"p\": 4}", "4");
    assert_param_rejected(decl, "{\"p\": 3}", "value 3 is not one of the allowed values", NULL);
}

static void test_allowed_values_of_a_list_check_every_item(void **state)
{
    (void)state;
    const char *decl = "{type: comma_delimited_list, constraints: [{allowed_values: [a, b]}]}";
    assert_param(decl, "{\"p\": \"b,a\"}", "[\"b\", \"a\"]");
    assert_param_rejected(decl, "{\"p\": \"a,c\"}", "item \"c\" is not one of the allowed", NULL);
}

static void test_allowed_pattern_must_match_the_whole_value(void **state)
{
    (void)state;
    const char *decl = "{type: string, constraints: [{allowed_pattern: \"[a-z]+\"}]}";
    assert_param(decl, "{\"p\": \"abc\"}", "\"abc\"");
    assert_param_rejected(decl, "{\"p\": \"abc1\"}",
                          "value \"abc1\" does not match the allowed pattern \"[a-z]+\"", NULL);
}

static void test_allowed_pattern_understands_python_shorthands(void **state)
{
    (void)state;
    const char *decl = "{type: string, constraints: [{allowed_pattern: '(?:v)\\d+[\\w.]*'}]}";
    assert_param(decl, "{\"p\": \"v12_a.b\"}", "\"v12_a.b\"");
    assert_param_rejected(decl, "{\"p\": \"vx\"}", "does not match", NULL);
}

static void test_invalid_allowed_pattern_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected("{type: string, default: a, constraints: [{allowed_pattern: '[a-'}]}",
                          NULL, "constraints[0]: allowed_pattern \"[a-\" is not a valid", NULL);
}

/* Found by fuzzing: glibc's regcomp takes seconds on a repeated pattern
 * that can match the empty string, so such a pattern is refused. */
static void test_allowed_pattern_too_costly_to_compile_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected(
        "{type: string, default: a, constraints: [{allowed_pattern: '((d*|e*){10})+'}]}", NULL,
        "constraints[0]: allowed_pattern \"((d*|e*){10})+\" is not a valid regular expression",
        "can match the empty string");
}

static void test_modulo_passes_and_fails(void **state)
{
    (void)state;
    const char *decl = "{type: number, constraints: [{modulo: {step: 2, offset: 1}}]}";
    assert_param(decl, "{\"p\": 7}", "7");
    assert_param_rejected(decl, "{\"p\": 8}", "value 8 is not a multiple of 2 with an offset of 1",
                          NULL);
}

static void test_modulo_needs_2017_02_24(void **state)
{
    (void)state;
    json_t *v = param_value_v("heat_template_version: 2016-10-14\n",
                              "{type: number, default: 1, constraints: [{modulo: {step: 2, "
                              "offset: 1}}]}",
                              NULL);
    assert_null(v);
    assert_contains(err, "parameters.p.constraints[0]: unknown constraint \"modulo\"");
}

static void test_custom_constraint_is_accepted_and_not_checked(void **state)
{
    (void)state;
    assert_param("{type: string, constraints: [{custom_constraint: nova.flavor}]}",
                 "{\"p\": \"m1.small\"}", "\"m1.small\"");
}

static void test_constraint_description_replaces_the_message(void **state)
{
    (void)state;
    assert_param_rejected("{type: number, constraints: [{range: {max: 3}, description: Too big.}]}",
                          "{\"p\": 4}", "parameters.p: Too big.", NULL);
}

static void test_constraint_not_valid_for_the_type_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected("{type: string, default: a, constraints: [{range: {min: 1}}]}", NULL,
                          "constraints[0]: range is not valid for a string parameter", NULL);
}

static void test_unknown_constraint_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected("{type: string, default: a, constraints: [{regex: a}]}", NULL,
                          "constraints[0]: unknown constraint \"regex\"", NULL);
}

static void test_malformed_range_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected("{type: number, default: 1, constraints: [{range: {min: x}}]}", NULL,
                          "range: min must be a number", NULL);
    assert_param_rejected("{type: number, default: 1, constraints: [{range: {}}]}", NULL,
                          "range: needs a min or a max", NULL);
}

static void test_default_that_breaks_a_constraint_is_rejected(void **state)
{
    (void)state;
    assert_param_rejected("{type: number, default: 50, constraints: [{range: {max: 10}}]}",
                          "{\"p\": 5}", "parameters.p.default: value 50 is above the maximum 10",
                          NULL);
}

/* ---------------------------------------------------------------- environments */

static int env(const char *text, json_t *params)
{
    err[0] = '\0';
    return cv_env_load(text, strlen(text), "env.yaml", params, NULL, err, sizeof(err));
}

static void test_env_parameters_override_values_given_before(void **state)
{
    (void)state;
    json_t *params = json_pack("{s:s}", "a", "cli");
    assert_int_equal(env("parameters:\n  a: env\n  b: 2\n", params), 0);
    json_t *expected = json_pack("{s:s,s:i}", "a", "env", "b", 2);
    assert_true(json_equal(params, expected));
    json_decref(expected);
    json_decref(params);
}

static void test_env_parameter_defaults_fill_only_absent_names(void **state)
{
    (void)state;
    json_t *params = json_pack("{s:s}", "a", "cli");
    assert_int_equal(
        env("parameters:\n  b: env\nparameter_defaults:\n  a: d\n  b: d\n  c: d\n", params), 0);
    json_t *expected = json_pack("{s:s,s:s,s:s}", "a", "cli", "b", "env", "c", "d");
    assert_true(json_equal(params, expected));
    json_decref(expected);
    json_decref(params);
}

static void test_env_unknown_section_is_named(void **state)
{
    (void)state;
    json_t *params = json_object();
    assert_int_equal(env("parameter:\n  a: 1\n", params), CV_EVALIDATE);
    assert_contains(err, "env.yaml: parameter: unknown environment section \"parameter\"");
    json_decref(params);
}

static void test_env_other_heat_sections_are_accepted(void **state)
{
    (void)state;
    json_t *params = json_object();
    assert_int_equal(env("resource_registry:\n  My::Type: OS::Heat::None\nevent_sinks: []\n"
                         "encrypted_param_names: []\nparameter_merge_strategies: {}\n",
                         params),
                     0);
    assert_int_equal(json_object_size(params), 0);
    json_decref(params);
}

static void test_empty_env_is_accepted(void **state)
{
    (void)state;
    json_t *params = json_object();
    assert_int_equal(env("", params), 0);
    assert_int_equal(env("# nothing\n", params), 0);
    json_decref(params);
}

static void test_env_syntax_error_has_its_line(void **state)
{
    (void)state;
    json_t *params = json_object();
    assert_int_equal(env("parameters:\n  a: [1\n", params), CV_EPARSE);
    assert_contains(err, "env.yaml:");
    json_decref(params);
}

static void test_bad_env_leaves_params_unchanged(void **state)
{
    (void)state;
    json_t *params = json_object();
    assert_int_not_equal(env("parameters:\n  a: 1\nbogus: {}\n", params), 0);
    assert_int_equal(json_object_size(params), 0);
    assert_int_not_equal(env("parameters: [a]\n", params), 0);
    assert_contains(err, "env.yaml: parameters: must be a map, got a list");
    json_decref(params);
}

static void test_env_values_are_typed_by_the_template(void **state)
{
    (void)state;
    json_t *params = json_object();
    assert_int_equal(env("parameters:\n  n: '12'\n  l: [x, y]\n", params), 0);
    const char *doc = HOT "parameters:\n  n: {type: number}\n  l: {type: comma_delimited_list}\n";
    cv_template_t *tpl = NULL;
    assert_int_equal(
        cv_template_parse(doc, strlen(doc), "stack.yaml", params, &tpl, err, sizeof(err)), 0);
    assert_int_equal(json_integer_value(json_object_get(tpl->parameters, "n")), 12);
    assert_int_equal(json_array_size(json_object_get(tpl->parameters, "l")), 2);
    cv_template_free(tpl);
    json_decref(params);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_parameter_takes_the_user_value),
        cmocka_unit_test(test_string_parameter_from_number_or_boolean_is_text_as_heat_writes_it),
        cmocka_unit_test(test_number_parameter_from_integer_text_is_an_integer),
        cmocka_unit_test(test_number_parameter_from_decimal_text_is_a_real),
        cmocka_unit_test(test_number_parameter_rejects_text_naming_the_parameter),
        cmocka_unit_test(test_boolean_parameter_accepts_heat_spellings),
        cmocka_unit_test(test_boolean_parameter_rejects_other_values),
        cmocka_unit_test(test_comma_delimited_list_from_text_is_split_and_stripped),
        cmocka_unit_test(test_comma_delimited_list_from_a_list_keeps_items_as_text),
        cmocka_unit_test(test_json_parameter_from_text_is_parsed),
        cmocka_unit_test(test_json_parameter_from_a_map_is_kept),
        cmocka_unit_test(test_json_parameter_rejects_text_that_is_not_json),
        cmocka_unit_test(test_default_is_used_when_no_value_is_given),
        cmocka_unit_test(test_user_value_overrides_the_default),
        cmocka_unit_test(test_missing_value_without_default_is_rejected),
        cmocka_unit_test(test_value_for_an_undeclared_parameter_is_rejected),
        cmocka_unit_test(test_pseudo_parameter_values_are_kept_for_get_param),
        cmocka_unit_test(test_parameter_without_type_is_rejected),
        cmocka_unit_test(test_unknown_parameter_type_is_rejected),
        cmocka_unit_test(test_unknown_parameter_key_is_rejected),
        cmocka_unit_test(test_parameter_attributes_are_accepted),
        cmocka_unit_test(test_tags_need_2018_03_02),
        cmocka_unit_test(test_hidden_parameter_is_listed_and_masked_in_errors),
        cmocka_unit_test(test_range_accepts_a_value_inside),
        cmocka_unit_test(test_range_rejects_a_value_outside_naming_parameter_and_range),
        cmocka_unit_test(test_range_with_only_a_minimum),
        cmocka_unit_test(test_length_of_a_string_passes_and_fails),
        cmocka_unit_test(test_length_counts_characters_not_bytes),
        cmocka_unit_test(test_length_of_a_list_counts_items),
        cmocka_unit_test(test_allowed_values_pass_and_fail),
        cmocka_unit_test(test_allowed_values_of_numbers_compare_numerically),
        cmocka_unit_test(test_allowed_values_of_a_list_check_every_item),
        cmocka_unit_test(test_allowed_pattern_must_match_the_whole_value),
        cmocka_unit_test(test_allowed_pattern_understands_python_shorthands),
        cmocka_unit_test(test_invalid_allowed_pattern_is_rejected),
        cmocka_unit_test(test_allowed_pattern_too_costly_to_compile_is_rejected),
        cmocka_unit_test(test_modulo_passes_and_fails),
        cmocka_unit_test(test_modulo_needs_2017_02_24),
        cmocka_unit_test(test_custom_constraint_is_accepted_and_not_checked),
        cmocka_unit_test(test_constraint_description_replaces_the_message),
        cmocka_unit_test(test_constraint_not_valid_for_the_type_is_rejected),
        cmocka_unit_test(test_unknown_constraint_is_rejected),
        cmocka_unit_test(test_malformed_range_is_rejected),
        cmocka_unit_test(test_default_that_breaks_a_constraint_is_rejected),
        cmocka_unit_test(test_env_parameters_override_values_given_before),
        cmocka_unit_test(test_env_parameter_defaults_fill_only_absent_names),
        cmocka_unit_test(test_env_unknown_section_is_named),
        cmocka_unit_test(test_env_other_heat_sections_are_accepted),
        cmocka_unit_test(test_empty_env_is_accepted),
        cmocka_unit_test(test_env_syntax_error_has_its_line),
        cmocka_unit_test(test_bad_env_leaves_params_unchanged),
        cmocka_unit_test(test_env_values_are_typed_by_the_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
