/*
 * place_internal — the private pieces of cv_placement: the domain index of a
 * cluster, one placement call's state, the filter pipeline, the domain
 * completion check (a small bounded flow), scoring and health reports.
 * Nothing here is public: only cv_placement.c and place_*.c include it
 * (and the unit tests, which test the pieces directly).
 */
#ifndef PLACE_INTERNAL_H
#define PLACE_INTERNAL_H

#include "cv_place.h"

#include <stdbool.h>
#include <stdint.h>

#define PL_NONE UINT32_MAX
#define PL_INF (1 << 28)
#define PL_MAX_LEVELS 63

/* The filters in the order of Service Fabric's constraint elimination
 * sequence; node status comes first because a down node is not a candidate at
 * all, the Mesos constraints sit beside the placement constraint they
 * generalise. */
typedef enum {
    PL_STATUS = 0,
    PL_EXCLUSION,
    PL_PLACEMENT,
    PL_MESOS,
    PL_CAPACITY,
    PL_AFFINITY,
    PL_FAULT_DOMAIN,
    PL_UPGRADE_DOMAIN,
    PL_PREFERRED,
    PL_NSTEPS
} pl_step_t;

#define PL_BIT(step) (1u << (step))

/* Constraint priorities. */
enum { PL_OFF = -1, PL_HARD = 0, PL_SOFT = 1, PL_OPTIMIZE = 2 };

const char *cv__place_step_name(pl_step_t step);
int cv__place_step_priority(const cv_cluster_t *c, pl_step_t step);

/* ---------------------------------------------------------------- domain index */

/*
 * Every fault domain at every level gets a dense id: level k of a node is
 * the prefix of its FD path of length k+1. A node with a shorter path than
 * the deepest one keeps its deepest domain at the levels below (padded), so
 * every node has one domain per level. Upgrade domains and (leaf FD, UD)
 * cells get ids too; the cells are what the completion flow works on.
 */
typedef struct pl_index {
    size_t nnodes, nlevels;
    uint32_t *fd;   /* nnodes * nlevels */
    uint32_t *ud;   /* nnodes */
    uint32_t *cell; /* nnodes */
    size_t nfd, nud, ncells;
    uint32_t *fd_parent;           /* nfd: PL_NONE at level 0 */
    uint8_t *fd_level;             /* nfd */
    uint32_t *fd_node;             /* nfd: a node in the domain, to name it */
    uint32_t *ud_node;             /* nud */
    uint32_t *cell_leaf, *cell_ud; /* ncells */
    size_t *level_size;            /* nlevels: domains per level in the cluster */
    size_t nleaf;                  /* distinct fault domains (full URIs) */
} pl_index_t;

int cv__place_index_build(pl_index_t *ix, const cv_cluster_t *c);
void cv__place_index_free(pl_index_t *ix);
/* "fd:/dc1" for a level-0 domain of "fd:/dc1/rack2". */
void cv__place_fd_name(const pl_index_t *ix, const cv_cluster_t *c, uint32_t fd, char *buf,
                       size_t size);
static inline uint32_t pl_fd(const pl_index_t *ix, size_t node, size_t level)
{
    return ix->fd[node * ix->nlevels + level];
}

/* The policy the adaptive distribution rule chooses, given the index. */
cv_distribution_t cv__place_policy(const pl_index_t *ix, const cv_cluster_t *c,
                                   const cv_service_t *s);

/* Per-domain bounds of one level: `total` replicas over `ndomains` domains
 * (maxDifference: floor/ceil; quorumSafe: no domain holds more than a
 * minority of `target`, never stricter than maxDifference's ceiling). */
void cv__place_bounds(cv_distribution_t policy, int target, int total, size_t ndomains, int *lo,
                      int *hi);

/* ---------------------------------------------------------------- one call's state */

/* Which domains a service spreads over, numbered as flow vertices. */
typedef struct pl_spread {
    uint8_t *fd_in, *ud_in;      /* nfd, nud */
    uint32_t *fd_list, *ud_list; /* the domains in the set */
    size_t nfd_list, nud_list;
    size_t *level_in;        /* nlevels: domains in the set per level */
    uint32_t *fd_vx, *ud_vx; /* flow vertex of each domain in the set */
} pl_spread_t;

/* Node-local reasons a node cannot take a replica (bits of pl_ctx.mask). */
enum {
    PL_F_DOWN = 1,
    PL_F_PLACEMENT = 2,
    PL_F_CAP_PRIMARY = 4,   /* primary or stateless instance load does not fit */
    PL_F_CAP_SECONDARY = 8, /* secondary load does not fit */
    PL_F_AFFINITY = 16,
    PL_F_BUF_PRIMARY = 32, /* fits only by using buffer / overbooking */
    PL_F_BUF_SECONDARY = 64
};

