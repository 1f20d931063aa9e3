/*
 * Specification of "why is it waiting" (cli/status/cli_waiting.h): from the
 * traversal's graph, done set, sync points, leases and records, which
 * resources are in action and on what they wait, which are ready but not
 * taken, which are blocked, and when a stack counts as stalled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_waiting.h"
#include "test_util.h"

#define NOW 1000.0

/* A stack acting on traversal 2, whose work moved a second ago. */
static cli_wait_stack_t acting(void)
{
    return (cli_wait_stack_t){.name = "web",
                              .status = "CREATE_IN_PROGRESS",
                              .traversal = 2,
                              .expanded = 2,
                              .total = 4,
                              .done = 1,
                              .progress = NOW - 1,
                              .updated = NOW - 30};
}

static cli_wait_node_t node(const char *name, long long preds, long long satisfied)
{
    return (cli_wait_node_t){.node = name, .preds = preds, .satisfied = satisfied};
}

static json_t *analyse(const cli_wait_stack_t *s, const cli_wait_node_t *n, size_t count)
{
    return cli_waiting_analyse(s, n, count, NOW, 60);
}

static const char *str(const json_t *v, const char *path)
{
    const char *s = json_string_value(json_object_get(v, path));
    return s ? s : "(none)";
}

static double num(const json_t *v, const char *field)
{
    return json_number_value(json_object_get(v, field));
}

static void test_a_traversal_not_expanded_waits_for_its_expansion(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    s.expanded = 1;
    cli_wait_node_t n = node("u/a", 0, 0); /* an older graph's: not looked at */
    json_t *w = analyse(&s, &n, 1);
    assert_string_equal(str(w, "phase"), "expanding");
    assert_contains(str(w, "reason"), "STACK job");
    assert_int_equal(0, json_array_size(json_object_get(w, "ready")));
    json_decref(w);
}

static void test_every_node_done_waits_for_the_end_to_be_recorded(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    s.done = s.total;
    json_t *w = analyse(&s, NULL, 0);
    assert_string_equal(str(w, "phase"), "finishing");
    json_decref(w);
}

static void test_a_ready_node_nobody_leased_is_ready_not_taken(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n[] = {node("u/b", 1, 1), node("u/a", 0, 0)};
    json_t *w = analyse(&s, n, 2);
    assert_string_equal(str(w, "phase"), "acting");
    json_t *ready = json_object_get(w, "ready");
    assert_int_equal(2, json_array_size(ready));
    assert_string_equal(str(json_array_get(ready, 0), "resource"), "a");
    assert_string_equal(str(json_array_get(ready, 1), "resource"), "b");
    assert_contains(str(json_array_get(ready, 0), "reason"), "no worker holds its lease");
    assert_int_equal(0, json_array_size(json_object_get(w, "in_action")));
    json_decref(w);
}

static void test_a_node_whose_predecessors_are_not_done_is_blocked(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n[] = {node("u/c", 2, 1), node("u/d", 1, 0), node("u/x", -1, 0)};
    json_t *w = analyse(&s, n, 3);
    assert_int_equal(3, json_integer_value(json_object_get(w, "blocked")));
    assert_int_equal(0, json_array_size(json_object_get(w, "ready")));
    assert_int_equal(0, json_array_size(json_object_get(w, "in_action")));
    json_decref(w);
}

static void test_done_nodes_wait_on_nothing(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/a", 0, 0);
    n.done = true;
    n.lease = "engine-1:4";
    json_t *w = analyse(&s, &n, 1);
    assert_int_equal(0, json_array_size(json_object_get(w, "in_action")));
    assert_int_equal(0, json_array_size(json_object_get(w, "ready")));
    assert_int_equal(0, json_integer_value(json_object_get(w, "blocked")));
    json_decref(w);
}

