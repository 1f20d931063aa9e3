/*
 * Specification of OS::Heat::ResourceChain: its child template (one member
 * per listed type, named by index, each given resource_properties, each
 * depending on the one before unless concurrent), its attributes (refs,
 * attributes by member, resource.<n>, member attribute lists) and Heat's
 * update rule (resources in place, concurrent and resource_properties by
 * replacement).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_json_fixture.h"
#include "test_rtype_config.h"

#define CHAIN "OS::Heat::ResourceChain"

/* The child template for `props_sq`; its data in *data. */
static json_t *define(const char *props_sq, json_t *data)
{
    const cv_rtype_t *t = tr_type(CHAIN);
    json_t *raw = js(props_sq), *props = tr_props(t, raw), *tpl = NULL, *params = NULL;
    char err[512] = "";
    if (t->nested->definition(CHAIN, props, NULL, data, &tpl, &params, err, sizeof(err)) != 0)
        fail_msg("definition failed: %s", err);
    assert_json_sq(params, "{}");
    json_decref(params);
    json_decref(props);
    json_decref(raw);
    return tpl;
}

static void test_each_member_depends_on_the_one_before(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *tpl = define("{'resources': ['OS::Heat::Value', 'OS::Heat::None', 'OS::Heat::Value'],"
                         " 'resource_properties': {'value': 'v'}}",
                         data);
    assert_json_sq(
        json_object_get(tpl, "resources"),
        "{'0': {'type': 'OS::Heat::Value', 'properties': {'value': 'v'}},"
        " '1': {'type': 'OS::Heat::None', 'properties': {'value': 'v'}, 'depends_on': ['0']},"
        " '2': {'type': 'OS::Heat::Value', 'properties': {'value': 'v'}, 'depends_on': ['1']}}");
    assert_json_sq(json_object_get(data, "names"), "['0', '1', '2']");
    assert_json_sq(json_object_get(data, "attrs"), "['value']");
    assert_json_sq(
        json_object_get(json_object_get(tpl, "outputs"), "refs"),
        "{'value': [{'get_resource': '0'}, {'get_resource': '1'}, {'get_resource': '2'}]}");
    json_decref(tpl);
    json_decref(data);
}

static void test_concurrent_members_have_no_dependencies(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *tpl =
        define("{'resources': ['OS::Heat::None', 'OS::Heat::None'], 'concurrent': true}", data);
    assert_json_sq(json_object_get(tpl, "resources"),
                   "{'0': {'type': 'OS::Heat::None'}, '1': {'type': 'OS::Heat::None'}}");
    json_decref(tpl);
    json_decref(data);
}

static void test_attributes_are_refs_attributes_and_members(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_decref(define("{'resources': ['OS::Heat::Value', 'OS::Heat::Value']}", data));
    json_t *outputs = js("{'refs': ['id0', 'id1'], 'a.value': ['x', 'y']}");
    json_t *attrs = tr_type(CHAIN)->nested->attributes(outputs, data);
    assert_json_sq(json_object_get(attrs, "refs"), "['id0', 'id1']");
    assert_json_sq(json_object_get(attrs, "attributes"), "{'value': {'0': 'x', '1': 'y'}}");
    assert_json_sq(json_object_get(attrs, "value"), "['x', 'y']");
    assert_string_equal(json_string_value(json_object_get(attrs, "resource.1")), "id1");
    assert_string_equal(json_string_value(json_object_get(attrs, "resource.0.value")), "x");
    assert_null(json_object_get(attrs, "refs_map")); /* a group's, not a chain's */
    json_decref(attrs);
    json_decref(outputs);
    json_decref(data);
}

static void test_resources_update_in_place_the_rest_replaces(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type(CHAIN);
    json_t *a = js("{'resources': ['OS::Heat::None']}");
    json_t *b = js("{'resources': ['OS::Heat::None', 'OS::Heat::Value']}");
    json_t *c = js("{'resources': ['OS::Heat::None'], 'concurrent': true}");
    json_t *d = js("{'resources': ['OS::Heat::None'], 'resource_properties': {'value': 1}}");
    assert_false(cv_rtype_needs_replacement(t, a, b));
    assert_true(cv_rtype_needs_replacement(t, a, c));
    assert_true(cv_rtype_needs_replacement(t, a, d));
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(d);
}

static void test_resources_are_required_and_named_by_strings(void **state)
{
    (void)state;
    char err[1024];
    tr_validate(tr_type(CHAIN), "{}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.resources: required property is missing");
    tr_validate(tr_type(CHAIN), "{\"resources\": [1]}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.resources[0]: a resource type name (string) "
                             "is required");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_member_depends_on_the_one_before),
        cmocka_unit_test(test_concurrent_members_have_no_dependencies),
        cmocka_unit_test(test_attributes_are_refs_attributes_and_members),
        cmocka_unit_test(test_resources_update_in_place_the_rest_replaces),
        cmocka_unit_test(test_resources_are_required_and_named_by_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
