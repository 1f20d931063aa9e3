/*
 * cv_template_parse: the HOT sections, resource definitions, dependency
 * extraction and cycle detection, and the message each rule produces.
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

#define HOT "heat_template_version: 2018-08-31\n"

static char err[1024];

static int parse(const char *yaml, cv_template_t **out)
{
    err[0] = '\0';
    return cv_template_parse(yaml, strlen(yaml), "stack.yaml", NULL, out, err, sizeof(err));
}

static cv_template_t *accept(const char *yaml)
{
    cv_template_t *tpl = NULL;
    if (parse(yaml, &tpl) != 0)
        fail_msg("rejected: %s", err);
    return tpl;
}

/* Asserts the template is refused and the message holds every fragment. */
static void reject(const char *yaml, const char *f1, const char *f2)
{
    cv_template_t *tpl = NULL;
    int rc = parse(yaml, &tpl);
    if (rc == 0) {
        cv_template_free(tpl);
        fail_msg("accepted, expected an error containing \"%s\"", f1);
    }
    assert_null(tpl);
    assert_contains(err, "stack.yaml:");
    assert_contains(err, f1);
    if (f2)
        assert_contains(err, f2);
}

/* Asserts the template is refused with exactly `message` (Heat's words) after
 * "stack.yaml: ". */
static void reject_with(const char *yaml, const char *message)
{
    char want[1024];
    cv_template_t *tpl = NULL;
    int rc = parse(yaml, &tpl);
    if (rc == 0) {
        cv_template_free(tpl);
        fail_msg("accepted, expected the error \"%s\"", message);
    }
    assert_null(tpl);
    snprintf(want, sizeof(want), "stack.yaml: %s", message);
    assert_string_equal(err, want);
}

static void assert_depends(const cv_template_t *tpl, const char *name, const char *expected)
{
    const cv_tpl_resource_t *r = cv_template_resource(tpl, name);
    assert_non_null(r);
    char got[256] = "";
    for (size_t i = 0; i < r->ndepends; i++) {
        strcat(got, i ? "," : "");
        strcat(got, r->depends[i]);
    }
    assert_string_equal(got, expected);
}

/* ---------------------------------------------------------------- versions */

static void test_every_version_and_release_name_is_accepted_as_its_date(void **state)
{
    (void)state;
    const char *pairs[][2] = {
        {"2013-05-23", "2013-05-23"}, {"2014-10-16", "2014-10-16"}, {"2015-04-30", "2015-04-30"},
        {"2015-10-15", "2015-10-15"}, {"2016-04-08", "2016-04-08"}, {"2016-10-14", "2016-10-14"},
        {"2017-02-24", "2017-02-24"}, {"2017-09-01", "2017-09-01"}, {"2018-03-02", "2018-03-02"},
        {"2018-08-31", "2018-08-31"}, {"2021-04-16", "2021-04-16"}, {"newton", "2016-10-14"},
        {"ocata", "2017-02-24"},      {"pike", "2017-09-01"},       {"queens", "2018-03-02"},
        {"rocky", "2018-08-31"},      {"wallaby", "2021-04-16"},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        char doc[128];
        snprintf(doc, sizeof(doc), "heat_template_version: %s\nresources: {}\n", pairs[i][0]);
        cv_template_t *tpl = accept(doc);
        assert_string_equal(tpl->version, pairs[i][1]);
        cv_template_free(tpl);
    }
}

/* Heat's InvalidTemplateVersion from get_template_class: the version, then
 * the valid versions of its kind, sorted. */
#define VALID_HOT_VERSIONS                                                                         \
    "\"heat_template_version\" should be one of: 2013-05-23, 2014-10-16, 2015-04-30, "             \
    "2015-10-15, 2016-04-08, 2016-10-14, 2017-02-24, 2017-09-01, 2018-03-02, 2018-08-31, "         \
    "2021-04-16, newton, ocata, pike, queens, rocky, wallaby"

static void test_unknown_version_is_rejected_with_the_allowed_list(void **state)
{
    (void)state;
    reject_with("heat_template_version: 2012-12-12\n",
                "heat_template_version: The template version is invalid: "
                "\"heat_template_version: 2012-12-12\". " VALID_HOT_VERSIONS);
    reject_with("heat_template_version: 2018-08-31x\n",
                "heat_template_version: The template version is invalid: "
                "\"heat_template_version: 2018-08-31x\". " VALID_HOT_VERSIONS);
}

