/*
 * Conditions as Heat defines them (heat/engine/conditions.py,
 * hot/functions.py): the conditions section, condition: on resources and
 * outputs, equals / not / and / or / contains, conditions naming
 * conditions, and if. Cases and expected values are Heat's own
 * (heat/tests/test_hot.py, test_template.py) where Heat has one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cv_template.h"
#include "test_util.h"

static char err[1024];

/* Parses `doc`, with parameter values given as JSON text (or NULL). */
static cv_template_t *parse(const char *doc, const char *params)
{
    json_t *values = params ? tu_json(params) : NULL;
    cv_template_t *tpl = NULL;
    err[0] = '\0';
    int rc = cv_template_parse(doc, strlen(doc), "t.yaml", values, &tpl, err, sizeof(err));
    json_decref(values);
    if (rc != 0)
        fail_msg("rejected: %s", err);
    return tpl;
}

static void reject(const char *doc, const char *params, const char *fragment)
{
    json_t *values = params ? tu_json(params) : NULL;
    cv_template_t *tpl = NULL;
    err[0] = '\0';
    int rc = cv_template_parse(doc, strlen(doc), "t.yaml", values, &tpl, err, sizeof(err));
    json_decref(values);
    cv_template_free(tpl);
    if (rc == 0)
        fail_msg("accepted, expected \"%s\"", fragment);
    assert_contains(err, fragment);
}

/* The value of `key` in the properties of resource `name`, as JSON text. */
static char *prop(const cv_template_t *tpl, const char *name, const char *key)
{
    const cv_tpl_resource_t *r = cv_template_resource(tpl, name);
    assert_non_null(r);
    const json_t *v = json_object_get(r->properties, key);
    return v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS) : strdup("absent");
}

static void assert_prop(const cv_template_t *tpl, const char *name, const char *key,
                        const char *json)
{
    char *got = prop(tpl, name, key);
    if (strcmp(got, json) != 0)
        fail_msg("%s.%s is %s, expected %s", name, key, got, json);
    free(got);
}

static void assert_output(const cv_template_t *tpl, const char *name, const char *json)
{
    const json_t *v = json_object_get(json_object_get(tpl->outputs, name), "value");
    char *got = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
    if (!got || strcmp(got, json) != 0)
        fail_msg("output %s is %s, expected %s", name, got ? got : "absent", json);
    free(got);
}

/* Heat's test_equals: env_type test / prod. */
#define ENV_TYPE                                                                                   \
    "heat_template_version: 2016-10-14\n"                                                          \
    "parameters:\n  env_type: {type: string, default: test}\n"                                     \
    "conditions:\n  prod: {equals: [{get_param: env_type}, prod]}\n"                               \
    "resources:\n"                                                                                 \
    "  vol: {type: OS::Heat::None, condition: prod}\n"                                             \
    "  always: {type: OS::Heat::None}\n"                                                           \
    "outputs:\n  foo: {condition: prod, value: show me}\n"

/* ---------------------------------------------------------------- resources */

static void test_a_resource_whose_condition_is_false_is_not_in_the_stack(void **state)
{
    (void)state;
    cv_template_t *tpl = parse(ENV_TYPE, NULL);
    assert_int_equal(tpl->nresources, 1);
    assert_null(cv_template_resource(tpl, "vol"));
    assert_non_null(cv_template_resource(tpl, "always"));
    cv_template_free(tpl);
}

static void test_a_resource_whose_condition_is_true_is_in_the_stack(void **state)
{
    (void)state;
    cv_template_t *tpl = parse(ENV_TYPE, "{\"env_type\": \"prod\"}");
    assert_int_equal(tpl->nresources, 2);
    assert_non_null(cv_template_resource(tpl, "vol"));
    cv_template_free(tpl);
}

static void test_an_output_whose_condition_is_false_is_null(void **state)
{
    (void)state;
    cv_template_t *tpl = parse(ENV_TYPE, NULL);
    assert_output(tpl, "foo", "null");
    cv_template_free(tpl);
    tpl = parse(ENV_TYPE, "{\"env_type\": \"prod\"}");
    assert_output(tpl, "foo", "\"show me\"");
    cv_template_free(tpl);
}

