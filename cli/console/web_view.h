/*
 * web_view — the documents of converge-web's API that are decided, not
 * read: a stack's dependency graph with each node's status, and the
 * cluster map (nodes by fault and upgrade domain, their replicas, load per
 * metric against capacity and buffer, health reports). Built from what the
 * readers return (cli_live.h, cli_nodemap.h, cli_replview.h and the
 * stack's template); pure, so tested without Redis.
 */
#ifndef WEB_VIEW_H
#define WEB_VIEW_H

#include <jansson.h>

/*
 * The graph of a stack: `resources` is its template's resources in
 * template order, [{"name", "type", "depends": [names]}]; `records` maps a
 * resource name to its record's fields ({"status", "reason",
 * "physical_id", "type"}; absent: not created yet). The document:
 *   {"nodes": [{"name", "type", "status" ("INIT_COMPLETE" without a
 *     record), "state": init|in_progress|complete|failed, "reason",
 *     "physical_id"}],
 *    "edges": [{"from": dependency, "to": dependent}]}
 * in template order; a dependency on a name that is no resource is left
 * out (the template's validation refuses it; a record left behind is no
 * node). A new object.
 */
json_t *web_view_graph(const json_t *resources, const json_t *records);

/* The state a resource or stack status is in, for colours and filters:
 * "in_progress", "complete", "failed", or "init" ("" and INIT_*). */
const char *web_view_state(const char *status);

/*
 * The cluster map: `rows` are cli_nodes_rows' (sorted by name), `settings`
 * the {cluster}:settings object or null (its settings.nodeBufferPercentage
 * gives each metric's buffer), `health` cli_health_rows'. The document:
 *   {"fault_domains": [sorted], "upgrade_domains": [sorted],
 *    "summary": {"nodes", "up", "down", "disabled", "replicas"},
 *    "nodes": [{"name", "type", "fault_domain", "upgrade_domain",
 *      "status": up|down|disabled (disabled: up but not taking replicas,
 *      admin disabled or draining), "admin", "replicas": replica_list,
 *      "load_source", "metrics": [{"name", "load", "capacity" (null:
 *      unlimited), "buffer" (fraction of capacity kept free for moves),
 *      "usable": capacity less the buffer, or null}]}],
 *    "health": the health rows}
 * A new object.
 */
json_t *web_view_cluster(const json_t *rows, const json_t *settings, const json_t *health);

#endif
