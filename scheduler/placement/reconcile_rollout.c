/*
 * reconcile_rollout — replacing the processes of a service whose process
 * spec (its digest) changed. Without an update policy every kept replica
 * whose assigned spec runs another digest gets a new replica id on its node
 * at once: the agent stops the old process and starts the new one. A
 * service's `update_policy` makes it a rolling update, and `convergectl
 * upgrade` one by upgrade domain (docs/crm.md "Rolling updates").
 *
 * The rollout is desired state plus where it stands, all of it in the
 * service's record (`rollout`): each plan derives the next move from it and
 * the agents' reports, so any worker may make the next plan after another
 * died mid-step. Per plan: a step in flight is carried on until its new
 * replicas are ready (healthy, with the health gate), failed past its
 * deadline (then rolled back when the policy says so) or, when none is in
 * flight, the next one begins if the interval passed, the rollout is not
 * paused, manual mode allows it and the unavailability bound leaves room.
 * Steps take the outdated indexes lowest first, or by upgrade domain the
 * replicas on the nodes of one domain at a time, in the domains' order.
 *
 * The replicas of one step:
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
#include "reconcile_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The service spec's `updatePolicy`, defaults applied. */
typedef struct ro_policy {
    bool start_first, health_gate, rollback, manual, by_ud;
    int step, max_unavailable, max_surge;
    double interval, deadline;
} ro_policy_t;

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static int index_of(const json_t *e)
{
    return (int)json_integer_value(json_object_get(e, "index"));
}

static double num_or(const json_t *obj, const char *key, double dflt)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* ---------------------------------------------------------------- the policy */

/* The service spec's `updatePolicy`, defaults applied. */
static void read_policy(const json_t *up, ro_policy_t *p)
{
    p->start_first = strcmp(str(up, "order"), "start_first") == 0;
    p->step = (int)num_or(up, "step", 1);
    if (p->step < 1)
        p->step = 1;
    p->max_unavailable = (int)num_or(up, "max_unavailable", p->step);
    p->max_surge = (int)num_or(up, "max_surge", p->step);
    p->interval = num_or(up, "interval", 0);
    p->deadline = num_or(up, "deadline", 60);
    p->health_gate = !json_is_false(json_object_get(up, "health_gate"));
    p->rollback = !json_is_false(json_object_get(up, "rollback"));
    p->manual = strcmp(str(up, "mode"), "manual") == 0;
    p->by_ud = json_is_true(json_object_get(up, "byUpgradeDomain"));
}

/* ---------------------------------------------------------------- a step's replicas */

/* The first placement entry of `index` in x->placement (borrowed), or NULL. */
static json_t *entry_at(const rc_ctx_t *x, int index)
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

/* The digest of the replica spec assigned for `entry` into buf; false when
 * its replica id is assigned nowhere yet (placed by this plan). */
static bool assigned_digest(const rc_ctx_t *x, const json_t *entry, char *buf, size_t size)
{
    json_t *spec = cv__rc_json(cv__rc_assigned(x, str(entry, "node"), str(entry, "rid")));
    bool found = json_is_object(spec);
    snprintf(buf, size, "%s", found ? str(spec, "digest") : "");
    json_decref(spec);
    return found;
}

/* The indexes below the target whose assigned replica runs another digest
 * than `want`, lowest first (a new array of integers). */
static json_t *outdated_indexes(const rc_ctx_t *x, const char *want)
{
    json_t *list = json_array();
    for (int index = 0; index < x->target; index++) {
        const json_t *e = entry_at(x, index);
        char had[64];
        if (e && assigned_digest(x, e, had, sizeof(had)) && strcmp(had, want) != 0)
            json_array_append_new(list, json_integer(index));
    }
    return list;
}

static json_t *report_of(const rc_ctx_t *x, const char *node, const char *rid)
{
    const json_t *n = json_object_get(x->nodes, node);
    return cv__rc_json(json_object_get(json_object_get(n, "report"), rid));
}

