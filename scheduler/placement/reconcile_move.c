/*
 * reconcile_move — carrying out the moves the cluster resource manager
 * asked for (the service's `moves`: docs/crm.md "Moves"), and handing a
 * stateless replica over from a draining node.
 *
 * A move is carried out when its index is still kept on `from` and `to` is
 * usable: known, alive, enabled, not blocklisted for the service, and the
 * replica fits there (reconcile_fit.c). A move that no longer applies (the
 * index is elsewhere, gone, scaled down) or cannot be made is dropped with
 * a FAILED event saying why: the manager's next pass sees the cluster as it
 * is and may ask again.
 *
 * Stateless replicas start new, then stop old: the placement entry takes
 * the new replica id on `to` and keeps the old one in "from", which stays
 * assigned (and counted on its node) until the new replica is healthy (or
 * running, without a health check); a handover whose new replica cannot
 * run (its node down, drained, given up on) falls back to the old one.
 * Stateful replicas stop old, then start new: the index leaves `from`, is
 * held while the old replica still runs (cv__rc_hold) and is then placed on
 * `to` (placed normally when `to` no longer fits); the primary moves last.
 * Between plans the handover is the entry's "from" and, for a stateful
 * move, the move's "started": nothing else is remembered.
 */
#include "reconcile_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct move {
    int index;
    const char *key;
    json_t *m; /* the move object, in x->moves */
    const char *from, *to;
    char because[512]; /* "reason: detail" */
} move_t;

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static bool is(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static void key_of(char *buf, size_t size, int index)
{
    snprintf(buf, size, "%d", index);
}

/* Drops the move with a FAILED event saying why. */
static void abandon(rc_ctx_t *x, int index, const char *key, const char *to, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void abandon(rc_ctx_t *x, int index, const char *key, const char *to, const char *fmt, ...)
{
    char why[1024], name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    cv__rc_replica_name(x, index, name, sizeof(name));
    cv__rc_event(x, index, "PLACE", "FAILED", "move of replica %s to %s abandoned (%s)", name,
                 to ? to : "?", why);
    json_object_del(x->moves, key);
}

static bool blocklisted(const rc_ctx_t *x, const char *node)
{
    return json_number_value(json_object_get(x->blocklist, node)) > x->now ||
           json_object_get(x->avoid, node);
}

/* Whether `node` may take a replica of the service now, else why not. */
static bool usable(const rc_ctx_t *x, const char *node, char *why, size_t size)
{
    rc_node_state_t st = cv__rc_node(x, node);
    if (!st.known)
        snprintf(why, size, "node %s is not in the cluster", node);
    else if (!st.alive)
        snprintf(why, size, "node %s is down", node);
    else if (strcmp(st.admin, "enabled") != 0)
        snprintf(why, size, "node %s is %s", node, st.admin);
    else if (blocklisted(x, node))
        snprintf(why, size, "node %s is blocklisted for service %s", node, x->resource);
    else
        return true;
    return false;
}

/* The placement action a move is: the buffer is for availability. */
static cv_place_action_t action_of(const char *reason)
{
    if (is(reason, "constraint"))
        return CV_PLACE_FIX;
    if (is(reason, "defragmentation"))
        return CV_PLACE_DEFRAG;
    if (is(reason, "drain"))
        return CV_PLACE_REPLACE;
    return CV_PLACE_NEW;
}

/* The new replica of a handover is up: healthy, or running when it has no
 * health check to pass. */
static bool ready(const rc_ctx_t *x, const char *node, const char *rid)
{
    const json_t *n = json_object_get(x->nodes, node);
    json_t *report = cv__rc_json(json_object_get(json_object_get(n, "report"), rid));
    const char *state = str(report, "state");
    const json_t *check = json_object_get(x->process, "health_check");
    bool up = is(state, "healthy") || (is(state, "running") && (!check || json_is_null(check)));
    json_decref(report);
    return up;
}

static json_t *new_entry(const rc_ctx_t *x, int index, const char *node, const char *role)
{
    char rid[512];
    cv__rc_rid(rid, sizeof(rid), x->svc, index, x->gen + 1);
    return json_pack("{s:i, s:s, s:s, s:s, s:f}", "index", index, "rid", rid, "node", node, "role",
                     role ? role : "instance", "since", x->now);
}

/* The leaving replica's events are this file's (reconcile_plan.c stays
 * quiet about it). */
static void quietly_left(rc_ctx_t *x, const char *key, const char *node, const char *rid,
                         const char *why)
{
    json_object_set_new(
        x->moved_from, key,
        json_pack("{s:s, s:s, s:s, s:b}", "node", node, "rid", rid, "why", why, "quiet", 1));
}

/* "balancing: node n3 holds 80% MemoryMB" */
static void because_of(const json_t *m, char *buf, size_t size)
{
    const char *reason = str(m, "reason"), *detail = str(m, "detail");
    snprintf(buf, size, "%s%s%s", reason ? reason : "move", detail && detail[0] ? ": " : "",
             detail ? detail : "");
}

/* ---------------------------------------------------------------- handovers in progress */

/* The handover of `entry` ends with the old replica back in its place. */
static void fall_back(rc_ctx_t *x, const char *key, const json_t *entry, const char *why)
{
    int index = (int)json_integer_value(json_object_get(entry, "index"));
    const json_t *old = json_object_get(entry, "from");
    const char *to = str(entry, "node");
    json_t *back =
        json_pack("{s:i, s:O, s:O, s:O?, s:O?}", "index", index, "rid", json_object_get(old, "rid"),
                  "node", json_object_get(old, "node"), "role", json_object_get(entry, "role"),
                  "since", json_object_get(old, "since"));
    quietly_left(x, key, to, str(entry, "rid"), why);
    json_object_del(x->replace, key);
    const json_t *m = json_object_get(x->moves, key);
    char name[512];
    cv__rc_replica_name(x, index, name, sizeof(name));
    cv__rc_event(x, index, "PLACE", "FAILED", "move of replica %s to %s abandoned (%s)", name, to,
                 why);
    if (m && is(str(m, "to"), to))
        json_object_del(x->moves, key);
    json_object_set_new(x->kept, key, back); /* last: `entry` may be the kept one */
}

/* Whether the old replica of a handover can take its place again. */
static bool old_alive(const rc_ctx_t *x, const json_t *entry)
{
    rc_node_state_t st = cv__rc_node(x, str(json_object_get(entry, "from"), "node"));
    return st.known && st.alive;
}

/* Stored handovers that the judge made leave (their new node left, went
 * down, drained, or gave up on the new replica): the old replica stays. */
static void fall_back_left(rc_ctx_t *x)
{
    size_t i;
    const json_t *entry;
    json_array_foreach(json_object_get(x->rec, "placement"), i, entry)
    {
        char key[16];
        int index = (int)json_integer_value(json_object_get(entry, "index"));
        key_of(key, sizeof(key), index);
        const json_t *gone = json_object_get(x->moved_from, key);
        if (!json_object_get(entry, "from") || index >= x->target || !gone ||
            json_is_true(json_object_get(gone, "quiet")) || !old_alive(x, entry))
            continue;
        char why[512];
        snprintf(why, sizeof(why), "%s", str(gone, "why"));
        fall_back(x, key, entry, why);
    }
}

static void complete(rc_ctx_t *x, const char *key, json_t *entry)
{
    int index = (int)json_integer_value(json_object_get(entry, "index"));
    const char *to = str(entry, "node");
    const json_t *m = json_object_get(x->moves, key);
    if (!is(str(m, "to"), to))
        m = NULL; /* a newer move of the index, asked for meanwhile: it comes next */
    char name[512], because[512];
    cv__rc_replica_name(x, index, name, sizeof(name));
    because_of(m, because, sizeof(because));
    cv__rc_event(x, index, "PLACE", "COMPLETE", "replica %s moved from %s to %s (%s)", name,
                 str(json_object_get(entry, "from"), "node"), to, because);
    if (m)
        json_object_del(x->moves, key);
    json_object_del(entry, "from");
}

/* Kept handovers: done once the new replica is up; back to the old one
 * when the new one's node is down or it did not come up in time (a node
 * whose agent is gone while its heartbeat lingers must not hold a move
 * forever). */
static void progress(rc_ctx_t *x)
{
    const char *key;
    json_t *entry;
    void *tmp;
    json_object_foreach_safe(x->kept, tmp, key, entry)
    {
        if (!json_object_get(entry, "from"))
            continue;
        const char *node = str(entry, "node");
        char why[512];
        double since = json_number_value(json_object_get(entry, "since"));
        if (!cv__rc_node(x, node).alive && old_alive(x, entry)) {
            snprintf(why, sizeof(why), "node %s is down", node);
            fall_back(x, key, entry, why);
        } else if (ready(x, node, str(entry, "rid")))
            complete(x, key, entry);
        else if (since > 0 && x->now - since > x->set.handover_s && old_alive(x, entry)) {
            snprintf(why, sizeof(why), "the new replica on %s was not up within %g s", node,
                     x->set.handover_s);
            fall_back(x, key, entry, why);
        }
    }
}

/* ---------------------------------------------------------------- new moves */

/* Why the move does not apply to the kept replica any more, or NULL. */
static const char *stale(rc_ctx_t *x, const move_t *mv, const json_t *kept, char *buf, size_t size)
{
    char key[16];
    key_of(key, sizeof(key), mv->index);
    const json_t *gone = json_object_get(x->moved_from, key);
    if (mv->index >= x->target)
        snprintf(buf, size, "the service was scaled down");
    else if (gone)
        snprintf(buf, size, "it left %s: %s", str(gone, "node"), str(gone, "why"));
    else if (!kept)
        snprintf(buf, size, "the replica is not placed");
    else if (!is(str(kept, "node"), mv->from))
        snprintf(buf, size, "the replica is on %s, not on %s", str(kept, "node"), mv->from);
    else if (is(mv->from, mv->to))
        snprintf(buf, size, "the replica is on %s already", mv->to);
    else
        return NULL;
    return buf;
}

/* Whether `to` takes the replica, else why not. */
static bool target_ok(rc_ctx_t *x, const move_t *mv, char *why, size_t size)
{
    return usable(x, mv->to, why, size) &&
           cv__rc_fits(x, mv->index, mv->to, mv->from, action_of(str(mv->m, "reason")), why, size);
}

static void moving_event(rc_ctx_t *x, const move_t *mv)
{
    char name[512];
    cv__rc_replica_name(x, mv->index, name, sizeof(name));
    cv__rc_event(x, mv->index, "PLACE", "IN_PROGRESS", "replica %s moving from %s to %s (%s)", name,
                 mv->from, mv->to, mv->because);
}

/* Stateless: the new replica on `to`, the old one kept in "from". */
static void start_handover(rc_ctx_t *x, const move_t *mv, json_t *kept)
{
    json_t *entry = new_entry(x, mv->index, mv->to, str(kept, "role"));
    json_object_set_new(entry, "from",
                        json_pack("{s:O, s:O, s:O?}", "node", json_object_get(kept, "node"), "rid",
                                  json_object_get(kept, "rid"), "since",
                                  json_object_get(kept, "since")));
    quietly_left(x, mv->key, mv->from, str(kept, "rid"), mv->because);
    json_object_set_new(mv->m, "started", json_real(x->now));
    moving_event(x, mv);
    json_object_set_new(x->kept, mv->key, entry);
}

/* Stateful: the index is placed on `to` once its old replica has stopped. */
static void place_stopped(rc_ctx_t *x, const move_t *mv)
{
    char why[1024];
    cv__rc_hold(x);
    if (json_object_get(x->held, mv->key))
        return; /* the old replica still runs: it is counted where it runs */
    if (!target_ok(x, mv, why, sizeof(why))) {
        json_object_set_new(x->replace, mv->key, json_string("moving"));
        abandon(x, mv->index, mv->key, mv->to, "%s; placed where it fits", why);
        return;
    }
    char name[512];
    cv__rc_replica_name(x, mv->index, name, sizeof(name));
    cv__rc_event(x, mv->index, "PLACE", "COMPLETE", "replica %s moved from %s to %s (%s)", name,
                 mv->from, mv->to, mv->because);
    json_object_set_new(x->kept, mv->key, new_entry(x, mv->index, mv->to, str(mv->m, "role")));
    json_object_del(x->moves, mv->key);
}

/* Stateful: the old replica leaves first (an index never runs twice). */
static void start_stop_first(rc_ctx_t *x, const move_t *mv, json_t *kept)
{
    json_object_set_new(mv->m, "started", json_real(x->now));
    json_object_set(mv->m, "role", json_object_get(kept, "role"));
    quietly_left(x, mv->key, mv->from, str(kept, "rid"), mv->because);
    json_object_del(x->kept, mv->key);
    moving_event(x, mv);
    place_stopped(x, mv);
}

static bool others_in_flight(const rc_ctx_t *x, const char *key)
{
    return json_object_size(x->moves) > (json_object_get(x->moves, key) ? 1u : 0u);
}

/* One move of the service; `primary` says whether this round is the
 * primary's (it goes last). */
static void carry_out(rc_ctx_t *x, move_t *mv, bool primary_round)
{
    json_t *kept = json_object_get(x->kept, mv->key);
    bool stateful = x->s->stateful;
    bool primary = stateful && is(str(kept ? kept : mv->m, "role"), "primary");
    char buf[1024];
    if (primary != primary_round)
        return;
    if (stateful && json_object_get(mv->m, "started") && !kept) {
        if (mv->index >= x->target)
            abandon(x, mv->index, mv->key, mv->to, "the service was scaled down");
        else
            place_stopped(x, mv);
        return;
    }
    if (kept && json_object_get(kept, "from"))
        return; /* a handover in progress: this move waits for it */
    const char *why = stale(x, mv, kept, buf, sizeof(buf));
    if (why) {
        abandon(x, mv->index, mv->key, mv->to, "%s", why);
        return;
    }
    if (primary && others_in_flight(x, mv->key))
        return; /* the primary moves last */
    if (!target_ok(x, mv, buf, sizeof(buf))) {
        abandon(x, mv->index, mv->key, mv->to, "%s", buf);
        return;
    }
    if (stateful)
        start_stop_first(x, mv, kept);
    else
        start_handover(x, mv, kept);
}

/* Each move of x->moves once, in the round it belongs to. */
static void each_move(rc_ctx_t *x, bool primary_round)
{
    const char *key;
    json_t *m;
    void *tmp;
    json_object_foreach_safe(x->moves, tmp, key, m)
    {
        char *end;
        long index = strtol(key, &end, 10);
        move_t mv = {.index = (int)index, .key = key, .m = m};
        mv.from = str(m, "from");
        mv.to = str(m, "to");
        if (*end || end == key || index < 0 || index > 1000000 || !mv.from || !mv.to) {
            json_object_del(x->moves, key); /* not a move svc_move.lua writes */
            continue;
        }
        because_of(m, mv.because, sizeof(mv.because));
        carry_out(x, &mv, primary_round);
    }
}

void cv__rc_moves(rc_ctx_t *x)
{
    if (!x->s)
        return;
    fall_back_left(x);
    progress(x);
    each_move(x, false);
    each_move(x, true);
}

/* ---------------------------------------------------------------- draining nodes */

static json_t *entry_of(const json_t *list, int index)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) == index)
            return e;
    }
    return NULL;
}

