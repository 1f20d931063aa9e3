/*
 * cli_graph — what `convergectl graph` draws, decided from a stack's
 * resources without Redis: the Graphviz dot text of its dependency graph.
 * Pure.
 *
 * One node per resource, labelled with its name, type and status and
 * filled by status (COMPLETE green, IN_PROGRESS yellow, FAILED red, a
 * resource nothing was done to yet grey); one edge A -> B for every
 * resource B that A depends on (depends_on, get_resource, get_attr): arrows
 * point from the dependent to what it needs, the direction of `depends_on`
 * (and of `terraform graph`). Drawn bottom to top, so that what is created
 * first is on top.
 */
#ifndef CLI_GRAPH_H
#define CLI_GRAPH_H

#include <stddef.h>

/* A resource as the graph shows it. Strings are UTF-8 (what jansson
 * holds); `depends` names other resources, and a name that is no node of
 * the graph draws no edge. */
typedef struct cli_graph_node {
    const char *name, *type, *status;
    const char *const *depends;
    size_t ndepends;
} cli_graph_node_t;

/* The fill colour of a status: "palegreen" (*_COMPLETE), "yellow"
 * (*_IN_PROGRESS), "salmon" (*_FAILED), "lightgrey" (INIT_COMPLETE: no
 * record yet, or anything else). */
const char *cli_graph_colour(const char *status);

/* The dot text of the graph titled `title` (the stack's name), nodes and
 * then edges in the order given: a malloc'd string, NULL when out of
 * memory. Every name is a quoted dot ID: '"' and '\' are escaped and a
 * control character is written \u00XX, so that distinct names stay
 * distinct IDs and the text always parses. */
char *cli_graph_dot(const char *title, const cli_graph_node_t *nodes, size_t n);

#endif
