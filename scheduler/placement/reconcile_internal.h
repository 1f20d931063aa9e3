/*
 * reconcile_internal — the pieces of cv_reconcile, in the order calls go
 * (cv_reconcile.c says it in full): the steps of one plan, then what they
 * ask of steps below them, then the model (reconcile_model.c) and what the
 * plan says (reconcile_events.c), which every step uses. Internal symbols
 * are cv__rc_*. Not a public surface: only those files include it.
 */
#ifndef RECONCILE_INTERNAL_H
#define RECONCILE_INTERNAL_H

#include "cv_cluster.h"
#include "cv_place.h"
#include "cv_reconcile.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* The "live" settings. */
typedef struct rc_settings {
    double grace_s;
    int64_t fence_margin_ms;
    int blocklist_n;
    double blocklist_min;
    double handover_s; /* a handover's new replica has this long to come up */
} rc_settings_t;

/* What the model says of one node. */
typedef struct rc_node_state {
    bool known;        /* in {cluster}:nodes */
    bool alive;        /* its heartbeat exists */
    const char *admin; /* enabled, disabled, draining */
    double down_for;   /* seconds since it was seen down (0 when alive) */
    int64_t fence_ms;
} rc_node_state_t;

typedef struct rc_ctx {
    const json_t *model;
    const char *svc;
    json_t *rec;     /* the service's record, strings parsed (owned) */
    json_t *spec;    /* rec.spec */
    json_t *process; /* spec.process, or an empty object */
    json_t *nodes;   /* model.nodes, strings parsed (owned) */
    double now;
    int64_t gen;
    rc_settings_t set;
    const char *stack, *stack_name, *resource;
    const char *policy; /* restart policy: Always, OnFailure, Never */
    const char *digest;
    cv_service_t *s; /* NULL when the spec does not load */
    int target;
    bool deleting;      /* state deleting: every replica goes */
    json_t *kept;       /* placement entries that stay (index -> entry, an object keyed "i") */
    json_t *replace;    /* index ("i") -> why its replica must be placed anew (availability) */
    json_t *moved_from; /* index -> the node it leaves */
    json_t *blocklist, *failures;
    /* node -> {"reason", "digest", "time"}: the last give-up counted there
     * (the agent's reason, the process digest it gave up on), kept while
     * the node has failures counted or is blocklisted (reconcile_keep.c) */
    json_t *gave_up;
    /* node -> true: usable and allowed by the constraints; the verdict
     * that every one of them is blocklisted while an index waits, or NULL
     * (reconcile_blocked.c) */
    json_t *eligible, *blocked;
    json_t *avoid; /* nodes a replica just gave up on: none of this plan's placements */
    json_t *held;  /* index -> {node, rid, state}: a stateful index whose old replica still runs */
    json_t *placement, *unplaced, *health;
    cv_reconcile_ops_t ops;       /* this plan's, handed over to it (reconcile_plan.c) */
    cv_reconcile_events_t events; /* likewise (reconcile_events.c) */
    bool nomem;                   /* an event could not be kept: the plan fails */
    json_t *rejected;
    /* docs/crm.md: the moves the cluster resource manager asked for that
     * are not done yet (index "i" -> move; reconcile_move.c), and the
     * rolling update in progress or NULL (reconcile_rollout.c). The plan
     * writes both back as they are after this plan. */
    json_t *moves;
    json_t *rollout;
} rc_ctx_t;

/* ==== the steps of one plan, called by cv_reconcile.c in this order ==== */

/* reconcile_keep.c */
/* Fills x->kept and x->replace from the stored placement, counts given-up
 * failures and updates the blocklist. */
void cv__rc_judge(rc_ctx_t *x);

/* reconcile_move.c */
/* After judging: carries out x->moves (docs/crm.md "Moves"), dropping
 * those done or no longer possible, and moves on the handovers in progress
 * (placement entries with "from": the old replica stays assigned until the
 * new one is healthy). */
void cv__rc_moves(rc_ctx_t *x);
/* After placing: a stateless replica leaving a draining node hands over
 * like a move (reason "drain"): its old replica stays until the new one is
 * healthy, or stays put while no other node can take it. */
void cv__rc_handovers(rc_ctx_t *x);

