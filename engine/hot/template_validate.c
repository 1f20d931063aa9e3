/*
 * template_validate — the dependency graph of a template's resources.
 *
 * A resource depends on what it names in depends_on and on every resource
 * its properties or metadata reference through get_resource / get_attr
 * (outputs are read after the stack is built, so they add no edges). The
 * graph must be acyclic; a cycle is reported with its path so that the user
 * sees which reference to break.
 */
#include "cv__template_internal.h"
#include "cv_base.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int collect_names(const json_t *depends_on, const cv_tpl_resource_t *res, json_t *names)
{
    if (json_is_string(depends_on) && json_array_append(names, (json_t *)depends_on))
        return CV_ENOMEM;
    for (size_t i = 0; json_is_array(depends_on) && i < json_array_size(depends_on); i++)
        if (json_array_append(names, json_array_get(depends_on, i)))
            return CV_ENOMEM;
    cv_intrinsic_references(res->properties, names);
    cv_intrinsic_references(res->metadata, names);
    return 0;
}

int cv__tpl_depends(cv_tpl_resource_t *res, const json_t *depends_on)
{
    json_t *names = json_array();
    int rc = names ? collect_names(depends_on, res, names) : CV_ENOMEM;
    size_t n = json_array_size(names);
    const char **sorted = n ? malloc(n * sizeof(*sorted)) : NULL;
    if (rc == 0 && n && !(sorted && (res->depends = calloc(n, sizeof(*res->depends)))))
        rc = CV_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++)
        sorted[i] = json_string_value(json_array_get(names, i));
    if (rc == 0 && n)
        qsort(sorted, n, sizeof(*sorted), cmp_names);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0)
            continue;
        if (!(res->depends[res->ndepends++] = strdup(sorted[i])))
            rc = CV_ENOMEM;
    }
    free(sorted);
    json_decref(names);
    return rc;
}

static int build_graph(const cv_template_t *tpl, cv_graph_t *g)
{
    for (size_t i = 0; i < tpl->nresources; i++)
        if (cv_graph_add_node(g, tpl->resources[i].name) < 0)
            return CV_ENOMEM;
    for (size_t i = 0; i < tpl->nresources; i++) {
        const cv_tpl_resource_t *r = &tpl->resources[i];
        for (size_t j = 0; j < r->ndepends; j++) {
            int parent = cv_graph_find(g, r->depends[j]);
            if (parent >= 0 && cv_graph_add_edge(g, parent, (int)i) < 0)
                return CV_ENOMEM;
        }
    }
    return 0;
}

static bool is_left(const cv_template_t *tpl, const bool *done, const char *name)
{
    for (size_t i = 0; i < tpl->nresources; i++)
        if (!done[i] && strcmp(tpl->resources[i].name, name) == 0)
            return true;
    return false;
}

/* Heat's text for a cycle (heat/engine/dependencies.py): what is left of
 * the graph once everything that can be ordered is taken away, as
 * "{a: {b}, b: {a}}", each resource with what it still requires. Only
 * reached on a cycle, so the quadratic walk costs nothing in the common case. */
static void heat_cycle_text(const cv_template_t *tpl, char *out, size_t size)
{
    bool *done = calloc(tpl->nresources ? tpl->nresources : 1, sizeof(*done));
    for (bool progress = done != NULL; progress;) {
        progress = false;
        for (size_t i = 0; i < tpl->nresources; i++) {
            const cv_tpl_resource_t *r = &tpl->resources[i];
            size_t j = 0;
            while (!done[i] && j < r->ndepends && !is_left(tpl, done, r->depends[j]))
                j++;
            if (!done[i] && j == r->ndepends)
                done[i] = progress = true;
        }
    }
    size_t len = (size_t)snprintf(out, size, "{");
    for (size_t i = 0; done && i < tpl->nresources && len < size; i++) {
        const cv_tpl_resource_t *r = &tpl->resources[i];
        if (done[i])
            continue;
        len += (size_t)snprintf(out + len, size - len, "%s%s: {", len > 1 ? ", " : "", r->name);
        bool first = true;
        for (size_t j = 0; j < r->ndepends && len < size; j++) {
            if (!is_left(tpl, done, r->depends[j]))
                continue;
            len +=
                (size_t)snprintf(out + len, size - len, "%s%s", first ? "" : ", ", r->depends[j]);
            first = false;
        }
        if (len < size)
            len += (size_t)snprintf(out + len, size - len, "}");
    }
    if (len < size)
        snprintf(out + len, size - len, "}");
    free(done);
}

int cv__tpl_check_cycles(const cv__tpl_ctx_t *ctx, const cv_template_t *tpl)
{
    cv_graph_t *g = cv_graph_new();
    int rc = g ? build_graph(tpl, g) : CV_ENOMEM;
    char cycle[512];
    int found = rc == 0 ? cv_graph_find_cycle(g, cycle, sizeof(cycle)) : 0;
    if (found == CV_ECYCLE) {
        char text[700];
        heat_cycle_text(tpl, text, sizeof(text));
        rc = cv__tpl_err(ctx, CV_ECYCLE, "resources", "Circular Dependency Found: %s", text);
    } else if (found)
        rc = found;
    cv_graph_free(g);
    return rc;
}
