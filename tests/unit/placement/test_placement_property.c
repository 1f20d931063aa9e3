/*
 * Properties of placement on random clusters (up to 200 nodes, 2–4 FD
 * levels, down and disabled nodes, buffers and overbooking) and random
 * services placed one after another, with fixed seeds: every placement
 * keeps every hard constraint; a domain rule is only ever broken with a
 * health report saying so (and never under RequireDomainDistribution);
 * every node of an unplaced replica's elimination sequence is accounted
 * for exactly once; the cluster-capacity rejection agrees with the sums.
 * On small instances an exhaustive search decides whether a layout meeting
 * every constraint exists, and placement must find one exactly when it does.
 * The checks here are written independently of the library's code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_place_fixture.h"

#include <math.h>

typedef struct rng {
    uint64_t s;
} rng_t;

static uint32_t rnd(rng_t *r, uint32_t n)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return n ? (uint32_t)(r->s % n) : 0;
}

/* ---------------------------------------------------------------- random input */

static const char *const colors[] = {"red", "blue", "green"};
static const char *const constraints[] = {NULL, "Color == blue", "Tier >= 2",
                                          "Color != red && Tier <= 2"};

static cv_cluster_t *random_cluster(rng_t *r, size_t nnodes, size_t levels, uint32_t fanout,
                                    uint32_t nuds, int64_t maxcap)
{
    cv_cluster_t *c = fx_cluster("M");
    uint32_t knob = rnd(r, 4);
    c->metrics[0].buffer = knob == 1 ? 0.1 : 0;
    c->metrics[0].overbook = knob == 2 ? 0.2 : knob == 3 ? -1 : 0;
    for (size_t i = 0; i < nnodes; i++) {
        char name[32], fd[128] = "fd:", ud[16];
        size_t depth = levels > 1 && rnd(r, 10) == 0 ? levels - 1 : levels;
        for (size_t k = 0; k < depth; k++)
            snprintf(fd + strlen(fd), sizeof(fd) - strlen(fd), "/l%zu_%u", k, rnd(r, fanout));
        snprintf(name, sizeof(name), "n%03zu", i);
        snprintf(ud, sizeof(ud), "UD%u", rnd(r, nuds));
        cv_node_t *n = fx_node(c, name, fd, ud);
        n->capacity[0] = 10 + rnd(r, (uint32_t)maxcap);
        n->load[0] = rnd(r, (uint32_t)(n->capacity[0] * 3 / 4 + 1));
        json_object_set_new(n->props, "Color", json_string(colors[rnd(r, 3)]));
        json_object_set_new(n->props, "Tier", json_integer(1 + rnd(r, 3)));
        uint32_t st = rnd(r, 25);
        n->status = st < 2 ? CV_NODE_DOWN : st < 3 ? CV_NODE_DISABLED : CV_NODE_UP;
    }
    fx_done(c);
    return c;
}

static cv_service_t *random_service(rng_t *r, const char *name, int max_replicas)
{
    cv_service_t *s = fx_service(name, 1 + (int)rnd(r, (uint32_t)max_replicas), rnd(r, 2));
    const char *pc = constraints[rnd(r, 4)];
    if (pc)
        fx_placement(s, pc);
    int64_t primary = rnd(r, 16);
    fx_metric(s, "M", primary, rnd(r, (uint32_t)primary + 1), 1.0);
    s->distribution = (cv_distribution_t)rnd(r, 3);
    s->require_domain_distribution = rnd(r, 4) == 0;
    return s;
}

/* ---------------------------------------------------------------- independent checks */

static int64_t limit(const cv_cluster_t *c, size_t n, cv_place_action_t action)
{
    int64_t cap = c->nodes[n].capacity[0];
    double b = c->metrics[0].buffer, o = c->metrics[0].overbook;
    if (cap < 0)
        return INT64_MAX;
    if (action == CV_PLACE_NEW)
        return b > 0 ? (int64_t)floor((double)cap * (1 - b) + 1e-9) : cap;
    if (o < 0)
        return INT64_MAX;
    return o > 0 ? (int64_t)floor((double)cap * (1 + o) + 1e-9) : cap;
}

