/*
 * place_health — health reports: re-validates a layout with the same
 * definitions the planner used and reports each broken constraint the way
 * Service Fabric's System.PLB does (property names, Warning or Error, TTL,
 * remove-when-expired). A hard constraint broken is an Error; a soft one, or
 * domain packing that the service's policy permits, is a Warning.
 */
#include "place_internal.h"

#include "cv_base.h"
#include "cv_mesos.h"
#include "cv_pcexpr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Service Fabric's example report lives 1 min 5 s: reports are re-sent by every
 * constraint check (1 s), so one outlives a few missed checks and then goes. */
#define PL_TTL "00:01:05"

json_t *cv__place_health(const char *property, bool error, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "source", "System.PLB", "property", property,
                     "state", error ? "Error" : "Warning", "description", text, "timeToLive",
                     PL_TTL, "removeWhenExpired", 1);
}

const char *cv__place_role_name(cv_role_t role)
{
    return role == CV_ROLE_PRIMARY     ? "primary"
           : role == CV_ROLE_SECONDARY ? "secondary"
                                       : "instance";
}

static const char *role_title(cv_role_t role)
{
    return role == CV_ROLE_PRIMARY     ? "Primary"
           : role == CV_ROLE_SECONDARY ? "Secondary"
                                       : "Instance";
}

const cv_placed_service_t *cv__place_find(const cv_layout_t *layout, const char *name)
{
    for (size_t i = 0; layout && name && i < layout->nservices; i++)
        if (layout->services[i].service && strcmp(layout->services[i].service->name, name) == 0)
            return &layout->services[i];
    return NULL;
}

int cv__place_check_init(pl_check_t *k, const cv_cluster_t *c, const pl_index_t *ix)
{
    memset(k, 0, sizeof(*k));
    k->c = c;
    k->ix = ix;
    k->health = json_array();
    return k->health ? 0 : CV_ENOMEM;
}

void cv__place_check_free(pl_check_t *k)
{
    if (k->scratch.fd_in)
        cv__place_spread_free(&k->scratch);
    if (k->all.fd_in)
        cv__place_spread_free(&k->all);
}

/* Appends "The Load Balancer has detected a Constraint Violation for this
 * Replica: <svc> <Role> Replica <i> is violating the Constraint: <name>
 * Details: " and the details, as Service Fabric's example report reads. */
static void violation(pl_check_t *k, const cv_service_t *s, const cv_replica_t *r,
                      const char *constraint, bool error, const char *details)
{
    char property[96];
    snprintf(property, sizeof(property), "ReplicaConstraintViolation_%s", constraint);
    json_array_append_new(
        k->health, cv__place_health(property, error,
                                    "The Load Balancer has detected a Constraint Violation "
                                    "for this Replica: %s %s Replica %d is violating the "
                                    "Constraint: %s Details: %s",
                                    s->name, role_title(r->role), r->index, constraint, details));
}

static bool enforced(const cv_cluster_t *c, pl_step_t step)
{
    int prio = cv__place_step_priority(c, step);
    return prio == PL_HARD || prio == PL_SOFT;
}

/* ---------------------------------------------------------------- per-replica constraints */

static void check_exclusion(pl_check_t *k, const cv_service_t *s, const cv_replica_t *reps,
                            size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (reps[i].node != reps[j].node)
                continue;
            char details[256];
            snprintf(details, sizeof(details), "Replica %d on the same NodeName -- %s",
                     reps[i].index, k->c->nodes[reps[j].node].name);
            violation(k, s, &reps[j], "ReplicaExclusionStatic", true, details);
        }
}

static void check_placement(pl_check_t *k, const cv_service_t *s, const cv_replica_t *reps,
                            size_t n)
{
    if (!s->placement || !enforced(k->c, PL_PLACEMENT))
        return;
    bool hard = cv__place_step_priority(k->c, PL_PLACEMENT) == PL_HARD;
    for (size_t i = 0; i < n; i++) {
        const cv_node_t *node = &k->c->nodes[reps[i].node];
        if (cv_pcexpr_match(s->placement, node->props))
            continue;
        char details[512];
        snprintf(details, sizeof(details), "NodeName -- %s, PlacementConstraint -- %s", node->name,
                 s->placement_text ? s->placement_text : "");
        violation(k, s, &reps[i], "PlacementConstraint", hard, details);
    }
}

