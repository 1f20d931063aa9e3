/*
 * Specification of fault- and upgrade-domain spreading: the 6-, 8- and
 * 10-node grids over 5 FD x 5 UD of Service Fabric's cluster description
 * docs come out as the docs' tables say, the adaptive rule switches exactly
 * when the docs say, every level of an FD hierarchy is spread, and down
 * domains still count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "place_internal.h"
#include "test_place_fixture.h"

/* The docs' first grid: N6 shares FD0 with N1 and UD1 with N2. */
static const char *const six[] = {"N1 fd:/FD0 UD0", "N2 fd:/FD1 UD1", "N3 fd:/FD2 UD2",
                                  "N4 fd:/FD3 UD3", "N5 fd:/FD4 UD4", "N6 fd:/FD0 UD1"};
/* The docs' eight-node grid (the adaptive example). */
static const char *const eight[] = {"N1 fd:/FD0 UD0", "N2 fd:/FD1 UD1", "N3 fd:/FD2 UD2",
                                    "N4 fd:/FD3 UD3", "N5 fd:/FD4 UD4", "N6 fd:/FD0 UD1",
                                    "N7 fd:/FD1 UD2", "N8 fd:/FD2 UD3"};
/* The docs' ten-node grid: N6-N10 on the second diagonal. */
static const char *const ten[] = {
    "N1 fd:/FD0 UD0", "N2 fd:/FD1 UD1", "N3 fd:/FD2 UD2", "N4 fd:/FD3 UD3", "N5 fd:/FD4 UD4",
    "N6 fd:/FD0 UD1", "N7 fd:/FD1 UD2", "N8 fd:/FD2 UD3", "N9 fd:/FD3 UD4", "N10 fd:/FD4 UD0"};

#define GRID(rows) fx_grid(rows, sizeof(rows) / sizeof(rows[0]))

static cv_service_t *five(cv_distribution_t d)
{
    cv_service_t *s = fx_service("svc", 5, true);
    s->distribution = d;
    return s;
}

/* Gives every node capacity 100 of metric M and the load `load` on those named. */
static void load_nodes(cv_cluster_t *c, const char *const *names, size_t n, int64_t load)
{
    snprintf(c->metrics[0].name, CV_METRIC_NAME_MAX, "M");
    c->nmetrics = 1;
    for (size_t i = 0; i < c->nnodes; i++)
        c->nodes[i].capacity[0] = 100;
    for (size_t i = 0; i < n; i++)
        fx_get(c, names[i])->load[0] = load;
}

/* A layout of `s` on the named nodes, checked: the health reports. */
static json_t *check(cv_cluster_t *c, cv_service_t *s, const char *const *nodes, size_t n)
{
    cv_layout_t *l = fx_layout();
    fx_layout_add(l, c, s, nodes, n);
    json_t *h = cv_place_check(c, l);
    fx_layout_free(l);
    return h;
}

/* ---------------------------------------------------------------- the six-node grid */

static void test_six_nodes_max_difference_places_on_n1_to_n5(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(six);
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "N1,N2,N3,N4,N5");
    assert_int_equal(json_array_size(json_object_get(r, "health")), 0);
    assert_string_equal(json_string_value(json_object_get(r, "policy")), "maxDifference");
    fx_release(r, NULL, s, c);
}

static void test_six_nodes_n6_is_never_used_even_when_it_is_the_least_loaded(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(six);
    static const char *const busy[] = {"N1", "N2", "N3", "N4", "N5"};
    load_nodes(c, busy, 5, 60);
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    fx_metric(s, "M", 1, 1, 1.0);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "N1,N2,N3,N4,N5");
    fx_release(r, NULL, s, c);
}

static void test_six_nodes_n6_instead_of_n2_breaks_the_fault_domain_rule(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(six);
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    static const char *const layout[] = {"N1", "N3", "N4", "N5", "N6"}; /* FD0 2, FD1 0 */
    json_t *h = check(c, s, layout, 5);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_FaultDomain", NULL), 1);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_UpgradeDomain", NULL), 0);
    fx_release(h, NULL, s, c);
}