static void test_a_condition_may_be_a_boolean_on_resources_and_outputs(void **state)
{
    (void)state;
    cv_template_t *tpl = parse("heat_template_version: 2016-10-14\n"
                               "resources:\n"
                               "  yes: {type: OS::Heat::None, condition: true}\n"
                               "  no: {type: OS::Heat::None, condition: false}\n"
                               "outputs:\n"
                               "  a: {condition: true, value: show me}\n"
                               "  b: {condition: false, value: show me}\n",
                               NULL);
    assert_non_null(cv_template_resource(tpl, "yes"));
    assert_null(cv_template_resource(tpl, "no"));
    assert_output(tpl, "a", "\"show me\"");
    assert_output(tpl, "b", "null");
    cv_template_free(tpl);
}

/* Heat's test_parse_output_condition_function. */
static void test_a_condition_may_be_an_inline_expression(void **state)
{
    (void)state;
    cv_template_t *tpl =
        parse("heat_template_version: 2016-10-14\n"
              "parameters:\n  env_type: {type: string, default: test}\n"
              "conditions:\n  prod_env: {equals: [{get_param: env_type}, prod]}\n"
              "resources:\n"
              "  r: {type: OS::Heat::None, condition: {not: prod_env}}\n"
              "  s: {type: OS::Heat::None, condition: {equals: [{get_param: env_type}, prod]}}\n"
              "outputs:\n  foo: {condition: {not: prod_env}, value: show me}\n",
              NULL);
    assert_non_null(cv_template_resource(tpl, "r"));
    assert_null(cv_template_resource(tpl, "s"));
    assert_output(tpl, "foo", "\"show me\"");
    cv_template_free(tpl);
}

/* Heat's test_condition_reference_condition. */
static void test_conditions_may_name_other_conditions(void **state)
{
    (void)state;
    cv_template_t *tpl = parse("heat_template_version: 2016-10-14\n"
                               "parameters:\n  env_type: {type: string, default: test}\n"
                               "conditions:\n"
                               "  prod_env: {equals: [{get_param: env_type}, prod]}\n"
                               "  test_env: {not: prod_env}\n"
                               "  prod_or_test_env: {or: [prod_env, test_env]}\n"
                               "  prod_and_test_env: {and: [prod_env, test_env]}\n"
                               "resources:\n"
                               "  a: {type: OS::Heat::None, condition: prod_env}\n"
                               "  b: {type: OS::Heat::None, condition: test_env}\n"
                               "  c: {type: OS::Heat::None, condition: prod_or_test_env}\n"
                               "  d: {type: OS::Heat::None, condition: prod_and_test_env}\n",
                               NULL);
    assert_null(cv_template_resource(tpl, "a"));
    assert_non_null(cv_template_resource(tpl, "b"));
    assert_non_null(cv_template_resource(tpl, "c"));
    assert_null(cv_template_resource(tpl, "d"));
    cv_template_free(tpl);
}

/* The example of Heat's hot_spec.rst conditions section. */
static void test_the_conditions_of_the_hot_spec_example(void **state)
{
    (void)state;
    cv_template_t *tpl =
        parse("heat_template_version: 2017-09-01\n"
              "parameters:\n"
              "  param1: {type: boolean, default: true}\n"
              "  param2: {type: string, default: 'yes'}\n"
              "  param3: {type: string, default: 'no'}\n"
              "  env_type: {type: string, default: prod}\n"
              "  zone: {type: string, default: shanghai}\n"
              "  ServiceNames: {type: comma_delimited_list, default: 'neutron,nova'}\n"
              "conditions:\n"
              "  cd1: True\n"
              "  cd2: {get_param: param1}\n"
              "  cd3: {equals: [{get_param: param2}, 'yes']}\n"
              "  cd4: {not: {equals: [{get_param: param3}, 'yes']}}\n"
              "  cd5: {and: [{equals: [{get_param: env_type}, prod]},\n"
              "              {not: {equals: [{get_param: zone}, beijing]}}]}\n"
              "  cd6: {or: [{equals: [{get_param: zone}, shanghai]},\n"
              "             {equals: [{get_param: zone}, beijing]}]}\n"
              "  cd7: {not: cd4}\n"
              "  cd8: {and: [cd1, cd2]}\n"
              "  cd10: {contains: [neutron, {get_param: ServiceNames}]}\n"
              "  cd11: {contains: [heat, {get_param: ServiceNames}]}\n"
              "resources:\n"
              "  r1: {type: OS::Heat::None, condition: cd1}\n"
              "  r2: {type: OS::Heat::None, condition: cd2}\n"
              "  r3: {type: OS::Heat::None, condition: cd3}\n"
              "  r4: {type: OS::Heat::None, condition: cd4}\n"
              "  r5: {type: OS::Heat::None, condition: cd5}\n"
              "  r6: {type: OS::Heat::None, condition: cd6}\n"
              "  r7: {type: OS::Heat::None, condition: cd7}\n"
              "  r8: {type: OS::Heat::None, condition: cd8}\n"
              "  r10: {type: OS::Heat::None, condition: cd10}\n"
              "  r11: {type: OS::Heat::None, condition: cd11}\n",
              NULL);
    static const char *const on[] = {"r1", "r2", "r3", "r4", "r5", "r6", "r8", "r10"};
    for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++)
        if (!cv_template_resource(tpl, on[i]))
            fail_msg("%s left out", on[i]);
    assert_null(cv_template_resource(tpl, "r7"));
    assert_null(cv_template_resource(tpl, "r11"));
    cv_template_free(tpl);
}