/* The old replica stays where it is: no other node takes it now. */
static void stay(rc_ctx_t *x, int index, const json_t *stored)
{
    size_t i, at = json_array_size(x->placement);
    json_t *e;
    json_array_foreach(x->placement, i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) > index && at > i)
            at = i;
    }
    json_array_insert_new(x->placement, at, json_deep_copy(stored));
    json_array_foreach(x->unplaced, i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) == index) {
            json_array_remove(x->unplaced, i);
            break;
        }
    }
    char property[64], name[512];
    snprintf(property, sizeof(property), "ReplicaDrainWaiting_%d", index);
    cv__rc_replica_name(x, index, name, sizeof(name));
    cv__rc_report(x, property, "Warning",
                  "Replica %s stays on draining node %s: no other node can take it now", name,
                  str(stored, "node"));
}

static void drain_handover(rc_ctx_t *x, const char *key, json_t *gone, json_t *entry,
                           const json_t *stored)
{
    const char *from = str(gone, "node");
    json_object_set_new(entry, "from",
                        json_pack("{s:s, s:O, s:O?}", "node", from, "rid",
                                  json_object_get(gone, "rid"), "since",
                                  json_object_get(stored, "since")));
    json_t *m = json_pack("{s:s, s:O, s:s, s:O, s:f, s:f}", "from", from, "to",
                          json_object_get(entry, "node"), "reason", "drain", "detail",
                          json_object_get(gone, "why"), "at", x->now, "started", x->now);
    json_object_set_new(x->moves, key, m);
    move_t mv = {.index = atoi(key), .key = key, .m = m, .from = from, .to = str(entry, "node")};
    because_of(m, mv.because, sizeof(mv.because));
    moving_event(x, &mv);
    json_object_set_new(gone, "quiet", json_true());
}

void cv__rc_handovers(rc_ctx_t *x)
{
    if (!x->s || x->s->stateful)
        return;
    const char *key;
    json_t *gone;
    json_object_foreach(x->moved_from, key, gone)
    {
        int index = atoi(key);
        rc_node_state_t st = cv__rc_node(x, str(gone, "node"));
        const json_t *stored = entry_of(json_object_get(x->rec, "placement"), index);
        if (json_is_true(json_object_get(gone, "quiet")) || index >= x->target || !st.known ||
            !st.alive || strcmp(st.admin, "draining") != 0 || !stored ||
            json_object_get(stored, "from"))
            continue;
        json_t *entry = entry_of(x->placement, index);
        if (entry && !is(str(entry, "node"), str(gone, "node")))
            drain_handover(x, key, gone, entry, stored);
        else if (!entry) {
            stay(x, index, stored);
            json_object_set_new(gone, "quiet", json_true());
        }
    }
}
