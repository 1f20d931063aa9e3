/*
 * balance_internal — the pieces of cv_balance: the settings
 * (balance_settings.c), the model of one pass built from the live model
 * (balance_model.c), the hard constraints a move must keep
 * (balance_check.c), the statistics and score (balance_score.c), the
 * constraint check (balance_constraint.c), the balancing search
 * (balance_search.c) and the throttles and intervals kept in the state
 * (balance_state.c). Internal symbols are cv__bl_*.
 * Not a public surface: only those files and the unit tests include it.
 */
#ifndef BALANCE_INTERNAL_H
#define BALANCE_INTERNAL_H

#include "cv_balance.h"
#include "cv_cluster.h"

#include "cv_base.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define BL_NONE (-1)

typedef CV_VEC(int) bl_ints_t;

/* Move costs (docs/crm.md "Balance"), in units of the score's gain. */
#define BL_COST_ZERO 0.0
#define BL_COST_LOW 0.001
#define BL_COST_MEDIUM 0.01
#define BL_COST_HIGH 0.1

/* Settings of one metric in one scope (the cluster or a node type). */
typedef struct bl_metric_set {
    double threshold, activity;
    bool defrag;
} bl_metric_set_t;

typedef struct bl_node {
    const cv_node_t *cn; /* the loaded cluster's node */
    int type;            /* index into bl_model.types, or BL_NONE */
    bool up;             /* alive and enabled: counted, may receive */
    bool alive;          /* its replicas are running: may be over capacity */
    int *dom;            /* ndomlevels: domain id per FD level, then the UD */
    double load[CV_MAX_METRICS];
    double declared[CV_MAX_METRICS]; /* declared loads of its assigned replica specs */
    double total[CV_MAX_METRICS];    /* capacity with overbooking; < 0 unlimited */
    double nonbuf[CV_MAX_METRICS];   /* capacity less the buffer; < 0 unlimited */
    bl_ints_t reps;                  /* replicas on the node (indexes into bl_model.reps) */
} bl_node_t;

typedef struct bl_service {
    const char *id;
    cv_service_t *s; /* NULL: not loadable, never moved */
    const char *cost_name;
    double cost;
    bool movable;   /* loaded, active, no rollout or affinity in the way */
    int group;      /* related services (sharing a metric) share a group */
    uint8_t *feas;  /* per node: placement constraint holds (shared by text) */
    int *domcnt;    /* ndomains: replicas per domain */
    uint8_t *inv;   /* ndomains: domain has a feasible node up */
    int moves;      /* balancing moves in the throttle window, this pass's included */
    int pass_moves; /* balancing moves of this pass */
    bl_ints_t reps; /* its replicas (indexes into bl_model.reps) */
    bool metric[CV_MAX_METRICS];
} bl_service_t;

typedef struct bl_replica {
    int svc, index, node;
    bool secondary;
    bool movable; /* a placement entry not already moving */
    bool moved;   /* moved in this pass */
    bool held;    /* a throttle held its move back in this pass (counted once) */
    double load[CV_MAX_METRICS];
    double declared[CV_MAX_METRICS]; /* what its replica spec declares */
} bl_replica_t;

/* One scope of balancing: the whole cluster or one node type. */
typedef struct bl_scope {
    const char *type; /* NULL: the whole cluster */
    int type_index;
    bl_metric_set_t set[CV_MAX_METRICS];
    double mean[CV_MAX_METRICS];
    bool triggered[CV_MAX_METRICS]; /* out of balance (or to defragment) */
    bool scored[CV_MAX_METRICS];    /* counts in the score */
    bool paused;                    /* MinLoadBalancingIntervalPerNodeType has not passed */
    bool balanced;                  /* this pass balanced it (its time goes into the state) */
    json_t *entries;                /* the imbalance entries of this scope, by metric */
} bl_scope_t;

