/*
 * yaql: the subset of expressions Heat's own tests and documentation use
 * (heat/tests/test_hot.py test_yaql*, heat/tests/openstack/heat/
 * test_value.py, hot_spec.rst), with their expected values; anything
 * outside the subset refused with the construct named, never evaluated.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_intrinsic_fixture.h"

/* Heat's test_yaql, test_yaql_list_input, _string_input, _int_input,
 * test_yaql_bogus_keys' expression. */
static void test_heat_s_yaql_cases(void **state)
{
    (void)state;
    assert_resolves("{\"yaql\": {\"expression\": \"$.data.var1.sum()\", "
                    "\"data\": {\"var1\": [1, 2, 3, 4]}}}",
                    "10");
    assert_resolves("{\"yaql\": {\"expression\": \"$.data.sum()\", \"data\": [1, 2, 3, 4]}}", "10");
    assert_resolves("{\"yaql\": {\"expression\": \"$.data\", \"data\": \"whynotastring\"}}",
                    "\"whynotastring\"");
    assert_resolves("{\"yaql\": {\"expression\": \"$.data + 2\", \"data\": 2}}", "4");
    assert_resolves("{\"yaql\": {\"expression\": \"1 + 3\"}}", "4");
}

/* Heat's test_yaql_data_as_function: the data's functions run first. */
static void test_yaql_data_may_hold_functions(void **state)
{
    (void)state;
    assert_resolves("{\"yaql\": {\"expression\": \"$.data.var1.len()\", "
                    "\"data\": {\"var1\": {\"list_join\": [\"\", [\"1\", \"2\"]]}}}}",
                    "2");
}

/* Heat's test_yaql_merge. */
static void test_yaql_reduce_with_merge(void **state)
{
    (void)state;
    assert_resolves("{\"yaql\": {\"expression\": \"$.data.d.reduce($1.mergeWith($2))\", "
                    "\"data\": {\"d\": [{\"a\": [1]}, {\"a\": [2]}, {\"a\": [3]}]}}}",
                    "{\"a\": [1, 2, 3]}");
}

/* heat/tests/openstack/heat/test_value.py and the hot_spec conditions. */
static void test_yaql_select_min_and_contains(void **state)
{
    (void)state;
    assert_resolves("{\"yaql\": {\"expression\": \"$.data.param2.select(int($)).min()\", "
                    "\"data\": {\"param2\": [\"3\", \"1\", \"2\"]}}}",
                    "1");
    assert_resolves("{\"yaql\": {\"expression\": \"min($.data.v1,$.data.v2)\", "
                    "\"data\": {\"v1\": 5, \"v2\": 4}}}",
                    "4");
    assert_resolves("{\"yaql\": {\"expression\": \"$.data.services.contains('heat')\", "
                    "\"data\": {\"services\": [\"nova\", \"heat\"]}}}",
                    "true");
    assert_resolves("{\"yaql\": {\"expression\": \"$.data.s.contains(\\\"neutron\\\")\", "
                    "\"data\": {\"s\": [\"nova\"]}}}",
                    "false");
    assert_resolves("{\"yaql\": {\"expression\": \"$.data.missing\", \"data\": {}}}", "null");
}

/* Heat's test_yaql_non_map_args, test_yaql_invalid_syntax,
 * test_yaql_bogus_keys and test_yaql_invalid_expression. */
