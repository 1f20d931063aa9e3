/*
 * cv_placement — placing a service's replicas: domains, properties,
 * capacities, constraints and their priorities, affinity (after Service
 * Fabric's Cluster Resource Manager) and Mesos attribute constraints.
 *
 * One call: index the cluster's domains, scan the nodes once for the
 * node-local filters and the balance score, reject up front what the
 * cluster cannot hold, then place the missing replicas one by one, primary
 * first. Each replica goes through a ladder of modes: every hard and soft
 * constraint; then (unless the service requires domain distribution)
 * packing into the domains that still have usable nodes; then each soft
 * constraint dropped in turn, last in Service Fabric's order first. The
 * first mode with a candidate wins, so a soft constraint is broken only
 * when nothing satisfies it, and a hard one never. A replica no mode can
 * place is reported with the elimination sequence of the last mode tried.
 * The result is re-validated by the same checker that cv_place_check uses,
 * which produces the health reports.
 *
 * A call runs on a placer (the domain index, constraint memo and scratch
 * kept across calls, below): on a large cluster the first mode samples
 * (place_sample.c) and the whole-cluster scans run only when the sample
 * cannot decide.
 */
#include "place_internal.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- call state */

/* The per-node arrays are the placer's, clean on entry; the call's own
 * arrays are sized by its replicas and the domains, never by the nodes. */
static int ctx_alloc(pl_ctx_t *x)
{
    cv_placer_t *p = x->p;
    size_t reps = x->nreps + (size_t)(x->target > 0 ? x->target : 0) + 1;
    x->mask = p->mask;
    x->used = p->used;
    x->balance[0] = p->balance[0];
    x->balance[1] = p->balance[1];
    x->fd_count = p->fd_count;
    x->ud_count = p->ud_count;
    x->avail = p->avail;
    x->cells = p->cells;
    x->cand = p->cand;
    x->inv = p->inv;
    x->pack = p->pack;
    x->reps = malloc(reps * sizeof(cv_replica_t));
    x->placed_props = malloc(reps * sizeof(json_t *));
    return x->reps && x->placed_props ? 0 : CV_ENOMEM;
}

static void add_replica(pl_ctx_t *x, int index, cv_role_t role, size_t node)
{
    x->reps[x->nreps++] = (cv_replica_t){index, role, node};
    x->used[node] = 1;
    for (size_t k = 0; k < x->ix.nlevels; k++)
        x->fd_count[pl_fd(&x->ix, node, k)]++;
    x->ud_count[x->ix.ud[node]]++;
}

/* The strict spread set: every node the hard placement constraint admits,
 * whatever its status, and every node already holding a replica. Sampling,
 * the admitted nodes' domains come from the memo (the unconstrained
 * entry's when the constraint is not hard); else from the static scan. */
int cv__place_inventory(pl_ctx_t *x)
{
    if (x->inv_ready)
        return 0;
    bool narrowed = x->s->placement && cv__place_step_priority(x->c, PL_PLACEMENT) == PL_HARD;
    if (x->entry) {
        const pl_entry_t *e = narrowed ? x->entry : cv__place_entry(x->p, NULL);
        if (!e)
            return CV_ENOMEM;
        memcpy(x->inv.fd_in, e->inv->fd_in, x->ix.nfd);
        memcpy(x->inv.ud_in, e->inv->ud_in, x->ix.nud);
    } else {
        if (!x->full)
            return CV_EINVAL; /* the static scan's masks are needed */
        memset(x->inv.fd_in, 0, x->ix.nfd);
        memset(x->inv.ud_in, 0, x->ix.nud);
        for (size_t n = 0; n < x->c->nnodes; n++)
            if (!narrowed || !(x->mask[n] & PL_F_PLACEMENT))
                cv__place_spread_add_node(&x->inv, &x->ix, n);
    }
    for (size_t i = 0; i < x->nreps; i++)
        cv__place_spread_add_node(&x->inv, &x->ix, x->reps[i].node);
    cv__place_spread_count(&x->inv, &x->ix);
    x->inv_ready = true;
    return 0;
}

