/*
 * Specification of the health reports of a layout: Service Fabric's
 * System.PLB reports with their fields and property names, Error for a
 * broken hard constraint and Warning for a soft one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_place_fixture.h"

static const char *const grid[] = {"N1 fd:/FD0 UD0", "N2 fd:/FD1 UD1", "N3 fd:/FD2 UD2",
                                   "N4 fd:/FD3 UD3", "N5 fd:/FD4 UD4", "N6 fd:/FD0 UD1"};

typedef struct world {
    cv_cluster_t *c;
    cv_layout_t *l;
    cv_service_t *s[2];
} world_t;

static int setup(void **state)
{
    world_t *w = calloc(1, sizeof(*w));
    w->c = fx_grid(grid, 6);
    w->l = fx_layout();
    const char *racks[] = {"r1", "r1", "r2", "r2", "r3", "r3"};
    for (size_t i = 0; i < 6; i++) {
        json_object_set_new(w->c->nodes[i].props, "rack", json_string(racks[i]));
        json_object_set_new(w->c->nodes[i].props, "Color", json_string(i < 3 ? "blue" : "red"));
    }
    w->s[0] = fx_service("svc", 3, true);
    w->s[0]->distribution = CV_DIST_MAX_DIFFERENCE;
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world_t *w = *state;
    fx_layout_free(w->l);
    fx_service_free(w->s[0]);
    fx_service_free(w->s[1]);
    fx_cluster_free(w->c);
    free(w);
    return 0;
}

static json_t *check(world_t *w, size_t si, const char *const *nodes, size_t n)
{
    fx_layout_add(w->l, w->c, w->s[si], nodes, n);
    return cv_place_check(w->c, w->l);
}

static const char *description(const json_t *h, size_t i)
{
    return json_string_value(json_object_get(json_array_get(h, i), "description"));
}

/* Whether some report has `property` and a description containing `text`. */
static bool has_report(const json_t *h, const char *property, const char *text)
{
    size_t i;
    json_t *r;
    json_array_foreach(h, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "property")), property) == 0 &&
            strstr(json_string_value(json_object_get(r, "description")), text))
            return true;
    }
    return false;
}

static void test_a_clean_layout_has_no_health_reports(void **state)
{
    world_t *w = *state;
    static const char *const at[] = {"N1", "N2", "N3"};
    json_t *h = check(w, 0, at, 3);
    assert_int_equal(json_array_size(h), 0);
    json_decref(h);
}

static void test_a_report_carries_the_service_fabric_fields(void **state)
{
    world_t *w = *state;
    static const char *const at[] = {"N1", "N1", "N3"};
    json_t *h = check(w, 0, at, 3);
    json_t *r = json_array_get(h, 0);
    assert_int_equal(json_object_size(r), 6);
    assert_string_equal(json_string_value(json_object_get(r, "source")), "System.PLB");
    assert_string_equal(json_string_value(json_object_get(r, "property")),
                        "ReplicaConstraintViolation_ReplicaExclusionStatic");
    assert_string_equal(json_string_value(json_object_get(r, "state")), "Error");
    assert_string_equal(json_string_value(json_object_get(r, "timeToLive")), "00:01:05");
    assert_true(json_is_true(json_object_get(r, "removeWhenExpired")));
    assert_non_null(strstr(description(h, 0), "svc Secondary Replica 1"));
    json_decref(h);
}

static void test_a_replica_outside_its_hard_placement_constraint_is_an_error(void **state)
{
    world_t *w = *state;
    fx_placement(w->s[0], "Color == blue");
    static const char *const at[] = {"N1", "N2", "N4"};
    json_t *h = check(w, 0, at, 3);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_PlacementConstraint", "Error"), 1);
    assert_non_null(
        strstr(description(h, 0), "NodeName -- N4, PlacementConstraint -- Color == blue"));
    json_decref(h);
}

