/*
 * Specification of the placer's pure pieces: the sample bound and walk,
 * the per-class constraint memo (a memoized answer is the recomputed one),
 * the incremental domain counts (always a recount, and left clean), and
 * sampled placement on a large cluster: it keeps every domain rule and
 * every hard rule until the cluster is full, places the same way for the
 * same input (a long-lived placer as a one-shot cv_place), and whatever it
 * cannot decide (a refusal, an unplaceable replica) comes out exactly as
 * the exhaustive search says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "place_internal.h"
#include "test_place_fixture.h"

/* ---------------------------------------------------------------- sampler */

static void test_sample_bound_is_log2_of_the_nodes_times_the_factor(void **state)
{
    (void)state;
    assert_int_equal(cv__place_sample_bound(1), 2 * PL_SAMPLE_FACTOR);
    assert_int_equal(cv__place_sample_bound(4), 2 * PL_SAMPLE_FACTOR);
    assert_int_equal(cv__place_sample_bound(1000), 9 * PL_SAMPLE_FACTOR);
    assert_int_equal(cv__place_sample_bound(1024), 10 * PL_SAMPLE_FACTOR);
    assert_int_equal(cv__place_sample_bound(10000), 13 * PL_SAMPLE_FACTOR);
}

static void test_sample_walk_visits_distinct_indices_in_range(void **state)
{
    (void)state;
    uint32_t out[64];
    for (uint64_t seed = 0; seed < 50; seed++)
        for (size_t n = 1; n <= 40; n++) {
            size_t k = cv__place_sample_walk(seed, n, 64, out);
            assert_int_equal(k, n < 64 ? n : 64);
            uint8_t seen[64] = {0};
            for (size_t i = 0; i < k; i++) {
                assert_true(out[i] < n);
                assert_false(seen[out[i]]);
                seen[out[i]] = 1;
            }
        }
    assert_int_equal(cv__place_sample_walk(7, 0, 8, out), 0);
}

static void test_sample_walk_repeats_for_a_seed_and_differs_across_seeds(void **state)
{
    (void)state;
    uint32_t a[16], b[16], c[16];
    cv__place_sample_walk(42, 1000, 16, a);
    cv__place_sample_walk(42, 1000, 16, b);
    cv__place_sample_walk(43, 1000, 16, c);
    assert_memory_equal(a, b, sizeof(a));
    assert_memory_not_equal(a, c, sizeof(a));
}

/* ---------------------------------------------------------------- a large cluster */

/* n nodes over 6 FDs (two levels) x 5 UDs, three node types and colours,
 * every seventh node down; metric M with capacity 100 and load n % 40. */
static cv_cluster_t *big_cluster(size_t n)
{
    cv_cluster_t *c = fx_cluster("M");
    static const char *const types[] = {"small", "medium", "large"};
    static const char *const colors[] = {"red", "blue", "green"};
    for (size_t i = 0; i < n; i++) {
        char name[16], fd[32], ud[8];
        snprintf(name, sizeof(name), "n%04zu", i);
        snprintf(fd, sizeof(fd), "fd:/dc%zu/r%zu", i % 6 / 2, i % 2);
        snprintf(ud, sizeof(ud), "UD%zu", i / 6 % 5);
        cv_node_t *node = fx_node(c, name, fd, ud);
        fx_type(node, types[i / 30 % 3]);
        json_object_set_new(node->props, "Color", json_string(colors[i / 90 % 3]));
        fx_cap(c, node, "M", 100, (int64_t)(i % 40));
        if (i % 7 == 3)
            node->status = CV_NODE_DOWN;
    }
    fx_done(c);
    return c;
}

