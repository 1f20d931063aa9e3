/*
 * balance_constraint — the constraint check (docs/crm.md): a node over its
 * capacity by its replicas' current loads (a reported load spike, a
 * capacity lowered) sheds replicas, the lowest move cost first, until it
 * fits; a service whose fault or upgrade domain spread is more than one
 * replica apart (after nodes came and went) has a replica moved from its
 * fullest domain to its emptiest. Each move keeps every hard constraint
 * (balance_check.c) and may use the buffer, as an availability action.
 * Replicas violating a changed placement constraint are not this phase's
 * work: each service's reconcile moves them (reconcile_place.c).
 */
#include "balance_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* Lowest move cost first; among equals the replica whose load of the
 * metric covers the excess with the least to spare, else the largest. */
static bool better(const bl_model_t *m, int a, int b, int k, double excess)
{
    const bl_replica_t *ra = &m->reps.v[a], *rb = &m->reps.v[b];
    double ca = m->svcs[ra->svc].cost, cb = m->svcs[rb->svc].cost;
    if (ca != cb)
        return ca < cb;
    double la = ra->load[k], lb = rb->load[k];
    bool fa = la >= excess, fb = lb >= excess;
    if (fa != fb)
        return fa;
    return fa ? la < lb : la > lb;
}

/* Utilisation of metric k on node n with `extra` more. */
static double use(const bl_model_t *m, int n, size_t k, double extra)
{
    const bl_node_t *node = &m->nodes[n];
    double cap = node->total[k];
    return (node->load[k] + extra) / (cap > 0 ? cap : cap == 0 ? 1e-9 : 1e18);
}

/* The allowed target with the most room left for metric k, or BL_NONE. */
static int roomiest(bl_model_t *m, int r, size_t k)
{
    int best = BL_NONE;
    double best_use = 0;
    for (size_t n = 0; n < m->nnodes; n++) {
        double u = use(m, (int)n, k, m->reps.v[r].load[k]);
        if ((best == BL_NONE || u < best_use) && cv__bl_allowed(m, r, (int)n, BL_MOVE_FIX)) {
            best = (int)n;
            best_use = u;
        }
    }
    return best;
}

/* Moves one replica off node n, over capacity of metric k; false when none can. */
static bool shed_one(bl_model_t *m, int n, int k)
{
    const bl_node_t *node = &m->nodes[n];
    double excess = node->load[k] - node->total[k];
    size_t cnt = node->reps.n;
    int *order = malloc((cnt + 1) * sizeof(int));
    size_t len = 0;
    for (size_t i = 0; i < cnt; i++) {
        int r = node->reps.v[i];
        if (!m->reps.v[r].movable || m->reps.v[r].load[k] <= 0)
            continue;
        size_t at = len++;
        while (at > 0 && better(m, r, order[at - 1], k, excess)) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = r;
    }
    bool done = false;
    for (size_t i = 0; i < len && !done; i++) {
        int r = order[i], to = roomiest(m, r, (size_t)k);
        if (to == BL_NONE)
            continue;
        char detail[512];
        snprintf(detail, sizeof(detail), "node %s holds %g of its capacity %g of %s (move cost %s)",
                 node->cn->name, node->load[k], node->total[k], m->metric[k],
                 m->svcs[m->reps.v[r].svc].cost_name);
        cv__bl_record(m, r, n, to, "constraint", detail);
        cv__bl_apply(m, r, to);
        done = true;
    }
    free(order);
    return done;
}

static void fix_capacity(bl_model_t *m)
{
    for (size_t n = 0; n < m->nnodes; n++) {
        int k;
        while (cv__bl_over(m, (int)n, &k)) {
            if (shed_one(m, (int)n, k))
                continue;
            if (!m->why[0])
                snprintf(m->why, sizeof(m->why),
                         "a constraint would break: node %s holds %g of its capacity %g of %s and "
                         "no replica on it can move to a node that keeps every hard constraint",
                         m->nodes[n].cn->name, m->nodes[n].load[k], m->nodes[n].total[k],
                         m->metric[k]);
            break;
        }
    }
}

/* ---------------------------------------------------------------- domains */

static const char *level_name(const bl_model_t *m, size_t level)
{
    return level + 1 == m->ndomlevels ? "upgrade" : "fault";
}

/* The service's fullest (hi) or emptiest domain at `level`. */
static int extreme(const bl_model_t *m, const bl_service_t *sv, size_t level, bool hi)
{
    int best = BL_NONE;
    for (size_t i = m->levstart[level]; i < m->levstart[level + 1]; i++) {
        int d = m->levdom[i];
        if (sv->inv[d] && (best == BL_NONE || (hi ? sv->domcnt[d] > sv->domcnt[best]
                                                  : sv->domcnt[d] < sv->domcnt[best])))
            best = d;
    }
    return best;
}

/* One move of service s from its fullest domain of `level` to its
 * emptiest; false when none keeps the other constraints. */
static bool spread_one(bl_model_t *m, int s, size_t level)
{
    const bl_service_t *sv = &m->svcs[s];
    int from = extreme(m, sv, level, true), to = extreme(m, sv, level, false);
    for (size_t i = 0; i < sv->reps.n; i++) {
        int r = sv->reps.v[i];
        const bl_replica_t *rp = &m->reps.v[r];
        if (!rp->movable || m->nodes[rp->node].dom[level] != from)
            continue;
        for (size_t n = 0; n < m->nnodes; n++) {
            if (m->nodes[n].dom[level] != to || !cv__bl_allowed(m, r, (int)n, BL_MOVE_FIX))
                continue;
            char detail[512];
            int before = cv__bl_spread(m, s, level);
            snprintf(detail, sizeof(detail),
                     "service %s is %d replicas apart over its %s domains (at most 1)", sv->id,
                     before, level_name(m, level));
            int node = rp->node;
            cv__bl_record(m, r, node, (int)n, "constraint", detail);
            cv__bl_apply(m, r, (int)n);
            return true;
        }
    }
    return false;
}

static void fix_domains(bl_model_t *m)
{
    for (size_t s = 0; s < m->nsvcs; s++) {
        if (!m->svcs[s].movable)
            continue;
        for (size_t l = 0; l < m->ndomlevels; l++) {
            bool ud = l + 1 == m->ndomlevels;
            int prio = ud ? m->c->priorities.upgrade_domain : m->c->priorities.fault_domain;
            for (size_t tries = 0; prio >= 0 && tries < m->svcs[s].reps.n; tries++)
                if (cv__bl_spread(m, (int)s, l) <= 1 || !spread_one(m, (int)s, l))
                    break;
        }
    }
}

void cv__bl_constraint(bl_model_t *m)
{
    fix_capacity(m);
    fix_domains(m);
}
