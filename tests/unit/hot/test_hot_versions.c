/*
 * Functions by heat_template_version, as Heat's tables define them
 * (heat/engine/hot/template.py): a one-key map whose key the version's
 * table lacks is plain data that passes through to the output unchanged,
 * its values still evaluated; the names Heat marks hot_funcs.Removed are
 * refused with Heat's words; so are a conditions section before
 * 2016-10-14 and an unknown version (heat/engine/template.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_intrinsic_fixture.h"

static int lookup(void *ud, const char *name, const char **id, const json_t **attrs)
{
    (void)ud;
    static json_t *none;
    if (!none)
        none = json_object();
    if (strcmp(name, "r") != 0)
        return -2; /* CV_ENOENT */
    *id = "r-id";
    *attrs = none;
    return 0;
}

/* Parses a template of `version` whose output "o" is `value` (YAML), and
 * resolves that output as the engine does; NULL with `err` when either fails. */
static json_t *run_output(const char *version, const char *value)
{
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "heat_template_version: %s\nparameters:\n  p: {type: string, default: pv}\n"
             "resources:\n  r: {type: OS::Heat::None}\noutputs:\n  o:\n    value: %s\n",
             version, value);
    cv_template_t *tpl = NULL;
    err[0] = '\0';
    if (cv_template_parse(doc, strlen(doc), "stack.yaml", NULL, &tpl, err, sizeof(err)) != 0)
        return NULL;
    cv_resolve_ctx_t ctx = {.parameters = tpl->parameters, .resource = lookup};
    json_t *out = cv_intrinsic_resolve(json_object_get(json_object_get(tpl->outputs, "o"), "value"),
                                       &ctx, "outputs.o.value", err, sizeof(err));
    cv_template_free(tpl);
    return out;
}

static void assert_output(const char *version, const char *value, const char *expected_json)
{
    json_t *got = run_output(version, value);
    if (!got)
        fail_msg("%s in %s failed: %s", value, version, err);
    json_t *want = tu_json(expected_json);
    if (!json_equal(got, want)) {
        char *s = json_dumps(got, JSON_ENCODE_ANY | JSON_SORT_KEYS);
        fail_msg("%s in %s gave %s, expected %s", value, version, s, expected_json);
    }
    json_decref(got);
    json_decref(want);
}

static int parse_doc(const char *doc)
{
    cv_template_t *tpl = NULL;
    err[0] = '\0';
    int rc = cv_template_parse(doc, strlen(doc), "stack.yaml", NULL, &tpl, err, sizeof(err));
    cv_template_free(tpl);
    return rc;
}

/* ---------------------------------------------------------------- plain data */

static void test_list_concat_before_2017_09_01_is_a_map_named_list_concat(void **state)
{
    (void)state;
    assert_output("2016-04-08", "{list_concat: [[a], [b]]}",
                  "{\"list_concat\": [[\"a\"], [\"b\"]]}");
    assert_output("ocata", "{list_concat_unique: [[a]]}", "{\"list_concat_unique\": [[\"a\"]]}");
    assert_output("2017-09-01", "{list_concat: [[a], [b]]}", "[\"a\", \"b\"]");
}

static void test_plain_data_values_are_still_evaluated(void **state)
{
    (void)state;
    assert_output("2016-04-08", "{list_concat: [{get_param: p}, {get_resource: r}]}",
                  "{\"list_concat\": [\"pv\", \"r-id\"]}");
    assert_output("2013-05-23", "{map_merge: {str_replace: {template: a_X, params: {X: b}}}}",
                  "{\"map_merge\": \"a_b\"}");
}

