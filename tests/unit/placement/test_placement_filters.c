/*
 * Specification of the filter pipeline: replica exclusion, node status,
 * placement constraints, Mesos constraints with the context of the replicas
 * already placed, affinity, constraint priorities, the elimination
 * sequence, existing replicas, the result's shape and determinism.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_place_fixture.h"

/* Nodes A, B, C... each its own FD and UD, with property rack = racks[i]. */
static cv_cluster_t *nodes(size_t n, const char *const *racks)
{
    cv_cluster_t *c = fx_lettered("M", n, 100);
    for (size_t i = 0; racks && i < n; i++)
        json_object_set_new(c->nodes[i].props, "rack", json_string(racks[i]));
    return c;
}

static char *dump(const json_t *j)
{
    return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
}

static void assert_sequence(const json_t *r, const char *expected)
{
    json_t *first = json_array_get(json_object_get(r, "unplaced"), 0);
    char *got = dump(json_object_get(first, "eliminationSequence"));
    assert_string_equal(got, expected);
    free(got);
}

/* ---------------------------------------------------------------- exclusion and status */

static void test_two_replicas_of_a_service_never_share_a_node(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(3, NULL);
    cv_service_t *s = fx_service("svc", 4, false);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "A,B,C");
    json_t *un = json_array_get(json_object_get(r, "unplaced"), 0);
    assert_int_equal(json_integer_value(json_object_get(un, "replica")), 3);
    assert_sequence(r, "[{\"constraint\":\"NodeStatus\",\"eliminated\":[]},"
                       "{\"constraint\":\"ReplicaExclusion\",\"eliminated\":[\"A\",\"B\",\"C\"]},"
                       "{\"constraint\":\"FaultDomain\",\"eliminated\":[]},"
                       "{\"constraint\":\"UpgradeDomain\",\"eliminated\":[]}]");
    fx_release(r, NULL, s, c);
}

static void test_down_and_disabled_nodes_are_not_candidates(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(3, NULL);
    fx_get(c, "A")->status = CV_NODE_DOWN;
    fx_get(c, "B")->status = CV_NODE_DISABLED;
    cv_service_t *s = fx_service("svc", 2, false);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "C");
    assert_string_equal(fx_eliminated(r, "NodeStatus"), "A,B");
    fx_release(r, NULL, s, c);
}

/* ---------------------------------------------------------------- placement constraints */

/* The NodeType01 of Service Fabric's cluster description docs: HasSSD true,
 * NodeColor green, SomeProperty 5. */
static cv_cluster_t *seed_types(void)
{
    cv_cluster_t *c = nodes(3, NULL);
    json_t *p = fx_get(c, "A")->props;
    json_object_set_new(p, "HasSSD", json_true());
    json_object_set_new(p, "NodeColor", json_string("green"));
    json_object_set_new(p, "SomeProperty", json_integer(5));
    p = fx_get(c, "B")->props;
    json_object_set_new(p, "HasSSD", json_false());
    json_object_set_new(p, "SomeProperty", json_integer(5));
    json_object_set_new(fx_get(c, "C")->props, "HasSSD", json_true()); /* no SomeProperty */
    return c;
}

static void test_the_placement_constraint_selects_nodes_by_property(void **state)
{
    (void)state;
    cv_cluster_t *c = seed_types();
    cv_service_t *s = fx_service("svc", 3, true);
    fx_placement(s, "(HasSSD == true && SomeProperty >= 4)");
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "A");
    assert_string_equal(fx_eliminated(r, "PlacementConstraint"), "B,C");
    fx_release(r, NULL, s, c);
}

static void test_a_node_lacking_a_property_never_matches(void **state)
{
    (void)state;
    cv_cluster_t *c = seed_types();
    cv_service_t *s = fx_service("svc", 1, false);
    fx_placement(s, "SomeProperty != 7");
    fx_get(c, "A")->status = CV_NODE_DOWN;
    fx_get(c, "B")->status = CV_NODE_DOWN;
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_int_equal(json_array_size(json_object_get(r, "placements")), 0);
    assert_string_equal(fx_eliminated(r, "PlacementConstraint"), "C");
    fx_release(r, NULL, s, c);
}

