/*
 * balance_score — how balanced the cluster is, per metric and scope (the
 * whole cluster, or each node type with SeparateBalancingStrategyPerNodeType),
 * over the nodes up: the most and least loaded node, their ratio against
 * the balancing threshold, and the activity threshold (docs/crm.md
 * "Balance"). A metric is out of balance when
 *     max > activity  and  (min == 0 ? max > 0 : max / min >= threshold)
 *     and  max != min
 * (">=": the second example of Service Fabric's balancing docs calls ratio
 * 2 against threshold 2 a violation). A defragmentation metric is to be
 * packed when
 *     max > activity  and  min > 0  and  max / min < threshold.
 *
 * The score the search improves, per scope and metric, with loads l_i
 * relative to the scope's mean load mu: S = sum_i (l_i / mu)^2 / 2 for a
 * balanced metric (lower is more even), -S for a defragmentation metric
 * (lower is more packed). Moving load L from a node loaded a to one loaded
 * b improves a balanced metric's score by L (a - b - L) / mu^2 and a
 * defragmentation metric's by L (b - a + L) / mu^2: scale free, and the
 * same for a cluster of ten nodes or a thousand. Every balanced metric of
 * the scope counts, out of balance or not, so a move that evens one metric
 * by unbalancing another gains less; a defragmentation metric counts only
 * while it is to be packed.
 */
#include "balance_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t scope_index(const bl_model_t *m, int node)
{
    if (!m->per_type)
        return 0;
    int t = m->nodes[node].type;
    return t == BL_NONE ? m->ntypes : (size_t)t;
}

bl_scope_t *cv__bl_scope_of(bl_model_t *m, int node)
{
    return &m->scopes[scope_index(m, node)];
}

static void scopes_init(bl_model_t *m)
{
    m->nscopes = m->per_type ? m->ntypes + 1 : 1;
    m->scopes = calloc(m->nscopes, sizeof(*m->scopes));
    const json_t *types = json_object_get(m->settings, "nodeTypes");
    for (size_t s = 0; s < m->nscopes; s++) {
        bl_scope_t *sc = &m->scopes[s];
        sc->type = m->per_type && s < m->ntypes ? m->types[s] : NULL;
        sc->type_index = sc->type ? (int)s : BL_NONE;
        const json_t *own = sc->type ? json_object_get(types, sc->type) : NULL;
        for (size_t k = 0; k < m->nmetrics; k++)
            sc->set[k] = cv__bl_metric_set(own ? own : m->settings, m->metric[k]);
    }
}

static json_t *ratio_json(double max, double min)
{
    if (max == min)
        return json_real(1);
    return min > 0 ? json_real(max / min) : json_null(); /* null: the least loaded is empty */
}

/* One scope and metric: its figures, trigger and entry. */
static void stat_one(bl_model_t *m, bl_scope_t *sc, size_t s, size_t k, bool after)
{
    double max = -1, min = 0, sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < m->nnodes; i++) {
        if (!m->nodes[i].up || scope_index(m, (int)i) != s)
            continue;
        double l = m->nodes[i].load[k];
        min = n == 0 || l < min ? l : min;
        max = l > max ? l : max;
        sum += l;
        n++;
    }
    if (n == 0)
        return;
    const bl_metric_set_t *set = &sc->set[k];
    if (after) {
        size_t i;
        json_t *e;
        json_array_foreach(sc->entries, i, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "metric")), m->metric[k]) == 0)
                json_object_set_new(e, "after", ratio_json(max, min));
        }
        return;
    }
    sc->mean[k] = sum / (double)n;
    bool active = max > set->activity;
    bool over = max != min && (min == 0 ? max > 0 : max / min >= set->threshold);
    bool pack = min > 0 && max / min < set->threshold;
    sc->triggered[k] = active && (set->defrag ? pack : over);
    sc->scored[k] = sc->mean[k] > 0 && (set->defrag ? sc->triggered[k] : true);
    if (!active && (set->defrag ? pack : over) && !m->quiet[0])
        snprintf(m->quiet, sizeof(m->quiet),
                 "below activity threshold: %s%s%s has its most loaded node at %g, not above "
                 "the activity threshold %g",
                 m->metric[k], sc->type ? " on node type " : "", sc->type ? sc->type : "", max,
                 set->activity);
    json_array_append_new(
        sc->entries,
        json_pack("{s:s, s:s?, s:f, s:f, s:o, s:f, s:f, s:s, s:b}", "metric", m->metric[k],
                  "nodeType", sc->type, "max", max, "min", min, "ratio", ratio_json(max, min),
                  "threshold", set->threshold, "activity", set->activity, "strategy",
                  set->defrag ? "defrag" : "balance", "imbalanced", sc->triggered[k]));
}

void cv__bl_stats(bl_model_t *m, bool after)
{
    if (!after && !m->scopes)
        scopes_init(m);
    for (size_t s = 0; s < m->nscopes; s++) {
        bl_scope_t *sc = &m->scopes[s];
        if (!after) {
            json_decref(sc->entries);
            sc->entries = json_array();
        }
        for (size_t k = 0; k < m->nmetrics; k++)
            if (m->used[k])
                stat_one(m, sc, s, k, after);
    }
}

double cv__bl_gain(const bl_model_t *m, int r, int to)
{
    const bl_replica_t *rp = &m->reps.v[r];
    const bl_scope_t *sc = &m->scopes[scope_index(m, rp->node)];
    const bl_node_t *a = &m->nodes[rp->node], *b = &m->nodes[to];
    double g = 0;
    for (size_t k = 0; k < m->nmetrics; k++) {
        double l = rp->load[k];
        if (l <= 0 || !sc->scored[k])
            continue;
        double mu2 = sc->mean[k] * sc->mean[k];
        g += sc->set[k].defrag ? l * (b->load[k] - a->load[k] + l) / mu2
                               : l * (a->load[k] - b->load[k] - l) / mu2;
    }
    return g;
}

json_t *cv__bl_imbalance(const bl_model_t *m)
{
    json_t *all = json_array();
    for (size_t s = 0; s < m->nscopes; s++)
        json_array_extend(all, m->scopes[s].entries);
    return all;
}
