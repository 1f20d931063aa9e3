/*
 * Specification of OS::Heat::CloudConfig and OS::Heat::SoftwareConfig: the
 * config attribute, byte for byte as Heat stores it — "#cloud-config\n" and
 * the map written by yaml.dump (PyYAML with libyaml, Heat's CSafeDumper);
 * the expected texts in tests/data/config_types were written by PyYAML —
 * and Heat's replacement rule and validation messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_rtype_config.h"

#include <stdlib.h>

static json_t *read_cases(const char *name)
{
    size_t n;
    char *text = tu_read_data("config_types", name, &n);
    json_t *cases = json_loadb(text, n, 0, NULL);
    free(text);
    if (!json_is_array(cases))
        fail_msg("%s is not a JSON list", name);
    return cases;
}

static void test_config_is_cloud_config_header_and_pyyaml_text(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type("OS::Heat::CloudConfig");
    json_t *cases = read_cases("cloud_config_cases.json");
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        json_t *props = json_object();
        json_t *map = json_object_get(c, "cloud_config");
        if (map)
            json_object_set(props, "cloud_config", map);
        json_t *got = tr_create_attr(t, props, "config");
        const char *want = json_string_value(json_object_get(c, "config"));
        if (!json_is_string(got) || strcmp(json_string_value(got), want) != 0)
            fail_msg("case %zu:\n--- want\n%s--- got\n%s", i, want,
                     json_is_string(got) ? json_string_value(got) : "(not a string)");
        json_decref(got);
        json_decref(props);
    }
    json_decref(cases);
}

static void test_every_config_property_change_replaces(void **state)
{
    (void)state;
    const char *types[] = {"OS::Heat::CloudConfig", "OS::Heat::SoftwareConfig",
                           "OS::Heat::MultipartMime"};
    const char *changes[][2] = {
        {"{\"cloud_config\": {\"a\": 1}}", "{\"cloud_config\": {\"a\": 2}}"},
        {"{\"config\": \"x\"}", "{\"config\": \"y\"}"},
        {"{\"parts\": []}", "{\"parts\": [{\"config\": \"x\"}]}"}};
    for (size_t i = 0; i < 3; i++) {
        const cv_rtype_t *t = tr_type(types[i]);
        json_t *ra = tu_json(changes[i][0]), *rb = tu_json(changes[i][1]);
        json_t *a = tr_props(t, ra), *b = tr_props(t, rb);
        assert_true(cv_rtype_needs_replacement(t, a, b));
        assert_false(cv_rtype_needs_replacement(t, a, a));
        json_decref(a);
        json_decref(b);
        json_decref(ra);
        json_decref(rb);
    }
}

static void test_software_config_attribute_is_its_config(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type("OS::Heat::SoftwareConfig");
    json_t *props = tu_json("{\"config\": \"#!/bin/sh\\necho hi\\n\", \"group\": \"script\"}");
    json_t *got = tr_create_attr(t, props, "config");
    assert_string_equal(json_string_value(got), "#!/bin/sh\necho hi\n");
    json_decref(got);
    json_decref(props);
    props = json_object(); /* no config: Heat shows null */
    got = tr_create_attr(t, props, "config");
    assert_true(json_is_null(got));
    json_decref(got);
    json_decref(props);
    assert_true(cv_rtype_has_attr(t, "config"));
    assert_false(cv_rtype_has_attr(t, "group"));
}

static void test_software_config_group_defaults_to_ungrouped(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type("OS::Heat::SoftwareConfig");
    json_t *raw = json_object(), *props = tr_props(t, raw);
    assert_string_equal(json_string_value(json_object_get(props, "group")), "Heat::Ungrouped");
    json_decref(props);
    json_decref(raw);
}

static void test_software_config_inputs_and_outputs_are_checked_as_heat(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type("OS::Heat::SoftwareConfig");
    char err[1024];
    tr_validate(t,
                "{\"inputs\": [{\"name\": \"a\", \"type\": \"Number\", \"default\": 1}], "
                "\"outputs\": [{\"name\": \"b\", \"error_output\": true}]}",
                err, sizeof(err));
    assert_string_equal(err, "");
    tr_validate(t, "{\"inputs\": [{\"nam\": \"a\"}]}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.inputs[0]: Unknown Property nam");
    tr_validate(t, "{\"outputs\": [{\"description\": \"d\"}]}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.outputs[0]: Property name not assigned");
    tr_validate(t, "{\"inputs\": [{\"name\": \"a\", \"type\": \"Integer\"}]}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.inputs[0].type: \"Integer\" is not an "
                             "allowed value [\"String\", \"Number\", \"CommaDelimitedList\", "
                             "\"Json\", \"Boolean\"]");
    tr_validate(t, "{\"outputs\": [{\"name\": \"b\", \"replace_on_change\": true}]}", err,
                sizeof(err));
    assert_string_equal(err, "resources.r.properties.outputs[0]: Unknown Property "
                             "replace_on_change");
}

/* Converge has no config store: get_resource of a config is its text, so
 * that Heat's `config: {get_resource: cfg}` gives a consumer the config. */
static void test_reference_id_of_a_config_is_its_text(void **state)
{
    (void)state;
    json_t *attrs = json_pack("{s:s}", "config", "#cloud-config\n{}\n");
    const char *types[] = {"OS::Heat::CloudConfig", "OS::Heat::SoftwareConfig",
                           "OS::Heat::MultipartMime"};
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(cv_rtype_reference_id(types[i], "c", "stk-c-0123", attrs),
                            "#cloud-config\n{}\n");
    json_t *none = json_pack("{s:n}", "config"); /* a SoftwareConfig without config */
    assert_string_equal(cv_rtype_reference_id("OS::Heat::SoftwareConfig", "c", "stk-c-0123", none),
                        "stk-c-0123");
    json_decref(none);
    json_decref(attrs);
}

static void test_cloud_config_must_be_a_map(void **state)
{
    (void)state;
    char err[1024];
    tr_validate(tr_type("OS::Heat::CloudConfig"), "{\"cloud_config\": [1]}", err, sizeof(err));
    assert_contains(err, "resources.r.properties.cloud_config: expected map");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_is_cloud_config_header_and_pyyaml_text),
        cmocka_unit_test(test_every_config_property_change_replaces),
        cmocka_unit_test(test_software_config_attribute_is_its_config),
        cmocka_unit_test(test_software_config_group_defaults_to_ungrouped),
        cmocka_unit_test(test_software_config_inputs_and_outputs_are_checked_as_heat),
        cmocka_unit_test(test_reference_id_of_a_config_is_its_text),
        cmocka_unit_test(test_cloud_config_must_be_a_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
