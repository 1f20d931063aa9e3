/*
 * Specification of OS::Heat::Stack: the child stack is the `template`
 * property (text, handed to the engine to parse, or a map) with
 * `parameters`; its attributes are `outputs` (every output by name) and
 * `stack_name`; a changed region_name replaces it, anything else updates
 * the child in place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_json_fixture.h"
#include "test_rtype_config.h"

#define STACK "OS::Heat::Stack"

static void test_template_text_and_parameters_make_the_child(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type(STACK);
    json_t *raw =
        js("{'template': 'heat_template_version: 2015-04-30\\n', 'parameters': {'a': 1}}");
    json_t *props = tr_props(t, raw), *tpl = NULL, *params = NULL, *data = json_object();
    char err[256];
    assert_int_equal(
        t->nested->definition(STACK, props, NULL, data, &tpl, &params, err, sizeof(err)), 0);
    assert_string_equal(json_string_value(tpl), "heat_template_version: 2015-04-30\n");
    assert_json_sq(params, "{'a': 1}");
    json_decref(tpl);
    json_decref(params);
    json_decref(props);
    json_decref(raw);
    raw = js("{'template': {'heat_template_version': '2015-04-30'}}");
    props = tr_props(t, raw);
    assert_int_equal(
        t->nested->definition(STACK, props, NULL, data, &tpl, &params, err, sizeof(err)), 0);
    assert_json_sq(tpl, "{'heat_template_version': '2015-04-30'}");
    assert_json_sq(params, "{}");
    json_decref(tpl);
    json_decref(params);
    json_decref(props);
    json_decref(raw);
    json_decref(data);
}

static void test_attributes_are_outputs_and_stack_name(void **state)
{
    (void)state;
    json_t *outputs = js("{'a': 1, 'b': ['x']}"), *data = js("{'stack_name': 'p-s-0123456789ab'}");
    json_t *attrs = tr_type(STACK)->nested->attributes(outputs, data);
    assert_json_sq(attrs, "{'outputs': {'a': 1, 'b': ['x']}, 'stack_name': 'p-s-0123456789ab'}");
    assert_true(cv_rtype_has_attr(tr_type(STACK), "outputs"));
    assert_true(cv_rtype_has_attr(tr_type(STACK), "stack_name"));
    json_decref(attrs);
    json_decref(outputs);
    json_decref(data);
}

static void test_only_a_new_region_replaces(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type(STACK);
    json_t *a = js("{'template': 'x', 'context': {'region_name': 'r1'}}");
    json_t *b = js("{'template': 'y', 'timeout': 5, 'parameters': {'p': 1}, "
                   "'context': {'region_name': 'r1'}}");
    json_t *c = js("{'template': 'x', 'context': {'region_name': 'r2'}}");
    assert_false(cv_rtype_needs_replacement(t, a, b));
    assert_true(cv_rtype_needs_replacement(t, a, c));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void test_template_must_be_text_or_a_map(void **state)
{
    (void)state;
    char err[1024];
    tr_validate(tr_type(STACK), "{\"template\": [1]}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.template: expected the template's text (or "
                             "a map), got [1]");
    tr_validate(tr_type(STACK), "{}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.template: required property is missing");
    tr_validate(tr_type(STACK), "{\"template\": \"x\", \"context\": {\"region\": \"r\"}}", err,
                sizeof(err));
    assert_string_equal(err, "resources.r.properties.context: Unknown Property region");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_template_text_and_parameters_make_the_child),
        cmocka_unit_test(test_attributes_are_outputs_and_stack_name),
        cmocka_unit_test(test_only_a_new_region_replaces),
        cmocka_unit_test(test_template_must_be_text_or_a_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