/* Each replica judged as the last one in, against the others. */
static void check_mesos(pl_check_t *k, const cv_service_t *s, const cv_replica_t *reps, size_t n)
{
    if (!s->constraints || !enforced(k->c, PL_PLACEMENT) || n == 0)
        return;
    const json_t **others = malloc(n * sizeof(*others));
    const json_t **eligible = k->eligible, **own = NULL;
    size_t neligible = k->neligible;
    if (!eligible)
        eligible = own = malloc((k->c->nnodes + 1) * sizeof(*eligible));
    for (size_t i = 0; own && others && i < k->c->nnodes; i++)
        if (k->c->nodes[i].status == CV_NODE_UP &&
            (!s->placement || cv_pcexpr_match(s->placement, k->c->nodes[i].props)))
            eligible[neligible++] = k->c->nodes[i].props;
    bool hard = cv__place_step_priority(k->c, PL_PLACEMENT) == PL_HARD;
    for (size_t i = 0; others && eligible && i < n; i++) {
        size_t m = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i)
                others[m++] = k->c->nodes[reps[j].node].props;
        cv_mesos_ctx_t ctx = {
            k->c->nodes[reps[i].node].props, others, m, s->replicas, eligible, neligible};
        if (cv_mconstraint_allows(s->constraints, &ctx))
            continue;
        char details[512];
        snprintf(details, sizeof(details), "NodeName -- %s, Constraint -- %s",
                 k->c->nodes[reps[i].node].name, cv_mconstraint_text(s->constraints));
        violation(k, s, &reps[i], "PlacementConstraint", hard, details);
    }
    free(others);
    free(own);
}

static void check_affinity(pl_check_t *k, const cv_service_t *s, const cv_replica_t *reps, size_t n,
                           const cv_layout_t *layout)
{
    if (!s->affinity_service || !enforced(k->c, PL_AFFINITY))
        return;
    const cv_placed_service_t *parent = cv__place_find(layout, s->affinity_service);
    bool hard = cv__place_step_priority(k->c, PL_AFFINITY) == PL_HARD;
    for (size_t i = 0; i < n; i++) {
        bool with_parent = false;
        for (size_t j = 0; parent && j < parent->nreplicas && !with_parent; j++)
            with_parent = parent->replicas[j].node == reps[i].node;
        if (with_parent)
            continue;
        char details[512];
        snprintf(details, sizeof(details), "NodeName -- %s holds no replica of %s",
                 k->c->nodes[reps[i].node].name, s->affinity_service);
        violation(k, s, &reps[i], "Affinity", hard, details);
    }
}

/* ---------------------------------------------------------------- domains */

/* The service's inventory: nodes its hard placement constraint admits, down
 * ones included; every domain when it has none. */
static const pl_spread_t *inventory(pl_check_t *k, const cv_service_t *s)
{
    bool narrowed = s->placement && cv__place_step_priority(k->c, PL_PLACEMENT) == PL_HARD;
    pl_spread_t *sp = narrowed ? &k->scratch : &k->all;
    if (!sp->fd_in && cv__place_spread_init(sp, k->ix))
        return NULL;
    if (!narrowed) {
        if (sp->nfd_list == 0 && sp->nud_list == 0) {
            memset(sp->fd_in, 1, k->ix->nfd);
            memset(sp->ud_in, 1, k->ix->nud);
            cv__place_spread_count(sp, k->ix);
        }
        return sp;
    }
    /* Services of one kind share a constraint text: reuse the last set. */
    if (k->scratch_text && s->placement_text && strcmp(k->scratch_text, s->placement_text) == 0)
        return sp;
    for (size_t i = 0; i < sp->nfd_list; i++)
        sp->fd_in[sp->fd_list[i]] = 0;
    for (size_t i = 0; i < sp->nud_list; i++)
        sp->ud_in[sp->ud_list[i]] = 0;
    for (size_t n = 0; n < k->c->nnodes; n++)
        if (cv_pcexpr_match(s->placement, k->c->nodes[n].props))
            cv__place_spread_add_node(sp, k->ix, n);
    cv__place_spread_count(sp, k->ix);
    k->scratch_text = s->placement_text;
    return sp;
}

typedef struct spread_stats {
    size_t domains; /* in the set, plus replica domains outside it */
    uint32_t max_dom;
    int max, min;
    size_t max_rep; /* a replica in the fullest domain */
} spread_stats_t;

/* Replicas per domain for doms[i] (the domain of replica i). */
static void spread_stats(const uint32_t *doms, size_t n, const uint8_t *in, size_t in_count,
                         spread_stats_t *st)
{
    size_t touched = 0, outside = 0;
    st->max = 0;
    st->min = PL_INF;
    for (size_t i = 0; i < n; i++) {
        size_t first = 0;
        int count = 0;
        while (doms[first] != doms[i])
            first++;
        for (size_t j = 0; j < n; j++)
            count += doms[j] == doms[i];
        if (first != i)
            continue; /* counted at its first replica */
        touched++;
        outside += !in[doms[i]];
        if (count < st->min)
            st->min = count;
        if (count > st->max) {
            st->max = count;
            st->max_dom = doms[i];
        }
    }
    for (size_t i = 0; i < n; i++)
        if (doms[i] == st->max_dom)
            st->max_rep = i;
    st->domains = in_count + outside;
    if (touched < st->domains || n == 0)
        st->min = 0;
}

