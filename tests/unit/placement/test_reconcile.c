/*
 * The live planner (cv_reconcile) on a 9-node cluster after Service
 * Fabric's cluster description docs (3 fault domains x 3 upgrade domains):
 * first placement and its replica specs, a settled service left alone, node
 * loss within and past the grace period (stateful: past the fence time plus
 * the margin), disabled and draining nodes (a draining node hands its
 * stateless replicas over).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_cluster.h"
#include "test_reconcile_fixture.h"

/* Replicas of the plan per fault domain (fd1..fd3) and upgrade domain. */
static void domain_counts(const json_t *plan, int *fd, int *ud)
{
    memset(fd, 0, 3 * sizeof(int));
    memset(ud, 0, 3 * sizeof(int));
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(plan, "placement"), i, e)
    {
        int n = atoi(json_string_value(json_object_get(e, "node")) + 1);
        fd[(n - 1) / 3]++;
        ud[(n - 1) % 3]++;
    }
}

static void assert_spread(const json_t *plan)
{
    int fd[3], ud[3];
    domain_counts(plan, fd, ud);
    for (int k = 0; k < 3; k++) {
        assert_in_range(fd[k], 1, 2);
        assert_in_range(ud[k], 1, 2);
    }
}

static void test_five_replicas_spread_over_the_fault_and_upgrade_domains(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, false);
    json_t *p = rx_plan(m, RX_SVC);
    assert_true(json_is_true(json_object_get(p, "changed")));
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 5);
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 0);
    assert_int_equal(rx_ops(p, "assign"), 5);
    assert_int_equal(rx_ops(p, "unassign"), 0);
    assert_spread(p);
    char seen[10] = {0};
    for (int i = 0; i < 5; i++) {
        int n = atoi(rx_node_of(p, i) + 1);
        assert_false(seen[n]);
        seen[n] = 1;
        char rid[128];
        snprintf(rid, sizeof(rid), "%s/%d/1", RX_SVC, i);
        assert_string_equal(rx_rid_of(p, i), rid);
    }
    assert_true(rx_event(p, "replica web-2.demo placed on "));
    json_decref(p);
    json_decref(m);
}

static void test_an_assignment_carries_the_whole_replica_spec(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    json_t *p = rx_plan(m, RX_SVC);
    json_t *op = json_array_get(json_object_get(p, "ops"), 1);
    json_t *spec = json_object_get(op, "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "rid")),
                        json_string_value(json_object_get(op, "rid")));
    assert_string_equal(json_string_value(json_object_get(spec, "svc")), RX_SVC);
    assert_string_equal(json_string_value(json_object_get(spec, "stack")), "s1");
    assert_string_equal(json_string_value(json_object_get(spec, "stack_name")), "demo");
    assert_string_equal(json_string_value(json_object_get(spec, "service")), "web");
    assert_int_equal(json_integer_value(json_object_get(spec, "index")), 1);
    assert_string_equal(json_string_value(json_object_get(spec, "name")), "web-1.demo");
    assert_string_equal(json_string_value(json_object_get(spec, "role")), "instance");
    assert_false(json_is_true(json_object_get(spec, "stateful")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(spec, "load"), "MemoryMB")),
                     64);
    assert_string_equal(json_string_value(json_object_get(spec, "digest")), "d1");
    assert_non_null(json_object_get(spec, "tasks"));
    assert_non_null(json_object_get(spec, "ports"));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(spec, "restart_policy"), "policy")),
        "Always");
    json_decref(p);
    json_decref(m);
}

static void test_a_settled_service_has_nothing_to_commit(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, false);
    json_decref(rx_round(m, RX_SVC));
    json_t *p = rx_plan(m, RX_SVC);
    assert_false(json_is_true(json_object_get(p, "changed")));
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    assert_int_equal(json_array_size(json_object_get(p, "events")), 0);
    json_decref(p);
    json_decref(m);
}