static void test_the_built_in_node_type_property_can_be_constrained(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(3, NULL);
    fx_type(fx_get(c, "B"), "NodeType03");
    cv_service_t *s = fx_service("svc", 1, false);
    fx_placement(s, "(NodeType == NodeType03)");
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "B");
    fx_release(r, NULL, s, c);
}

/* ---------------------------------------------------------------- the elimination sequence */

static void test_the_elimination_sequence_names_each_constraint_in_order(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(5, NULL);
    fx_get(c, "A")->status = CV_NODE_DOWN;
    json_object_set_new(fx_get(c, "B")->props, "Color", json_string("red"));
    json_object_set_new(fx_get(c, "C")->props, "Color", json_string("blue"));
    json_object_set_new(fx_get(c, "D")->props, "Color", json_string("blue"));
    json_object_set_new(fx_get(c, "E")->props, "Color", json_string("blue"));
    fx_get(c, "C")->load[0] = 99;
    cv_service_t *s = fx_service("svc", 2, false);
    fx_placement(s, "Color == blue");
    fx_metric(s, "M", 5, 5, 1.0);
    static const char *const had[] = {"E"};
    cv_layout_t *l = fx_layout();
    fx_layout_add(l, c, s, had, 1);
    fx_get(c, "D")->load[0] = 99; /* D full as well: nothing is left */
    json_t *r = cv_place(c, s, l, CV_PLACE_NEW);
    assert_sequence(r, "[{\"constraint\":\"NodeStatus\",\"eliminated\":[\"A\"]},"
                       "{\"constraint\":\"ReplicaExclusion\",\"eliminated\":[\"E\"]},"
                       "{\"constraint\":\"PlacementConstraint\",\"eliminated\":[\"B\"]},"
                       "{\"constraint\":\"NodeCapacity\",\"eliminated\":[\"C\",\"D\"]},"
                       "{\"constraint\":\"FaultDomain\",\"eliminated\":[]},"
                       "{\"constraint\":\"UpgradeDomain\",\"eliminated\":[]}]");
    assert_int_equal(
        fx_health(json_object_get(r, "health"), "ServiceReplicaUnplacedHealth_Instance", "Warning"),
        1);
    fx_release(r, l, s, c);
}

/* ---------------------------------------------------------------- Mesos constraints */

static const char *const racks[] = {"r1", "r1", "r2", "r2", "r3"};

static json_t *place_mesos(cv_cluster_t *c, int replicas, const char *spec)
{
    cv_service_t *s = fx_service("svc", replicas, false);
    fx_mesos(s, spec);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    fx_service_free(s);
    return r;
}

static void test_unique_allows_one_replica_per_attribute_value(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(5, racks);
    json_t *r = place_mesos(c, 4, "[\"rack\", \"UNIQUE\"]");
    assert_string_equal(fx_nodes(r), "A,C,E");
    assert_string_equal(fx_eliminated(r, "MesosConstraint"), "B,D");
    fx_release(r, NULL, NULL, c);
}

static void test_maxper_allows_n_replicas_per_attribute_value(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(5, racks);
    fx_get(c, "E")->status = CV_NODE_DOWN;
    json_t *r = place_mesos(c, 4, "[\"rack\", \"MAXPER\", 1]");
    assert_int_equal(json_array_size(json_object_get(r, "placements")), 2);
    json_decref(r);
    r = place_mesos(c, 4, "[\"rack\", \"MAXPER\", 2]");
    assert_int_equal(json_array_size(json_object_get(r, "placements")), 4);
    fx_release(r, NULL, NULL, c);
}

static void test_cluster_limits_replicas_to_a_set_of_values(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(5, racks);
    json_t *r = place_mesos(c, 2, "[\"rack\", \"CLUSTER\", [\"r2\", \"r3\"]]");
    assert_string_equal(fx_nodes(r), "C,D");
    fx_release(r, NULL, NULL, c);
}

