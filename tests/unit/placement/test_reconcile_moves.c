/*
 * The live planner (cv_reconcile) carrying out the moves the cluster
 * resource manager asks for (docs/crm.md "Moves"): a stateless replica
 * starts on its target and its old replica stops once the new one is
 * healthy (or running, without a health check); a stateful one stops
 * first, and the primary moves last; stale and impossible moves are
 * abandoned with their reason; a draining node hands its stateless
 * replicas over the same way; a plan with nothing new commits nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_reconcile_fixture.h"

/* ---------------------------------------------------------------- fixtures */

static json_t *record(json_t *m)
{
    return json_object_get(json_object_get(m, "services"), RX_SVC);
}

/* rx_commit, and the moves the plan leaves (svc_commit.lua ARGV 14). */
static void commit(json_t *m, const json_t *plan)
{
    rx_commit(m, plan);
    const json_t *moves = json_object_get(plan, "moves");
    if (json_is_object(moves))
        json_object_set(record(m), "moves", (json_t *)moves);
    else
        json_object_del(record(m), "moves");
}

static json_t *round_of(json_t *m)
{
    json_t *p = rx_plan(m, RX_SVC);
    commit(m, p);
    return p;
}

/* What svc_move.lua writes: the move, and a new generation. */
static void ask(json_t *m, int index, const char *from, const char *to, const char *reason)
{
    json_t *moves = json_object_get(record(m), "moves");
    if (!moves) {
        moves = json_object();
        json_object_set_new(record(m), "moves", moves);
    }
    char key[16];
    snprintf(key, sizeof(key), "%d", index);
    json_object_set_new(moves, key,
                        json_pack("{s:s, s:s, s:s, s:s, s:f, s:i}", "from", from, "to", to,
                                  "reason", reason, "detail", "n1 too loaded", "at", RX_NOW,
                                  "epoch", 1));
    json_t *gen = json_object_get(record(m), "gen");
    json_object_set_new(record(m), "gen", json_integer(json_integer_value(gen) + 1));
}

/* The agent of `node` reports replica `rid` in `state`. */
static void report(json_t *m, const char *node, const char *rid, const char *state)
{
    json_object_set_new(json_object_get(rx_nodeobj(m, node), "report"), rid,
                        json_pack("{s:s, s:s}", "rid", rid, "state", state));
}

static void report_all(json_t *m, const json_t *plan, const char *state)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(plan, "placement"), i, e)
    {
        report(m, json_string_value(json_object_get(e, "node")),
               json_string_value(json_object_get(e, "rid")), state);
    }
}

static void with_health_check(json_t *m)
{
    json_object_set_new(json_object_get(rx_spec(m, RX_SVC), "process"), "health_check",
                        json_pack("{s:s, s:s}", "type", "tcp", "port", "http"));
}

/* n nodes "a", "b", ... in one fault and upgrade domain: domains never
 * stand in a move's way. */
static json_t *flat(int n, int mem)
{
    json_t *m = rx_model();
    for (int i = 0; i < n; i++) {
        char name[2] = {(char)('a' + i), 0};
        rx_node(m, name, "fd1", "ud1", mem);
    }
    return m;
}

/* A node holding no replica of the plan, other than `but`. */
static const char *free_node(const json_t *m, const json_t *plan, const char *but)
{
    const char *name;
    json_t *n;
    json_object_foreach(json_object_get(m, "nodes"), name, n)
    {
        bool used = but && strcmp(name, but) == 0;
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(plan, "placement"), i, e)
        {
            used = used || strcmp(json_string_value(json_object_get(e, "node")), name) == 0;
        }
        if (!used)
            return name;
    }
    return "";
}

static const json_t *entry_of(const json_t *plan, int index)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(plan, "placement"), i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) == index)
            return e;
    }
    return NULL;
}

static const char *from_of(const json_t *plan, int index, const char *field)
{
    return json_string_value(
        json_object_get(json_object_get(entry_of(plan, index), "from"), field));
}

static bool assigned(const json_t *m, const char *node, const char *rid)
{
    return json_object_get(json_object_get(rx_nodeobj((json_t *)m, node), "assign"), rid) != NULL;
}