static void test_missing_version_is_rejected(void **state)
{
    (void)state;
    reject("resources: {}\n", "heat_template_version: missing", NULL);
}

/* ---------------------------------------------------------------- sections */

static void test_template_must_be_a_map(void **state)
{
    (void)state;
    reject("- a\n- b\n", "a template must be a map, got a list", NULL);
}

static void test_unknown_top_level_section_is_named(void **state)
{
    (void)state;
    reject(HOT "resources: {}\nmappings: {}\n", "unknown top-level section \"mappings\"", NULL);
}

static void test_syntax_error_is_reported_with_its_line(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    int rc = parse(HOT "resources:\n  a: [\n", &tpl);
    assert_int_equal(rc, CV_EPARSE);
    assert_contains(err, "stack.yaml:");
}

static void test_empty_or_absent_conditions_are_accepted(void **state)
{
    (void)state;
    cv_template_free(accept(HOT "conditions: {}\n"));
    cv_template_free(accept(HOT "conditions:\n"));
}

static void test_a_condition_naming_an_unknown_function_argument_is_rejected(void **state)
{
    (void)state;
    reject(HOT "conditions:\n  prod: {equals: [a, {get_resource: a}]}\n",
           "conditions.prod: The function \"get_resource\" is invalid in this context", NULL);
}

/* Heat's HOTemplate20161014 adds the conditions section; before it the
 * section is refused as Heat's InvalidTemplateSection. */
static void test_conditions_section_before_2016_10_14_is_an_invalid_section(void **state)
{
    (void)state;
    reject_with("heat_template_version: 2016-04-08\nconditions: {}\n",
                "conditions: The template section is invalid: conditions");
    cv_template_free(accept("heat_template_version: 2016-10-14\nconditions: {}\n"));
}

static void test_description_is_kept_and_defaults_to_empty(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "description: A stack.\n");
    assert_string_equal(tpl->description, "A stack.");
    cv_template_free(tpl);
    tpl = accept(HOT);
    assert_string_equal(tpl->description, "");
    cv_template_free(tpl);
}

static void test_stack_without_resources_is_valid(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n");
    assert_int_equal(tpl->nresources, 0);
    assert_int_equal(json_object_size(tpl->outputs), 0);
    cv_template_free(tpl);
}

static void test_from_json_accepts_a_loaded_tree(void **state)
{
    (void)state;
    json_t *root = json_loads("{\"heat_template_version\": \"2015-10-15\", \"resources\": "
                              "{\"a\": {\"type\": \"OS::Heat::None\"}}}",
                              0, NULL);
    cv_template_t *tpl = NULL;
    assert_int_equal(cv_template_from_json(root, "stack.json", NULL, &tpl, err, sizeof(err)), 0);
    assert_int_equal(tpl->nresources, 1);
    assert_string_equal(tpl->resources[0].type, "OS::Heat::None");
    cv_template_free(tpl);
    json_decref(root);
}

/* ---------------------------------------------------------------- resources */

static void test_resources_keep_template_order_and_are_found_by_name(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  zed: {type: OS::Heat::None}\n"
                                    "  alpha: {type: OS::Heat::None}\n"
                                    "  mid: {type: OS::Heat::None}\n");
    assert_int_equal(tpl->nresources, 3);
    assert_string_equal(tpl->resources[0].name, "zed");
    assert_string_equal(tpl->resources[1].name, "alpha");
    assert_string_equal(tpl->resources[2].name, "mid");
    assert_ptr_equal(cv_template_resource(tpl, "alpha"), &tpl->resources[1]);
    assert_null(cv_template_resource(tpl, "missing"));
    cv_template_free(tpl);
}

static void test_resource_without_type_is_rejected(void **state)
{
    (void)state;
    reject(HOT "resources:\n  web:\n    properties: {}\n", "resources.web:", "needs a \"type\"");
}

static void test_resource_definition_must_be_a_map(void **state)
{
    (void)state;
    reject(HOT "resources:\n  web: OS::Heat::None\n", "resources.web: must be a map", NULL);
}

static void test_unknown_resource_type_is_named(void **state)
{
    (void)state;
    reject(HOT "resources:\n  web:\n    type: Foo::Bar\n",
           "resources.web: The Resource Type (Foo::Bar) could not be found.", NULL);
}

static void test_template_file_not_uploaded_is_named(void **state)
{
    (void)state;
    reject(HOT "resources:\n  web:\n    type: server.yaml\n",
           "resources.web:", "template file \"server.yaml\" was not uploaded with the stack");
}

