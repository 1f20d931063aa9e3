/*
 * cv_reconcile — the planner of the live placement engine: given the live
 * cluster model (as JSON) and one service, decides where each replica of the
 * service runs now, and what must change for that.
 *
 * Pure logic, no I/O: scheduler/live reads the model from Redis
 * (docs/services.md), calls cv_reconcile and commits its plan with
 * svc_commit.lua. Every rule of docs/services.md "Placement on the live
 * cluster" is here: replicas that are fine stay; missing indexes are placed
 * with cv_place (the buffer only for availability actions: replacing lost,
 * given-up, drained or violating replicas); scale-down removes the highest
 * indexes; lost nodes' replicas move after the grace period (stateful ones
 * after the node's fence time plus a margin); a changed process digest gives
 * every replica a new replica id; a replica the restart policy gave up on
 * moves and its node is blocklisted for the service after N failures (a
 * service every eligible node has blocklisted is `blocked`, with why); a
 * service that cannot fit even on an empty cluster is rejected with the
 * shortfall; a deleting service loses every replica.
 *
 * The model:
 *   {"now": Unix s,
 *    "settings": <{cluster}:settings: the manifest without nodes, and "live">,
 *    "nodes": {"<node>": {"description": {..}, "alive": bool,
 *                         "admin": "enabled|disabled|draining",
 *                         "down_since": Unix s | absent, "fence_ms": n,
 *                         "load": {metric: measured load} | absent,
 *                         "assign": {rid: replica spec}, "report": {rid: report}}},
 *    "services": {"<svc>": {"spec", "state", "gen", "stack", "stack_name",
 *                           "resource", "placement", "unplaced", "blocklist",
 *                           "failures", "gave_up", "blocked", "rejected"}},
 *    "health": {"<source>|<property>": report}}
 * (JSON strings holding JSON, as Redis stores them, are accepted as well.)
 *
 * The plan:
 *   {"svc", "gen" (the generation planned on), "stack", "resource", "state",
 *    "placement": [{"index", "rid", "node", "role", "since"}],
 *    "unplaced": [{"index", "eliminationSequence"}], "blocklist": {node: until},
 *    "failures": {node: [Unix s, ..]},
 *    "gave_up": {node: {"reason", "digest", "time"}} (the last give-up counted there),
 *    "blocked": null | {"reason": "AllEligibleNodesBlocklisted", "description",
 *                       "nodes": {node: {"until", "reason"}}} (an index waits and every
 *                       eligible node is blocklisted),
 *    "rejected": null | {"reason", "description", "shortfall", "required", "remaining"},
 *    "ops": [{"op": "assign", "node", "rid", "spec"} | {"op": "unassign", "node", "rid"}],
 *    "events": [{"physical_id", "action", "status", "reason"}],
 *    "health": [report], "changed": bool (something to commit), "remove": bool}
 */
#ifndef CV_RECONCILE_H
#define CV_RECONCILE_H

#include <jansson.h>
#include <stddef.h>

/* Defaults of the "live" object of {cluster}:settings. */
#define CV_RECONCILE_GRACE_S 5.0          /* downGraceSeconds */
#define CV_RECONCILE_FENCE_MARGIN_MS 2000 /* fenceMarginMs */
#define CV_RECONCILE_BLOCKLIST_N 1        /* blocklistAfterFailures */
#define CV_RECONCILE_BLOCKLIST_MIN 10.0   /* blocklistMinutes */
#define CV_RECONCILE_FENCE_MS 10000       /* a node that does not say its fence_ms */
#define CV_RECONCILE_HANDOVER_S 60.0      /* moveHandoverSeconds */

/* The source of the health reports a reconcile writes for service `svc`:
 * "System.PLB:<svc>" into buf. */
void cv_reconcile_health_source(char *buf, size_t size, const char *svc);

/* Plans service `svc` on `model`. Returns the plan (never NULL but on
 * CV_ENOMEM), or NULL with errstr saying why the model cannot be planned on
 * (the service is unknown, the cluster's nodes do not load). A service
 * spec that does not load is a plan with `rejected`. */
json_t *cv_reconcile(const json_t *model, const char *svc, char *errstr, size_t errstr_size);

/* The placement library's description of the service of `spec` (its
 * placement keys: docs/services.md "Service spec"), named `name`, with
 * `replicas` replicas (at least 1). A new object. */
json_t *cv_reconcile_service_desc(const json_t *spec, const char *name, int replicas);

/* The node-level health reports of `model`: for every node up whose
 * measured load of a metric exceeds its capacity, a Warning of source
 * "System.PLB:<node>", property "NodeCapacity_<metric>". A new array. */
json_t *cv_reconcile_node_reports(const json_t *model);

#endif
