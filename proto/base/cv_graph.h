/*
 * cv_graph — a directed dependency graph of named nodes.
 *
 * Edges point from parent to child (the parent must be done first). Used by
 * template validation (cycle detection with the cycle named) and by the
 * traversal builder (cv_traversal.h). Pure logic, no I/O.
 */
#ifndef CV_GRAPH_H
#define CV_GRAPH_H

#include <stddef.h>

typedef struct cv_graph cv_graph_t;

cv_graph_t *cv_graph_new(void);
void cv_graph_free(cv_graph_t *g);

/* Adds a node (or finds the existing one of that name); returns its index
 * (>= 0, dense, in insertion order) or CV_ENOMEM. */
int cv_graph_add_node(cv_graph_t *g, const char *name);

/* Returns the index of `name`, or CV_ENOENT. */
int cv_graph_find(const cv_graph_t *g, const char *name);

/* Adds parent → child; adding an existing edge again is a no-op. Returns 0,
 * CV_EINVAL for an index out of range, or CV_ENOMEM. */
int cv_graph_add_edge(cv_graph_t *g, int parent, int child);

size_t cv_graph_count(const cv_graph_t *g);
const char *cv_graph_name(const cv_graph_t *g, int node);

/* Parents / children of a node, in the order the edges were added. */
const int *cv_graph_preds(const cv_graph_t *g, int node, size_t *n);
const int *cv_graph_succs(const cv_graph_t *g, int node, size_t *n);

/*
 * Returns 0 when the graph is acyclic, else CV_ECYCLE and writes the cycle
 * as "a -> b -> c -> a" into errstr (a self-dependency is "a -> a").
 * Iterative: safe for chains of a million nodes.
 */
int cv_graph_find_cycle(const cv_graph_t *g, char *errstr, size_t errstr_size);

/* Writes a topological order (parents first; ties in insertion order) into
 * `order` (cv_graph_count() entries). Returns 0 or CV_ECYCLE. */
int cv_graph_topo_order(const cv_graph_t *g, int *order);

#endif
