/*
 * fuzz_template — the HOT template parser and validator
 * (engine/hot/cv_template.h) on arbitrary bytes.
 *
 * Each input is parsed twice: without parameter values, and with values
 * for the parameters it declares (strings as a command line gives them and
 * typed values as an environment file does, chosen by the input's last
 * byte), plus a pseudo parameter and, for odd last bytes, a name the
 * template does not declare. A template that is accepted must then keep
 * the promises the rest of the engine relies on:
 *   - every resource has a name, a type, map properties and metadata, a
 *     deletion policy, and sorted unique dependencies on other existing
 *     resources; cv_template_resource finds it by name;
 *   - hidden parameters are parameters, outputs have a value;
 *   - the traversal graphs built from it (create, and an update over
 *     itself) are acyclic;
 *   - resolving properties, metadata and outputs with every resource known
 *     either succeeds or fails with a message.
 * A refusal must come with a message.
 */
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"
#include "cv_convergence.h"
#define FUZZ_NAME "fuzz_template"
#include "fuzz_util.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *values;     /* candidate parameter values */
static json_t *attributes; /* the attributes every resource has when resolving */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init(argc, argv);
    values = json_pack("[s,s,s,s,s,s,s,s,s,i,f,b,[s,s],{s:[i]},n]", "", "0", "42", " -1.5e3 ",
                       "yes", "a, b,", "{\"k\": [1, {\"x\": null}]}", "x$y", "9223372036854775808",
                       7, 0.5, 1, "a", "b", "m", 1);
    attributes = json_pack("{s:s,s:s,s:[i,{s:s}],s:{s:[s]}}", "value", "v", "output", "o", "list",
                           1, "a", "b", "networks", "private", "10.0.0.1");
    return 0;
}

/* ---------------------------------------------------------------- an accepted template */

static void check_resources(const cv_template_t *tpl)
{
    for (size_t i = 0; i < tpl->nresources; i++) {
        const cv_tpl_resource_t *r = &tpl->resources[i];
        if (!r->name || !r->type || !json_is_object(r->properties) ||
            !json_is_object(r->metadata) || !r->deletion_policy)
            fail("incomplete resource", r->name ? r->name : "(no name)");
        if (cv_template_resource(tpl, r->name) != r)
            fail("cv_template_resource does not find", r->name);
        for (size_t j = 0; j < r->ndepends; j++) {
            if (j > 0 && strcmp(r->depends[j - 1], r->depends[j]) >= 0)
                fail("dependencies not sorted and unique", r->name);
            if (!cv_template_resource(tpl, r->depends[j]) || strcmp(r->depends[j], r->name) == 0)
                fail("dependency on a missing resource or itself", r->depends[j]);
        }
    }
    if (cv_template_resource(tpl, "") != NULL)
        fail("a resource named by the empty string", "");
}

static void check_sections(const cv_template_t *tpl)
{
    if (!tpl->version || !tpl->description || !json_is_object(tpl->parameters) ||
        !json_is_array(tpl->hidden) || !json_is_object(tpl->outputs))
        fail("incomplete template", "");
    for (size_t i = 0; i < json_array_size(tpl->hidden); i++)
        if (!json_object_get(tpl->parameters, json_string_value(json_array_get(tpl->hidden, i))))
            fail("a hidden parameter without a value", "");
    const char *name;
    const json_t *out;
    json_object_foreach(tpl->outputs, name, out)
    {
        if (!json_object_get(out, "value") || !json_is_string(json_object_get(out, "description")))
            fail("incomplete output", name);
    }
}

