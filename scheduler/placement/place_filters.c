/*
 * place_filters — the feasibility pipeline and the choice among survivors.
 *
 * Node-local filters (status, placement constraint, capacity, affinity) are
 * evaluated once per call into a bit mask per node; what changes from one
 * replica to the next (exclusion, the Mesos constraints that look at the
 * replicas already placed, the domain counts) is evaluated per replica, and
 * the expensive ones lazily: candidates are tried best score first, so a
 * typical replica costs one pass over the nodes and one domain check. When
 * no candidate survives, the same filters run again node by node to record
 * which constraint eliminated which node.
 */
#include "place_internal.h"

#include "cv_mesos.h"
#include "cv_pcexpr.h"

#include <stdlib.h>
#include <string.h>

static const char *const step_names[PL_NSTEPS] = {
    "NodeStatus", "ReplicaExclusion", "PlacementConstraint", "MesosConstraint",  "NodeCapacity",
    "Affinity",   "FaultDomain",      "UpgradeDomain",       "PreferredLocation"};

const char *cv__place_step_name(pl_step_t step)
{
    return step_names[step];
}

int cv__place_step_priority(const cv_cluster_t *c, pl_step_t step)
{
    const cv_priorities_t *p = &c->priorities;
    switch (step) {
    case PL_PLACEMENT:
    case PL_MESOS: /* placement constraints in another syntax: same priority */
        return p->placement;
    case PL_CAPACITY:
        return p->capacity;
    case PL_AFFINITY:
        return p->affinity;
    case PL_FAULT_DOMAIN:
        return p->fault_domain;
    case PL_UPGRADE_DOMAIN:
        return p->upgrade_domain;
    case PL_PREFERRED:
        return p->preferred_location;
    default:
        return PL_HARD; /* node status and replica exclusion are never broken */
    }
}

/* ---------------------------------------------------------------- static scan */

/* Nodes holding a replica of the affinity parent, or NULL when the
 * service has none. A parent missing from the layout leaves every node
 * eliminated: the child follows the parent. */
static uint8_t *affinity_nodes(const pl_ctx_t *x)
{
    uint8_t *on = calloc(x->c->nnodes + 1, 1);
    const cv_placed_service_t *parent = cv__place_find(x->layout, x->s->affinity_service);
    for (size_t i = 0; on && parent && i < parent->nreplicas; i++)
        on[parent->replicas[i].node] = 1;
    return on;
}

int cv__place_static_scan(pl_ctx_t *x)
{
    const cv_service_t *s = x->s;
    bool check_placement = s->placement && cv__place_step_priority(x->c, PL_PLACEMENT) != PL_OFF;
    bool check_affinity =
        s->affinity_service && cv__place_step_priority(x->c, PL_AFFINITY) != PL_OFF;
    uint8_t *parent = check_affinity ? affinity_nodes(x) : NULL;
    if (check_affinity && !parent)
        return -1;
    for (size_t n = 0; n < x->c->nnodes; n++) {
        const cv_node_t *node = &x->c->nodes[n];
        if (node->status != CV_NODE_UP)
            x->mask[n] |= PL_F_DOWN;
        if (check_placement && !cv_pcexpr_match(s->placement, node->props))
            x->mask[n] |= PL_F_PLACEMENT;
        if (check_affinity && !parent[n])
            x->mask[n] |= PL_F_AFFINITY;
    }
    free(parent);
    return 0;
}

/* ---------------------------------------------------------------- Mesos */

static int build_eligible(pl_ctx_t *x)
{
    x->eligible = malloc((x->c->nnodes + 1) * sizeof(*x->eligible));
    if (!x->eligible)
        return -1;
    for (size_t n = 0; n < x->c->nnodes; n++)
        if (!(x->mask[n] & (PL_F_DOWN | PL_F_PLACEMENT)))
            x->eligible[x->neligible++] = x->c->nodes[n].props;
    return 0;
}

