/*
 * Specification of Heat environments (cv_env.h): reading environment files,
 * merging several in order as Heat's merge_environments does, and what the
 * resource_registry says about a resource. The cases follow Heat's own
 * (heat/tests/test_environment.py, test_common_env_util.py); the mapped-to
 * types are Converge's built-in ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_env.h"
#include "cv_base.h"
#include "cv_template.h"
#include "test_util.h"

#include <string.h>

static char err[1024];

static json_t *read_env(const char *yaml)
{
    err[0] = '\0';
    return cv_env_read(yaml, strlen(yaml), "env.yaml", err, sizeof(err));
}

/* Merges the files (YAML texts, NULL-terminated) against `decls` (JSON). */
static int merge_all(json_t **env, const char *decls_json, const char *const *files)
{
    json_t *decls = tu_json(decls_json), *strategies = json_object();
    *env = json_object();
    int rc = 0;
    for (size_t i = 0; rc == 0 && files[i]; i++) {
        json_t *file = read_env(files[i]);
        if (!file)
            fail_msg("%s: %s", files[i], err);
        char name[32];
        snprintf(name, sizeof(name), "env%zu.yaml", i + 1);
        rc = cv_env_merge(*env, strategies, file, decls, name, err, sizeof(err));
        json_decref(file);
    }
    json_decref(decls);
    json_decref(strategies);
    return rc;
}

static void assert_json(const json_t *got, const char *want_json)
{
    json_t *want = tu_json(want_json);
    if (!json_equal(got, want)) {
        char *text = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        fail_msg("got %s, want %s", text ? text : "NULL", want_json);
    }
    json_decref(want);
}

static const char *resolve(const char *registry_json, const char *type, const char *resource)
{
    static char out[256];
    json_t *reg = tu_json(registry_json);
    cv_env_resolve_type(reg, type, resource, out, sizeof(out), NULL);
    json_decref(reg);
    return out;
}

/* ---------------------------------------------------------------- reading */

static void test_empty_file_is_an_empty_environment(void **state)
{
    (void)state;
    json_t *env = read_env("");
    assert_json(env, "{}");
    json_decref(env);
}

static void test_unknown_section_is_refused(void **state)
{
    (void)state;
    assert_null(read_env("parameterz: {a: 1}\n"));
    assert_non_null(strstr(err, "unknown environment section \"parameterz\""));
}

static void test_invalid_hook_is_refused_with_heats_message(void **state)
{
    (void)state;
    assert_null(read_env("resource_registry:\n  resources:\n    a: {hooks: [pre-create, bad]}\n"));
    assert_non_null(strstr(err, "Invalid hook type \"['pre-create', 'bad']\" for resource "
                                "breakpoint, acceptable hook types are: ('pre-create', "
                                "'pre-update', 'pre-delete', 'post-create', 'post-update', "
                                "'post-delete')"));
}

static void test_invalid_restricted_action_is_refused_with_heats_message(void **state)
{
    (void)state;
    assert_null(
        read_env("resource_registry:\n  resources:\n    a: {restricted_actions: delete}\n"));
    assert_non_null(strstr(err, "Invalid restricted_action type \"delete\" for resource, "
                                "acceptable restricted_action types are: ('update', 'replace')"));
}

/* ---------------------------------------------------------------- merging */

static void test_later_file_overrides_parameters(void **state)
{
    (void)state;
    json_t *env;
    const char *files[] = {"parameters: {a: one, b: two}\n", "parameters: {a: three}\n", NULL};
    assert_int_equal(merge_all(&env, "{\"a\": {\"type\": \"string\"}, \"b\": {}}", files), 0);
    assert_json(json_object_get(env, "parameters"), "{\"a\": \"three\", \"b\": \"two\"}");
    json_decref(env);
}

