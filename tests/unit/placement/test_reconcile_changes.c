/*
 * The live planner (cv_reconcile) when something changes: scale up and
 * down, a changed placement constraint (exactly the violators move), a
 * changed process digest, a replica the restart policy gave up on (moved,
 * node blocklisted, all nodes blocklisted), capacity (waiting with the
 * elimination sequence, placed once a node joins; rejection with the
 * shortfall), a service deleted, a spec that does not load.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_reconcile_fixture.h"

static void set_replicas(json_t *m, int n)
{
    json_object_set_new(rx_spec(m, RX_SVC), "replicas", json_integer(n));
}

/* ---------------------------------------------------------------- scale */

static void test_scale_up_keeps_every_replica_and_places_the_new_indexes(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    json_t *first = rx_round(m, RX_SVC);
    set_replicas(m, 5);
    json_t *p = rx_plan(m, RX_SVC);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 5);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(rx_node_of(p, i), rx_node_of(first, i));
        assert_string_equal(rx_rid_of(p, i), rx_rid_of(first, i));
    }
    assert_int_equal(rx_ops(p, "assign"), 2);
    assert_int_equal(rx_ops(p, "unassign"), 0);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_scale_down_removes_the_highest_indexes(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, true);
    json_t *first = rx_round(m, RX_SVC);
    set_replicas(m, 3);
    json_t *p = rx_plan(m, RX_SVC);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(rx_rid_of(p, i), rx_rid_of(first, i));
    assert_int_equal(rx_ops(p, "unassign"), 2);
    assert_int_equal(rx_ops(p, "assign"), 0);
    size_t i;
    json_t *op;
    json_array_foreach(json_object_get(p, "ops"), i, op)
    {
        const char *rid = json_string_value(json_object_get(op, "rid"));
        assert_true(strcmp(rid, rx_rid_of(first, 3)) == 0 || strcmp(rid, rx_rid_of(first, 4)) == 0);
    }
    char text[64];
    snprintf(text, sizeof(text), "replica web-4.demo removed from %s (scale down)",
             rx_node_of(first, 4));
    assert_true(rx_event(p, text));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* ---------------------------------------------------------------- changed specs */

