#include "cv_expand.h"

#include "cv_hot.h"
#include "cv_traversal.h"

#include <stdlib.h>
#include <string.h>

json_t *cv_expand_rdef(const cv_tpl_resource_t *res)
{
    json_t *deps = json_array();
    for (size_t i = 0; i < res->ndepends; i++)
        json_array_append_new(deps, json_string(res->depends[i]));
    json_t *d = json_pack("{s:s, s:O, s:s, s:O, s:o}", "type", res->type, "properties",
                          res->properties, "deletion_policy", res->deletion_policy, "metadata",
                          res->metadata, "depends", deps);
    if (d && res->external_id)
        json_object_set(d, "external_id", res->external_id);
    /* The type the template wrote, when the registry mapped it to another. */
    if (d && res->declared_type && strcmp(res->declared_type, res->type) != 0)
        json_object_set_new(d, "declared_type", json_string(res->declared_type));
    const cv_rtype_t *type = cv_rtype_lookup(res->type);
    if (d && type && type->nested) {
        json_object_set_new(d, "nested", json_true());
        /* What resource_facade reads besides metadata and deletion_policy. */
        json_object_set(d, "update_policy", res->update_policy);
    }
    return d;
}

/* The recorded side of the graph: one entry per index entry, its
 * dependencies parsed; the names point into `deps`, kept alive with it. */
typedef struct recorded {
    cv_trav_resource_t *res;
    json_t **deps;
    const char ***names;
    size_t n;
} recorded_t;

static void recorded_free(recorded_t *r)
{
    for (size_t i = 0; i < r->n; i++) {
        json_decref(r->deps[i]);
        free(r->names[i]);
    }
    free(r->res);
    free(r->deps);
    free(r->names);
}

static bool recorded_load(recorded_t *r, const json_t *index)
{
    size_t n = json_object_size(index);
    r->n = 0;
    r->res = calloc(n + 1, sizeof(*r->res));
    r->deps = calloc(n + 1, sizeof(*r->deps));
    r->names = calloc(n + 1, sizeof(*r->names));
    if (!r->res || !r->deps || !r->names)
        return false;
    const char *name;
    json_t *text;
    json_object_foreach((json_t *)index, name, text)
    {
        json_t *deps = json_loads(json_string_value(text), 0, NULL);
        size_t nd = json_array_size(deps);
        r->deps[r->n] = deps;
        r->names[r->n] = calloc(nd + 1, sizeof(char *));
        if (!r->names[r->n]) {
            json_decref(deps);
            return false;
        }
        for (size_t d = 0; d < nd; d++)
            r->names[r->n][d] = json_string_value(json_array_get(deps, d));
        r->res[r->n] = (cv_trav_resource_t){name, r->names[r->n], nd};
        r->n++;
    }
    return true;
}

cv_graph_t *cv_expand_graph(int kind, const cv_template_t *tpl, const json_t *index)
{
    size_t n = tpl->nresources;
    cv_trav_resource_t *def = calloc(n + 1, sizeof(*def));
    recorded_t rec = {0};
    cv_graph_t *g = NULL;
    if (def && recorded_load(&rec, index)) {
        for (size_t i = 0; i < n; i++)
            def[i] = (cv_trav_resource_t){tpl->resources[i].name,
                                          (const char *const *)tpl->resources[i].depends,
                                          tpl->resources[i].ndepends};
        g = cv_traversal_build(kind, def, n, rec.res, rec.n);
    }
    recorded_free(&rec);
    free(def);
    return g;
}
