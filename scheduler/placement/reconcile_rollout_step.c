/*
 * reconcile_rollout_step — the replicas of one step of a rolling update.
 *
 * A stateless replica is renewed in place: a new replica id on its node,
 * so its agent stops the old process and starts the new one (kill_first).
 * With start_first the old replica id stays assigned beside the new one
 * (an extra placement entry of the index, listed after the new one, which
 * the next plan's judge ignores and this file adds again) until the new one
 * is ready. A stateful index never runs twice: its old replica is
 * unassigned first, the index waits (StatefulFence) until no live node
 * reports the old one running, and then starts again on the same node
 * (its volumes are there: Service Fabric's PreferredLocation).
 */
#include "rollout_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static int index_of(const json_t *e)
{
    return (int)json_integer_value(json_object_get(e, "index"));
}

static double num(const json_t *obj, const char *key, double dflt)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

void cv__ro_policy(const json_t *up, ro_policy_t *p)
{
    p->start_first = strcmp(str(up, "order"), "start_first") == 0;
    p->step = (int)num(up, "step", 1);
    if (p->step < 1)
        p->step = 1;
    p->max_unavailable = (int)num(up, "max_unavailable", p->step);
    p->max_surge = (int)num(up, "max_surge", p->step);
    p->interval = num(up, "interval", 0);
    p->deadline = num(up, "deadline", 60);
    p->health_gate = !json_is_false(json_object_get(up, "health_gate"));
    p->rollback = !json_is_false(json_object_get(up, "rollback"));
    p->manual = strcmp(str(up, "mode"), "manual") == 0;
    p->by_ud = json_is_true(json_object_get(up, "byUpgradeDomain"));
}

json_t *cv__ro_entry(const rc_ctx_t *x, int index)
{
    size_t i;
    json_t *e;
    json_array_foreach(x->placement, i, e)
    {
        if (index_of(e) == index)
            return e;
    }
    return NULL;
}

bool cv__ro_assigned_digest(const rc_ctx_t *x, const json_t *entry, char *buf, size_t size)
{
    json_t *spec = cv__rc_json(cv__rc_assigned(x, str(entry, "node"), str(entry, "rid")));
    bool found = json_is_object(spec);
    snprintf(buf, size, "%s", found ? str(spec, "digest") : "");
    json_decref(spec);
    return found;
}

json_t *cv__ro_outdated(const rc_ctx_t *x, const char *want)
{
    json_t *list = json_array();
    for (int index = 0; index < x->target; index++) {
        const json_t *e = cv__ro_entry(x, index);
        char had[64];
        if (e && cv__ro_assigned_digest(x, e, had, sizeof(had)) && strcmp(had, want) != 0)
            json_array_append_new(list, json_integer(index));
    }
    return list;
}

static json_t *report_of(const rc_ctx_t *x, const char *node, const char *rid)
{
    const json_t *n = json_object_get(x->nodes, node);
    return cv__rc_json(json_object_get(json_object_get(n, "report"), rid));
}

bool cv__ro_ready(const rc_ctx_t *x, const json_t *entry, const char *want, bool gate, char *why,
                  size_t whysz)
{
    const char *node = str(entry, "node"), *rid = str(entry, "rid");
    json_t *r = report_of(x, node, rid);
    const char *state = str(r, "state"), *digest = str(r, "digest");
    bool ok = (strcmp(state, "healthy") == 0 || (!gate && strcmp(state, "running") == 0)) &&
              (!want || !digest[0] || strcmp(digest, want) == 0) && cv__rc_node(x, node).alive;
    if (!ok && why) {
        char name[256];
        cv__rc_replica_name(x, index_of(entry), name, sizeof(name));
        const char *reason = str(r, "reason");
        snprintf(why, whysz, "replica %s on %s is %s%s%s", name, node,
                 state[0] ? state : "not started yet", reason[0] ? ": " : "", reason);
    }
    json_decref(r);
    return ok;
}

int cv__ro_unhealthy(const rc_ctx_t *x)
{
    int n = 0;
    for (int index = 0; index < x->target; index++) {
        const json_t *e = cv__ro_entry(x, index);
        n += !e || !cv__ro_ready(x, e, NULL, true, NULL, 0);
    }
    return n;
}

void cv__ro_domain(const rc_ctx_t *x, const char *node, char *buf, size_t size)
{
    json_t *desc = cv__rc_json(json_object_get(json_object_get(x->nodes, node), "description"));
    snprintf(buf, size, "%s", str(desc, "upgradeDomain"));
    json_decref(desc);
}

json_t *cv__ro_begin(rc_ctx_t *x, json_t *entry)
{
    int index = index_of(entry);
    char fresh[512];
    cv__rc_rid(fresh, sizeof(fresh), x->svc, index, x->gen + 1);
    bool stateful = x->s && x->s->stateful;
    json_t *item =
        json_pack("{s:i, s:O?, s:O?, s:O?, s:b, s:s}", "index", index, "rid",
                  json_object_get(entry, "rid"), "node", json_object_get(entry, "node"), "role",
                  json_object_get(entry, "role"), "stateful", stateful, "new", fresh);
    if (!stateful) {
        json_object_set_new(entry, "rid", json_string(fresh));
        json_object_set_new(entry, "since", json_real(x->now));
        cv__rc_event(x, index, "UPDATE", "IN_PROGRESS", "replica %s renewed on %s", fresh,
                     str(entry, "node"));
    }
    return item;
}