static void test_and_combines_mesos_constraints(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(5, racks);
    json_t *r =
        place_mesos(c, 3, "{\"and\": [[\"rack\", \"UNIQUE\"], [\"rack\", \"LIKE\", \"r[12]\"]]}");
    assert_string_equal(fx_nodes(r), "A,C");
    fx_release(r, NULL, NULL, c);
}

/* ---------------------------------------------------------------- affinity */

static void test_affinity_places_replicas_with_the_parent_service(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(5, NULL);
    cv_service_t *parent = fx_service("parent", 2, false);
    static const char *const at[] = {"B", "D"};
    cv_layout_t *l = fx_layout();
    fx_layout_add(l, c, parent, at, 2);
    cv_service_t *child = fx_service("child", 3, false);
    child->affinity_service = strdup("parent");
    json_t *r = cv_place(c, child, l, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "B,D");
    assert_string_equal(fx_eliminated(r, "Affinity"), "A,C,E");
    json_decref(r);
    fx_layout_free(l);
    fx_service_free(parent);
    fx_service_free(child);
    fx_cluster_free(c);
}

static void test_affinity_to_an_unplaced_parent_places_nothing(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(3, NULL);
    cv_service_t *child = fx_service("child", 1, false);
    child->affinity_service = strdup("parent");
    json_t *r = cv_place(c, child, NULL, CV_PLACE_NEW);
    assert_int_equal(json_array_size(json_object_get(r, "placements")), 0);
    assert_string_equal(fx_eliminated(r, "Affinity"), "A,B,C");
    fx_release(r, NULL, child, c);
}

/* ---------------------------------------------------------------- priorities */

static json_t *place_blue(cv_cluster_t *c, int priority, int replicas)
{
    c->priorities.placement = priority;
    cv_service_t *s = fx_service("svc", replicas, false);
    fx_placement(s, "Color == blue");
    fx_metric(s, "M", 1, 1, 1.0);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    fx_service_free(s);
    return r;
}

static cv_cluster_t *red_and_blue(const char *blue_node)
{
    cv_cluster_t *c = nodes(2, NULL);
    fx_get(c, "A")->load[0] = 10;
    json_object_set_new(fx_get(c, "A")->props, "Color", json_string("red"));
    json_object_set_new(fx_get(c, "B")->props, "Color", json_string("red"));
    if (blue_node)
        json_object_set_new(fx_get(c, blue_node)->props, "Color", json_string("blue"));
    fx_get(c, "B")->load[0] = 50;
    return c;
}

static void test_a_hard_constraint_is_never_broken(void **state)
{
    (void)state;
    cv_cluster_t *c = red_and_blue(NULL);
    json_t *r = place_blue(c, 0, 1);
    assert_int_equal(json_array_size(json_object_get(r, "placements")), 0);
    assert_string_equal(fx_eliminated(r, "PlacementConstraint"), "A,B");
    fx_release(r, NULL, NULL, c);
}

static void test_a_soft_constraint_is_broken_only_when_no_node_satisfies_it(void **state)
{
    (void)state;
    cv_cluster_t *c = red_and_blue(NULL);
    json_t *r = place_blue(c, 1, 1);
    assert_string_equal(fx_nodes(r), "A");
    assert_int_equal(fx_health(json_object_get(r, "health"),
                               "ReplicaConstraintViolation_PlacementConstraint", "Warning"),
                     1);
    assert_non_null(strstr(json_string_value(json_array_get(json_object_get(r, "warnings"), 0)),
                           "PlacementConstraint (soft)"));
    fx_release(r, NULL, NULL, c);
    c = red_and_blue("B"); /* B satisfies it, although more loaded */
    r = place_blue(c, 1, 1);
    assert_string_equal(fx_nodes(r), "B");
    assert_int_equal(json_array_size(json_object_get(r, "health")), 0);
    fx_release(r, NULL, NULL, c);
}

static void test_an_optimization_constraint_only_steers_the_choice(void **state)
{
    (void)state;
    cv_cluster_t *c = red_and_blue("B");
    json_t *r = place_blue(c, 2, 1);
    assert_string_equal(fx_nodes(r), "B");
    fx_release(r, NULL, NULL, c);
    c = red_and_blue(NULL);
    r = place_blue(c, 2, 1);
    assert_string_equal(fx_nodes(r), "A");
    assert_int_equal(json_array_size(json_object_get(r, "health")), 0);
    assert_int_equal(json_array_size(json_object_get(r, "warnings")), 0);
    fx_release(r, NULL, NULL, c);
}

