/*
 * The live planner (cv_reconcile) when every node a service may run on has
 * given up on it: the plan says so in `blocked` — which nodes, blocklisted
 * until when, and the start error each agent gave — once an index waits
 * and every eligible node (usable, allowed by the placement constraints)
 * is blocklisted; never while one eligible node is not, even a full one. A
 * changed process gives the blocklisted nodes a new chance, and so does
 * time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_reconcile_fixture.h"

#define START_ERROR                                                                                \
    "exec /no/such/converge-cmd: No such file or directory; the restart policy gave up after 1 "   \
    "restarts"

/* The agent of index `index`'s node reports that its restart policy gave
 * up, with the start error. */
static void give_up(json_t *m, const json_t *plan, int index, const char *reason)
{
    json_t *report = json_object_get(rx_nodeobj(m, rx_node_of(plan, index)), "report");
    json_object_set_new(report, rx_rid_of(plan, index),
                        json_pack("{s:s, s:s, s:b, s:s}", "rid", rx_rid_of(plan, index), "state",
                                  "failed", "gave_up", 1, "reason", reason));
}

/* Nodes a and b (zone fd1, fd2) may take the service; c (zone fd3) is
 * usable but its placement constraint keeps it off. */
static json_t *two_eligible_of_three(void)
{
    json_t *m = rx_model();
    rx_node(m, "a", "fd1", "ud1", 1000);
    rx_node(m, "b", "fd2", "ud2", 1000);
    rx_node(m, "c", "fd3", "ud3", 1000);
    rx_service(m, RX_SVC, 1, false);
    json_object_set_new(rx_spec(m, RX_SVC), "placementConstraints", json_string("zone != fd3"));
    return m;
}

/* Plans rounds, each node the replica lands on giving up, until it is
 * placed nowhere; returns that plan. */
static json_t *give_up_everywhere(json_t *m, const char *reason)
{
    json_t *p = rx_round(m, RX_SVC);
    while (rx_node_of(p, 0)[0]) {
        give_up(m, p, 0, reason);
        json_decref(p);
        p = rx_round(m, RX_SVC);
    }
    return p;
}

static const char *blocked_text(const json_t *plan)
{
    return json_string_value(json_object_get(json_object_get(plan, "blocked"), "description"));
}

static void
test_every_eligible_node_blocklisted_blocks_with_the_blocklist_and_start_error(void **state)
{
    (void)state;
    json_t *m = two_eligible_of_three();
    json_t *p = give_up_everywhere(m, START_ERROR);
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 1);
    const char *text = blocked_text(p);
    assert_non_null(text);
    assert_non_null(strstr(text, "every eligible node is blocklisted"));
    assert_non_null(strstr(text, "a until 1970-01-12T13:56:40Z"));
    assert_non_null(strstr(text, "b until 1970-01-12T13:56:40Z"));
    assert_null(strstr(text, "c until"));
    assert_non_null(strstr(text, "the restart policy gave up there: " START_ERROR));
    const json_t *nodes = json_object_get(json_object_get(p, "blocked"), "nodes");
    assert_int_equal(json_object_size(nodes), 2);
    const json_t *a = json_object_get(nodes, "a");
    assert_true(json_number_value(json_object_get(a, "until")) == RX_NOW + 600);
    assert_string_equal(json_string_value(json_object_get(a, "reason")), START_ERROR);
    assert_true(rx_event(p, "service web: every eligible node is blocklisted"));
    const json_t *h = rx_health(p, "ServiceAllNodesBlocklisted");
    assert_non_null(h);
    assert_non_null(strstr(json_string_value(json_object_get(h, "description")), START_ERROR));
    json_decref(p);
    /* the verdict stands, and says nothing new */
    p = rx_plan(m, RX_SVC);
    assert_non_null(blocked_text(p));
    assert_false(json_is_true(json_object_get(p, "changed")));
    json_decref(p);
    json_decref(m);
}

