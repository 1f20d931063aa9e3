/*
 * Specification of capacity: never above capacity, primary and secondary
 * loads, the buffer (100 / 80) and overbooking (120 / 100) figures of
 * Service Fabric's cluster description docs, the cluster-capacity rejection
 * with its shortfall, and the weighted balance that decides among nodes
 * that fit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_place_fixture.h"

/* Nodes A, B, C... each in its own FD and UD, capacity `cap` of every
 * metric in `metrics`, the loads of the first metric from `loads`. */
static cv_cluster_t *flat(const char *metrics, size_t n, int64_t cap, const int64_t *loads)
{
    cv_cluster_t *c = fx_lettered(metrics, n, cap);
    for (size_t i = 0; loads && i < n; i++)
        c->nodes[i].load[0] = loads[i];
    return c;
}

static cv_service_t *stateless(int instances, const char *metric, int64_t load)
{
    cv_service_t *s = fx_service("svc", instances, false);
    fx_metric(s, metric, load, load, 1.0);
    return s;
}

static json_t *place(cv_cluster_t *c, cv_service_t *s, cv_place_action_t action)
{
    return cv_place(c, s, NULL, action);
}

static size_t placed(const json_t *r)
{
    return json_array_size(json_object_get(r, "placements"));
}

/* ---------------------------------------------------------------- node capacity */

static void test_a_node_is_never_filled_above_capacity(void **state)
{
    (void)state;
    int64_t loads[] = {8, 3};
    cv_cluster_t *c = flat("M", 2, 10, loads);
    cv_service_t *s = stateless(1, "M", 5);
    json_t *r = place(c, s, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "B");
    json_decref(r);
    fx_get(c, "B")->load[0] = 6;
    r = place(c, s, CV_PLACE_NEW);
    assert_int_equal(placed(r), 0);
    assert_string_equal(fx_eliminated(r, "NodeCapacity"), "A,B");
    fx_release(r, NULL, s, c);
}

/* The docs' ClientConnections node: capacity 32,768 with 32,256 used
 * leaves 512, too little for a 1,024 primary, enough for a 0 secondary. */
static void test_primary_and_secondary_loads_are_checked_separately(void **state)
{
    (void)state;
    int64_t loads[] = {32256, 30000};
    cv_cluster_t *c = flat("ClientConnections", 2, 32768, loads);
    cv_service_t *s = fx_service("svc", 2, true);
    fx_metric(s, "ClientConnections", 1024, 0, 1.0);
    json_t *r = place(c, s, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "B,A");
    fx_release(r, NULL, s, c);
}

/* ---------------------------------------------------------------- buffer and overbooking */

static cv_cluster_t *one_node(int64_t load, double buffer, double overbook)
{
    int64_t loads[] = {load};
    cv_cluster_t *c = flat("CpuUtilization", 1, 100, loads);
    c->metrics[0].buffer = buffer;
    c->metrics[0].overbook = overbook;
    return c;
}

static bool fits(int64_t load, double buffer, double overbook, cv_place_action_t action)
{
    cv_cluster_t *c = one_node(load, buffer, overbook);
    cv_service_t *s = stateless(1, "CpuUtilization", 10);
    json_t *r = place(c, s, action);
    bool ok = placed(r) == 1;
    fx_release(r, NULL, s, c);
    return ok;
}

static void test_a_twenty_percent_buffer_keeps_new_placements_at_80_of_100(void **state)
{
    (void)state;
    assert_true(fits(70, 0.2, 0, CV_PLACE_NEW));  /* 80: the non-buffered capacity */
    assert_false(fits(71, 0.2, 0, CV_PLACE_NEW)); /* 81 */
}

