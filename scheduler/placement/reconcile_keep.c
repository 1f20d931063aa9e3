/*
 * reconcile_keep — which of a service's placed replicas stay where they
 * are. A replica stays unless: its index is past the replica count (scale
 * down: the highest indexes go first, since the count only cuts from the
 * top); its node left the cluster; its node has been down longer than the
 * grace period (a stateful replica: longer than the node's fence time plus
 * a margin too, so that its agent has stopped it before another starts —
 * an index never runs twice) and the restart policy reschedules lost
 * replicas (Always; as in BCS: OnFailure only on failure, Never never); its
 * node is draining; or the restart policy gave up on it there (not Never).
 * A node that gave up N times within M minutes is blocklisted for the
 * service for M minutes; the last give-up's reason (the agent's: the
 * start error) is kept with it, for the day every eligible node is
 * blocklisted (reconcile_blocked.c). A changed process is a new chance: a
 * node whose give-up was on another process digest than the one assigned
 * now is no longer blocklisted, nor its failures counted. Constraint
 * violations need the loaded cluster and are judged by reconcile_place.c.
 *
 * A stateful index never runs twice: a stateful replica whose process
 * digest changed leaves its node like a moved one (instead of a new replica
 * id in place), and an index whose previous replica a live node still
 * reports running is held — counted where it runs, placed nowhere — until
 * its agent has stopped it.
 */
#include "reconcile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void key_of(char *buf, size_t size, int index)
{
    snprintf(buf, size, "%d", index);
}

/* The replica leaves its node: remembered with why, for the events. */
static void leave(rc_ctx_t *x, const json_t *entry, int index, const char *why)
{
    char key[16];
    key_of(key, sizeof(key), index);
    json_t *gone = json_pack("{s:O?, s:O?, s:s}", "node", json_object_get(entry, "node"), "rid",
                             json_object_get(entry, "rid"), "why", why);
    json_object_set_new(x->moved_from, key, gone);
    if (index < x->target)
        json_object_set_new(x->replace, key, json_string(why));
}

static bool lost_is_rescheduled(const rc_ctx_t *x)
{
    return strcmp(x->policy, "Never") != 0 && strcmp(x->policy, "OnFailure") != 0;
}

/* Seconds a down node must stay down before its replicas of this service move. */
static double grace_for(const rc_ctx_t *x, const rc_node_state_t *st)
{
    double fence = (double)(st->fence_ms + x->set.fence_margin_ms) / 1000.0;
    return x->s && x->s->stateful && fence > x->set.grace_s ? fence : x->set.grace_s;
}

static const json_t *report_of(const rc_ctx_t *x, const char *node, const char *rid)
{
    const json_t *n = json_object_get(x->nodes, node);
    return json_object_get(json_object_get(n, "report"), rid);
}

static const char *process_digest(const rc_ctx_t *x)
{
    const char *digest = json_string_value(json_object_get(cv__rc_process(x), "digest"));
    return digest ? digest : "";
}

/* Counts a give-up on `node` (its report `report`); blocklists it at the
 * N-th within M minutes. */
static void count_failure(rc_ctx_t *x, const char *node, const json_t *report)
{
    const char *reason = json_string_value(json_object_get(report, "reason"));
    const char *digest = json_string_value(json_object_get(report, "digest"));
    json_object_set_new(x->avoid, node, json_true());
    json_object_set_new(x->gave_up, node,
                        json_pack("{s:s, s:s, s:f}", "reason", reason ? reason : "", "digest",
                                  digest && digest[0] ? digest : process_digest(x), "time",
                                  x->now));
    json_t *times = json_object_get(x->failures, node);
    if (!json_is_array(times)) {
        times = json_array();
        json_object_set_new(x->failures, node, times);
    }
    json_array_append_new(times, json_real(x->now));
    if ((int)json_array_size(times) < x->set.blocklist_n)
        return;
    double until = x->now + x->set.blocklist_min * 60;
    json_object_set_new(x->blocklist, node, json_real(until));
    json_object_del(x->failures, node);
    cv__rc_event(x, -1, "PLACE", "FAILED",
                 "node %s blocklisted for service %s for %g min after %d failure(s) to start there",
                 node, x->resource, x->set.blocklist_min, x->set.blocklist_n);
}

/* Gives the nodes that gave up on another process than the one assigned
 * now a new chance: their blocklist entry and failures go. */
static void forget_other_processes(rc_ctx_t *x)
{
    const char *node, *digest = process_digest(x);
    json_t *v;
    void *tmp;
    json_object_foreach_safe(x->gave_up, tmp, node, v)
    {
        const char *had = json_string_value(json_object_get(v, "digest"));
        if (!had || strcmp(had, digest) == 0)
            continue;
        if (json_object_get(x->blocklist, node))
            cv__rc_event(x, -1, "PLACE", "COMPLETE",
                         "node %s no longer blocklisted for service %s: its process changed", node,
                         x->resource);
        json_object_del(x->blocklist, node);
        json_object_del(x->failures, node);
        json_object_del(x->gave_up, node);
    }
}

/* Drops blocklist entries and failures older than their window, and the
 * give-up reasons of nodes left with neither. */