static void test_a_replica_outside_its_soft_placement_constraint_is_a_warning(void **state)
{
    world_t *w = *state;
    w->c->priorities.placement = 1;
    fx_placement(w->s[0], "Color == blue");
    static const char *const at[] = {"N1", "N2", "N4"};
    json_t *h = check(w, 0, at, 3);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_PlacementConstraint", "Warning"), 1);
    json_decref(h);
}

static void test_a_replica_away_from_its_affinity_parent_is_reported(void **state)
{
    world_t *w = *state;
    static const char *const parent_at[] = {"N1", "N2", "N3"};
    fx_layout_add(w->l, w->c, w->s[0], parent_at, 3);
    w->s[1] = fx_service("child", 2, false);
    w->s[1]->affinity_service = strdup("svc");
    static const char *const at[] = {"N2", "N5"};
    json_t *h = check(w, 1, at, 2);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_Affinity", "Error"), 1);
    assert_non_null(strstr(description(h, 0), "child Instance Replica 1"));
    json_decref(h);
}

static void test_a_broken_mesos_constraint_is_a_placement_constraint_violation(void **state)
{
    world_t *w = *state;
    fx_mesos(w->s[0], "[\"rack\", \"UNIQUE\"]");
    static const char *const at[] = {"N1", "N2", "N3"}; /* N1 and N2 share rack r1 */
    json_t *h = check(w, 0, at, 3);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_PlacementConstraint", "Error"), 2);
    assert_non_null(strstr(description(h, 0), "rack UNIQUE"));
    json_decref(h);
}

static void test_the_upgrade_domain_report_reads_like_the_seed(void **state)
{
    world_t *w = *state;
    w->s[0]->replicas = 5;
    static const char *const at[] = {"N6", "N2", "N3", "N4", "N5"};
    json_t *h = check(w, 0, at, 5);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_UpgradeDomain", "Warning"), 1);
    assert_non_null(
        strstr(description(h, 0),
               "is violating the Constraint: UpgradeDomain Details: UpgradeDomain ID -- "
               "UD1, Replica on NodeName -- N2 Currently Upgrading -- false "
               "Distribution Policy -- Packing"));
    json_decref(h);
}

static void test_a_disabled_domain_constraint_is_not_checked(void **state)
{
    world_t *w = *state;
    w->c->priorities.fault_domain = -1;
    w->s[0]->replicas = 5;
    static const char *const at[] = {"N1", "N3", "N4", "N5", "N6"}; /* FD0 holds two */
    json_t *h = check(w, 0, at, 5);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_FaultDomain", NULL), 0);
    json_decref(h);
}

static void test_every_service_of_a_layout_is_checked(void **state)
{
    world_t *w = *state;
    static const char *const first[] = {"N1", "N1", "N2"};
    fx_layout_add(w->l, w->c, w->s[0], first, 3);
    w->s[1] = fx_service("other", 2, false);
    static const char *const second[] = {"N4", "N4"};
    json_t *h = check(w, 1, second, 2);
    assert_int_equal(fx_health(h, "ReplicaConstraintViolation_ReplicaExclusionStatic", "Error"), 2);
    assert_true(has_report(h, "ReplicaConstraintViolation_ReplicaExclusionStatic",
                           "svc Secondary Replica 1"));
    assert_true(has_report(h, "ReplicaConstraintViolation_ReplicaExclusionStatic",
                           "other Instance Replica 1"));
    json_decref(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_clean_layout_has_no_health_reports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_report_carries_the_service_fabric_fields, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_replica_outside_its_hard_placement_constraint_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_replica_outside_its_soft_placement_constraint_is_a_warning, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_replica_away_from_its_affinity_parent_is_reported,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_broken_mesos_constraint_is_a_placement_constraint_violation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_upgrade_domain_report_reads_like_the_seed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_disabled_domain_constraint_is_not_checked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_every_service_of_a_layout_is_checked, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