static int64_t load_of(const cv_service_t *s, bool primary)
{
    return primary || !s->stateful ? s->metrics[0].primary_load : s->metrics[0].secondary_load;
}

static bool node_ok(const cv_cluster_t *c, const cv_service_t *s, size_t n, bool primary,
                    cv_place_action_t action)
{
    int64_t l = load_of(s, primary);
    if (c->nodes[n].status != CV_NODE_UP)
        return false;
    if (s->placement && !cv_pcexpr_match(s->placement, c->nodes[n].props))
        return false;
    return l == 0 || c->nodes[n].load[0] + l <= limit(c, n, action);
}

/* The domain of node n at FD level k ("dc/rack"), or its UD when k < 0. */
static void domain_key(const cv_node_t *n, int k, char *buf, size_t size)
{
    if (k < 0) {
        snprintf(buf, size, "%s", n->upgrade_domain);
        return;
    }
    buf[0] = 0;
    for (size_t i = 0; i <= (size_t)k && i < n->fd_depth; i++)
        snprintf(buf + strlen(buf), size - strlen(buf), "/%s", n->fd_path[i]);
}

static size_t distinct(char keys[][128], size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(keys[i], keys[j]) == 0;
        d += !seen;
    }
    return d;
}

static cv_distribution_t policy_of(const cv_cluster_t *c, const cv_service_t *s)
{
    if (s->distribution != CV_DIST_ADAPTIVE)
        return s->distribution;
    static char fds[256][128], uds[256][128];
    for (size_t i = 0; i < c->nnodes; i++) {
        snprintf(fds[i], 128, "%s", c->nodes[i].fault_domain);
        domain_key(&c->nodes[i], -1, uds[i], 128);
    }
    size_t nf = distinct(fds, c->nnodes), nu = distinct(uds, c->nnodes);
    size_t r = (size_t)s->replicas;
    bool quorum = r % nf == 0 && r % nu == 0 && c->nnodes <= nf * nu;
    return quorum ? CV_DIST_QUORUM_SAFE : CV_DIST_MAX_DIFFERENCE;
}

/* Whether replicas on nodes[0..n) keep the policy's rule at level k (UD if
 * k < 0), counted over the inventory: every node the placement constraint
 * admits, whatever its status, and the replicas' own nodes. */
static bool spread_ok(const cv_cluster_t *c, const cv_service_t *s, const size_t *nodes, size_t n,
                      int k)
{
    static char inv[256][128], reps[16][128];
    size_t ninv = 0;
    for (size_t i = 0; i < c->nnodes; i++)
        if (!s->placement || cv_pcexpr_match(s->placement, c->nodes[i].props))
            domain_key(&c->nodes[i], k, inv[ninv++], 128);
    for (size_t i = 0; i < n; i++) {
        domain_key(&c->nodes[nodes[i]], k, reps[i], 128);
        memcpy(inv[ninv++], reps[i], 128);
    }
    size_t domains = distinct(inv, ninv), touched = distinct(reps, n);
    int max = 0, min = 1 << 20;
    for (size_t i = 0; i < n; i++) {
        int count = 0;
        for (size_t j = 0; j < n; j++)
            count += strcmp(reps[i], reps[j]) == 0;
        max = count > max ? count : max;
        min = count < min ? count : min;
    }
    if (n == 0)
        return true;
    if (touched < domains)
        min = 0;
    if (policy_of(c, s) != CV_DIST_QUORUM_SAFE)
        return max - min <= 1;
    int ceiling = (int)((n + domains - 1) / domains), minority = (s->replicas + 1) / 2 - 1;
    minority = minority < 1 ? 1 : minority;
    return max <= (minority > ceiling ? minority : ceiling);
}

static size_t max_depth(const cv_cluster_t *c)
{
    size_t d = 1;
    for (size_t i = 0; i < c->nnodes; i++)
        d = c->nodes[i].fd_depth > d ? c->nodes[i].fd_depth : d;
    return d;
}

static bool all_spread_ok(const cv_cluster_t *c, const cv_service_t *s, const size_t *nodes,
                          size_t n)
{
    for (int k = -1; k < (int)max_depth(c); k++)
        if (!spread_ok(c, s, nodes, n, k))
            return false;
    return true;
}

/* ---------------------------------------------------------------- checking one result */