/* Each function of Heat's tables, one version before the one that adds it. */
static void test_every_function_is_data_before_its_version(void **state)
{
    (void)state;
    assert_output("2013-05-23", "{repeat: 1}", "{\"repeat\": 1}");
    assert_output("2013-05-23", "{digest: [md5, a]}", "{\"digest\": [\"md5\", \"a\"]}");
    assert_output("2015-04-30", "{str_split: [',', 'a,b']}", "{\"str_split\": [\",\", \"a,b\"]}");
    assert_output("2015-10-15", "{map_merge: [{a: 1}]}", "{\"map_merge\": [{\"a\": 1}]}");
    assert_output("2016-04-08", "{map_replace: 1}", "{\"map_replace\": 1}");
    assert_output("2016-04-08", "{yaql: {expression: '1'}}", "{\"yaql\": {\"expression\": \"1\"}}");
    assert_output("2016-04-08", "{if: [c, 1, 2]}", "{\"if\": [\"c\", 1, 2]}");
    assert_output("2016-10-14", "{filter: [[a], [a, b]]}",
                  "{\"filter\": [[\"a\"], [\"a\", \"b\"]]}");
    assert_output("2016-10-14", "{str_replace_strict: 1}", "{\"str_replace_strict\": 1}");
    assert_output("2017-02-24", "{str_replace_vstrict: 1}", "{\"str_replace_vstrict\": 1}");
    assert_output("2017-02-24", "{make_url: {host: h}}", "{\"make_url\": {\"host\": \"h\"}}");
    assert_output("2017-02-24", "{contains: [a, [a]]}", "{\"contains\": [\"a\", [\"a\"]]}");
}

/* Names no HOT table has: condition functions outside conditions,
 * get_input (a config agent's placeholder), CloudFormation functions HOT
 * never had. */
static void test_names_no_table_has_are_data_in_every_version(void **state)
{
    (void)state;
    assert_output("2021-04-16", "{equals: [a, a]}", "{\"equals\": [\"a\", \"a\"]}");
    assert_output("2021-04-16", "{not: true}", "{\"not\": true}");
    assert_output("2018-08-31", "{get_input: port}", "{\"get_input\": \"port\"}");
    assert_output("2013-05-23", "{'Fn::GetAtt': [a, b]}", "{\"Fn::GetAtt\": [\"a\", \"b\"]}");
    assert_output("2016-10-14", "{'Fn::If': [c, 1, 2]}", "{\"Fn::If\": [\"c\", 1, 2]}");
}

static void test_data_with_the_internal_key_stays_data(void **state)
{
    (void)state;
    assert_output("2018-08-31", "{'Converge::Data': {get_param: p}}",
                  "{\"Converge::Data\": \"pv\"}");
    assert_output("2016-04-08", "{'Converge::Data': {list_concat: [1]}}",
                  "{\"Converge::Data\": {\"list_concat\": [1]}}");
}

static void test_plain_data_in_properties_reaches_the_resource(void **state)
{
    (void)state;
    const char *doc = "heat_template_version: 2016-04-08\n"
                      "resources:\n"
                      "  v:\n"
                      "    type: OS::Heat::Value\n"
                      "    properties:\n"
                      "      value: {list_concat: [[a]]}\n"
                      "  w:\n"
                      "    type: OS::Heat::None\n"
                      "    metadata: {yaql: {expression: x}}\n";
    cv_template_t *tpl = NULL;
    assert_int_equal(
        cv_template_parse(doc, strlen(doc), "stack.yaml", NULL, &tpl, err, sizeof(err)), 0);
    cv_resolve_ctx_t ctx = {.parameters = tpl->parameters};
    json_t *props = cv_intrinsic_resolve(cv_template_resource(tpl, "v")->properties, &ctx,
                                         "resources.v.properties", err, sizeof(err));
    assert_non_null(props);
    json_t *want = tu_json("{\"value\": {\"list_concat\": [[\"a\"]]}}");
    assert_true(json_equal(props, want));
    json_t *meta = cv_intrinsic_resolve(cv_template_resource(tpl, "w")->metadata, &ctx,
                                        "resources.w.metadata", err, sizeof(err));
    json_t *want_meta = tu_json("{\"yaql\": {\"expression\": \"x\"}}");
    assert_true(json_equal(meta, want_meta));
    json_decref(props);
    json_decref(want);
    json_decref(meta);
    json_decref(want_meta);
    cv_template_free(tpl);
}

/* ---------------------------------------------------------------- removed */

static void test_removed_functions_are_refused_with_heat_s_words(void **state)
{
    (void)state;
    reject_output_with("2014-10-16", "{'Fn::Join': [',', [a]]}",
                       "The template version is invalid: The function Fn::Join is not supported "
                       "in this version of HOT.");
    reject_output_with("2021-04-16", "{Ref: r}",
                       "The template version is invalid: The function Ref is not supported in "
                       "this version of HOT.");
    reject_output_with("2015-10-15", "{'Fn::Select': [0, [a]]}",
                       "The template version is invalid: The function Fn::Select is not supported "
                       "in this version of HOT.");
}

