/*
 * balance_check — the hard constraints every move keeps, with the
 * placement library's own checkers (cv_pcexpr_match, cv_mconstraint_allows)
 * and the cluster's constraint priorities (a disabled one, -1, is not
 * checked): the target node is up and enabled, holds no replica of the
 * service (replica exclusion), meets its placement and Mesos constraints,
 * has room for the replica's every load — within the non-buffered
 * capacity for balancing, up to the capacity with overbooking for a
 * constraint fix (an availability action may use the buffer, as Service
 * Fabric's Cluster Resource Manager allows); and its declared loads within
 * the capacity, as svc_commit.lua re-checks — and the service's spread over
 * fault and upgrade domains gets neither worse than it was nor more than one
 * replica apart.
 */
#include "balance_internal.h"

#include "cv_mesos.h"

#include <stdlib.h>

#define EPS 1e-9

static bool holds_service(const bl_model_t *m, int node, int svc)
{
    const bl_node_t *n = &m->nodes[node];
    for (size_t i = 0; i < n->reps.n; i++)
        if (m->reps.v[n->reps.v[i]].svc == svc)
            return true;
    return false;
}

static bool has_room(const bl_model_t *m, const bl_replica_t *rp, int to, bl_move_kind_t kind)
{
    const bl_node_t *b = &m->nodes[to];
    if (m->c->priorities.capacity < 0)
        return true;
    for (size_t k = 0; k < m->nmetrics; k++) {
        double limit = kind == BL_MOVE_FIX ? b->total[k] : b->nonbuf[k];
        if (rp->load[k] > 0 && limit >= 0 && b->load[k] + rp->load[k] > limit + EPS)
            return false;
        /* what svc_commit.lua re-checks: the declared loads of the assigned specs */
        if (rp->declared[k] > 0 && b->total[k] >= 0 &&
            b->declared[k] + rp->declared[k] > b->total[k] + EPS)
            return false;
    }
    return true;
}

static bool mesos_ok(const bl_model_t *m, int r, int to)
{
    const bl_replica_t *rp = &m->reps.v[r];
    const bl_service_t *sv = &m->svcs[rp->svc];
    if (!sv->s->constraints || m->c->priorities.placement < 0)
        return true;
    const json_t **placed = calloc(sv->reps.n + 1, sizeof(*placed));
    const json_t **eligible = calloc(m->nnodes + 1, sizeof(*eligible));
    size_t np = 0, ne = 0;
    for (size_t i = 0; i < sv->reps.n; i++)
        if (sv->reps.v[i] != r)
            placed[np++] = m->nodes[m->reps.v[sv->reps.v[i]].node].cn->props;
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].up && (!sv->feas || sv->feas[i]))
            eligible[ne++] = m->nodes[i].cn->props;
    cv_mesos_ctx_t ctx = {m->nodes[to].cn->props, placed, np, sv->s->replicas, eligible, ne};
    bool ok = cv_mconstraint_allows(sv->s->constraints, &ctx);
    free(placed);
    free(eligible);
    return ok;
}

static bool level_checked(const bl_model_t *m, size_t level)
{
    bool ud = level + 1 == m->ndomlevels;
    return (ud ? m->c->priorities.upgrade_domain : m->c->priorities.fault_domain) >= 0;
}

/* max - min replicas over the service's domains of one level, with one
 * replica taken from domain `from` and given to `to` (BL_NONE: as is). */
static int spread_with(const bl_model_t *m, const bl_service_t *sv, size_t level, int from, int to)
{
    int lo = 1 << 30, hi = -1;
    for (size_t i = m->levstart[level]; i < m->levstart[level + 1]; i++) {
        int d = m->levdom[i];
        if (!sv->inv[d] && d != to)
            continue;
        int n = sv->domcnt[d] - (d == from) + (d == to);
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
    }
    return hi < 0 ? 0 : hi - lo;
}

int cv__bl_spread(const bl_model_t *m, int s, size_t level)
{
    return spread_with(m, &m->svcs[s], level, BL_NONE, BL_NONE);
}

static bool domains_ok(const bl_model_t *m, const bl_replica_t *rp, int to)
{
    const bl_service_t *sv = &m->svcs[rp->svc];
    for (size_t l = 0; l < m->ndomlevels; l++) {
        int da = m->nodes[rp->node].dom[l], db = m->nodes[to].dom[l];
        if (da == db || !level_checked(m, l))
            continue;
        int before = spread_with(m, sv, l, BL_NONE, BL_NONE);
        int after = spread_with(m, sv, l, da, db);
        if (after > (before > 1 ? before : 1))
            return false;
    }
    return true;
}

bool cv__bl_allowed(bl_model_t *m, int r, int to, bl_move_kind_t kind)
{
    const bl_replica_t *rp = &m->reps.v[r];
    const bl_service_t *sv = &m->svcs[rp->svc];
    if (to == rp->node || !m->nodes[to].up || (sv->feas && !sv->feas[to]))
        return false;
    if (holds_service(m, to, rp->svc) || !has_room(m, rp, to, kind))
        return false;
    return domains_ok(m, rp, to) && mesos_ok(m, r, to);
}

bool cv__bl_over(const bl_model_t *m, int n, int *metric)
{
    const bl_node_t *node = &m->nodes[n];
    if (!node->alive || m->c->priorities.capacity < 0)
        return false;
    for (size_t k = 0; k < m->nmetrics; k++)
        if (node->total[k] >= 0 && node->load[k] > node->total[k] + EPS) {
            *metric = (int)k;
            return true;
        }
    return false;
}