static void test_yaql_checks_its_arguments(void **state)
{
    (void)state;
    reject_output("2016-10-14", "{yaql: invalid}", "yaql: Arguments to \"yaql\" must be a map.");
    reject_output("2016-10-14", "{yaql: {wrong: wrong_expr, wrong_data: mustbeamap}}",
                  "yaql: \"yaql\" syntax should be yaql:");
    reject_output("2016-10-14", "{yaql: {expression: '1 + 3', data: {}, bogus: ''}}",
                  "yaql: \"yaql\" syntax should be yaql:");
    reject_output("2016-10-14", "{yaql: {expression: 'invalid(', data: {var1: [1, 2, 3, 4]}}}",
                  "yaql: Bad expression Parse error: unexpected end of statement.");
    reject_output("2016-10-14", "{yaql: {expression: {foo: bar}}}",
                  "yaql: The \"expression\" argument to yaql must contain a string.");
    /* Heat's tables add yaql in 2016-10-14: before it the map is data. */
    assert_output_is("2016-04-08", "{yaql: {expression: '1 + 2'}}",
                     "{\"yaql\": {\"expression\": \"1 + 2\"}}");
    assert_output_is("2016-10-14", "{yaql: {expression: '1 + 2'}}", "3");
    accept_output("2016-10-14", "{yaql: {expression: '$.data.sum()', data: {get_param: m}}}");
}

/* Outside the subset: refused with the construct named, at validation. */
static void test_constructs_outside_the_subset_are_named(void **state)
{
    (void)state;
    accept_output("2016-10-14", "{yaql: {expression: '$.data.where($ > 1).distinct()'}}");
    accept_output("2016-10-14", "{yaql: {expression: '$.data.a * 2'}}");
    reject_output("2016-10-14", "{yaql: {expression: '$.data.orderBy($)'}}",
                  "yaql expression not supported: method orderBy() with 1 argument");
    reject_output("2016-10-14", "{yaql: {expression: '$.data.distinct(1)'}}",
                  "yaql expression not supported: method distinct() with 1 argument");
    reject_output("2016-10-14", "{yaql: {expression: '$.data =~ a'}}",
                  "yaql expression not supported: the operator =~");
    reject_output("2016-10-14", "{yaql: {expression: 'let(x => 1)'}}",
                  "yaql expression not supported: ");
    reject_output("2016-10-14", "{yaql: {expression: '$x'}}",
                  "yaql expression not supported: named variables");
    reject_output("2016-10-14", "{yaql: {expression: '[1, 2]'}}",
                  "yaql expression not supported: list literals");
    reject_output("2016-10-14", "{yaql: {expression: 'min(1, 2, 3)'}}",
                  "yaql expression not supported: function min() with 3 arguments");
    assert_fails("{\"yaql\": {\"expression\": \"$.data + 1\", \"data\": [1]}}",
                 "yaql expression not supported: the operator + on a list and a number");
}

/* In a condition (2017-09-01): Heat's test_yaql_as_condition. */
static void test_yaql_as_a_condition(void **state)
{
    (void)state;
    const char *doc = "heat_template_version: pike\n"
                      "parameters:\n"
                      "  ServiceNames: {type: comma_delimited_list, default: [neutron, heat]}\n"
                      "conditions:\n"
                      "  has_neutron:\n"
                      "    yaql:\n"
                      "      expression: $.data.service_names.contains('neutron')\n"
                      "      data: {service_names: {get_param: ServiceNames}}\n"
                      "resources:\n  r: {type: OS::Heat::None, condition: has_neutron}\n";
    cv_template_t *tpl = NULL;
    assert_int_equal(cv_template_parse(doc, strlen(doc), "t.yaml", NULL, &tpl, err, sizeof(err)),
                     0);
    assert_non_null(cv_template_resource(tpl, "r"));
    cv_template_free(tpl);
    json_t *params = json_pack("{s:s}", "ServiceNames", "nova_network,heat");
    assert_int_equal(cv_template_parse(doc, strlen(doc), "t.yaml", params, &tpl, err, sizeof(err)),
                     0);
    assert_null(cv_template_resource(tpl, "r"));
    cv_template_free(tpl);
    json_decref(params);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heat_s_yaql_cases),
        cmocka_unit_test(test_yaql_data_may_hold_functions),
        cmocka_unit_test(test_yaql_reduce_with_merge),
        cmocka_unit_test(test_yaql_select_min_and_contains),
        cmocka_unit_test(test_yaql_checks_its_arguments),
        cmocka_unit_test(test_constructs_outside_the_subset_are_named),
        cmocka_unit_test(test_yaql_as_a_condition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