static void test_undeclared_parameters_of_later_files_are_ignored(void **state)
{
    (void)state;
    json_t *env;
    const char *files[] = {"parameters: {a: one, x: first}\n", "parameters: {y: 2, a: two}\n",
                           NULL};
    assert_int_equal(merge_all(&env, "{\"a\": {\"type\": \"string\"}}", files), 0);
    /* The first section is taken whole, as Heat takes it. */
    assert_json(json_object_get(env, "parameters"), "{\"a\": \"two\", \"x\": \"first\"}");
    json_decref(env);
}

static void test_merge_strategy_merges_by_type(void **state)
{
    (void)state;
    json_t *env;
    const char *files[] = {
        "parameter_defaults: {s: ab, l: [1, 2], c: 'x,y', m: {k1: v1, n: {a: 1}}, n: 2}\n",
        "parameter_defaults: {s: cd, l: [3], c: z, m: {k2: v2, n: {b: 2}}, n: 3}\n"
        "parameter_merge_strategies: {default: merge, s: merge}\n",
        NULL};
    const char *decls =
        "{\"s\": {\"type\": \"string\"}, \"l\": {\"type\": \"comma_delimited_list\"},"
        " \"c\": {\"type\": \"comma_delimited_list\"}, \"m\": {\"type\": \"json\"},"
        " \"n\": {\"type\": \"number\"}}";
    /* Strategies are fixed per parameter across the files: the first file
     * (no strategies) fixed overwrite, which a later `default` does not
     * change but a strategy named for the parameter conflicts with. */
    assert_int_equal(merge_all(&env, decls, files), CV_EVALIDATE);
    assert_non_null(
        strstr(err, "Conflicting merge strategy 'merge' for parameter 's' in file 'env2.yaml'."));
    json_decref(env);
    const char *both[] = {
        "parameter_defaults: {s: ab, l: [1, 2], c: 'x,y', m: {k1: v1, n: {a: 1}}, n: 2}\n"
        "parameter_merge_strategies: {default: merge}\n",
        "parameter_defaults: {s: cd, l: [3], c: z, m: {k2: v2, n: {b: 2}}, n: 3}\n"
        "parameter_merge_strategies: {default: merge}\n",
        NULL};
    if (merge_all(&env, decls, both) != 0)
        fail_msg("%s", err);
    assert_json(json_object_get(env, "parameter_defaults"),
                "{\"s\": \"abcd\", \"l\": [1, 2, 3], \"c\": \"x,y,z\","
                " \"m\": {\"k1\": \"v1\", \"k2\": \"v2\", \"n\": {\"b\": 2}}, \"n\": 5}");
    json_decref(env);
}

static void test_deep_merge_merges_nested_maps(void **state)
{
    (void)state;
    json_t *env;
    const char *files[] = {"parameters: {m: {n: {a: 1, l: [x]}, s: ab}}\n"
                           "parameter_merge_strategies: {m: deep_merge}\n",
                           "parameters: {m: {n: {b: 2, l: [y]}, s: cd}}\n"
                           "parameter_merge_strategies: {m: deep_merge}\n",
                           NULL};
    assert_int_equal(merge_all(&env, "{\"m\": {\"type\": \"json\"}}", files), 0);
    assert_json(json_object_get(env, "parameters"),
                "{\"m\": {\"n\": {\"a\": 1, \"b\": 2, \"l\": [\"x\", \"y\"]}, \"s\": \"abcd\"}}");
    json_decref(env);
}

static void test_merging_a_boolean_is_refused(void **state)
{
    (void)state;
    json_t *env;
    const char *files[] = {"parameters: {b: true}\nparameter_merge_strategies: {b: merge}\n",
                           "parameters: {b: false}\nparameter_merge_strategies: {b: merge}\n",
                           NULL};
    assert_int_equal(merge_all(&env, "{\"b\": {\"type\": \"boolean\"}}", files), CV_EVALIDATE);
    assert_non_null(strstr(err, "Invalid merge strategy 'merge' for parameter 'b'."));
    json_decref(env);
}