static void test_a_changed_placement_constraint_moves_exactly_the_violators(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, false);
    json_t *first = rx_round(m, RX_SVC);
    json_object_set_new(rx_spec(m, RX_SVC), "placementConstraints", json_string("zone != fd1"));
    json_t *p = rx_plan(m, RX_SVC);
    size_t moved = 0;
    for (int i = 0; i < 5; i++) {
        int before = atoi(rx_node_of(first, i) + 1), after = atoi(rx_node_of(p, i) + 1);
        assert_true(after > 3); /* no replica left in fd1 (n1..n3) */
        if (before > 3)
            assert_string_equal(rx_rid_of(p, i), rx_rid_of(first, i));
        else
            moved++;
    }
    assert_true(moved > 0);
    assert_int_equal(rx_ops(p, "unassign"), moved);
    assert_int_equal(rx_ops(p, "assign"), moved);
    assert_true(rx_event(p, "(placement constraint 'zone != fd1' no longer holds on node n"));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_changed_mesos_constraint_keeps_the_lowest_index_of_a_conflict(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    const char *name;
    json_t *n;
    json_object_foreach(json_object_get(m, "nodes"), name, n)
    {
        json_object_set_new(json_object_get(json_object_get(n, "description"), "properties"),
                            "rack", json_string("r1"));
    }
    rx_service(m, RX_SVC, 3, false);
    json_t *first = rx_round(m, RX_SVC);
    json_object_set_new(rx_spec(m, RX_SVC), "constraints",
                        json_pack("[s, s, i]", "rack", "MAXPER", 1));
    json_t *p = rx_plan(m, RX_SVC);
    /* one rack for every node: index 0 stays, 1 and 2 break MAXPER and
     * have nowhere else to go */
    assert_string_equal(rx_rid_of(p, 0), rx_rid_of(first, 0));
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 1);
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 2);
    assert_int_equal(rx_ops(p, "unassign"), 2);
    assert_true(rx_event(p, "(constraint 'rack MAXPER"));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_changed_process_digest_gives_every_replica_a_new_rid(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    json_t *first = rx_round(m, RX_SVC);
    json_object_set_new(json_object_get(rx_spec(m, RX_SVC), "process"), "digest",
                        json_string("d2"));
    json_t *p = rx_plan(m, RX_SVC);
    assert_int_equal(rx_ops(p, "unassign"), 3);
    assert_int_equal(rx_ops(p, "assign"), 3);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(rx_node_of(p, i), rx_node_of(first, i));
        char rid[128];
        snprintf(rid, sizeof(rid), "%s/%d/2", RX_SVC, i);
        assert_string_equal(rx_rid_of(p, i), rid);
    }
    assert_true(rx_event(p, "(process spec changed)"));
    json_t *spec = json_object_get(json_array_get(json_object_get(p, "ops"), 3), "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "digest")), "d2");
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* ---------------------------------------------------------------- stateful: never twice */

/* The agent of the replica's node reports it in `state`. */
static void report_state(json_t *m, const json_t *plan, int index, const char *state)
{
    json_t *report = json_object_get(rx_nodeobj(m, rx_node_of(plan, index)), "report");
    json_object_set_new(report, rx_rid_of(plan, index),
                        json_pack("{s:s, s:s}", "rid", rx_rid_of(plan, index), "state", state));
}

static void test_a_stateful_replica_leaving_a_live_node_starts_elsewhere_once_stopped(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, true);
    json_t *first = rx_round(m, RX_SVC);
    for (int i = 0; i < 3; i++)
        report_state(m, first, i, "healthy");
    char drained[16];
    snprintf(drained, sizeof(drained), "%s", rx_node_of(first, 1));
    json_object_set_new(rx_nodeobj(m, drained), "admin", json_string("draining"));
    json_t *p = rx_round(m, RX_SVC);
    assert_int_equal(rx_ops(p, "unassign"), 1);
    assert_int_equal(rx_ops(p, "assign"), 0);
    json_t *u = json_array_get(json_object_get(p, "unplaced"), 0);
    assert_int_equal(json_integer_value(json_object_get(u, "index")), 1);
    json_t *step = json_array_get(json_object_get(u, "eliminationSequence"), 0);
    assert_string_equal(json_string_value(json_object_get(step, "constraint")), "StatefulFence");
    assert_true(rx_event(p, "is still healthy on"));
    json_decref(p);
    /* still stopping: still held */
    report_state(m, first, 1, "stopping");
    p = rx_plan(m, RX_SVC);
    assert_int_equal(rx_ops(p, "assign"), 0);
    json_decref(p);
    report_state(m, first, 1, "stopped");
    p = rx_plan(m, RX_SVC);
    assert_int_equal(rx_ops(p, "assign"), 1);
    assert_string_not_equal(rx_node_of(p, 1), drained);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_stateful_digest_change_restarts_each_index_only_after_it_stopped(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 2, true);
    json_t *first = rx_round(m, RX_SVC);
    for (int i = 0; i < 2; i++)
        report_state(m, first, i, "running");
    json_object_set_new(json_object_get(rx_spec(m, RX_SVC), "process"), "digest",
                        json_string("d2"));
    json_t *p = rx_round(m, RX_SVC);
    assert_int_equal(rx_ops(p, "unassign"), 2);
    assert_int_equal(rx_ops(p, "assign"), 0);
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 2);
    json_decref(p);
    for (int i = 0; i < 2; i++)
        json_object_clear(json_object_get(rx_nodeobj(m, rx_node_of(first, i)), "report"));
    p = rx_plan(m, RX_SVC);
    assert_int_equal(rx_ops(p, "assign"), 2);
    assert_int_equal(rx_ops(p, "unassign"), 0);
    for (int i = 0; i < 2; i++) {
        char rid[128];
        snprintf(rid, sizeof(rid), "%s/%d/3", RX_SVC, i);
        assert_string_equal(rx_rid_of(p, i), rid);
    }
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* ---------------------------------------------------------------- given up */

static void give_up(json_t *m, const json_t *plan, int index)
{
    json_t *report = json_object_get(rx_nodeobj(m, rx_node_of(plan, index)), "report");
    json_object_set_new(report, rx_rid_of(plan, index),
                        json_pack("{s:s, s:s, s:b, s:s}", "rid", rx_rid_of(plan, index), "state",
                                  "failed", "gave_up", 1, "reason", "exit 1"));
}

