/*
 * Intrinsic functions as template validation sees them: arguments of the
 * right shape, references to declared parameters and existing resources,
 * attributes the referenced type has, functions we do not support.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cv_template.h"
#include "test_util.h"

#define HOT "heat_template_version: 2018-08-31\n"

/* Two resources to refer to and one parameter to read. */
#define BODY                                                                                       \
    "parameters:\n  p: {type: json, default: {k: [1, 2]}}\n"                                       \
    "resources:\n  val: {type: OS::Heat::Value, properties: {value: 1}}\n"                         \
    "  pw: {type: OS::Heat::RandomString}\n"
#define PRELUDE HOT BODY

static char err[1024];

/* The prelude plus resource "web" (OS::Heat::None) with property `x`. */
static int parse_web(const char *x, const char *version)
{
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "%s" BODY "  web:\n    type: OS::Heat::None\n    properties:\n      x: %s\n",
             version ? version : HOT, x);
    cv_template_t *tpl = NULL;
    err[0] = '\0';
    int rc = cv_template_parse(doc, strlen(doc), "stack.yaml", NULL, &tpl, err, sizeof(err));
    cv_template_free(tpl);
    return rc;
}

static void accept_x(const char *x)
{
    if (parse_web(x, NULL) != 0)
        fail_msg("%s rejected: %s", x, err);
}

static void reject_x(const char *x, const char *fragment)
{
    if (parse_web(x, NULL) == 0)
        fail_msg("%s accepted", x);
    assert_contains(err, "stack.yaml: resources.web.properties.x");
    assert_contains(err, fragment);
}

/* Rejected with exactly `message` (Heat's text) after the location. */
static void reject_exact(const char *x, const char *version, const char *message)
{
    char want[1024];
    if (parse_web(x, version) == 0)
        fail_msg("%s accepted", x);
    snprintf(want, sizeof(want), "stack.yaml: resources.web.properties.x: %s", message);
    assert_string_equal(err, want);
}

/* ---------------------------------------------------------------- get_param */

static void test_get_param_of_a_declared_parameter_is_accepted(void **state)
{
    (void)state;
    accept_x("{get_param: p}");
    accept_x("{get_param: [p, k, 0]}");
}

static void test_get_param_of_an_undeclared_parameter_is_rejected(void **state)
{
    (void)state;
    reject_exact("{get_param: nope}", NULL, "The Parameter (nope) was not provided.");
}

static void test_get_param_of_a_pseudo_parameter_is_accepted(void **state)
{
    (void)state;
    accept_x("{get_param: OS::stack_name}");
    accept_x("{get_param: OS::stack_id}");
}

static void test_get_param_with_a_malformed_argument_is_rejected(void **state)
{
    (void)state;
    reject_exact("{get_param: {a: b}}", NULL, "Argument to \"get_param\" must be string or list");
    reject_exact("{get_param: 3}", NULL, "Argument to \"get_param\" must be string or list");
    reject_exact("{get_param: []}", NULL, "Function \"get_param\" must have arguments");
    reject_exact("{get_param: ''}", NULL, "Function \"get_param\" must have arguments");
    reject_exact("{get_param: [[p]]}", NULL, "Parameter name in \"get_param\" must be string");
    reject_exact("{get_param: [p, [0]]}", NULL, "Path components in \"get_param\" must be strings");
}

/* ---------------------------------------------------------------- get_resource */

static void test_get_resource_of_an_existing_resource_is_accepted(void **state)
{
    (void)state;
    accept_x("{get_resource: val}");
}

static void test_get_resource_of_a_missing_resource_is_rejected(void **state)
{
    (void)state;
    reject_x("{get_resource: ghost}",
             "The specified reference \"ghost\" (in web.Properties.x) is incorrect.");
}

static void test_get_resource_of_itself_is_rejected(void **state)
{
    (void)state;
    reject_x("{get_resource: web}", "get_resource: resource \"web\" cannot refer to itself");
}

static void test_get_resource_needs_a_name(void **state)
{
    (void)state;
    reject_x("{get_resource: [val]}", "get_resource: expected a resource name, got [\"val\"]");
}