static void test_unknown_resource_key_is_named(void **state)
{
    (void)state;
    reject(HOT "resources:\n  web:\n    type: OS::Heat::None\n    propertys: {}\n",
           "resources.web: unknown key \"propertys\"", NULL);
}

static void test_resource_name_with_a_slash_is_rejected(void **state)
{
    (void)state;
    reject(HOT "resources:\n  a/b: {type: OS::Heat::None}\n", "resource name \"a/b\"", "'/'");
}

static void test_resource_name_longer_than_255_bytes_is_rejected(void **state)
{
    (void)state;
    char doc[512];
    char name[257];
    memset(name, 'n', 256);
    name[256] = '\0';
    snprintf(doc, sizeof(doc), HOT "resources:\n  %s: {type: OS::Heat::None}\n", name);
    reject(doc, "longer than 255 bytes", NULL);
    name[255] = '\0';
    snprintf(doc, sizeof(doc), HOT "resources:\n  %s: {type: OS::Heat::None}\n", name);
    cv_template_free(accept(doc));
}

static void test_empty_resource_name_is_rejected(void **state)
{
    (void)state;
    reject(HOT "resources:\n  '': {type: OS::Heat::None}\n", "may not be empty", NULL);
}

static void test_properties_must_be_a_map(void **state)
{
    (void)state;
    reject(HOT "resources:\n  web:\n    type: OS::Heat::None\n    properties: [a]\n",
           "resources.web.properties: must be a map, got a list", NULL);
}

static void test_unknown_property_is_reported_by_the_schema(void **state)
{
    (void)state;
    reject(HOT "resources:\n  pw:\n    type: OS::Heat::RandomString\n"
               "    properties: {lenght: 3}\n",
           "resources.pw.properties.lenght", "unknown");
}

static void test_missing_required_property_is_reported(void **state)
{
    (void)state;
    reject(HOT "resources:\n  v:\n    type: OS::Heat::Value\n    properties: {type: string}\n",
           "resources.v.properties.value", "required");
}

static void test_property_of_the_wrong_type_is_reported(void **state)
{
    (void)state;
    reject(HOT "resources:\n  pw:\n    type: OS::Heat::RandomString\n"
               "    properties: {length: abc}\n",
           "stack.yaml: resources.pw.properties.length", "\"abc\"");
}

static void test_properties_are_stored_as_written(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "parameters:\n  n: {type: number, default: 8}\n"
                                    "resources:\n  pw:\n    type: OS::Heat::RandomString\n"
                                    "    properties: {length: {get_param: n}}\n");
    json_t *expected = json_loads("{\"length\": {\"get_param\": \"n\"}}", 0, NULL);
    assert_true(json_equal(tpl->resources[0].properties, expected));
    json_decref(expected);
    cv_template_free(tpl);
}

static void test_defaults_are_not_added_to_stored_properties(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  pw: {type: OS::Heat::RandomString}\n");
    assert_int_equal(json_object_size(tpl->resources[0].properties), 0);
    assert_int_equal(json_object_size(tpl->resources[0].metadata), 0);
    cv_template_free(tpl);
}

static void test_deletion_policy_defaults_to_delete(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  a: {type: OS::Heat::None}\n");
    assert_string_equal(tpl->resources[0].deletion_policy, "Delete");
    cv_template_free(tpl);
}

static void test_deletion_policy_retain_and_snapshot_are_kept(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n"
                                    "  a: {type: OS::Heat::None, deletion_policy: Retain}\n"
                                    "  b: {type: OS::Heat::None, deletion_policy: snapshot}\n");
    assert_string_equal(tpl->resources[0].deletion_policy, "Retain");
    assert_string_equal(tpl->resources[1].deletion_policy, "Snapshot");
    cv_template_free(tpl);
}

static void test_lower_case_deletion_policy_needs_2016_10_14(void **state)
{
    (void)state;
    reject("heat_template_version: 2015-10-15\nresources:\n"
           "  a: {type: OS::Heat::None, deletion_policy: retain}\n",
           "resources.a.deletion_policy: invalid deletion policy \"retain\"", NULL);
}

static void test_invalid_deletion_policy_is_rejected(void **state)
{
    (void)state;
    reject(HOT "resources:\n  a: {type: OS::Heat::None, deletion_policy: Keep}\n",
           "resources.a.deletion_policy: invalid deletion policy \"Keep\"",
           "Delete, Retain or Snapshot");
}

