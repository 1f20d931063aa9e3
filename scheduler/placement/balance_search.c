/*
 * balance_search — the balancing phase: a best-improvement search over
 * single-replica moves (docs/crm.md "Balance").
 *
 * Only metrics out of balance (or to defragment) in a scope not paused
 * start it, and only replicas of services related to such a metric (a
 * group of services sharing metrics, transitively) on nodes of such a
 * scope may move, within their scope. Each step considers every eligible
 * replica of the K most and K least loaded nodes of every such metric
 * (for defragmentation: the least loaded nodes that hold some load and
 * the most loaded ones) against every such node as a target — and, for a
 * service with a placement constraint, against the K least loaded nodes
 * where it holds, since the cluster's least loaded may all be nodes it
 * cannot go to —, scores each
 * move by how much it improves the whole score — every metric the
 * replica carries, not just the one out of balance (balance_score.c) —
 * less the service's move cost, and makes the best move that keeps every
 * hard constraint (balance_check.c) and the throttles. Unlike moving the
 * heaviest replica from the most to the least loaded node, it takes the
 * replica and the target that improve the layout most, may move load to a
 * node that is not the least loaded, leaves a costly service alone when a
 * cheaper one does nearly as well, and stops when no move gains more than
 * it costs. Deterministic: ties go to the lower replica and node.
 */
#include "balance_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K_NODES 8
#define EPS 1e-12

typedef struct cand {
    double net;
    int r, to;
} cand_t;

#define OWN_CACHE 64

typedef struct own {
    const uint8_t *feas;
    size_t scope, metric;
    int nodes[K_NODES];
    size_t n;
} own_t;

typedef struct search {
    bl_model_t *m;
    uint8_t *active;    /* nscopes x nsvcs: the group may move in the scope */
    uint8_t *src, *dst; /* nnodes: node marks of this step */
    int *srcs, *dsts;
    size_t nsrc, ndst;
    CV_VEC(cand_t) cands; /* the moves of this step that gain */
    bool blocked;         /* an improving move broke a hard constraint */
    bool throttled;       /* an improving move was held back by a throttle */
    /* This step's K least loaded nodes where a placement constraint holds
     * (the cluster's least loaded may all be nodes a constrained service
     * cannot go to), per constraint (services share `feas` by its text),
     * scope and metric: computed once a step, when first needed. */
    own_t own[OWN_CACHE];
    size_t nown;
} search_t;

static size_t scope_of(const bl_model_t *m, int node)
{
    return (size_t)(cv__bl_scope_of((bl_model_t *)m, node) - m->scopes);
}

/* ---------------------------------------------------------------- which groups move */

/* Marks the groups with a metric out of balance in each scope not paused;
 * false when nothing may move. */
static bool activate(search_t *x)
{
    bl_model_t *m = x->m;
    bool any = false;
    for (size_t s = 0; s < m->nscopes; s++) {
        bl_scope_t *sc = &m->scopes[s];
        for (size_t k = 0; k < m->nmetrics; k++) {
            if (!sc->triggered[k] || sc->paused)
                continue;
            sc->balanced = true;
            for (size_t v = 0; v < m->nsvcs; v++)
                if (m->svcs[v].metric[k])
                    x->active[s * m->nsvcs + (size_t)m->svcs[v].group] = 1;
            any = true;
        }
    }
    return any;
}

static bool eligible(const search_t *x, int r)
{
    const bl_model_t *m = x->m;
    const bl_replica_t *rp = &m->reps.v[r];
    if (!rp->movable || rp->moved || rp->index < 0)
        return false;
    size_t s = scope_of(m, rp->node);
    return x->active[s * m->nsvcs + (size_t)m->svcs[rp->svc].group] != 0;
}

/* ---------------------------------------------------------------- candidate nodes */

/* Inserts node n into the K-list `list` ordered by `key` (higher first). */
static void top_insert(int *list, double *keys, size_t *len, int n, double key)
{
    size_t at = *len < K_NODES ? (*len)++ : K_NODES;
    if (at == K_NODES && key <= keys[K_NODES - 1])
        return;
    if (at == K_NODES)
        at = K_NODES - 1;
    while (at > 0 && key > keys[at - 1]) {
        list[at] = list[at - 1];
        keys[at] = keys[at - 1];
        at--;
    }
    list[at] = n;
    keys[at] = key;
}

static void mark(search_t *x, bool source, const int *list, size_t len)
{
    uint8_t *marks = source ? x->src : x->dst;
    int *out = source ? x->srcs : x->dsts;
    size_t *n = source ? &x->nsrc : &x->ndst;
    for (size_t i = 0; i < len; i++)
        if (!marks[list[i]]) {
            marks[list[i]] = 1;
            out[(*n)++] = list[i];
        }
}