static bool present(const pl_ctx_t *x, int replica)
{
    for (size_t i = 0; i < x->nreps; i++)
        if (x->reps[i].index == replica)
            return true;
    return false;
}

/* A stateful service without a primary in the layout gets its lowest
 * missing replica (replica 0 for a new service) as the primary. */
static int first_primary(const pl_ctx_t *x)
{
    for (size_t i = 0; i < x->nreps; i++)
        if (x->reps[i].role == CV_ROLE_PRIMARY)
            return -1;
    for (int r = 0; x->s->stateful && r < x->target; r++)
        if (!present(x, r))
            return r;
    return -1;
}

int cv__place_ctx_init(pl_ctx_t *x, cv_placer_t *p, const cv_service_t *s,
                       const cv_layout_t *layout, cv_place_action_t action)
{
    const cv_cluster_t *c = p->c;
    *x = (pl_ctx_t){
        .p = p, .c = c, .s = s, .layout = layout, .action = action, .target = s->replicas};
    x->ix = p->ix; /* borrowed: the ctx never frees it */
    const cv_placed_service_t *mine = cv__place_find(layout, s->name);
    x->nreps = mine ? mine->nreplicas : 0; /* sizes the replica array */
    if (ctx_alloc(x))
        return CV_ENOMEM;
    x->nreps = 0;
    x->policy = cv__place_policy(&x->ix, c, s);
    for (size_t i = 0; i < s->nmetrics; i++)
        x->cm[i] = cv_cluster_metric(c, s->metrics[i].name);
    x->nsms = cv__place_metrics(x, x->sms);
    for (size_t i = 0; mine && i < mine->nreplicas; i++)
        add_replica(x, mine->replicas[i].index, mine->replicas[i].role, mine->replicas[i].node);
    x->primary = first_primary(x);
    if (cv__place_sampling(x)) {
        x->eligible = x->entry->eligible;
        x->neligible = x->entry->nnodes;
        x->eligible_borrowed = true;
        return cv__place_inventory(x);
    }
    return cv__place_full(x);
}

int cv__place_full(pl_ctx_t *x)
{
    if (x->full)
        return 0;
    size_t n = x->c->nnodes + 1;
    memset(x->mask, 0, n);
    memset(x->balance[0], 0, n * sizeof(double));
    memset(x->balance[1], 0, n * sizeof(double));
    if (cv__place_static_scan(x))
        return CV_ENOMEM;
    cv__place_capacity_scan(x);
    x->full = true;
    return cv__place_inventory(x);
}

/* Leaves the placer's scratch as the call found it: only the entries of
 * the call's replicas and cells were touched (the masks and balances are
 * rewritten before they are read). */
void cv__place_ctx_free(pl_ctx_t *x)
{
    for (size_t i = 0; x->reps && i < x->nreps; i++) {
        size_t node = x->reps[i].node;
        x->used[node] = 0;
        for (size_t k = 0; k < x->ix.nlevels; k++)
            x->fd_count[pl_fd(&x->ix, node, k)]--;
        x->ud_count[x->ix.ud[node]]--;
    }
    for (size_t i = 0; x->avail && i < x->ncells_used; i++)
        x->avail[x->cells[i]] = 0;
    free(x->reps);
    free(x->placed_props);
    if (!x->eligible_borrowed)
        free(x->eligible);
}

/* ---------------------------------------------------------------- the mode ladder */

#define PL_MAX_MODES (PL_NSTEPS + 2)