static void test_a_replica_given_up_moves_and_its_node_is_blocklisted(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    json_t *first = rx_round(m, RX_SVC);
    char bad[16];
    snprintf(bad, sizeof(bad), "%s", rx_node_of(first, 1));
    give_up(m, first, 1);
    json_t *p = rx_round(m, RX_SVC);
    assert_string_not_equal(rx_node_of(p, 1), bad);
    assert_true(rx_event(p, "the restart policy gave up on node"));
    assert_true(rx_event(p, "exit 1"));
    json_t *until = json_object_get(json_object_get(p, "blocklist"), bad);
    assert_non_null(until);
    assert_true(json_number_value(until) == RX_NOW + 600);
    assert_non_null(rx_health(p, "ServiceBlocklisted_"));
    assert_null(rx_health(p, "ServiceAllNodesBlocklisted"));
    json_decref(p);
    /* scaled up to every node: the blocklisted one takes none */
    set_replicas(m, 9);
    p = rx_plan(m, RX_SVC);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 8);
    for (int i = 0; i < 9; i++)
        assert_string_not_equal(rx_node_of(p, i), bad);
    json_decref(p);
    /* M minutes later the blocklist is gone */
    json_object_set_new(m, "now", json_real(RX_NOW + 601));
    p = rx_plan(m, RX_SVC);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 9);
    assert_int_equal(json_object_size(json_object_get(p, "blocklist")), 0);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_node_is_blocklisted_after_n_failures_as_the_settings_say(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    json_object_set_new(
        m, "settings",
        json_pack("{s:{s:i, s:i}}", "live", "blocklistAfterFailures", 2, "blocklistMinutes", 1));
    rx_service(m, RX_SVC, 1, false);
    json_object_set_new(m, "nodes", json_object());
    rx_node(m, "a", "fd1", "ud1", 1000);
    rx_node(m, "b", "fd2", "ud2", 1000);
    json_t *p = rx_round(m, RX_SVC);
    char bad[16];
    snprintf(bad, sizeof(bad), "%s", rx_node_of(p, 0));
    give_up(m, p, 0);
    json_decref(p);
    p = rx_round(m, RX_SVC); /* first failure on `bad`: counted, not blocklisted */
    assert_int_equal(json_object_size(json_object_get(p, "blocklist")), 0);
    assert_int_equal(json_array_size(json_object_get(json_object_get(p, "failures"), bad)), 1);
    assert_string_not_equal(rx_node_of(p, 0), bad);
    json_decref(p);
    json_decref(m);
}

static void test_all_nodes_blocklisted_is_an_error_report(void **state)
{
    (void)state;
    json_t *m = rx_model();
    rx_node(m, "a", "fd1", "ud1", 1000);
    rx_node(m, "b", "fd2", "ud2", 1000);
    rx_service(m, RX_SVC, 1, false);
    json_t *p = rx_round(m, RX_SVC);
    give_up(m, p, 0);
    json_decref(p);
    p = rx_round(m, RX_SVC);
    give_up(m, p, 0);
    json_decref(p);
    p = rx_round(m, RX_SVC);
    assert_int_equal(json_object_size(json_object_get(p, "blocklist")), 2);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 0);
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 1);
    const json_t *h = rx_health(p, "ServiceAllNodesBlocklisted");
    assert_non_null(h);
    assert_string_equal(json_string_value(json_object_get(h, "state")), "Error");
    assert_non_null(
        strstr(json_string_value(json_object_get(h, "description")), "All nodes blocklisted"));
    json_decref(p);
    json_decref(m);
}

/* A replica restarted again and again and not healthy is a crash loop
 * report, which goes once it is healthy. */
static void test_a_crash_loop_is_a_warning_while_it_lasts(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 2, false);
    json_t *first = rx_round(m, RX_SVC);
    json_t *report = json_object_get(rx_nodeobj(m, rx_node_of(first, 1)), "report");
    json_object_set_new(report, rx_rid_of(first, 1),
                        json_pack("{s:s, s:s, s:i, s:s}", "rid", rx_rid_of(first, 1), "state",
                                  "backoff", "restarts", 3, "reason", "exit 1"));
    json_t *p = rx_round(m, RX_SVC);
    const json_t *h = rx_health(p, "ReplicaCrashLoop_1");
    assert_non_null(h);
    assert_string_equal(json_string_value(json_object_get(h, "state")), "Warning");
    assert_non_null(strstr(json_string_value(json_object_get(h, "description")),
                           "restarted 3 times (backoff: exit 1)"));
    assert_null(rx_health(p, "ReplicaCrashLoop_0"));
    assert_true(json_boolean_value(json_object_get(p, "changed")));
    json_decref(p);
    json_object_set_new(json_object_get(report, rx_rid_of(first, 1)), "state",
                        json_string("healthy"));
    p = rx_plan(m, RX_SVC);
    assert_null(rx_health(p, "ReplicaCrashLoop_1"));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* ---------------------------------------------------------------- capacity */

