/*
 * The constraint check (cv_balance, CV_BALANCE_CONSTRAINT) and the hard
 * constraints every move keeps: a node over capacity by a reported load
 * sheds its cheapest replica, which load counts (reported, then the
 * agent's, then the declared one), why nothing moves when no node can
 * take it, a fault domain spread restored, and balancing moves that never
 * break a capacity or a placement constraint (a random cluster checked
 * move by move).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_balance_fixture.h"

#define MEM(n) "[{\"name\": \"MemoryMB\", \"primaryLoad\": " #n "}]"

/* n1 (capacity 100) runs "hi" (High cost) and "lo" (Low), 40 each; n2 is empty. */
static json_t *two_on_one(void)
{
    json_t *m = bx_model();
    bx_node(m, "n1", "T", "fd1", "ud1", "{\"MemoryMB\": 100}");
    bx_node(m, "n2", "T", "fd2", "ud2", "{\"MemoryMB\": 100}");
    bx_service(m, "hi", MEM(40), "High", NULL);
    bx_service(m, "lo", MEM(40), "Low", NULL);
    bx_place(m, "hi", "n1");
    bx_place(m, "lo", "n1");
    return m;
}

static void test_a_reported_load_over_capacity_moves_the_cheapest_replica(void **state)
{
    (void)state;
    json_t *m = two_on_one();
    json_t *r = bx_run(m, CV_BALANCE_CONSTRAINT, NULL);
    assert_int_equal(bx_nmoves(r), 0); /* 80 of 100: fine */
    json_decref(r);
    bx_report_load(m, "hi", 0, "MemoryMB", 90); /* the spike: 130 of 100 */
    r = bx_run(m, CV_BALANCE_CONSTRAINT, NULL);
    assert_string_equal(json_string_value(json_object_get(r, "phase")), "constraint");
    assert_int_equal(bx_nmoves(r), 1);
    const json_t *mv = json_array_get(json_object_get(r, "moves"), 0);
    assert_string_equal(json_string_value(json_object_get(mv, "svc")), "lo");
    assert_string_equal(json_string_value(json_object_get(mv, "from")), "n1");
    assert_string_equal(json_string_value(json_object_get(mv, "to")), "n2");
    assert_string_equal(json_string_value(json_object_get(mv, "reason")), "constraint");
    assert_non_null(strstr(json_string_value(json_object_get(mv, "detail")),
                           "node n1 holds 130 of its capacity 100 of MemoryMB"));
    json_decref(r);
    json_decref(m);
}

static void
test_the_reported_load_comes_before_the_agents_which_comes_before_the_declared(void **state)
{
    (void)state;
    json_t *m = two_on_one();
    /* the agent measures 90 for hi: 130 of 100 */
    json_t *n1 = json_object_get(json_object_get(m, "nodes"), "n1");
    json_object_set_new(json_object_get(n1, "report"), "hi/0/1",
                        json_pack("{s:s, s:s, s:{s:i}}", "rid", "hi/0/1", "state", "healthy",
                                  "load", "MemoryMB", 90));
    json_t *r = bx_run(m, CV_BALANCE_CONSTRAINT, NULL);
    assert_int_equal(bx_nmoves(r), 1);
    json_decref(r);
    /* the replica itself reports 20: 60 of 100 */
    bx_report_load(m, "hi", 0, "MemoryMB", 20);
    r = bx_run(m, CV_BALANCE_CONSTRAINT, NULL);
    assert_int_equal(bx_nmoves(r), 0);
    json_decref(r);
    /* as {cluster}:load:<svc> holds it: each field JSON text */
    json_t *hi = json_object_get(json_object_get(m, "services"), "hi");
    json_object_set_new(json_object_get(hi, "loads"), "0",
                        json_string("{\"MemoryMB\": 95, \"time\": 1}"));
    r = bx_run(m, CV_BALANCE_CONSTRAINT, NULL);
    assert_int_equal(bx_nmoves(r), 1);
    json_decref(r);
    json_decref(m);
}

static void test_an_overrun_no_node_can_take_is_explained(void **state)
{
    (void)state;
    json_t *m = two_on_one();
    bx_units(m, "full", "n2", 1, "MemoryMB", 90, NULL);
    bx_report_load(m, "hi", 0, "MemoryMB", 90);
    json_t *r = bx_run(m, CV_BALANCE_CONSTRAINT, NULL);
    assert_int_equal(bx_nmoves(r), 0);
    assert_non_null(strstr(bx_why(r), "a constraint would break: node n1 holds 130"));
    json_decref(r);
    json_decref(m);
}