static void test_a_held_lease_names_the_engine_acting(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/web", 0, 0);
    n.lease = "engine-2@6610513c51590-7e2a:17";
    n.lease_ttl_ms = 4200;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_non_null(e);
    assert_string_equal(str(e, "resource"), "web");
    assert_string_equal(str(e, "waiting_on"), "lease");
    assert_string_equal(str(e, "worker"), "engine-2");
    assert_true(num(e, "lease_ttl") == 4.2);
    assert_contains(str(e, "reason"), "under the lease of worker engine-2");
    assert_true(json_is_null(json_object_get(e, "since"))); /* nothing recorded yet */
    json_decref(w);
}

/* The worker id is what precedes the first '@' (an id has none, and may
 * have colons); a token of an engine from before incarnations has no '@'. */
static void test_the_lease_holder_is_the_worker_id_without_the_incarnation(void **state)
{
    (void)state;
    static const char *const tokens[][2] = {{"engine:eu-1@6610513c51590-7e2a:s3", "engine:eu-1"},
                                            {"engine-1:4", "engine-1"}};
    for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
        cli_wait_stack_t s = acting();
        cli_wait_node_t n = node("u/web", 0, 0);
        n.lease = tokens[i][0];
        json_t *w = analyse(&s, &n, 1);
        json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
        assert_non_null(e);
        assert_string_equal(str(e, "worker"), tokens[i][1]);
        json_decref(w);
    }
}

static void test_a_lease_held_on_a_blocked_node_is_an_older_action_running(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/web", 1, 0);
    n.lease = "engine-1:3";
    json_t *rec =
        json_pack("{s:s, s:s, s:s, s:s, s:s}", "status", "CREATE_IN_PROGRESS", "action", "CREATE",
                  "type", "OS::Heat::None", "traversal", "1", "started", "990.5");
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "waiting_on"), "lease");
    assert_string_equal(str(e, "action"), "CREATE");
    assert_true(num(e, "for") == 9.5);
    assert_int_equal(0, json_integer_value(json_object_get(w, "blocked")));
    json_decref(w);
    json_decref(rec);
}

static json_t *test_resource(const char *status, const char *started, const char *data)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "status", status, "action", "CREATE",
                     "type", "OS::Heat::TestResource", "physical_id", "p-1", "traversal", "2",
                     "started", started, "data", data);
}

static void test_a_recorded_wait_says_how_long_and_how_much_is_left(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/slow", 0, 0);
    json_t *rec = test_resource("CREATE_IN_PROGRESS", "998.8", "{\"wait\":3.0,\"fail\":false}");
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "resource"), "slow");
    assert_string_equal(str(e, "waiting_on"), "type");
    assert_string_equal(str(e, "type"), "OS::Heat::TestResource");
    assert_string_equal(str(e, "action"), "CREATE");
    assert_true(num(e, "since") == 998.8);
    assert_true(num(e, "for") == 1.2);
    assert_true(num(e, "wait") == 3.0);
    assert_true(num(e, "left") == 1.8);
    assert_contains(str(e, "reason"), "the observer waits for OS::Heat::TestResource");
    assert_contains(str(e, "reason"), "takes 3.0s (1.8s left)");
    json_decref(w);
    json_decref(rec);
}

static void test_an_older_traversals_action_is_let_end_first(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/slow", 0, 0);
    json_t *rec = test_resource("CREATE_IN_PROGRESS", "998", "{\"wait\":5}");
    json_object_set_new(rec, "traversal", json_string("1"));
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_int_equal(1, json_integer_value(json_object_get(e, "traversal")));
    assert_contains(str(e, "reason"),
                    "its CREATE takes 5.0s (3.0s left) — an action of traversal 1");
    json_decref(w);
    json_decref(rec);
}