/* Heat's test_depends_condition: depends_on a disabled resource is dropped. */
static void test_depending_on_a_resource_left_out_is_allowed(void **state)
{
    (void)state;
    cv_template_t *tpl = parse("heat_template_version: 2016-10-14\n"
                               "resources:\n"
                               "  one: {type: OS::Heat::None}\n"
                               "  two: {type: OS::Heat::None, condition: False}\n"
                               "  three: {type: OS::Heat::None, depends_on: two}\n",
                               NULL);
    assert_int_equal(tpl->nresources, 2);
    const cv_tpl_resource_t *three = cv_template_resource(tpl, "three");
    assert_non_null(three);
    assert_int_equal(three->ndepends, 0);
    cv_template_free(tpl);
}

static void test_a_reference_to_a_resource_left_out_is_an_incorrect_reference(void **state)
{
    (void)state;
    reject("heat_template_version: 2016-10-14\n"
           "resources:\n"
           "  two: {type: OS::Heat::None, condition: False}\n"
           "  three: {type: OS::Heat::Value, properties: {value: {get_resource: two}}}\n",
           NULL, "The specified reference \"two\" (in three.Properties.value) is incorrect.");
}

/* ---------------------------------------------------------------- errors */

/* Heat's test_get_res_condition_invalid / test_parse_output_condition_invalid. */
static void test_an_unknown_condition_name_is_invalid(void **state)
{
    (void)state;
    reject("heat_template_version: 2016-10-14\n"
           "resources:\n  r: {type: OS::Heat::None, condition: invalid_cd}\n",
           NULL, "t.yaml: resources.r.condition: Invalid condition \"invalid_cd\"");
    reject("heat_template_version: 2016-10-14\n"
           "outputs:\n  foo: {condition: invalid_cd, value: show me}\n",
           NULL, "outputs.foo.condition: Invalid condition \"invalid_cd\"");
    reject("heat_template_version: 2016-10-14\n"
           "outputs:\n  foo: {condition: 222, value: show me}\n",
           NULL, "outputs.foo.condition: Invalid condition \"222\"");
    reject("heat_template_version: 2016-10-14\n"
           "resources:\n  r: {type: OS::Heat::None, condition: 111}\n",
           NULL, "resources.r.condition: Resource r condition type must be string_or_boolean");
}

/* Heat's test_conditions_circular_ref. */
static void test_a_circular_condition_is_reported(void **state)
{
    (void)state;
    reject("heat_template_version: 2016-10-14\n"
           "conditions:\n"
           "  first_cond: {not: second_cond}\n"
           "  second_cond: {not: third_cond}\n"
           "  third_cond: {not: first_cond}\n",
           NULL, "Circular definition for condition \"first_cond\"");
}

/* Heat's test_condition_resolved_not_boolean. */
static void test_a_condition_that_is_not_boolean_is_invalid(void **state)
{
    (void)state;
    reject("heat_template_version: 2016-10-14\n"
           "parameters:\n  env_type: {type: string, default: test}\n"
           "conditions:\n  prod_env: {get_param: env_type}\n",
           NULL,
           "conditions.prod_env: The definition of condition \"prod_env\" is invalid: \"test\"");
    reject("heat_template_version: 2016-10-14\nconditions:\n  c: [1, 2]\n", NULL,
           "The definition of condition \"c\" is invalid: [1,2]");
    reject("heat_template_version: 2016-10-14\nconditions: [1]\n", NULL,
           "Condition definitions must be a map. Found a list instead");
}

