/*
 * place_capacity — node capacity, buffered capacity and overbooking, the
 * up-front cluster capacity check and the balance score.
 *
 * Service Fabric's cluster description docs define two figures per node and
 * metric: the total capacity (the node capacity with a buffer, capacity x
 * (1 + overbooking) with overbooking, unlimited with overbooking -1) and
 * the non-buffered capacity (capacity x (1 - buffer), or the plain capacity
 * with overbooking). Normal placement — creating a service, CV_PLACE_NEW —
 * stays within the non-buffered figure; the availability actions (replacing
 * a failed replica, upgrades, constraint fixes, defragmentation) may go up
 * to the total, and still prefer nodes where they need not.
 */
#include "place_internal.h"

#include <math.h>
#include <stdio.h>

/* floor(capacity x factor), immune to 0.8 x 100 = 79.999... */
static int64_t scaled(int64_t capacity, double factor)
{
    return (int64_t)floor((double)capacity * factor + 1e-9);
}

/* The two figures of a finite capacity (INT64_MAX: unlimited). */
static int64_t total_capacity(int64_t cap, double overbook)
{
    return overbook < 0 ? INT64_MAX : overbook > 0 ? scaled(cap, 1 + overbook) : cap;
}

static int64_t nonbuffered_capacity(int64_t cap, double buffer)
{
    return buffer > 0 ? scaled(cap, 1 - buffer) : cap;
}

int64_t cv__place_total_limit(const cv_cluster_t *c, size_t node, int m)
{
    int64_t cap = c->nodes[node].capacity[m];
    return cap < 0 ? INT64_MAX : total_capacity(cap, c->metrics[m].overbook);
}

int64_t cv__place_replica_load(const cv_service_t *s, size_t metric, int rolekind)
{
    return rolekind ? s->metrics[metric].secondary_load : s->metrics[metric].primary_load;
}

/* ---------------------------------------------------------------- per-node scan */

typedef pl_metric_t scan_metric_t;

/* Fit bits and balance of one node and metric with a finite capacity. */
static void node_fit(pl_ctx_t *x, size_t node, const scan_metric_t *sm, int64_t cap, int64_t have,
                     int64_t nonbuffered, int64_t limit)
{
    double denom = cap > 0 ? (double)cap : 1.0;
    for (int rk = 0; rk < 2; rk++) {
        int64_t load = sm->load[rk], after = have + load;
        if (load > 0 && after > limit)
            x->mask[node] |= rk ? PL_F_CAP_SECONDARY : PL_F_CAP_PRIMARY;
        else if (load > 0 && after > nonbuffered)
            x->mask[node] |= rk ? PL_F_BUF_SECONDARY : PL_F_BUF_PRIMARY;
        x->balance[rk][node] += sm->weight * (double)after / denom;
    }
}

static int64_t action_limit(const pl_ctx_t *x, int64_t nonbuffered, int64_t total)
{
    return x->action == CV_PLACE_NEW ? nonbuffered : total;
}

/* Fit bits, balance and cluster room for one node and metric with a finite
 * capacity; only the room for a node that can never be a candidate. */
static void scan_finite(pl_ctx_t *x, size_t node, const scan_metric_t *sm, int64_t cap,
                        bool candidate)
{
    int64_t have = x->c->nodes[node].load[sm->m];
    int64_t nonbuffered = nonbuffered_capacity(cap, sm->buffer);
    int64_t limit = action_limit(x, nonbuffered, total_capacity(cap, sm->over));
    if (x->c->nodes[node].status == CV_NODE_UP) {
        if (limit == INT64_MAX)
            x->room_unlimited[sm->m] = true;
        else if (limit > have)
            x->room[sm->m] += limit - have;
    }
    if (candidate)
        node_fit(x, node, sm, cap, have, nonbuffered, limit);
}

/* Where a node has no capacity for a metric, utilisation is measured
 * against the largest finite capacity in the cluster (the placer's
 * yardstick), so unlimited nodes take their share instead of absorbing
 * everything. */
static void unlimited_balance(pl_ctx_t *x, size_t node, const scan_metric_t *sm)
{
    const cv_node_t *n = &x->c->nodes[node];
    for (int rk = 0; rk < 2; rk++)
        x->balance[rk][node] +=
            sm->weight * (double)(n->load[sm->m] + sm->load[rk]) / x->p->scale[sm->m];
}

static void scan_unlimited(pl_ctx_t *x, const scan_metric_t *sm)
{
    for (size_t node = 0; node < x->c->nnodes; node++) {
        const cv_node_t *n = &x->c->nodes[node];
        if (n->capacity[sm->m] >= 0)
            continue;
        if (n->status == CV_NODE_UP)
            x->room_unlimited[sm->m] = true;
        unlimited_balance(x, node, sm);
    }
}