static void test_unknown_strategy_falls_back_to_the_files_default(void **state)
{
    (void)state;
    json_t *env;
    const char *files[] = {"parameters: {s: a}\n"
                           "parameter_merge_strategies: {default: merge, s: sideways}\n",
                           "parameters: {s: b}\n"
                           "parameter_merge_strategies: {default: merge}\n",
                           NULL};
    assert_int_equal(merge_all(&env, "{\"s\": {\"type\": \"string\"}}", files), 0);
    assert_json(json_object_get(env, "parameters"), "{\"s\": \"ab\"}");
    json_decref(env);
}

static void test_registry_keys_of_a_later_file_replace_earlier_ones(void **state)
{
    (void)state;
    json_t *env;
    const char *files[] = {"resource_registry:\n  My::A: a.yaml\n  My::B: b.yaml\n"
                           "  resources: {x: {hooks: pre-create}}\n",
                           "resource_registry:\n  My::A: c.yaml\n"
                           "  resources: {y: {restricted_actions: update}}\n",
                           NULL};
    assert_int_equal(merge_all(&env, "{}", files), 0);
    /* merge_map is shallow: the second `resources` replaces the first. */
    assert_json(json_object_get(env, "resource_registry"),
                "{\"My::A\": \"c.yaml\", \"My::B\": \"b.yaml\","
                " \"resources\": {\"y\": {\"restricted_actions\": \"update\"}}}");
    json_decref(env);
}

/* ---------------------------------------------------------------- resolving types */

static void test_type_mapped_to_another_type(void **state)
{
    (void)state;
    assert_string_equal(resolve("{\"OS::Networking::FloatingIP\": \"OS::Heat::Value\","
                                " \"OS::Loadbalancer\": \"lb.yaml\"}",
                                "OS::Networking::FloatingIP", "my_fip"),
                        "OS::Heat::Value");
}

static void test_type_mapped_to_a_template_file(void **state)
{
    (void)state;
    assert_string_equal(resolve("{\"OS::Loadbalancer\": \"lb.yaml\"}", "OS::Loadbalancer", "lb"),
                        "lb.yaml");
}

static void test_mapping_is_followed_to_its_end(void **state)
{
    (void)state;
    assert_string_equal(resolve("{\"My::A\": \"My::B\", \"My::B\": \"b.yaml\"}", "My::A", "r"),
                        "b.yaml");
}

static void test_wildcard_maps_a_prefix(void **state)
{
    (void)state;
    assert_string_equal(resolve("{\"My::Heat::*\": \"OS::Heat::*\"}", "My::Heat::None", "r"),
                        "OS::Heat::None");
}

static void test_wildcard_many_to_one_does_not_recurse(void **state)
{
    (void)state;
    assert_string_equal(resolve("{\"OS::*\": \"OS::Heat::None\"}", "OS::Some::Name", "r"),
                        "OS::Heat::None");
    assert_string_equal(resolve("{\"OS::Nova::*\": \"OS::Heat::None\"}", "OS::Nova::Server", "r"),
                        "OS::Heat::None");
}

static void test_mapping_overrides_a_builtin_type(void **state)
{
    (void)state;
    assert_string_equal(
        resolve("{\"OS::Heat::RandomString\": \"OS::Heat::None\"}", "OS::Heat::RandomString", "r"),
        "OS::Heat::None");
}

static void test_per_resource_mapping_applies_to_that_resource_only(void **state)
{
    (void)state;
    const char *reg = "{\"resources\": {\"my_db_server\": {\"OS::DBInstance\": \"db.yaml\"}}}";
    assert_string_equal(resolve(reg, "OS::DBInstance", "my_db_server"), "db.yaml");
    assert_string_equal(resolve(reg, "OS::DBInstance", "other"), "OS::DBInstance");
}

static void test_per_resource_mapping_wins_over_the_global_one(void **state)
{
    (void)state;
    assert_string_equal(resolve("{\"resources\": {\"my_fip\": {\"OS::Networking::FloatingIP\":"
                                " \"ip.yaml\"}}, \"OS::Networking::FloatingIP\":"
                                " \"OS::Heat::Value\"}",
                                "OS::Networking::FloatingIP", "my_fip"),
                        "ip.yaml");
}