/* Heat's test_conditions_with_non_supported_functions. */
static void test_only_condition_functions_may_be_used_in_conditions(void **state)
{
    (void)state;
    reject("heat_template_version: 2016-10-14\n"
           "parameters:\n  env_type: {type: string, default: test}\n"
           "conditions:\n"
           "  prod_env: {equals: [{get_param: env_type}, {get_attr: [r, att]}]}\n",
           NULL, "The function \"get_attr\" is invalid in this context");
    reject("heat_template_version: 2016-10-14\nconditions:\n  c: {get_resource: R1}\n", NULL,
           "The function \"get_resource\" is invalid in this context");
    /* contains is a condition function from 2017-09-01 only: in 2016-10-14
     * no table has it, so it is plain data, a map, which is no condition. */
    reject("heat_template_version: 2016-10-14\nconditions:\n  c: {contains: [a, [a]]}\n", NULL,
           "t.yaml: conditions.c: The definition of condition \"c\" is invalid: "
           "{\"contains\":[\"a\",[\"a\"]]}");
    /* A function of the version's table other than a condition function is
     * Invalid in a condition (Heat's function.Invalid). */
    reject("heat_template_version: 2016-10-14\nconditions:\n  c: {str_split: [',', 'a,b']}\n", NULL,
           "t.yaml: conditions.c: The function \"str_split\" is invalid in this context");
}

/* Heat's test_equals_invalid_args and the other functions' argument errors. */
static void test_condition_functions_check_their_arguments(void **state)
{
    (void)state;
    static const struct {
        const char *cond, *msg;
    } cases[] = {
        {"{equals: [test, prod, invalid]}",
         "Arguments to \"equals\" must be of the form: [value_1, value_2]"},
        {"{equals: invalid condition}",
         "Arguments to \"equals\" must be of the form: [value_1, value_2]"},
        {"{not: null}", "Argument to \"not\" must be a condition"},
        {"{and: x}", "Arguments to \"and\" must be a list of conditions"},
        {"{or: [true]}", "The minimum number of condition arguments to \"or\" is 2."},
        {"{and: [true, 5]}", "Invalid condition \"5\""},
        {"{contains: {key: value}}", "Incorrect arguments to \"contains\" should be: "},
        {"{contains: [v1, [v1, v2], redundant]}",
         "must be of the form: [value1, [value1, value2]]"},
        {"{contains: [v1, {key: value}]}", "Second argument to \"contains\" should be a sequence."},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char doc[512];
        snprintf(doc, sizeof(doc), "heat_template_version: 2017-09-01\nconditions:\n  c: %s\n",
                 cases[i].cond);
        reject(doc, NULL, cases[i].msg);
    }
}

/* Heat's test_contains_with_list / _with_string, and Python's == in equals. */
static void test_contains_and_equals_compare_as_python_does(void **state)
{
    (void)state;
    cv_template_t *tpl = parse("heat_template_version: 2017-09-01\n"
                               "conditions:\n"
                               "  in_list: {contains: [v1, [v1, v2]]}\n"
                               "  in_string: {contains: [a, abc]}\n"
                               "  not_in: {contains: [v3, [v1, v2]]}\n"
                               "  int_float: {equals: [1, 1.0]}\n"
                               "  maps: {equals: [{a: [1, 2]}, {a: [1, 2]}]}\n"
                               "  differ: {equals: ['1', 1]}\n"
                               "resources:\n"
                               "  a: {type: OS::Heat::None, condition: in_list}\n"
                               "  b: {type: OS::Heat::None, condition: in_string}\n"
                               "  c: {type: OS::Heat::None, condition: not_in}\n"
                               "  d: {type: OS::Heat::None, condition: int_float}\n"
                               "  e: {type: OS::Heat::None, condition: maps}\n"
                               "  f: {type: OS::Heat::None, condition: differ}\n",
                               NULL);
    assert_non_null(cv_template_resource(tpl, "a"));
    assert_non_null(cv_template_resource(tpl, "b"));
    assert_null(cv_template_resource(tpl, "c"));
    assert_non_null(cv_template_resource(tpl, "d"));
    assert_non_null(cv_template_resource(tpl, "e"));
    assert_null(cv_template_resource(tpl, "f"));
    cv_template_free(tpl);
}

