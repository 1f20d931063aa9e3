/*
 * Functions evaluated when a template is validated, as Heat validates a
 * stack with its parameters: a call whose arguments read only parameters
 * and literals is evaluated then, and one that fails refuses the template
 * with Heat's words, naming where it is. A call that reads a resource is
 * left for the engine; what is stored stays as written.
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

static char err[2048];

/* Parses `yaml` with the parameter values `params_json` (JSON, may be NULL). */
static int parse(const char *yaml, const char *params_json, cv_template_t **out)
{
    json_t *params = params_json ? tu_json(params_json) : NULL;
    err[0] = '\0';
    int rc = cv_template_parse(yaml, strlen(yaml), "app.yaml", params, out, err, sizeof(err));
    json_decref(params);
    return rc;
}

static void assert_refused(const char *yaml, const char *params_json, const char *want)
{
    cv_template_t *tpl = NULL;
    int rc = parse(yaml, params_json, &tpl);
    cv_template_free(tpl);
    if (rc != CV_EVALIDATE)
        fail_msg("expected a refusal containing \"%s\", got rc %d (%s)", want, rc, err);
    assert_null(tpl);
    assert_contains(err, want);
}

static void assert_valid(const char *yaml, const char *params_json)
{
    cv_template_t *tpl = NULL;
    if (parse(yaml, params_json, &tpl) != 0)
        fail_msg("refused: %s", err);
    cv_template_free(tpl);
}

/* An OS::Heat::Value whose `value` is `expr`, with parameters `decls`. */
#define VALUE_OF(decls, expr)                                                                      \
    "heat_template_version: 2018-08-31\n"                                                          \
    "parameters:\n" decls "resources:\n"                                                           \
    "  r:\n"                                                                                       \
    "    type: OS::Heat::Value\n"                                                                  \
    "    properties:\n"                                                                            \
    "      value: " expr "\n"

#define LISTS                                                                                      \
    "  a: {type: comma_delimited_list, default: 'x,y'}\n  b: {type: comma_delimited_list}\n"

static void test_repeat_of_lists_of_different_lengths_without_permutations_is_refused(void **state)
{
    (void)state;
    const char *yaml =
        VALUE_OF(LISTS, "{repeat: {template: '%a%-%b%', for_each: {'%a%': {get_param: a}, "
                        "'%b%': {get_param: b}}, permutations: false}}");
    assert_refused(yaml, "{\"b\": \"1,2,3\"}",
                   "app.yaml: resources.r.properties.value: For repeat, the length of for_each "
                   "values should be equal if no nested loop.");
    assert_valid(yaml, "{\"b\": \"1,2\"}");
}

static void test_repeat_with_permutations_from_a_parameter_is_refused_as_not_boolean(void **state)
{
    (void)state;
    /* Heat reads `permutations` when it parses the call, unresolved: a
     * function there is not a boolean, whatever it would give. */
    assert_refused(VALUE_OF("  p: {type: boolean, default: false}\n",
                            "{repeat: {template: x, for_each: {'%a%': [1]}, permutations: "
                            "{get_param: p}}}"),
                   NULL, "\"permutations\" should be boolean type for repeat function.");
}

static void test_str_split_index_out_of_range_from_a_parameter_is_refused(void **state)
{
    (void)state;
    const char *yaml =
        VALUE_OF("  i: {type: number}\n", "{str_split: [',', 'a,b,c', {get_param: i}]}");
    assert_refused(yaml, "{\"i\": 3}",
                   "resources.r.properties.value: Incorrect index to \"str_split\" should be "
                   "between 0 and 2");
    assert_valid(yaml, "{\"i\": 2}");
}

static void test_str_split_index_of_the_wrong_type_is_refused(void **state)
{
    (void)state;
    assert_refused(VALUE_OF("  s: {type: string, default: 'a,b'}\n",
                            "{str_split: [',', {get_param: s}, first]}"),
                   NULL,
                   "resources.r.properties.value: Incorrect index to \"str_split\" should be: "
                   "\"str_split\" : [ \",\", \"apples,pears\", <index>]");
}

static void test_map_merge_of_a_list_parameter_is_refused(void **state)
{
    (void)state;
    assert_refused(VALUE_OF("  m: {type: json}\n", "{map_merge: [{a: 1}, {get_param: m}]}"),
                   "{\"m\": [1, 2]}",
                   "resources.r.properties.value: Incorrect arguments: Items to merge must be "
                   "maps. [1, 2] is type <class 'list'> instead of a dict");
}

static void test_map_replace_with_colliding_keys_is_refused(void **state)
{
    (void)state;
    assert_refused(VALUE_OF("  k: {type: json, default: {a: b}}\n",
                            "{map_replace: [{a: 1, b: 2}, {keys: {get_param: k}}]}"),
                   NULL, "key replacement b collides with a key in the input map");
    assert_refused(VALUE_OF("  m: {type: string, default: x}\n",
                            "{map_replace: [{get_param: m}, {keys: {}}]}"),
                   NULL, "to \"map_replace\", arguments must be a list of maps");
}