static void test_deletion_policy_may_come_from_a_parameter(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "parameters:\n  p: {type: string, default: Retain}\n"
                                    "resources:\n  a:\n    type: OS::Heat::None\n"
                                    "    deletion_policy: {get_param: p}\n");
    assert_string_equal(tpl->resources[0].deletion_policy, "Retain");
    cv_template_free(tpl);
}

static void test_resource_condition_naming_no_condition_is_rejected(void **state)
{
    (void)state;
    reject(HOT "resources:\n  a: {type: OS::Heat::None, condition: prod}\n",
           "resources.a.condition: Invalid condition \"prod\"", NULL);
}

static void test_external_id_is_kept_for_adoption(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "parameters:\n  p: {type: string, default: x}\n"
                                    "resources:\n  a: {type: OS::Heat::None, external_id: abc}\n"
                                    "  b: {type: OS::Heat::None, external_id: {get_param: p}}\n"
                                    "  c: {type: OS::Heat::None}\n");
    assert_string_equal(json_string_value(tpl->resources[0].external_id), "abc");
    assert_non_null(json_object_get(tpl->resources[1].external_id, "get_param"));
    assert_null(tpl->resources[2].external_id);
    cv_template_free(tpl);
}

static void test_external_id_must_be_a_string(void **state)
{
    (void)state;
    reject(HOT "resources:\n  a: {type: OS::Heat::None, external_id: [abc]}\n",
           "resources.a.external_id: Resource a external_id type must be string", NULL);
}

static void test_external_resource_may_not_depend_on_others(void **state)
{
    (void)state;
    reject(HOT "resources:\n  a: {type: OS::Heat::None, external_id: abc, depends_on: [b]}\n"
               "  b: {type: OS::Heat::None}\n",
           "Invalid dependency with external OS::Heat::None resource: abc", NULL);
}

static void test_depends_on_a_missing_resource_is_named(void **state)
{
    (void)state;
    reject(HOT "resources:\n  a: {type: OS::Heat::None, depends_on: [ghost]}\n",
           "resources.a.depends_on:", "The specified reference \"ghost\" (in a) is incorrect.");
}

static void test_depends_on_itself_is_rejected(void **state)
{
    (void)state;
    reject(HOT "resources:\n  a: {type: OS::Heat::None, depends_on: a}\n",
           "resources.a.depends_on: resource \"a\" cannot depend on itself", NULL);
}

static void test_depends_on_must_hold_names(void **state)
{
    (void)state;
    reject(HOT "resources:\n  a: {type: OS::Heat::None, depends_on: [{x: 1}]}\n",
           "resources.a.depends_on: must be a resource name or a list of them", NULL);
}

/* ---------------------------------------------------------------- dependencies */

static void test_depends_on_string_is_a_dependency(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  a: {type: OS::Heat::None}\n"
                                    "  b: {type: OS::Heat::None, depends_on: a}\n");
    assert_depends(tpl, "a", "");
    assert_depends(tpl, "b", "a");
    cv_template_free(tpl);
}

static void test_depends_on_list_is_sorted_and_unique(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  c: {type: OS::Heat::None}\n"
                                    "  a: {type: OS::Heat::None}\n"
                                    "  b: {type: OS::Heat::None, depends_on: [c, a, c]}\n");
    assert_depends(tpl, "b", "a,c");
    cv_template_free(tpl);
}

static void test_get_resource_and_get_attr_are_dependencies(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  a: {type: OS::Heat::None}\n"
                                    "  v: {type: OS::Heat::Value, properties: {value: x}}\n"
                                    "  b:\n    type: OS::Heat::None\n    properties:\n"
                                    "      id: {get_resource: a}\n"
                                    "      out: {get_attr: [v, value]}\n");
    assert_depends(tpl, "b", "a,v");
    cv_template_free(tpl);
}

static void test_reference_nested_in_str_replace_is_a_dependency(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  a: {type: OS::Heat::None}\n"
                                    "  b:\n    type: OS::Heat::None\n    properties:\n"
                                    "      url:\n        str_replace:\n"
                                    "          template: http://host/id\n"
                                    "          params: {id: {get_attr: [a, show]}}\n");
    assert_depends(tpl, "b", "a");
    cv_template_free(tpl);
}