static void test_conditions_need_version_2016_10_14(void **state)
{
    (void)state;
    /* Heat's InvalidTemplateSection: the section is not in the version's SECTIONS. */
    reject("heat_template_version: 2016-04-08\nconditions: {}\n", NULL,
           "t.yaml: conditions: The template section is invalid: conditions");
    reject("heat_template_version: 2016-04-08\n"
           "resources:\n  r: {type: OS::Heat::None, condition: true}\n",
           NULL, "unknown key \"condition\"");
}

/* ---------------------------------------------------------------- if */

#define IF_DOC(version, value)                                                                     \
    "heat_template_version: " version "\n"                                                         \
    "parameters:\n  env_type: {type: string, default: test}\n"                                     \
    "conditions:\n  create_prod: {equals: [{get_param: env_type}, prod]}\n"                        \
    "resources:\n  r:\n    type: OS::Heat::Value\n    properties:\n      value: " value "\n"       \
    "outputs:\n  o: {value: " value "}\n"

/* Heat's test_if and test_if_referenced_by_resource. */
static void test_if_takes_the_branch_its_condition_names(void **state)
{
    (void)state;
    cv_template_t *tpl = parse(IF_DOC("pike", "{if: [create_prod, one, two]}"), NULL);
    assert_prop(tpl, "r", "value", "\"two\"");
    assert_output(tpl, "o", "\"two\"");
    cv_template_free(tpl);
    tpl = parse(IF_DOC("pike", "{if: [create_prod, one, two]}"), "{\"env_type\": \"prod\"}");
    assert_prop(tpl, "r", "value", "\"one\"");
    assert_output(tpl, "o", "\"one\"");
    cv_template_free(tpl);
}

/* Heat's test_if_using_boolean_condition and test_if_using_condition_function. */
static void test_if_takes_a_boolean_or_an_expression(void **state)
{
    (void)state;
    cv_template_t *tpl = parse(IF_DOC("2016-10-14", "{if: [true, yes_branch, no_branch]}"), NULL);
    assert_prop(tpl, "r", "value", "\"yes_branch\"");
    cv_template_free(tpl);
    tpl = parse(IF_DOC("2016-10-14", "{if: [{not: create_prod}, yes_branch, no_branch]}"), NULL);
    assert_prop(tpl, "r", "value", "\"yes_branch\"");
    cv_template_free(tpl);
}

/* Heat's test_if_referenced_by_resource_null: the property is unset, so the
 * type's default applies. */
static void test_a_null_branch_unsets_the_property(void **state)
{
    (void)state;
    cv_template_t *tpl =
        parse("heat_template_version: pike\n"
              "conditions:\n  create_prod: true\n"
              "resources:\n  pw:\n    type: OS::Heat::RandomString\n"
              "    properties: {length: {if: [create_prod, null, 8]}, salt: {if: [true, a, b]}}\n"
              "outputs:\n  o: {value: {if: [create_prod, null, two]}}\n",
              NULL);
    assert_prop(tpl, "pw", "length", "absent");
    assert_prop(tpl, "pw", "salt", "\"a\"");
    assert_output(tpl, "o", "null");
    cv_template_free(tpl);
}

/* Heat's test_if_nullable and test_if_referenced_by_resource_empty. */
static void test_wallaby_if_without_false_branch_removes_the_item(void **state)
{
    (void)state;
    cv_template_t *tpl = parse(
        "heat_template_version: wallaby\n"
        "resources:\n  r:\n    type: OS::Heat::Value\n    properties:\n"
        "      value:\n"
        "        single: {if: [false, value_if_true]}\n"
        "        nested_true: {if: [true, {if: [false, foo]}, bar]}\n"
        "        nested_false: {if: [false, baz, {if: [false, quux]}]}\n"
        "        control: {if: [false, true, null]}\n"
        "        list: [a, {if: [false, b]}, c]\n"
        "  s:\n    type: OS::Heat::RandomString\n    properties:\n      length: {if: [false, 8]}\n",
        NULL);
    assert_prop(tpl, "r", "value", "{\"control\":null,\"list\":[\"a\",\"c\"]}");
    assert_prop(tpl, "s", "length", "absent");
    cv_template_free(tpl);
}