static void test_availability_actions_may_use_the_buffer_up_to_100(void **state)
{
    (void)state;
    cv_place_action_t actions[] = {CV_PLACE_REPLACE, CV_PLACE_UPGRADE, CV_PLACE_FIX,
                                   CV_PLACE_DEFRAG};
    for (size_t i = 0; i < 4; i++) {
        assert_true(fits(90, 0.2, 0, actions[i]));  /* 100: the total capacity */
        assert_false(fits(91, 0.2, 0, actions[i])); /* 101 */
    }
}

static void test_twenty_percent_overbooking_allows_120_for_availability_actions(void **state)
{
    (void)state;
    assert_true(fits(110, 0, 0.2, CV_PLACE_REPLACE));  /* 120: the total capacity */
    assert_false(fits(111, 0, 0.2, CV_PLACE_REPLACE)); /* 121 */
}

static void test_overbooked_capacity_is_not_used_for_new_placements(void **state)
{
    (void)state;
    assert_true(fits(90, 0, 0.2, CV_PLACE_NEW));  /* 100: the non-buffered capacity */
    assert_false(fits(91, 0, 0.2, CV_PLACE_NEW)); /* 101 */
}

static void test_infinite_overbooking_has_no_ceiling_for_availability_actions(void **state)
{
    (void)state;
    assert_true(fits(100000, 0, -1, CV_PLACE_REPLACE));
    assert_false(fits(100000, 0, -1, CV_PLACE_NEW));
}

/* M1 carries the buffer but no weight; M2 the weight: A is the better
 * balanced node but would eat into M1's buffer, B would not. */
static void test_availability_actions_avoid_the_buffer_when_they_can(void **state)
{
    (void)state;
    cv_cluster_t *c = flat("M1,M2", 2, 100, NULL);
    c->metrics[0].buffer = 0.2;
    fx_get(c, "A")->load[0] = 75; /* 85 after: inside the buffer */
    fx_get(c, "B")->load[0] = 50;
    fx_get(c, "B")->load[1] = 50;
    cv_service_t *s = fx_service("svc", 1, false);
    fx_metric(s, "M1", 10, 10, 0.0);
    fx_metric(s, "M2", 1, 1, 1.0);
    json_t *r = place(c, s, CV_PLACE_REPLACE);
    assert_string_equal(fx_nodes(r), "B");
    fx_release(r, NULL, s, c);
}

/* ---------------------------------------------------------------- cluster capacity */

/* The docs: 3 instances of 5 DiskSpaceInMb need 15 units in the cluster. */
static void test_a_service_that_cannot_fit_the_cluster_is_rejected_with_its_shortfall(void **state)
{
    (void)state;
    int64_t loads[] = {5, 5, 6}; /* 5 + 5 + 4 = 14 remain */
    cv_cluster_t *c = flat("DiskSpaceInMb", 3, 10, loads);
    cv_service_t *s = stateless(3, "DiskSpaceInMb", 5);
    json_t *r = place(c, s, CV_PLACE_NEW);
    json_t *rejected = json_object_get(r, "rejected");
    assert_true(json_is_object(rejected));
    assert_int_equal(json_integer_value(
                         json_object_get(json_object_get(rejected, "shortfall"), "DiskSpaceInMb")),
                     1);
    assert_int_equal(placed(r), 0);
    fx_release(r, NULL, s, c);
}

static void test_a_service_that_fits_the_cluster_exactly_is_not_rejected(void **state)
{
    (void)state;
    int64_t loads[] = {5, 5, 5};
    cv_cluster_t *c = flat("DiskSpaceInMb", 3, 10, loads);
    cv_service_t *s = stateless(3, "DiskSpaceInMb", 5);
    json_t *r = place(c, s, CV_PLACE_NEW);
    assert_true(json_is_null(json_object_get(r, "rejected")));
    assert_int_equal(placed(r), 3);
    fx_release(r, NULL, s, c);
}

/* The docs: 15 units as one unit on each of 15 nodes pass the cluster
 * check, yet no node can take an instance of 5. */
