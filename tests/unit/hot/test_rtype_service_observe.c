/*
 * Specification of Converge::Service's observe(): from the cluster
 * snapshot the observer hands it, a create or update is COMPLETE when
 * every index runs healthy with the spec's digest, waits (never fails)
 * while a replica is unplaced, starting or on the wrong digest or its
 * rolling update goes on, and fails only when the service was rejected,
 * every eligible node is blocklisted for it (the live engine's `blocked`),
 * or its rolling update failed or was rolled back; a delete completes when nothing is
 * placed or running, a node that is down counting as gone. The
 * attributes list every replica and its endpoint.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_service.h"
#include "test_rtype_config.h"

#define SVC "stk.web.fedcba98"

static const cv_rtype_t *service(void)
{
    return tr_type(CV_SERVICE_TYPE);
}

/* A version of 2 replicas with port "http", digest "d1", observed with
 * the snapshot `cluster_json`. */
static cv_rstate_t version(const char *cluster_json)
{
    cv_rstate_t st = tr_state(NULL, 100);
    st.resource_name = "web";
    snprintf(st.physical_id, sizeof(st.physical_id), "%s", SVC);
    json_decref(st.data);
    st.data = tu_json("{\"svc\": \"" SVC "\", \"replicas\": 2, \"digest\": \"d1\", \"ports\": "
                      "[\"http\"], \"stack_name\": \"demo\"}");
    if (cluster_json)
        json_object_set_new(st.data, "cluster", tu_json(cluster_json));
    return st;
}

#define NODES                                                                                      \
    "\"nodes\": {\"n1\": {\"up\": true, \"address\": \"10.0.0.1\"}, "                              \
    "\"n2\": {\"up\": true, \"address\": \"10.0.0.2\"}, "                                          \
    "\"n3\": {\"up\": false, \"address\": \"10.0.0.3\"}}"
#define PLACED_2                                                                                   \
    "\"placement\": [{\"index\": 0, \"rid\": \"" SVC "/0/1\", \"node\": \"n1\", \"role\": "        \
    "\"instance\"}, {\"index\": 1, \"rid\": \"" SVC "/1/1\", \"node\": \"n2\", \"role\": "         \
    "\"instance\"}]"
#define HEALTHY(i, node, port)                                                                     \
    "\"" SVC "/" #i "/1\": {\"state\": \"healthy\", \"digest\": \"d1\", \"node\": \"" node "\", "  \
    "\"address\": \"127.0.0.1\", \"ports\": {\"http\": " #port "}}"

static cv_observed_t observe(cv_rstate_t *st, cv_action_t action)
{
    return service()->observe(st, action);
}

static void test_every_index_healthy_is_complete(void **state)
{
    (void)state;
    cv_rstate_t st = version("{\"exists\": true, \"state\": \"active\", " NODES ", " PLACED_2
                             ", \"unplaced\": [], \"rejected\": \"\", \"reports\": {" HEALTHY(
                                 0, "n1", 31001) ", " HEALTHY(1, "n2", 31002) "}}");
    assert_int_equal(observe(&st, CV_ACTION_CREATE), CV_OBSERVED_COMPLETE);
    assert_null(json_object_get(st.data, "cluster")); /* taken out again */
    json_t *eps = json_object_get(st.attrs, "endpoints");
    assert_int_equal(json_array_size(eps), 2);
    assert_string_equal(json_string_value(json_array_get(eps, 0)), "127.0.0.1:31001");
    assert_string_equal(json_string_value(json_array_get(eps, 1)), "127.0.0.1:31002");
    json_t *r1 = json_array_get(json_object_get(st.attrs, "replicas"), 1);
    assert_string_equal(json_string_value(json_object_get(r1, "name")), "web-1.demo");
    assert_string_equal(json_string_value(json_object_get(r1, "node")), "n2");
    assert_string_equal(json_string_value(json_object_get(r1, "status")), "healthy");
    assert_string_equal(json_string_value(json_object_get(r1, "endpoint")), "127.0.0.1:31002");
    assert_string_equal(json_string_value(json_object_get(st.attrs, "service_id")), SVC);
    assert_int_equal(
        json_array_size(json_object_get(json_object_get(st.attrs, "port_endpoints"), "http")), 2);
    tr_state_clear(&st);
}

