/*
 * cv_expand — the pure half of expanding a traversal (a STACK job): what
 * each resource's stored definition says and which graph the traversal
 * walks. The STACK job's step machine (cv_stackjob.h) writes what these
 * give to Redis, in the engine and in the scenario harness alike, so the
 * two never disagree on a graph. No I/O.
 */
#ifndef CV_EXPAND_H
#define CV_EXPAND_H

#include <jansson.h>

#include "cv_base.h"
#include "cv_hot.h"

/*
 * The definition of one resource as the traversal stores it (the rdef
 * hash) and check_begin.lua hands it to the engine: {"type", "properties",
 * "deletion_policy", "metadata", "depends"}, plus "nested": true for a
 * nested-stack type, so that check_begin.lua hands over the stack's
 * template files with it, and only then. The CHECK job reads it back
 * through cv_rdef_decode (cv_rdef.h), the one reader of these keys.
 * NULL when out of memory.
 */
json_t *cv_expand_rdef(const cv_tpl_resource_t *res);

/*
 * The graph of a traversal of `kind` (cv_trav_kind_t) over the definition
 * `tpl` and the resources that have records (`index`: name -> JSON text of
 * the recorded version's dependencies, as the index hash holds them).
 * NULL when out of memory.
 */
cv_graph_t *cv_expand_graph(int kind, const cv_template_t *tpl, const json_t *index);

#endif