/* ---------------------------------------------------------------- carrying a step on */

static void drop_index(json_t *list, int index)
{
    for (size_t i = json_array_size(list); i-- > 0;)
        if (index_of(json_array_get(list, i)) == index)
            json_array_remove(list, i);
}

/* Whether the old replica of `item` may still run: assigned, or reported
 * in a state other than stopped or failed by its node while that is up. */
static bool old_may_run(const rc_ctx_t *x, const json_t *item, char *state, size_t size)
{
    const char *node = str(item, "node"), *rid = str(item, "rid");
    snprintf(state, size, "assigned");
    if (cv__rc_assigned(x, node, rid))
        return true;
    if (!cv__rc_node(x, node).alive)
        return false;
    json_t *r = report_of(x, node, rid);
    const char *s = str(r, "state");
    bool runs = r && strcmp(s, "stopped") != 0 && strcmp(s, "failed") != 0;
    snprintf(state, size, "%s", s[0] ? s : "running");
    json_decref(r);
    return runs;
}

/* A stateful item: stopped first, then started again on its node. */
static void stateful_in_place(rc_ctx_t *x, const json_t *item)
{
    int index = (int)json_integer_value(json_object_get(item, "index"));
    const char *node = str(item, "node"), *fresh = str(item, "new");
    const json_t *e = cv__ro_entry(x, index);
    if ((e && strcmp(str(e, "rid"), fresh) == 0) || index >= x->target)
        return; /* renewed already, or scaled away */
    rc_node_state_t st = cv__rc_node(x, node);
    if (!st.known || !st.alive)
        return; /* its node is gone: the placement decides where it goes */
    drop_index(x->placement, index);
    drop_index(x->unplaced, index);
    char state[64];
    if (old_may_run(x, item, state, sizeof(state))) {
        char text[768];
        snprintf(text, sizeof(text), "replica %s is still %s on %s (stopping for its update)",
                 str(item, "rid"), state, node);
        json_array_append_new(x->unplaced,
                              json_pack("{s:i, s:[{s:s, s:[], s:s}]}", "index", index,
                                        "eliminationSequence", "constraint", "StatefulFence",
                                        "eliminated", "description", text));
        return;
    }
    const char *role = str(item, "role");
    json_array_append_new(x->placement, json_pack("{s:i, s:s, s:s, s:s, s:f}", "index", index,
                                                  "rid", fresh, "node", node, "role",
                                                  role[0] ? role : "instance", "since", x->now));
    cv__rc_event(x, index, "UPDATE", "IN_PROGRESS", "replica %s renewed on %s once %s stopped",
                 fresh, node, str(item, "rid"));
}

/* A start_first item: the old replica stays beside the new one. */
static void keep_old_beside(rc_ctx_t *x, const json_t *item, const char *want, bool gate)
{
    int index = (int)json_integer_value(json_object_get(item, "index"));
    const json_t *e = cv__ro_entry(x, index);
    const char *node = str(item, "node"), *rid = str(item, "rid");
    if (!e || strcmp(str(e, "rid"), rid) == 0 || cv__ro_ready(x, e, want, gate, NULL, 0))
        return;
    if (!cv__rc_assigned(x, node, rid) || !cv__rc_node(x, node).alive)
        return;
    const char *role = str(item, "role");
    json_array_append_new(x->placement,
                          json_pack("{s:i, s:s, s:s, s:s, s:O}", "index", index, "rid", rid, "node",
                                    node, "role", role[0] ? role : "instance", "since",
                                    json_object_get(e, "since")));
}

void cv__ro_carry(rc_ctx_t *x, const json_t *batch, bool surge, const char *want, bool gate)
{
    size_t i;
    const json_t *item;
    json_array_foreach(batch, i, item)
    {
        if (json_is_true(json_object_get(item, "stateful")))
            stateful_in_place(x, item);
        else if (surge)
            keep_old_beside(x, item, want, gate);
    }
}

bool cv__ro_batch_ready(const rc_ctx_t *x, const json_t *batch, const char *want, bool gate,
                        char *why, size_t whysz)
{
    size_t i;
    const json_t *item;
    json_array_foreach(batch, i, item)
    {
        int index = (int)json_integer_value(json_object_get(item, "index"));
        if (index >= x->target)
            continue; /* scaled away meanwhile */
        const json_t *e = cv__ro_entry(x, index);
        if (!e) {
            char name[256];
            cv__rc_replica_name(x, index, name, sizeof(name));
            snprintf(why, whysz, "replica %s is waiting to start again", name);
            return false;
        }
        if (!cv__ro_ready(x, e, want, gate, why, whysz))
            return false;
    }
    return true;
}