static void test_six_nodes_n2_and_n6_break_the_upgrade_domain_rule(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(six);
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    static const char *const layout[] = {"N6", "N2", "N3", "N4", "N5"}; /* UD1 2, UD0 0 */
    json_t *h = check(c, s, layout, 5);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_FaultDomain", NULL), 0);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_UpgradeDomain", "Warning"), 1);
    fx_release(h, NULL, s, c);
}

static void test_six_nodes_adaptive_rule_chooses_quorum_safe(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(six); /* 5 | 5 FDs, 5 | 5 UDs, 6 <= 25 */
    cv_service_t *s = five(CV_DIST_ADAPTIVE);
    assert_int_equal(cv_place_policy(c, s), CV_DIST_QUORUM_SAFE);
    fx_service_free(s);
    fx_cluster_free(c);
}

/* ---------------------------------------------------------------- the ten-node grid */

static void test_ten_nodes_max_difference_still_uses_n1_to_n5(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(ten);
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "N1,N2,N3,N4,N5");
    assert_int_equal(json_array_size(json_object_get(r, "health")), 0);
    fx_release(r, NULL, s, c);
}

/* ---------------------------------------------------------------- the eight-node grid */

static void test_eight_nodes_adaptive_rule_chooses_quorum_safe(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(eight);
    cv_service_t *s = five(CV_DIST_ADAPTIVE);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(json_string_value(json_object_get(r, "policy")), "quorumSafe");
    fx_release(r, NULL, s, c);
}

static void test_eight_nodes_seed_layout_is_quorum_safe_but_not_max_difference(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(eight);
    static const char *const seed[] = {"N1", "N6", "N7", "N3",
                                       "N5"}; /* FD 2 1 1 0 1, UD 1 1 2 0 1 */
    cv_service_t *adaptive = five(CV_DIST_ADAPTIVE);
    json_t *h = check(c, adaptive, seed, 5);
    assert_int_equal(json_array_size(h), 0);
    json_decref(h);
    cv_service_t *strict = five(CV_DIST_MAX_DIFFERENCE);
    h = check(c, strict, seed, 5);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_FaultDomain", NULL), 1);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_UpgradeDomain", NULL), 1);
    json_decref(h);
    fx_service_free(adaptive);
    fx_service_free(strict);
    fx_cluster_free(c);
}

static void test_eight_nodes_quorum_safe_lets_n6_to_n8_be_used(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(eight);
    static const char *const busy[] = {"N1", "N2", "N3", "N4", "N5"};
    load_nodes(c, busy, 5, 60);
    cv_service_t *s = five(CV_DIST_ADAPTIVE);
    fx_metric(s, "M", 1, 1, 1.0);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "N6,N7,N8,N5,N1");
    assert_int_equal(json_array_size(json_object_get(r, "health")), 0);
    fx_release(r, NULL, s, c);
}

static void test_eight_nodes_four_replicas_return_to_max_difference_on_n1_to_n4(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(eight);
    cv_service_t *s = five(CV_DIST_ADAPTIVE);
    s->replicas = 4; /* 4 is not divisible by 5 FDs */
    assert_int_equal(cv_place_policy(c, s), CV_DIST_MAX_DIFFERENCE);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "N1,N2,N3,N4");
    fx_release(r, NULL, s, c);
}

/* The docs: with N1 removed only four UDs remain, the rule falls back to
 * maximum difference, and the rebuilt R1 must land on N4. */
static void test_eight_nodes_without_n1_rebuild_r1_on_n4(void **state)
{
    (void)state;
    cv_cluster_t *c = fx_grid(eight + 1, 7);
    cv_service_t *s = five(CV_DIST_ADAPTIVE);
    assert_int_equal(cv_place_policy(c, s), CV_DIST_MAX_DIFFERENCE);
    static const char *const others[] = {"N6", "N7", "N3", "N5"}; /* R2..R5 */
    cv_layout_t *l = fx_layout();
    fx_layout_add(l, c, s, others, 4);
    for (size_t i = 0; i < 4; i++) {
        l->services[0].replicas[i].index = (int)i + 1;
        l->services[0].replicas[i].role = CV_ROLE_SECONDARY;
    }
    json_t *r = cv_place(c, s, l, CV_PLACE_REPLACE);
    json_t *first = json_array_get(json_object_get(r, "placements"), 0);
    assert_int_equal(json_integer_value(json_object_get(first, "replica")), 0);
    assert_string_equal(json_string_value(json_object_get(first, "node")), "N4");
    assert_int_equal(json_array_size(json_object_get(r, "health")), 0);
    fx_release(r, l, s, c);
}