static void check_graphs(const cv_template_t *tpl)
{
    cv_trav_resource_t *def = calloc(tpl->nresources + 1, sizeof(*def));
    if (!def)
        return;
    for (size_t i = 0; i < tpl->nresources; i++)
        def[i] = (cv_trav_resource_t){tpl->resources[i].name,
                                      (const char *const *)tpl->resources[i].depends,
                                      tpl->resources[i].ndepends};
    static const int kinds[] = {CV_TRAV_CREATE, CV_TRAV_UPDATE, CV_TRAV_DELETE};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        cv_graph_t *g = cv_traversal_build(kinds[k], def, tpl->nresources,
                                           kinds[k] == CV_TRAV_CREATE ? NULL : def,
                                           kinds[k] == CV_TRAV_CREATE ? 0 : tpl->nresources);
        if (!g)
            continue;
        char cycle[256];
        if (cv_graph_find_cycle(g, cycle, sizeof(cycle)) != 0)
            fail("traversal graph of an accepted template has a cycle", cycle);
        for (size_t n = 0; n < cv_graph_count(g); n++)
            free(cv_traversal_entry(g, (int)n));
        cv_graph_free(g);
    }
    free(def);
}

static int lookup(void *ud, const char *name, const char **physical_id, const json_t **attrs)
{
    const cv_tpl_resource_t *r = cv_template_resource(ud, name);
    if (!r)
        return CV_ENOENT;
    *physical_id = r->name;
    *attrs = attributes;
    return 0;
}

static void resolve(const json_t *expr, const cv_resolve_ctx_t *ctx, const char *where)
{
    char err[512] = "";
    json_t *v = cv_intrinsic_resolve(expr, ctx, where, err, sizeof(err));
    if (!v && !err[0])
        fail("resolution failed without a message", where);
    json_decref(v);
}

/* Resolves what the engine resolves: properties and metadata when acting,
 * outputs when the stack completes (with the pseudo parameters set). */
static void check_resolution(cv_template_t *tpl)
{
    json_t *params = json_copy(tpl->parameters);
    if (!params)
        return;
    static const char *const pseudo[] = {"OS::stack_name", "OS::stack_id", "OS::project_id",
                                         "OS::region"};
    for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
        if (!json_object_get(params, pseudo[i]))
            json_object_set_new(params, pseudo[i], json_string("pseudo"));
    cv_resolve_ctx_t ctx = {.parameters = params, .resource = lookup, .ud = tpl};
    for (size_t i = 0; i < tpl->nresources; i++) {
        resolve(tpl->resources[i].properties, &ctx, "properties");
        resolve(tpl->resources[i].metadata, &ctx, "metadata");
    }
    const char *name;
    const json_t *out;
    json_object_foreach(tpl->outputs, name, out)
    {
        resolve(json_object_get(out, "value"), &ctx, name);
    }
    json_decref(params);
}

/* ---------------------------------------------------------------- parsing */

static void parse(const uint8_t *data, size_t size, const json_t *param_values)
{
    cv_template_t *tpl = NULL;
    char err[1024] = "";
    int rc = cv_template_parse((const char *)data, size, "fuzz.yaml", param_values, &tpl, err,
                               sizeof(err));
    if (rc != 0) {
        if (tpl || !err[0])
            fail("refused without a message", cv_err_name(rc));
        return;
    }
    check_resources(tpl);
    check_sections(tpl);
    check_graphs(tpl);
    check_resolution(tpl);
    cv_template_free(tpl);
}

/* Values for the parameters the text declares, or NULL when it declares
 * none (or is not a map at all). */
static json_t *values_for(const uint8_t *data, size_t size)
{
    json_t *root = cv_yaml_load((const char *)data, size, "fuzz.yaml", NULL, 0);
    const json_t *declared = json_object_get(root, "parameters");
    json_t *given = NULL;
    if (json_is_object(declared) && (given = json_object())) {
        size_t pick = size ? data[size - 1] : 0, n = json_array_size(values);
        const char *name;
        const json_t *def;
        json_object_foreach((json_t *)declared, name, def)
        {
            json_object_set(given, name, json_array_get(values, pick++ % n));
        }
        json_object_set_new(given, "OS::stack_name", json_string("fuzz"));
        if (size && data[size - 1] & 1)
            json_object_set_new(given, "undeclared", json_string("x"));
    }
    json_decref(root);
    return given;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse(data, size, NULL);
    json_t *given = values_for(data, size);
    if (given)
        parse(data, size, given);
    json_decref(given);
    return 0;
}
