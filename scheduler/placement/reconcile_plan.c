/*
 * reconcile_plan — from the decided placement to the plan: the replica
 * specs agents run, the assign and unassign operations that make the nodes'
 * assignments match the placement (level-triggered: any replica id of the
 * service assigned anywhere that the placement does not hold is unassigned,
 * whatever left it there), the events that say why each replica is where it
 * is, and the health reports of the service.
 */
#include "reconcile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- replica specs */

static void add_loads(const rc_ctx_t *x, json_t *spec, bool secondary)
{
    json_t *load = json_object();
    for (size_t i = 0; x->s && i < x->s->nmetrics; i++)
        json_object_set_new(load, x->s->metrics[i].name,
                            json_integer(secondary ? x->s->metrics[i].secondary_load
                                                   : x->s->metrics[i].primary_load));
    json_object_set_new(spec, "load", load);
}

/* The replica spec agents run for the placement entry `entry`. */
static json_t *replica_spec(const rc_ctx_t *x, const json_t *entry)
{
    int index = (int)json_integer_value(json_object_get(entry, "index"));
    const char *role = json_string_value(json_object_get(entry, "role"));
    char name[512];
    cv__rc_replica_name(x, index, name, sizeof(name));
    const json_t *process = cv__rc_process(x);
    json_t *spec = json_deep_copy(process);
    json_object_set(spec, "rid", json_object_get(entry, "rid"));
    json_object_set_new(spec, "svc", json_string(x->svc));
    json_object_set_new(spec, "stack", json_string(x->stack));
    json_object_set_new(spec, "stack_name", json_string(x->stack_name));
    json_object_set_new(spec, "service", json_string(x->resource));
    json_object_set_new(spec, "index", json_integer(index));
    json_object_set_new(spec, "name", json_string(name));
    json_object_set_new(spec, "role", json_string(role ? role : "instance"));
    json_object_set_new(spec, "stateful", json_boolean(x->s && x->s->stateful));
    add_loads(x, spec, role && strcmp(role, "secondary") == 0);
    const char *digest = json_string_value(json_object_get(process, "digest"));
    json_object_set_new(spec, "digest", json_string(digest ? digest : ""));
    return spec;
}

/* ---------------------------------------------------------------- operations */

static const json_t *assigned(const rc_ctx_t *x, const char *node, const char *rid)
{
    return cv__rc_assigned(x, node, rid);
}

static bool same(const json_t *at, const char *node, const char *rid)
{
    const char *r = json_string_value(json_object_get(at, "rid"));
    const char *n = json_string_value(json_object_get(at, "node"));
    return r && n && strcmp(r, rid) == 0 && strcmp(n, node) == 0;
}

/* Held by the placement: its replica, or the old replica a handover keeps
 * until its successor is healthy (reconcile_move.c). */
static bool placed_as(const rc_ctx_t *x, const char *node, const char *rid)
{
    size_t i;
    const json_t *e;
    json_array_foreach(x->placement, i, e)
    {
        if (same(e, node, rid) || same(json_object_get(e, "from"), node, rid))
            return true;
    }
    return false;
}

/* Keeps one operation for the plan (taking `spec`); one that cannot be
 * kept fails the plan. */
static void add_op(rc_ctx_t *x, cv_reconcile_op_kind_t kind, const char *node, const char *rid,
                   json_t *spec)
{
    cv_reconcile_op_t op = {kind, strdup(node), strdup(rid), spec};
    if (!op.node || !op.rid || cv_vec_push(&x->ops, op) != 0) {
        free(op.node);
        free(op.rid);
        json_decref(spec);
        x->nomem = true;
    }
}

static void make_ops(rc_ctx_t *x)
{
    const char *node, *rid;
    json_t *n, *spec;
    json_object_foreach(x->nodes, node, n)
    {
        json_object_foreach(json_object_get(n, "assign"), rid, spec)
        {
            if (cv__rc_rid_index(x->svc, rid) >= 0 && !placed_as(x, node, rid))
                add_op(x, CV_RECONCILE_UNASSIGN, node, rid, NULL);
        }
    }
    size_t i;
    json_t *e;
    json_array_foreach(x->placement, i, e)
    {
        const char *at = json_string_value(json_object_get(e, "node"));
        const char *placed = json_string_value(json_object_get(e, "rid"));
        if (at && placed && !assigned(x, at, placed))
            add_op(x, CV_RECONCILE_ASSIGN, at, placed, replica_spec(x, e));
    }
}

