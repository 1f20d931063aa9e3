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
    reject_x("{get_param: nope}", "get_param: parameter \"nope\" is not defined in the template");
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
    reject_x("{get_param: {a: b}}", "get_param: expected a parameter name");
    reject_x("{get_param: []}", "get_param: expected a parameter name");
    reject_x("{get_param: [p, [0]]}", "get_param: path items must be keys or indexes");
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
    assert_contains(err, "get_attr: expected a list [resource, attribute");
    reject_x("{get_attr: val}", "get_attr: expected a list [resource, attribute");
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
    reject_x("{get_attr: [val, {get_param: q}]}", "get_param: parameter \"q\" is not defined");
}

/* ---------------------------------------------------------------- str_replace */

static void test_str_replace_with_template_and_params_is_accepted(void **state)
{
    (void)state;
    accept_x("{str_replace: {template: 'a $x', params: {$x: {get_attr: [val, value]}}}}");
    accept_x("{str_replace: {template: {get_param: p}, params: {get_param: p}}}");
}

static void test_str_replace_without_params_is_rejected(void **state)
{
    (void)state;
    reject_x("{str_replace: {template: abc}}", "str_replace: expected a map of exactly");
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
    reject_x("{str_replace: {template: a, params: [a]}}", "str_replace: params must be a map");
    reject_x("{str_replace: {template: [a], params: {}}}",
             "str_replace: template must be a string");
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
    assert_contains(err, "str_replace: params values must be strings or numbers");
    accept_x("{str_replace: {template: a, params: {a: [1]}}}");
}

/* ---------------------------------------------------------------- list_join */

static void test_list_join_of_lists_is_accepted(void **state)
{
    (void)state;
    accept_x("{list_join: [',', [a, b], [{get_attr: [val, value]}]]}");
    accept_x("{list_join: [',', {get_param: p}]}");
}

static void test_list_join_needs_a_delimiter_and_a_list(void **state)
{
    (void)state;
    reject_x("{list_join: [',']}", "list_join: expected a list [delimiter, list...]");
    reject_x("{list_join: [',', abc]}", "list_join: expected a list to join, got \"abc\"");
    reject_x("{list_join: [[x], [a]]}", "list_join: the delimiter must be a string");
}

static void test_list_join_of_several_lists_needs_2015_10_15(void **state)
{
    (void)state;
    assert_int_not_equal(
        parse_web("{list_join: [',', [a], [b]]}", "heat_template_version: 2015-04-30\n"), 0);
    assert_contains(err, "list_join: joining several lists needs heat_template_version 2015-10-15");
}

/* ---------------------------------------------------------------- others */

static void test_unsupported_functions_are_named(void **state)
{
    (void)state;
    reject_x("{'Fn::Select': [0, [a]]}",
             "The function Fn::Select is not supported in this version of HOT.");
    reject_x("{Ref: a}", "The function Ref is not supported in this version of HOT.");
    reject_x("{get_input: a}", "function get_input is not supported");
    assert_int_not_equal(
        parse_web("{'Fn::Select': [0, [a]]}", "heat_template_version: 2014-10-16\n"), 0);
    assert_contains(err, "function Fn::Select is not supported");
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
    assert_contains(err, "stack.yaml: resources.web.properties.x.a[1].b: get_param:");
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
        cmocka_unit_test(test_map_of_several_keys_is_plain_data),
        cmocka_unit_test(test_nested_error_names_the_full_path),
        cmocka_unit_test(test_error_inside_arguments_is_reported_at_the_call),
        cmocka_unit_test(test_metadata_is_checked_too),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