/* ---------------------------------------------------------------- get_attr */

static void test_get_attr_of_a_known_attribute_is_accepted(void **state)
{
    (void)state;
    accept_x("{get_attr: [val, value]}");
    accept_x("{get_attr: [pw, value]}");
    accept_x("{get_attr: [val, value, key, 0]}");
}

static void test_get_attr_show_is_an_attribute_of_every_type(void **state)
{
    (void)state;
    accept_x("{get_attr: [val, show]}");
    accept_x("{get_attr: [pw, show]}");
}

static void test_get_attr_of_an_unknown_attribute_is_rejected(void **state)
{
    (void)state;
    reject_x("{get_attr: [pw, output]}", "The Referenced Attribute (pw output) is incorrect.");
}

static void test_get_attr_needs_a_resource_and_an_attribute(void **state)
{
    (void)state;
    accept_x("{get_attr: [val]}"); /* every attribute, from 2015-10-15 */
    assert_int_not_equal(parse_web("{get_attr: [val]}", "heat_template_version: 2015-04-30\n"), 0);
    assert_contains(err,
                    "stack.yaml: resources.web.properties.x: Arguments to \"get_attr\" must be "
                    "of the form [resource_name, attribute, (path), ...]");
    reject_exact("{get_attr: val}", NULL, "Argument to \"get_attr\" must be a list");
    reject_exact("{get_attr: []}", NULL,
                 "Arguments to \"get_attr\" can be of the next forms: [resource_name] or "
                 "[resource_name, attribute, (path), ...]");
    reject_exact("{get_attr: val}", "heat_template_version: 2015-04-30\n",
                 "Argument to \"get_attr\" must be a list");
    reject_x("{get_attr: [val, 3]}", "get_attr: the attribute name must be a string");
}

static void test_get_attr_of_a_missing_resource_is_rejected(void **state)
{
    (void)state;
    reject_x("{get_attr: [ghost, show]}",
             "The specified reference \"ghost\" (in web.Properties.x) is incorrect.");
}

static void test_get_attr_of_itself_is_rejected(void **state)
{
    (void)state;
    reject_x("{get_attr: [web, show]}", "get_attr: resource \"web\" cannot refer to itself");
}

static void test_get_attr_with_a_computed_attribute_name_is_checked_inside(void **state)
{
    (void)state;
    accept_x("{get_attr: [val, {get_param: [p, k]}]}");
    reject_x("{get_attr: [val, {get_param: q}]}", "The Parameter (q) was not provided.");
}

/* ---------------------------------------------------------------- str_replace */

static void test_str_replace_with_template_and_params_is_accepted(void **state)
{
    (void)state;
    accept_x("{str_replace: {template: 'a $x', params: {$x: {get_attr: [val, value]}}}}");
    /* Computed arguments are checked once they are known: those reading
     * parameters when the template is validated (test_validate_refusals.c),
     * those reading resources when they resolve. */
    accept_x(
        "{str_replace: {template: {get_attr: [val, value]}, params: {get_attr: [val, value]}}}");
}

static void test_str_replace_without_params_is_rejected(void **state)
{
    (void)state;
    reject_exact("{str_replace: {template: abc}}", NULL,
                 "\"str_replace\" syntax should be str_replace:\n"
                 "              template: This is var1 template var2\n"
                 "              params:\n"
                 "                var1: a\n"
                 "                var2: string");
    reject_exact("{str_replace: [a, b]}", NULL, "Arguments to \"str_replace\" must be a map");
}

static void test_str_replace_with_an_extra_key_is_rejected(void **state)
{
    (void)state;
    reject_x("{str_replace: {template: a, params: {}, extra: 1}}",
             "str_replace: expected a map of exactly \"template\" and \"params\"");
}

static void test_str_replace_params_must_be_a_map(void **state)
{
    (void)state;
    reject_exact("{str_replace: {template: a, params: [a]}}", NULL,
                 "\"str_replace\" parameters must be a mapping");
    reject_exact("{str_replace: {template: [a], params: {}}}", NULL,
                 "\"str_replace\" template must be a string");
}