typedef struct bl_model {
    const json_t *model;
    double now;
    json_t *settings; /* cv_balance_settings' */
    cv_cluster_t *c;
    char metric[CV_MAX_METRICS][CV_METRIC_NAME_MAX];
    size_t nmetrics;
    bool used[CV_MAX_METRICS]; /* some replica or setting names it */
    bl_node_t *nodes;
    size_t nnodes;
    const char **types;
    size_t ntypes;
    size_t ndomlevels; /* FD levels + 1 (the UD) */
    size_t ndomains;
    bl_ints_t domlevel; /* ndomains: the level of each domain */
    int *levdom;        /* the domains ordered by level, */
    size_t *levstart;   /* level l's from levdom[levstart[l]] to levdom[levstart[l + 1]] */
    bl_service_t *svcs;
    size_t nsvcs;
    CV_VEC(bl_replica_t) reps;
    bl_scope_t *scopes;
    size_t nscopes;
    bool per_type;
    bool upgrade;       /* an upgrade by upgrade domain runs: no balancing */
    json_t *feas_cache; /* constraint text -> index into feas_list */
    CV_VEC(uint8_t *) feas_list;
    json_t *moves; /* the result's moves */
    json_t *state; /* the new state */
    long throttled;
    int64_t global_budget;   /* balancing moves left in the window, -1 unlimited */
    int64_t svc_threshold;   /* per service per window, 0 unlimited */
    int pass_moves;          /* balancing moves of this pass */
    const json_t *old_state; /* the state the pass started with */
    char why[512];           /* why nothing moved, as the phase found */
    char quiet[512];         /* a metric out of balance below its activity threshold */
} bl_model_t;

/* ---- settings (balance_settings.c) ---- */

/* A metric's settings in `scope` ({"metrics": ..} of the settings or of a
 * node type), defaults applied. */
bl_metric_set_t cv__bl_metric_set(const json_t *scope, const char *metric);
/* A number setting of cv_balance_settings' result. */
double cv__bl_setting(const json_t *settings, const char *key);

/* ---- the model (balance_model.c) ---- */

/* Builds the pass's model; 0, or an error with errstr. */
int cv__bl_model_build(bl_model_t *m, const json_t *model, const json_t *state, char *errstr,
                       size_t errstr_size);
void cv__bl_model_free(bl_model_t *m);
/* Moves replica r to node `to` in the model (loads, domains, lists). */
void cv__bl_apply(bl_model_t *m, int r, int to);
/* Records the move in m->moves. */
void cv__bl_record(bl_model_t *m, int r, int from, int to, const char *reason, const char *detail);

/* ---- hard constraints (balance_check.c) ---- */

typedef enum {
    BL_MOVE_BALANCE = 0, /* keeps the buffer */
    BL_MOVE_FIX = 1      /* an availability action: may use the buffer */
} bl_move_kind_t;

/* Whether replica r may go to node `to`: the node is up, holds no replica
 * of the service, meets its placement and Mesos constraints, has room
 * (capacity, buffer), and the service's fault and upgrade domain spread
 * gets no worse than it is, nor worse than one apart. */
bool cv__bl_allowed(bl_model_t *m, int r, int to, bl_move_kind_t kind);
/* Whether node n holds more than its capacity (with overbooking) of some
 * metric; the first such metric into *metric. */
bool cv__bl_over(const bl_model_t *m, int n, int *metric);
/* The spread of service s at domain level `level`: max - min replicas
 * over its domains. */
int cv__bl_spread(const bl_model_t *m, int s, size_t level);

/* ---- statistics and score (balance_score.c) ---- */

/* Fills every scope's means, triggers and imbalance entries ("after"
 * left out); `after` fills the "after" of the existing entries instead. */
void cv__bl_stats(bl_model_t *m, bool after);
/* The scope a node's balancing belongs to. */
bl_scope_t *cv__bl_scope_of(bl_model_t *m, int node);
/* How much moving replica r to node `to` improves the score (positive:
 * better), over every scored metric of the scope. */
double cv__bl_gain(const bl_model_t *m, int r, int to);
/* The imbalance entries as the result's array. */
json_t *cv__bl_imbalance(const bl_model_t *m);

/* ---- phases ---- */

void cv__bl_constraint(bl_model_t *m);
void cv__bl_balance(bl_model_t *m);

/* ---- state (balance_state.c) ---- */

/* Reads the throttle windows from `state` into the model (the global
 * budget, each service's moves in its window). */
void cv__bl_state_read(bl_model_t *m, const json_t *state);
/* Marks the scopes whose node type was balanced less than its
 * MinLoadBalancingInterval ago (per node type balancing only). */
void cv__bl_state_pause(bl_model_t *m);
/* The new state after the pass's moves. */
json_t *cv__bl_state_write(bl_model_t *m, const json_t *state, cv_balance_phase_t phase);

#endif
