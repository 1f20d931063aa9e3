/*
 * fuzz_env — Heat environment files (cv_env_load, cv_template.h) on
 * arbitrary bytes, and the typed values they give to a template.
 *
 * cv_env_load never crashes or leaks, refuses with a message, and leaves
 * the parameter map as it was when it refuses. What it accepts is applied
 * as convergectl does (parameter_defaults kept apart, then applied to the
 * parameters the template declares) and handed to a fixed template that
 * declares one parameter of every type, with constraints, so that typed
 * values from a file go through every conversion and check.
 *
 * The same bytes are read as a whole environment (cv_env_read, cv_env.h),
 * merged twice in a row as repeated -e files merge (merge strategies
 * included), and their registry asked what it maps, which restrictions and
 * hooks it sets and what a nested stack's environment is.
 */
#include "cv_hot.h"
#include "cv_base.h"
#define FUZZ_NAME "fuzz_env"
#include "fuzz_util.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char template_text[] =
    "heat_template_version: 2018-08-31\n"
    "parameters:\n"
    "  name: {type: string, default: x, constraints: [{length: {max: 64}},\n"
    "         {allowed_pattern: '[a-z0-9$ ,-]*'}]}\n"
    "  count: {type: number, default: 1, constraints: [{range: {min: -10, max: 1e6}},\n"
    "          {modulo: {step: 1, offset: 0}}]}\n"
    "  flag: {type: boolean, default: false, hidden: true}\n"
    "  zones: {type: comma_delimited_list, default: 'a,b',\n"
    "          constraints: [{allowed_values: [a, b, c, '']}]}\n"
    "  extra: {type: json, default: {}, constraints: [{length: {min: 0, max: 8}}]}\n"
    "  size: {type: string, default: small, constraints: [{allowed_values: [small, big]}]}\n"
    "resources:\n"
    "  v:\n"
    "    type: OS::Heat::Value\n"
    "    properties:\n"
    "      value:\n"
    "        str_replace:\n"
    "          template: $n/$c/$z/$e\n"
    "          params:\n"
    "            $n: {get_param: name}\n"
    "            $c: {get_param: count}\n"
    "            $z: {list_join: [',', {get_param: zones}]}\n"
    "            $e: {get_param: extra}\n"
    "outputs:\n"
    "  out: {value: {get_attr: [v, value]}}\n";

static json_t *template_tree;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init(argc, argv);
    template_tree = cv_yaml_load(template_text, strlen(template_text), "fixed.yaml", NULL, 0);
    if (!template_tree)
        abort();
    return 0;
}

/* Loads the environment into a map already holding a value; returns the
 * map, or NULL when the file is refused (after checking the refusal). */
static json_t *load(const uint8_t *data, size_t size, json_t *defaults)
{
    json_t *params = json_pack("{s:s}", "name", "given-before");
    json_t *before = json_deep_copy(params);
    char err[1024] = "";
    int rc = cv_env_load((const char *)data, size, "env.yaml", params, defaults, err, sizeof(err));
    if (rc != 0) {
        if (!err[0] || (rc != CV_EPARSE && rc != CV_EVALIDATE && rc != CV_ENOMEM))
            fail("refused without a message", cv_err_name(rc));
        if (!json_equal(params, before))
            fail("a refused file changed the parameters", err);
        json_decref(params);
        params = NULL;
    }
    json_decref(before);
    return params;
}

static void use(const json_t *params)
{
    cv_template_t *tpl = NULL;
    char err[1024] = "";
    int rc = cv_template_from_json(template_tree, "fixed.yaml", params, &tpl, err, sizeof(err));
    if (rc != 0 && (tpl || !err[0]))
        fail("template refused the values without a message", cv_err_name(rc));
    cv_template_free(tpl);
}

/* The whole environment: read, merged twice, its registry consulted. */
static void environment(const uint8_t *data, size_t size)
{
    char err[1024] = "";
    json_t *file = cv_env_read((const char *)data, size, "env.yaml", err, sizeof(err));
    if (!file) {
        if (!err[0])
            fail("environment refused without a message", "");
        return;
    }
    json_t *env = json_object(), *strategies = json_object();
    const json_t *decls = json_object_get(template_tree, "parameters");
    int rc = cv_env_merge(env, strategies, file, decls, "e1.yaml", err, sizeof(err));
    if (rc == 0)
        rc = cv_env_merge(env, strategies, file, decls, "e2.yaml", err, sizeof(err));
    if (rc != 0 && !err[0])
        fail("merge refused without a message", cv_err_name(rc));
    const json_t *registry = json_object_get(env, "resource_registry");
    static const char *const types[] = {"OS::Heat::Value", "My::Thing", "OS::Nova::Server",
                                        "x.yaml"};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        char out[256];
        json_t *via = NULL;
        cv_env_resolve_type(registry, types[i], "v", out, sizeof(out), &via);
        json_t *child = cv_env_child(env, "v", via);
        (void)cv_env_hooks(json_object_get(child, "resource_registry"), "inner");
        json_decref(child);
        json_decref(via);
    }
    (void)cv_env_restricted_actions(registry, "v");
    cv_tpl_opts_t opts = {.env = env};
    cv_template_t *tpl = NULL;
    if (cv_template_from_json_opts(template_tree, "fixed.yaml", NULL, &opts, &tpl, err,
                                   sizeof(err)) != 0 &&
        !err[0])
        fail("template refused under the environment without a message", "");
    cv_template_free(tpl);
    json_decref(strategies);
    json_decref(env);
    json_decref(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    environment(data, size);
    /* As convergectl reads -e files: defaults kept apart, then applied. */
    json_t *defaults = json_object();
    json_t *params = load(data, size, defaults);
    if (params) {
        cv_env_apply_defaults(params, defaults, template_tree);
        use(params);
    }
    json_decref(params);
    json_decref(defaults);
    /* Without a defaults map, parameter_defaults fill the gaps directly. */
    params = load(data, size, NULL);
    json_decref(params);
    return 0;
}
