/*
 * fuzz_intrinsic — the intrinsic-function evaluator (cv_intrinsic_resolve,
 * engine/hot/intrinsic.c) on expressions read from arbitrary YAML or
 * JSON bytes, with no template validation in front of it: the engine
 * resolves stored definitions, and resolution must hold on its own.
 *
 * The context has fixed parameters (scalars, lists, nested maps, pseudo
 * parameters) and a resource callback that knows "server" and "db" (a
 * physical id and attributes), "pending" (no physical id yet, no
 * attributes), fails on "broken" with an I/O error and answers CV_ENOENT
 * for every other name. Besides never crashing or leaking:
 *   - a NULL result comes with a message, a result without one;
 *   - resolving twice gives equal results;
 *   - the caller owns what it gets: emptying every list and map in the
 *     result changes neither the expression, nor the parameters, nor the
 *     attributes the callback handed out;
 *   - cv_intrinsic_references lists names only (strings).
 */
#include "cv_base.h"
#include "cv_hot.h"
#define FUZZ_NAME "fuzz_intrinsic"
#include "fuzz_util.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *params, *params_copy;
static json_t *server_attrs, *db_attrs, *no_attrs, *attrs_copy;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init(argc, argv);
    params = json_pack("{s:s,s:i,s:f,s:b,s:[s,s,i],s:{s:{s:[s,{s:s}]}},s:s,s:n,s:[{s:i}],"
                       "s:s,s:s,s:I}",
                       "name", "web", "port", 8080, "ratio", 1.5, "flag", 1, "list", "a", "b", 3,
                       "map", "k", "deep", "x", "y", "z", "empty", "", "none", "json_list", "a", 1,
                       "OS::stack_name", "fuzz", "OS::stack_id", "0e4b-11", "big",
                       (json_int_t)INT64_MIN);
    server_attrs = json_pack("{s:s,s:{s:[s,s]},s:[i,i,i],s:s,s:{s:n,s:[]}}", "first_address",
                             "10.0.0.1", "networks", "private", "10.0.0.2", "10.0.0.3", "list", 1,
                             2, 3, "value", "v", "map", "null", "empty");
    db_attrs = json_pack("{s:s,s:i,s:b}", "value", "$name", "output", 5, "ready", 0);
    no_attrs = json_object();
    attrs_copy = json_pack("[O,O,O]", server_attrs, db_attrs, no_attrs);
    params_copy = json_deep_copy(params);
    json_t *deep = json_deep_copy(attrs_copy);
    json_decref(attrs_copy);
    attrs_copy = deep;
    return 0;
}

static int lookup(void *ud, const char *name, const char **physical_id, const json_t **attrs)
{
    (void)ud;
    if (strcmp(name, "server") == 0) {
        *physical_id = "srv-1";
        *attrs = server_attrs;
    } else if (strcmp(name, "db") == 0) {
        *physical_id = "db-0e4b";
        *attrs = db_attrs;
    } else if (strcmp(name, "pending") == 0) {
        *physical_id = NULL;
        *attrs = no_attrs;
    } else if (strcmp(name, "broken") == 0) {
        return CV_EIO;
    } else {
        return CV_ENOENT;
    }
    return 0;
}

/* Empties every list and map inside `v`, as a caller changing its result might. */
static void scribble(json_t *v)
{
    const char *key;
    json_t *item;
    size_t i;
    json_array_foreach(v, i, item)
    {
        scribble(item);
    }
    json_object_foreach(v, key, item)
    {
        scribble(item);
    }
    json_array_clear(v);
    json_object_clear(v);
}

static json_t *resolve(const json_t *expr, const cv_resolve_ctx_t *ctx)
{
    char err[512] = "";
    json_t *v = cv_intrinsic_resolve(expr, ctx, "resources.x.properties", err, sizeof(err));
    if (!v && !err[0])
        fail("resolution failed without a message", "");
    if (v && err[0])
        fail("resolution succeeded with a message", err);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *expr = cv_yaml_load((const char *)data, size, "expr.yaml", NULL, 0);
    if (!expr)
        return 0;
    json_t *expr_copy = json_deep_copy(expr);
    cv_resolve_ctx_t ctx = {.parameters = params, .resource = lookup};
    json_t *first = resolve(expr, &ctx), *second = resolve(expr, &ctx);
    if (!first != !second || (first && !json_equal(first, second)))
        fail("resolving twice differs", "");
    if (first)
        scribble(first);
    json_t *attrs_now = json_pack("[O,O,O]", server_attrs, db_attrs, no_attrs);
    if (!json_equal(expr, expr_copy) || !json_equal(params, params_copy) ||
        !json_equal(attrs_now, attrs_copy))
        fail("changing the result changed the context or the expression", "");
    json_t *refs = json_array();
    cv_intrinsic_references(expr, refs);
    for (size_t i = 0; i < json_array_size(refs); i++)
        if (!json_is_string(json_array_get(refs, i)))
            fail("a reference that is not a name", "");
    json_decref(refs);
    json_decref(attrs_now);
    json_decref(first);
    json_decref(second);
    json_decref(expr_copy);
    json_decref(expr);
    return 0;
}