/* Whether the replica of `entry` reports healthy (or running, without the
 * health gate) on `want` (NULL: any digest); else why not into why. */
static bool replica_ready(const rc_ctx_t *x, const json_t *entry, const char *want, bool gate,
                          char *why, size_t whysz)
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

/* Indexes below the target without a healthy replica. */
static int unhealthy_count(const rc_ctx_t *x)
{
    int n = 0;
    for (int index = 0; index < x->target; index++) {
        const json_t *e = entry_at(x, index);
        n += !e || !replica_ready(x, e, NULL, true, NULL, 0);
    }
    return n;
}

/* The upgrade domain of a node ("" when it has none). */
static void upgrade_domain(const rc_ctx_t *x, const char *node, char *buf, size_t size)
{
    json_t *desc = cv__rc_json(json_object_get(json_object_get(x->nodes, node), "description"));
    snprintf(buf, size, "%s", str(desc, "upgradeDomain"));
    json_decref(desc);
}

/* A step's item for `entry`: {index, rid (the old one), node, role,
 * stateful, new (the new replica id)}; a stateless replica gets the new
 * replica id in place at once. A new object. */
static json_t *begin_item(rc_ctx_t *x, json_t *entry)
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
    const json_t *e = entry_at(x, index);
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
    const json_t *e = entry_at(x, index);
    const char *node = str(item, "node"), *rid = str(item, "rid");
    if (!e || strcmp(str(e, "rid"), rid) == 0 || replica_ready(x, e, want, gate, NULL, 0))
        return;
    if (!cv__rc_assigned(x, node, rid) || !cv__rc_node(x, node).alive)
        return;
    const char *role = str(item, "role");
    json_array_append_new(x->placement,
                          json_pack("{s:i, s:s, s:s, s:s, s:O}", "index", index, "rid", rid, "node",
                                    node, "role", role[0] ? role : "instance", "since",
                                    json_object_get(e, "since")));
}

/* Carries a step's items on in this plan: a stateful replica stays out of
 * the placement until its old replica stopped, then starts again on its
 * node; with `surge`, an old replica stays assigned beside its successor
 * until that one is ready on `want`. */
static void carry_batch(rc_ctx_t *x, const json_t *batch, bool surge, const char *want, bool gate)
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

/* Whether every item of the batch is ready on `want`; the first reason why
 * not into why. */
static bool batch_ready(const rc_ctx_t *x, const json_t *batch, const char *want, bool gate,
                        char *why, size_t whysz)
{
    size_t i;
    const json_t *item;
    json_array_foreach(batch, i, item)
    {
        int index = (int)json_integer_value(json_object_get(item, "index"));
        if (index >= x->target)
            continue; /* scaled away meanwhile */
        const json_t *e = entry_at(x, index);
        if (!e) {
            char name[256];
            cv__rc_replica_name(x, index, name, sizeof(name));
            snprintf(why, whysz, "replica %s is waiting to start again", name);
            return false;
        }
        if (!replica_ready(x, e, want, gate, why, whysz))
            return false;
    }
    return true;
}

/* ---------------------------------------------------------------- the state */