static void test_mapping_to_an_unknown_type_leaves_the_type(void **state)
{
    (void)state;
    assert_string_equal(resolve("{\"My::A\": \"Nowhere::B\"}", "My::A", "r"), "My::A");
}

static void test_mapping_loop_resolves_nothing(void **state)
{
    (void)state;
    assert_string_equal(resolve("{\"My::A\": \"My::B\", \"My::B\": \"My::A\"}", "My::A", "r"),
                        "My::A");
}

static void test_template_mapping_path_is_reported(void **state)
{
    (void)state;
    json_t *reg = tu_json("{\"OS::Food\": \"fruity.yaml\","
                          " \"resources\": {\"abc\": {\"OS::Food\": \"nutty.yaml\"}}}");
    char out[64];
    json_t *via = NULL;
    cv_env_resolve_type(reg, "OS::Food", "abc", out, sizeof(out), &via);
    assert_string_equal(out, "nutty.yaml");
    assert_json(via, "[\"resources\", \"abc\", \"OS::Food\"]");
    json_decref(via);
    cv_env_resolve_type(reg, "OS::Food", "xyz", out, sizeof(out), &via);
    assert_string_equal(out, "fruity.yaml");
    assert_json(via, "[\"OS::Food\"]");
    json_decref(via);
    json_decref(reg);
}

/* ---------------------------------------------------------------- per resource */

static void test_hooks_match_plain_names(void **state)
{
    (void)state;
    json_t *reg = tu_json("{\"OS::Fruit\": \"apples.yaml\", \"resources\": {"
                          "\"a\": {\"OS::Fruit\": \"apples.yaml\","
                          " \"hooks\": [\"pre-create\", \"pre-update\"]},"
                          "\"b\": {\"OS::Food\": \"fruity.yaml\"},"
                          "\"nested\": {\"res\": {\"hooks\": \"pre-create\"}}}}");
    assert_int_equal(cv_env_hooks(reg, "a"), CV_ENV_HOOK_PRE_CREATE | CV_ENV_HOOK_PRE_UPDATE);
    assert_int_equal(cv_env_hooks(reg, "b"), 0);
    assert_int_equal(cv_env_hooks(reg, "OS::Fruit"), 0);
    assert_int_equal(cv_env_hooks(reg, "res"), 0);
    assert_int_equal(cv_env_hooks(reg, "unknown"), 0);
    json_decref(reg);
}

static void test_hooks_match_wildcards(void **state)
{
    (void)state;
    json_t *reg = tu_json("{\"resources\": {\"prefix_*\": {\"hooks\": \"pre-create\"},"
                          " \"*_suffix\": {\"hooks\": \"pre-create\"},"
                          " \"*\": {\"hooks\": \"pre-delete\"}}}");
    assert_true(cv_env_hooks(reg, "prefix_") & CV_ENV_HOOK_PRE_CREATE);
    assert_true(cv_env_hooks(reg, "prefix_some") & CV_ENV_HOOK_PRE_CREATE);
    assert_false(cv_env_hooks(reg, "some_prefix") & CV_ENV_HOOK_PRE_CREATE);
    assert_true(cv_env_hooks(reg, "_suffix") & CV_ENV_HOOK_PRE_CREATE);
    assert_true(cv_env_hooks(reg, "some_suffix") & CV_ENV_HOOK_PRE_CREATE);
    assert_false(cv_env_hooks(reg, "_suffix_blah") & CV_ENV_HOOK_PRE_CREATE);
    assert_true(cv_env_hooks(reg, "some_prefix") & CV_ENV_HOOK_PRE_DELETE);
    assert_true(cv_env_hooks(reg, "_suffix_blah") & CV_ENV_HOOK_PRE_DELETE);
    json_decref(reg);
}