static void test_a_node_down_within_the_grace_period_keeps_its_replica(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, false);
    json_t *first = rx_round(m, RX_SVC);
    rx_down(m, rx_node_of(first, 2), RX_NOW - 4);
    json_t *p = rx_plan(m, RX_SVC);
    assert_string_equal(rx_node_of(p, 2), rx_node_of(first, 2));
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void
test_a_node_down_past_the_grace_period_loses_its_replica_to_another_domain_node(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, false);
    json_t *first = rx_round(m, RX_SVC);
    char lost[16];
    snprintf(lost, sizeof(lost), "%s", rx_node_of(first, 2));
    rx_down(m, lost, RX_NOW - 6);
    json_t *p = rx_plan(m, RX_SVC);
    assert_string_not_equal(rx_node_of(p, 2), lost);
    assert_int_equal(rx_ops(p, "unassign"), 1);
    assert_int_equal(rx_ops(p, "assign"), 1);
    /* Fault domains are a hard constraint: still 2/2/1. With n9 (fd3, ud3)
     * gone, fd3 holds only ud1 and ud2 nodes, so the soft upgrade-domain
     * spread breaks, and the plan says so. */
    int fd[3], ud[3];
    domain_counts(p, fd, ud);
    for (int k = 0; k < 3; k++)
        assert_in_range(fd[k], 1, 2);
    assert_string_equal(lost, "n9");
    assert_non_null(rx_health(p, "ReplicaConstraintViolation_UpgradeDomain"));
    for (int i = 0; i < 5; i++)
        if (i != 2)
            assert_string_equal(rx_node_of(p, i), rx_node_of(first, i));
    char text[128];
    snprintf(text, sizeof(text), "moved from %s to %s (node %s down for 6 s)", lost,
             rx_node_of(p, 2), lost);
    assert_true(rx_event(p, text));
    char rid[128];
    snprintf(rid, sizeof(rid), "%s/2/2", RX_SVC);
    assert_string_equal(rx_rid_of(p, 2), rid);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_the_grace_period_is_a_cluster_setting(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    json_object_set_new(m, "settings", json_pack("{s:{s:i}}", "live", "downGraceSeconds", 30));
    rx_service(m, RX_SVC, 5, false);
    json_t *first = rx_round(m, RX_SVC);
    rx_down(m, rx_node_of(first, 0), RX_NOW - 20);
    json_t *p = rx_plan(m, RX_SVC);
    assert_string_equal(rx_node_of(p, 0), rx_node_of(first, 0));
    json_decref(p);
    rx_down(m, rx_node_of(first, 0), RX_NOW - 31);
    p = rx_plan(m, RX_SVC);
    assert_string_not_equal(rx_node_of(p, 0), rx_node_of(first, 0));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_stateful_replica_moves_only_after_the_fence_time_and_margin(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, true);
    json_t *first = rx_round(m, RX_SVC);
    char lost[16];
    snprintf(lost, sizeof(lost), "%s", rx_node_of(first, 1));
    /* fence_ms 10000 + 2000 margin: 12 s, past the 5 s grace */
    rx_down(m, lost, RX_NOW - 11);
    json_t *p = rx_plan(m, RX_SVC);
    assert_string_equal(rx_node_of(p, 1), lost);
    json_decref(p);
    rx_down(m, lost, RX_NOW - 12.5);
    p = rx_plan(m, RX_SVC);
    assert_string_not_equal(rx_node_of(p, 1), lost);
    assert_true(rx_event(p, "moved from"));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_replicas_of_an_on_failure_service_stay_on_a_lost_node(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    json_object_set_new(
        json_object_get(json_object_get(rx_spec(m, RX_SVC), "process"), "restart_policy"), "policy",
        json_string("OnFailure"));
    json_t *first = rx_round(m, RX_SVC);
    rx_down(m, rx_node_of(first, 0), RX_NOW - 60);
    json_t *p = rx_plan(m, RX_SVC);
    assert_string_equal(rx_node_of(p, 0), rx_node_of(first, 0));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_disabled_node_keeps_its_replicas_and_takes_no_new_ones(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, false);
    json_t *first = rx_round(m, RX_SVC);
    char holding[16], empty[16] = "";
    snprintf(holding, sizeof(holding), "%s", rx_node_of(first, 0));
    for (int n = 1; n <= 9 && !empty[0]; n++) {
        char name[16];
        snprintf(name, sizeof(name), "n%d", n);
        bool used = false;
        for (int i = 0; i < 5; i++)
            used = used || strcmp(rx_node_of(first, i), name) == 0;
        if (!used)
            snprintf(empty, sizeof(empty), "%s", name);
    }
    json_object_set_new(rx_nodeobj(m, holding), "admin", json_string("disabled"));
    json_object_set_new(rx_nodeobj(m, empty), "admin", json_string("disabled"));
    json_object_set_new(rx_spec(m, RX_SVC), "replicas", json_integer(9));
    json_t *p = rx_plan(m, RX_SVC);
    assert_string_equal(rx_node_of(p, 0), holding);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 8);
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 1);
    for (int i = 0; i < 9; i++)
        assert_string_not_equal(rx_node_of(p, i), empty);
    assert_int_equal(rx_ops(p, "unassign"), 0);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* A stateless replica starts on another node first; the drained one stays
 * assigned until then (test_reconcile_moves.c follows the handover). */