static void test_a_replica_still_starting_waits(void **state)
{
    (void)state;
    cv_rstate_t st = version(
        "{\"exists\": true, \"state\": \"active\", " NODES ", " PLACED_2 ", \"reports\": {" HEALTHY(
            0, "n1", 31001) ", \"" SVC "/1/1\": {\"state\": \"starting\", \"digest\": \"d1\"}}}");
    assert_int_equal(observe(&st, CV_ACTION_CREATE), CV_OBSERVED_IN_PROGRESS);
    assert_true(st.retry_at > 100 && st.retry_at <= 100.5);
    assert_contains(st.reason, "1 of 2 replicas healthy; web-1.demo is starting on n2");
    tr_state_clear(&st);
}

static void test_an_unplaced_replica_waits_with_its_elimination_sequence(void **state)
{
    (void)state;
    cv_rstate_t st = version(
        "{\"exists\": true, \"state\": \"active\", " NODES ", \"placement\": [{\"index\": 0, "
        "\"rid\": \"" SVC "/0/1\", \"node\": \"n1\", \"role\": \"instance\"}], \"unplaced\": "
        "[{\"index\": 1, \"eliminationSequence\": \"5 nodes, NodeType == web: 0 left\"}], "
        "\"reports\": {" HEALTHY(0, "n1", 31001) "}}");
    assert_int_equal(observe(&st, CV_ACTION_CREATE), CV_OBSERVED_IN_PROGRESS);
    assert_contains(st.reason, "web-1.demo is unplaced: 5 nodes, NodeType == web: 0 left");
    json_t *r1 = json_array_get(json_object_get(st.attrs, "replicas"), 1);
    assert_string_equal(json_string_value(json_object_get(r1, "status")), "unplaced");
    tr_state_clear(&st);
}

static void test_an_elimination_list_reads_as_the_steps_that_eliminated(void **state)
{
    (void)state;
    cv_rstate_t st = version(
        "{\"exists\": true, \"state\": \"active\", " NODES ", \"placement\": [], \"unplaced\": "
        "[{\"index\": 0, \"eliminationSequence\": [{\"constraint\": \"NodeStatus\", "
        "\"eliminated\": []}, {\"constraint\": \"ReplicaExclusion\", \"eliminated\": [\"n1\", "
        "\"n2\"]}, {\"constraint\": \"NodeCapacity\", \"eliminated\": [\"n3\"]}]}], "
        "\"reports\": {}}");
    assert_int_equal(observe(&st, CV_ACTION_CREATE), CV_OBSERVED_IN_PROGRESS);
    assert_contains(st.reason, "web-0.demo is unplaced: ReplicaExclusion eliminated n1, n2; "
                               "NodeCapacity eliminated n3");
    tr_state_clear(&st);
}

static void test_a_report_of_another_digest_waits(void **state)
{
    (void)state;
    cv_rstate_t st = version(
        "{\"exists\": true, \"state\": \"active\", " NODES ", " PLACED_2 ", \"reports\": {" HEALTHY(
            0, "n1", 31001) ", \"" SVC "/1/1\": {\"state\": \"healthy\", \"digest\": \"old\"}}}");
    assert_int_equal(observe(&st, CV_ACTION_UPDATE), CV_OBSERVED_IN_PROGRESS);
    assert_contains(st.reason, "web-1.demo is outdated");
    tr_state_clear(&st);
}

static void test_a_replica_on_a_down_node_is_not_healthy(void **state)
{
    (void)state;
    cv_rstate_t st = version(
        "{\"exists\": true, \"state\": \"active\", " NODES ", \"placement\": [{\"index\": 0, "
        "\"rid\": \"" SVC "/0/1\", \"node\": \"n1\"}, {\"index\": 1, \"rid\": \"" SVC
        "/1/1\", \"node\": \"n3\"}], \"reports\": {" HEALTHY(0, "n1", 1) ", " HEALTHY(1, "n3",
                                                                                      2) "}}");
    assert_int_equal(observe(&st, CV_ACTION_CREATE), CV_OBSERVED_IN_PROGRESS);
    assert_contains(st.reason, "web-1.demo is node_down on n3");
    tr_state_clear(&st);
}

