/*
 * Rolling updates in the live planner (docs/crm.md "Rolling updates",
 * "Upgrades by upgrade domain"): kill_first and start_first steps within
 * their bounds, the health gate, manual mode and pause, a failed step
 * rolled back to the old process spec, an upgrade one upgrade domain at a
 * time whose replicas stay on their nodes, a stateful replica renewed on
 * its own node once stopped. The agents are played by the test: every
 * assigned replica reports as it is told.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_reconcile_fixture.h"

/* svc_commit.lua also writes the rollout. */
static json_t *round_trip(json_t *m)
{
    json_t *p = rx_round(m, RX_SVC);
    json_t *rec = json_object_get(json_object_get(m, "services"), RX_SVC);
    json_object_set(rec, "rollout", json_object_get(p, "rollout"));
    return p;
}

/* The agents: every assigned replica reports `state` running its spec's
 * digest (replicas of digest `only` only, when given); reports of replicas
 * no longer assigned are gone (stopped and dropped). */
static void agents(json_t *m, const char *state, const char *only)
{
    const char *node;
    json_t *n;
    json_object_foreach(json_object_get(m, "nodes"), node, n)
    {
        json_t *reports = json_object();
        const char *rid;
        json_t *spec;
        json_object_foreach(json_object_get(n, "assign"), rid, spec)
        {
            const char *digest = json_string_value(json_object_get(spec, "digest"));
            json_t *old = json_object_get(json_object_get(n, "report"), rid);
            if (only && strcmp(digest, only) != 0 && old) {
                json_object_set(reports, rid, old);
                continue;
            }
            json_object_set_new(reports, rid,
                                json_pack("{s:s, s:s, s:s}", "rid", rid, "state",
                                          only && strcmp(digest, only) != 0 ? "healthy" : state,
                                          "digest", digest));
        }
        json_object_set_new(n, "report", reports);
    }
}

static void policy(json_t *m, const char *json)
{
    json_object_set_new(rx_spec(m, RX_SVC), "updatePolicy", json_loads(json, 0, NULL));
}

static void new_digest(json_t *m, const char *digest)
{
    json_t *process = json_object_get(rx_spec(m, RX_SVC), "process");
    json_object_set_new(process, "digest", json_string(digest));
    json_t *task = json_array_get(json_object_get(process, "tasks"), 0);
    json_object_set_new(task, "env", json_pack("{s:s}", "VERSION", digest));
}

static const char *rollout_str(const json_t *p, const char *key)
{
    return json_string_value(json_object_get(json_object_get(p, "rollout"), key));
}

static json_int_t rollout_int(const json_t *p, const char *key)
{
    return json_integer_value(json_object_get(json_object_get(p, "rollout"), key));
}

/* How many assigned replicas of the model run `digest`. */
static int running(const json_t *m, const char *digest)
{
    int count = 0;
    const char *node;
    json_t *n;
    json_object_foreach(json_object_get(m, "nodes"), node, n)
    {
        const char *rid;
        json_t *spec;
        json_object_foreach(json_object_get(n, "assign"), rid, spec)
        {
            count += strcmp(json_string_value(json_object_get(spec, "digest")), digest) == 0;
        }
    }
    return count;
}

/* A settled service of `replicas` healthy replicas on d1 under `up`. */
static json_t *settled(int replicas, bool stateful, const char *up)
{
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, replicas, stateful);
    policy(m, up);
    json_decref(round_trip(m));
    agents(m, "healthy", NULL);
    json_decref(round_trip(m));
    return m;
}

static void test_kill_first_replaces_one_replica_per_step_after_the_last_is_healthy(void **state)
{
    (void)state;
    json_t *m =
        settled(3, false, "{\"order\": \"kill_first\", \"step\": 1, \"max_unavailable\": 1}");
    new_digest(m, "d2");
    json_t *p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "rolling");
    assert_string_equal(rollout_str(p, "from"), "d1");
    assert_string_equal(rollout_str(p, "to"), "d2");
    assert_int_equal(rollout_int(p, "steps"), 3);
    assert_int_equal(rx_ops(p, "assign"), 1);
    assert_int_equal(rx_ops(p, "unassign"), 1);
    assert_true(rx_event(p, "step 1 of 3 began"));
    json_decref(p);
    /* the new replica is not healthy yet: nothing else is touched */
    agents(m, "starting", "d2");
    p = round_trip(m);
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    assert_int_equal(running(m, "d2"), 1);
    json_decref(p);
    for (int step = 2; step <= 3; step++) {
        agents(m, "healthy", NULL);
        p = round_trip(m);
        assert_int_equal(rollout_int(p, "step"), step);
        assert_int_equal(running(m, "d2"), step);
        assert_int_equal(running(m, "d1"), 3 - step);
        json_decref(p);
    }
    agents(m, "healthy", NULL);
    p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "complete");
    assert_true(rx_event(p, "rolling update of web complete"));
    json_decref(p);
    json_decref(m);
}