typedef struct pl_mode {
    unsigned enforce; /* PL_BIT(step): the step filters */
    unsigned prefer;  /* PL_BIT(step): the step only steers the score */
    bool packing;     /* FD/UD bounds over the domains that still have usable nodes */
    bool best_effort; /* the last mode: place fewer replicas rather than none */
} pl_mode_t;

typedef struct pl_entry pl_entry_t; /* the placer's memo, below */

/* One service metric the cluster knows, as the capacity scans need it. */
typedef struct pl_metric {
    int m;           /* cluster metric */
    int64_t load[2]; /* primary (or instance), secondary */
    double weight;
    double buffer, over;
} pl_metric_t;

typedef struct pl_ctx {
    cv_placer_t *p; /* the cluster's index, memo and scratch arrays */
    const cv_cluster_t *c;
    const cv_service_t *s;
    const cv_layout_t *layout;
    cv_place_action_t action;
    cv_distribution_t policy;
    pl_index_t ix;
    int cm[CV_MAX_METRICS];          /* cluster metric of each service metric, or -1 */
    pl_metric_t sms[CV_MAX_METRICS]; /* the service's metrics the cluster knows */
    size_t nsms;
    uint8_t *mask;      /* nnodes: PL_F_* */
    uint8_t *used;      /* nnodes: holds a replica of this service */
    double *balance[2]; /* nnodes: weighted utilisation after adding a primary / secondary */
    int64_t room[CV_MAX_METRICS]; /* left on up nodes under the action's limit */
    bool room_unlimited[CV_MAX_METRICS];
    int *fd_count, *ud_count;
    pl_spread_t inv;    /* strict: the service's node inventory, down nodes included */
    pl_spread_t pack;   /* packing: domains with usable nodes or replicas */
    cv_replica_t *reps; /* this service's replicas: existing, then placed */
    size_t nreps;
    int target;                  /* the service's replica count */
    int pending;                 /* replicas still to place after the current one */
    int primary;                 /* the replica to place as primary, or -1 */
    const json_t **placed_props; /* Mesos context */
    const json_t **eligible;
    size_t neligible;
    uint32_t *avail; /* ncells: secondary-eligible unused nodes */
    uint32_t *cells; /* cells with avail > 0 */
    size_t ncells_used;
    size_t total_avail; /* sum of avail */
    uint32_t *cand;     /* candidates of one selection */
    size_t ncand;
    const pl_entry_t *entry; /* the sampler's universe, or NULL: exhaustive search */
    bool full;               /* the whole-cluster scans are done (mask, balance, room) */
    bool inv_ready;
    bool eligible_borrowed; /* `eligible` belongs to the entry */
} pl_ctx_t;

/* A call's state on the placer's index and scratch; cheap (no pass over the
 * nodes) until cv__place_full. */
int cv__place_ctx_init(pl_ctx_t *x, cv_placer_t *p, const cv_service_t *s,
                       const cv_layout_t *layout, cv_place_action_t action);
/* The whole-cluster scans the exhaustive search needs (node masks, balance,
 * the cluster's room), once per call. */
int cv__place_full(pl_ctx_t *x);
/* The strict spread set, from the memo when sampling, else from the scans. */
int cv__place_inventory(pl_ctx_t *x);
/* Resets the placer's scratch entries the call touched. */
void cv__place_ctx_free(pl_ctx_t *x);

/* The load a replica carries: 0 primary (or stateless instance), 1 secondary.
 * A stateful service has one primary: the replica the call places as such,
 * unless the layout already holds one. */
static inline int pl_rolekind(const pl_ctx_t *x, int replica)
{
    return x->s->stateful && replica != x->primary ? 1 : 0;
}

int cv__place_spread_init(pl_spread_t *sp, const pl_index_t *ix);
void cv__place_spread_free(pl_spread_t *sp);
void cv__place_spread_add_node(pl_spread_t *sp, const pl_index_t *ix, size_t node);
/* Lists and numbers the domains marked so far. */
void cv__place_spread_count(pl_spread_t *sp, const pl_index_t *ix);

/* ---------------------------------------------------------------- the placer's memo */

/*
 * What a placer remembers about one placement constraint (or about none):
 * the up nodes it admits (the sampler's universe), their properties (the
 * Mesos constraints' eligible nodes) and the strict spread set of every node
 * it admits whatever its status. Nodes of one class (equal properties,
 * NodeName aside) answer a constraint alike, so it is evaluated once per
 * class. Valid while the cluster's nodes change only in load.
 */
struct pl_entry {
    char *text;      /* the constraint as written; NULL: the unconstrained entry */
    uint32_t *nodes; /* up nodes admitted, in name order */
    size_t nnodes;
    const json_t **eligible; /* their properties */
    pl_spread_t *inv;        /* every node admitted, any status */
};