static void test_a_scale_down_waits_for_the_higher_indexes_to_go(void **state)
{
    (void)state;
    cv_rstate_t st = version(
        "{\"exists\": true, \"state\": \"active\", " NODES ", \"placement\": [{\"index\": 0, "
        "\"rid\": \"" SVC "/0/1\", \"node\": \"n1\"}, {\"index\": 1, \"rid\": \"" SVC
        "/1/1\", \"node\": \"n2\"}, {\"index\": 2, \"rid\": \"" SVC "/2/1\", \"node\": "
        "\"n2\"}], \"reports\": {" HEALTHY(0, "n1", 1) ", " HEALTHY(1, "n2", 2) "}}");
    assert_int_equal(observe(&st, CV_ACTION_UPDATE), CV_OBSERVED_IN_PROGRESS);
    assert_contains(st.reason, "1 replicas above 2 still to stop");
    tr_state_clear(&st);
}

static void test_only_a_rejected_service_fails(void **state)
{
    (void)state;
    cv_rstate_t st = version("{\"exists\": true, \"state\": \"active\", " NODES
                             ", \"placement\": [], \"rejected\": \"MemoryMB: needs 300, the "
                             "cluster has 200 free\", \"reports\": {}}");
    assert_int_equal(observe(&st, CV_ACTION_CREATE), CV_OBSERVED_FAILED);
    assert_string_equal(st.reason, "service web rejected: MemoryMB: needs 300, the cluster has "
                                   "200 free");
    tr_state_clear(&st);
    /* The engine's note of the rejection fails it too. */
    st = version("{\"exists\": true, \"state\": \"active\", \"placement\": [], \"reports\": {}}");
    json_object_set_new(st.data, "rejected", json_string("service web rejected: too big"));
    assert_int_equal(observe(&st, CV_ACTION_CREATE), CV_OBSERVED_FAILED);
    assert_string_equal(st.reason, "service web rejected: too big");
    tr_state_clear(&st);
}

#define BLOCKED                                                                                    \
    "every eligible node is blocklisted (n1 until 2024-05-01T10:20:03Z, n2 until "                 \
    "2024-05-01T10:20:09Z): the restart policy gave up there: exec /no/such: No such file or "     \
    "directory; the restart policy gave up after 1 restarts"

static void
test_every_eligible_node_blocklisted_fails_with_the_blocklist_and_start_error(void **state)
{
    (void)state;
    cv_rstate_t st = version(
        "{\"exists\": true, \"state\": \"active\", " NODES ", \"placement\": [{\"index\": 0, "
        "\"rid\": \"" SVC "/0/1\", \"node\": \"n1\", \"role\": \"instance\"}], \"unplaced\": "
        "[{\"index\": 1, \"eliminationSequence\": []}], \"rejected\": \"\", \"blocked\": "
        "\"" BLOCKED "\", \"reports\": {" HEALTHY(0, "n1", 31001) "}}");
    assert_int_equal(observe(&st, CV_ACTION_CREATE), CV_OBSERVED_FAILED);
    assert_string_equal(st.reason, "service web: " BLOCKED);
    json_t *r1 = json_array_get(json_object_get(st.attrs, "replicas"), 1);
    assert_string_equal(json_string_value(json_object_get(r1, "status")), "unplaced");
    tr_state_clear(&st);
    /* not blocked: the same replica waits */
    st = version("{\"exists\": true, \"state\": \"active\", " NODES
                 ", \"placement\": [], \"unplaced\": [{\"index\": 0, \"eliminationSequence\": "
                 "[]}], \"rejected\": \"\", \"blocked\": \"\", \"reports\": {}}");
    assert_int_equal(observe(&st, CV_ACTION_UPDATE), CV_OBSERVED_IN_PROGRESS);
    tr_state_clear(&st);
}