/* Heat's test_if_invalid_args / test_if_nullable_invalid_args. */
static void test_if_checks_its_arguments(void **state)
{
    (void)state;
    static const char *const msg = "Arguments to \"if\" must be of the form: [condition_name, "
                                   "value_if_true, value_if_false]";
    reject(IF_DOC("2016-10-14", "{if: [create_prod, one_value]}"), NULL, msg);
    reject(IF_DOC("2016-10-14", "{if: [create_prod, one, two, three]}"), NULL, msg);
    reject(IF_DOC("wallaby", "{if: [create_prod]}"), NULL, msg);
    reject(IF_DOC("wallaby", "{if: [create_prod, one, two, three]}"), NULL, msg);
    reject(IF_DOC("2016-10-14", "{if: [cd_not_existing, value_true, value_false]}"), NULL,
           "resources.r.properties.value: Invalid condition \"cd_not_existing\"");
}

/* As Heat's If is a macro, only the branch taken is checked. */
static void test_only_the_branch_taken_is_checked(void **state)
{
    (void)state;
    cv_template_t *tpl =
        parse(IF_DOC("2016-10-14", "{if: [create_prod, {get_resource: nothing}, fine]}"), NULL);
    assert_prop(tpl, "r", "value", "\"fine\"");
    cv_template_free(tpl);
    reject(IF_DOC("2016-10-14", "{if: [create_prod, {get_resource: nothing}, fine]}"),
           "{\"env_type\": \"prod\"}", "The specified reference \"nothing\"");
}

/* An `if` nested in another function's arguments, and in metadata. */
static void test_if_inside_other_functions_and_metadata(void **state)
{
    (void)state;
    cv_template_t *tpl = parse("heat_template_version: 2016-10-14\n"
                               "conditions:\n  c: false\n"
                               "resources:\n  r:\n    type: OS::Heat::Value\n"
                               "    metadata: {m: {if: [c, a, b]}}\n"
                               "    properties:\n"
                               "      value: {list_join: [',', [x, {if: [c, y, z]}]]}\n",
                               NULL);
    assert_prop(tpl, "r", "value", "{\"list_join\":[\",\",[\"x\",\"z\"]]}");
    const cv_tpl_resource_t *r = cv_template_resource(tpl, "r");
    assert_string_equal(json_string_value(json_object_get(r->metadata, "m")), "b");
    cv_template_free(tpl);
}

static void test_get_param_of_an_undeclared_parameter_in_a_condition(void **state)
{
    (void)state;
    reject("heat_template_version: 2016-10-14\n"
           "conditions:\n  c: {equals: [{get_param: nosuch}, x]}\n",
           NULL, "conditions.c: The Parameter (nosuch) was not provided.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_resource_whose_condition_is_false_is_not_in_the_stack),
        cmocka_unit_test(test_a_resource_whose_condition_is_true_is_in_the_stack),
        cmocka_unit_test(test_an_output_whose_condition_is_false_is_null),
        cmocka_unit_test(test_a_condition_may_be_a_boolean_on_resources_and_outputs),
        cmocka_unit_test(test_a_condition_may_be_an_inline_expression),
        cmocka_unit_test(test_conditions_may_name_other_conditions),
        cmocka_unit_test(test_the_conditions_of_the_hot_spec_example),
        cmocka_unit_test(test_depending_on_a_resource_left_out_is_allowed),
        cmocka_unit_test(test_a_reference_to_a_resource_left_out_is_an_incorrect_reference),
        cmocka_unit_test(test_an_unknown_condition_name_is_invalid),
        cmocka_unit_test(test_a_circular_condition_is_reported),
        cmocka_unit_test(test_a_condition_that_is_not_boolean_is_invalid),
        cmocka_unit_test(test_only_condition_functions_may_be_used_in_conditions),
        cmocka_unit_test(test_condition_functions_check_their_arguments),
        cmocka_unit_test(test_contains_and_equals_compare_as_python_does),
        cmocka_unit_test(test_conditions_need_version_2016_10_14),
        cmocka_unit_test(test_if_takes_the_branch_its_condition_names),
        cmocka_unit_test(test_if_takes_a_boolean_or_an_expression),
        cmocka_unit_test(test_a_null_branch_unsets_the_property),
        cmocka_unit_test(test_wallaby_if_without_false_branch_removes_the_item),
        cmocka_unit_test(test_if_checks_its_arguments),
        cmocka_unit_test(test_only_the_branch_taken_is_checked),
        cmocka_unit_test(test_if_inside_other_functions_and_metadata),
        cmocka_unit_test(test_get_param_of_an_undeclared_parameter_in_a_condition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
