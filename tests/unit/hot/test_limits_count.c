/* What a stack expands into, counted before anything is expanded
 * (cv_template_count): every expansion counted, the limits named when
 * passed, recursion refused as a cycle with its path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_template.h"

#define HOT "heat_template_version: 2018-08-31\n"

static char err[4096];
static cv_tpl_count_t count;

static json_t *load(const char *name, const char *yaml)
{
    char lerr[512];
    json_t *doc = cv_yaml_load(yaml, strlen(yaml), name, lerr, sizeof(lerr));
    if (!doc)
        fail_msg("%s", lerr);
    return doc;
}

/* files_of("a.yaml", "<yaml>", "b.yaml", "<yaml>", ..., NULL) */
static json_t *files_of(const char *name, ...)
{
    json_t *files = json_object();
    va_list ap;
    va_start(ap, name);
    for (const char *n = name; n; n = va_arg(ap, const char *))
        json_object_set_new(files, n, load(n, va_arg(ap, const char *)));
    va_end(ap);
    return files;
}

/* Parses `yaml` (as "app.yaml", with `files` and the parameter values
 * `params`, both may be NULL) and counts it against `limits`. */
static int count_with(const char *yaml, json_t *files, const json_t *params,
                      const cv_limits_t *limits)
{
    json_t *root = load("app.yaml", yaml);
    cv_tpl_opts_t opts = {.files = files, .max_depth = (int)limits->nesting_depth};
    cv_template_t *tpl = NULL;
    err[0] = '\0';
    memset(&count, 0, sizeof(count));
    int rc = cv_template_from_json_opts(root, "app.yaml", params, &opts, &tpl, err, sizeof(err));
    if (rc == 0)
        rc = cv_template_count(tpl, root, "app.yaml", &opts, limits, &count, err, sizeof(err));
    cv_template_free(tpl);
    json_decref(root);
    json_decref(files);
    return rc;
}

static int count_of(const char *yaml, json_t *files)
{
    cv_limits_t l;
    cv_limits_init(&l);
    return count_with(yaml, files, NULL, &l);
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

static void test_a_group_of_a_billion_is_refused_at_once_naming_the_limit(void **state)
{
    (void)state;
    clock_t t0 = clock();
    int rc = count_of(HOT "resources:\n  big:\n    type: OS::Heat::ResourceGroup\n"
                          "    properties:\n      count: 1000000000\n"
                          "      resource_def: {type: OS::Heat::None}\n",
                      NULL);
    assert_int_equal(rc, CV_ETOOBIG);
    assert_contains(err,
                    "app.yaml: resources.big: number of resources 1000000001 exceeds the "
                    "limit of 100000 (CONVERGE_MAX_RESOURCES, or the workers' --max-resources)");
    /* Counted, never built: well under a second. */
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 0.5);
}

static void test_a_group_counts_its_members_from_a_parameter(void **state)
{
    (void)state;
    const char *yaml = HOT "parameters:\n  n: {type: number, default: 3}\n"
                           "resources:\n  g:\n    type: OS::Heat::ResourceGroup\n"
                           "    properties:\n      count: {get_param: n}\n"
                           "      resource_def: {type: OS::Heat::None}\n"
                           "  other: {type: OS::Heat::None}\n";
    assert_int_equal(count_of(yaml, NULL), 0);
    assert_int_equal(count.resources, 5); /* g, its 3 members, other */
    assert_int_equal(count.total, 5);
    json_t *params = json_pack("{s:s}", "n", "100000");
    cv_limits_t l;
    cv_limits_init(&l);
    assert_int_equal(count_with(yaml, NULL, params, &l), CV_ETOOBIG);
    json_decref(params);
    assert_contains(err, "resources.g: number of resources 100002 exceeds the limit of 100000");
}

static void test_an_autoscaling_group_counts_its_max_size(void **state)
{
    (void)state;
    assert_int_equal(count_of(HOT "resources:\n  asg:\n    type: OS::Heat::AutoScalingGroup\n"
                                  "    properties:\n      min_size: 1\n      max_size: 40\n"
                                  "      resource: {type: OS::Heat::None}\n",
                              NULL),
                     0);
    assert_int_equal(count.resources, 41);
}