/* Every replica healthy on d1, with the rollout `rollout_json`. */
static cv_observed_t with_rollout(cv_rstate_t *st, const char *rollout_json)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"exists\": true, \"state\": \"active\", " NODES ", " PLACED_2
             ", \"unplaced\": [], \"rejected\": \"\", \"reports\": {" HEALTHY(
                 0, "n1", 31001) ", " HEALTHY(1, "n2", 31002) "}, \"rollout\": %s}",
             rollout_json);
    *st = version(text);
    return observe(st, CV_ACTION_UPDATE);
}

static void test_an_update_completes_with_its_rolling_update_only(void **state)
{
    (void)state;
    cv_rstate_t st;
    assert_int_equal(with_rollout(&st, "{\"to\": \"d1\", \"state\": \"rolling\", \"step\": 2, "
                                       "\"steps\": 2, \"reason\": \"\"}"),
                     CV_OBSERVED_IN_PROGRESS);
    assert_string_equal(st.reason, "rolling update rolling: step 2 of 2");
    tr_state_clear(&st);
    assert_int_equal(with_rollout(&st, "{\"to\": \"d1\", \"state\": \"complete\"}"),
                     CV_OBSERVED_COMPLETE);
    tr_state_clear(&st);
    /* a rollout of another version does not hold this one back */
    assert_int_equal(with_rollout(&st, "{\"to\": \"d0\", \"state\": \"rolling\"}"),
                     CV_OBSERVED_COMPLETE);
    tr_state_clear(&st);
    assert_int_equal(with_rollout(&st, "null"), CV_OBSERVED_COMPLETE);
    tr_state_clear(&st);
}

static void test_a_failed_or_rolled_back_rolling_update_fails_the_update(void **state)
{
    (void)state;
    cv_rstate_t st;
    assert_int_equal(with_rollout(&st, "{\"to\": \"d1\", \"state\": \"rolled_back\", "
                                       "\"reason\": \"step 1 of 2 failed: replica web-0.demo on "
                                       "n1 is backoff\"}"),
                     CV_OBSERVED_FAILED);
    assert_string_equal(st.reason,
                        "rolling update rolled_back: step 1 of 2 failed: replica web-0.demo on "
                        "n1 is backoff");
    tr_state_clear(&st);
    assert_int_equal(with_rollout(&st, "{\"to\": \"d1\", \"state\": \"failed\"}"),
                     CV_OBSERVED_FAILED);
    tr_state_clear(&st);
    assert_int_equal(with_rollout(&st, "{\"to\": \"d1\", \"state\": \"rolling_back\"}"),
                     CV_OBSERVED_IN_PROGRESS);
    tr_state_clear(&st);
}

static void test_no_snapshot_waits(void **state)
{
    (void)state;
    cv_rstate_t st = version(NULL);
    assert_int_equal(observe(&st, CV_ACTION_CREATE), CV_OBSERVED_IN_PROGRESS);
    tr_state_clear(&st);
}

static void test_zero_replicas_is_complete_once_nothing_is_placed(void **state)
{
    (void)state;
    cv_rstate_t st = version("{\"exists\": true, \"state\": \"active\", \"placement\": [], "
                             "\"reports\": {}}");
    json_object_set_new(st.data, "replicas", json_integer(0));
    assert_int_equal(observe(&st, CV_ACTION_UPDATE), CV_OBSERVED_COMPLETE);
    tr_state_clear(&st);
}