static void test_an_older_action_a_delete_stops_is_said_stopped(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    s.status = "DELETE_IN_PROGRESS";
    s.stops_older = true;
    cli_wait_node_t n = node("c/slow", 0, 0);
    json_t *rec = test_resource("DELETE_IN_PROGRESS", "998", "{\"wait\":5}");
    json_object_set_new(rec, "traversal", json_string("2"));
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_false(strstr(str(e, "reason"), "traversal 2")); /* its own action */
    json_decref(w);
    json_object_set_new(rec, "traversal", json_string("1"));
    w = analyse(&s, &n, 1);
    e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_contains(str(e, "reason"), "an action of traversal 1, which this traversal stops");
    json_decref(w);
    json_decref(rec);
}

static void test_a_wait_past_due_says_so(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/slow", 0, 0);
    json_t *rec = test_resource("CREATE_IN_PROGRESS", "990", "{\"wait\":3}");
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_true(num(e, "left") == -7.0);
    assert_contains(str(e, "reason"), "due 7.0s ago");
    json_decref(w);
    json_decref(rec);
}

static void test_a_wait_forever_has_no_time_left(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/stuck", 0, 0);
    json_t *rec = test_resource("CREATE_IN_PROGRESS", "900", "{\"wait\":-1}");
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_true(json_is_null(json_object_get(e, "left")));
    assert_contains(str(e, "reason"), "waits forever");
    json_decref(w);
    json_decref(rec);
}

static void test_a_type_with_no_known_wait_is_waited_for_by_name(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/v", 0, 0);
    json_t *rec = json_pack("{s:s, s:s, s:s, s:s}", "status", "UPDATE_IN_PROGRESS", "action",
                            "UPDATE", "type", "OS::Heat::Value", "started", "999");
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "waiting_on"), "type");
    assert_contains(str(e, "reason"), "waits for OS::Heat::Value to report its UPDATE complete");
    json_decref(w);
    json_decref(rec);
}

static void test_a_nested_resource_names_its_child_stack_and_status(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/app", 0, 0);
    json_t *rec =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "status", "CREATE_IN_PROGRESS", "action",
                  "CREATE", "type", "server.yaml", "physical_id", "00112233aabbccdd", "started",
                  "995", "data", "{\"stack\":\"00112233aabbccdd\",\"traversal\":1}");
    json_t *children = tu_json("{\"00112233aabbccdd\": {\"exists\": true, \"name\": "
                               "\"top-app-00112233aabb\", \"status\": \"CREATE_IN_PROGRESS\", "
                               "\"reason\": \"Stack CREATE started\", \"done\": 1, \"total\": 3}}");
    n.record = rec;
    n.children = children;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "waiting_on"), "child_stack");
    json_t *child = json_object_get(e, "child");
    assert_string_equal(str(child, "id"), "00112233aabbccdd");
    assert_string_equal(str(child, "name"), "top-app-00112233aabb");
    assert_string_equal(str(child, "status"), "CREATE_IN_PROGRESS");
    assert_contains(str(e, "reason"),
                    "nested stack top-app-00112233aabb (00112233aabbccdd): CREATE_IN_PROGRESS, "
                    "1/3 done");
    json_decref(w);
    json_decref(children);
    json_decref(rec);
}

static void test_a_service_names_its_replicas_not_yet_healthy(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/web", 0, 0);
    json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "status", "CREATE_IN_PROGRESS",
                            "action", "CREATE", "type", "Converge::Service", "physical_id",
                            "s1.web.0011aabb", "started", "995", "data", "{}");
    json_t *rows =
        tu_json("[{\"name\": \"web-0.demo\", \"status\": \"healthy\", \"node\": \"n1\"},"
                " {\"name\": \"web-1.demo\", \"status\": \"starting\", \"node\": \"n2\"},"
                " {\"name\": \"web-2.demo\", \"status\": \"unplaced\", \"node\": null,"
                "  \"reason\": \"NodeCapacity eliminated n3\"}]");
    n.record = rec;
    n.replicas = rows;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "waiting_on"), "replicas");
    assert_int_equal(json_array_size(json_object_get(e, "replicas")), 2);
    assert_contains(str(e, "reason"), "waits for its replicas: 1 of 3 healthy");
    assert_contains(str(e, "reason"), "web-1.demo starting on n2");
    assert_contains(str(e, "reason"), "web-2.demo unplaced: NodeCapacity eliminated n3");
    json_decref(w);
    json_decref(rows);
    json_decref(rec);
}

