#include "cv_traversal.h"

#include "cv_base.h"
#include "cv_contract.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>

static int node_of(cv_graph_t *g, int phase, const char *name, int add)
{
    char node[CV_NAME_MAX + 2];
    cv_node_name(node, sizeof(node), phase, name);
    return add ? cv_graph_add_node(g, node) : cv_graph_find(g, node);
}

static int add_nodes(cv_graph_t *g, int phase, const cv_trav_resource_t *res, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (node_of(g, phase, res[i].name, 1) < 0)
            return CV_ENOMEM;
    return 0;
}

/* For each resource R of `res` and each D it depends on, an edge between the
 * node of D in `dep_phase` and the node of R in `own_phase`: D first when
 * `dep_first`, else R first. Missing nodes mean "not in this traversal". */
static int add_dep_edges(cv_graph_t *g, const cv_trav_resource_t *res, size_t n, int own_phase,
                         int dep_phase, int dep_first)
{
    for (size_t i = 0; i < n; i++) {
        int self = node_of(g, own_phase, res[i].name, 0);
        for (size_t d = 0; self >= 0 && d < res[i].ndepends; d++) {
            int dep = node_of(g, dep_phase, res[i].depends[d], 0);
            if (dep < 0)
                continue;
            int rc = dep_first ? cv_graph_add_edge(g, dep, self) : cv_graph_add_edge(g, self, dep);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int add_replacement_edges(cv_graph_t *g, const cv_trav_resource_t *existing, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int u = node_of(g, CV_PHASE_UPDATE, existing[i].name, 0);
        int c = node_of(g, CV_PHASE_CLEANUP, existing[i].name, 0);
        if (u >= 0 && c >= 0 && cv_graph_add_edge(g, u, c))
            return CV_ENOMEM;
    }
    return 0;
}

static int build(cv_graph_t *g, int kind, const cv_trav_resource_t *def, size_t ndef,
                 const cv_trav_resource_t *existing, size_t nexisting)
{
    bool updates = kind != CV_TRAV_DELETE;
    if (updates && add_nodes(g, CV_PHASE_UPDATE, def, ndef))
        return CV_ENOMEM;
    if (add_nodes(g, CV_PHASE_CLEANUP, existing, nexisting))
        return CV_ENOMEM;
    int rc = 0;
    if (updates) {
        rc = add_dep_edges(g, def, ndef, CV_PHASE_UPDATE, CV_PHASE_UPDATE, 1);
        if (!rc)
            rc = add_replacement_edges(g, existing, nexisting);
        if (!rc) /* u/child → c/old parent */
            rc = add_dep_edges(g, def, ndef, CV_PHASE_UPDATE, CV_PHASE_CLEANUP, 0);
    }
    if (!rc) /* c/child → c/parent */
        rc = add_dep_edges(g, existing, nexisting, CV_PHASE_CLEANUP, CV_PHASE_CLEANUP, 0);
    return rc;
}

cv_graph_t *cv_traversal_build(int kind, const cv_trav_resource_t *def, size_t ndef,
                               const cv_trav_resource_t *existing, size_t nexisting)
{
    if (kind < CV_TRAV_CREATE || kind > CV_TRAV_ROLLBACK)
        return NULL;
    cv_graph_t *g = cv_graph_new();
    if (!g || build(g, kind, def, ndef, existing, nexisting)) {
        cv_graph_free(g);
        return NULL;
    }
    return g;
}

char *cv_traversal_entry(const cv_graph_t *g, int node)
{
    size_t nsucc, npreds;
    const int *succ = cv_graph_succs(g, node, &nsucc);
    json_t *list = json_array();
    for (size_t i = 0; i < nsucc; i++) {
        cv_graph_preds(g, succ[i], &npreds);
        json_array_append_new(list,
                              json_pack("[s, I]", cv_graph_name(g, succ[i]), (json_int_t)npreds));
    }
    cv_graph_preds(g, node, &npreds);
    json_t *entry = json_pack("{s:o, s:I}", "s", list, "p", (json_int_t)npreds);
    char *text = json_dumps(entry, JSON_COMPACT);
    json_decref(entry);
    return text;
}