static void test_a_disabled_constraint_is_skipped(void **state)
{
    (void)state;
    cv_cluster_t *c = red_and_blue("B");
    json_t *r = place_blue(c, -1, 3);
    assert_string_equal(fx_nodes(r), "A,B");
    assert_null(fx_eliminated(r, "PlacementConstraint"));
    fx_release(r, NULL, NULL, c);
}

/* ---------------------------------------------------------------- the result */

/* Nodes A, B, C and a stateful service of 3 whose replica `index` the layout
 * has on C, placed again to replace the others. */
static json_t *replace_beside_c(int index, cv_cluster_t **c, cv_service_t **s, cv_layout_t **l)
{
    static const char *const had[] = {"C"};
    *c = nodes(3, NULL);
    *s = fx_service("svc", 3, true);
    *l = fx_layout();
    fx_layout_add(*l, *c, *s, had, 1);
    (*l)->services[0].replicas[0].index = index;
    return cv_place(*c, *s, *l, CV_PLACE_REPLACE);
}

static void test_existing_replicas_are_kept_and_reported(void **state)
{
    (void)state;
    cv_cluster_t *c;
    cv_service_t *s;
    cv_layout_t *l;
    json_t *r = replace_beside_c(0, &c, &s, &l);
    assert_string_equal(fx_nodes(r), "C,A,B");
    json_t *p = json_object_get(r, "placements");
    assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "role")),
                        "primary");
    assert_string_equal(json_string_value(json_object_get(json_array_get(p, 1), "role")),
                        "secondary");
    fx_release(r, l, s, c);
}

static void test_a_service_keeps_one_primary_when_the_layout_already_has_one(void **state)
{
    (void)state;
    cv_cluster_t *c;
    cv_service_t *s;
    cv_layout_t *l;
    json_t *r = replace_beside_c(1, &c, &s, &l); /* replica 1 was promoted */
    json_t *p = json_object_get(r, "placements");
    assert_int_equal(json_array_size(p), 3);
    size_t primaries = 0, i;
    json_t *e;
    json_array_foreach(p, i, e)
    {
        primaries += strcmp(json_string_value(json_object_get(e, "role")), "primary") == 0;
    }
    assert_int_equal(primaries, 1);
    fx_release(r, l, s, c);
}

static void test_the_result_has_exactly_the_documented_fields(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(2, NULL);
    cv_service_t *s = fx_service("svc", 1, false);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    char *got = dump(r);
    assert_string_equal(got, "{\"health\":[],\"placements\":[{\"node\":\"A\",\"replica\":0,"
                             "\"role\":\"instance\"}],\"policy\":\"maxDifference\",\"rejected\":"
                             "null,\"service\":\"svc\",\"unplaced\":[],\"warnings\":[]}");
    free(got);
    fx_release(r, NULL, s, c);
}

static void test_the_cluster_manifest_warnings_are_passed_on(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(2, NULL);
    cv_vec_push(&c->warnings, strdup("unbalanced fault domain tree"));
    cv_service_t *s = fx_service("svc", 1, false);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(json_string_value(json_array_get(json_object_get(r, "warnings"), 0)),
                        "unbalanced fault domain tree");
    fx_release(r, NULL, s, c);
}

static void test_ties_are_broken_by_node_name(void **state)
{
    (void)state;
    static const char *const rows[] = {"zeta fd:/a U1", "alpha fd:/b U2", "mid fd:/c U3"};
    cv_cluster_t *c = fx_grid(rows, 3);
    cv_service_t *s = fx_service("svc", 1, false);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "alpha");
    fx_release(r, NULL, s, c);
}