static void test_a_delete_waits_for_running_processes_on_up_nodes(void **state)
{
    (void)state;
    cv_rstate_t st = version("{\"exists\": true, \"state\": \"deleting\", " NODES
                             ", \"placement\": [], \"reports\": {\"" SVC
                             "/0/1\": {\"state\": \"stopping\", \"node\": \"n1\"}}}");
    assert_int_equal(observe(&st, CV_ACTION_DELETE), CV_OBSERVED_IN_PROGRESS);
    assert_contains(st.reason, "1 processes still running");
    tr_state_clear(&st);
    st = version("{\"exists\": true, \"state\": \"deleting\", " NODES
                 ", \"placement\": [], \"reports\": {\"" SVC
                 "/0/1\": {\"state\": \"stopped\", \"node\": \"n1\"}}}");
    assert_int_equal(observe(&st, CV_ACTION_DELETE), CV_OBSERVED_COMPLETE);
    tr_state_clear(&st);
}

/* A delete waits for the unassignment of every replica to be committed,
 * also of a node down (its capacity frees only then); a process a node down
 * still reports does not hold it. */
static void test_a_delete_waits_for_every_unassignment_not_for_nodes_down(void **state)
{
    (void)state;
    cv_rstate_t st = version("{\"exists\": true, \"state\": \"deleting\", " NODES
                             ", \"placement\": [{\"index\": 0, \"rid\": \"" SVC
                             "/0/1\", \"node\": \"n3\"}], \"reports\": {}}");
    assert_int_equal(observe(&st, CV_ACTION_DELETE), CV_OBSERVED_IN_PROGRESS);
    tr_state_clear(&st);
    st = version("{\"exists\": true, \"state\": \"deleting\", " NODES
                 ", \"placement\": [], \"reports\": {\"" SVC
                 "/0/1\": {\"state\": \"healthy\", \"node\": \"n3\"}}}");
    assert_int_equal(observe(&st, CV_ACTION_DELETE), CV_OBSERVED_COMPLETE);
    tr_state_clear(&st);
    st = version("{\"exists\": false, \"state\": \"\", \"placement\": [], \"reports\": {}}");
    assert_int_equal(observe(&st, CV_ACTION_DELETE), CV_OBSERVED_COMPLETE);
    tr_state_clear(&st);
}

static void test_create_names_the_service_and_describes_the_version(void **state)
{
    (void)state;
    json_t *raw = tu_json("{\"replicas\": 4, \"command\": [\"x\"], \"ports\": [\"http\", "
                          "\"admin\"]}");
    json_t *props = tr_props(service(), raw);
    cv_rstate_t st = tr_state(props, 100);
    assert_int_equal(service()->create(&st), 0);
    assert_string_equal(st.physical_id, "stk.r.fedcba98");
    assert_int_equal(json_integer_value(json_object_get(st.data, "replicas")), 4);
    assert_int_equal(json_string_length(json_object_get(st.data, "digest")), 16);
    assert_string_equal(json_string_value(json_array_get(json_object_get(st.data, "ports"), 1)),
                        "admin");
    tr_state_clear(&st);
    json_decref(props);
    json_decref(raw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_index_healthy_is_complete),
        cmocka_unit_test(test_a_replica_still_starting_waits),
        cmocka_unit_test(test_an_unplaced_replica_waits_with_its_elimination_sequence),
        cmocka_unit_test(test_an_elimination_list_reads_as_the_steps_that_eliminated),
        cmocka_unit_test(test_a_report_of_another_digest_waits),
        cmocka_unit_test(test_a_replica_on_a_down_node_is_not_healthy),
        cmocka_unit_test(test_a_scale_down_waits_for_the_higher_indexes_to_go),
        cmocka_unit_test(test_only_a_rejected_service_fails),
        cmocka_unit_test(
            test_every_eligible_node_blocklisted_fails_with_the_blocklist_and_start_error),
        cmocka_unit_test(test_an_update_completes_with_its_rolling_update_only),
        cmocka_unit_test(test_a_failed_or_rolled_back_rolling_update_fails_the_update),
        cmocka_unit_test(test_no_snapshot_waits),
        cmocka_unit_test(test_zero_replicas_is_complete_once_nothing_is_placed),
        cmocka_unit_test(test_a_delete_waits_for_running_processes_on_up_nodes),
        cmocka_unit_test(test_a_delete_waits_for_every_unassignment_not_for_nodes_down),
        cmocka_unit_test(test_create_names_the_service_and_describes_the_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