static void test_a_service_crowded_into_one_fault_domain_is_spread_again(void **state)
{
    (void)state;
    json_t *m = bx_model();
    bx_node(m, "a1", "T", "fd1", "ud1", NULL);
    bx_node(m, "a2", "T", "fd1", "ud2", NULL);
    bx_node(m, "b1", "T", "fd2", "ud3", NULL);
    bx_node(m, "c1", "T", "fd3", "ud4", NULL);
    bx_service(m, "web", MEM(10), NULL, NULL);
    bx_place(m, "web", "a1");
    bx_place(m, "web", "a2");
    json_t *r = bx_run(m, CV_BALANCE_CONSTRAINT, NULL);
    assert_int_equal(bx_nmoves(r), 1);
    const json_t *mv = json_array_get(json_object_get(r, "moves"), 0);
    const char *to = json_string_value(json_object_get(mv, "to"));
    assert_true(strcmp(to, "b1") == 0 || strcmp(to, "c1") == 0);
    assert_non_null(strstr(json_string_value(json_object_get(mv, "detail")), "fault domains"));
    json_decref(r);
    json_decref(m);
}

static void test_a_replica_already_moving_is_not_moved_again(void **state)
{
    (void)state;
    json_t *m = two_on_one();
    bx_report_load(m, "hi", 0, "MemoryMB", 90);
    json_t *lo = json_object_get(json_object_get(m, "services"), "lo");
    json_object_set_new(lo, "moves", json_pack("{s:{s:s, s:s}}", "0", "from", "n1", "to", "n2"));
    json_t *r = bx_run(m, CV_BALANCE_CONSTRAINT, NULL);
    /* lo is on its way: the only other candidate is hi itself */
    for (size_t i = 0; i < bx_nmoves(r); i++)
        assert_string_not_equal(json_string_value(json_object_get(
                                    json_array_get(json_object_get(r, "moves"), i), "svc")),
                                "lo");
    json_decref(r);
    json_decref(m);
}

/* svc_commit.lua re-checks the declared loads of the assigned specs: a
 * node whose assignments declare it full takes nothing, whatever the
 * replicas report. */
static void test_a_node_full_by_its_declared_loads_takes_nothing(void **state)
{
    (void)state;
    json_t *m = two_on_one();
    bx_report_load(m, "hi", 0, "MemoryMB", 90);
    json_t *n2 = json_object_get(json_object_get(m, "nodes"), "n2");
    json_object_set_new(json_object_get(n2, "assign"), "other/0/1",
                        json_pack("{s:s, s:{s:i}}", "rid", "other/0/1", "load", "MemoryMB", 80));
    json_t *r = bx_run(m, CV_BALANCE_CONSTRAINT, NULL);
    assert_int_equal(bx_nmoves(r), 0);
    assert_non_null(strstr(bx_why(r), "a constraint would break"));
    json_decref(r);
    json_decref(m);
}

/* Balancing finds the empty nodes full or forbidden, and says so. */
static void test_balancing_breaks_neither_a_capacity_nor_a_placement_constraint(void **state)
{
    (void)state;
    json_t *m = bx_model();
    bx_node(m, "n1", "T", "fd1", "ud1", "{\"MemoryMB\": 1000}");
    bx_node(m, "n2", "T", "fd2", "ud2", "{\"MemoryMB\": 5}");    /* too small */
    bx_node(m, "n3", "T", "fd3", "ud3", "{\"MemoryMB\": 1000}"); /* forbidden */
    for (int i = 0; i < 5; i++) {
        char svc[16];
        snprintf(svc, sizeof(svc), "s%d", i);
        bx_service(m, svc, MEM(100), "Zero", "zone != fd3");
        bx_place(m, svc, "n1");
    }
    json_t *r = bx_run(m, CV_BALANCE_BALANCING, NULL);
    assert_true(bx_imbalanced(r, "MemoryMB", NULL));
    assert_int_equal(bx_nmoves(r), 0);
    assert_non_null(strstr(bx_why(r), "a constraint would break"));
    json_decref(r);
    json_decref(m);
}

/*
 * web has one replica in each fault domain (a1 in fd1, b1 in fd2, c1 in
 * fd3); b1 and c1 also hold a replica pinned there. Moving web's b1 or c1
 * replica to the empty a2 would even the load but put two in fd1: refused,
 * unless the fault domain constraint is disabled (priority -1).
 */
