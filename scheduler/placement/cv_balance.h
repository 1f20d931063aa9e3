/*
 * cv_balance — the cluster resource manager's planner: its settings, the
 * constraint check and balancing (with defragmentation) over the live
 * cluster model, as moves of single replicas (docs/crm.md).
 *
 * Pure logic, no I/O: scheduler/live reads the model from Redis, calls
 * cv_balance on its timers and writes the moves it returns into the
 * services' records (svc_move.lua); each service's reconcile then carries
 * its moves out (scheduler/placement/reconcile_move.c).
 *
 * The model is cv_reconcile's (cv_reconcile.h), and besides:
 *   services.<svc>.loads: {"<index>": {"<metric>": number, .., "time": Unix s}}
 *     the loads reported for the service's replicas ({cluster}:load:<svc>),
 * and a replica report's "load" ({metric: number}) is its measured load.
 * The load of a replica for a metric is, first found: the reported load,
 * the report's load, the spec's declared load (primaryLoad, secondaryLoad
 * for a secondary).
 *
 * The state (what the manager remembers between passes, kept by the caller
 * in {cluster}:crm:status "state"; {} at first): the movement throttles'
 * windows and each node type's last balancing time. cv_balance returns the
 * new state in its result.
 *
 * The result:
 *   {"phase": "constraint|balancing",
 *    "moves": [{"svc", "index", "from", "to", "reason", "detail"}],
 *    "imbalance": [{"metric", "nodeType" (null: the whole cluster),
 *                   "max", "min", "ratio", "threshold", "activity",
 *                   "strategy": "balance|defrag", "imbalanced": bool,
 *                   "after": ratio once the moves are made}],
 *    "throttled": number of moves the throttles held back,
 *    "why": null | why nothing moved though something is out of balance,
 *    "state": the new state}
 * reason: "constraint" (capacity, placement constraint, domains),
 * "balancing" or "defragmentation".
 */
#ifndef CV_BALANCE_H
#define CV_BALANCE_H

#include <jansson.h>
#include <stddef.h>

typedef enum { CV_BALANCE_CONSTRAINT = 0, CV_BALANCE_BALANCING = 1 } cv_balance_phase_t;

/* The manager's settings from {cluster}:settings (the cluster manifest
 * without its nodes: our format's "crm" object, or Service Fabric's
 * fabricSettings sections; docs/crm.md "Settings"), every default applied:
 *   {"PLBRefreshGap", "MinPlacementInterval", "MinConstraintCheckInterval",
 *    "MinLoadBalancingInterval" (s), "GlobalMovementThrottleThreshold",
 *    "GlobalMovementThrottleCountingInterval",
 *    "MovementPerPartitionThrottleThreshold",
 *    "MovementPerPartitionThrottleCountingInterval",
 *    "SeparateBalancingStrategyPerNodeType",
 *    "metrics": {"<metric>": {"balancingThreshold", "activityThreshold",
 *                             "defragmentation"}},
 *    "nodeTypes": {"<type>": {"metrics": {..as above..},
 *                             "MinLoadBalancingInterval"}}}
 * A new object, or NULL with errstr naming the setting and what is wrong. */
json_t *cv_balance_settings(const json_t *settings, char *errstr, size_t errstr_size);

/* One pass of `phase` on `model` with `state`. Returns the result, or NULL
 * with errstr when the model cannot be planned on. */
json_t *cv_balance(const json_t *model, cv_balance_phase_t phase, const json_t *state, char *errstr,
                   size_t errstr_size);

#endif