#define PL_MEMO_MAX 64 /* constraints remembered; the table is cleared when full */

struct cv_placer {
    const cv_cluster_t *c;
    pl_index_t ix;
    bool oneshot;         /* one cv_place call: no class memo (it would not pay) */
    size_t sample_min;    /* clusters with fewer nodes are searched exhaustively */
    uint32_t *node_class; /* nnodes, or NULL until the first constraint is memoized */
    size_t nclasses;
    pl_entry_t all; /* no constraint */
    pl_entry_t memo[PL_MEMO_MAX];
    size_t nmemo;
    double scale[CV_MAX_METRICS]; /* largest finite capacity: unlimited nodes' yardstick */
    int64_t *limits;              /* nnodes x nmetrics x (non-buffered, total) */
    /* Scratch reused by every call, left clean by each (only the entries a
     * call touched are reset): nnodes + 1 or per-domain sized. */
    uint8_t *mask, *used;
    double *balance[2];
    int *fd_count, *ud_count;
    uint32_t *avail, *cells, *cand;
    pl_spread_t inv, pack; /* a call's spread sets, rewritten by each call */
    uint32_t *picks;       /* the sampler's: sized for its largest sample */
    struct pl_rank *ranks;
    int8_t *verdicts; /* ncells * 4 */
};

/* Node classes: nodes with equal properties (NodeName aside) get one id. */
int cv__place_classes(cv_placer_t *p);
/* The entry of `s`'s placement constraint (the unconstrained one when `s`
 * is NULL, has none or it is disabled), built on first use; NULL when out
 * of memory. */
const pl_entry_t *cv__place_entry(cv_placer_t *p, const cv_service_t *s);
void cv__place_entry_free(pl_entry_t *e);

/* ---------------------------------------------------------------- sampling */

/* How many nodes a sampled selection ranks on a cluster of `nnodes`:
 * Nomad's max(2, log2 n) per replica, times PL_SAMPLE_FACTOR. */
#define PL_SAMPLE_FACTOR 4
size_t cv__place_sample_bound(size_t nnodes);
/* Visits min(k, n) distinct indices of [0, n) in an order fixed by `seed`
 * (a start and a stride coprime with n): out receives them. */
size_t cv__place_sample_walk(uint64_t seed, size_t n, size_t k, uint32_t *out);
/* The largest sample a selection draws (the bound grown each round). */
size_t cv__place_sample_most(size_t nnodes);
/* The seed of a service's replica: the same input samples the same nodes. */
uint64_t cv__place_sample_seed(const cv_service_t *s, int replica, unsigned round);

/* ---------------------------------------------------------------- capacity and score */

/* The capacity a node may carry for cluster metric m at most in any case
 * (capacity plus overbooking), INT64_MAX when unlimited. */
int64_t cv__place_total_limit(const cv_cluster_t *c, size_t node, int m);
int64_t cv__place_replica_load(const cv_service_t *s, size_t metric, int rolekind);
/* Fills `sms` with the service's metrics that the cluster knows; returns
 * how many. */
size_t cv__place_metrics(const pl_ctx_t *x, pl_metric_t *sms);
/* Sets the PL_F_CAP_* / PL_F_BUF_* bits and the balance scores of every
 * node, and sums the room left in the cluster. */
void cv__place_capacity_scan(pl_ctx_t *x);
/* The same bits (and PL_F_DOWN) for one node, from its load now, against
 * the placer's limits: what the sampler computes for the nodes it draws
 * (it ranks them with a balance of its own). */
void cv__place_probe(pl_ctx_t *x, size_t node);
/* Fills p->limits: per node and cluster metric, the non-buffered and the
 * total capacity (INT64_MAX when unlimited). */
void cv__place_limits(cv_placer_t *p);
/* Null when the cluster can hold the service, else the rejection. */
json_t *cv__place_cluster_capacity(const pl_ctx_t *x);

/* ---------------------------------------------------------------- filters and choice */

/* Whether a step concerns this service at all (a service without a
 * placement constraint has no PlacementConstraint step; disabled steps,
 * priority -1, are skipped; nothing carries preferred locations yet). */
bool cv__place_step_applies(const pl_ctx_t *x, pl_step_t step);
/* Static node-local masks: status, placement constraint, affinity. */
int cv__place_static_scan(pl_ctx_t *x);
/* Whether the Mesos constraints allow one more replica on `node`. */
bool cv__place_mesos_ok(pl_ctx_t *x, size_t node);
/* Whether the node counts among the free nodes of later replicas (the
 * cells' `avail`) under `mode`. */