static void test_balancing_never_crowds_a_fault_domain(void **state)
{
    (void)state;
    for (int disabled = 0; disabled < 2; disabled++) {
        json_t *m = bx_model();
        bx_node(m, "a1", "T", "fd1", "ud1", NULL);
        bx_node(m, "a2", "T", "fd1", "ud1", NULL);
        bx_node(m, "b1", "T", "fd2", "ud1", NULL);
        bx_node(m, "c1", "T", "fd3", "ud1", NULL);
        if (disabled)
            json_object_set_new(json_object_get(m, "settings"), "settings",
                                json_pack("{s:{s:i}}", "constraintPriorities", "faultDomain", -1));
        bx_service(m, "web", MEM(10), "Zero", NULL);
        bx_place(m, "web", "a1");
        bx_place(m, "web", "b1");
        bx_place(m, "web", "c1");
        bx_service(m, "pin2", MEM(10), "Zero", "zone == fd2");
        bx_place(m, "pin2", "b1");
        bx_service(m, "pin3", MEM(10), "Zero", "zone == fd3");
        bx_place(m, "pin3", "c1");
        json_t *r = bx_run(m, CV_BALANCE_BALANCING, NULL);
        assert_true(bx_imbalanced(r, "MemoryMB", NULL));
        if (disabled) {
            assert_true(bx_nmoves(r) >= 1);
        } else {
            assert_int_equal(bx_nmoves(r), 0);
            assert_non_null(strstr(bx_why(r), "a constraint would break"));
        }
        json_decref(r);
        json_decref(m);
    }
}

typedef struct rng {
    uint64_t s;
} rng_t;

static int rnd(rng_t *r, int n)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (int)(r->s % (uint64_t)n);
}

static double node_load(const json_t *m, const char *node)
{
    double sum = 0;
    const char *svc;
    const json_t *rec;
    json_object_foreach((json_t *)json_object_get(m, "services"), svc, rec)
    {
        const json_t *spec = json_object_get(rec, "spec");
        double load = json_number_value(
            json_object_get(json_array_get(json_object_get(spec, "metrics"), 0), "primaryLoad"));
        size_t i;
        const json_t *e;
        json_array_foreach(json_object_get(rec, "placement"), i, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "node")), node) == 0)
                sum += load;
        }
    }
    return sum;
}

/* 12 nodes of random capacity, 40 services of random load, half of them
 * kept off zone fd1: every move of a balancing pass lands where the
 * constraint allows, and no node ends above its capacity. */
static void test_random_balancing_moves_keep_capacity_and_placement(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        rng_t g = {seed * 2654435761u};
        json_t *m = bx_model();
        int cap[12];
        for (int i = 0; i < 12; i++) {
            char name[8], fd[8], ud[8], caps[64];
            snprintf(name, sizeof(name), "n%d", i);
            snprintf(fd, sizeof(fd), "fd%d", i % 4);
            snprintf(ud, sizeof(ud), "ud%d", i % 3);
            cap[i] = 100 + rnd(&g, 400);
            snprintf(caps, sizeof(caps), "{\"MemoryMB\": %d}", cap[i]);
            bx_node(m, name, "T", fd, ud, caps);
        }
        for (int s = 0; s < 40; s++) {
            char svc[16], metrics[128], node[8];
            snprintf(svc, sizeof(svc), "s%d", s);
            int load = 5 + rnd(&g, 40);
            snprintf(metrics, sizeof(metrics), "[{\"name\": \"MemoryMB\", \"primaryLoad\": %d}]",
                     load);
            bx_service(m, svc, metrics, "Zero", s % 2 ? "zone != fd0" : NULL);
            int at = rnd(&g, 3) + 1; /* crowd n1..n3, none in fd0 */
            snprintf(node, sizeof(node), "n%d", at);
            if (node_load(m, node) + load <= cap[at])
                bx_place(m, svc, node);
        }
        json_t *r = bx_run(m, CV_BALANCE_BALANCING, NULL);
        assert_true(bx_nmoves(r) > 0);
        size_t i;
        const json_t *mv;
        json_array_foreach(json_object_get(r, "moves"), i, mv)
        {
            int svc = atoi(json_string_value(json_object_get(mv, "svc")) + 1);
            int to = atoi(json_string_value(json_object_get(mv, "to")) + 1);
            if (svc % 2)
                assert_int_not_equal(to % 4, 0);
        }
        bx_apply(m, r);
        for (int n = 0; n < 12; n++) {
            char name[8];
            snprintf(name, sizeof(name), "n%d", n);
            assert_true(node_load(m, name) <= cap[n]);
        }
        json_decref(r);
        json_decref(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_reported_load_over_capacity_moves_the_cheapest_replica),
        cmocka_unit_test(
            test_the_reported_load_comes_before_the_agents_which_comes_before_the_declared),
        cmocka_unit_test(test_an_overrun_no_node_can_take_is_explained),
        cmocka_unit_test(test_a_service_crowded_into_one_fault_domain_is_spread_again),
        cmocka_unit_test(test_a_replica_already_moving_is_not_moved_again),
        cmocka_unit_test(test_a_node_full_by_its_declared_loads_takes_nothing),
        cmocka_unit_test(test_balancing_breaks_neither_a_capacity_nor_a_placement_constraint),
        cmocka_unit_test(test_balancing_never_crowds_a_fault_domain),
        cmocka_unit_test(test_random_balancing_moves_keep_capacity_and_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
