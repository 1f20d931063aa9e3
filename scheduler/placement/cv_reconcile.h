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
 * The plan is cv_reconcile_plan_t below: what the commit does (the nodes'
 * assignments to change, the events to add) in C structs, and the service
 * record it stores as the JSON documents that are its contract in Redis.
 */
#ifndef CV_RECONCILE_H
#define CV_RECONCILE_H

#include "cv_base.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* One change to a node's assignments ({cluster}:assign:<node>), as
 * svc_commit.lua makes it. */
typedef enum { CV_RECONCILE_ASSIGN, CV_RECONCILE_UNASSIGN } cv_reconcile_op_kind_t;

typedef struct cv_reconcile_op {
    cv_reconcile_op_kind_t kind;
    char *node;
    char *rid;
    json_t *spec; /* ASSIGN: the replica spec the node's agent runs; NULL for UNASSIGN */
} cv_reconcile_op_t;

/* One event for the stream of the service's stack. */
typedef struct cv_reconcile_event {
    char *physical_id;  /* the replica's name ("<resource>-<index>.<stack>"), "" for the service */
    const char *action; /* PLACE, DELETE, UPDATE: a static string */
    const char *status; /* COMPLETE, IN_PROGRESS, FAILED: a static string */
    char *reason;
} cv_reconcile_event_t;

typedef CV_VEC(cv_reconcile_op_t) cv_reconcile_ops_t;
typedef CV_VEC(cv_reconcile_event_t) cv_reconcile_events_t;

/* The service record as svc_commit.lua stores it (docs/keyspace.md): JSON
 * is its contract, so each field stays a JSON document here and the commit
 * writes it as it is; NULL is nothing stored (no blocked verdict, no
 * rejection, no move, no rollout). */
typedef struct cv_reconcile_record {
    json_t *placement; /* [{"index", "rid", "node", "role", "since", "from"?}] */
    json_t *unplaced;  /* [{"index", "eliminationSequence"}] */
    json_t *blocklist; /* {node: until (Unix s)} */
    json_t *failures;  /* {node: [Unix s, ...]} */
    json_t *gave_up;   /* {node: {"reason", "digest", "time"}}: the last give-up there */
    /* {"reason": "AllEligibleNodesBlocklisted", "description", "nodes": {node:
     * {"until", "reason"}}}: an index waits and every eligible node is blocklisted */
    json_t *blocked;
    json_t *rejected; /* {"reason", "description", "shortfall", "required", "remaining"} */
    json_t *health;   /* [report]: every health report of the service */
    json_t *moves;    /* {index: move}: moves not done yet (docs/crm.md) */
    json_t *rollout;  /* the rolling update and where it stands (docs/crm.md) */
} cv_reconcile_record_t;

/* The plan of one service. */
typedef struct cv_reconcile_plan {
    char *svc;
    int64_t gen; /* the generation planned on: the commit is refused past it */
    char *stack, *resource;
    bool deleting;                /* the service is being deleted: every replica goes */
    cv_reconcile_ops_t ops;       /* assignments to change */
    cv_reconcile_events_t events; /* in the order they happened */
    char *rejected;               /* why the service is rejected (its description), or NULL */
    cv_reconcile_record_t record; /* what the commit stores */
    bool changed;                 /* something to commit */
    bool remove;                  /* the deleting service is gone: the commit removes its record */
} cv_reconcile_plan_t;

/* Plans service `svc` on `model` into *plan (free it with
 * cv_reconcile_plan_free). Returns 0; CV_ENOENT when the service is not in
 * the cluster; CV_ENOMEM; or the loader's error when the cluster's nodes
 * do not load; errstr says why (*plan is then empty). A service spec that
 * does not load is a plan with `rejected`. */
int cv_reconcile(const json_t *model, const char *svc, cv_reconcile_plan_t *plan, char *errstr,
                 size_t errstr_size);

/* Frees what the plan holds and leaves it empty. */
void cv_reconcile_plan_free(cv_reconcile_plan_t *plan);

/* The plan as one JSON object, for tests and for reading it: {"svc", "gen",
 * "stack", "resource", "state" ("active" or "deleting"), the record's
 * fields (null where NULL), "ops": [{"op": "assign", "node", "rid",
 * "spec"} | {"op": "unassign", "node", "rid"}], "events": [{"physical_id",
 * "action", "status", "reason"}], "changed", "remove"}. A new object, NULL
 * when out of memory. */
json_t *cv_reconcile_plan_json(const cv_reconcile_plan_t *plan);

/* The placement library's description of the service of `spec` (its
 * placement keys: docs/services.md "Service spec"), named `name`, with
 * `replicas` replicas (at least 1). A new object. */
json_t *cv_reconcile_service_desc(const json_t *spec, const char *name, int replicas);

/* The node-level health reports of `model`: for every node up whose
 * measured load of a metric exceeds its capacity, a Warning of source
 * "System.PLB:<node>", property "NodeCapacity_<metric>". A new array. */
json_t *cv_reconcile_node_reports(const json_t *model);

#endif