static size_t result_nodes(const cv_cluster_t *c, const json_t *r, size_t *nodes, bool *primary)
{
    size_t i, n = 0;
    json_t *p;
    json_array_foreach(json_object_get(r, "placements"), i, p)
    {
        nodes[n] = (size_t)cv_cluster_node(c, json_string_value(json_object_get(p, "node")));
        primary[n++] = strcmp(json_string_value(json_object_get(p, "role")), "primary") == 0;
    }
    return n;
}

/* Every node appears in exactly one step of each elimination sequence. */
static void assert_sequences_cover_the_nodes(const cv_cluster_t *c, const json_t *r)
{
    const json_t *unplaced = json_object_get(r, "unplaced");
    for (size_t i = 0; i < json_array_size(unplaced); i++) {
        const json_t *seq = json_object_get(json_array_get(unplaced, i), "eliminationSequence");
        uint8_t *seen = calloc(c->nnodes + 1, 1);
        size_t count = 0;
        for (size_t j = 0; j < json_array_size(seq); j++) {
            const json_t *names = json_object_get(json_array_get(seq, j), "eliminated");
            for (size_t k = 0; k < json_array_size(names); k++, count++) {
                long n = cv_cluster_node(c, json_string_value(json_array_get(names, k)));
                assert_true(n >= 0 && !seen[n]);
                seen[n] = 1;
            }
        }
        assert_int_equal(count, c->nnodes);
        free(seen);
    }
}

static void assert_rejection_agrees(const cv_cluster_t *c, const cv_service_t *s, const json_t *r,
                                    cv_place_action_t action)
{
    int64_t need = load_of(s, true) + (s->replicas - 1) * load_of(s, false), room = 0;
    bool unlimited = false;
    for (size_t n = 0; n < c->nnodes; n++) {
        int64_t lim = limit(c, n, action);
        if (c->nodes[n].status != CV_NODE_UP)
            continue;
        unlimited |= lim == INT64_MAX;
        room += lim > c->nodes[n].load[0] && !unlimited ? lim - c->nodes[n].load[0] : 0;
    }
    bool rejected = json_is_object(json_object_get(r, "rejected"));
    assert_int_equal(rejected, !unlimited && need > room);
}

static void check_result(const cv_cluster_t *c, const cv_service_t *s, const json_t *r,
                         cv_place_action_t action)
{
    size_t nodes[16];
    bool primary[16];
    size_t n = result_nodes(c, r, nodes, primary);
    assert_rejection_agrees(c, s, r, action);
    if (json_is_object(json_object_get(r, "rejected")))
        return;
    assert_int_equal(n + json_array_size(json_object_get(r, "unplaced")), (size_t)s->replicas);
    for (size_t i = 0; i < n; i++) {
        assert_true(node_ok(c, s, nodes[i], primary[i], action));
        for (size_t j = 0; j < i; j++)
            assert_true(nodes[i] != nodes[j]);
    }
    const json_t *h = json_object_get(r, "health");
    for (int k = 0; k < (int)max_depth(c); k++)
        if (!spread_ok(c, s, nodes, n, k)) {
            assert_false(s->require_domain_distribution);
            assert_true(fx_health(h, "ReplicaConstraintViolation_FaultDomain", "Warning") > 0);
        }
    if (!spread_ok(c, s, nodes, n, -1))
        assert_true(fx_health(h, "ReplicaConstraintViolation_UpgradeDomain", NULL) > 0);
    assert_sequences_cover_the_nodes(c, r);
}

/* ---------------------------------------------------------------- random clusters */

static void place_services(rng_t *r, cv_cluster_t *c, size_t count)
{
    cv_layout_t *l = fx_layout();
    cv_service_t *svcs[8];
    for (size_t i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof(name), "s%zu", i);
        svcs[i] = random_service(r, name, 7);
        cv_place_action_t action = rnd(r, 2) ? CV_PLACE_NEW : CV_PLACE_REPLACE;
        json_t *res = cv_place(c, svcs[i], l, action);
        check_result(c, svcs[i], res, action);
        size_t nodes[16];
        bool primary[16];
        size_t n = result_nodes(c, res, nodes, primary);
        const char *names[16];
        for (size_t k = 0; k < n; k++)
            names[k] = c->nodes[nodes[k]].name;
        fx_layout_add(l, c, svcs[i], names, n);
        json_decref(res);
    }
    fx_layout_free(l);
    for (size_t i = 0; i < count; i++)
        fx_service_free(svcs[i]);
}