static void test_a_chain_counts_its_list_and_a_repeat_without_building_it(void **state)
{
    (void)state;
    assert_int_equal(count_of(HOT "resources:\n  c:\n    type: OS::Heat::ResourceChain\n"
                                  "    properties:\n"
                                  "      resources: [OS::Heat::None, OS::Heat::None]\n",
                              NULL),
                     0);
    assert_int_equal(count.resources, 3);
    /* 1000 x 1000 permutations: 10^6 members, refused without a list of them. */
    char yaml[20000];
    int n = snprintf(yaml, sizeof(yaml), "%s",
                     HOT "parameters:\n  xs:\n    type: comma_delimited_list\n    default: \"");
    for (int i = 0; i < 1000; i++)
        n += snprintf(yaml + n, sizeof(yaml) - (size_t)n, "%s%d", i ? "," : "", i);
    snprintf(yaml + n, sizeof(yaml) - (size_t)n,
             "\"\nresources:\n  c:\n    type: OS::Heat::ResourceChain\n    properties:\n"
             "      resources:\n        repeat:\n"
             "          for_each: {'%%x%%': {get_param: xs}, '%%y%%': {get_param: xs}}\n"
             "          template: OS::Heat::None\n");
    assert_int_equal(count_of(yaml, NULL), CV_ETOOBIG);
    assert_contains(err, "resources.c: number of resources 1000001 exceeds the limit of 100000");
}

static void test_nested_stacks_count_into_the_traversal_not_the_stack(void **state)
{
    (void)state;
    json_t *files = files_of("member.yaml",
                             HOT "resources:\n  a: {type: OS::Heat::None}\n"
                                 "  b: {type: OS::Heat::None}\n  c: {type: OS::Heat::None}\n",
                             NULL);
    assert_int_equal(count_of(HOT "resources:\n  g:\n    type: OS::Heat::ResourceGroup\n"
                                  "    properties:\n      count: 10\n"
                                  "      resource_def: {type: member.yaml}\n"
                                  "  one: {type: member.yaml}\n",
                              files),
                     0);
    assert_int_equal(count.resources, 12);      /* g, its 10 members, one */
    assert_int_equal(count.total, 12 + 11 * 3); /* and the 11 member stacks' resources */
}

static void test_the_traversal_limit_counts_every_nested_stack(void **state)
{
    (void)state;
    json_t *files = files_of("member.yaml",
                             HOT "resources:\n  g:\n    type: OS::Heat::ResourceGroup\n"
                                 "    properties:\n      count: 1000\n"
                                 "      resource_def: {type: OS::Heat::None}\n",
                             NULL);
    cv_limits_t l;
    cv_limits_init(&l);
    const char *yaml = HOT "resources:\n  group:\n    type: OS::Heat::ResourceGroup\n"
                           "    properties:\n      count: 1000\n"
                           "      resource_def: {type: member.yaml}\n";
    /* The benchmark's 1,000 x 1,000 is within the defaults... */
    assert_int_equal(count_with(yaml, json_incref(files), NULL, &l), 0);
    assert_int_equal(count.total, 1 + 1000 + 1000 * 1001);
    /* ...and refused by a lower traversal limit, named. */
    l.traversal_resources = 500000;
    assert_int_equal(count_with(yaml, files, NULL, &l), CV_ETOOBIG);
    assert_contains(err, "app.yaml: resources.group: number of resources in one traversal");
    assert_contains(err, "exceeds the limit of 500000 (CONVERGE_MAX_TRAVERSAL_RESOURCES, or the "
                         "workers' --max-traversal-resources)");
}

static void test_a_stack_that_includes_itself_is_refused_naming_the_cycle(void **state)
{
    (void)state;
    const char *self = HOT "resources:\n  s:\n    type: OS::Heat::Stack\n"
                           "    properties:\n      template: {get_file: app.yaml}\n";
    json_t *files = json_pack("{s:s}", "app.yaml", self);
    assert_int_equal(count_of(self, files), CV_ECYCLE);
    assert_contains(err, "app.yaml: resources.s: recursion: template app.yaml includes itself "
                         "(app.yaml -> s (OS::Heat::Stack in app.yaml))");
}

static void test_a_cycle_through_a_stack_and_a_template_resource_is_named(void **state)
{
    (void)state;
    /* app.yaml -> OS::Heat::Stack with inner.yaml's text -> inner.yaml -> inner.yaml */
    const char *inner = HOT "resources:\n  again: {type: inner.yaml}\n";
    json_t *files =
        json_pack("{s:s, s:o}", "inner.text", inner, "inner.yaml", load("inner.yaml", inner));
    assert_int_equal(count_of(HOT "resources:\n  s:\n    type: OS::Heat::Stack\n"
                                  "    properties:\n      template: {get_file: inner.text}\n",
                              files),
                     CV_ECYCLE);
    assert_contains(err, "includes itself");
    assert_contains(err, "-> inner.yaml");
}