bool cv__place_mesos_ok(pl_ctx_t *x, size_t node)
{
    if (!x->s->constraints)
        return true;
    if (!x->eligible && build_eligible(x))
        return false;
    for (size_t i = 0; i < x->nreps; i++)
        x->placed_props[i] = x->c->nodes[x->reps[i].node].props;
    cv_mesos_ctx_t ctx = {.node = x->c->nodes[node].props,
                          .placed = x->placed_props,
                          .nplaced = x->nreps,
                          .replicas = x->target,
                          .eligible = x->eligible,
                          .neligible = x->neligible};
    return cv_mconstraint_allows(x->s->constraints, &ctx);
}

/* ---------------------------------------------------------------- the candidate pass */

unsigned cv__place_disqualifying(unsigned steps, int rk)
{
    unsigned bits = 0;
    if (steps & PL_BIT(PL_STATUS))
        bits |= PL_F_DOWN;
    if (steps & PL_BIT(PL_PLACEMENT))
        bits |= PL_F_PLACEMENT;
    if (steps & PL_BIT(PL_CAPACITY))
        bits |= rk ? PL_F_CAP_SECONDARY : PL_F_CAP_PRIMARY;
    if (steps & PL_BIT(PL_AFFINITY))
        bits |= PL_F_AFFINITY;
    return bits;
}

bool cv__place_frees_later(const pl_ctx_t *x, const pl_mode_t *mode, size_t node)
{
    return !(x->mask[node] &
             cv__place_disqualifying(mode->enforce | PL_BIT(PL_STATUS), x->s->stateful));
}

/* Collects the candidates for role kind `rk` and, per (leaf FD, UD) cell,
 * how many nodes remain free for the replicas after it. With `hi`, nodes
 * whose domains are already full are no candidates: most of a large
 * cluster, once a few replicas are placed, and not worth ranking. */
static void candidate_pass(pl_ctx_t *x, const pl_mode_t *mode, int rk, const int *hi)
{
    unsigned fail = cv__place_disqualifying(mode->enforce | PL_BIT(PL_STATUS), rk);
    unsigned later = cv__place_disqualifying(mode->enforce | PL_BIT(PL_STATUS), x->s->stateful);
    for (size_t i = 0; i < x->ncells_used; i++)
        x->avail[x->cells[i]] = 0;
    x->ncells_used = x->ncand = x->total_avail = 0;
    for (size_t n = 0; n < x->c->nnodes; n++) {
        if (x->used[n])
            continue;
        if (!(x->mask[n] & later)) {
            uint32_t cell = x->ix.cell[n];
            x->total_avail++;
            if (x->avail[cell]++ == 0)
                x->cells[x->ncells_used++] = cell;
        }
        if (!(x->mask[n] & fail) && (!hi || cv__place_under_ceilings(x, n, hi)))
            x->cand[x->ncand++] = (uint32_t)n;
    }
}

/* Packing: the domains that still have a usable node, or a replica. */
static void build_pack(pl_ctx_t *x)
{
    pl_spread_t *sp = &x->pack;
    memset(sp->fd_in, 0, x->ix.nfd);
    memset(sp->ud_in, 0, x->ix.nud);
    for (size_t i = 0; i < x->ncand; i++)
        cv__place_spread_add_node(sp, &x->ix, x->cand[i]);
    for (size_t i = 0; i < x->ncells_used; i++) {
        uint32_t cell = x->cells[i];
        for (uint32_t d = x->ix.cell_leaf[cell]; d != PL_NONE; d = x->ix.fd_parent[d])
            sp->fd_in[d] = 1;
        sp->ud_in[x->ix.cell_ud[cell]] = 1;
    }
    for (size_t i = 0; i < x->nreps; i++)
        cv__place_spread_add_node(sp, &x->ix, x->reps[i].node);
    cv__place_spread_count(sp, &x->ix);
}

/* ---------------------------------------------------------------- ranking */