static void test_str_replace_strict_without_the_key_in_the_template_is_refused(void **state)
{
    (void)state;
    assert_refused(VALUE_OF("  t: {type: string, default: 'hello'}\n",
                            "{str_replace_strict: {template: {get_param: t}, params: {$who: x}}}"),
                   NULL, "The following params were not found in the template: $who");
}

static void test_str_replace_vstrict_with_an_empty_value_is_refused(void **state)
{
    (void)state;
    assert_refused(VALUE_OF("  w: {type: string, default: ''}\n",
                            "{str_replace_vstrict: {template: 'hi $who', params: {$who: "
                            "{get_param: w}}}}"),
                   NULL,
                   "str_replace_vstrict has an undefined or empty value for param $who, must be "
                   "a defined non-empty value");
}

static void test_make_url_with_a_bad_port_or_scheme_is_refused(void **state)
{
    (void)state;
    const char *yaml = VALUE_OF("  port: {type: number}\n  scheme: {type: string, default: http}\n",
                                "{make_url: {scheme: {get_param: scheme}, host: h, port: "
                                "{get_param: port}}}");
    assert_refused(yaml, "{\"port\": 99999}", "Invalid URL port 99999, must be in range 1-65535");
    assert_refused(yaml, "{\"port\": 80, \"scheme\": \"http:\"}",
                   "URL \"scheme\" should not contain ':'");
    assert_valid(yaml, "{\"port\": 80}");
}

static void test_a_literal_call_that_fails_is_refused(void **state)
{
    (void)state;
    assert_refused(
        VALUE_OF("  unused: {type: string, default: x}\n", "{str_split: [',', 'a,b', 5]}"), NULL,
        "resources.r.properties.value: Incorrect index to \"str_split\"");
}

static void test_a_call_reading_a_resource_is_left_for_the_engine(void **state)
{
    (void)state;
    /* get_attr of an uncreated resource has no value yet: the call is not
     * evaluated, whatever its other arguments. */
    assert_valid("heat_template_version: 2018-08-31\n"
                 "resources:\n"
                 "  s: {type: OS::Heat::TestResource, properties: {value: 'a,b'}}\n"
                 "  r:\n"
                 "    type: OS::Heat::TestResource\n"
                 "    properties:\n"
                 "      value: {str_split: [',', {get_attr: [s, output]}, 7]}\n",
                 NULL);
}

static void test_a_known_call_inside_one_reading_a_resource_is_evaluated(void **state)
{
    (void)state;
    assert_refused("heat_template_version: 2018-08-31\n"
                   "parameters:\n"
                   "  i: {type: number, default: 9}\n"
                   "resources:\n"
                   "  s: {type: OS::Heat::TestResource}\n"
                   "  r:\n"
                   "    type: OS::Heat::TestResource\n"
                   "    properties:\n"
                   "      value:\n"
                   "        list_join: [',', [{get_attr: [s, output]}, "
                   "{str_split: [',', 'a,b', {get_param: i}]}]]\n",
                   NULL, "resources.r.properties.value: Incorrect index to \"str_split\"");
}

/* Parameters {"big": FILL x 1 MiB}: caller frees. */
static char *big_param(char fill)
{
    char *big = malloc(1024 * 1024 + 32);
    assert_non_null(big);
    strcpy(big, "{\"big\": \"");
    memset(big + 9, fill, 1024 * 1024);
    strcpy(big + 9 + 1024 * 1024, "\"}");
    return big;
}

/* A resource's folded properties share one size guard, as one resolution
 * by the engine does (found by fuzzing: aliased lists of get_param, each
 * under the guard, folded into gigabytes). Past it the rest is the
 * engine's to resolve and refuse. */
static void test_folding_past_the_size_guard_leaves_the_rest_for_the_engine(void **state)
{
    (void)state;
    char *big = big_param('x');
    const char *bad = "{str_split: [',', 'a,b', 5]}";
    char yaml[4096];
    char calls[1024] = "";
    for (int i = 0; i < 9; i++)
        strcat(calls, "{get_param: big}, ");
    snprintf(yaml, sizeof(yaml), VALUE_OF("  big: {type: string}\n", "[%s%s]"), calls, bad);
    assert_refused(yaml, big, "Incorrect index to \"str_split\"");
    for (int i = 9; i < 17; i++)
        strcat(calls, "{get_param: big}, ");
    snprintf(yaml, sizeof(yaml), VALUE_OF("  big: {type: string}\n", "[%s%s]"), calls, bad);
    assert_valid(yaml, big);
    free(big);
}

/* The same when a built function (str_split here) is what goes past it:
 * the fold tells that from a wrong call by the resolver's code, not by
 * the message. */