/* ---------------------------------------------------------------- events */

static const json_t *stored_entry(const rc_ctx_t *x, const char *list, int index)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(x->rec, list), i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) == index)
            return e;
    }
    return NULL;
}

/* "NodeCapacity eliminated 3 node(s); ..." */
static void summary(const json_t *seq, char *buf, size_t size)
{
    size_t i, len = 0;
    const json_t *step;
    buf[0] = '\0';
    json_array_foreach(seq, i, step)
    {
        const char *desc = json_string_value(json_object_get(step, "description"));
        if (len >= size)
            break;
        len += (size_t)snprintf(buf + len, size - len, "%s%s %s", len ? "; " : "",
                                json_string_value(json_object_get(step, "constraint")),
                                desc ? desc : "");
        if (!desc && len < size)
            len += (size_t)snprintf(buf + len, size - len, "eliminated %zu node(s)",
                                    json_array_size(json_object_get(step, "eliminated")));
    }
    if (!buf[0])
        snprintf(buf, size, "no node in the cluster");
}

/* A replica whose leaving reconcile_move.c reports itself. */
static bool quiet(const json_t *gone)
{
    return json_is_true(json_object_get(gone, "quiet"));
}

static void placed_events(rc_ctx_t *x)
{
    size_t i;
    json_t *e;
    json_array_foreach(x->placement, i, e)
    {
        int index = (int)json_integer_value(json_object_get(e, "index"));
        const json_t *before = stored_entry(x, "placement", index);
        const char *node = json_string_value(json_object_get(e, "node"));
        if (before && json_equal(json_object_get(before, "node"), json_object_get(e, "node")))
            continue;
        char key[16];
        snprintf(key, sizeof(key), "%d", index);
        const json_t *gone = json_object_get(x->moved_from, key);
        if (quiet(gone) || json_object_get(e, "from"))
            continue; /* a move: reconcile_move.c tells it */
        char name[512];
        cv__rc_replica_name(x, index, name, sizeof(name));
        if (gone)
            cv__rc_event(x, index, "PLACE", "COMPLETE", "replica %s moved from %s to %s (%s)", name,
                         json_string_value(json_object_get(gone, "node")), node,
                         json_string_value(json_object_get(gone, "why")));
        else
            cv__rc_event(x, index, "PLACE", "COMPLETE", "replica %s placed on %s", name, node);
    }
}

static bool placed_now(const rc_ctx_t *x, int index)
{
    size_t i;
    const json_t *e;
    json_array_foreach(x->placement, i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) == index)
            return true;
    }
    return false;
}

/* Replicas that left a node and are not placed again (those that are say
 * so in their "moved" event). */
static void left_events(rc_ctx_t *x)
{
    const char *key;
    json_t *gone;
    json_object_foreach(x->moved_from, key, gone)
    {
        int index = atoi(key);
        char name[512];
        cv__rc_replica_name(x, index, name, sizeof(name));
        const char *node = json_string_value(json_object_get(gone, "node"));
        const char *why = json_string_value(json_object_get(gone, "why"));
        if (quiet(gone))
            continue;
        if (index >= x->target)
            cv__rc_event(x, index, "DELETE", "COMPLETE", "replica %s removed from %s (%s)", name,
                         node ? node : "?", why);
        else if (!placed_now(x, index))
            cv__rc_event(x, index, "PLACE", "IN_PROGRESS", "replica %s left %s (%s)", name,
                         node ? node : "?", why);
    }
}

static void waiting_events_and_reports(rc_ctx_t *x)
{
    size_t i;
    json_t *u;
    json_array_foreach(x->unplaced, i, u)
    {
        int index = (int)json_integer_value(json_object_get(u, "index"));
        char name[512], why[1536], property[96];
        cv__rc_replica_name(x, index, name, sizeof(name));
        summary(json_object_get(u, "eliminationSequence"), why, sizeof(why));
        if (!stored_entry(x, "unplaced", index))
            cv__rc_event(x, index, "PLACE", "IN_PROGRESS", "replica %s waiting for a node: %s",
                         name, why);
        bool secondary = x->s && x->s->stateful && index > 0;
        snprintf(property, sizeof(property), "ServiceReplicaUnplacedHealth_%s_%d",
                 x->s && x->s->stateful ? (secondary ? "Secondary" : "Primary") : "Instance",
                 index);
        cv__rc_report(x, property, "Warning",
                      "The Load Balancer was unable to find a placement for %s replica %d: %s",
                      name, index, why);
    }
}