static void test_str_replace_checks_references_inside_params(void **state)
{
    (void)state;
    reject_x("{str_replace: {template: a, params: {a: {get_resource: ghost}}}}",
             "The specified reference \"ghost\"");
}

static void test_str_replace_map_values_need_2015_10_15(void **state)
{
    (void)state;
    assert_int_not_equal(parse_web("{str_replace: {template: a, params: {a: [1]}}}",
                                   "heat_template_version: 2015-04-30\n"),
                         0);
    assert_string_equal(err, "stack.yaml: resources.web.properties.x: \"str_replace\" params must "
                             "be strings or numbers, param a is not valid");
    accept_x("{str_replace: {template: a, params: {a: [1]}}}");
}

/* ---------------------------------------------------------------- list_join */

static void test_list_join_of_lists_is_accepted(void **state)
{
    (void)state;
    accept_x("{list_join: [',', [a, b], [{get_attr: [val, value]}]]}");
    accept_x("{list_join: [',', {get_attr: [val, value]}]}");
}

static void test_list_join_needs_a_delimiter_and_a_list(void **state)
{
    (void)state;
    const char *usage = "Incorrect arguments to \"list_join\" should be: "
                        "\"list_join\" : [ \" \", [ \"str1\", \"str2\"] ...]";
    reject_exact("{list_join: [',']}", NULL, usage);
    reject_exact("{list_join: ','}", NULL, usage);
    reject_exact("{list_join: [',', abc]}", NULL, "\"list_join\" must operate on a list");
    reject_exact("{list_join: [[x], [a]]}", NULL, "\"list_join\" delimiter must be a string");
    reject_exact("{list_join: [',']}", "heat_template_version: 2015-04-30\n",
                 "Incorrect arguments to \"list_join\" should be: "
                 "\"list_join\" : [ \" \", [ \"str1\", \"str2\"]]");
}

static void test_list_join_of_several_lists_needs_2015_10_15(void **state)
{
    (void)state;
    assert_int_not_equal(
        parse_web("{list_join: [',', [a], [b]]}", "heat_template_version: 2015-04-30\n"), 0);
    assert_string_equal(err, "stack.yaml: resources.web.properties.x: Incorrect arguments to "
                             "\"list_join\" should be: \"list_join\" : [ \" \", [ \"str1\", "
                             "\"str2\"]]");
}

/* ---------------------------------------------------------------- others */

/* Removed in the version's table (hot_funcs.Removed): Heat's words. A
 * function Heat's table has that Converge does not run (Fn::Select in
 * 2014-10-16, cfn_funcs.Select there) is named as not supported. */
static void test_unsupported_functions_are_named(void **state)
{
    (void)state;
    reject_exact("{'Fn::Select': [0, [a]]}", NULL,
                 "The template version is invalid: The function Fn::Select is not supported in "
                 "this version of HOT.");
    reject_exact("{Ref: a}", NULL,
                 "The template version is invalid: The function Ref is not supported in this "
                 "version of HOT.");
    reject_exact("{'Fn::Select': [0, [a]]}", "heat_template_version: 2014-10-16\n",
                 "function Fn::Select is not supported");
}

/* get_input is in no HOT table (it is a software config agent's
 * placeholder): plain data, passed through unchanged. */
static void test_get_input_is_plain_data(void **state)
{
    (void)state;
    const char *doc = PRELUDE "  web:\n    type: OS::Heat::None\n"
                              "    properties:\n      x: {get_input: a}\n";
    cv_template_t *tpl = NULL;
    if (cv_template_parse(doc, strlen(doc), "stack.yaml", NULL, &tpl, err, sizeof(err)) != 0)
        fail_msg("rejected: %s", err);
    cv_resolve_ctx_t ctx = {.parameters = tpl->parameters};
    json_t *props = cv_intrinsic_resolve(cv_template_resource(tpl, "web")->properties, &ctx,
                                         "resources.web.properties", err, sizeof(err));
    cv_template_free(tpl);
    if (!props)
        fail_msg("failed: %s", err);
    json_t *want = tu_json("{\"x\": {\"get_input\": \"a\"}}");
    assert_true(json_equal(props, want));
    json_decref(props);
    json_decref(want);
}