/* The service's metrics that the cluster knows. */
size_t cv__place_metrics(const pl_ctx_t *x, pl_metric_t *sms)
{
    size_t n = 0;
    for (size_t i = 0; i < x->s->nmetrics; i++) {
        int m = x->cm[i];
        if (m < 0)
            continue;
        sms[n++] = (scan_metric_t){
            m,
            {cv__place_replica_load(x->s, i, 0), cv__place_replica_load(x->s, i, 1)},
            x->s->metrics[i].weight,
            x->c->metrics[m].buffer,
            x->c->metrics[m].overbook};
    }
    return n;
}

/* One pass over the nodes for every metric of the service: a 10,000-node
 * placement spends most of its time here, so limits are computed once per
 * node and metric and shared by both role kinds and the cluster room. */
void cv__place_capacity_scan(pl_ctx_t *x)
{
    const scan_metric_t *sms = x->sms;
    size_t n = x->nsms;
    bool unlimited[CV_MAX_METRICS] = {false};
    unsigned never = PL_F_DOWN;
    if (cv__place_step_priority(x->c, PL_PLACEMENT) == PL_HARD)
        never |= PL_F_PLACEMENT;
    if (cv__place_step_priority(x->c, PL_AFFINITY) == PL_HARD)
        never |= PL_F_AFFINITY;
    for (size_t node = 0; node < x->c->nnodes; node++) {
        bool candidate = !(x->mask[node] & never);
        for (size_t j = 0; j < n; j++) {
            int64_t cap = x->c->nodes[node].capacity[sms[j].m];
            if (cap < 0)
                unlimited[j] = true;
            else
                scan_finite(x, node, &sms[j], cap, candidate);
        }
    }
    for (size_t j = 0; j < n; j++)
        if (unlimited[j])
            scan_unlimited(x, &sms[j]);
}

void cv__place_limits(cv_placer_t *p)
{
    const cv_cluster_t *c = p->c;
    for (size_t n = 0; n < c->nnodes; n++)
        for (size_t m = 0; m < c->nmetrics; m++) {
            int64_t cap = c->nodes[n].capacity[m];
            int64_t *at = &p->limits[(n * c->nmetrics + m) * 2];
            at[0] = cap < 0 ? INT64_MAX : nonbuffered_capacity(cap, c->metrics[m].buffer);
            at[1] = cap < 0 ? INT64_MAX : total_capacity(cap, c->metrics[m].overbook);
        }
}

void cv__place_probe(pl_ctx_t *x, size_t node)
{
    const cv_node_t *nd = &x->c->nodes[node];
    const int64_t *limits = &x->p->limits[node * x->c->nmetrics * 2];
    uint8_t mask = nd->status == CV_NODE_UP ? 0 : PL_F_DOWN;
    for (size_t j = 0; j < x->nsms; j++) {
        const pl_metric_t *sm = &x->sms[j];
        if (nd->capacity[sm->m] < 0)
            continue;
        int64_t have = nd->load[sm->m], nonbuffered = limits[sm->m * 2];
        int64_t limit = action_limit(x, nonbuffered, limits[sm->m * 2 + 1]);
        for (int rk = 0; rk < 2; rk++) {
            int64_t load = sm->load[rk], after = have + load;
            if (load > 0 && after > limit)
                mask |= rk ? PL_F_CAP_SECONDARY : PL_F_CAP_PRIMARY;
            else if (load > 0 && after > nonbuffered)
                mask |= rk ? PL_F_BUF_SECONDARY : PL_F_BUF_PRIMARY;
        }
    }
    x->mask[node] = mask;
}

/* ---------------------------------------------------------------- cluster capacity */

/* The load the replicas still missing would add for service metric i. */
static int64_t missing_load(const pl_ctx_t *x, size_t i)
{
    int64_t need = 0;
    for (int r = 0; r < x->target; r++) {
        bool present = false;
        for (size_t k = 0; k < x->nreps && !present; k++)
            present = x->reps[k].index == r;
        if (!present)
            need += cv__place_replica_load(x->s, i, pl_rolekind(x, r));
    }
    return need;
}

json_t *cv__place_cluster_capacity(const pl_ctx_t *x)
{
    json_t *shortfall = json_object(), *required = json_object(), *remaining = json_object();
    char text[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < x->s->nmetrics; i++) {
        if (x->cm[i] < 0)
            continue;
        int m = x->cm[i];
        int64_t need = missing_load(x, i), room = x->room[m];
        if (x->room_unlimited[m] || need <= room)
            continue;
        const char *name = x->s->metrics[i].name;
        json_object_set_new(shortfall, name, json_integer(need - room));
        json_object_set_new(required, name, json_integer(need));
        json_object_set_new(remaining, name, json_integer(room));
        if (used < sizeof(text))
            used +=
                (size_t)snprintf(text + used, sizeof(text) - used, "%s%s needs %lld, %lld remain",
                                 used ? "; " : "", name, (long long)need, (long long)room);
    }
    if (json_object_size(shortfall) == 0) {
        json_decref(shortfall);
        json_decref(required);
        json_decref(remaining);
        return NULL;
    }
    return json_pack("{s:s, s:s+, s:o, s:o, s:o}", "reason", "ClusterCapacity", "description",
                     "the cluster's remaining capacity cannot hold the service: ", text,
                     "shortfall", shortfall, "required", required, "remaining", remaining);
}