/* Builds the modes in the order they are tried; returns how many. */
static size_t mode_ladder(const pl_ctx_t *x, pl_mode_t *modes)
{
    pl_mode_t m = {0};
    for (int st = 0; st < PL_NSTEPS; st++) {
        int prio = cv__place_step_priority(x->c, (pl_step_t)st);
        if (!cv__place_step_applies(x, (pl_step_t)st))
            continue;
        if (prio == PL_HARD || prio == PL_SOFT)
            m.enforce |= PL_BIT(st);
        else if (prio == PL_OPTIMIZE)
            m.prefer |= PL_BIT(st);
    }
    unsigned domains = PL_BIT(PL_FAULT_DOMAIN) | PL_BIT(PL_UPGRADE_DOMAIN);
    bool required = x->s->require_domain_distribution;
    size_t n = 0;
    modes[n++] = m;
    if (!required && (m.enforce & domains)) {
        m.packing = true;
        modes[n++] = m;
    }
    for (int st = PL_NSTEPS - 1; st > PL_EXCLUSION; st--) {
        bool locked = required && (PL_BIT(st) & domains);
        if (!(m.enforce & PL_BIT(st)) || locked ||
            cv__place_step_priority(x->c, (pl_step_t)st) != PL_SOFT)
            continue;
        m.enforce &= ~PL_BIT(st);
        m.prefer |= PL_BIT(st);
        modes[n++] = m;
    }
    modes[n - 1].best_effort = true;
    return n;
}

/* Whether the node would break the domain rules the first mode enforced. */
static bool breaks_domains(pl_ctx_t *x, const pl_mode_t *first, const pl_mode_t *used, size_t node)
{
    unsigned domains = PL_BIT(PL_FAULT_DOMAIN) | PL_BIT(PL_UPGRADE_DOMAIN);
    if (!(first->enforce & domains) ||
        (!used->packing && (used->enforce & domains) == (first->enforce & domains)))
        return false;
    pl_mode_t strict = *used;
    strict.enforce |= first->enforce & domains;
    strict.packing = false;
    return !cv__place_domains_ok(x, &strict, node, cv__place_frees_later(x, used, node),
                                 first->enforce & PL_BIT(PL_FAULT_DOMAIN),
                                 first->enforce & PL_BIT(PL_UPGRADE_DOMAIN), x->pending);
}

/* What the chosen node actually needed relaxed, for the warning: the soft
 * constraints it breaks, or the packing of domains. */
static void describe_relaxation(pl_ctx_t *x, const pl_mode_t *first, const pl_mode_t *used,
                                int replica, size_t node, char *buf, size_t size)
{
    int rk = pl_rolekind(x, replica);
    const struct {
        pl_step_t step;
        unsigned bits;
    } local[] = {{PL_PLACEMENT, PL_F_PLACEMENT},
                 {PL_CAPACITY, rk ? PL_F_CAP_SECONDARY : PL_F_CAP_PRIMARY},
                 {PL_AFFINITY, PL_F_AFFINITY},
                 {PL_MESOS, 0}};
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof(local) / sizeof(local[0]) && len < size; i++) {
        unsigned bit = PL_BIT(local[i].step);
        if (!(first->enforce & bit) || (used->enforce & bit))
            continue;
        bool broken =
            local[i].bits ? (x->mask[node] & local[i].bits) != 0 : !cv__place_mesos_ok(x, node);
        if (broken)
            len += (size_t)snprintf(buf + len, size - len, "%s%s (soft)", len ? ", " : "",
                                    cv__place_step_name(local[i].step));
    }
    if (len < size && breaks_domains(x, first, used, node))
        len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
                                used->packing ? "packing into the domains that have usable nodes"
                                              : "domain spread (soft)");
    if (len == 0)
        snprintf(buf, size, "planning the domains for fewer replicas than the target");
}

/* ---------------------------------------------------------------- placing */

static cv_role_t role_of(const pl_ctx_t *x, int replica)
{
    if (!x->s->stateful)
        return CV_ROLE_INSTANCE;
    return replica == x->primary ? CV_ROLE_PRIMARY : CV_ROLE_SECONDARY;
}