static void test_a_function_past_the_size_guard_leaves_the_rest_for_the_engine(void **state)
{
    (void)state;
    char *big = big_param(',');
    assert_valid(VALUE_OF("  big: {type: string}\n",
                          "[{str_split: [',', {get_param: big}]}, {str_split: [',', 'a,b', 5]}]"),
                 big);
    free(big);
}

static void test_a_nested_place_is_named_in_the_refusal(void **state)
{
    (void)state;
    assert_refused(VALUE_OF("  i: {type: number, default: 4}\n",
                            "{deep: [ok, {str_split: [',', 'a', {get_param: i}]}]}"),
                   NULL, "app.yaml: resources.r.properties.value.deep[1]: Incorrect index");
}

static void test_the_properties_of_a_none_resource_are_not_evaluated(void **state)
{
    (void)state;
    /* Heat's NoneResource reads no property and validates nothing. */
    assert_valid("heat_template_version: 2018-08-31\n"
                 "parameters:\n"
                 "  i: {type: number, default: 9}\n"
                 "resources:\n"
                 "  r:\n"
                 "    type: OS::Heat::None\n"
                 "    properties:\n"
                 "      value: {str_split: [',', 'a,b', {get_param: i}]}\n",
                 NULL);
}

static void test_a_delete_may_parse_what_validation_refuses_now(void **state)
{
    (void)state;
    /* A definition stored by a lax client or an older Converge must still
     * be removable: opts.no_eval parses it without evaluating. */
    const char *yaml =
        VALUE_OF("  i: {type: number, default: 9}\n", "{str_split: [',', 'a,b', {get_param: i}]}");
    char lerr[256];
    json_t *root = cv_yaml_load(yaml, strlen(yaml), "app.yaml", lerr, sizeof(lerr));
    cv_tpl_opts_t opts = {.no_eval = 1};
    cv_template_t *tpl = NULL;
    if (cv_template_from_json_opts(root, "app.yaml", NULL, &opts, &tpl, err, sizeof(err)) != 0)
        fail_msg("refused: %s", err);
    cv_template_free(tpl);
    opts.no_eval = 0;
    assert_int_equal(
        cv_template_from_json_opts(root, "app.yaml", NULL, &opts, &tpl, err, sizeof(err)),
        CV_EVALIDATE);
    json_decref(root);
}

static void test_the_stored_properties_stay_as_written(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    if (parse(VALUE_OF("  i: {type: number, default: 1}\n",
                       "{str_split: [',', 'a,b', {get_param: i}]}"),
              NULL, &tpl) != 0)
        fail_msg("refused: %s", err);
    json_t *value = json_object_get(tpl->resources[0].properties, "value");
    assert_non_null(json_object_get(value, "str_split"));
    cv_template_free(tpl);
}

static void test_the_value_of_a_property_from_a_parameter_meets_the_schema(void **state)
{
    (void)state;
    /* RandomString's length is an integer; a string parameter that is no
     * number fails the property, as in Heat. */
    assert_refused("heat_template_version: 2018-08-31\n"
                   "parameters:\n"
                   "  len: {type: string, default: many}\n"
                   "resources:\n"
                   "  r:\n"
                   "    type: OS::Heat::RandomString\n"
                   "    properties: {length: {get_param: len}}\n",
                   NULL, "resources.r.properties.length: expected integer");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeat_of_lists_of_different_lengths_without_permutations_is_refused),
        cmocka_unit_test(test_repeat_with_permutations_from_a_parameter_is_refused_as_not_boolean),
        cmocka_unit_test(test_str_split_index_out_of_range_from_a_parameter_is_refused),
        cmocka_unit_test(test_str_split_index_of_the_wrong_type_is_refused),
        cmocka_unit_test(test_map_merge_of_a_list_parameter_is_refused),
        cmocka_unit_test(test_map_replace_with_colliding_keys_is_refused),
        cmocka_unit_test(test_str_replace_strict_without_the_key_in_the_template_is_refused),
        cmocka_unit_test(test_str_replace_vstrict_with_an_empty_value_is_refused),
        cmocka_unit_test(test_make_url_with_a_bad_port_or_scheme_is_refused),
        cmocka_unit_test(test_a_literal_call_that_fails_is_refused),
        cmocka_unit_test(test_a_call_reading_a_resource_is_left_for_the_engine),
        cmocka_unit_test(test_a_known_call_inside_one_reading_a_resource_is_evaluated),
        cmocka_unit_test(test_folding_past_the_size_guard_leaves_the_rest_for_the_engine),
        cmocka_unit_test(test_a_function_past_the_size_guard_leaves_the_rest_for_the_engine),
        cmocka_unit_test(test_a_nested_place_is_named_in_the_refusal),
        cmocka_unit_test(test_the_properties_of_a_none_resource_are_not_evaluated),
        cmocka_unit_test(test_a_delete_may_parse_what_validation_refuses_now),
        cmocka_unit_test(test_the_stored_properties_stay_as_written),
        cmocka_unit_test(test_the_value_of_a_property_from_a_parameter_meets_the_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