/* The sources and targets of one scope and metric. */
static void pick_nodes(search_t *x, size_t s, size_t k)
{
    bl_model_t *m = x->m;
    int hi[K_NODES], lo[K_NODES];
    double hk[K_NODES], lk[K_NODES];
    size_t nh = 0, nl = 0;
    bool defrag = m->scopes[s].set[k].defrag;
    for (size_t n = 0; n < m->nnodes; n++) {
        if (!m->nodes[n].up || scope_of(m, (int)n) != s)
            continue;
        double l = m->nodes[n].load[k];
        top_insert(hi, hk, &nh, (int)n, l);
        if (!defrag || l > 0)
            top_insert(lo, lk, &nl, (int)n, -l);
    }
    mark(x, !defrag, hi, nh); /* balance: from the most loaded; defrag: onto them */
    mark(x, defrag, lo, nl);
}

static void pick_all(search_t *x)
{
    bl_model_t *m = x->m;
    for (size_t i = 0; i < x->nsrc; i++)
        x->src[x->srcs[i]] = 0;
    for (size_t i = 0; i < x->ndst; i++)
        x->dst[x->dsts[i]] = 0;
    x->nsrc = x->ndst = 0;
    for (size_t s = 0; s < m->nscopes; s++)
        for (size_t k = 0; k < m->nmetrics; k++)
            if (m->scopes[s].triggered[k] && !m->scopes[s].paused)
                pick_nodes(x, s, k);
}

/* ---------------------------------------------------------------- one step */

/* The metric of the replica that gains most, for the move's reason. */
static size_t main_metric(const bl_model_t *m, int r)
{
    const bl_scope_t *sc = cv__bl_scope_of((bl_model_t *)m, m->reps.v[r].node);
    size_t best = 0;
    for (size_t k = 0; k < m->nmetrics; k++)
        if (sc->triggered[k] && m->reps.v[r].load[k] > 0 &&
            (!sc->triggered[best] || m->reps.v[r].load[best] <= 0 ||
             m->reps.v[r].load[k] / sc->mean[k] > m->reps.v[r].load[best] / sc->mean[best]))
            best = k;
    return best;
}

/* The K least loaded nodes of the scope (by the metric; defragmenting: the
 * most loaded) where the placement constraint `feas` holds, into `out`. */
static void own_targets(const search_t *x, own_t *out)
{
    const bl_model_t *m = x->m;
    double keys[K_NODES], sign = m->scopes[out->scope].set[out->metric].defrag ? 1 : -1;
    out->n = 0;
    for (size_t node = 0; node < m->nnodes; node++)
        if (m->nodes[node].up && out->feas[node] && scope_of(m, (int)node) == out->scope)
            top_insert(out->nodes, keys, &out->n, (int)node,
                       sign * m->nodes[node].load[out->metric]);
}

/* own_targets of replica r's constraint, scope and main metric, from this
 * step's cache when another replica asked first. */
static const own_t *targets_of(search_t *x, int r, own_t *spare)
{
    const bl_model_t *m = x->m;
    own_t key = {.feas = m->svcs[m->reps.v[r].svc].feas,
                 .scope = scope_of(m, m->reps.v[r].node),
                 .metric = main_metric(m, r)};
    for (size_t i = 0; i < x->nown; i++)
        if (x->own[i].feas == key.feas && x->own[i].scope == key.scope &&
            x->own[i].metric == key.metric)
            return &x->own[i];
    own_t *out = x->nown < OWN_CACHE ? &x->own[x->nown++] : spare;
    *out = key;
    own_targets(x, out);
    return out;
}

static void consider(search_t *x, int r, int from, int to, double cost)
{
    const bl_model_t *m = x->m;
    if (to == from || scope_of(m, to) != scope_of(m, from))
        return;
    double net = cv__bl_gain(m, r, to) - cost;
    if (net > EPS)
        cv_vec_push(&x->cands, (cand_t){net, r, to}); /* out of memory: a move fewer */
}

static void gather(search_t *x)
{
    bl_model_t *m = x->m;
    x->cands.n = 0;
    for (size_t i = 0; i < x->nsrc; i++) {
        const bl_node_t *a = &m->nodes[x->srcs[i]];
        for (size_t j = 0; j < a->reps.n; j++) {
            int r = a->reps.v[j];
            if (!eligible(x, r))
                continue;
            double cost = m->svcs[m->reps.v[r].svc].cost;
            for (size_t t = 0; t < x->ndst; t++)
                consider(x, r, x->srcs[i], x->dsts[t], cost);
            if (!m->svcs[m->reps.v[r].svc].feas)
                continue;
            own_t spare;
            const own_t *own = targets_of(x, r, &spare);
            for (size_t t = 0; t < own->n; t++)
                if (!x->dst[own->nodes[t]])
                    consider(x, r, x->srcs[i], own->nodes[t], cost);
        }
    }
}

static bool svc_throttled(const bl_model_t *m, int svc)
{
    return m->svc_threshold > 0 && m->svcs[svc].moves >= m->svc_threshold;
}

