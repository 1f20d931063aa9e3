/*
 * Validation of groups with their parameters, every problem in one
 * message, inverted ranges and the names of limits:
 * - a ResourceGroup's member definition is checked with the values the
 *   parameters give its properties, and not at all when its count is 0
 *   (Heat's ResourceGroup.validate_nested_stack);
 * - an AutoScalingGroup whose desired_capacity from a parameter is outside
 *   min_size..max_size is refused with Heat's words;
 * - every independent problem is reported, one a line, each naming where;
 * - a range constraint whose min is above its max is named as inverted;
 * - a limit is named by the setting that changes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_template.h"
#include "test_util.h"

#define HOT "heat_template_version: 2018-08-31\n"

static char err[4096];

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
    if (rc == 0)
        fail_msg("expected a refusal containing \"%s\", got none", want);
    assert_contains(err, want);
}

static void assert_valid(const char *yaml, const char *params_json)
{
    cv_template_t *tpl = NULL;
    if (parse(yaml, params_json, &tpl) != 0)
        fail_msg("refused: %s", err);
    cv_template_free(tpl);
}

/* ------------------------------------------------------------ ResourceGroup */

/* A group of RandomString members whose length is not a number. */
#define GROUP_OF_BAD_MEMBERS                                                                       \
    HOT "parameters:\n"                                                                            \
        "  n: {type: number, default: 0}\n"                                                        \
        "resources:\n"                                                                             \
        "  g:\n"                                                                                   \
        "    type: OS::Heat::ResourceGroup\n"                                                      \
        "    properties:\n"                                                                        \
        "      count: {get_param: n}\n"                                                            \
        "      resource_def:\n"                                                                    \
        "        type: OS::Heat::RandomString\n"                                                   \
        "        properties: {length: many}\n"

static void test_a_group_of_zero_members_does_not_validate_their_definition(void **state)
{
    (void)state;
    assert_valid(GROUP_OF_BAD_MEMBERS, NULL);
    assert_valid(HOT "resources:\n  g:\n    type: OS::Heat::ResourceGroup\n"
                     "    properties:\n      count: 0\n"
                     "      resource_def: {type: OS::No::Such}\n",
                 NULL);
}

static void test_a_group_of_one_member_validates_its_definition(void **state)
{
    (void)state;
    assert_refused(GROUP_OF_BAD_MEMBERS, "{\"n\": 1}",
                   "resources.g.properties.resource_def.properties.length: expected integer");
}

static void test_member_properties_from_parameters_are_validated(void **state)
{
    (void)state;
    const char *yaml = HOT "parameters:\n"
                           "  len: {type: string}\n"
                           "resources:\n"
                           "  g:\n"
                           "    type: OS::Heat::ResourceGroup\n"
                           "    properties:\n"
                           "      count: 2\n"
                           "      resource_def:\n"
                           "        type: OS::Heat::RandomString\n"
                           "        properties: {length: {get_param: len}}\n";
    assert_refused(yaml, "{\"len\": \"many\"}",
                   "resources.g.properties.resource_def.properties.length: expected integer");
    assert_valid(yaml, "{\"len\": \"8\"}");
}

static void test_a_chain_of_an_unknown_type_is_refused(void **state)
{
    (void)state;
    const char *yaml = HOT "parameters:\n"
                           "  t: {type: string, default: OS::Heat::None}\n"
                           "resources:\n"
                           "  c:\n"
                           "    type: OS::Heat::ResourceChain\n"
                           "    properties:\n"
                           "      resources: [OS::Heat::None, {get_param: t}]\n";
    assert_valid(yaml, NULL);
    assert_refused(yaml, "{\"t\": \"OS::Heat::Nope\"}",
                   "app.yaml: resources.c.properties.resources[1]: The Resource Type "
                   "(OS::Heat::Nope) could not be found.");
}

/* ------------------------------------------------------------ AutoScalingGroup */