static void test_start_first_keeps_the_old_replicas_until_the_new_ones_are_healthy(void **state)
{
    (void)state;
    json_t *m = settled(3, false, "{\"order\": \"start_first\", \"step\": 2, \"max_surge\": 2}");
    new_digest(m, "d2");
    json_t *p = round_trip(m);
    assert_int_equal(rx_ops(p, "assign"), 2);
    assert_int_equal(rx_ops(p, "unassign"), 0);
    assert_int_equal(running(m, "d1"), 3);
    json_decref(p);
    agents(m, "starting", "d2");
    p = round_trip(m);
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    json_decref(p);
    agents(m, "healthy", NULL);
    p = round_trip(m); /* step 1 done: its old replicas go; step 2 starts the last one */
    assert_int_equal(rx_ops(p, "unassign"), 2);
    assert_int_equal(rx_ops(p, "assign"), 1);
    assert_int_equal(running(m, "d1"), 1);
    assert_int_equal(running(m, "d2"), 3);
    json_decref(p);
    agents(m, "healthy", NULL);
    json_decref(round_trip(m));
    p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "complete");
    assert_int_equal(running(m, "d1"), 0);
    json_decref(p);
    json_decref(m);
}

static void test_kill_first_never_exceeds_max_unavailable(void **state)
{
    (void)state;
    json_t *m =
        settled(4, false, "{\"order\": \"kill_first\", \"step\": 2, \"max_unavailable\": 2}");
    /* one replica is unhealthy already: a step may take only one more */
    json_t *n =
        rx_nodeobj(m, rx_node_of(json_object_get(json_object_get(m, "services"), RX_SVC), 3));
    const char *rid;
    json_t *r;
    json_object_foreach(json_object_get(n, "report"), rid, r)
    {
        json_object_set_new(r, "state", json_string("unhealthy"));
    }
    new_digest(m, "d2");
    json_t *p = round_trip(m);
    assert_int_equal(rx_ops(p, "assign"), 1);
    json_decref(p);
    json_decref(m);
}

static void test_manual_mode_waits_for_a_resume_after_each_step(void **state)
{
    (void)state;
    json_t *m = settled(3, false, "{\"step\": 1, \"mode\": \"manual\"}");
    new_digest(m, "d2");
    json_decref(round_trip(m));
    agents(m, "healthy", NULL);
    json_t *p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "paused");
    assert_non_null(strstr(rollout_str(p, "reason"), "resume"));
    assert_int_equal(running(m, "d2"), 1);
    json_decref(p);
    json_t *rec = json_object_get(json_object_get(m, "services"), RX_SVC);
    json_object_set_new(json_object_get(rec, "rollout"), "resume", json_integer(1));
    p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "rolling");
    assert_int_equal(running(m, "d2"), 2);
    json_decref(p);
    json_decref(m);
}

static void test_pause_stops_after_the_current_step(void **state)
{
    (void)state;
    json_t *m = settled(3, false, "{\"step\": 1}");
    new_digest(m, "d2");
    json_decref(round_trip(m));
    json_t *rec = json_object_get(json_object_get(m, "services"), RX_SVC);
    json_object_set_new(json_object_get(rec, "rollout"), "pause", json_true());
    agents(m, "healthy", NULL);
    json_t *p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "paused");
    assert_int_equal(running(m, "d2"), 1);
    json_decref(p);
    json_object_set_new(json_object_get(rec, "rollout"), "pause", json_false());
    p = round_trip(m);
    assert_int_equal(running(m, "d2"), 2);
    json_decref(p);
    json_decref(m);
}