static void test_room_scattered_over_nodes_passes_the_cluster_check_only(void **state)
{
    (void)state;
    int64_t loads[15];
    for (size_t i = 0; i < 15; i++)
        loads[i] = 9;
    cv_cluster_t *c = flat("DiskSpaceInMb", 15, 10, loads);
    cv_service_t *s = stateless(3, "DiskSpaceInMb", 5);
    json_t *r = place(c, s, CV_PLACE_NEW);
    assert_true(json_is_null(json_object_get(r, "rejected")));
    assert_int_equal(json_array_size(json_object_get(r, "unplaced")), 3);
    assert_int_equal(strlen(fx_eliminated(r, "NodeCapacity")),
                     strlen("A,B,C,D,E,F,G,H,I,J,K,L,M,N,O"));
    fx_release(r, NULL, s, c);
}

static void test_the_cluster_check_keeps_the_buffer_for_new_services(void **state)
{
    (void)state;
    cv_cluster_t *c = one_node(70, 0.2, 0); /* 10 below the buffer, 30 below capacity */
    cv_service_t *s = stateless(1, "CpuUtilization", 15);
    json_t *r = place(c, s, CV_PLACE_NEW);
    assert_int_equal(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(r, "rejected"), "shortfall"), "CpuUtilization")),
        5);
    json_decref(r);
    r = place(c, s, CV_PLACE_REPLACE);
    assert_true(json_is_null(json_object_get(r, "rejected")));
    fx_release(r, NULL, s, c);
}

static void test_down_nodes_do_not_count_as_cluster_capacity(void **state)
{
    (void)state;
    cv_cluster_t *c = flat("M", 2, 10, NULL);
    fx_get(c, "B")->status = CV_NODE_DOWN;
    cv_service_t *s = stateless(2, "M", 6);
    json_t *r = place(c, s, CV_PLACE_NEW);
    assert_true(json_is_object(json_object_get(r, "rejected")));
    fx_release(r, NULL, s, c);
}

/* ---------------------------------------------------------------- balance */

static void test_a_replica_goes_to_the_least_utilised_node(void **state)
{
    (void)state;
    int64_t loads[] = {50, 20, 30};
    cv_cluster_t *c = flat("M", 3, 100, loads);
    cv_service_t *s = stateless(1, "M", 1);
    json_t *r = place(c, s, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "B");
    fx_release(r, NULL, s, c);
}

static const char *weighted_choice(double w1, double w2)
{
    cv_cluster_t *c = flat("M1,M2", 2, 100, NULL);
    fx_get(c, "A")->load[0] = 10, fx_get(c, "A")->load[1] = 90;
    fx_get(c, "B")->load[0] = 90, fx_get(c, "B")->load[1] = 10;
    cv_service_t *s = fx_service("svc", 1, false);
    fx_metric(s, "M1", 1, 1, w1);
    fx_metric(s, "M2", 1, 1, w2);
    json_t *r = place(c, s, CV_PLACE_NEW);
    static char node[8];
    snprintf(node, sizeof(node), "%s", fx_nodes(r));
    fx_release(r, NULL, s, c);
    return node;
}

static void test_metric_weights_decide_which_metric_is_balanced(void **state)
{
    (void)state;
    assert_string_equal(weighted_choice(1.0, 0.1), "A"); /* high M1, low M2 */
    assert_string_equal(weighted_choice(0.1, 1.0), "B");
}

static void test_services_placed_one_after_another_spread_load_evenly(void **state)
{
    (void)state;
    cv_cluster_t *c = flat("M", 4, 1000, NULL);
    cv_layout_t *l = fx_layout();
    cv_service_t *svcs[20];
    for (size_t i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%02zu", i);
        svcs[i] = stateless(1, "M", 7);
        free(svcs[i]->name);
        svcs[i]->name = strdup(name);
        json_t *r = cv_place(c, svcs[i], l, CV_PLACE_NEW);
        const char *node = fx_nodes(r);
        fx_layout_add(l, c, svcs[i], &node, 1);
        json_decref(r);
    }
    for (size_t n = 0; n < 4; n++)
        assert_int_equal(c->nodes[n].load[0], 35);
    fx_layout_free(l);
    for (size_t i = 0; i < 20; i++)
        fx_service_free(svcs[i]);
    fx_cluster_free(c);
}