static void test_memo_admits_exactly_what_the_constraint_admits(void **state)
{
    (void)state;
    cv_cluster_t *c = big_cluster(600);
    cv_placer_t *p = cv_placer_new(c);
    static const char *const texts[] = {"NodeType == large", "Color != red && NodeType != small",
                                        "NodeName == n0042 || NodeName == n0043"};
    for (size_t t = 0; t < 3; t++) {
        cv_service_t *s = fx_service("svc", 3, false);
        fx_placement(s, texts[t]);
        const pl_entry_t *e = cv__place_entry(p, s);
        assert_non_null(e);
        assert_ptr_equal(cv__place_entry(p, s), e); /* remembered */
        size_t k = 0;
        for (size_t n = 0; n < c->nnodes; n++) {
            bool match = cv_pcexpr_match(s->placement, c->nodes[n].props);
            bool up = c->nodes[n].status == CV_NODE_UP;
            if (match && up) {
                assert_true(k < e->nnodes);
                assert_int_equal(e->nodes[k], n);
                assert_ptr_equal(e->eligible[k], c->nodes[n].props);
                k++;
            }
            for (size_t level = 0; match && level < p->ix.nlevels; level++)
                assert_true(e->inv->fd_in[pl_fd(&p->ix, n, level)]);
        }
        assert_int_equal(k, e->nnodes);
        fx_service_free(s);
    }
    cv_placer_free(p);
    fx_cluster_free(c);
}

static void test_classes_group_nodes_with_equal_properties_but_their_names(void **state)
{
    (void)state;
    cv_cluster_t *c = big_cluster(600);
    cv_placer_t *p = cv_placer_new(c);
    assert_int_equal(cv__place_classes(p), 0);
    assert_int_equal(p->nclasses, 9); /* 3 types x 3 colours */
    for (size_t a = 0; a < c->nnodes; a += 37)
        for (size_t b = 0; b < c->nnodes; b += 11) {
            json_t *pa = json_copy(c->nodes[a].props), *pb = json_copy(c->nodes[b].props);
            json_object_del(pa, "NodeName");
            json_object_del(pb, "NodeName");
            assert_int_equal(p->node_class[a] == p->node_class[b], json_equal(pa, pb));
            json_decref(pa);
            json_decref(pb);
        }
    cv_placer_free(p);
    fx_cluster_free(c);
}

/* ---------------------------------------------------------------- domain counts */

static void assert_counts_are_a_recount(const pl_ctx_t *x)
{
    const pl_index_t *ix = &x->ix;
    for (size_t d = 0; d < ix->nfd; d++) {
        int n = 0;
        for (size_t i = 0; i < x->nreps; i++)
            n += pl_fd(ix, x->reps[i].node, ix->fd_level[d]) == d;
        assert_int_equal(x->fd_count[d], n);
    }
    for (size_t u = 0; u < ix->nud; u++) {
        int n = 0;
        for (size_t i = 0; i < x->nreps; i++)
            n += ix->ud[x->reps[i].node] == u;
        assert_int_equal(x->ud_count[u], n);
    }
}

static void assert_scratch_clean(const cv_placer_t *p)
{
    for (size_t d = 0; d < p->ix.nfd; d++)
        assert_int_equal(p->fd_count[d], 0);
    for (size_t u = 0; u < p->ix.nud; u++)
        assert_int_equal(p->ud_count[u], 0);
    for (size_t n = 0; n < p->c->nnodes; n++)
        assert_int_equal(p->used[n], 0);
    for (size_t cell = 0; cell < p->ix.ncells; cell++)
        assert_int_equal(p->avail[cell], 0);
}

static void test_domain_counts_are_a_recount_and_the_scratch_is_left_clean(void **state)
{
    (void)state;
    cv_cluster_t *c = big_cluster(600);
    cv_service_t *old = fx_service("old", 5, true), *s = fx_service("svc", 5, true);
    fx_metric(s, "M", 2, 1, 1.0);
    cv_layout_t *l = fx_layout();
    const char *const on[] = {"n0000", "n0007", "n0014"}; /* distinct FDs and UDs */
    fx_layout_add(l, c, s, on, 3);                        /* svc's own replicas 0-2 */
    fx_layout_add(l, c, old, on, 2);
    cv_placer_t *p = cv_placer_new(c);
    pl_ctx_t x;
    assert_int_equal(cv__place_ctx_init(&x, p, s, l, CV_PLACE_NEW), 0);
    assert_non_null(x.entry); /* sampling */
    assert_counts_are_a_recount(&x);
    cv__place_ctx_free(&x);
    assert_scratch_clean(p);
    for (int i = 0; i < 3; i++) {
        json_t *r = cv_placer_place(p, s, l, CV_PLACE_NEW);
        assert_int_equal(json_array_size(json_object_get(r, "placements")), 5);
        json_decref(r);
        assert_scratch_clean(p);
    }
    cv_placer_free(p);
    fx_layout_free(l);
    fx_service_free(s);
    fx_service_free(old);
    fx_cluster_free(c);
}