static void report_unplaced(pl_ctx_t *x, json_t *out, const pl_mode_t *last, int replica)
{
    json_t *seq = cv__place_eliminations(x, last, replica);
    char summary[1536] = "";
    size_t len = 0;
    for (size_t i = 0; i < json_array_size(seq) && len < sizeof(summary); i++) {
        json_t *step = json_array_get(seq, i);
        len += (size_t)snprintf(summary + len, sizeof(summary) - len, "%s%s eliminated %zu node(s)",
                                len ? "; " : "",
                                json_string_value(json_object_get(step, "constraint")),
                                json_array_size(json_object_get(step, "eliminated")));
    }
    json_array_append_new(json_object_get(out, "unplaced"),
                          json_pack("{s:i, s:o}", "replica", replica, "eliminationSequence", seq));
    cv_role_t role = role_of(x, replica);
    const char *title = role == CV_ROLE_PRIMARY     ? "Primary"
                        : role == CV_ROLE_SECONDARY ? "Secondary"
                                                    : "Instance";
    char property[64];
    snprintf(property, sizeof(property), "ServiceReplicaUnplacedHealth_%s", title);
    json_array_append_new(json_object_get(out, "health"),
                          cv__place_health(property, false,
                                           "The Load Balancer was unable to find a placement for "
                                           "%s %s Replica %d: %s",
                                           x->s->name, title, replica, summary));
}

/* Sampling tries the first mode on a sample; anything it cannot decide,
 * and every later replica of the call, goes to the exhaustive ladder. */
static void place_replica(pl_ctx_t *x, json_t *out, const pl_mode_t *modes, size_t nmodes,
                          int replica)
{
    if (x->entry && !x->full) {
        uint32_t node = cv__place_sampled_select(x, &modes[0], replica);
        if (node != PL_NONE) {
            add_replica(x, replica, role_of(x, replica), node);
            return;
        }
        if (cv__place_full(x))
            return;
    }
    for (size_t i = 0; i < nmodes; i++) {
        uint32_t node = cv__place_select(x, &modes[i], replica);
        if (node == PL_NONE)
            continue;
        if (i > 0) {
            char what[512], text[768];
            describe_relaxation(x, &modes[0], &modes[i], replica, node, what, sizeof(what));
            snprintf(text, sizeof(text), "%s replica %d placed on %s by relaxing: %s", x->s->name,
                     replica, x->c->nodes[node].name, what);
            json_array_append_new(json_object_get(out, "warnings"), json_string(text));
        }
        add_replica(x, replica, role_of(x, replica), node);
        return;
    }
    report_unplaced(x, out, &modes[nmodes - 1], replica);
}

/* Missing replica indices, the primary first (it is the lowest), then
 * ascending. */
static size_t missing_replicas(const pl_ctx_t *x, int *out)
{
    size_t n = 0;
    for (int r = 0; r < x->target; r++)
        if (!present(x, r))
            out[n++] = r;
    return n;
}

static int replica_cmp(const void *pa, const void *pb)
{
    const cv_replica_t *a = pa, *b = pb;
    return (a->index > b->index) - (a->index < b->index);
}

static void emit_placements(pl_ctx_t *x, json_t *out)
{
    cv_replica_t *sorted = malloc((x->nreps + 1) * sizeof(*sorted));
    if (!sorted)
        return;
    memcpy(sorted, x->reps, x->nreps * sizeof(*sorted));
    qsort(sorted, x->nreps, sizeof(*sorted), replica_cmp);
    json_t *list = json_object_get(out, "placements");
    for (size_t i = 0; i < x->nreps; i++)
        json_array_append_new(list, json_pack("{s:i, s:s, s:s}", "replica", sorted[i].index, "role",
                                              cv__place_role_name(sorted[i].role), "node",
                                              x->c->nodes[sorted[i].node].name));
    free(sorted);
}

/* Health of the result: the service's own constraints, and capacity on the
 * nodes this call loaded (only reachable when capacity is soft). */
static void emit_health(pl_ctx_t *x, json_t *out, size_t first_new)
{
    pl_check_t k;
    if (cv__place_check_init(&k, x->c, &x->ix))
        return;
    k.eligible = x->eligible;
    k.neligible = x->neligible;
    cv__place_check_service(&k, x->s, x->reps, x->nreps, x->layout, &x->inv);
    for (size_t i = first_new; i < x->nreps; i++) {
        int64_t extra[CV_MAX_METRICS] = {0};
        int rk = x->reps[i].role == CV_ROLE_SECONDARY;
        for (size_t m = 0; m < x->s->nmetrics; m++)
            if (x->cm[m] >= 0)
                extra[x->cm[m]] += cv__place_replica_load(x->s, m, rk);
        cv__place_check_node(&k, x->reps[i].node, extra);
    }
    json_array_extend(json_object_get(out, "health"), k.health);
    json_decref(k.health);
    cv__place_check_free(&k);
}