/* ---------------------------------------------------------------- health */

/* The placement library's reports of the service, with unique properties
 * (its unplaced reports are replaced by ours, one per index). */
static void adopt_library_reports(rc_ctx_t *x, json_t *library)
{
    char source[512];
    cv_reconcile_health_source(source, sizeof(source), x->svc);
    json_t *seen = json_object();
    size_t i;
    json_t *h;
    json_array_foreach(library, i, h)
    {
        const char *property = json_string_value(json_object_get(h, "property"));
        if (!property || strncmp(property, "ServiceReplicaUnplacedHealth", 28) == 0)
            continue;
        char unique[256];
        snprintf(unique, sizeof(unique), "%s", property);
        for (int k = 2; json_object_get(seen, unique); k++)
            snprintf(unique, sizeof(unique), "%s_%d", property, k);
        json_object_set_new(seen, unique, json_true());
        json_t *r = json_deep_copy(h);
        json_object_set_new(r, "source", json_string(source));
        json_object_set_new(r, "property", json_string(unique));
        json_object_set_new(r, "timeToLive", json_string("Infinite"));
        json_object_set_new(r, "removeWhenExpired", json_false());
        json_array_append_new(x->health, r);
    }
    json_decref(seen);
}

static void blocklist_reports(rc_ctx_t *x)
{
    const char *node;
    json_t *until;
    size_t usable = 0, blocked = 0;
    json_object_foreach(x->blocklist, node, until)
    {
        char property[256];
        snprintf(property, sizeof(property), "ServiceBlocklisted_%s", node);
        cv__rc_report(x, property, "Warning",
                      "Node %s is blocklisted for service %s until %.0f (Unix s): the restart "
                      "policy gave up there",
                      node, x->resource, json_number_value(until));
    }
    json_t *n;
    json_object_foreach(x->nodes, node, n)
    {
        rc_node_state_t st = cv__rc_node(x, node);
        if (!st.known || !st.alive || strcmp(st.admin, "enabled") != 0)
            continue;
        usable++;
        blocked += json_object_get(x->blocklist, node) ? 1 : 0;
    }
    if (x->blocked)
        cv__rc_report(x, "ServiceAllNodesBlocklisted", "Error",
                      "All nodes blocklisted for service %s: %s", x->resource,
                      json_string_value(json_object_get(x->blocked, "description")));
    else if (usable > 0 && blocked == usable)
        cv__rc_report(x, "ServiceAllNodesBlocklisted", "Error",
                      "All nodes blocklisted: every usable node is blocklisted for service %s",
                      x->resource);
}

/* A replica its agent keeps restarting and that is not healthy now is in a
 * crash loop: a Warning per index while it lasts (its restart policy's
 * counter says how often; the agent resets it after a long healthy run). */
#define CRASH_LOOP_RESTARTS 3

static void crash_loop_reports(rc_ctx_t *x)
{
    size_t i;
    const json_t *e;
    json_array_foreach(x->placement, i, e)
    {
        const char *node = json_string_value(json_object_get(e, "node"));
        const char *rid = json_string_value(json_object_get(e, "rid"));
        const json_t *n = json_object_get(x->nodes, node ? node : "");
        const json_t *r = json_object_get(json_object_get(n, "report"), rid ? rid : "");
        const char *state = json_string_value(json_object_get(r, "state"));
        json_int_t restarts = json_integer_value(json_object_get(r, "restarts"));
        if (!state || strcmp(state, "healthy") == 0 || restarts < CRASH_LOOP_RESTARTS)
            continue;
        int index = (int)json_integer_value(json_object_get(e, "index"));
        char property[64], name[256];
        const char *why = json_string_value(json_object_get(r, "reason"));
        snprintf(property, sizeof(property), "ReplicaCrashLoop_%d", index);
        cv__rc_replica_name(x, index, name, sizeof(name));
        cv__rc_report(x, property, "Warning", "Replica %s on node %s restarted %lld times (%s%s%s)",
                      name, node, (long long)restarts, state, why && why[0] ? ": " : "",
                      why ? why : "");
    }
}