static void test_random_placements_keep_every_hard_constraint(void **state)
{
    (void)state;
    rng_t r = {0x9e3779b97f4a7c15ULL};
    for (int iter = 0; iter < 300; iter++) {
        size_t levels = 2 + rnd(&r, 3);
        cv_cluster_t *c =
            random_cluster(&r, 1 + rnd(&r, 200), levels, 2 + rnd(&r, 3), 1 + rnd(&r, 6), 90);
        place_services(&r, c, 1 + rnd(&r, 6));
        fx_cluster_free(c);
    }
}

/* ---------------------------------------------------------------- exhaustive search */

typedef struct search {
    const cv_cluster_t *c;
    const cv_service_t *s;
    cv_place_action_t action;
    size_t cand[32], ncand, pick[16];
} search_t;

static bool roles_fit(const search_t *q, size_t n)
{
    if (!q->s->stateful) {
        for (size_t i = 0; i < n; i++)
            if (!node_ok(q->c, q->s, q->pick[i], true, q->action))
                return false;
        return true;
    }
    for (size_t p = 0; p < n; p++) {
        bool ok = node_ok(q->c, q->s, q->pick[p], true, q->action);
        for (size_t i = 0; i < n && ok; i++)
            ok = i == p || node_ok(q->c, q->s, q->pick[i], false, q->action);
        if (ok)
            return true;
    }
    return false;
}

/* Whether some choice of the remaining picks from cand[from..] works. */
static bool search(search_t *q, size_t from, size_t depth)
{
    size_t want = (size_t)q->s->replicas;
    if (depth == want)
        return roles_fit(q, want) && all_spread_ok(q->c, q->s, q->pick, want);
    for (size_t i = from; i + (want - depth) <= q->ncand; i++) {
        q->pick[depth] = q->cand[i];
        if (search(q, i + 1, depth + 1))
            return true;
    }
    return false;
}

static bool exists_perfect_layout(const cv_cluster_t *c, const cv_service_t *s,
                                  cv_place_action_t action)
{
    search_t q = {.c = c, .s = s, .action = action};
    for (size_t n = 0; n < c->nnodes; n++)
        if (node_ok(c, s, n, true, action) || node_ok(c, s, n, false, action))
            q.cand[q.ncand++] = n;
    return search(&q, 0, 0);
}

static bool perfect(const json_t *r)
{
    const json_t *h = json_object_get(r, "health");
    return json_array_size(json_object_get(r, "unplaced")) == 0 &&
           json_is_null(json_object_get(r, "rejected")) &&
           fx_health(h, "ReplicaConstraintViolation_FaultDomain", NULL) == 0 &&
           fx_health(h, "ReplicaConstraintViolation_UpgradeDomain", NULL) == 0;
}

static void test_placement_is_perfect_exactly_when_a_perfect_layout_exists(void **state)
{
    (void)state;
    rng_t r = {0x2545f4914f6cdd1dULL};
    size_t found = 0;
    for (int iter = 0; iter < 400; iter++) {
        cv_cluster_t *c = random_cluster(&r, 4 + rnd(&r, 9), 2 + rnd(&r, 2), 2, 2 + rnd(&r, 3), 30);
        cv_service_t *s = random_service(&r, "svc", 5);
        cv_place_action_t action = rnd(&r, 2) ? CV_PLACE_NEW : CV_PLACE_REPLACE;
        json_t *res = cv_place(c, s, NULL, action);
        check_result(c, s, res, action);
        bool exists = exists_perfect_layout(c, s, action);
        if (!json_is_object(json_object_get(res, "rejected"))) {
            assert_int_equal(perfect(res), exists);
            found += exists;
        }
        fx_release(res, NULL, s, c);
    }
    assert_true(found > 50); /* the instances are not all infeasible */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_placements_keep_every_hard_constraint),
        cmocka_unit_test(test_placement_is_perfect_exactly_when_a_perfect_layout_exists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
