#include "cv_traversal.h"

#include "cv_keys.h"
#include "cv_msg.h"

#include <jansson.h>
#include <stdlib.h>

static int add_nodes(cv_graph_t *g, int phase, const cv_trav_resource_t *res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char node[CV_NAME_MAX + 2];
        cv_node_name(node, sizeof(node), phase, res[i].name);
        if (cv_graph_add_node(g, node) < 0)
            return -1;
    }
    return 0;
}

/* Node i of the graph is resource i: nodes were added in resource order. */
static int add_dependency_edges(cv_graph_t *g, int phase, const cv_trav_resource_t *res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t d = 0; d < res[i].ndepends; d++) {
            char node[CV_NAME_MAX + 2];
            cv_node_name(node, sizeof(node), phase, res[i].depends[d]);
            int parent = cv_graph_find(g, node);
            if (parent < 0)
                continue;
            int rc = phase == CV_PHASE_UPDATE ? cv_graph_add_edge(g, parent, (int)i)
                                              : cv_graph_add_edge(g, (int)i, parent);
            if (rc)
                return rc;
        }
    }
    return 0;
}

cv_graph_t *cv_traversal_build(int kind, const cv_trav_resource_t *res, size_t n)
{
    int phase;
    if (kind == CV_TRAV_CREATE)
        phase = CV_PHASE_UPDATE;
    else if (kind == CV_TRAV_DELETE)
        phase = CV_PHASE_CLEANUP;
    else
        return NULL;
    cv_graph_t *g = cv_graph_new();
    if (!g || add_nodes(g, phase, res, n) || add_dependency_edges(g, phase, res, n)) {
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
    json_t *entry = json_pack("{s:o}", "s", list);
    char *text = json_dumps(entry, JSON_COMPACT);
    json_decref(entry);
    return text;
}