/* Whether the stored reports of this service differ from x->health. */
static bool health_differs(const rc_ctx_t *x)
{
    char prefix[512];
    cv_reconcile_health_source(prefix, sizeof(prefix), x->svc);
    strncat(prefix, "|", sizeof(prefix) - strlen(prefix) - 1);
    size_t stored = 0, plen = strlen(prefix);
    const char *field;
    json_t *v;
    json_object_foreach(json_object_get(x->model, "health"), field, v)
    {
        if (strncmp(field, prefix, plen) != 0)
            continue;
        stored++;
        json_t *old = cv__rc_json(v);
        bool same = false;
        size_t i;
        json_t *h;
        json_array_foreach(x->health, i, h)
        {
            if (strcmp(json_string_value(json_object_get(h, "property")), field + plen) == 0)
                same = json_equal(json_object_get(old, "state"), json_object_get(h, "state")) &&
                       json_equal(json_object_get(old, "description"),
                                  json_object_get(h, "description"));
        }
        json_decref(old);
        if (!same)
            return true;
    }
    return stored != json_array_size(x->health);
}

/* ---------------------------------------------------------------- the plan */

static bool stored_differs(const rc_ctx_t *x, const char *field, const json_t *now)
{
    const json_t *before = json_object_get(x->rec, field);
    if (!before || json_is_null(before))
        return !(json_is_null(now) || (json_is_array(now) && json_array_size(now) == 0) ||
                 (json_is_object(now) && json_object_size(now) == 0));
    return !json_equal(before, now);
}

/* A deleting service is gone once no node was assigned any of its replicas
 * (the commit that unassigns the last ones is not the one that removes it:
 * the agents first get to stop them) and no live node reports one. */
static bool all_gone(const rc_ctx_t *x)
{
    if (!x->deleting || x->ops.n > 0)
        return false;
    const char *node, *rid;
    json_t *n, *v;
    json_object_foreach(x->nodes, node, n)
    {
        if (!json_is_true(json_object_get(n, "alive")))
            continue;
        json_object_foreach(json_object_get(n, "report"), rid, v)
        {
            if (cv__rc_rid_index(x->svc, rid) >= 0)
                return false;
        }
    }
    return true;
}

/* The reports and events of the verdicts on the whole service. */
static void verdict_reports(rc_ctx_t *x)
{
    if (x->rejected) {
        const char *desc = json_string_value(json_object_get(x->rejected, "description"));
        cv__rc_report(x, "ServiceCapacity", "Error", "Service %s rejected: %s", x->resource,
                      desc ? desc : "");
        if (!json_equal(json_object_get(x->rec, "rejected"), x->rejected))
            cv__rc_event(x, -1, "PLACE", "FAILED", "service %s rejected: %s", x->resource,
                         desc ? desc : "");
    }
    const json_t *was_blocked = json_object_get(x->rec, "blocked");
    if (x->blocked && !json_equal(json_object_get(was_blocked, "description"),
                                  json_object_get(x->blocked, "description")))
        cv__rc_event(x, -1, "PLACE", "FAILED", "service %s: %s", x->resource,
                     json_string_value(json_object_get(x->blocked, "description")));
}

/* Whether the plan stores anything the record does not hold already. */
static bool record_changes(const rc_ctx_t *x)
{
    json_t *null = json_null();
    json_t *moves = json_object_size(x->moves) ? x->moves : null;
    bool changed =
        x->ops.n > 0 || stored_differs(x, "placement", x->placement) ||
        stored_differs(x, "unplaced", x->unplaced) ||
        stored_differs(x, "blocklist", x->blocklist) ||
        stored_differs(x, "failures", x->failures) || stored_differs(x, "gave_up", x->gave_up) ||
        stored_differs(x, "blocked", x->blocked ? x->blocked : null) ||
        stored_differs(x, "rejected", x->rejected ? x->rejected : null) ||
        stored_differs(x, "moves", moves) ||
        stored_differs(x, "rollout", x->rollout ? x->rollout : null) || health_differs(x);
    json_decref(null);
    return changed;
}

static json_t *ref_or_null(json_t *v)
{
    return v ? json_incref(v) : NULL;
}