static void test_nodes_that_gave_different_errors_are_each_named_with_theirs(void **state)
{
    (void)state;
    json_t *m = two_eligible_of_three();
    json_t *p = rx_round(m, RX_SVC);
    const char *first = strcmp(rx_node_of(p, 0), "a") == 0 ? "a" : "b";
    give_up(m, p, 0, "exit 1");
    json_decref(p);
    p = rx_round(m, RX_SVC);
    give_up(m, p, 0, "signal 9");
    json_decref(p);
    p = rx_round(m, RX_SVC);
    char want[64];
    snprintf(want, sizeof(want), "on %s: exit 1", first);
    assert_non_null(blocked_text(p));
    assert_non_null(strstr(blocked_text(p), want));
    assert_non_null(strstr(blocked_text(p), ": signal 9"));
    json_decref(p);
    json_decref(m);
}

static void test_one_eligible_node_not_blocklisted_keeps_the_service_waiting(void **state)
{
    (void)state;
    json_t *m = two_eligible_of_three();
    json_object_del(rx_spec(m, RX_SVC), "placementConstraints"); /* c is eligible too */
    json_t *c = json_object_get(json_object_get(rx_nodeobj(m, "c"), "description"), "capacities");
    json_object_set_new(c, "MemoryMB", json_integer(10)); /* and full */
    json_t *p = give_up_everywhere(m, START_ERROR);
    assert_int_equal(json_object_size(json_object_get(p, "blocklist")), 2);
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 1);
    assert_true(json_is_null(json_object_get(p, "blocked")));
    assert_false(rx_event(p, "every eligible node is blocklisted"));
    json_decref(p);
    json_decref(m);
}

static void test_a_node_not_yet_blocklisted_after_a_give_up_does_not_block(void **state)
{
    (void)state;
    json_t *m = two_eligible_of_three();
    json_object_set_new(m, "settings", json_pack("{s:{s:i}}", "live", "blocklistAfterFailures", 2));
    json_t *p = rx_round(m, RX_SVC);
    give_up(m, p, 0, START_ERROR);
    json_decref(p);
    p = rx_round(m, RX_SVC);
    give_up(m, p, 0, START_ERROR);
    json_decref(p);
    p = rx_plan(m, RX_SVC); /* one failure counted on each: none blocklisted */
    assert_int_equal(json_object_size(json_object_get(p, "blocklist")), 0);
    assert_true(json_is_null(json_object_get(p, "blocked")));
    json_decref(p);
    json_decref(m);
}

static void test_a_changed_process_gives_the_blocklisted_nodes_a_new_chance(void **state)
{
    (void)state;
    json_t *m = two_eligible_of_three();
    json_decref(give_up_everywhere(m, START_ERROR));
    json_object_set_new(json_object_get(rx_spec(m, RX_SVC), "process"), "digest",
                        json_string("d2"));
    json_t *p = rx_plan(m, RX_SVC);
    assert_true(json_is_null(json_object_get(p, "blocked")));
    assert_int_equal(json_object_size(json_object_get(p, "blocklist")), 0);
    assert_int_equal(json_object_size(json_object_get(p, "gave_up")), 0);
    assert_true(rx_node_of(p, 0)[0] != '\0');
    assert_true(rx_event(p, "no longer blocklisted for service web: its process changed"));
    json_decref(p);
    json_decref(m);
}

static void test_the_verdict_goes_with_the_blocklist_once_it_expires(void **state)
{
    (void)state;
    json_t *m = two_eligible_of_three();
    json_decref(give_up_everywhere(m, START_ERROR));
    json_object_set_new(m, "now", json_real(RX_NOW + 601));
    json_t *p = rx_plan(m, RX_SVC);
    assert_true(json_is_null(json_object_get(p, "blocked")));
    assert_int_equal(json_object_size(json_object_get(p, "gave_up")), 0);
    assert_true(rx_node_of(p, 0)[0] != '\0');
    json_decref(p);
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_every_eligible_node_blocklisted_blocks_with_the_blocklist_and_start_error),
        cmocka_unit_test(test_nodes_that_gave_different_errors_are_each_named_with_theirs),
        cmocka_unit_test(test_one_eligible_node_not_blocklisted_keeps_the_service_waiting),
        cmocka_unit_test(test_a_node_not_yet_blocklisted_after_a_give_up_does_not_block),
        cmocka_unit_test(test_a_changed_process_gives_the_blocklisted_nodes_a_new_chance),
        cmocka_unit_test(test_the_verdict_goes_with_the_blocklist_once_it_expires),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