static void test_a_stack_nested_past_the_depth_limit_is_refused(void **state)
{
    (void)state;
    /* Distinct inline templates, each holding the next: no cycle, only depth. */
    char tpl[4096] = HOT "resources:\n  leaf: {type: OS::Heat::None}\n";
    for (int i = 0; i < 6; i++) {
        json_t *inner = json_string(tpl);
        char *quoted = json_dumps(inner, JSON_ENCODE_ANY);
        snprintf(tpl, sizeof(tpl),
                 HOT "resources:\n  s%d:\n    type: OS::Heat::Stack\n"
                     "    properties:\n      template: %s\n",
                 i, quoted);
        free(quoted);
        json_decref(inner);
    }
    assert_int_equal(count_of(tpl, NULL), CV_ETOOBIG);
    assert_contains(err,
                    "nesting depth 6 levels exceeds the limit of 5 (CONVERGE_MAX_NESTING_DEPTH, "
                    "or the workers' --max-nesting-depth)");
}

static void test_a_count_only_an_attribute_tells_counts_zero_until_it_resolves(void **state)
{
    (void)state;
    const char *yaml = HOT "resources:\n  v: {type: OS::Heat::Value, properties: {value: 5}}\n"
                           "  g:\n    type: OS::Heat::ResourceGroup\n"
                           "    properties:\n      count: {get_attr: [v, value]}\n"
                           "      resource_def: {type: OS::Heat::None}\n";
    assert_int_equal(count_of(yaml, NULL), 0);
    assert_int_equal(count.resources, 2);
    /* Resolved, the engine counts the group alone before building it. */
    json_t *props =
        json_pack("{s:i, s:{s:s}}", "count", 1000000000, "resource_def", "type", "OS::Heat::None");
    cv_limits_t l;
    cv_limits_init(&l);
    cv_tpl_opts_t opts = {.depth = 0};
    assert_int_equal(cv_template_count_nested("OS::Heat::ResourceGroup", props, "resources.g",
                                              &opts, &l, &count, err, sizeof(err)),
                     CV_ETOOBIG);
    json_decref(props);
    assert_contains(err, "resources.g: number of resources 1000000000 exceeds the limit of 100000 "
                         "(CONVERGE_MAX_RESOURCES, or the workers' --max-resources)");
}

static void test_the_environment_may_only_lower_a_published_limit(void **state)
{
    (void)state;
    cv_limits_t l;
    cv_limits_init(&l);
    l.resources = 200;
    char ignored[256], e[256];
    setenv("CONVERGE_MAX_RESOURCES", "1000000", 1);
    setenv("CONVERGE_MAX_NESTING_DEPTH", "2", 1);
    assert_int_equal(cv_limits_lower_from_env(&l, ignored, sizeof(ignored), e, sizeof(e)), 0);
    unsetenv("CONVERGE_MAX_RESOURCES");
    unsetenv("CONVERGE_MAX_NESTING_DEPTH");
    assert_int_equal(l.resources, 200);   /* not raised past the workers' */
    assert_int_equal(l.nesting_depth, 2); /* lowered */
    assert_string_equal(ignored, "CONVERGE_MAX_RESOURCES");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_group_of_a_billion_is_refused_at_once_naming_the_limit),
        cmocka_unit_test(test_a_group_counts_its_members_from_a_parameter),
        cmocka_unit_test(test_an_autoscaling_group_counts_its_max_size),
        cmocka_unit_test(test_a_chain_counts_its_list_and_a_repeat_without_building_it),
        cmocka_unit_test(test_nested_stacks_count_into_the_traversal_not_the_stack),
        cmocka_unit_test(test_the_traversal_limit_counts_every_nested_stack),
        cmocka_unit_test(test_a_stack_that_includes_itself_is_refused_naming_the_cycle),
        cmocka_unit_test(test_a_cycle_through_a_stack_and_a_template_resource_is_named),
        cmocka_unit_test(test_a_stack_nested_past_the_depth_limit_is_refused),
        cmocka_unit_test(test_a_count_only_an_attribute_tells_counts_zero_until_it_resolves),
        cmocka_unit_test(test_the_environment_may_only_lower_a_published_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