static void test_a_draining_node_hands_its_replicas_over(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, false);
    json_t *first = rx_round(m, RX_SVC);
    char drained[16];
    snprintf(drained, sizeof(drained), "%s", rx_node_of(first, 3));
    json_object_set_new(rx_nodeobj(m, drained), "admin", json_string("draining"));
    json_t *p = rx_plan(m, RX_SVC);
    assert_string_not_equal(rx_node_of(p, 3), drained);
    assert_int_equal(rx_ops(p, "unassign"), 0);
    assert_int_equal(rx_ops(p, "assign"), 1);
    char text[128];
    snprintf(text, sizeof(text), "(drain: node %s draining)", drained);
    assert_true(rx_event(p, text));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_node_back_before_the_grace_period_changes_nothing(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, false);
    json_decref(rx_round(m, RX_SVC));
    rx_down(m, "n1", RX_NOW - 3);
    json_object_set_new(rx_nodeobj(m, "n1"), "alive", json_true());
    json_t *p = rx_plan(m, RX_SVC);
    assert_false(json_is_true(json_object_get(p, "changed")));
    json_decref(p);
    json_decref(m);
}

static void test_a_cluster_file_carries_the_live_settings_checked_by_the_loader(void **state)
{
    (void)state;
    char err[256] = "";
    cv_cluster_t *c = NULL;
    json_t *ok = json_pack("{s:[{s:s}], s:{s:i, s:f}}", "nodes", "name", "a", "live",
                           "downGraceSeconds", 10, "blocklistMinutes", 0.5);
    assert_int_equal(cv_cluster_load(ok, "c.json", &c, err, sizeof(err)), 0);
    cv_cluster_free(c);
    json_t *typo =
        json_pack("{s:[{s:s}], s:{s:i}}", "nodes", "name", "a", "live", "graceSeconds", 10);
    assert_int_not_equal(cv_cluster_load(typo, "c.json", &c, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "c.json: live.graceSeconds: unknown member"));
    json_t *negative =
        json_pack("{s:[{s:s}], s:{s:i}}", "nodes", "name", "a", "live", "downGraceSeconds", -1);
    assert_int_not_equal(cv_cluster_load(negative, "c.json", &c, err, sizeof(err)), 0);
    assert_string_equal(err, "c.json: live.downGraceSeconds: expected a number of 0 or more");
    json_decref(ok);
    json_decref(typo);
    json_decref(negative);
}

static void test_an_unknown_service_is_not_found(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    char err[256] = "";
    cv_reconcile_plan_t plan;
    assert_int_equal(cv_reconcile(m, "nope", &plan, err, sizeof(err)), CV_ENOENT);
    assert_string_equal(err, "service 'nope' is not in the cluster");
    assert_null(plan.svc);
    assert_int_equal(plan.ops.n, 0);
    cv_reconcile_plan_free(&plan);
    json_decref(m);
}

/* The caller tells a service gone from a cluster it cannot plan on by the
 * code, not by the message. */
static void test_a_cluster_that_does_not_load_is_not_a_missing_service(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    json_t *desc = json_object_get(rx_nodeobj(m, "n4"), "description");
    json_object_set_new(desc, "capacities", json_pack("{s:s}", "MemoryMB", "lots"));
    char err[256] = "";
    cv_reconcile_plan_t plan;
    int rc = cv_reconcile(m, RX_SVC, &plan, err, sizeof(err));
    assert_int_equal(rc, CV_EVALIDATE);
    assert_non_null(strstr(err, "MemoryMB"));
    assert_null(plan.svc);
    json_decref(m);
}

/* What the commit does is typed: the assignments to make and the events,
 * one per replica placed, each naming its replica. */
static void test_the_plan_holds_its_operations_and_events_as_structs(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    char err[256] = "";
    cv_reconcile_plan_t plan;
    assert_int_equal(cv_reconcile(m, RX_SVC, &plan, err, sizeof(err)), 0);
    assert_string_equal(plan.svc, RX_SVC);
    assert_string_equal(plan.stack, "s1");
    assert_string_equal(plan.resource, "web");
    assert_int_equal(plan.gen, 0);
    assert_true(plan.changed);
    assert_false(plan.remove || plan.deleting);
    assert_null(plan.rejected);
    assert_null(plan.record.blocked);
    assert_null(plan.record.rollout);
    assert_int_equal(plan.ops.n, 3);
    assert_int_equal(json_array_size(plan.record.placement), 3);
    for (size_t i = 0; i < plan.ops.n; i++) {
        const cv_reconcile_op_t *op = &plan.ops.v[i];
        const json_t *entry = json_array_get(plan.record.placement, i);
        assert_int_equal(op->kind, CV_RECONCILE_ASSIGN);
        assert_string_equal(op->node, json_string_value(json_object_get(entry, "node")));
        assert_string_equal(op->rid, json_string_value(json_object_get(entry, "rid")));
        assert_string_equal(json_string_value(json_object_get(op->spec, "rid")), op->rid);
    }
    assert_int_equal(plan.events.n, 3);
    for (size_t i = 0; i < plan.events.n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "web-%zu.demo", i);
        assert_string_equal(plan.events.v[i].physical_id, name);
        assert_string_equal(plan.events.v[i].action, "PLACE");
        assert_string_equal(plan.events.v[i].status, "COMPLETE");
        assert_non_null(strstr(plan.events.v[i].reason, "placed on"));
    }
    cv_reconcile_plan_free(&plan);
    assert_null(plan.svc);
    assert_int_equal(plan.ops.n, 0);
    json_decref(m);
}

