/*
 * cv_placement — deciding on which nodes a service's replicas go.
 *
 * Feasibility is a pipeline of filters in Service Fabric's order —
 * ReplicaExclusion, PlacementConstraint, NodeCapacity, Affinity, FaultDomain,
 * UpgradeDomain, PreferredLocation (plus the Mesos constraints after
 * PlacementConstraint and node status first) — each recording which nodes it
 * eliminated (the constraint elimination sequence). Hard constraints (priority
 * 0) are never broken; soft ones (1) only when no layout satisfies them, and
 * then reported; optimization ones (2) only steer the choice. Among feasible
 * nodes the choice keeps weighted per-metric load balanced, then domain spread;
 * ties by node name, so equal input gives equal output. The same checker
 * re-validates a layout (health reports), which is what an optimistic committer
 * will call. Pure logic, no I/O.
 */
#ifndef CV_PLACE_H
#define CV_PLACE_H

#include <jansson.h>

#include "cv_cluster.h"

typedef enum {
    CV_PLACE_NEW = 0,     /* buffered capacity is reserved */
    CV_PLACE_REPLACE = 1, /* availability actions may use the buffer: */
    CV_PLACE_UPGRADE = 2,
    CV_PLACE_FIX = 3,
    CV_PLACE_DEFRAG = 4
} cv_place_action_t;

/*
 * Places every replica of `service` on `cluster` (whose node loads already
 * include `layout`, which may be NULL; the service's own existing replicas in
 * the layout are kept). Returns the JSON result documented for
 * `convergectl place`:
 * {"service", "policy", "placements": [{"replica", "role", "node"}],
 *  "unplaced": [{"replica", "eliminationSequence": [{"constraint", "eliminated": [..]}]}],
 *  "health": [..], "warnings": [..], "rejected": null | reason}
 * Never NULL except on CV_ENOMEM.
 */
json_t *cv_place(const cv_cluster_t *cluster, const cv_service_t *service,
                 const cv_layout_t *layout, cv_place_action_t action);

/*
 * A placer: one cluster's domain index, memo of placement constraints
 * (evaluated once per class of nodes with equal properties) and scratch,
 * kept across calls. Between calls the caller may change the nodes' loads
 * and nothing else (a node's status, properties, domains or capacity
 * changed: make a new placer). On a cluster of CV_PLACE_SAMPLE_MIN_NODES
 * nodes or more, a replica is placed on the best of a bounded sample of the
 * nodes that may take it (max(2, log2 n) x 4, drawn in an order seeded by
 * the service's name and the replica, so equal input gives equal output;
 * balance there is each metric's utilisation relative to the sample's mean,
 * the highest of them), and by the exhaustive search whenever the sample
 * cannot decide; every rule is checked exactly either way. cv_place is one
 * placer's one call (docs/placement.md).
 */
typedef struct cv_placer cv_placer_t;

#define CV_PLACE_SAMPLE_MIN_NODES 512

cv_placer_t *cv_placer_new(const cv_cluster_t *cluster);
/* cv_place on the placer's cluster. */
json_t *cv_placer_place(cv_placer_t *p, const cv_service_t *service, const cv_layout_t *layout,
                        cv_place_action_t action);
void cv_placer_free(cv_placer_t *p);

/* Health reports of an existing layout: a JSON array of
 * {"source", "property", "state", "description", "timeToLive", "removeWhenExpired"}. */
json_t *cv_place_check(const cv_cluster_t *cluster, const cv_layout_t *layout);

/* The distribution policy adaptive chooses for a service on a cluster. */
cv_distribution_t cv_place_policy(const cv_cluster_t *cluster, const cv_service_t *service);

#endif