static void test_a_step_past_its_deadline_fails_and_rolls_back_to_the_old_spec(void **state)
{
    (void)state;
    json_t *m = settled(3, false, "{\"step\": 1, \"deadline\": 30}");
    new_digest(m, "d2");
    json_decref(round_trip(m));
    agents(m, "backoff", "d2");
    json_object_set_new(m, "now", json_real(RX_NOW + 31));
    json_t *p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "rolling_back");
    assert_true(rx_event(p, "step 1 of 3 failed: replica web-"));
    assert_int_equal(running(m, "d2"), 0);
    assert_int_equal(running(m, "d1"), 3);
    json_decref(p);
    agents(m, "healthy", NULL);
    p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "rolled_back");
    assert_non_null(strstr(rollout_str(p, "reason"), "is backoff"));
    json_decref(p);
    /* rolled back: the replicas stay on the old spec */
    p = round_trip(m);
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    json_decref(p);
    json_decref(m);
}

static void test_a_failed_step_without_rollback_stays_failed(void **state)
{
    (void)state;
    json_t *m = settled(3, false, "{\"step\": 1, \"deadline\": 30, \"rollback\": false}");
    new_digest(m, "d2");
    json_decref(round_trip(m));
    agents(m, "backoff", "d2");
    json_object_set_new(m, "now", json_real(RX_NOW + 31));
    json_t *p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "failed");
    assert_int_equal(running(m, "d2"), 1);
    json_decref(p);
    json_decref(m);
}

static void test_a_rollback_asked_for_renews_the_replaced_replicas_with_the_old_spec(void **state)
{
    (void)state;
    json_t *m = settled(3, false, "{\"step\": 1, \"mode\": \"manual\"}");
    new_digest(m, "d2");
    json_decref(round_trip(m));
    agents(m, "healthy", NULL);
    json_decref(round_trip(m));
    json_t *rec = json_object_get(json_object_get(m, "services"), RX_SVC);
    json_object_set_new(json_object_get(rec, "rollout"), "rollback", json_true());
    json_t *p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "rolling_back");
    assert_true(rx_event(p, "asked for by convergectl rollout rollback"));
    assert_int_equal(running(m, "d1"), 3);
    /* the old spec whole: what the replicas ran before */
    json_t *op = json_array_get(json_object_get(p, "ops"), 1);
    json_t *env = json_object_get(
        json_array_get(json_object_get(json_object_get(op, "spec"), "tasks"), 0), "env");
    assert_null(json_object_get(env, "VERSION"));
    json_decref(p);
    agents(m, "healthy", NULL);
    p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "rolled_back");
    json_decref(p);
    json_decref(m);
}

static void test_an_upgrade_goes_one_upgrade_domain_at_a_time_and_keeps_every_node(void **state)
{
    (void)state;
    json_t *m = settled(9, false, "{\"byUpgradeDomain\": true}");
    json_t *before = json_deep_copy(
        json_object_get(json_object_get(json_object_get(m, "services"), RX_SVC), "placement"));
    new_digest(m, "d2");
    const char *uds[] = {"ud1", "ud2", "ud3"};
    for (int d = 0; d < 3; d++) {
        json_t *p = round_trip(m);
        assert_string_equal(rollout_str(p, "domain"), uds[d]);
        assert_int_equal(running(m, "d2"), 3 * (d + 1));
        assert_true(
            json_is_true(json_object_get(json_object_get(p, "rollout"), "by_upgrade_domain")));
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(p, "placement"), i, e)
        {
            assert_string_equal(
                json_string_value(json_object_get(e, "node")),
                json_string_value(json_object_get(json_array_get(before, i), "node")));
        }
        json_decref(p);
        agents(m, "healthy", NULL);
    }
    json_t *p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "complete");
    json_decref(p);
    json_decref(before);
    json_decref(m);
}

static void test_a_stateful_replica_is_renewed_on_its_own_node_once_stopped(void **state)
{
    (void)state;
    json_t *m = settled(3, true, "{\"step\": 1}");
    char node[16];
    snprintf(node, sizeof(node), "%s",
             rx_node_of(json_object_get(json_object_get(m, "services"), RX_SVC), 0));
    new_digest(m, "d2");
    json_t *p = round_trip(m);
    assert_int_equal(rx_ops(p, "unassign"), 1);
    assert_int_equal(rx_ops(p, "assign"), 0);
    json_decref(p);
    /* its agent still reports it stopping: the index waits */
    json_t *n = rx_nodeobj(m, node);
    char rid[128];
    snprintf(rid, sizeof(rid), "%s/0/1", RX_SVC);
    json_object_set_new(json_object_get(n, "report"), rid,
                        json_pack("{s:s, s:s}", "state", "stopping", "digest", "d1"));
    p = round_trip(m);
    assert_int_equal(rx_ops(p, "assign"), 0);
    json_decref(p);
    json_object_set_new(json_object_get(n, "report"), rid,
                        json_pack("{s:s, s:s}", "state", "stopped", "digest", "d1"));
    p = round_trip(m);
    assert_int_equal(rx_ops(p, "assign"), 1);
    assert_string_equal(rx_node_of(p, 0), node);
    json_decref(p);
    json_decref(m);
}