static void test_a_child_stack_not_begun_yet_is_said_missing(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/app", 0, 0);
    json_t *rec = json_pack("{s:s, s:s, s:s, s:s}", "status", "CREATE_IN_PROGRESS", "action",
                            "CREATE", "type", "server.yaml", "data", "{\"stack\":\"ab12\"}");
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "waiting_on"), "child_stack");
    assert_true(json_is_false(json_object_get(json_object_get(e, "child"), "exists")));
    assert_contains(str(e, "reason"), "does not exist");
    json_decref(w);
    json_decref(rec);
}

static void test_a_cleanup_waits_on_the_replaced_version_being_deleted(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("c/db", 1, 1);
    json_t *rec =
        json_pack("{s:s, s:s, s:s, s:s, s:s}", "status", "UPDATE_COMPLETE", "action", "UPDATE",
                  "type", "OS::Heat::TestResource", "physical_id", "new", "old",
                  "[{\"uuid\":\"u1\",\"physical_id\":\"older\",\"type\":\"OS::Heat::TestResource\","
                  "\"status\":\"DELETE_IN_PROGRESS\",\"started\":996,\"data\":{\"wait\":10}},"
                  "{\"uuid\":\"u2\",\"physical_id\":\"old\",\"type\":\"OS::Heat::TestResource\","
                  "\"status\":\"DELETE_IN_PROGRESS\",\"started\":998,\"data\":{\"wait\":10}}]");
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "action"), "DELETE");
    assert_string_equal(str(e, "physical_id"), "older"); /* the first delete begun */
    assert_true(json_is_true(json_object_get(e, "replaced")));
    assert_true(num(e, "left") == 6.0);
    json_decref(w);
    json_decref(rec);
}

static void test_a_cleanup_of_the_resource_itself_is_its_delete(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("c/gone", 0, 0);
    json_t *rec = test_resource("DELETE_IN_PROGRESS", "999", "{\"wait\":5}");
    json_object_set_new(rec, "action", json_string("DELETE"));
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "action"), "DELETE");
    assert_true(json_is_false(json_object_get(e, "replaced")));
    json_decref(w);
    json_decref(rec);
}

static void test_an_update_node_with_a_complete_record_is_ready(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/a", 0, 0);
    json_t *rec = test_resource("CREATE_COMPLETE", "900", "{}");
    n.record = rec;
    json_t *w = analyse(&s, &n, 1);
    assert_int_equal(1, json_array_size(json_object_get(w, "ready")));
    assert_int_equal(0, json_array_size(json_object_get(w, "in_action")));
    json_decref(w);
    json_decref(rec);
}

static void test_actions_are_listed_longest_running_first(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    json_t *r1 = test_resource("CREATE_IN_PROGRESS", "999", "{\"wait\":9}");
    json_t *r2 = test_resource("CREATE_IN_PROGRESS", "950", "{\"wait\":90}");
    cli_wait_node_t n[] = {node("u/young", 0, 0), node("u/old", 0, 0), node("u/leased", 0, 0)};
    n[0].record = r1;
    n[1].record = r2;
    n[2].lease = "engine-1:1";
    json_t *w = analyse(&s, n, 3);
    json_t *list = json_object_get(w, "in_action");
    assert_string_equal(str(json_array_get(list, 0), "resource"), "old");
    assert_string_equal(str(json_array_get(list, 1), "resource"), "young");
    assert_string_equal(str(json_array_get(list, 2), "resource"), "leased");
    json_decref(w);
    json_decref(r1);
    json_decref(r2);
}