static bool has_move(const json_t *plan, int index)
{
    char key[16];
    snprintf(key, sizeof(key), "%d", index);
    return json_object_get(json_object_get(plan, "moves"), key) != NULL;
}

static bool changed(const json_t *plan)
{
    return json_is_true(json_object_get(plan, "changed"));
}

static void assert_event(const json_t *plan, const char *text)
{
    if (!rx_event(plan, text)) {
        fprintf(stderr, "no event \"%s\" among:\n", text);
        rx_dump_events(plan);
        fail();
    }
}

/* ---------------------------------------------------------------- stateless */

static void test_a_stateless_move_stops_the_old_replica_once_the_new_is_healthy(void **state)
{
    (void)state;
    json_t *m = flat(4, 1000);
    rx_service(m, RX_SVC, 2, false);
    with_health_check(m);
    json_t *first = round_of(m);
    char from[8], to[8], old[128];
    snprintf(from, sizeof(from), "%s", rx_node_of(first, 0));
    snprintf(to, sizeof(to), "%s", free_node(m, first, NULL));
    snprintf(old, sizeof(old), "%s", rx_rid_of(first, 0));
    report_all(m, first, "healthy");
    ask(m, 0, from, to, "balancing");

    /* start: the new replica on `to`, the old one still assigned */
    json_t *p = round_of(m);
    assert_true(changed(p));
    assert_string_equal(rx_node_of(p, 0), to);
    assert_string_equal(from_of(p, 0, "node"), from);
    assert_string_equal(from_of(p, 0, "rid"), old);
    assert_int_equal(rx_ops(p, "assign"), 1);
    assert_int_equal(rx_ops(p, "unassign"), 0);
    assert_true(assigned(m, from, old));
    assert_true(assigned(m, to, rx_rid_of(p, 0)));
    assert_true(has_move(p, 0));
    char text[256];
    snprintf(text, sizeof(text),
             "replica web-0.demo moving from %s to %s (balancing: n1 too loaded)", from, to);
    assert_event(p, text);
    char fresh[128];
    snprintf(fresh, sizeof(fresh), "%s", rx_rid_of(p, 0));
    json_decref(p);

    /* running but not healthy yet: both stay, nothing to commit */
    report(m, to, fresh, "running");
    p = rx_plan(m, RX_SVC);
    assert_false(changed(p));
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    assert_string_equal(from_of(p, 0, "node"), from);
    json_decref(p);

    /* healthy: the old one goes, and the move with it */
    report(m, to, fresh, "healthy");
    p = round_of(m);
    assert_true(changed(p));
    assert_null(json_object_get(entry_of(p, 0), "from"));
    assert_string_equal(rx_rid_of(p, 0), fresh);
    assert_int_equal(rx_ops(p, "unassign"), 1);
    assert_int_equal(rx_ops(p, "assign"), 0);
    assert_false(assigned(m, from, old));
    assert_true(json_is_null(json_object_get(p, "moves")));
    assert_null(json_object_get(record(m), "moves"));
    snprintf(text, sizeof(text),
             "replica web-0.demo moved from %s to %s (balancing: n1 too loaded)", from, to);
    assert_event(p, text);
    json_decref(p);

    p = rx_plan(m, RX_SVC);
    assert_false(changed(p));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_stateless_move_without_health_check_is_done_when_running(void **state)
{
    (void)state;
    json_t *m = flat(4, 1000);
    rx_service(m, RX_SVC, 2, false);
    json_t *first = round_of(m);
    char from[8], to[8];
    snprintf(from, sizeof(from), "%s", rx_node_of(first, 1));
    snprintf(to, sizeof(to), "%s", free_node(m, first, NULL));
    ask(m, 1, from, to, "constraint");
    json_t *p = round_of(m);
    char fresh[128];
    snprintf(fresh, sizeof(fresh), "%s", rx_rid_of(p, 1));
    json_decref(p);
    report(m, to, fresh, "starting");
    p = rx_plan(m, RX_SVC);
    assert_false(changed(p));
    assert_string_equal(from_of(p, 1, "node"), from);
    json_decref(p);
    report(m, to, fresh, "running");
    p = round_of(m);
    assert_null(json_object_get(entry_of(p, 1), "from"));
    assert_string_equal(rx_node_of(p, 1), to);
    assert_int_equal(rx_ops(p, "unassign"), 1);
    assert_false(has_move(p, 1));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* The new replica's node goes down during the handover: the old replica
 * stays, the new one is unassigned, the move is dropped. */
static void test_a_handover_whose_target_goes_down_keeps_the_old_replica(void **state)
{
    (void)state;
    json_t *m = flat(4, 1000);
    rx_service(m, RX_SVC, 2, false);
    json_t *first = round_of(m);
    char from[8], to[8];
    snprintf(from, sizeof(from), "%s", rx_node_of(first, 0));
    snprintf(to, sizeof(to), "%s", free_node(m, first, NULL));
    ask(m, 0, from, to, "balancing");
    json_decref(round_of(m));
    rx_down(m, to, RX_NOW - 1);
    json_t *p = round_of(m);
    assert_string_equal(rx_node_of(p, 0), from);
    assert_string_equal(rx_rid_of(p, 0), rx_rid_of(first, 0));
    assert_null(json_object_get(entry_of(p, 0), "from"));
    assert_int_equal(rx_ops(p, "unassign"), 1);
    assert_int_equal(rx_ops(p, "assign"), 0);
    assert_false(has_move(p, 0));
    char text[128];
    snprintf(text, sizeof(text), "move of replica web-0.demo to %s abandoned (node %s is down)", to,
             to);
    assert_event(p, text);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* The new replica does not come up within moveHandoverSeconds (a node
 * whose agent is gone while its heartbeat lingers): the old one stays. */
static void test_a_handover_whose_new_replica_is_not_up_in_time_keeps_the_old_replica(void **state)
{
    (void)state;
    json_t *m = flat(4, 1000);
    rx_service(m, RX_SVC, 2, false);
    json_t *first = round_of(m);
    char from[8], to[8];
    snprintf(from, sizeof(from), "%s", rx_node_of(first, 0));
    snprintf(to, sizeof(to), "%s", free_node(m, first, NULL));
    ask(m, 0, from, to, "balancing");
    json_t *p = round_of(m);
    char fresh[128];
    snprintf(fresh, sizeof(fresh), "%s", rx_rid_of(p, 0));
    json_decref(p);
    report(m, to, fresh, "starting");
    json_object_set_new(m, "now", json_real(RX_NOW + CV_RECONCILE_HANDOVER_S - 1));
    p = rx_plan(m, RX_SVC);
    assert_string_equal(from_of(p, 0, "node"), from); /* still waiting */
    json_decref(p);
    json_object_set_new(m, "now", json_real(RX_NOW + CV_RECONCILE_HANDOVER_S + 1));
    p = round_of(m);
    assert_string_equal(rx_node_of(p, 0), from);
    assert_string_equal(rx_rid_of(p, 0), rx_rid_of(first, 0));
    assert_null(json_object_get(entry_of(p, 0), "from"));
    assert_false(has_move(p, 0));
    char text[256];
    snprintf(text, sizeof(text),
             "move of replica web-0.demo to %s abandoned (the new replica on %s was not up "
             "within 60 s)",
             to, to);
    assert_event(p, text);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* The restart policy gives up on the new replica: the old one stays, and
 * the target is blocklisted as for any give-up. */
static void test_a_handover_whose_new_replica_gave_up_keeps_the_old_replica(void **state)
{
    (void)state;
    json_t *m = flat(4, 1000);
    rx_service(m, RX_SVC, 2, false);
    json_t *first = round_of(m);
    char from[8], to[8];
    snprintf(from, sizeof(from), "%s", rx_node_of(first, 1));
    snprintf(to, sizeof(to), "%s", free_node(m, first, NULL));
    ask(m, 1, from, to, "balancing");
    json_t *p = round_of(m);
    json_object_set_new(
        json_object_get(rx_nodeobj(m, to), "report"), rx_rid_of(p, 1),
        json_pack("{s:s, s:b, s:s}", "state", "failed", "gave_up", 1, "reason", "exit 1"));
    json_decref(p);
    p = round_of(m);
    assert_string_equal(rx_node_of(p, 1), from);
    assert_string_equal(rx_rid_of(p, 1), rx_rid_of(first, 1));
    assert_int_equal(rx_ops(p, "unassign"), 1);
    assert_int_equal(rx_ops(p, "assign"), 0);
    assert_false(has_move(p, 1));
    assert_non_null(json_object_get(json_object_get(p, "blocklist"), to));
    char text[256];
    snprintf(text, sizeof(text),
             "move of replica web-1.demo to %s abandoned (the restart policy gave up on node %s: "
             "exit 1)",
             to, to);
    assert_event(p, text);
    json_decref(p);
    p = rx_plan(m, RX_SVC);
    assert_false(changed(p));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* ---------------------------------------------------------------- stateful */

static void test_a_stateful_replica_stops_before_it_starts_on_the_target(void **state)
{
    (void)state;
    json_t *m = flat(4, 1000);
    rx_service(m, RX_SVC, 3, true);
    json_t *first = round_of(m);
    report_all(m, first, "healthy");
    char from[8], to[8];
    snprintf(from, sizeof(from), "%s", rx_node_of(first, 2));
    snprintf(to, sizeof(to), "%s", free_node(m, first, NULL));
    ask(m, 2, from, to, "balancing");

    json_t *p = round_of(m);
    assert_string_equal(rx_node_of(p, 2), "");
    assert_int_equal(rx_ops(p, "unassign"), 1);
    assert_int_equal(rx_ops(p, "assign"), 0);
    json_t *u = json_array_get(json_object_get(p, "unplaced"), 0);
    assert_int_equal(json_integer_value(json_object_get(u, "index")), 2);
    json_t *step = json_array_get(json_object_get(u, "eliminationSequence"), 0);
    assert_string_equal(json_string_value(json_object_get(step, "constraint")), "StatefulFence");
    assert_true(has_move(p, 2));
    char text[256];
    snprintf(text, sizeof(text), "replica web-2.demo moving from %s to %s (balancing", from, to);
    assert_event(p, text);
    json_decref(p);

    /* still running there: nothing new */
    p = rx_plan(m, RX_SVC);
    assert_false(changed(p));
    json_decref(p);

    report(m, from, rx_rid_of(first, 2), "stopped");
    p = round_of(m);
    assert_string_equal(rx_node_of(p, 2), to);
    assert_int_equal(rx_ops(p, "assign"), 1);
    assert_false(has_move(p, 2));
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 0);
    snprintf(text, sizeof(text), "replica web-2.demo moved from %s to %s (balancing", from, to);
    assert_event(p, text);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* The target disabled while the old replica stops: the index is placed
 * where it fits, and the event says so. */
static void test_a_stateful_move_whose_target_no_longer_fits_is_placed_elsewhere(void **state)
{
    (void)state;
    json_t *m = flat(5, 1000);
    rx_service(m, RX_SVC, 2, true);
    json_t *first = round_of(m);
    report_all(m, first, "running");
    char from[8], to[8];
    snprintf(from, sizeof(from), "%s", rx_node_of(first, 1));
    snprintf(to, sizeof(to), "%s", free_node(m, first, NULL));
    ask(m, 1, from, to, "defragmentation");
    json_decref(round_of(m));
    json_object_set_new(rx_nodeobj(m, to), "admin", json_string("disabled"));
    report(m, from, rx_rid_of(first, 1), "stopped");
    json_t *p = round_of(m);
    assert_string_not_equal(rx_node_of(p, 1), "");
    assert_string_not_equal(rx_node_of(p, 1), to);
    assert_false(has_move(p, 1));
    char text[256];
    snprintf(text, sizeof(text),
             "move of replica web-1.demo to %s abandoned (node %s is disabled; placed where it "
             "fits)",
             to, to);
    assert_event(p, text);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static const char *role_of(const json_t *plan, int index)
{
    return json_string_value(json_object_get(entry_of(plan, index), "role"));
}

static void test_the_primary_moves_after_the_other_moves_of_its_service(void **state)
{
    (void)state;
    json_t *m = flat(5, 1000);
    rx_service(m, RX_SVC, 3, true);
    json_t *first = round_of(m);
    report_all(m, first, "healthy");
    int primary = strcmp(role_of(first, 0), "primary") == 0 ? 0 : 1;
    int secondary = primary == 0 ? 1 : 0;
    assert_string_equal(role_of(first, primary), "primary");
    char to1[8], to2[8];
    snprintf(to1, sizeof(to1), "%s", free_node(m, first, NULL));
    snprintf(to2, sizeof(to2), "%s", free_node(m, first, to1));
    ask(m, primary, rx_node_of(first, primary), to1, "balancing");
    ask(m, secondary, rx_node_of(first, secondary), to2, "balancing");

    /* the secondary leaves; the primary waits */
    json_t *p = round_of(m);
    assert_string_equal(rx_node_of(p, primary), rx_node_of(first, primary));
    assert_string_equal(rx_node_of(p, secondary), "");
    assert_true(has_move(p, primary));
    assert_null(json_object_get(json_object_get(json_object_get(p, "moves"), primary ? "1" : "0"),
                                "started"));
    json_decref(p);

    /* waiting on the secondary changes nothing */
    p = rx_plan(m, RX_SVC);
    assert_false(changed(p));
    json_decref(p);

    /* the secondary stopped: it starts on its target, then the primary goes */
    report(m, rx_node_of(first, secondary), rx_rid_of(first, secondary), "stopped");
    p = round_of(m);
    assert_string_equal(rx_node_of(p, secondary), to2);
    assert_false(has_move(p, secondary));
    assert_string_equal(rx_node_of(p, primary), "");
    assert_true(has_move(p, primary));
    json_decref(p);

    report(m, rx_node_of(first, primary), rx_rid_of(first, primary), "stopped");
    p = round_of(m);
    assert_string_equal(rx_node_of(p, primary), to1);
    assert_string_equal(role_of(p, primary), "primary");
    assert_false(has_move(p, primary));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* ---------------------------------------------------------------- abandoned */

static void test_stale_moves_are_abandoned_with_their_reason(void **state)
{
    (void)state;
    json_t *m = flat(4, 1000);
    rx_service(m, RX_SVC, 3, false);
    json_t *first = round_of(m);
    char wrong[8], to[8];
    snprintf(wrong, sizeof(wrong), "%s", rx_node_of(first, 1));
    snprintf(to, sizeof(to), "%s", free_node(m, first, NULL));
    ask(m, 0, wrong, to, "balancing");                /* index 0 is not on `wrong` */
    ask(m, 2, rx_node_of(first, 2), to, "balancing"); /* index 2 goes with the scale down */
    json_object_set_new(rx_spec(m, RX_SVC), "replicas", json_integer(2));
    json_t *p = round_of(m);
    char text[256];
    snprintf(text, sizeof(text),
             "move of replica web-0.demo to %s abandoned (the replica is on %s, not on %s)", to,
             rx_node_of(first, 0), wrong);
    assert_event(p, text);
    snprintf(text, sizeof(text),
             "move of replica web-2.demo to %s abandoned (the service was scaled down)", to);
    assert_event(p, text);
    assert_true(json_is_null(json_object_get(p, "moves")));
    assert_string_equal(rx_node_of(p, 0), rx_node_of(first, 0));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void assert_abandoned(json_t *m, int index, const char *from, const char *to,
                             const char *why)
{
    ask(m, index, from, to, "balancing");
    json_t *p = round_of(m);
    char text[256];
    snprintf(text, sizeof(text), "move of replica web-%d.demo to %s abandoned (%s)", index, to,
             why);
    assert_event(p, text);
    assert_false(has_move(p, index));
    assert_string_equal(rx_node_of(p, index), from);
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    json_decref(p);
}

static void test_a_move_to_a_node_that_cannot_take_it_is_abandoned(void **state)
{
    (void)state;
    json_t *m = flat(5, 1000);
    rx_service(m, RX_SVC, 2, false);
    json_t *first = round_of(m);
    char from[8], a[8], b[8], c[8];
    snprintf(from, sizeof(from), "%s", rx_node_of(first, 0));
    snprintf(a, sizeof(a), "%s", free_node(m, first, NULL));
    snprintf(b, sizeof(b), "%s", free_node(m, first, a));
    snprintf(c, sizeof(c), "%s", rx_node_of(first, 1));
    rx_down(m, a, RX_NOW - 1);
    json_object_set_new(rx_nodeobj(m, b), "admin", json_string("disabled"));
    char why[64];
    snprintf(why, sizeof(why), "node %s is down", a);
    assert_abandoned(m, 0, from, a, why);
    snprintf(why, sizeof(why), "node %s is disabled", b);
    assert_abandoned(m, 0, from, b, why);
    assert_abandoned(m, 0, from, "nowhere", "node nowhere is not in the cluster");
    /* a replica of the service there already */
    snprintf(why, sizeof(why), "node %s does not fit: ReplicaExclusion", c);
    assert_abandoned(m, 0, from, c, why);
    json_decref(first);
    json_decref(m);
}

/* Another service's replica assigned to `node` with a declared load. */
static void occupy(json_t *m, const char *node, int mem)
{
    json_t *assign = json_object_get(rx_nodeobj(m, node), "assign");
    json_object_set_new(
        assign, "other.svc.0/0/1",
        json_pack("{s:s, s:{s:i}}", "rid", "other.svc.0/0/1", "load", "MemoryMB", mem));
}

static void test_a_move_to_a_full_node_is_abandoned(void **state)
{
    (void)state;
    json_t *m = flat(3, 100);
    rx_service(m, RX_SVC, 2, false);
    json_t *first = round_of(m);
    char to[8];
    snprintf(to, sizeof(to), "%s", free_node(m, first, NULL));
    occupy(m, to, 80);
    char why[128];
    snprintf(why, sizeof(why), "node %s is full: MemoryMB needs 64, 20 remain", to);
    assert_abandoned(m, 1, rx_node_of(first, 1), to, why);
    json_decref(first);
    json_decref(m);
}

static void test_a_move_breaking_the_placement_constraint_is_abandoned(void **state)
{
    (void)state;
    json_t *m = flat(3, 1000);
    rx_node(m, "z", "fd2", "ud2", 1000);
    rx_service(m, RX_SVC, 2, false);
    json_object_set_new(rx_spec(m, RX_SVC), "placementConstraints", json_string("zone == fd1"));
    json_t *first = round_of(m);
    assert_abandoned(m, 0, rx_node_of(first, 0), "z", "node z does not fit: PlacementConstraint");
    json_decref(first);
    json_decref(m);
}

/* On the 3 x 3 grid, a replica moved into the fault domain of another
 * breaks the (hard) fault domain spread. */
static void test_a_move_breaking_the_domain_spread_is_abandoned(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 3, false);
    json_t *first = round_of(m);
    int fd0 = (atoi(rx_node_of(first, 0) + 1) - 1) / 3;
    int fd1 = (atoi(rx_node_of(first, 1) + 1) - 1) / 3;
    assert_int_not_equal(fd0, fd1);
    char to[8];
    for (int n = 1; n <= 9; n++) {
        snprintf(to, sizeof(to), "n%d", n);
        if ((n - 1) / 3 == fd1 && strcmp(to, rx_node_of(first, 1)) != 0)
            break;
    }
    ask(m, 0, rx_node_of(first, 0), to, "balancing");
    json_t *p = round_of(m);
    char text[128];
    snprintf(text, sizeof(text),
             "move of replica web-0.demo to %s abandoned (node %s would break the domain spread)",
             to, to);
    assert_event(p, text);
    assert_string_equal(rx_node_of(p, 0), rx_node_of(first, 0));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

/* ---------------------------------------------------------------- draining */

static void test_a_drained_stateless_replica_is_handed_over(void **state)
{
    (void)state;
    json_t *m = rx_grid(1000);
    rx_service(m, RX_SVC, 5, false);
    with_health_check(m);
    json_t *first = round_of(m);
    char drained[8], old[128];
    snprintf(drained, sizeof(drained), "%s", rx_node_of(first, 3));
    snprintf(old, sizeof(old), "%s", rx_rid_of(first, 3));
    json_object_set_new(rx_nodeobj(m, drained), "admin", json_string("draining"));
    json_t *p = round_of(m);
    char to[8], fresh[128];
    snprintf(to, sizeof(to), "%s", rx_node_of(p, 3));
    snprintf(fresh, sizeof(fresh), "%s", rx_rid_of(p, 3));
    assert_string_not_equal(to, drained);
    assert_string_equal(from_of(p, 3, "node"), drained);
    assert_int_equal(rx_ops(p, "unassign"), 0);
    assert_true(assigned(m, drained, old));
    const json_t *mv = json_object_get(json_object_get(p, "moves"), "3");
    assert_string_equal(json_string_value(json_object_get(mv, "reason")), "drain");
    assert_string_equal(json_string_value(json_object_get(mv, "to")), to);
    char text[256];
    snprintf(text, sizeof(text),
             "replica web-3.demo moving from %s to %s (drain: node %s draining)", drained, to,
             drained);
    assert_event(p, text);
    json_decref(p);

    p = rx_plan(m, RX_SVC);
    assert_false(changed(p));
    json_decref(p);

    report(m, to, fresh, "healthy");
    p = round_of(m);
    assert_false(assigned(m, drained, old));
    assert_string_equal(rx_rid_of(p, 3), fresh);
    assert_false(has_move(p, 3));
    snprintf(text, sizeof(text), "replica web-3.demo moved from %s to %s (drain: node %s draining)",
             drained, to, drained);
    assert_event(p, text);
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

static void test_a_drained_replica_with_nowhere_to_go_stays_where_it_is(void **state)
{
    (void)state;
    json_t *m = flat(2, 1000);
    rx_service(m, RX_SVC, 2, false);
    json_t *first = round_of(m);
    json_object_set_new(rx_nodeobj(m, rx_node_of(first, 1)), "admin", json_string("draining"));
    json_t *p = round_of(m);
    assert_string_equal(rx_node_of(p, 1), rx_node_of(first, 1));
    assert_string_equal(rx_rid_of(p, 1), rx_rid_of(first, 1));
    assert_int_equal(json_array_size(json_object_get(p, "ops")), 0);
    assert_int_equal(json_array_size(json_object_get(p, "unplaced")), 0);
    assert_non_null(rx_health(p, "ReplicaDrainWaiting_1"));
    json_decref(p);
    p = rx_plan(m, RX_SVC);
    assert_false(changed(p));
    json_decref(p);
    json_decref(first);
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_stateless_move_stops_the_old_replica_once_the_new_is_healthy),
        cmocka_unit_test(test_a_stateless_move_without_health_check_is_done_when_running),
        cmocka_unit_test(test_a_handover_whose_target_goes_down_keeps_the_old_replica),
        cmocka_unit_test(test_a_handover_whose_new_replica_gave_up_keeps_the_old_replica),
        cmocka_unit_test(test_a_handover_whose_new_replica_is_not_up_in_time_keeps_the_old_replica),
        cmocka_unit_test(test_a_stateful_replica_stops_before_it_starts_on_the_target),
        cmocka_unit_test(test_a_stateful_move_whose_target_no_longer_fits_is_placed_elsewhere),
        cmocka_unit_test(test_the_primary_moves_after_the_other_moves_of_its_service),
        cmocka_unit_test(test_stale_moves_are_abandoned_with_their_reason),
        cmocka_unit_test(test_a_move_to_a_node_that_cannot_take_it_is_abandoned),
        cmocka_unit_test(test_a_move_to_a_full_node_is_abandoned),
        cmocka_unit_test(test_a_move_breaking_the_placement_constraint_is_abandoned),
        cmocka_unit_test(test_a_move_breaking_the_domain_spread_is_abandoned),
        cmocka_unit_test(test_a_drained_stateless_replica_is_handed_over),
        cmocka_unit_test(test_a_drained_replica_with_nowhere_to_go_stays_where_it_is),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