static void test_metadata_references_are_dependencies(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  a: {type: OS::Heat::None}\n"
                                    "  b:\n    type: OS::Heat::None\n"
                                    "    metadata: {peer: {get_resource: a}}\n");
    assert_depends(tpl, "b", "a");
    cv_template_free(tpl);
}

static void test_depends_on_and_references_are_merged(void **state)
{
    (void)state;
    cv_template_t *tpl =
        accept(HOT "resources:\n  a: {type: OS::Heat::None}\n"
                   "  z: {type: OS::Heat::None}\n"
                   "  b:\n    type: OS::Heat::None\n    depends_on: z\n"
                   "    properties: {x: {get_resource: a}, y: {get_resource: z}}\n");
    assert_depends(tpl, "b", "a,z");
    cv_template_free(tpl);
}

static void test_output_references_are_not_dependencies(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  a: {type: OS::Heat::None}\n"
                                    "  b: {type: OS::Heat::None}\n"
                                    "outputs:\n  o: {value: {get_resource: a}}\n");
    assert_depends(tpl, "a", "");
    assert_depends(tpl, "b", "");
    cv_template_free(tpl);
}

static void test_cycle_is_reported_with_what_is_left_of_the_graph(void **state)
{
    (void)state;
    reject(HOT "resources:\n  a: {type: OS::Heat::None, depends_on: b}\n"
               "  b: {type: OS::Heat::None, depends_on: a}\n"
               "  c: {type: OS::Heat::None}\n"
               "  d: {type: OS::Heat::None, depends_on: [a, c]}\n",
           "resources: Circular Dependency Found: {a: {b}, b: {a}, d: {a}}", NULL);
}

static void test_cycle_through_references_is_reported(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    int rc = parse(HOT "resources:\n"
                       "  a: {type: OS::Heat::None, properties: {x: {get_attr: [c, show]}}}\n"
                       "  b: {type: OS::Heat::None, properties: {x: {get_resource: a}}}\n"
                       "  c: {type: OS::Heat::None, depends_on: [b]}\n",
                   &tpl);
    assert_int_equal(rc, CV_ECYCLE);
    assert_contains(err, "Circular Dependency Found: {a: {c}, b: {a}, c: {b}}");
    assert_contains(err, "a");
    assert_contains(err, "b");
    assert_contains(err, "c");
}

/* ---------------------------------------------------------------- outputs */

static void test_outputs_keep_value_and_description(void **state)
{
    (void)state;
    cv_template_t *tpl = accept(HOT "resources:\n  a: {type: OS::Heat::None}\n"
                                    "outputs:\n  id:\n    description: The id.\n"
                                    "    value: {get_resource: a}\n  plain: {value: 42}\n");
    json_t *expected =
        json_loads("{\"id\": {\"value\": {\"get_resource\": \"a\"}, \"description\": "
                   "\"The id.\"}, \"plain\": {\"value\": 42, \"description\": \"\"}}",
                   0, NULL);
    assert_true(json_equal(tpl->outputs, expected));
    json_decref(expected);
    cv_template_free(tpl);
}

static void test_output_without_value_is_rejected(void **state)
{
    (void)state;
    reject(HOT "outputs:\n  o: {description: nothing}\n", "outputs.o: an output needs a \"value\"",
           NULL);
}

static void test_output_with_unknown_key_is_rejected(void **state)
{
    (void)state;
    reject(HOT "outputs:\n  o: {value: 1, label: x}\n", "outputs.o: unknown key \"label\"", NULL);
}

static void test_output_condition_naming_no_condition_is_rejected(void **state)
{
    (void)state;
    reject(HOT "outputs:\n  o: {value: 1, condition: prod}\n",
           "outputs.o.condition: Invalid condition \"prod\"", NULL);
}

static void test_output_referencing_a_missing_resource_is_rejected(void **state)
{
    (void)state;
    reject(HOT "outputs:\n  o: {value: {get_attr: [ghost, show]}}\n",
           "outputs.o.value: The specified reference \"ghost\" (in unknown) is incorrect.", NULL);
}

/* ---------------------------------------------------------------- parameter groups */

static void test_parameter_group_naming_an_undeclared_parameter_is_rejected(void **state)
{
    (void)state;
    reject(HOT "parameter_groups:\n  - label: g\n    parameters: [nope]\n",
           "parameter_groups[0]: parameter nope is not defined", NULL);
}