static void test_no_progress_past_the_threshold_is_a_stall(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    s.progress = NOW - 75;
    s.updated = NOW - 100;
    json_t *w = analyse(&s, NULL, 0);
    assert_true(json_is_true(json_object_get(w, "stalled")));
    assert_true(num(w, "idle") == 75.0);
    assert_true(num(w, "stalled_after") == 60.0);
    json_decref(w);
    s.progress = NOW - 59;
    w = analyse(&s, NULL, 0);
    assert_true(json_is_false(json_object_get(w, "stalled")));
    json_decref(w);
}

static void test_a_traversal_that_just_began_is_not_stalled(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    s.progress = NOW - 500; /* an older traversal's */
    s.updated = NOW - 2;    /* this one began */
    json_t *w = analyse(&s, NULL, 0);
    assert_true(json_is_false(json_object_get(w, "stalled")));
    assert_true(num(w, "idle") == 2.0);
    json_decref(w);
}

static void test_a_resource_paused_at_a_hook_waits_for_it_to_be_cleared(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/a", 0, 0);
    json_t *hook = tu_json("{\"traversal\": \"2\", \"waiting\": \"pre-create\", "
                           "\"since\": \"995.5\", \"node\": \"u/a\", \"action\": \"INIT\"}");
    n.hook = hook;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "waiting_on"), "hook");
    assert_string_equal(str(e, "hook"), "pre-create");
    assert_string_equal(str(e, "action"), "CREATE");
    assert_true(num(e, "for") == 4.5);
    assert_contains(str(e, "reason"), "CREATE paused until Hook pre-create is cleared");
    assert_contains(str(e, "reason"), "convergectl hook-clear web a");
    assert_int_equal(0, json_array_size(json_object_get(w, "ready")));
    json_decref(w);
    json_decref(hook);
}

static void test_a_hook_of_an_older_traversal_or_cleared_is_no_wait(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n[] = {node("u/a", 0, 0), node("u/b", 0, 0)};
    json_t *old = tu_json("{\"traversal\": \"1\", \"waiting\": \"pre-create\"}");
    json_t *cleared = tu_json("{\"traversal\": \"2\", \"cleared\": [\"pre-create\"]}");
    n[0].hook = old;
    n[1].hook = cleared;
    json_t *w = analyse(&s, n, 2);
    assert_int_equal(0, json_array_size(json_object_get(w, "in_action")));
    assert_int_equal(2, json_array_size(json_object_get(w, "ready")));
    json_decref(w);
    json_decref(old);
    json_decref(cleared);
}

static json_t *wait_condition(const char *started)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "status", "CREATE_IN_PROGRESS", "action",
                     "CREATE", "type", "OS::Heat::WaitCondition", "started", started, "props",
                     "{\"handle\":\"h-1\",\"timeout\":60,\"count\":2}", "data", "{}");
}

static void test_a_wait_condition_counts_the_signals_its_handle_received(void **state)
{
    (void)state;
    cli_wait_stack_t s = acting();
    cli_wait_node_t n = node("u/wait", 1, 1);
    json_t *rec = wait_condition("990");
    json_t *handle = json_pack("{s:s, s:s, s:s, s:s}", "name", "handle", "type",
                               "OS::Heat::WaitConditionHandle", "physical_id", "h-1", "data",
                               "{\"signals\":[{\"id\":\"1\",\"status\":\"SUCCESS\"}]}");
    n.record = rec;
    n.watched = handle;
    json_t *w = analyse(&s, &n, 1);
    json_t *e = json_array_get(json_object_get(w, "in_action"), 0);
    assert_string_equal(str(e, "waiting_on"), "signal");
    assert_int_equal(1, json_integer_value(json_object_get(e, "signals")));
    assert_int_equal(2, json_integer_value(json_object_get(e, "signals_wanted")));
    assert_true(num(e, "left") == 50.0);
    assert_string_equal(str(e, "reason"),
                        "waits for signals to its handle handle: 1 of 2 received (times out in "
                        "50s)");
    json_decref(w);
    json_decref(handle);
    json_decref(rec);
}