static void prune_windows(rc_ctx_t *x)
{
    const char *node;
    json_t *v;
    void *tmp;
    forget_other_processes(x);
    json_object_foreach_safe(x->blocklist, tmp, node, v)
    {
        if (!json_is_number(v) || json_number_value(v) <= x->now)
            json_object_del(x->blocklist, node);
    }
    double oldest = x->now - x->set.blocklist_min * 60;
    json_object_foreach_safe(x->failures, tmp, node, v)
    {
        json_t *recent = json_array();
        size_t i;
        json_t *t;
        json_array_foreach(v, i, t)
        {
            if (json_is_number(t) && json_number_value(t) > oldest)
                json_array_append(recent, t);
        }
        if (json_array_size(recent) > 0)
            json_object_set_new(x->failures, node, recent);
        else {
            json_decref(recent);
            json_object_del(x->failures, node);
        }
    }
    json_object_foreach_safe(x->gave_up, tmp, node, v)
    {
        if (!json_object_get(x->blocklist, node) && !json_object_get(x->failures, node))
            json_object_del(x->gave_up, node);
    }
}

/* A stateful replica whose assigned spec runs another digest leaves: its
 * successor starts only once it has stopped. Under an update policy the
 * rolling update renews it on its node instead (reconcile_rollout.c). */
static const char *stateful_renewal(const rc_ctx_t *x, const char *node, const char *rid, char *buf,
                                    size_t size)
{
    if (!x->s || !x->s->stateful || json_is_object(json_object_get(x->spec, "updatePolicy")))
        return NULL;
    const json_t *n = json_object_get(x->nodes, node);
    json_t *spec = cv__rc_json(json_object_get(json_object_get(n, "assign"), rid));
    const char *had = json_string_value(json_object_get(spec, "digest"));
    bool changed = spec && strcmp(had ? had : "", x->digest) != 0;
    json_decref(spec);
    if (!changed)
        return NULL;
    snprintf(buf, size, "process spec changed");
    return buf;
}

/* Why the replica `entry` must leave its node, or NULL when it stays. */
static const char *why_leave(rc_ctx_t *x, const json_t *entry, char *buf, size_t size)
{
    const char *node = json_string_value(json_object_get(entry, "node"));
    const char *rid = json_string_value(json_object_get(entry, "rid"));
    rc_node_state_t st = cv__rc_node(x, node ? node : "");
    if (!node || !rid || !st.known) {
        snprintf(buf, size, "node %s left the cluster", node ? node : "?");
        return buf;
    }
    if (!st.alive && lost_is_rescheduled(x) && st.down_for >= grace_for(x, &st)) {
        snprintf(buf, size, "node %s down for %.0f s", node, st.down_for);
        return buf;
    }
    if (strcmp(st.admin, "draining") == 0) {
        snprintf(buf, size, "node %s draining", node);
        return buf;
    }
    const json_t *report = report_of(x, node, rid);
    json_t *parsed = cv__rc_json(report);
    bool gave_up = json_is_true(json_object_get(parsed, "gave_up"));
    if (gave_up && strcmp(x->policy, "Never") != 0) {
        const char *reason = json_string_value(json_object_get(parsed, "reason"));
        snprintf(buf, size, "the restart policy gave up on node %s%s%s", node,
                 reason && reason[0] ? ": " : "", reason ? reason : "");
        count_failure(x, node, parsed);
        json_decref(parsed);
        return buf;
    }
    json_decref(parsed);
    return stateful_renewal(x, node, rid, buf, size);
}

void cv__rc_judge(rc_ctx_t *x)
{
    prune_windows(x);
    const json_t *placement = json_object_get(x->rec, "placement");
    size_t i;
    const json_t *entry;
    json_array_foreach(placement, i, entry)
    {
        const json_t *iv = json_object_get(entry, "index");
        char key[16], why[512];
        if (!json_is_integer(iv) || json_integer_value(iv) < 0 || json_integer_value(iv) > 1000000)
            continue;
        int index = (int)json_integer_value(iv);
        key_of(key, sizeof(key), index);
        if (json_object_get(x->kept, key) || json_object_get(x->moved_from, key))
            continue; /* a second entry for one index: the first one counts */
        if (index >= x->target) {
            leave(x, entry, index, x->deleting ? "service deleted" : "scale down");
            continue;
        }
        const char *reason = why_leave(x, entry, why, sizeof(why));
        if (reason)
            leave(x, entry, index, reason);
        else
            json_object_set_new(x->kept, key, json_deep_copy(entry));
    }
}

/* States of a replica whose process may still run (docs/services.md). */
static bool may_run(const char *state)
{
    return !state || (strcmp(state, "stopped") != 0 && strcmp(state, "failed") != 0);
}

void cv__rc_hold(rc_ctx_t *x)
{
    if (!x->s || !x->s->stateful)
        return;
    const char *node, *rid;
    json_t *n, *report;
    json_object_foreach(x->nodes, node, n)
    {
        rc_node_state_t st = cv__rc_node(x, node);
        if (!st.known || !st.alive)
            continue; /* a lost node's replicas are fenced: grace_for waited for that */
        json_object_foreach(json_object_get(n, "report"), rid, report)
        {
            int index = cv__rc_rid_index(x->svc, rid);
            char key[16];
            key_of(key, sizeof(key), index);
            if (index < 0 || index >= x->target || json_object_get(x->kept, key))
                continue;
            json_t *parsed = cv__rc_json(report);
            const char *state = json_string_value(json_object_get(parsed, "state"));
            if (may_run(state))
                json_object_set_new(x->held, key,
                                    json_pack("{s:s, s:s, s:s}", "node", node, "rid", rid, "state",
                                              state ? state : "running"));
            json_decref(parsed);
        }
    }
}