static void test_map_of_several_keys_is_plain_data(void **state)
{
    (void)state;
    accept_x("{get_file: a, other: b}");
    accept_x("{get_resource: ghost, other: b}");
}

static void test_nested_error_names_the_full_path(void **state)
{
    (void)state;
    assert_int_not_equal(parse_web("{a: [1, {b: {get_param: nope}}]}", NULL), 0);
    assert_contains(err, "stack.yaml: resources.web.properties.x.a[1].b: The Parameter (nope)");
}

static void test_error_inside_arguments_is_reported_at_the_call(void **state)
{
    (void)state;
    reject_x("{list_join: [',', [a, {get_attr: [val, nope]}]]}",
             "resources.web.properties.x: The Referenced Attribute (val nope) is incorrect.");
}

static void test_metadata_is_checked_too(void **state)
{
    (void)state;
    const char *doc = PRELUDE "  web:\n    type: OS::Heat::None\n"
                              "    metadata: {m: {get_attr: [pw, nope]}}\n";
    cv_template_t *tpl = NULL;
    assert_int_not_equal(
        cv_template_parse(doc, strlen(doc), "stack.yaml", NULL, &tpl, err, sizeof(err)), 0);
    assert_contains(err,
                    "resources.web.metadata.m: The Referenced Attribute (pw nope) is incorrect.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_param_of_a_declared_parameter_is_accepted),
        cmocka_unit_test(test_get_param_of_an_undeclared_parameter_is_rejected),
        cmocka_unit_test(test_get_param_of_a_pseudo_parameter_is_accepted),
        cmocka_unit_test(test_get_param_with_a_malformed_argument_is_rejected),
        cmocka_unit_test(test_get_resource_of_an_existing_resource_is_accepted),
        cmocka_unit_test(test_get_resource_of_a_missing_resource_is_rejected),
        cmocka_unit_test(test_get_resource_of_itself_is_rejected),
        cmocka_unit_test(test_get_resource_needs_a_name),
        cmocka_unit_test(test_get_attr_of_a_known_attribute_is_accepted),
        cmocka_unit_test(test_get_attr_show_is_an_attribute_of_every_type),
        cmocka_unit_test(test_get_attr_of_an_unknown_attribute_is_rejected),
        cmocka_unit_test(test_get_attr_needs_a_resource_and_an_attribute),
        cmocka_unit_test(test_get_attr_of_a_missing_resource_is_rejected),
        cmocka_unit_test(test_get_attr_of_itself_is_rejected),
        cmocka_unit_test(test_get_attr_with_a_computed_attribute_name_is_checked_inside),
        cmocka_unit_test(test_str_replace_with_template_and_params_is_accepted),
        cmocka_unit_test(test_str_replace_without_params_is_rejected),
        cmocka_unit_test(test_str_replace_with_an_extra_key_is_rejected),
        cmocka_unit_test(test_str_replace_params_must_be_a_map),
        cmocka_unit_test(test_str_replace_checks_references_inside_params),
        cmocka_unit_test(test_str_replace_map_values_need_2015_10_15),
        cmocka_unit_test(test_list_join_of_lists_is_accepted),
        cmocka_unit_test(test_list_join_needs_a_delimiter_and_a_list),
        cmocka_unit_test(test_list_join_of_several_lists_needs_2015_10_15),
        cmocka_unit_test(test_unsupported_functions_are_named),
        cmocka_unit_test(test_get_input_is_plain_data),
        cmocka_unit_test(test_map_of_several_keys_is_plain_data),
        cmocka_unit_test(test_nested_error_names_the_full_path),
        cmocka_unit_test(test_error_inside_arguments_is_reported_at_the_call),
        cmocka_unit_test(test_metadata_is_checked_too),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