static void test_the_same_input_gives_the_same_output(void **state)
{
    (void)state;
    cv_cluster_t *c = fx_cluster("M");
    for (int i = 0; i < 60; i++) {
        char name[16], fd[32], ud[16];
        snprintf(name, sizeof(name), "n%02d", (i * 37) % 60);
        snprintf(fd, sizeof(fd), "fd:/dc%d/r%d", i % 3, i % 4);
        snprintf(ud, sizeof(ud), "UD%d", i % 5);
        cv_node_t *n = fx_node(c, name, fd, ud);
        n->capacity[0] = 100;
        n->load[0] = (i * 13) % 40;
        json_object_set_new(n->props, "Color", json_string(i % 2 ? "blue" : "red"));
    }
    fx_done(c);
    cv_service_t *s = fx_service("svc", 5, true);
    fx_placement(s, "Color == blue");
    fx_metric(s, "M", 10, 3, 1.0);
    json_t *a = cv_place(c, s, NULL, CV_PLACE_NEW), *b = cv_place(c, s, NULL, CV_PLACE_NEW);
    char *da = dump(a), *db = dump(b);
    assert_string_equal(da, db);
    assert_int_equal(json_array_size(json_object_get(a, "placements")), 5);
    free(da);
    free(db);
    json_decref(a);
    fx_release(b, NULL, s, c);
}

static void test_an_empty_cluster_places_nothing_and_says_so(void **state)
{
    (void)state;
    cv_cluster_t *c = fx_cluster(NULL);
    cv_service_t *s = fx_service("svc", 2, true);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_int_equal(json_array_size(json_object_get(r, "placements")), 0);
    assert_int_equal(json_array_size(json_object_get(r, "unplaced")), 2);
    assert_string_equal(fx_eliminated(r, "ReplicaExclusion"), "");
    fx_release(r, NULL, s, c);
}

static void test_a_metric_unknown_to_the_cluster_neither_limits_nor_rejects(void **state)
{
    (void)state;
    cv_cluster_t *c = nodes(2, NULL);
    cv_service_t *s = fx_service("svc", 2, false);
    fx_metric(s, "Unknown", 1000000, 1000000, 1.0);
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "A,B");
    assert_true(json_is_null(json_object_get(r, "rejected")));
    fx_release(r, NULL, s, c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_replicas_of_a_service_never_share_a_node),
        cmocka_unit_test(test_down_and_disabled_nodes_are_not_candidates),
        cmocka_unit_test(test_the_placement_constraint_selects_nodes_by_property),
        cmocka_unit_test(test_a_node_lacking_a_property_never_matches),
        cmocka_unit_test(test_the_built_in_node_type_property_can_be_constrained),
        cmocka_unit_test(test_the_elimination_sequence_names_each_constraint_in_order),
        cmocka_unit_test(test_unique_allows_one_replica_per_attribute_value),
        cmocka_unit_test(test_maxper_allows_n_replicas_per_attribute_value),
        cmocka_unit_test(test_cluster_limits_replicas_to_a_set_of_values),
        cmocka_unit_test(test_and_combines_mesos_constraints),
        cmocka_unit_test(test_affinity_places_replicas_with_the_parent_service),
        cmocka_unit_test(test_affinity_to_an_unplaced_parent_places_nothing),
        cmocka_unit_test(test_a_hard_constraint_is_never_broken),
        cmocka_unit_test(test_a_soft_constraint_is_broken_only_when_no_node_satisfies_it),
        cmocka_unit_test(test_an_optimization_constraint_only_steers_the_choice),
        cmocka_unit_test(test_a_disabled_constraint_is_skipped),
        cmocka_unit_test(test_existing_replicas_are_kept_and_reported),
        cmocka_unit_test(test_a_service_keeps_one_primary_when_the_layout_already_has_one),
        cmocka_unit_test(test_the_result_has_exactly_the_documented_fields),
        cmocka_unit_test(test_the_cluster_manifest_warnings_are_passed_on),
        cmocka_unit_test(test_ties_are_broken_by_node_name),
        cmocka_unit_test(test_the_same_input_gives_the_same_output),
        cmocka_unit_test(test_an_empty_cluster_places_nothing_and_says_so),
        cmocka_unit_test(test_a_metric_unknown_to_the_cluster_neither_limits_nor_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