/* reconcile_place.c */
/* Places the indexes below target missing from x->kept; fills x->placement,
 * x->unplaced (or x->rejected). Returns 0, CV_ENOMEM, or a load error with
 * errstr. */
int cv__rc_place(rc_ctx_t *x, char *errstr, size_t errstr_size);

/* reconcile_blocked.c */
/* After placing: x->blocked when an index waits and every eligible node is
 * blocklisted for the service (the restart policy gave up on each), with
 * the blocklist and the give-up reasons. */
void cv__rc_blocked(rc_ctx_t *x);

/* reconcile_rollout.c: process changes and rolling updates */
/* Kept replicas whose assigned spec runs another process digest get a new
 * replica id on their node, as the service's update policy allows
 * (docs/crm.md "Rolling updates"); x->rollout says where it stands. */
void cv__rc_renew(rc_ctx_t *x);

/* reconcile_plan.c */
/* The assign / unassign operations, events of the changes, the health
 * reports and whether anything changed, into *plan; x's operations and
 * events move into it. 0 or CV_ENOMEM. */
int cv__rc_plan(rc_ctx_t *x, cv_reconcile_plan_t *plan);

/* ==== what the steps ask of steps below them ==== */

/* reconcile_fit.c, for moves */
/* Whether replica `index` fits on `node` among the service's other
 * replicas (reconcile_fit.c); when it fits only by relaxing a soft
 * constraint, it fits if it would need that where it is now (`now_on`,
 * NULL: nowhere). false with why. */
bool cv__rc_fits(rc_ctx_t *x, int index, const char *node, const char *now_on,
                 cv_place_action_t action, char *why, size_t size);

/* reconcile_keep.c, for moves and placing */
/* Fills x->held: a stateful index not kept whose previous replica a live
 * node still reports running is not placed again until it has stopped. */
void cv__rc_hold(rc_ctx_t *x);

/* reconcile_blocked.c, for placing */
/* Notes in x->eligible the nodes a replica of the service could go on but
 * for the blocklist: usable (known, alive, enabled) and allowed by its
 * placement constraint and, with no replica placed, its Mesos constraints. */
void cv__rc_note_eligible(rc_ctx_t *x, const cv_cluster_t *c);

/* ==== used by every step ==== */

/* ---- the model (reconcile_model.c) ---- */

/* `v` itself when it is not a string; else the JSON the string holds
 * (NULL when it does not parse). Returns a new reference. */
json_t *cv__rc_json(const json_t *v);
void cv__rc_settings(const json_t *settings, rc_settings_t *out);
rc_node_state_t cv__rc_node(const rc_ctx_t *x, const char *node);
/* The cluster manifest of the model: nodes' descriptions with their status
 * for this service (blocklisted nodes are disabled for it) and the declared
 * load of every replica assigned to them that is not this service's, plus
 * the old replicas of this service's handovers in progress (still assigned
 * and running beside their successors: reconcile_move.c). */
json_t *cv__rc_manifest(const rc_ctx_t *x);
/* The layout entry of the service's affinity parent on cluster `c`, or
 * NULL when it has none. */
json_t *cv__rc_parent_layout(const rc_ctx_t *x, const cv_cluster_t *c);
/* The process spec replicas are assigned: the spec's, or the old one while
 * a rolling update rolls back or has rolled back. */
const json_t *cv__rc_process(const rc_ctx_t *x);
/* Replica id "<svc>/<index>/<gen>" into buf; the index of a rid of this
 * service, or -1. */
void cv__rc_rid(char *buf, size_t size, const char *svc, int index, int64_t gen);
int cv__rc_rid_index(const char *svc, const char *rid);
/* The replica spec `rid` assigned to `node` (as stored: a string), or NULL. */
const json_t *cv__rc_assigned(const rc_ctx_t *x, const char *node, const char *rid);
/* "<resource>-<index>.<stack_name>" */
void cv__rc_replica_name(const rc_ctx_t *x, int index, char *buf, size_t size);

/* ---- what the plan says (reconcile_events.c) ---- */

/* An event of the service's stack: of replica `index` (-1: the service). */
void cv__rc_event(rc_ctx_t *x, int index, const char *action, const char *status, const char *fmt,
                  ...) __attribute__((format(printf, 5, 6)));
/* A health report of the service (source "System.PLB:<svc>"). */
void cv__rc_report(rc_ctx_t *x, const char *property, const char *state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