static void test_restricted_actions_match_names_and_wildcards(void **state)
{
    (void)state;
    json_t *reg = tu_json("{\"resources\": {\"prefix_*\": {\"restricted_actions\": \"update\"},"
                          " \"*_suffix\": {\"restricted_actions\": \"update\"},"
                          " \"*\": {\"restricted_actions\": \"replace\"},"
                          " \"all\": {\"restricted_actions\": [\"update\", \"replace\"]}}}");
    assert_int_equal(cv_env_restricted_actions(reg, "prefix_some"),
                     CV_ENV_RESTRICT_UPDATE | CV_ENV_RESTRICT_REPLACE);
    assert_int_equal(cv_env_restricted_actions(reg, "some_prefix"), CV_ENV_RESTRICT_REPLACE);
    assert_int_equal(cv_env_restricted_actions(reg, "_suffix_blah"), CV_ENV_RESTRICT_REPLACE);
    assert_int_equal(cv_env_restricted_actions(reg, "all"),
                     CV_ENV_RESTRICT_UPDATE | CV_ENV_RESTRICT_REPLACE);
    json_decref(reg);
}

/* ---------------------------------------------------------------- nested stacks */

static void test_child_environment_drills_down_to_the_resource(void **state)
{
    (void)state;
    json_t *env = tu_json("{\"parameters\": {\"gone\": 1}, \"parameter_defaults\": {\"d\": 2},"
                          " \"resource_registry\": {\"OS::Food\": \"fruity.yaml\", \"resources\": {"
                          "  \"a\": {\"OS::Fruit\": \"apples.yaml\", \"hooks\": \"pre-create\"},"
                          "  \"nested\": {\"b\": {\"OS::Fruit\": \"carrots.yaml\"},"
                          "              \"nested_res\": {\"hooks\": \"pre-create\"}}}}}");
    json_t *child = cv_env_child(env, "nested", NULL);
    assert_json(json_object_get(child, "parameters"), "{}");
    assert_json(json_object_get(child, "parameter_defaults"), "{\"d\": 2}");
    const json_t *reg = json_object_get(child, "resource_registry");
    assert_true(cv_env_hooks(reg, "nested_res") & CV_ENV_HOOK_PRE_CREATE);
    assert_false(cv_env_hooks(reg, "a") & CV_ENV_HOOK_PRE_CREATE);
    char out[64];
    cv_env_resolve_type(reg, "OS::Fruit", "b", out, sizeof(out), NULL);
    assert_string_equal(out, "carrots.yaml");
    cv_env_resolve_type(reg, "OS::Food", "abc", out, sizeof(out), NULL);
    assert_string_equal(out, "fruity.yaml");
    json_decref(child);
    json_decref(env);
}

static void test_child_environment_takes_matching_wildcards(void **state)
{
    (void)state;
    json_t *env =
        tu_json("{\"resource_registry\": {\"resources\": {"
                " \"nested\": {\"c\": {\"hooks\": \"pre-create\"}},"
                " \"nest*\": {\"nested_res\": {\"hooks\": \"pre-create\"}},"
                " \"*_doesnt_match_nested\": {\"other\": {\"hooks\": \"pre-create\"}}}}}");
    json_t *child = cv_env_child(env, "nested", NULL);
    const json_t *resources =
        json_object_get(json_object_get(child, "resource_registry"), "resources");
    assert_non_null(json_object_get(resources, "c"));
    assert_non_null(json_object_get(resources, "nested_res"));
    assert_null(json_object_get(resources, "other"));
    json_decref(child);
    json_decref(env);
}