static void test_a_wait_condition_names_what_it_watches(void **state)
{
    (void)state;
    char ref[64] = "";
    json_t *rec = wait_condition("990");
    assert_true(cli_waiting_watches(rec, ref, sizeof(ref)));
    assert_string_equal(ref, "h-1");
    json_decref(rec);
    rec = test_resource("CREATE_IN_PROGRESS", "990", "{}");
    assert_false(cli_waiting_watches(rec, ref, sizeof(ref)));
    json_decref(rec);
}

static void test_child_ids_come_from_the_data_of_every_version(void **state)
{
    (void)state;
    json_t *rec = json_pack("{s:s, s:s}", "data", "{\"stack\":\"aa11\"}", "old",
                            "[{\"data\":{\"stack\":\"bb22\"}},{\"data\":{\"stack\":\"../x\"}},"
                            "{\"data\":{}}]");
    json_t *ids = cli_waiting_child_ids(rec);
    assert_int_equal(2, json_array_size(ids));
    assert_string_equal(json_string_value(json_array_get(ids, 0)), "aa11");
    assert_string_equal(json_string_value(json_array_get(ids, 1)), "bb22");
    json_decref(ids);
    json_decref(rec);
    ids = cli_waiting_child_ids(NULL);
    assert_int_equal(0, json_array_size(ids));
    json_decref(ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_traversal_not_expanded_waits_for_its_expansion),
        cmocka_unit_test(test_every_node_done_waits_for_the_end_to_be_recorded),
        cmocka_unit_test(test_a_ready_node_nobody_leased_is_ready_not_taken),
        cmocka_unit_test(test_a_node_whose_predecessors_are_not_done_is_blocked),
        cmocka_unit_test(test_done_nodes_wait_on_nothing),
        cmocka_unit_test(test_a_held_lease_names_the_engine_acting),
        cmocka_unit_test(test_the_lease_holder_is_the_worker_id_without_the_incarnation),
        cmocka_unit_test(test_a_lease_held_on_a_blocked_node_is_an_older_action_running),
        cmocka_unit_test(test_a_recorded_wait_says_how_long_and_how_much_is_left),
        cmocka_unit_test(test_an_older_traversals_action_is_let_end_first),
        cmocka_unit_test(test_an_older_action_a_delete_stops_is_said_stopped),
        cmocka_unit_test(test_a_wait_past_due_says_so),
        cmocka_unit_test(test_a_wait_forever_has_no_time_left),
        cmocka_unit_test(test_a_type_with_no_known_wait_is_waited_for_by_name),
        cmocka_unit_test(test_a_nested_resource_names_its_child_stack_and_status),
        cmocka_unit_test(test_a_service_names_its_replicas_not_yet_healthy),
        cmocka_unit_test(test_a_child_stack_not_begun_yet_is_said_missing),
        cmocka_unit_test(test_a_cleanup_waits_on_the_replaced_version_being_deleted),
        cmocka_unit_test(test_a_cleanup_of_the_resource_itself_is_its_delete),
        cmocka_unit_test(test_an_update_node_with_a_complete_record_is_ready),
        cmocka_unit_test(test_actions_are_listed_longest_running_first),
        cmocka_unit_test(test_no_progress_past_the_threshold_is_a_stall),
        cmocka_unit_test(test_a_traversal_that_just_began_is_not_stalled),
        cmocka_unit_test(test_a_resource_paused_at_a_hook_waits_for_it_to_be_cleared),
        cmocka_unit_test(test_a_hook_of_an_older_traversal_or_cleared_is_no_wait),
        cmocka_unit_test(test_a_wait_condition_counts_the_signals_its_handle_received),
        cmocka_unit_test(test_a_wait_condition_names_what_it_watches),
        cmocka_unit_test(test_child_ids_come_from_the_data_of_every_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