/* ---------------------------------------------------------------- capacity as a soft constraint */

static void test_soft_capacity_is_broken_only_when_no_node_fits_and_is_reported(void **state)
{
    (void)state;
    int64_t loads[] = {95, 90};
    cv_cluster_t *c = flat("M", 2, 100, loads);
    c->priorities.capacity = 1;
    cv_service_t *s = stateless(1, "M", 20);
    s->replicas = 1;
    json_t *r = place(c, s, CV_PLACE_REPLACE);
    assert_string_equal(fx_nodes(r), "B");
    assert_int_equal(fx_health(json_object_get(r, "health"), "NodeCapacityViolation", "Warning"),
                     1);
    assert_true(json_array_size(json_object_get(r, "warnings")) == 1);
    json_decref(r);
    fx_get(c, "B")->load[0] = 70;
    r = place(c, s, CV_PLACE_REPLACE);
    assert_string_equal(fx_nodes(r), "B");
    assert_int_equal(json_array_size(json_object_get(r, "health")), 0);
    fx_release(r, NULL, s, c);
}

static void test_a_layout_over_capacity_reports_the_node_and_its_metrics(void **state)
{
    (void)state;
    cv_cluster_t *c = flat("M1,M2", 2, 100, NULL);
    fx_get(c, "A")->load[0] = 130;
    fx_get(c, "A")->load[1] = 101;
    json_t *h = cv_place_check(c, NULL);
    assert_int_equal(fx_health(h, "NodeCapacityViolation", "Error"), 1);
    const char *d = json_string_value(json_object_get(json_array_get(h, 0), "description"));
    assert_non_null(strstr(d, "NodeName -- A"));
    assert_non_null(strstr(d, "M1 (load 130, capacity 100)"));
    assert_non_null(strstr(d, "M2 (load 101, capacity 100)"));
    fx_release(h, NULL, NULL, c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_node_is_never_filled_above_capacity),
        cmocka_unit_test(test_primary_and_secondary_loads_are_checked_separately),
        cmocka_unit_test(test_a_twenty_percent_buffer_keeps_new_placements_at_80_of_100),
        cmocka_unit_test(test_availability_actions_may_use_the_buffer_up_to_100),
        cmocka_unit_test(test_twenty_percent_overbooking_allows_120_for_availability_actions),
        cmocka_unit_test(test_overbooked_capacity_is_not_used_for_new_placements),
        cmocka_unit_test(test_infinite_overbooking_has_no_ceiling_for_availability_actions),
        cmocka_unit_test(test_availability_actions_avoid_the_buffer_when_they_can),
        cmocka_unit_test(test_a_service_that_cannot_fit_the_cluster_is_rejected_with_its_shortfall),
        cmocka_unit_test(test_a_service_that_fits_the_cluster_exactly_is_not_rejected),
        cmocka_unit_test(test_room_scattered_over_nodes_passes_the_cluster_check_only),
        cmocka_unit_test(test_the_cluster_check_keeps_the_buffer_for_new_services),
        cmocka_unit_test(test_down_nodes_do_not_count_as_cluster_capacity),
        cmocka_unit_test(test_a_replica_goes_to_the_least_utilised_node),
        cmocka_unit_test(test_metric_weights_decide_which_metric_is_balanced),
        cmocka_unit_test(test_services_placed_one_after_another_spread_load_evenly),
        cmocka_unit_test(test_soft_capacity_is_broken_only_when_no_node_fits_and_is_reported),
        cmocka_unit_test(test_a_layout_over_capacity_reports_the_node_and_its_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