static double num(const json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

static bool state_is(const rc_ctx_t *x, const char *state)
{
    return strcmp(str(x->rollout, "state"), state) == 0;
}

static void set_state(rc_ctx_t *x, const char *state, const char *reason)
{
    json_object_set_new(x->rollout, "state", json_string(state));
    json_object_set_new(x->rollout, "reason", json_string(reason));
}

/* ---------------------------------------------------------------- all at once */

static void renew_all(rc_ctx_t *x)
{
    size_t i;
    json_t *e;
    json_array_foreach(x->placement, i, e)
    {
        char had[64];
        if (!assigned_digest(x, e, had, sizeof(had)) || strcmp(had, x->digest) == 0)
            continue;
        int index = (int)json_integer_value(json_object_get(e, "index"));
        char fresh[512];
        cv__rc_rid(fresh, sizeof(fresh), x->svc, index, x->gen + 1);
        json_object_set_new(e, "rid", json_string(fresh));
        json_object_set_new(e, "since", json_real(x->now));
        cv__rc_event(x, index, "PLACE", "COMPLETE",
                     "replica %s replaced on %s (process spec changed)", fresh, str(e, "node"));
    }
}

/* ---------------------------------------------------------------- starting */

/* The process parts of an assigned replica spec: what rollback assigns. */
static json_t *process_part(const json_t *spec)
{
    static const char *const per_replica[] = {"rid",      "svc",   "stack", "stack_name",
                                              "service",  "index", "name",  "role",
                                              "stateful", "load",  NULL};
    json_t *p = json_deep_copy(spec);
    for (size_t i = 0; per_replica[i]; i++)
        json_object_del(p, per_replica[i]);
    return p;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* The upgrade domains of the nodes holding the outdated replicas, sorted. */
static json_t *domains_of(const rc_ctx_t *x, const json_t *outdated)
{
    json_t *seen = json_object();
    size_t i;
    const json_t *v;
    json_array_foreach(outdated, i, v)
    {
        char ud[128];
        upgrade_domain(x, str(entry_at(x, (int)json_integer_value(v)), "node"), ud, sizeof(ud));
        json_object_set_new(seen, ud, json_true());
    }
    size_t n = json_object_size(seen), k = 0;
    json_t **names = calloc(n + 1, sizeof(*names));
    const char *key;
    json_t *t;
    json_object_foreach(seen, key, t)
    {
        names[k++] = json_string(key);
    }
    qsort(names, n, sizeof(*names), compare_strings);
    json_t *list = json_array();
    for (k = 0; k < n; k++)
        json_array_append_new(list, names[k]);
    free(names);
    json_decref(seen);
    return list;
}

static void start(rc_ctx_t *x, const ro_policy_t *p, const json_t *outdated)
{
    const json_t *first = entry_at(x, (int)json_integer_value(json_array_get(outdated, 0)));
    json_t *spec = cv__rc_json(cv__rc_assigned(x, str(first, "node"), str(first, "rid")));
    size_t n = json_array_size(outdated);
    int per = p->start_first && p->max_surge < p->step ? p->max_surge : p->step;
    per = per < 1 ? 1 : per; /* a hand-written spec: validation keeps it >= 1 */
    json_t *domains = p->by_ud ? domains_of(x, outdated) : json_array();
    int steps = p->by_ud ? (int)json_array_size(domains) : (int)((n + (size_t)per - 1) / per);
    x->rollout = json_pack(
        "{s:s, s:s, s:o, s:s, s:s, s:i, s:i, s:f, s:f, s:f, s:i, s:b, s:b, s:s, s:s, s:b, s:o, "
        "s:s, s:{}, s:[]}",
        "from", str(spec, "digest"), "to", x->digest, "from_process", process_part(spec), "state",
        "rolling", "reason", "", "step", 0, "steps", steps, "started", x->now, "step_started", 0.0,
        "step_done", 0.0, "resume", 0, "pause", 0, "rollback", 0, "mode",
        p->manual ? "manual" : "auto", "order", p->start_first ? "start_first" : "kill_first",
        "by_upgrade_domain", p->by_ud, "domains", domains, "domain", "", "layout", "batch");
    cv__rc_event(x, -1, "UPDATE", "IN_PROGRESS",
                 "rolling update of %s started: %zu replica(s) from %s to %s in %d step(s)%s",
                 x->resource, n, str(spec, "digest"), x->digest, steps,
                 p->by_ud ? " by upgrade domain" : "");
    json_decref(spec);
}

/* ---------------------------------------------------------------- steps */

/* Snapshot of where every replica is, before an upgrade domain's step. */
static json_t *layout_now(const rc_ctx_t *x)
{
    json_t *layout = json_object();
    for (int index = 0; index < x->target; index++) {
        const json_t *e = entry_at(x, index);
        char key[16];
        snprintf(key, sizeof(key), "%d", index);
        if (e)
            json_object_set(layout, key, json_object_get(e, "node"));
    }
    return layout;
}

/* Domains that hold outdated replicas now and were not listed at the start
 * (a replica re-placed on a node of another domain meanwhile) join the
 * list, in order, so that no outdated replica is left behind. */
static void add_new_domains(rc_ctx_t *x, const json_t *outdated)
{
    json_t *now = domains_of(x, outdated), *listed = json_object_get(x->rollout, "domains");
    json_t *all = json_array();
    size_t i;
    json_t *d;
    json_array_foreach(listed, i, d)
    {
        json_array_append(all, d);
    }
    json_array_foreach(now, i, d)
    {
        bool known = false;
        size_t k;
        json_t *e;
        json_array_foreach(all, k, e) known = known || json_equal(e, d);
        if (!known)
            json_array_append(all, d);
    }
    json_decref(now);
    size_t n = json_array_size(all);
    json_t **names = calloc(n + 1, sizeof(*names));
    for (i = 0; names && i < n; i++)
        names[i] = json_array_get(all, i);
    if (names)
        qsort(names, n, sizeof(*names), compare_strings);
    json_t *sorted = json_array();
    for (i = 0; names && i < n; i++)
        json_array_append(sorted, names[i]);
    free(names);
    json_decref(all);
    json_object_set_new(x->rollout, "domains", sorted);
    json_object_set_new(x->rollout, "steps", json_integer((json_int_t)n));
}

/* The outdated indexes on nodes of the first domain that has any. */
static json_t *domain_batch(rc_ctx_t *x, const json_t *outdated)
{
    add_new_domains(x, outdated);
    size_t d;
    const json_t *name;
    json_array_foreach(json_object_get(x->rollout, "domains"), d, name)
    {
        json_t *list = json_array();
        size_t i;
        const json_t *v;
        json_array_foreach(outdated, i, v)
        {
            char ud[128];
            upgrade_domain(x, str(entry_at(x, (int)json_integer_value(v)), "node"), ud, sizeof(ud));
            if (strcmp(ud, json_string_value(name)) == 0)
                json_array_append(list, (json_t *)v);
        }
        if (json_array_size(list) > 0) {
            json_object_set(x->rollout, "domain", (json_t *)name);
            json_object_set_new(x->rollout, "step", json_integer((json_int_t)d + 1));
            json_object_set_new(x->rollout, "layout", layout_now(x));
            return list;
        }
        json_decref(list);
    }
    return json_array();
}

/* The lowest outdated indexes this step may take. */
static json_t *count_batch(rc_ctx_t *x, const ro_policy_t *p, const json_t *outdated)
{
    int n = p->start_first ? (p->step < p->max_surge ? p->step : p->max_surge)
                           : p->max_unavailable - unhealthy_count(x);
    if (!p->start_first && n > p->step)
        n = p->step;
    json_t *list = json_array();
    for (size_t i = 0; n > 0 && i < json_array_size(outdated) && (int)i < n; i++)
        json_array_append(list, json_array_get(outdated, i));
    if (json_array_size(list) > 0)
        json_object_set_new(
            x->rollout, "step",
            json_integer(json_integer_value(json_object_get(x->rollout, "step")) + 1));
    return list;
}

static void begin_step(rc_ctx_t *x, const ro_policy_t *p, const json_t *outdated)
{
    json_t *indexes = p->by_ud ? domain_batch(x, outdated) : count_batch(x, p, outdated);
    if (json_array_size(indexes) == 0) {
        json_decref(indexes);
        return;
    }
    json_t *batch = json_array();
    size_t i;
    const json_t *v;
    json_array_foreach(indexes, i, v)
    {
        json_array_append_new(batch, begin_item(x, entry_at(x, (int)json_integer_value(v))));
    }
    json_object_set_new(x->rollout, "batch", batch);
    json_object_set_new(x->rollout, "step_started", json_real(x->now));
    const char *ud = str(x->rollout, "domain");
    cv__rc_event(x, -1, "UPDATE", "IN_PROGRESS",
                 "rolling update of %s: step %lld of %lld began (%zu replica(s)%s%s)", x->resource,
                 (long long)json_integer_value(json_object_get(x->rollout, "step")),
                 (long long)json_integer_value(json_object_get(x->rollout, "steps")),
                 json_array_size(indexes), p->by_ud ? ", upgrade domain " : "", p->by_ud ? ud : "");
    json_decref(indexes);
}

/* ---------------------------------------------------------------- failing, rolling back */

static void begin_rollback(rc_ctx_t *x, const char *why)
{
    const char *from = str(x->rollout, "from");
    json_t *old = json_incref(json_object_get(x->rollout, "batch"));
    set_state(x, "rolling_back", why);
    /* A start_first step's old replicas still run: they simply stay. */
    size_t i;
    const json_t *item;
    json_array_foreach(old, i, item)
    {
        json_t *e = entry_at(x, (int)json_integer_value(json_object_get(item, "index")));
        if (e && !json_is_true(json_object_get(item, "stateful")) &&
            cv__rc_assigned(x, str(item, "node"), str(item, "rid"))) {
            json_object_set(e, "rid", json_object_get(item, "rid"));
            json_object_set(e, "node", json_object_get(item, "node"));
        }
    }
    json_t *batch = json_array();
    json_array_foreach(old, i, item)
    {
        int index = (int)json_integer_value(json_object_get(item, "index"));
        if (json_is_true(json_object_get(item, "stateful")) && !entry_at(x, index))
            json_array_append(batch, (json_t *)item); /* stopped, not started again yet */
    }
    json_decref(old);
    json_t *outdated = outdated_indexes(x, from);
    json_t *v;
    json_array_foreach(outdated, i, v)
    {
        json_array_append_new(batch, begin_item(x, entry_at(x, (int)json_integer_value(v))));
    }
    json_decref(outdated);
    json_object_set_new(x->rollout, "batch", batch);
    json_object_set_new(x->rollout, "step_started", json_real(x->now));
    cv__rc_event(x, -1, "UPDATE", "IN_PROGRESS", "rolling update of %s rolling back to %s: %s",
                 x->resource, from, why);
}

static void fail(rc_ctx_t *x, const ro_policy_t *p, const char *why)
{
    char reason[1536];
    snprintf(reason, sizeof(reason), "step %lld of %lld failed: %s",
             (long long)json_integer_value(json_object_get(x->rollout, "step")),
             (long long)json_integer_value(json_object_get(x->rollout, "steps")), why);
    set_state(x, "failed", reason);
    cv__rc_event(x, -1, "UPDATE", "FAILED", "rolling update of %s %s", x->resource, reason);
    if (p->rollback)
        begin_rollback(x, reason);
}

static void rolling_back(rc_ctx_t *x, const ro_policy_t *p)
{
    const json_t *batch = json_object_get(x->rollout, "batch");
    const char *from = str(x->rollout, "from");
    char why[768] = "";
    carry_batch(x, batch, false, from, p->health_gate);
    bool ready = batch_ready(x, batch, from, p->health_gate, why, sizeof(why));
    if (!ready && x->now - num(x->rollout, "step_started") <= p->deadline)
        return;
    char reason[2560];
    snprintf(reason, sizeof(reason), "%s%s%s", str(x->rollout, "reason"),
             ready ? "" : "; after the rollback ", ready ? "" : why);
    json_object_set_new(x->rollout, "batch", json_array());
    set_state(x, "rolled_back", reason);
    cv__rc_event(x, -1, "UPDATE", ready ? "COMPLETE" : "FAILED",
                 "rolling update of %s rolled back to %s", x->resource, from);
}

/* ---------------------------------------------------------------- going forward */

/* The step in flight: true while it goes on (or failed). */
static bool carry_step(rc_ctx_t *x, const ro_policy_t *p)
{
    const json_t *batch = json_object_get(x->rollout, "batch");
    if (json_array_size(batch) == 0)
        return false;
    char why[768] = "";
    carry_batch(x, batch, p->start_first && !p->by_ud, x->digest, p->health_gate);
    if (!batch_ready(x, batch, x->digest, p->health_gate, why, sizeof(why))) {
        if (x->now - num(x->rollout, "step_started") > p->deadline) {
            char text[1024];
            snprintf(text, sizeof(text), "%s, %g s after the step began", why, p->deadline);
            fail(x, p, text);
        }
        return true;
    }
    /* ready: a start_first step's old replicas are not kept any longer */
    cv__rc_event(x, -1, "UPDATE", "IN_PROGRESS", "rolling update of %s: step %lld of %lld done",
                 x->resource, (long long)json_integer_value(json_object_get(x->rollout, "step")),
                 (long long)json_integer_value(json_object_get(x->rollout, "steps")));
    json_object_set_new(x->rollout, "batch", json_array());
    json_object_set_new(x->rollout, "step_done", json_real(x->now));
    return false;
}

static void forward(rc_ctx_t *x, const ro_policy_t *p)
{
    if (carry_step(x, p))
        return;
    json_t *outdated = outdated_indexes(x, x->digest);
    json_int_t step = json_integer_value(json_object_get(x->rollout, "step"));
    json_int_t resume = json_integer_value(json_object_get(x->rollout, "resume"));
    if (json_array_size(outdated) == 0) {
        set_state(x, "complete", "");
        json_object_set_new(x->rollout, "domain", json_string(""));
        cv__rc_event(x, -1, "UPDATE", "COMPLETE",
                     "rolling update of %s complete: every replica runs %s", x->resource,
                     x->digest);
    } else if (json_is_true(json_object_get(x->rollout, "pause"))) {
        set_state(x, "paused", "paused by convergectl rollout pause");
    } else if (p->manual && step >= 1 + resume) {
        set_state(x, "paused", "manual mode: waiting for convergectl rollout resume");
    } else {
        set_state(x, "rolling", "");
        double done = num(x->rollout, "step_done");
        if (done <= 0 || x->now >= done + p->interval)
            begin_step(x, p, outdated);
        carry_batch(x, json_object_get(x->rollout, "batch"), p->start_first && !p->by_ud, x->digest,
                    p->health_gate);
    }
    json_decref(outdated);
}

void cv__rc_renew(rc_ctx_t *x)
{
    const json_t *up = json_object_get(x->spec, "updatePolicy");
    if (x->deleting || !x->s || !json_is_object(up)) {
        renew_all(x);
        /* The policy is gone mid-way: what was left went at once, so the
         * planner's rollout of this version is over. Any other record is
         * left as it is (the cluster resource manager reads it too). */
        if (x->s && !x->deleting && x->rollout && strcmp(str(x->rollout, "to"), x->digest) == 0 &&
            json_is_object(json_object_get(x->rollout, "from_process")) &&
            (state_is(x, "rolling") || state_is(x, "paused")))
            set_state(x, "complete", "update_policy removed: the rest renewed at once");
        return;
    }
    ro_policy_t p;
    read_policy(up, &p);
    if (!x->rollout || strcmp(str(x->rollout, "to"), x->digest) != 0) {
        json_decref(x->rollout);
        x->rollout = NULL;
        json_t *outdated = outdated_indexes(x, x->digest);
        if (json_array_size(outdated) > 0)
            start(x, &p, outdated);
        json_decref(outdated);
        if (!x->rollout)
            return;
    }
    if (json_is_true(json_object_get(x->rollout, "rollback")) && !state_is(x, "rolling_back") &&
        !state_is(x, "rolled_back") && !state_is(x, "complete"))
        begin_rollback(x, "asked for by convergectl rollout rollback");
    if (state_is(x, "rolling_back"))
        rolling_back(x, &p);
    else if (state_is(x, "rolling") || state_is(x, "paused"))
        forward(x, &p);
}