/* ---------------------------------------------------------------- the adaptive rule */

static void test_adaptive_rule_needs_node_count_at_most_fds_times_uds(void **state)
{
    (void)state;
    cv_cluster_t *c = fx_cluster(NULL);
    char name[16], fd[16], ud[16];
    for (int i = 0; i < 26; i++) { /* 26 > 5 x 5 */
        snprintf(name, sizeof(name), "N%02d", i);
        snprintf(fd, sizeof(fd), "fd:/FD%d", i % 5);
        snprintf(ud, sizeof(ud), "UD%d", (i / 5) % 5);
        fx_node(c, name, fd, ud);
    }
    fx_done(c);
    cv_service_t *s = five(CV_DIST_ADAPTIVE);
    assert_int_equal(cv_place_policy(c, s), CV_DIST_MAX_DIFFERENCE);
    fx_service_free(s);
    fx_cluster_free(c);
}

static void test_adaptive_rule_needs_replicas_divisible_by_the_upgrade_domains(void **state)
{
    (void)state;
    static const char *const rows[] = {"A fd:/FD0 UD0", "B fd:/FD1 UD1", "C fd:/FD0 UD2",
                                       "D fd:/FD1 UD0"};
    cv_cluster_t *c = fx_grid(rows, 4); /* 2 FDs, 3 UDs */
    cv_service_t *s = five(CV_DIST_ADAPTIVE);
    s->replicas = 4;
    assert_int_equal(cv_place_policy(c, s), CV_DIST_MAX_DIFFERENCE);
    s->replicas = 6;
    assert_int_equal(cv_place_policy(c, s), CV_DIST_QUORUM_SAFE);
    fx_service_free(s);
    fx_cluster_free(c);
}

static void test_an_explicit_policy_is_kept(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(eight);
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    assert_int_equal(cv_place_policy(c, s), CV_DIST_MAX_DIFFERENCE);
    fx_service_free(s);
    fx_cluster_free(c);
}

static void test_quorum_safe_allows_a_minority_per_domain(void **state)
{
    (void)state;
    int lo, hi;
    cv__place_bounds(CV_DIST_QUORUM_SAFE, 5, 5, 5, &lo, &hi); /* any 3 of 5 are a quorum */
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 2);
    cv__place_bounds(CV_DIST_QUORUM_SAFE, 6, 6, 5, &lo, &hi); /* 4 of 6 needed: lose 2 */
    assert_int_equal(hi, 2);
    cv__place_bounds(CV_DIST_MAX_DIFFERENCE, 5, 5, 4, &lo, &hi);
    assert_int_equal(lo, 1);
    assert_int_equal(hi, 2);
}

/* ---------------------------------------------------------------- hierarchy and failures */

/* 2 datacenters x 2 racks x 2 nodes, every node its own UD. */
static cv_cluster_t *two_datacenters(void)
{
    static const char *const rows[] = {"A1 fd:/dc1/r1 U1", "A2 fd:/dc1/r1 U2", "B1 fd:/dc1/r2 U3",
                                       "B2 fd:/dc1/r2 U4", "C1 fd:/dc2/r1 U5", "C2 fd:/dc2/r1 U6",
                                       "D1 fd:/dc2/r2 U7", "D2 fd:/dc2/r2 U8"};
    return fx_grid(rows, 8);
}

static void test_every_level_of_the_fault_domain_tree_is_spread(void **state)
{
    (void)state;
    cv_cluster_t *c = two_datacenters();
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    s->replicas = 4;
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "A1,C1,B1,D1"); /* one per rack, two per datacenter */
    fx_release(r, NULL, s, c);
}

static void test_a_fuller_datacenter_is_avoided_at_the_top_level(void **state)
{
    (void)state;
    cv_cluster_t *c = two_datacenters();
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    s->replicas = 4;
    static const char *const had[] = {"A1", "B1"}; /* dc1 already holds two */
    cv_layout_t *l = fx_layout();
    fx_layout_add(l, c, s, had, 2);
    json_t *r = cv_place(c, s, l, CV_PLACE_REPLACE);
    assert_string_equal(fx_nodes(r), "A1,B1,C1,D1");
    fx_release(r, l, s, c);
}