/* Another service's replica assigned to `node` with a declared load. */
static void occupy(json_t *m, const char *node, int mem)
{
    json_t *assign = json_object_get(rx_nodeobj(m, node), "assign");
    char rid[64];
    snprintf(rid, sizeof(rid), "other.svc.0/%zu/1", json_object_size(assign));
    json_object_set_new(assign, rid,
                        json_pack("{s:s, s:{s:i}}", "rid", rid, "load", "MemoryMB", mem));
}

static void test_an_unplaceable_replica_waits_and_is_placed_when_a_node_joins(void **state)
{
    (void)state;
    json_t *m = rx_model();
    rx_node(m, "a", "fd1", "ud1", 100);
    rx_node(m, "b", "fd2", "ud2", 100);
    rx_node(m, "c", "fd3", "ud3", 100);
    occupy(m, "c", 80);
    rx_service(m, RX_SVC, 3, false);
    json_t *p = rx_round(m, RX_SVC);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 2);
    json_t *u = json_array_get(json_object_get(p, "unplaced"), 0);
    assert_int_equal(json_integer_value(json_object_get(u, "index")), 2);
    assert_true(json_array_size(json_object_get(u, "eliminationSequence")) > 0);
    assert_true(rx_event(p, "replica web-2.demo waiting for a node: "));
    const json_t *h = rx_health(p, "ServiceReplicaUnplacedHealth_Instance_2");
    assert_non_null(h);
    assert_string_equal(json_string_value(json_object_get(h, "state")), "Warning");
    assert_true(json_is_null(json_object_get(p, "rejected")));
    json_decref(p);
    /* the next round has nothing new to say */
    p = rx_plan(m, RX_SVC);
    assert_false(json_is_true(json_object_get(p, "changed")));
    json_decref(p);
    rx_node(m, "d", "fd3", "ud1", 100);
    p = rx_plan(m, RX_SVC);
    assert_string_equal(rx_node_of(p, 2), "d");
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 0);
    assert_null(rx_health(p, "ServiceReplicaUnplacedHealth"));
    assert_true(json_is_true(json_object_get(p, "changed")));
    json_decref(p);
    json_decref(m);
}

static void test_what_the_remaining_capacity_holds_is_placed_and_the_rest_waits(void **state)
{
    (void)state;
    json_t *m = rx_model();
    rx_node(m, "a", "fd1", "ud1", 100);
    rx_node(m, "b", "fd2", "ud2", 100);
    rx_node(m, "c", "fd3", "ud3", 100);
    occupy(m, "b", 80);
    occupy(m, "c", 80);
    rx_service(m, RX_SVC, 3, false);
    json_t *p = rx_plan(m, RX_SVC);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 1);
    assert_string_equal(rx_node_of(p, 0), "a");
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 2);
    json_t *seq =
        json_object_get(json_array_get(json_object_get(p, "unplaced"), 1), "eliminationSequence");
    assert_string_equal(json_string_value(json_object_get(json_array_get(seq, 0), "constraint")),
                        "ClusterCapacity");
    assert_true(json_is_null(json_object_get(p, "rejected")));
    json_decref(p);
    json_decref(m);
}

static void
test_a_service_that_cannot_fit_an_empty_cluster_is_rejected_with_the_shortfall(void **state)
{
    (void)state;
    json_t *m = rx_model();
    rx_node(m, "a", "fd1", "ud1", 100);
    rx_node(m, "b", "fd2", "ud2", 100);
    rx_service(m, RX_SVC, 4, false);
    json_t *metric = json_array_get(json_object_get(rx_spec(m, RX_SVC), "metrics"), 0);
    json_object_set_new(metric, "primaryLoad", json_integer(60));
    json_object_set_new(metric, "secondaryLoad", json_integer(60));
    json_t *p = rx_plan(m, RX_SVC);
    json_t *rejected = json_object_get(p, "rejected");
    assert_true(json_is_object(rejected));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(rejected, "shortfall"), "MemoryMB")),
        40);
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    assert_true(rx_event(p, "service web rejected: "));
    const json_t *h = rx_health(p, "ServiceCapacity");
    assert_string_equal(json_string_value(json_object_get(h, "state")), "Error");
    json_decref(p);
    json_decref(m);
}

/* ---------------------------------------------------------------- delete and bad specs */

