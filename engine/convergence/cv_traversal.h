/*
 * cv_traversal — the graph a traversal walks.
 *
 * Nodes are (resource, phase). "u/<name>" update nodes converge a resource
 * of the definition, parents before children. "c/<name>" cleanup nodes exist
 * for every resource that has a record when the traversal starts; one removes
 * what is no longer wanted of that resource — versions replaced, or the whole
 * resource when it left the definition — children before parents. Edges, as
 * in Heat's convergence:
 *   u/parent → u/child     (new dependencies)
 *   u/X → c/X              (a replaced version goes only after its successor is done)
 *   c/child → c/parent     (old dependencies: children are cleaned up first)
 *   u/child → c/parent     (the old parent goes only after its children moved over)
 * A delete traversal has only cleanup nodes. Pure logic.
 */
#ifndef CV_TRAVERSAL_H
#define CV_TRAVERSAL_H

#include <stddef.h>

#include "cv_base.h"

typedef struct cv_trav_resource {
    const char *name;
    const char *const *depends; /* names of the resources it depends on */
    size_t ndepends;
} cv_trav_resource_t;

/*
 * Builds the graph of a traversal of `kind` (cv_trav_kind_t) from the
 * definition's resources (`def`, ignored for DELETE) and the resources that
 * have records (`existing`, with the dependencies of their recorded
 * versions). Dependencies on names not present are ignored. Returns NULL on
 * CV_ENOMEM or an unknown kind.
 */
cv_graph_t *cv_traversal_build(int kind, const cv_trav_resource_t *def, size_t ndef,
                               const cv_trav_resource_t *existing, size_t nexisting);

/*
 * The graph entry of a node as stored in Redis: {"s":[[succ, npreds], ...],
 * "p": npreds}, its successors with the number of predecessors each must
 * hear from, and its own number of predecessors (so that the reaper can
 * tell a ready node from its entry alone). The text holds "p":npreds once,
 * where check_begin.lua reads it without decoding the rest (the expansion
 * may add the node's hooks, "h", after it);
 * the entry of a node without successors starts with
 * CV_TRAVERSAL_NO_SUCCESSORS. Returns a malloc'd JSON string or NULL.
 */
char *cv_traversal_entry(const cv_graph_t *g, int node);
#define CV_TRAVERSAL_NO_SUCCESSORS "{\"s\":[],"

#endif