/* ---------------------------------------------------------------- sampled placement */

static json_t *place_with(cv_cluster_t *c, cv_service_t *s, size_t sample_min)
{
    cv_placer_t *p = cv_placer_new(c);
    p->sample_min = sample_min;
    json_t *r = cv_placer_place(p, s, NULL, CV_PLACE_NEW);
    cv_placer_free(p);
    return r;
}

static void test_sampled_placement_spreads_over_the_domains_and_repeats(void **state)
{
    (void)state;
    cv_cluster_t *c = big_cluster(600);
    for (int replicas = 3; replicas <= 6; replicas++) {
        cv_service_t *s = fx_service("spread", replicas, true);
        fx_metric(s, "M", 3, 1, 1.0);
        json_t *a = place_with(c, s, 512), *b = place_with(c, s, 512);
        assert_true(json_equal(a, b));
        json_t *placements = json_object_get(a, "placements");
        assert_int_equal(json_array_size(placements), (size_t)replicas);
        assert_int_equal(json_array_size(json_object_get(a, "health")), 0);
        assert_int_equal(json_array_size(json_object_get(a, "warnings")), 0);
        json_decref(a);
        json_decref(b);
        fx_service_free(s);
    }
    fx_cluster_free(c);
}

/* A service the cluster cannot hold, and one whose constraint admits
 * fewer nodes than it has replicas: the sample cannot decide, and the
 * result (a refusal, unplaced replicas with their elimination sequences)
 * is the exhaustive search's to the letter. */
static void test_what_the_sample_cannot_decide_is_the_exhaustive_answer(void **state)
{
    (void)state;
    cv_cluster_t *c = big_cluster(600);
    cv_service_t *big = fx_service("big", 3, false);
    fx_metric(big, "M", 5000, 5000, 1.0); /* more than the cluster holds */
    cv_service_t *few = fx_service("few", 5, false);
    fx_metric(few, "M", 1, 1, 1.0);
    fx_placement(few, "NodeName == n0001 || NodeName == n0002");
    cv_service_t *const svcs[] = {big, few};
    for (size_t i = 0; i < 2; i++) {
        json_t *sampled = place_with(c, svcs[i], 512), *full = place_with(c, svcs[i], SIZE_MAX);
        assert_true(json_equal(sampled, full));
        fx_service_free(svcs[i]);
        json_decref(sampled);
        json_decref(full);
    }
    fx_cluster_free(c);
}

/* ---------------------------------------------------------------- random services */

static uint32_t next(uint64_t *r, uint32_t n)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return (uint32_t)(*r % n);
}

/* Capacities 10-59 with a buffer, loads up to three quarters, a few nodes
 * down or disabled, two FD levels and 7 UDs. */
static cv_cluster_t *random_cluster(uint64_t *r, size_t n)
{
    cv_cluster_t *c = fx_cluster("M");
    c->metrics[0].buffer = 0.1;
    static const char *const colors[] = {"red", "blue", "green"};
    for (size_t i = 0; i < n; i++) {
        char name[16], fd[32], ud[8];
        snprintf(name, sizeof(name), "n%04zu", i);
        snprintf(fd, sizeof(fd), "fd:/d%u/r%u", next(r, 4), next(r, 3));
        snprintf(ud, sizeof(ud), "UD%u", next(r, 7));
        cv_node_t *node = fx_node(c, name, fd, ud);
        json_object_set_new(node->props, "Color", json_string(colors[next(r, 3)]));
        int64_t cap = 10 + next(r, 50);
        fx_cap(c, node, "M", cap, next(r, (uint32_t)(cap * 3 / 4 + 1)));
        uint32_t st = next(r, 30);
        node->status = st == 0 ? CV_NODE_DOWN : st == 1 ? CV_NODE_DISABLED : CV_NODE_UP;
    }
    fx_done(c);
    return c;
}