bool cv__place_frees_later(const pl_ctx_t *x, const pl_mode_t *mode, size_t node);
/* The chosen node for `replica` under `mode`, or PL_NONE. */
uint32_t cv__place_select(pl_ctx_t *x, const pl_mode_t *mode, int replica);
/* The PL_F_* bits that disqualify a node for role kind `rk` when `steps`
 * (PL_BIT of each) are filters. */
unsigned cv__place_disqualifying(unsigned steps, int rk);

/* How a candidate ranks: lower is better, field by field. */
typedef struct pl_rank {
    int penalty;    /* optimization constraints (and relaxed soft ones) broken */
    int buffer;     /* would eat into buffered / overbooked capacity */
    double balance; /* weighted utilisation after placement (sampled: place_sample.c's) */
    int spread;     /* this service's replicas already in the node's domains */
    uint32_t node;  /* nodes are sorted by name: ties go by name */
} pl_rank_t;
pl_rank_t cv__place_rank_of(const pl_ctx_t *x, const pl_mode_t *mode, uint32_t n, int rk);
int cv__place_rank_cmp(const void *pa, const void *pb);
/* Whether the domains (and the Mesos constraints) accept `n` with `more`
 * replicas to follow, given the free nodes counted in x->avail. `verdicts`
 * caches the domain answers per cell: ncells * 4 entries, -1 when unknown. */
bool cv__place_acceptable(pl_ctx_t *x, const pl_mode_t *mode, int8_t *verdicts, uint32_t n,
                          int more);

/* Whether this call may sample: a large cluster, and no constraint the
 * sampler cannot draw from (affinity, an optimization-priority placement
 * constraint). Sets x->entry. */
bool cv__place_sampling(pl_ctx_t *x);
/* The best node of a bounded sample for `replica` under the first mode, or
 * PL_NONE when the sample cannot decide (the caller searches exhaustively).
 * A node it returns satisfies everything cv__place_select would check. */
uint32_t cv__place_sampled_select(pl_ctx_t *x, const pl_mode_t *mode, int replica);
/* The elimination sequence of `replica` under `mode`. */
json_t *cv__place_eliminations(pl_ctx_t *x, const pl_mode_t *mode, int replica);

/* Whether the replica on `node` keeps the FD (use_fd) / UD (use_ud) bounds
 * reachable with `more` further replicas (the completion flow). */
bool cv__place_domains_ok(pl_ctx_t *x, const pl_mode_t *mode, size_t node, bool cand_secondary,
                          bool use_fd, bool use_ud, int more);

/* The upper bound per FD level and (last) for UDs when `more` replicas
 * follow, over the strict spread set; `hi` holds nlevels + 1 entries. */
void cv__place_ceilings(const pl_ctx_t *x, const pl_mode_t *mode, int more, int *hi);
/* Whether one more replica on `node` stays within those bounds: a
 * necessary condition of cv__place_domains_ok, cheap enough for every node. */
bool cv__place_under_ceilings(const pl_ctx_t *x, size_t node, const int *hi);

/* ---------------------------------------------------------------- flow */

typedef struct pl_flow pl_flow_t;
pl_flow_t *cv__place_flow_new(size_t nvertices, size_t nedges_hint);
void cv__place_flow_free(pl_flow_t *f);
/* An edge u -> v carrying between lo and hi units. */
int cv__place_flow_edge(pl_flow_t *f, uint32_t u, uint32_t v, int lo, int hi);
/* Whether a circulation meeting every lower bound exists. */
bool cv__place_flow_feasible(pl_flow_t *f);

/* ---------------------------------------------------------------- health */

typedef struct pl_check {
    const cv_cluster_t *c;
    const pl_index_t *ix;
    json_t *health;
    pl_spread_t scratch;      /* a service's inventory, cleared before reuse */
    const char *scratch_text; /* the placement constraint it was computed for */
    pl_spread_t all;          /* every domain of the cluster */
    const json_t **eligible;  /* the Mesos check's eligible nodes when the caller has them */
    size_t neligible;
} pl_check_t;

int cv__place_check_init(pl_check_t *k, const cv_cluster_t *c, const pl_index_t *ix);
void cv__place_check_free(pl_check_t *k);
json_t *cv__place_health(const char *property, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *cv__place_role_name(cv_role_t role);
/* Reports every constraint the service's replicas break. `inv` is the
 * service's inventory when the caller has it, NULL to compute it. */
void cv__place_check_service(pl_check_t *k, const cv_service_t *s, const cv_replica_t *reps,
                             size_t nreps, const cv_layout_t *layout, const pl_spread_t *inv);
/* Reports the node if its load plus `extra` (per cluster metric, or NULL)
 * is above its total capacity for some metric. */
void cv__place_check_node(pl_check_t *k, size_t node, const int64_t *extra);
/* The replicas of the service called `name` in the layout, or NULL. */
const cv_placed_service_t *cv__place_find(const cv_layout_t *layout, const char *name);

#endif