#define ASG                                                                                        \
    HOT "parameters:\n"                                                                            \
        "  desired: {type: number, default: 2}\n"                                                  \
        "  min: {type: number, default: 1}\n"                                                      \
        "  max: {type: number, default: 4}\n"                                                      \
        "resources:\n"                                                                             \
        "  asg:\n"                                                                                 \
        "    type: OS::Heat::AutoScalingGroup\n"                                                   \
        "    properties:\n"                                                                        \
        "      desired_capacity: {get_param: desired}\n"                                           \
        "      min_size: {get_param: min}\n"                                                       \
        "      max_size: {get_param: max}\n"                                                       \
        "      resource: {type: OS::Heat::None}\n"

static void test_desired_capacity_from_a_parameter_outside_the_bounds_is_refused(void **state)
{
    (void)state;
    assert_valid(ASG, NULL);
    assert_refused(ASG, "{\"desired\": 9}",
                   "app.yaml: resources.asg.properties: DesiredCapacity must be between MinSize "
                   "and MaxSize");
    assert_refused(ASG, "{\"min\": 5}",
                   "resources.asg.properties: MinSize can not be greater "
                   "than MaxSize");
}

/* ------------------------------------------------------------ every problem */

static void test_every_resource_and_output_problem_is_reported_each_naming_where(void **state)
{
    (void)state;
    assert_refused(HOT "resources:\n"
                       "  a: {type: OS::No::Such}\n"
                       "  b: {type: OS::Heat::RandomString, properties: {length: many}}\n"
                       "  c: {type: OS::Heat::None}\n"
                       "  d: {type: OS::Heat::TestResource, properties: {value: {get_param: x}}}\n"
                       "outputs:\n"
                       "  o: {value: {get_resource: ghost}}\n",
                   NULL,
                   "app.yaml: resources.a: The Resource Type (OS::No::Such) could not be found.\n"
                   "app.yaml: resources.b.properties.length: expected integer, got \"many\"\n"
                   "app.yaml: resources.d.properties.value: The Parameter (x) was not provided.\n"
                   "app.yaml: outputs.o.value: The specified reference \"ghost\" (in unknown) is "
                   "incorrect.");
}

static void test_every_parameter_problem_is_reported(void **state)
{
    (void)state;
    assert_refused(HOT "parameters:\n"
                       "  a: {type: number}\n"
                       "  b: {type: number}\n"
                       "resources: {}\n",
                   "{\"a\": \"x\", \"b\": \"y\"}", "app.yaml: parameters.a: ");
    assert_contains(err, "\napp.yaml: parameters.b: ");
}

static void test_one_problem_reads_as_it_did_alone(void **state)
{
    (void)state;
    assert_refused(HOT "resources:\n  a: {type: OS::No::Such}\n", NULL,
                   "app.yaml: resources.a: The Resource Type (OS::No::Such) could not be found.");
    assert_null(strchr(err, '\n'));
}

static void test_messages_of_several_lines_are_kept_whole(void **state)
{
    (void)state;
    /* Heat's usage examples hold line breaks of their own. */
    assert_refused(HOT "resources:\n"
                       "  a: {type: OS::Heat::Value, properties: {value: {str_replace: {template: "
                       "x}}}}\n"
                       "  b: {type: OS::Heat::Value, properties: {value: {repeat: {template: "
                       "x}}}}\n",
                   NULL,
                   "app.yaml: resources.a.properties.value: \"str_replace\" syntax should be "
                   "str_replace:\n              template: This is var1 template var2\n");
    assert_contains(err, "                var2: string\napp.yaml: resources.b.properties.value: "
                         "\"repeat\" syntax should be repeat:\n");
    assert_null(strstr(err, "more errors"));
}

static void test_problems_past_the_message_size_are_counted(void **state)
{
    (void)state;
    char yaml[8192] = HOT "resources:\n";
    for (int i = 0; i < 100; i++)
        snprintf(yaml + strlen(yaml), sizeof(yaml) - strlen(yaml),
                 "  r%02d: {type: OS::No::Such%02d}\n", i, i);
    cv_template_t *tpl = NULL;
    json_t *root = cv_yaml_load(yaml, strlen(yaml), "app.yaml", err, sizeof(err));
    char small[512];
    assert_int_equal(cv_template_from_json(root, "app.yaml", NULL, &tpl, small, sizeof(small)),
                     CV_EVALIDATE);
    json_decref(root);
    assert_contains(small, "app.yaml: resources.r00: ");
    assert_contains(small, " more errors)");
    assert_true(strlen(small) < sizeof(small));
}