/* Fn::Select is a function (CloudFormation's) until 2015-10-15 removes it,
 * and the others in 2013-05-23: Heat runs them, Converge does not. */
static void test_cloudformation_functions_heat_defines_are_not_supported(void **state)
{
    (void)state;
    reject_output_with("2015-04-30", "{'Fn::Select': [0, [a]]}",
                       "function Fn::Select is not supported");
    reject_output_with("2013-05-23", "{'Fn::Join': [',', [a]]}",
                       "function Fn::Join is not supported");
}

/* ---------------------------------------------------------------- conditions */

static void test_conditions_section_before_2016_10_14_is_an_invalid_section(void **state)
{
    (void)state;
    assert_int_not_equal(parse_doc("heat_template_version: 2016-04-08\nconditions: {}\n"), 0);
    assert_string_equal(err, "stack.yaml: conditions: The template section is invalid: conditions");
    assert_int_equal(parse_doc("heat_template_version: 2016-10-14\nconditions: {}\n"), 0);
}

static int parse_condition(const char *version, const char *cond)
{
    char doc[1024];
    snprintf(doc, sizeof(doc),
             "heat_template_version: %s\nconditions:\n  c: %s\n"
             "resources:\n  r: {type: OS::Heat::None, condition: c}\n",
             version, cond);
    return parse_doc(doc);
}

/* In a condition the version's other functions are function.Invalid,
 * Removed stays Removed, and what no table has is data (so no condition). */
static void test_conditions_call_only_condition_functions(void **state)
{
    (void)state;
    assert_int_not_equal(parse_condition("2016-10-14", "{yaql: {expression: 'true'}}"), 0);
    assert_string_equal(err, "stack.yaml: conditions.c: The function \"yaql\" is invalid in this "
                             "context");
    assert_int_equal(
        parse_condition("2017-09-01", "{yaql: {expression: '$.data.contains(1)', data: [1]}}"), 0);
    assert_int_not_equal(parse_condition("2016-10-14", "{Ref: x}"), 0);
    assert_string_equal(err, "stack.yaml: conditions.c: The template version is invalid: The "
                             "function Ref is not supported in this version of HOT.");
    assert_int_not_equal(parse_condition("2016-10-14", "{contains: [a, [a]]}"), 0);
    assert_contains(err, "The definition of condition \"c\" is invalid");
    if (parse_condition("2016-10-14", "{equals: [{get_input: x}, {get_input: x}]}") != 0)
        fail_msg("%s", err);
}

/* ---------------------------------------------------------------- versions */

static void test_unknown_version_lists_heat_s_valid_versions(void **state)
{
    (void)state;
    assert_int_not_equal(parse_doc("heat_template_version: 2012-12-12\n"), 0);
    assert_string_equal(err, "stack.yaml: heat_template_version: The template version is invalid: "
                             "\"heat_template_version: 2012-12-12\". \"heat_template_version\" "
                             "should be one of: 2013-05-23, 2014-10-16, 2015-04-30, 2015-10-15, "
                             "2016-04-08, 2016-10-14, 2017-02-24, 2017-09-01, 2018-03-02, "
                             "2018-08-31, 2021-04-16, newton, ocata, pike, queens, rocky, wallaby");
    assert_int_not_equal(parse_doc("heat_template_version: 20130523\n"), 0);
    assert_string_equal(err, "stack.yaml: heat_template_version: The template version is invalid: "
                             "Template version was not provided");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_concat_before_2017_09_01_is_a_map_named_list_concat),
        cmocka_unit_test(test_plain_data_values_are_still_evaluated),
        cmocka_unit_test(test_every_function_is_data_before_its_version),
        cmocka_unit_test(test_names_no_table_has_are_data_in_every_version),
        cmocka_unit_test(test_data_with_the_internal_key_stays_data),
        cmocka_unit_test(test_plain_data_in_properties_reaches_the_resource),
        cmocka_unit_test(test_removed_functions_are_refused_with_heat_s_words),
        cmocka_unit_test(test_cloudformation_functions_heat_defines_are_not_supported),
        cmocka_unit_test(test_conditions_section_before_2016_10_14_is_an_invalid_section),
        cmocka_unit_test(test_conditions_call_only_condition_functions),
        cmocka_unit_test(test_unknown_version_lists_heat_s_valid_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