/* The best candidate keeping the constraints and throttles, or -1. */
static long choose(search_t *x)
{
    bl_model_t *m = x->m;
    for (;;) {
        long best = -1;
        for (size_t i = 0; i < x->cands.n; i++) {
            const cand_t *c = &x->cands.v[i];
            if (c->r >= 0 && (best < 0 || c->net > x->cands.v[best].net + EPS))
                best = (long)i;
        }
        if (best < 0)
            return -1;
        cand_t *c = &x->cands.v[best];
        if (svc_throttled(m, m->reps.v[c->r].svc)) {
            x->throttled = true;
            m->throttled += !m->reps.v[c->r].held; /* one count per replica held back */
            m->reps.v[c->r].held = true;
            for (size_t i = 0; i < x->cands.n; i++)
                if (x->cands.v[i].r == c->r && (long)i != best)
                    x->cands.v[i].r = -1;
        } else if (cv__bl_allowed(m, c->r, c->to, BL_MOVE_BALANCE))
            return best;
        else
            x->blocked = true;
        c->r = -1;
    }
}

static void make(search_t *x, const cand_t *c)
{
    bl_model_t *m = x->m;
    int r = c->r, from = m->reps.v[r].node;
    bl_service_t *sv = &m->svcs[m->reps.v[r].svc];
    size_t k = main_metric(m, r);
    const bl_scope_t *sc = cv__bl_scope_of(m, from);
    char detail[512];
    snprintf(detail, sizeof(detail), "%s%s%s: node %s %g, node %s %g; gain %.4g > move cost %s",
             m->metric[k], sc->type ? " on node type " : "", sc->type ? sc->type : "",
             m->nodes[from].cn->name, m->nodes[from].load[k], m->nodes[c->to].cn->name,
             m->nodes[c->to].load[k], c->net + sv->cost, sv->cost_name);
    cv__bl_record(m, r, from, c->to, sc->set[k].defrag ? "defragmentation" : "balancing", detail);
    cv__bl_apply(m, r, c->to);
    sv->moves++;
    sv->pass_moves++;
    m->pass_moves++;
    if (m->global_budget > 0)
        m->global_budget--;
}

/* ---------------------------------------------------------------- the phase */

static void explain(bl_model_t *m, const search_t *x, bool paused_only)
{
    if (json_array_size(m->moves) > 0 || m->why[0])
        return;
    if (paused_only) {
        for (size_t s = 0; s < m->nscopes; s++)
            if (m->scopes[s].paused)
                snprintf(m->why, sizeof(m->why),
                         "node type %s was balanced less than its MinLoadBalancingInterval ago",
                         m->scopes[s].type);
    } else if (x->throttled)
        snprintf(m->why, sizeof(m->why), "throttled: %ld move(s) held back (%s)", m->throttled,
                 m->global_budget == 0 ? "GlobalMovementThrottleThreshold reached in its window"
                                       : "MovementPerPartitionThrottleThreshold reached");
    else if (x->blocked)
        snprintf(m->why, sizeof(m->why),
                 "a constraint would break: every move that improves the balance breaks a hard "
                 "constraint (capacity, placement, domains)");
    else
        snprintf(m->why, sizeof(m->why), "no move improves the balance by more than its cost");
}

static bool any_triggered(const bl_model_t *m)
{
    for (size_t s = 0; s < m->nscopes; s++)
        for (size_t k = 0; k < m->nmetrics; k++)
            if (m->scopes[s].triggered[k])
                return true;
    return false;
}

void cv__bl_balance(bl_model_t *m)
{
    if (!any_triggered(m))
        return;
    if (m->upgrade) {
        snprintf(m->why, sizeof(m->why),
                 "an upgrade by upgrade domain is in progress: balancing is paused");
        return;
    }
    cv__bl_state_pause(m);
    search_t x = {.m = m};
    x.active = calloc(m->nscopes * (m->nsvcs + 1), 1);
    x.src = calloc(m->nnodes + 1, 1);
    x.dst = calloc(m->nnodes + 1, 1);
    x.srcs = malloc((m->nnodes + 1) * sizeof(int));
    x.dsts = malloc((m->nnodes + 1) * sizeof(int));
    bool any = activate(&x);
    for (size_t step = 0; any && step < m->reps.n; step++) {
        x.nown = 0;
        pick_all(&x);
        gather(&x);
        long best = choose(&x);
        if (best < 0)
            break;
        if (m->global_budget == 0) { /* an improving move, but the window is spent */
            x.throttled = true;
            m->throttled++;
            break;
        }
        make(&x, &x.cands.v[best]);
    }
    explain(m, &x, !any);
    free(x.active);
    free(x.src);
    free(x.dst);
    free(x.srcs);
    free(x.dsts);
    cv_vec_free(&x.cands);
}