static void test_parameter_in_two_groups_is_rejected(void **state)
{
    (void)state;
    reject(HOT "parameters:\n  p: {type: string, default: x}\n"
               "parameter_groups:\n  - parameters: [p]\n  - parameters: [p]\n",
           "parameter_groups[1]: parameter p is in more than one parameter group", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_version_and_release_name_is_accepted_as_its_date),
        cmocka_unit_test(test_unknown_version_is_rejected_with_the_allowed_list),
        cmocka_unit_test(test_missing_version_is_rejected),
        cmocka_unit_test(test_template_must_be_a_map),
        cmocka_unit_test(test_unknown_top_level_section_is_named),
        cmocka_unit_test(test_syntax_error_is_reported_with_its_line),
        cmocka_unit_test(test_empty_or_absent_conditions_are_accepted),
        cmocka_unit_test(test_a_condition_naming_an_unknown_function_argument_is_rejected),
        cmocka_unit_test(test_conditions_section_before_2016_10_14_is_an_invalid_section),
        cmocka_unit_test(test_description_is_kept_and_defaults_to_empty),
        cmocka_unit_test(test_stack_without_resources_is_valid),
        cmocka_unit_test(test_from_json_accepts_a_loaded_tree),
        cmocka_unit_test(test_resources_keep_template_order_and_are_found_by_name),
        cmocka_unit_test(test_resource_without_type_is_rejected),
        cmocka_unit_test(test_resource_definition_must_be_a_map),
        cmocka_unit_test(test_unknown_resource_type_is_named),
        cmocka_unit_test(test_template_file_not_uploaded_is_named),
        cmocka_unit_test(test_unknown_resource_key_is_named),
        cmocka_unit_test(test_resource_name_with_a_slash_is_rejected),
        cmocka_unit_test(test_resource_name_longer_than_255_bytes_is_rejected),
        cmocka_unit_test(test_empty_resource_name_is_rejected),
        cmocka_unit_test(test_properties_must_be_a_map),
        cmocka_unit_test(test_unknown_property_is_reported_by_the_schema),
        cmocka_unit_test(test_missing_required_property_is_reported),
        cmocka_unit_test(test_property_of_the_wrong_type_is_reported),
        cmocka_unit_test(test_properties_are_stored_as_written),
        cmocka_unit_test(test_defaults_are_not_added_to_stored_properties),
        cmocka_unit_test(test_deletion_policy_defaults_to_delete),
        cmocka_unit_test(test_deletion_policy_retain_and_snapshot_are_kept),
        cmocka_unit_test(test_lower_case_deletion_policy_needs_2016_10_14),
        cmocka_unit_test(test_invalid_deletion_policy_is_rejected),
        cmocka_unit_test(test_deletion_policy_may_come_from_a_parameter),
        cmocka_unit_test(test_resource_condition_naming_no_condition_is_rejected),
        cmocka_unit_test(test_external_id_is_kept_for_adoption),
        cmocka_unit_test(test_external_id_must_be_a_string),
        cmocka_unit_test(test_external_resource_may_not_depend_on_others),
        cmocka_unit_test(test_depends_on_a_missing_resource_is_named),
        cmocka_unit_test(test_depends_on_itself_is_rejected),
        cmocka_unit_test(test_depends_on_must_hold_names),
        cmocka_unit_test(test_depends_on_string_is_a_dependency),
        cmocka_unit_test(test_depends_on_list_is_sorted_and_unique),
        cmocka_unit_test(test_get_resource_and_get_attr_are_dependencies),
        cmocka_unit_test(test_reference_nested_in_str_replace_is_a_dependency),
        cmocka_unit_test(test_metadata_references_are_dependencies),
        cmocka_unit_test(test_depends_on_and_references_are_merged),
        cmocka_unit_test(test_output_references_are_not_dependencies),
        cmocka_unit_test(test_cycle_is_reported_with_what_is_left_of_the_graph),
        cmocka_unit_test(test_cycle_through_references_is_reported),
        cmocka_unit_test(test_outputs_keep_value_and_description),
        cmocka_unit_test(test_output_without_value_is_rejected),
        cmocka_unit_test(test_output_with_unknown_key_is_rejected),
        cmocka_unit_test(test_output_condition_naming_no_condition_is_rejected),
        cmocka_unit_test(test_output_referencing_a_missing_resource_is_rejected),
        cmocka_unit_test(test_parameter_group_naming_an_undeclared_parameter_is_rejected),
        cmocka_unit_test(test_parameter_in_two_groups_is_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