static void test_child_environment_prefers_the_exact_match(void **state)
{
    (void)state;
    json_t *env =
        tu_json("{\"resource_registry\": {\"resources\": {"
                " \"*esource\": {\"hooks\": \"pre-create\"},"
                " \"resource\": {\"OS::Fruit\": \"carrots.yaml\", \"hooks\": \"pre-update\"},"
                " \"res*\": {\"hooks\": \"pre-create\"}}}}");
    json_t *child = cv_env_child(env, "resource", NULL);
    assert_json(json_object_get(json_object_get(child, "resource_registry"), "resources"),
                "{\"OS::Fruit\": \"carrots.yaml\", \"hooks\": \"pre-update\"}");
    json_decref(child);
    json_decref(env);
}

static void test_child_environment_drops_the_mapping_that_made_it(void **state)
{
    (void)state;
    json_t *env = tu_json("{\"resource_registry\": {\"OS::Food\": \"fruity.yaml\","
                          " \"resources\": {\"abc\": {\"OS::Food\": \"nutty.yaml\"}}}}");
    json_t *via = json_pack("[s,s,s]", "resources", "abc", "OS::Food");
    json_t *child = cv_env_child(env, NULL, via);
    char out[64];
    cv_env_resolve_type(json_object_get(child, "resource_registry"), "OS::Food", "abc", out,
                        sizeof(out), NULL);
    assert_string_equal(out, "fruity.yaml");
    json_decref(via);
    json_decref(child);
    json_decref(env);
}

/* ---------------------------------------------------------------- templates */

static void test_template_resource_type_is_mapped_by_the_registry(void **state)
{
    (void)state;
    json_t *tree = tu_json("{\"heat_template_version\": \"2018-08-31\", \"resources\": {"
                           "\"v\": {\"type\": \"My::Value\", \"properties\": {\"value\": 1}},"
                           "\"n\": {\"type\": \"My::Nothing\"}}}");
    json_t *env = tu_json("{\"resource_registry\": {\"My::Value\": \"OS::Heat::Value\","
                          " \"resources\": {\"n\": {\"My::Nothing\": \"OS::Heat::None\"}}}}");
    cv_tpl_opts_t opts = {.env = env};
    cv_template_t *tpl = NULL;
    assert_int_equal(
        cv_template_from_json_opts(tree, "t.yaml", NULL, &opts, &tpl, err, sizeof(err)), 0);
    assert_string_equal(cv_template_resource(tpl, "v")->type, "OS::Heat::Value");
    assert_string_equal(cv_template_resource(tpl, "n")->type, "OS::Heat::None");
    cv_template_free(tpl);
    opts.env = NULL;
    assert_int_not_equal(
        cv_template_from_json_opts(tree, "t.yaml", NULL, &opts, &tpl, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "My::Value"));
    json_decref(env);
    json_decref(tree);
}