static const char *policy_name(cv_distribution_t p)
{
    return p == CV_DIST_QUORUM_SAFE ? "quorumSafe" : "maxDifference";
}

static json_t *result_skeleton(const cv_cluster_t *c, const cv_service_t *s, cv_distribution_t p)
{
    json_t *warnings = json_array();
    for (size_t i = 0; i < c->warnings.n; i++)
        json_array_append_new(warnings, json_string(c->warnings.v[i]));
    return json_pack("{s:s, s:s, s:[], s:[], s:[], s:o, s:n}", "service", s->name, "policy",
                     policy_name(p), "placements", "unplaced", "health", "warnings", warnings,
                     "rejected");
}

static void place_all(pl_ctx_t *x, json_t *out)
{
    pl_mode_t modes[PL_MAX_MODES];
    size_t nmodes = mode_ladder(x, modes);
    int *missing = malloc(((size_t)(x->target > 0 ? x->target : 0) + 1) * sizeof(int));
    if (!missing)
        return;
    size_t nmissing = missing_replicas(x, missing), first_new = x->nreps;
    for (size_t i = 0; i < nmissing; i++) {
        x->pending = (int)(nmissing - i - 1);
        place_replica(x, out, modes, nmodes, missing[i]);
    }
    free(missing);
    emit_placements(x, out);
    emit_health(x, out, first_new);
}

/* Only a hard capacity constraint refuses a service up front: a soft one
 * is broken when nothing fits, and reported. Sampling, the refusal is
 * decided after the fact: replicas placed within their nodes' limits prove
 * that the cluster's room holds them, so only a call with an unplaced
 * replica needs the whole-cluster sums. */
static json_t *refusal(pl_ctx_t *x)
{
    if (cv__place_step_priority(x->c, PL_CAPACITY) != PL_HARD || cv__place_full(x))
        return NULL;
    return cv__place_cluster_capacity(x);
}

json_t *cv_placer_place(cv_placer_t *p, const cv_service_t *service, const cv_layout_t *layout,
                        cv_place_action_t action)
{
    pl_ctx_t x;
    if (cv__place_ctx_init(&x, p, service, layout, action)) {
        cv__place_ctx_free(&x);
        return NULL;
    }
    json_t *out = result_skeleton(p->c, service, x.policy);
    json_t *rejected = out && !x.entry ? refusal(&x) : NULL;
    size_t existing = x.nreps;
    if (out && !rejected)
        place_all(&x, out);
    if (out && x.entry && json_array_size(json_object_get(out, "unplaced")) > 0) {
        size_t placed = x.nreps;
        x.nreps = existing; /* the refusal weighs the replicas missing before the call */
        rejected = refusal(&x);
        x.nreps = placed;
    }
    if (out && rejected) {
        json_decref(out);
        out = result_skeleton(p->c, service, x.policy);
    }
    if (out && rejected)
        json_object_set_new(out, "rejected", rejected);
    else
        json_decref(rejected);
    cv__place_ctx_free(&x);
    return out;
}

/* ---------------------------------------------------------------- the placer */

/* The largest finite capacity of each metric: unlimited nodes' yardstick. */
static void capacity_scale(cv_placer_t *p)
{
    for (size_t m = 0; m < p->c->nmetrics; m++) {
        int64_t best = 0;
        for (size_t i = 0; i < p->c->nnodes; i++)
            if (p->c->nodes[i].capacity[m] > best)
                best = p->c->nodes[i].capacity[m];
        p->scale[m] = best > 0 ? (double)best : 1.0;
    }
}