/* The JSON form writes the record's documents as they are, and null for
 * what the record does not hold. */
static void test_the_json_form_writes_the_record_as_it_is(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 2, false);
    char err[256] = "";
    cv_reconcile_plan_t plan;
    assert_int_equal(cv_reconcile(m, RX_SVC, &plan, err, sizeof(err)), 0);
    json_t *p = cv_reconcile_plan_json(&plan);
    char *a = json_dumps(json_object_get(p, "placement"), JSON_COMPACT);
    char *b = json_dumps(plan.record.placement, JSON_COMPACT);
    assert_string_equal(a, b);
    assert_true(json_is_null(json_object_get(p, "blocked")));
    assert_true(json_is_null(json_object_get(p, "moves")));
    assert_string_equal(json_string_value(json_object_get(p, "state")), "active");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(p, "ops"), 0), "op")),
        "assign");
    free(a);
    free(b);
    json_decref(p);
    cv_reconcile_plan_free(&plan);
    json_decref(m);
}

/* A node up whose agent measures more of a metric than its capacity is a
 * Warning; within capacity, or down, it is not. */
static void test_a_measured_load_over_capacity_is_a_node_report(void **state)
{
    (void)state;
    json_t *m = rx_model();
    rx_node(m, "a", "fd1", "ud1", 1000);
    rx_node(m, "b", "fd2", "ud2", 1000);
    rx_node(m, "c", "fd3", "ud3", 1000);
    json_object_set_new(rx_nodeobj(m, "a"), "load", json_pack("{s:i}", "MemoryMB", 1200));
    json_object_set_new(rx_nodeobj(m, "b"), "load", json_string("{\"MemoryMB\": 900}"));
    json_object_set_new(rx_nodeobj(m, "c"), "load", json_pack("{s:i}", "MemoryMB", 5000));
    json_object_set_new(rx_nodeobj(m, "c"), "alive", json_false());
    json_t *r = cv_reconcile_node_reports(m);
    assert_int_equal(json_array_size(r), 1);
    const json_t *a = json_array_get(r, 0);
    assert_string_equal(json_string_value(json_object_get(a, "source")), "System.PLB:a");
    assert_string_equal(json_string_value(json_object_get(a, "property")), "NodeCapacity_MemoryMB");
    assert_string_equal(json_string_value(json_object_get(a, "state")), "Warning");
    assert_non_null(strstr(json_string_value(json_object_get(a, "description")),
                           "uses 1200 of its capacity 1000 of MemoryMB"));
    json_decref(r);
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_five_replicas_spread_over_the_fault_and_upgrade_domains),
        cmocka_unit_test(test_an_assignment_carries_the_whole_replica_spec),
        cmocka_unit_test(test_a_settled_service_has_nothing_to_commit),
        cmocka_unit_test(test_a_node_down_within_the_grace_period_keeps_its_replica),
        cmocka_unit_test(
            test_a_node_down_past_the_grace_period_loses_its_replica_to_another_domain_node),
        cmocka_unit_test(test_the_grace_period_is_a_cluster_setting),
        cmocka_unit_test(test_a_stateful_replica_moves_only_after_the_fence_time_and_margin),
        cmocka_unit_test(test_replicas_of_an_on_failure_service_stay_on_a_lost_node),
        cmocka_unit_test(test_a_disabled_node_keeps_its_replicas_and_takes_no_new_ones),
        cmocka_unit_test(test_a_draining_node_hands_its_replicas_over),
        cmocka_unit_test(test_a_node_back_before_the_grace_period_changes_nothing),
        cmocka_unit_test(test_a_cluster_file_carries_the_live_settings_checked_by_the_loader),
        cmocka_unit_test(test_an_unknown_service_is_not_found),
        cmocka_unit_test(test_a_cluster_that_does_not_load_is_not_a_missing_service),
        cmocka_unit_test(test_the_plan_holds_its_operations_and_events_as_structs),
        cmocka_unit_test(test_the_json_form_writes_the_record_as_it_is),
        cmocka_unit_test(test_a_measured_load_over_capacity_is_a_node_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