static void test_a_deleting_service_loses_every_replica_then_is_removed(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    json_t *rec = rx_service(m, RX_SVC, 3, false);
    json_t *first = rx_round(m, RX_SVC);
    json_object_set_new(rec, "state", json_string("deleting"));
    /* the agent still reports the replica it is stopping */
    json_object_set_new(json_object_get(rx_nodeobj(m, rx_node_of(first, 0)), "report"),
                        rx_rid_of(first, 0), json_pack("{s:s}", "state", "stopping"));
    json_t *p = rx_round(m, RX_SVC);
    assert_int_equal(rx_ops(p, "unassign"), 3);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 0);
    assert_false(json_is_true(json_object_get(p, "remove")));
    assert_true(rx_event(p, "(service deleted)"));
    json_decref(p);
    json_object_clear(json_object_get(rx_nodeobj(m, rx_node_of(first, 0)), "report"));
    p = rx_round(m, RX_SVC);
    assert_true(json_is_true(json_object_get(p, "remove")));
    assert_true(json_is_true(json_object_get(p, "changed")));
    assert_null(json_object_get(json_object_get(m, "services"), RX_SVC));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_spec_that_does_not_load_is_rejected_and_running_replicas_stay(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    json_t *first = rx_round(m, RX_SVC);
    json_object_set_new(rx_spec(m, RX_SVC), "distribution", json_string("sideways"));
    json_t *p = rx_plan(m, RX_SVC);
    json_t *rejected = json_object_get(p, "rejected");
    assert_string_equal(json_string_value(json_object_get(rejected, "reason")), "InvalidSpec");
    assert_non_null(strstr(json_string_value(json_object_get(rejected, "description")),
                           "distribution: expected adaptive, maxDifference or quorumSafe"));
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    assert_int_equal(json_array_size(json_object_get(p, "placement")), 3);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_deleting_service_goes_even_when_its_spec_does_not_load(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    json_t *rec = rx_service(m, RX_SVC, 2, false);
    json_decref(rx_round(m, RX_SVC));
    json_object_set_new(rx_spec(m, RX_SVC), "distribution", json_string("sideways"));
    json_object_set_new(rec, "state", json_string("deleting"));
    json_t *p = rx_round(m, RX_SVC);
    assert_int_equal(rx_ops(p, "unassign"), 2);
    assert_true(json_is_null(json_object_get(p, "rejected")));
    assert_false(json_is_true(json_object_get(p, "remove")));
    json_decref(p);
    p = rx_round(m, RX_SVC);
    assert_true(json_is_true(json_object_get(p, "remove")));
    json_decref(p);
    json_decref(m);
}

static void test_spec_and_placement_may_be_json_strings_as_redis_holds_them(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    json_t *rec = rx_service(m, RX_SVC, 2, false);
    json_t *first = rx_round(m, RX_SVC);
    static const char *const fields[] = {"spec", "placement", NULL};
    for (size_t i = 0; fields[i]; i++) {
        char *text = json_dumps(json_object_get(rec, fields[i]), JSON_COMPACT);
        json_object_set_new(rec, fields[i], json_string(text));
        free(text);
    }
    json_t *p = rx_plan(m, RX_SVC);
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    assert_string_equal(rx_rid_of(p, 1), rx_rid_of(first, 1));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale_up_keeps_every_replica_and_places_the_new_indexes),
        cmocka_unit_test(test_scale_down_removes_the_highest_indexes),
        cmocka_unit_test(test_a_changed_placement_constraint_moves_exactly_the_violators),
        cmocka_unit_test(test_a_changed_mesos_constraint_keeps_the_lowest_index_of_a_conflict),
        cmocka_unit_test(test_a_changed_process_digest_gives_every_replica_a_new_rid),
        cmocka_unit_test(test_a_stateful_replica_leaving_a_live_node_starts_elsewhere_once_stopped),
        cmocka_unit_test(test_a_stateful_digest_change_restarts_each_index_only_after_it_stopped),
        cmocka_unit_test(test_a_replica_given_up_moves_and_its_node_is_blocklisted),
        cmocka_unit_test(test_a_node_is_blocklisted_after_n_failures_as_the_settings_say),
        cmocka_unit_test(test_all_nodes_blocklisted_is_an_error_report),
        cmocka_unit_test(test_a_crash_loop_is_a_warning_while_it_lasts),
        cmocka_unit_test(test_an_unplaceable_replica_waits_and_is_placed_when_a_node_joins),
        cmocka_unit_test(test_what_the_remaining_capacity_holds_is_placed_and_the_rest_waits),
        cmocka_unit_test(
            test_a_service_that_cannot_fit_an_empty_cluster_is_rejected_with_the_shortfall),
        cmocka_unit_test(test_a_deleting_service_loses_every_replica_then_is_removed),
        cmocka_unit_test(test_a_spec_that_does_not_load_is_rejected_and_running_replicas_stay),
        cmocka_unit_test(test_a_deleting_service_goes_even_when_its_spec_does_not_load),
        cmocka_unit_test(test_spec_and_placement_may_be_json_strings_as_redis_holds_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