int cv__rc_plan(rc_ctx_t *x, cv_reconcile_plan_t *plan)
{
    make_ops(x);
    placed_events(x);
    left_events(x);
    json_t *library = x->health;
    x->health = json_array();
    adopt_library_reports(x, library);
    json_decref(library);
    waiting_events_and_reports(x);
    blocklist_reports(x);
    crash_loop_reports(x);
    verdict_reports(x);
    bool remove = all_gone(x);
    const char *desc = json_string_value(json_object_get(x->rejected, "description"));
    *plan = (cv_reconcile_plan_t){
        .svc = strdup(x->svc),
        .gen = x->gen,
        .stack = strdup(x->stack),
        .resource = strdup(x->resource),
        .deleting = x->deleting,
        .ops = x->ops,
        .events = x->events,
        .rejected = x->rejected ? strdup(desc ? desc : "") : NULL,
        .record = {.placement = ref_or_null(x->placement),
                   .unplaced = ref_or_null(x->unplaced),
                   .blocklist = ref_or_null(x->blocklist),
                   .failures = ref_or_null(x->failures),
                   .gave_up = ref_or_null(x->gave_up),
                   .blocked = ref_or_null(x->blocked),
                   .rejected = ref_or_null(x->rejected),
                   .health = ref_or_null(x->health),
                   .moves = json_object_size(x->moves) ? json_incref(x->moves) : NULL,
                   .rollout = ref_or_null(x->rollout)},
        .changed = record_changes(x) || remove,
        .remove = remove,
    };
    x->ops = (cv_reconcile_ops_t){0};
    x->events = (cv_reconcile_events_t){0};
    if (x->nomem || !plan->svc || !plan->stack || !plan->resource ||
        (x->rejected && !plan->rejected)) {
        cv_reconcile_plan_free(plan);
        return CV_ENOMEM;
    }
    return 0;
}

/* ---------------------------------------------------------------- the plan's memory and JSON */

void cv_reconcile_plan_free(cv_reconcile_plan_t *plan)
{
    for (size_t i = 0; i < plan->ops.n; i++) {
        free(plan->ops.v[i].node);
        free(plan->ops.v[i].rid);
        json_decref(plan->ops.v[i].spec);
    }
    cv_vec_free(&plan->ops);
    for (size_t i = 0; i < plan->events.n; i++) {
        free(plan->events.v[i].physical_id);
        free(plan->events.v[i].reason);
    }
    cv_vec_free(&plan->events);
    json_t **docs[] = {&plan->record.placement, &plan->record.unplaced, &plan->record.blocklist,
                       &plan->record.failures,  &plan->record.gave_up,  &plan->record.blocked,
                       &plan->record.rejected,  &plan->record.health,   &plan->record.moves,
                       &plan->record.rollout};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        json_decref(*docs[i]);
    free(plan->svc);
    free(plan->stack);
    free(plan->resource);
    free(plan->rejected);
    memset(plan, 0, sizeof(*plan));
}

static json_t *ops_json(const cv_reconcile_ops_t *ops)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < ops->n; i++) {
        const cv_reconcile_op_t *op = &ops->v[i];
        json_t *o =
            op->kind == CV_RECONCILE_ASSIGN
                ? json_pack("{s:s, s:s, s:s, s:O}", "op", "assign", "node", op->node, "rid",
                            op->rid, "spec", op->spec)
                : json_pack("{s:s, s:s, s:s}", "op", "unassign", "node", op->node, "rid", op->rid);
        if (json_array_append_new(list, o) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

static json_t *events_json(const cv_reconcile_events_t *events)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < events->n; i++) {
        const cv_reconcile_event_t *e = &events->v[i];
        if (json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s}", "physical_id",
                                                  e->physical_id, "action", e->action, "status",
                                                  e->status, "reason", e->reason)) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

static json_t *doc(json_t *v)
{
    return v ? json_incref(v) : json_null();
}

json_t *cv_reconcile_plan_json(const cv_reconcile_plan_t *plan)
{
    const cv_reconcile_record_t *r = &plan->record;
    return json_pack("{s:s, s:I, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
                     "s:b, s:b, s:o, s:o}",
                     "svc", plan->svc, "gen", (json_int_t)plan->gen, "stack", plan->stack,
                     "resource", plan->resource, "state", plan->deleting ? "deleting" : "active",
                     "placement", doc(r->placement), "unplaced", doc(r->unplaced), "blocklist",
                     doc(r->blocklist), "failures", doc(r->failures), "gave_up", doc(r->gave_up),
                     "blocked", doc(r->blocked), "rejected", doc(r->rejected), "ops",
                     ops_json(&plan->ops), "events", events_json(&plan->events), "health",
                     doc(r->health), "changed", plan->changed, "remove", plan->remove, "moves",
                     doc(r->moves), "rollout", doc(r->rollout));
}