static cv_placer_t *placer_new(const cv_cluster_t *cluster, bool oneshot)
{
    cv_placer_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->c = cluster;
    p->oneshot = oneshot;
    p->sample_min = CV_PLACE_SAMPLE_MIN_NODES;
    if (cv__place_index_build(&p->ix, cluster)) {
        free(p);
        return NULL;
    }
    size_t n = cluster->nnodes + 1;
    p->mask = calloc(n, 1);
    p->used = calloc(n, 1);
    p->balance[0] = calloc(n, sizeof(double));
    p->balance[1] = calloc(n, sizeof(double));
    p->fd_count = calloc(p->ix.nfd + 1, sizeof(int));
    p->ud_count = calloc(p->ix.nud + 1, sizeof(int));
    p->avail = calloc(p->ix.ncells + 1, sizeof(uint32_t));
    p->cells = malloc((p->ix.ncells + 1) * sizeof(uint32_t));
    p->cand = malloc(n * sizeof(uint32_t));
    p->limits = malloc((n * (cluster->nmetrics + 1)) * 2 * sizeof(int64_t));
    size_t most = cv__place_sample_most(cluster->nnodes);
    p->picks = malloc(most * sizeof(uint32_t));
    p->ranks = malloc(most * sizeof(pl_rank_t));
    p->verdicts = malloc(p->ix.ncells * 4 + 4);
    if (!p->picks || !p->ranks || !p->verdicts || cv__place_spread_init(&p->inv, &p->ix) ||
        cv__place_spread_init(&p->pack, &p->ix) || !p->limits || !p->mask || !p->used ||
        !p->balance[0] || !p->balance[1] || !p->fd_count || !p->ud_count || !p->avail ||
        !p->cells || !p->cand) {
        cv_placer_free(p);
        return NULL;
    }
    capacity_scale(p);
    cv__place_limits(p);
    return p;
}

cv_placer_t *cv_placer_new(const cv_cluster_t *cluster)
{
    return placer_new(cluster, false);
}

void cv_placer_free(cv_placer_t *p)
{
    if (!p)
        return;
    cv__place_index_free(&p->ix);
    free(p->node_class);
    cv__place_entry_free(&p->all);
    for (size_t i = 0; i < p->nmemo; i++)
        cv__place_entry_free(&p->memo[i]);
    free(p->mask);
    free(p->used);
    free(p->balance[0]);
    free(p->balance[1]);
    free(p->fd_count);
    free(p->ud_count);
    free(p->avail);
    free(p->cells);
    free(p->cand);
    free(p->limits);
    free(p->picks);
    free(p->ranks);
    free(p->verdicts);
    if (p->inv.fd_in)
        cv__place_spread_free(&p->inv);
    if (p->pack.fd_in)
        cv__place_spread_free(&p->pack);
    free(p);
}

json_t *cv_place(const cv_cluster_t *cluster, const cv_service_t *service,
                 const cv_layout_t *layout, cv_place_action_t action)
{
    cv_placer_t *p = placer_new(cluster, true);
    if (!p)
        return NULL;
    json_t *out = cv_placer_place(p, service, layout, action);
    cv_placer_free(p);
    return out;
}

/* ---------------------------------------------------------------- check and policy */

json_t *cv_place_check(const cv_cluster_t *cluster, const cv_layout_t *layout)
{
    pl_index_t ix;
    if (cv__place_index_build(&ix, cluster))
        return NULL;
    pl_check_t k;
    if (cv__place_check_init(&k, cluster, &ix)) {
        cv__place_index_free(&ix);
        return NULL;
    }
    for (size_t i = 0; layout && i < layout->nservices; i++) {
        const cv_placed_service_t *ps = &layout->services[i];
        cv__place_check_service(&k, ps->service, ps->replicas, ps->nreplicas, layout, NULL);
    }
    for (size_t n = 0; n < cluster->nnodes; n++)
        cv__place_check_node(&k, n, NULL);
    cv__place_check_free(&k);
    cv__place_index_free(&ix);
    return k.health;
}

cv_distribution_t cv_place_policy(const cv_cluster_t *cluster, const cv_service_t *service)
{
    pl_index_t ix;
    if (service->distribution != CV_DIST_ADAPTIVE || cv__place_index_build(&ix, cluster))
        return service->distribution == CV_DIST_ADAPTIVE ? CV_DIST_MAX_DIFFERENCE
                                                         : service->distribution;
    cv_distribution_t p = cv__place_policy(&ix, cluster, service);
    cv__place_index_free(&ix);
    return p;
}