static void test_a_count_change_in_the_same_update_adds_new_and_removes_at_once(void **state)
{
    (void)state;
    json_t *m = settled(4, false, "{\"step\": 1}");
    new_digest(m, "d2");
    json_object_set_new(rx_spec(m, RX_SVC), "replicas", json_integer(6));
    json_t *p = round_trip(m);
    /* indexes 4 and 5 start on the new version; while they are not healthy
     * they use the unavailability bound: no old replica is renewed yet */
    assert_int_equal(running(m, "d2"), 2);
    assert_int_equal(running(m, "d1"), 4);
    assert_int_equal(rollout_int(p, "steps"), 4);
    json_decref(p);
    agents(m, "healthy", NULL);
    json_decref(round_trip(m));
    assert_int_equal(running(m, "d2"), 3);
    json_decref(m);
    m = settled(4, false, "{\"step\": 1}");
    new_digest(m, "d2");
    json_object_set_new(rx_spec(m, RX_SVC), "replicas", json_integer(2));
    p = round_trip(m);
    /* indexes 2 and 3 go at once; of the two kept, one is renewed */
    assert_int_equal(running(m, "d1"), 1);
    assert_int_equal(running(m, "d2"), 1);
    assert_int_equal(rollout_int(p, "steps"), 2);
    json_decref(p);
    json_decref(m);
}

static void test_without_an_update_policy_every_replica_is_renewed_at_once(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    json_decref(round_trip(m));
    new_digest(m, "d2");
    json_t *p = round_trip(m);
    assert_int_equal(rx_ops(p, "assign"), 3);
    assert_true(json_is_null(json_object_get(p, "rollout")));
    json_decref(p);
    json_decref(m);
}

static void test_a_policy_removed_mid_way_renews_the_rest_and_completes(void **state)
{
    (void)state;
    json_t *m = settled(3, false, "{\"step\": 1}");
    new_digest(m, "d2");
    json_decref(round_trip(m));
    json_object_del(rx_spec(m, RX_SVC), "updatePolicy");
    json_t *p = round_trip(m);
    assert_int_equal(running(m, "d2"), 3);
    assert_string_equal(rollout_str(p, "state"), "complete");
    json_decref(p);
    /* a rollout record the planner did not start is left as it is */
    json_t *rec = json_object_get(json_object_get(m, "services"), RX_SVC);
    json_object_set_new(rec, "rollout",
                        json_pack("{s:s, s:s, s:s}", "to", "d9", "state", "rolling", "from", "d8"));
    p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "rolling");
    json_decref(p);
    json_object_set_new(rec, "rollout",
                        json_pack("{s:s, s:s, s:s}", "to", "d2", "state", "rolling", "from", "d1"));
    p = round_trip(m);
    assert_string_equal(rollout_str(p, "state"), "rolling");
    json_decref(p);
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_first_replaces_one_replica_per_step_after_the_last_is_healthy),
        cmocka_unit_test(test_start_first_keeps_the_old_replicas_until_the_new_ones_are_healthy),
        cmocka_unit_test(test_kill_first_never_exceeds_max_unavailable),
        cmocka_unit_test(test_manual_mode_waits_for_a_resume_after_each_step),
        cmocka_unit_test(test_pause_stops_after_the_current_step),
        cmocka_unit_test(test_a_step_past_its_deadline_fails_and_rolls_back_to_the_old_spec),
        cmocka_unit_test(test_a_failed_step_without_rollback_stays_failed),
        cmocka_unit_test(test_a_rollback_asked_for_renews_the_replaced_replicas_with_the_old_spec),
        cmocka_unit_test(test_an_upgrade_goes_one_upgrade_domain_at_a_time_and_keeps_every_node),
        cmocka_unit_test(test_a_stateful_replica_is_renewed_on_its_own_node_once_stopped),
        cmocka_unit_test(test_a_count_change_in_the_same_update_adds_new_and_removes_at_once),
        cmocka_unit_test(test_without_an_update_policy_every_replica_is_renewed_at_once),
        cmocka_unit_test(test_a_policy_removed_mid_way_renews_the_rest_and_completes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
