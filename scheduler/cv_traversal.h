/*
 * cv_traversal — the graph a traversal walks.
 *
 * Nodes are (resource, phase): "u/<name>" update nodes converge a resource to
 * the definition, parents before children; "c/<name>" cleanup nodes remove
 * one, children before parents (the edges reversed). A create traversal has
 * only update nodes, a delete traversal only cleanup nodes. Pure logic.
 */
#ifndef CV_TRAVERSAL_H
#define CV_TRAVERSAL_H

#include <stddef.h>

#include "cv_graph.h"

typedef struct cv_trav_resource {
    const char *name;
    const char *const *depends; /* names of the resources it depends on */
    size_t ndepends;
} cv_trav_resource_t;

/*
 * Builds the graph of a traversal of `kind` (cv_trav_kind_t: CREATE or
 * DELETE) over `n` resources. Dependencies on names not in the list are
 * ignored. Returns NULL on CV_ENOMEM or an unsupported kind.
 */
cv_graph_t *cv_traversal_build(int kind, const cv_trav_resource_t *res, size_t n);

/*
 * The graph entry of a node as stored in Redis: {"s":[[succ, npreds], ...]},
 * its successors with the number of predecessors each must hear from.
 * Returns a malloc'd JSON string or NULL.
 */
char *cv_traversal_entry(const cv_graph_t *g, int node);

#endif