int cv__place_rank_cmp(const void *pa, const void *pb)
{
    const pl_rank_t *a = pa, *b = pb;
    if (a->penalty != b->penalty)
        return a->penalty < b->penalty ? -1 : 1;
    if (a->buffer != b->buffer)
        return a->buffer < b->buffer ? -1 : 1;
    if (a->balance != b->balance)
        return a->balance < b->balance ? -1 : 1;
    if (a->spread != b->spread)
        return a->spread < b->spread ? -1 : 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

pl_rank_t cv__place_rank_of(const pl_ctx_t *x, const pl_mode_t *mode, uint32_t n, int rk)
{
    unsigned steer = cv__place_disqualifying(mode->prefer, rk);
    pl_rank_t r = {.penalty = __builtin_popcount(x->mask[n] & steer),
                   .buffer = (x->mask[n] & (rk ? PL_F_BUF_SECONDARY : PL_F_BUF_PRIMARY)) != 0,
                   .balance = x->balance[rk][n],
                   .spread = x->ud_count[x->ix.ud[n]],
                   .node = n};
    for (size_t k = 0; k < x->ix.nlevels; k++)
        r.spread += x->fd_count[pl_fd(&x->ix, n, k)];
    return r;
}

/* ---------------------------------------------------------------- acceptance */

/* Domain verdicts depend on the candidate only through its cell and whether
 * it would have been free for later replicas: cached per call and `more`. */
typedef struct verdicts {
    int8_t *v; /* ncells * 2 * 2 (fd-only, fd+ud): -1 unknown */
} verdicts_t;

static bool domain_verdict(pl_ctx_t *x, const pl_mode_t *mode, verdicts_t *cache, uint32_t n,
                           int more, bool with_ud)
{
    bool use_fd = mode->enforce & PL_BIT(PL_FAULT_DOMAIN);
    bool use_ud = with_ud && (mode->enforce & PL_BIT(PL_UPGRADE_DOMAIN));
    if (!use_fd && !use_ud)
        return true;
    bool sec = cv__place_frees_later(x, mode, n);
    size_t slot = ((size_t)x->ix.cell[n] * 2 + sec) * 2 + with_ud;
    if (cache->v[slot] < 0)
        cache->v[slot] = cv__place_domains_ok(x, mode, n, sec, use_fd, use_ud, more);
    return cache->v[slot] == 1;
}

bool cv__place_acceptable(pl_ctx_t *x, const pl_mode_t *mode, int8_t *verdicts, uint32_t n,
                          int more)
{
    verdicts_t cache = {verdicts};
    if (!domain_verdict(x, mode, &cache, n, more, true))
        return false;
    return !(mode->enforce & PL_BIT(PL_MESOS)) || cv__place_mesos_ok(x, n);
}

static uint32_t first_acceptable(pl_ctx_t *x, const pl_mode_t *mode, verdicts_t *cache,
                                 pl_rank_t *ranks, int more)
{
    memset(cache->v, -1, x->ix.ncells * 4);
    for (size_t i = 0; i < x->ncand; i++)
        if (cv__place_acceptable(x, mode, cache->v, ranks[i].node, more))
            return ranks[i].node;
    return PL_NONE;
}

/* The best candidate alone is usually acceptable: one linear minimum, and
 * the full sort only when it is not. In the last mode a shortfall of nodes
 * or domains lowers the number of replicas the domains must plan for. */
static uint32_t choose(pl_ctx_t *x, const pl_mode_t *mode, verdicts_t *cache, pl_rank_t *ranks,
                       int more)
{
    size_t best = 0;
    for (size_t i = 1; i < x->ncand; i++)
        if (cv__place_rank_cmp(&ranks[i], &ranks[best]) < 0)
            best = i;
    memset(cache->v, -1, x->ix.ncells * 4);
    if (cv__place_acceptable(x, mode, cache->v, ranks[best].node, more))
        return ranks[best].node;
    qsort(ranks, x->ncand, sizeof(*ranks), cv__place_rank_cmp);
    for (int m = more; m >= (mode->best_effort ? 0 : more); m--) {
        uint32_t n = first_acceptable(x, mode, cache, ranks, m);
        if (n != PL_NONE)
            return n;
    }
    return PL_NONE;
}

uint32_t cv__place_select(pl_ctx_t *x, const pl_mode_t *mode, int replica)
{
    int rk = pl_rolekind(x, replica);
    int hi[PL_MAX_LEVELS + 1];
    bool domains = mode->enforce & (PL_BIT(PL_FAULT_DOMAIN) | PL_BIT(PL_UPGRADE_DOMAIN));
    if (domains && !mode->packing)
        cv__place_ceilings(x, mode, x->pending, hi);
    candidate_pass(x, mode, rk, domains && !mode->packing ? hi : NULL);
    if (x->ncand == 0)
        return PL_NONE;
    if (mode->packing)
        build_pack(x);
    pl_rank_t *ranks = malloc(x->ncand * sizeof(*ranks));
    verdicts_t cache = {malloc(x->ix.ncells * 4 + 4)};
    uint32_t chosen = PL_NONE;
    if (ranks && cache.v) {
        for (size_t i = 0; i < x->ncand; i++)
            ranks[i] = cv__place_rank_of(x, mode, x->cand[i], rk);
        chosen = choose(x, mode, &cache, ranks, x->pending);
    }
    free(ranks);
    free(cache.v);
    return chosen;
}

/* ---------------------------------------------------------------- elimination sequence */

/* The first step (in Service Fabric's order) that rules the node out, or PL_NSTEPS. */
static pl_step_t eliminated_by(pl_ctx_t *x, const pl_mode_t *mode, verdicts_t *cache, size_t n,
                               int rk)
{
    unsigned on = mode->enforce;
    if (x->mask[n] & PL_F_DOWN)
        return PL_STATUS;
    if (x->used[n])
        return PL_EXCLUSION;
    if ((on & PL_BIT(PL_PLACEMENT)) && (x->mask[n] & PL_F_PLACEMENT))
        return PL_PLACEMENT;
    if ((on & PL_BIT(PL_MESOS)) && !cv__place_mesos_ok(x, n))
        return PL_MESOS;
    if ((on & PL_BIT(PL_CAPACITY)) && (x->mask[n] & (rk ? PL_F_CAP_SECONDARY : PL_F_CAP_PRIMARY)))
        return PL_CAPACITY;
    if ((on & PL_BIT(PL_AFFINITY)) && (x->mask[n] & PL_F_AFFINITY))
        return PL_AFFINITY;
    if (!domain_verdict(x, mode, cache, (uint32_t)n, 0, false))
        return PL_FAULT_DOMAIN;
    if (!domain_verdict(x, mode, cache, (uint32_t)n, 0, true))
        return PL_UPGRADE_DOMAIN;
    return PL_NSTEPS;
}

bool cv__place_step_applies(const pl_ctx_t *x, pl_step_t step)
{
    if (cv__place_step_priority(x->c, step) == PL_OFF)
        return false;
    switch (step) {
    case PL_PLACEMENT:
        return x->s->placement != NULL;
    case PL_MESOS:
        return x->s->constraints != NULL;
    case PL_CAPACITY:
        return x->s->nmetrics > 0;
    case PL_AFFINITY:
        return x->s->affinity_service != NULL;
    case PL_PREFERRED:
        return false; /* the model carries no preferred locations yet */
    default:
        return true;
    }
}

json_t *cv__place_eliminations(pl_ctx_t *x, const pl_mode_t *mode, int replica)
{
    int rk = pl_rolekind(x, replica);
    candidate_pass(x, mode, rk, NULL);
    if (mode->packing)
        build_pack(x);
    json_t *lists[PL_NSTEPS] = {0};
    for (int st = 0; st < PL_NSTEPS; st++)
        lists[st] = json_array();
    verdicts_t cache = {malloc(x->ix.ncells * 4 + 4)};
    if (cache.v)
        memset(cache.v, -1, x->ix.ncells * 4 + 4);
    for (size_t n = 0; cache.v && n < x->c->nnodes; n++) {
        pl_step_t st = eliminated_by(x, mode, &cache, n, rk);
        if (st < PL_NSTEPS)
            json_array_append_new(lists[st], json_string(x->c->nodes[n].name));
    }
    free(cache.v);
    json_t *seq = json_array();
    for (int st = 0; st < PL_NSTEPS; st++) {
        if (cv__place_step_applies(x, (pl_step_t)st))
            json_array_append_new(seq, json_pack("{s:s, s:O}", "constraint", step_names[st],
                                                 "eliminated", lists[st]));
        json_decref(lists[st]);
    }
    return seq;
}