static void test_mapped_resource_keeps_the_type_its_template_wrote(void **state)
{
    (void)state;
    json_t *tree = tu_json("{\"heat_template_version\": \"2018-08-31\", \"resources\": {"
                           "\"v\": {\"type\": \"My::Value\", \"properties\": {\"value\": 1}},"
                           "\"n\": {\"type\": \"My::Nothing\"},"
                           "\"t\": {\"type\": \"My::Thing\"},"
                           "\"plain\": {\"type\": \"OS::Heat::None\"}}}");
    json_t *files = tu_json("{\"thing.yaml\": {\"heat_template_version\": \"2018-08-31\"}}");
    json_t *env = tu_json("{\"resource_registry\": {\"My::Value\": \"OS::Heat::Value\","
                          " \"My::Thing\": \"thing.yaml\","
                          " \"resources\": {\"n\": {\"My::Nothing\": \"OS::Heat::None\"}}}}");
    cv_tpl_opts_t opts = {.files = files, .env = env};
    cv_template_t *tpl = NULL;
    if (cv_template_from_json_opts(tree, "t.yaml", NULL, &opts, &tpl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cv_template_resource(tpl, "v")->declared_type, "My::Value");
    assert_string_equal(cv_template_resource(tpl, "n")->declared_type, "My::Nothing");
    assert_string_equal(cv_template_resource(tpl, "t")->type, "thing.yaml");
    assert_string_equal(cv_template_resource(tpl, "t")->declared_type, "My::Thing");
    assert_string_equal(cv_template_resource(tpl, "plain")->declared_type, "OS::Heat::None");
    cv_template_free(tpl);
    json_decref(env);
    json_decref(files);
    json_decref(tree);
}

static void test_mapping_that_wraps_its_type_does_not_apply_inside(void **state)
{
    (void)state;
    json_t *tree =
        tu_json("{\"heat_template_version\": \"2018-08-31\", \"resources\": {"
                "\"v\": {\"type\": \"OS::Heat::Value\", \"properties\": {\"value\": 1}}}}");
    json_t *files = tu_json("{\"wrap.yaml\": {\"heat_template_version\": \"2018-08-31\","
                            " \"parameters\": {\"value\": {\"type\": \"string\"}},"
                            " \"resources\": {\"inner\": {\"type\": \"OS::Heat::Value\","
                            " \"properties\": {\"value\": {\"get_param\": \"value\"}}}}}}");
    json_t *env = tu_json("{\"resource_registry\": {\"OS::Heat::Value\": \"wrap.yaml\"}}");
    cv_tpl_opts_t opts = {.files = files, .env = env};
    cv_template_t *tpl = NULL;
    if (cv_template_from_json_opts(tree, "t.yaml", NULL, &opts, &tpl, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_string_equal(cv_template_resource(tpl, "v")->type, "wrap.yaml");
    cv_template_free(tpl);
    json_decref(env);
    json_decref(files);
    json_decref(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_file_is_an_empty_environment),
        cmocka_unit_test(test_unknown_section_is_refused),
        cmocka_unit_test(test_invalid_hook_is_refused_with_heats_message),
        cmocka_unit_test(test_invalid_restricted_action_is_refused_with_heats_message),
        cmocka_unit_test(test_later_file_overrides_parameters),
        cmocka_unit_test(test_undeclared_parameters_of_later_files_are_ignored),
        cmocka_unit_test(test_merge_strategy_merges_by_type),
        cmocka_unit_test(test_deep_merge_merges_nested_maps),
        cmocka_unit_test(test_merging_a_boolean_is_refused),
        cmocka_unit_test(test_unknown_strategy_falls_back_to_the_files_default),
        cmocka_unit_test(test_registry_keys_of_a_later_file_replace_earlier_ones),
        cmocka_unit_test(test_type_mapped_to_another_type),
        cmocka_unit_test(test_type_mapped_to_a_template_file),
        cmocka_unit_test(test_mapping_is_followed_to_its_end),
        cmocka_unit_test(test_wildcard_maps_a_prefix),
        cmocka_unit_test(test_wildcard_many_to_one_does_not_recurse),
        cmocka_unit_test(test_mapping_overrides_a_builtin_type),
        cmocka_unit_test(test_per_resource_mapping_applies_to_that_resource_only),
        cmocka_unit_test(test_per_resource_mapping_wins_over_the_global_one),
        cmocka_unit_test(test_mapping_to_an_unknown_type_leaves_the_type),
        cmocka_unit_test(test_mapping_loop_resolves_nothing),
        cmocka_unit_test(test_template_mapping_path_is_reported),
        cmocka_unit_test(test_hooks_match_plain_names),
        cmocka_unit_test(test_hooks_match_wildcards),
        cmocka_unit_test(test_restricted_actions_match_names_and_wildcards),
        cmocka_unit_test(test_child_environment_drills_down_to_the_resource),
        cmocka_unit_test(test_child_environment_takes_matching_wildcards),
        cmocka_unit_test(test_child_environment_prefers_the_exact_match),
        cmocka_unit_test(test_child_environment_drops_the_mapping_that_made_it),
        cmocka_unit_test(test_template_resource_type_is_mapped_by_the_registry),
        cmocka_unit_test(test_mapped_resource_keeps_the_type_its_template_wrote),
        cmocka_unit_test(test_mapping_that_wraps_its_type_does_not_apply_inside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