static void set_down(cv_cluster_t *c, const char *name)
{
    fx_get(c, name)->status = CV_NODE_DOWN;
}

static void test_a_down_fault_domain_is_packed_with_a_warning(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(ten);
    set_down(c, "N3");
    set_down(c, "N8"); /* FD2 is entirely down */
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_int_equal(json_array_size(json_object_get(r, "placements")), 5);
    assert_int_equal(json_array_size(json_object_get(r, "unplaced")), 0);
    json_t *h = json_object_get(r, "health");
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_FaultDomain", "Warning"), 1);
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(h, 0), "description")),
                           "Distribution Policy -- Packing"));
    assert_true(json_array_size(json_object_get(r, "warnings")) > 0);
    fx_release(r, NULL, s, c);
}

static void test_require_domain_distribution_forbids_packing_when_nodes_are_down(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(ten);
    set_down(c, "N3");
    set_down(c, "N8");
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    s->require_domain_distribution = true;
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_int_equal(json_array_size(json_object_get(r, "placements")), 4);
    assert_int_equal(json_array_size(json_object_get(r, "unplaced")), 1);
    assert_string_equal(fx_eliminated(r, "NodeStatus"), "N3,N8");
    assert_int_equal(strlen(fx_eliminated(r, "FaultDomain")) > 0, 1);
    json_t *h = json_object_get(r, "health");
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_FaultDomain", NULL), 0);
    assert_int_equal(fx_health(h, "ServiceReplicaUnplacedHealth_Secondary", "Warning"), 1);
    fx_release(r, NULL, s, c);
}

static void test_a_layout_packed_against_require_domain_distribution_is_an_error(void **state)
{
    (void)state;
    cv_cluster_t *c = GRID(six);
    cv_service_t *s = five(CV_DIST_MAX_DIFFERENCE);
    s->require_domain_distribution = true;
    static const char *const layout[] = {"N1", "N3", "N4", "N5", "N6"};
    json_t *h = check(c, s, layout, 5);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_FaultDomain", "Error"), 1);
    fx_release(h, NULL, s, c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_six_nodes_max_difference_places_on_n1_to_n5),
        cmocka_unit_test(test_six_nodes_n6_is_never_used_even_when_it_is_the_least_loaded),
        cmocka_unit_test(test_six_nodes_n6_instead_of_n2_breaks_the_fault_domain_rule),
        cmocka_unit_test(test_six_nodes_n2_and_n6_break_the_upgrade_domain_rule),
        cmocka_unit_test(test_six_nodes_adaptive_rule_chooses_quorum_safe),
        cmocka_unit_test(test_ten_nodes_max_difference_still_uses_n1_to_n5),
        cmocka_unit_test(test_eight_nodes_adaptive_rule_chooses_quorum_safe),
        cmocka_unit_test(test_eight_nodes_seed_layout_is_quorum_safe_but_not_max_difference),
        cmocka_unit_test(test_eight_nodes_quorum_safe_lets_n6_to_n8_be_used),
        cmocka_unit_test(test_eight_nodes_four_replicas_return_to_max_difference_on_n1_to_n4),
        cmocka_unit_test(test_eight_nodes_without_n1_rebuild_r1_on_n4),
        cmocka_unit_test(test_adaptive_rule_needs_node_count_at_most_fds_times_uds),
        cmocka_unit_test(test_adaptive_rule_needs_replicas_divisible_by_the_upgrade_domains),
        cmocka_unit_test(test_an_explicit_policy_is_kept),
        cmocka_unit_test(test_quorum_safe_allows_a_minority_per_domain),
        cmocka_unit_test(test_every_level_of_the_fault_domain_tree_is_spread),
        cmocka_unit_test(test_a_fuller_datacenter_is_avoided_at_the_top_level),
        cmocka_unit_test(test_a_down_fault_domain_is_packed_with_a_warning),
        cmocka_unit_test(test_require_domain_distribution_forbids_packing_when_nodes_are_down),
        cmocka_unit_test(test_a_layout_packed_against_require_domain_distribution_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