static int64_t placed_load(const cv_service_t *s, const char *role)
{
    return strcmp(role, "secondary") == 0 ? s->metrics[0].secondary_load
                                          : s->metrics[0].primary_load;
}

/* Every placement on an up node the constraint admits, within the node's
 * non-buffered capacity, one replica a node; and the loads added. */
static void assert_hard_rules_and_load(cv_cluster_t *c, const cv_service_t *s, const json_t *r)
{
    uint8_t *seen = calloc(c->nnodes, 1);
    json_t *p;
    size_t i;
    json_array_foreach(json_object_get(r, "placements"), i, p)
    {
        long n = cv_cluster_node(c, json_string_value(json_object_get(p, "node")));
        assert_true(n >= 0);
        cv_node_t *node = &c->nodes[n];
        int64_t load = placed_load(s, json_string_value(json_object_get(p, "role")));
        assert_int_equal(node->status, CV_NODE_UP);
        assert_false(seen[n]);
        seen[n] = 1;
        assert_true(!s->placement || cv_pcexpr_match(s->placement, node->props));
        assert_true(load == 0 || node->load[0] + load <= node->capacity[0] * 9 / 10);
        node->load[0] += load;
    }
    free(seen);
}

static void test_sampled_placements_keep_every_hard_rule_and_repeat(void **state)
{
    (void)state;
    uint64_t r = 0x9e3779b97f4a7c15ULL;
    cv_cluster_t *c = random_cluster(&r, 700);
    static const char *const texts[] = {NULL, "Color == blue", "Color != red"};
    cv_placer_t *p = cv_placer_new(c);
    for (int i = 0; i < 1500; i++) { /* until the cluster is full */
        char name[16];
        snprintf(name, sizeof(name), "s%04d", i);
        cv_service_t *s = fx_service(name, 1 + (int)next(&r, 6), next(&r, 2));
        if (texts[next(&r, 3)])
            fx_placement(s, texts[next(&r, 3) % 2 + 1]);
        int64_t primary = next(&r, 9);
        fx_metric(s, "M", primary, next(&r, (uint32_t)primary + 1), 1.0);
        s->distribution = (cv_distribution_t)next(&r, 3);
        s->require_domain_distribution = next(&r, 4) == 0;
        json_t *a = cv_placer_place(p, s, NULL, CV_PLACE_NEW);
        json_t *b = cv_place(c, s, NULL, CV_PLACE_NEW); /* a fresh placer, the same answer */
        assert_true(json_equal(a, b));
        assert_hard_rules_and_load(c, s, a);
        /* Placed without relaxing anything: no constraint is reported broken. */
        if (json_array_size(json_object_get(a, "warnings")) == 0 &&
            json_array_size(json_object_get(a, "unplaced")) == 0)
            assert_int_equal(json_array_size(json_object_get(a, "health")), 0);
        json_decref(a);
        json_decref(b);
        fx_service_free(s);
    }
    cv_placer_free(p);
    fx_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_bound_is_log2_of_the_nodes_times_the_factor),
        cmocka_unit_test(test_sample_walk_visits_distinct_indices_in_range),
        cmocka_unit_test(test_sample_walk_repeats_for_a_seed_and_differs_across_seeds),
        cmocka_unit_test(test_memo_admits_exactly_what_the_constraint_admits),
        cmocka_unit_test(test_classes_group_nodes_with_equal_properties_but_their_names),
        cmocka_unit_test(test_domain_counts_are_a_recount_and_the_scratch_is_left_clean),
        cmocka_unit_test(test_sampled_placement_spreads_over_the_domains_and_repeats),
        cmocka_unit_test(test_what_the_sample_cannot_decide_is_the_exhaustive_answer),
        cmocka_unit_test(test_sampled_placements_keep_every_hard_rule_and_repeat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