static bool spread_broken(cv_distribution_t policy, int target, size_t n, const spread_stats_t *st)
{
    if (policy != CV_DIST_QUORUM_SAFE)
        return st->max - st->min > 1;
    int lo, hi;
    cv__place_bounds(policy, target, (int)n, st->domains, &lo, &hi);
    return st->max > hi;
}

static void report_domain(pl_check_t *k, const cv_service_t *s, const cv_replica_t *r, bool upgrade,
                          const char *domain, cv_distribution_t policy, const spread_stats_t *st)
{
    pl_step_t step = upgrade ? PL_UPGRADE_DOMAIN : PL_FAULT_DOMAIN;
    bool error = s->require_domain_distribution && cv__place_step_priority(k->c, step) == PL_HARD;
    char details[1024];
    snprintf(details, sizeof(details),
             "%s ID -- %s, Replica on NodeName -- %s Currently Upgrading -- false Distribution "
             "Policy -- %s, %s: %d replicas in the domain, %d in another of %zu",
             upgrade ? "UpgradeDomain" : "FaultDomain", domain, k->c->nodes[r->node].name,
             s->require_domain_distribution ? "RequireDomainDistribution" : "Packing",
             policy == CV_DIST_QUORUM_SAFE ? "quorumSafe" : "maxDifference", st->max, st->min,
             st->domains);
    violation(k, s, r, upgrade ? "UpgradeDomain" : "FaultDomain", error, details);
}

static void check_domains(pl_check_t *k, const cv_service_t *s, const cv_replica_t *reps, size_t n,
                          const pl_spread_t *inv)
{
    const pl_index_t *ix = k->ix;
    cv_distribution_t policy = cv__place_policy(ix, k->c, s);
    uint32_t *doms = malloc((n + 1) * sizeof(uint32_t));
    spread_stats_t st;
    char name[512];
    for (size_t level = 0; doms && enforced(k->c, PL_FAULT_DOMAIN) && level < ix->nlevels;
         level++) {
        for (size_t i = 0; i < n; i++)
            doms[i] = pl_fd(ix, reps[i].node, level);
        spread_stats(doms, n, inv->fd_in, inv->level_in[level], &st);
        if (!spread_broken(policy, s->replicas, n, &st))
            continue;
        cv__place_fd_name(ix, k->c, st.max_dom, name, sizeof(name));
        report_domain(k, s, &reps[st.max_rep], false, name, policy, &st);
    }
    if (doms && enforced(k->c, PL_UPGRADE_DOMAIN)) {
        for (size_t i = 0; i < n; i++)
            doms[i] = ix->ud[reps[i].node];
        spread_stats(doms, n, inv->ud_in, inv->nud_list, &st);
        const char *ud = n ? k->c->nodes[ix->ud_node[st.max_dom]].upgrade_domain : NULL;
        if (spread_broken(policy, s->replicas, n, &st))
            report_domain(k, s, &reps[st.max_rep], true, ud ? ud : "", policy, &st);
    }
    free(doms);
}

void cv__place_check_service(pl_check_t *k, const cv_service_t *s, const cv_replica_t *reps,
                             size_t nreps, const cv_layout_t *layout, const pl_spread_t *inv)
{
    check_exclusion(k, s, reps, nreps);
    check_placement(k, s, reps, nreps);
    check_mesos(k, s, reps, nreps);
    check_affinity(k, s, reps, nreps, layout);
    if (!inv)
        inv = inventory(k, s);
    if (inv)
        check_domains(k, s, reps, nreps, inv);
}

/* ---------------------------------------------------------------- capacity */

void cv__place_check_node(pl_check_t *k, size_t node, const int64_t *extra)
{
    int prio = cv__place_step_priority(k->c, PL_CAPACITY);
    if (prio == PL_OFF || prio == PL_OPTIMIZE)
        return;
    const cv_node_t *n = &k->c->nodes[node];
    char metrics[1024] = "";
    size_t used = 0;
    for (size_t m = 0; m < k->c->nmetrics && used < sizeof(metrics); m++) {
        int64_t limit = cv__place_total_limit(k->c, node, (int)m);
        int64_t load = n->load[m] + (extra ? extra[m] : 0);
        if (limit == INT64_MAX || load <= limit)
            continue;
        used += (size_t)snprintf(metrics + used, sizeof(metrics) - used,
                                 "%s%s (load %lld, capacity %lld)", used ? ", " : "",
                                 k->c->metrics[m].name, (long long)load, (long long)limit);
    }
    if (used)
        json_array_append_new(k->health,
                              cv__place_health("NodeCapacityViolation", prio == PL_HARD,
                                               "The Load Balancer has detected a Capacity "
                                               "Violation on NodeName -- %s for Metrics -- %s",
                                               n->name, metrics));
}