/* ------------------------------------------------------------ constraints, limits */

static void test_an_inverted_range_is_named_as_such(void **state)
{
    (void)state;
    assert_refused(HOT "parameters:\n"
                       "  size:\n"
                       "    type: number\n"
                       "    default: 5\n"
                       "    constraints: [{range: {min: 10, max: 1}}]\n"
                       "resources: {}\n",
                   NULL,
                   "app.yaml: parameters.size.constraints[0]: range: inverted range: min 10 is "
                   "greater than max 1, so no value can satisfy it");
}

static void test_a_limit_is_named_by_the_setting_that_changes_it(void **state)
{
    (void)state;
    const char *yaml = HOT "resources:\n  big:\n    type: OS::Heat::ResourceGroup\n"
                           "    properties:\n      count: 1000000\n"
                           "      resource_def: {type: OS::Heat::None}\n";
    json_t *root = cv_yaml_load(yaml, strlen(yaml), "app.yaml", err, sizeof(err));
    cv_limits_t l;
    cv_limits_init(&l);
    cv_tpl_opts_t opts = {.max_depth = (int)l.nesting_depth};
    cv_template_t *tpl = NULL;
    assert_int_equal(
        cv_template_from_json_opts(root, "app.yaml", NULL, &opts, &tpl, err, sizeof(err)), 0);
    cv_tpl_count_t count;
    assert_int_equal(cv_template_count(tpl, root, "app.yaml", &opts, &l, &count, err, sizeof(err)),
                     CV_ETOOBIG);
    cv_template_free(tpl);
    json_decref(root);
    assert_contains(err, "exceeds the limit of 100000 (CONVERGE_MAX_RESOURCES, or the workers' "
                         "--max-resources)");
    assert_null(strstr(err, "(--max-resources"));
}

static void test_the_nesting_limit_is_named_by_its_setting(void **state)
{
    (void)state;
    const char *yaml = HOT "resources:\n  s:\n    type: OS::Heat::Stack\n"
                           "    properties:\n      template: {heat_template_version: "
                           "2018-08-31, resources: {n: {type: OS::Heat::None}}}\n"
                           "  g:\n    type: OS::Heat::ResourceGroup\n"
                           "    properties: {count: 1, resource_def: {type: OS::Heat::None}}\n";
    json_t *root = cv_yaml_load(yaml, strlen(yaml), "app.yaml", err, sizeof(err));
    cv_tpl_opts_t opts = {.max_depth = 1, .depth = 1};
    cv_template_t *tpl = NULL;
    int rc = cv_template_from_json_opts(root, "app.yaml", NULL, &opts, &tpl, err, sizeof(err));
    cv_template_free(tpl);
    json_decref(root);
    assert_int_not_equal(rc, 0);
    assert_contains(err, "deeper than 1 levels (the limit), set by CONVERGE_MAX_NESTING_DEPTH, "
                         "or the workers' --max-nesting-depth");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_group_of_zero_members_does_not_validate_their_definition),
        cmocka_unit_test(test_a_group_of_one_member_validates_its_definition),
        cmocka_unit_test(test_member_properties_from_parameters_are_validated),
        cmocka_unit_test(test_a_chain_of_an_unknown_type_is_refused),
        cmocka_unit_test(test_desired_capacity_from_a_parameter_outside_the_bounds_is_refused),
        cmocka_unit_test(test_every_resource_and_output_problem_is_reported_each_naming_where),
        cmocka_unit_test(test_every_parameter_problem_is_reported),
        cmocka_unit_test(test_one_problem_reads_as_it_did_alone),
        cmocka_unit_test(test_messages_of_several_lines_are_kept_whole),
        cmocka_unit_test(test_problems_past_the_message_size_are_counted),
        cmocka_unit_test(test_an_inverted_range_is_named_as_such),
        cmocka_unit_test(test_a_limit_is_named_by_the_setting_that_changes_it),
        cmocka_unit_test(test_the_nesting_limit_is_named_by_its_setting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
