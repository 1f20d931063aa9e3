/*
 * live_loop — the cluster loop: every second, the observer holding the
 * lease {cluster}:crm (SET NX PX, renewed by lease_renew.lua only while it
 * is still ours, so one observer at a time runs it and another takes over
 * within seconds of its death) reads the live model once to mark nodes
 * down ({cluster}:down:<node> = when first seen without a heartbeat,
 * removed when it is back, with a System.FM health report while down) and
 * to drop expired health reports, then reconciles every service in
 * {cluster}:services one after another. The planner decides everything;
 * the loop only brings each service to it in turn.
 *
 * A stack may switch the continuous convergence of its services off (its
 * `converge_drift` is "0": submit/update --no-converge-drift): the loop then
 * leaves its services alone while the stack is settled, unless a
 * `convergectl converge` asked for one pass (the service's `converge`
 * field, cleared once reconciled). A stack in progress, and a service
 * being deleted, are always reconciled: that is the action itself.
 *
 * A service no resource will ever delete is an orphan: its stack is gone
 * or deleted, or the stack is settled, no engine holds the resource's
 * lease and its record names neither this service nor it among replaced
 * versions (an engine wrote the spec and died before recording the action,
 * and a newer traversal superseded the job). The loop deletes its
 * replicas as the resource's delete would (svc_put.lua, state deleting).
 */
#include "live_internal.h"

#include "cv_error.h"
#include "cv_keys.h"
#include "cv_log.h"
#include "cv_reconcile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOP_INTERVAL_MS 1000
#define LOOP_LEASE_MS "3000"

typedef struct live_loop {
    cv_worker_t *w;
    uv_timer_t timer;
    char lease_key[CV_KEY_MAX];
    json_t *services; /* this pass's services: [{"svc", "stack", "state", "converge"}] */
    size_t next;
    bool busy, stopped, timer_closed;
    /* the current service's stack and resource, read before it is reconciled */
    bool stack_gone, stack_busy, drift_off, referenced, leased, read_failed;
    int pending; /* its reads still to answer */
} live_loop_t;

static void maybe_free(live_loop_t *l)
{
    if (l->stopped && l->timer_closed && !l->busy) {
        json_decref(l->services);
        free(l);
    }
}

static void pass_end(live_loop_t *l)
{
    json_decref(l->services);
    l->services = NULL;
    l->busy = false;
    maybe_free(l);
}

/* ---------------------------------------------------------------- services */

static void reconcile_next(live_loop_t *l);

static const char *current(const live_loop_t *l, const char *field)
{
    const char *s =
        json_string_value(json_object_get(json_array_get(l->services, l->next - 1), field));
    return s ? s : "";
}

static void on_reconciled(void *arg, int rc, const char *err)
{
    live_loop_t *l = arg;
    if (rc && rc != CV_EVALIDATE && rc != CV_ENOENT)
        cv_warn("live: reconcile of service %s: %s", current(l, "svc"), err);
    if (rc == 0 && current(l, "converge")[0]) {
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, current(l, "svc"));
        const char *argv[] = {"HDEL", key, "converge"};
        cv_redis_argv(l->w->redis, 3, argv, NULL, NULL, NULL);
    }
    reconcile_next(l);
}

static const char *reply_str(const redisReply *rep, size_t i)
{
    return rep && rep->type == REDIS_REPLY_ARRAY && i < rep->elements &&
                   rep->element[i]->type == REDIS_REPLY_STRING
               ? rep->element[i]->str
               : NULL;
}

static void decide(live_loop_t *l);

/* Each reply of the three reads; the last one decides. */
static void read_done(live_loop_t *l, bool answered)
{
    if (!answered)
        l->read_failed = true;
    if (--l->pending == 0)
        decide(l);
}

/* HMGET stack converge_drift status */
static void on_stack_read(cv_redis_t *redis, redisReply *rep, void *ud)
{
    (void)redis;
    live_loop_t *l = ud;
    const char *drift = reply_str(rep, 0), *status = reply_str(rep, 1);
    l->drift_off = drift && strcmp(drift, "0") == 0;
    l->stack_gone = rep && (!status || strcmp(status, "DELETE_COMPLETE") == 0);
    l->stack_busy = status && strstr(status, "_IN_PROGRESS");
    read_done(l, rep != NULL);
}

/* HMGET res physical_id old: whether the record names the service. */
static void on_record_read(cv_redis_t *redis, redisReply *rep, void *ud)
{
    (void)redis;
    live_loop_t *l = ud;
    const char *svc = current(l, "svc"), *id = reply_str(rep, 0), *old = reply_str(rep, 1);
    char quoted[320];
    snprintf(quoted, sizeof(quoted), "\"%s\"", svc);
    l->referenced = (id && strcmp(id, svc) == 0) || (old && strstr(old, quoted));
    read_done(l, rep != NULL);
}

/* EXISTS lease */
static void on_lease_read(cv_redis_t *redis, redisReply *rep, void *ud)
{
    (void)redis;
    live_loop_t *l = ud;
    l->leased = !rep || rep->type != REDIS_REPLY_INTEGER || rep->integer != 0;
    read_done(l, rep != NULL);
}

static bool orphaned(const live_loop_t *l)
{
    if (strcmp(current(l, "state"), "active") != 0)
        return false;
    return l->stack_gone || (!l->stack_busy && !l->leased && !l->referenced);
}

static void on_orphan_marked(cv_redis_t *redis, redisReply *rep, void *ud)
{
    (void)redis;
    (void)rep;
    live_loop_t *l = ud;
    cv_live_reconcile(l->w, current(l, "svc"), on_reconciled, l);
}

static void delete_orphan(live_loop_t *l)
{
    char key[CV_KEY_MAX], set[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, current(l, "svc"));
    cv_key(set, sizeof(set), CV_KEY_SERVICES, NULL, 0, NULL);
    cv_svc_put_keys_t k = {.svc = key, .services = set};
    cv_svc_put_args_t a = {.svc_id = current(l, "svc"), .spec = "", .state = "deleting"};
    cv_info("live: service %s is an orphan (its stack or resource no longer names it): "
            "deleting its replicas",
            current(l, "svc"));
    if (cv_redis_call(l->w->redis, CV_SCRIPT_SVC_PUT, k.v, a.v, 0, NULL, NULL, on_orphan_marked,
                      l) != 0)
        pass_end(l);
}

static void decide(live_loop_t *l)
{
    if (l->stopped || l->w->stopping || l->read_failed) {
        pass_end(l); /* Redis went away: the next pass starts again */
        return;
    }
    if (orphaned(l)) {
        delete_orphan(l);
        return;
    }
    bool drift = !l->drift_off || l->stack_busy || strcmp(current(l, "state"), "deleting") == 0 ||
                 current(l, "converge")[0];
    if (drift)
        cv_live_reconcile(l->w, current(l, "svc"), on_reconciled, l);
    else
        reconcile_next(l);
}

static void reconcile_next(live_loop_t *l)
{
    if (l->stopped || l->w->stopping || l->next >= json_array_size(l->services)) {
        pass_end(l);
        return;
    }
    l->next++;
    char stack[CV_KEY_MAX], res[CV_KEY_MAX], lease[CV_KEY_MAX];
    cv_key(stack, sizeof(stack), CV_KEY_STACK, current(l, "stack"), 0, NULL);
    cv_key(res, sizeof(res), CV_KEY_RES, current(l, "stack"), 0, current(l, "resource"));
    cv_key(lease, sizeof(lease), CV_KEY_LEASE, current(l, "stack"), 0, current(l, "resource"));
    const char *a1[] = {"HMGET", stack, "converge_drift", "status"};
    const char *a2[] = {"HMGET", res, "physical_id", "old"};
    const char *a3[] = {"EXISTS", lease};
    l->read_failed = false;
    l->pending = 1; /* held while sending */
    if (cv_redis_argv(l->w->redis, 4, a1, NULL, on_stack_read, l) == 0)
        l->pending++;
    else
        l->read_failed = true;
    if (cv_redis_argv(l->w->redis, 4, a2, NULL, on_record_read, l) == 0)
        l->pending++;
    else
        l->read_failed = true;
    if (cv_redis_argv(l->w->redis, 2, a3, NULL, on_lease_read, l) == 0)
        l->pending++;
    else
        l->read_failed = true;
    read_done(l, true); /* drops the count held while sending */
}

/* ---------------------------------------------------------------- nodes and health */

/* A node down is an Error report of System.FM on the node (Service
 * Fabric's failover manager reports a node's state), kept from the first
 * pass that saw it down (HSETNX) until it is back. */
static void node_health(live_loop_t *l, const char *node, bool down, double since)
{
    char key[CV_KEY_MAX], source[300], field[320];
    cv_key(key, sizeof(key), CV_KEY_HEALTH, NULL, 0, NULL);
    snprintf(source, sizeof(source), "System.FM:%s", node);
    snprintf(field, sizeof(field), "%s|State", source);
    if (!down) {
        const char *argv[] = {"HDEL", key, field};
        cv_redis_argv(l->w->redis, 3, argv, NULL, NULL, NULL);
        return;
    }
    char desc[512];
    snprintf(desc, sizeof(desc), "Node %s is down: no heartbeat since %.0f (Unix s)", node, since);
    json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:f}", "source", source, "property",
                          "State", "state", "Error", "description", desc, "timeToLive", "Infinite",
                          "removeWhenExpired", 0, "time", since);
    char *text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    const char *argv[] = {"HSETNX", key, field, text ? text : "{}"};
    cv_redis_argv(l->w->redis, 4, argv, NULL, NULL, NULL);
    free(text);
}

static void mark_nodes(live_loop_t *l, const json_t *model)
{
    double now = json_number_value(json_object_get(model, "now"));
    const char *node;
    json_t *n;
    json_object_foreach(json_object_get(model, "nodes"), node, n)
    {
        bool alive = json_is_true(json_object_get(n, "alive"));
        const json_t *since = json_object_get(n, "down_since");
        char key[CV_KEY_MAX], t[32];
        cv_key(key, sizeof(key), CV_KEY_DOWN, NULL, 0, node);
        if (!alive && !since) {
            snprintf(t, sizeof(t), "%.3f", now);
            const char *argv[] = {"SET", key, t, "NX"};
            cv_redis_argv(l->w->redis, 4, argv, NULL, NULL, NULL);
            cv_info("live: node %s is down (no heartbeat)", node);
            node_health(l, node, true, now);
        } else if (alive && since) {
            const char *argv[] = {"DEL", key};
            cv_redis_argv(l->w->redis, 2, argv, NULL, NULL, NULL);
            cv_info("live: node %s is back", node);
            node_health(l, node, false, 0);
        }
    }
}

/* Seconds of a timeToLive: a number, "hh:mm:ss", or "Infinite" (-1). */
static double ttl_seconds(const json_t *v)
{
    if (json_is_number(v))
        return json_number_value(v);
    const char *s = json_string_value(v);
    int h, m, sec;
    if (s && sscanf(s, "%d:%d:%d", &h, &m, &sec) == 3)
        return h * 3600.0 + m * 60.0 + sec;
    return -1;
}

static void prune_health(live_loop_t *l, const json_t *model)
{
    double now = json_number_value(json_object_get(model, "now"));
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_HEALTH, NULL, 0, NULL);
    const char *field;
    json_t *v;
    json_object_foreach(json_object_get(model, "health"), field, v)
    {
        if (strncmp(field, "System.FM:", 10) == 0) {
            /* a node down report outlives nothing: not of a node the cluster has */
            char node[300];
            snprintf(node, sizeof(node), "%s", field + 10);
            char *bar = strrchr(node, '|');
            if (bar)
                *bar = '\0';
            if (!json_object_get(json_object_get(model, "nodes"), node)) {
                const char *argv[] = {"HDEL", key, field};
                cv_redis_argv(l->w->redis, 3, argv, NULL, NULL, NULL);
            }
            continue;
        }
        json_t *r = json_loads(json_string_value(v), 0, NULL);
        double ttl = ttl_seconds(json_object_get(r, "timeToLive"));
        double at = json_number_value(json_object_get(r, "time"));
        bool expired = json_is_true(json_object_get(r, "removeWhenExpired")) && ttl >= 0 &&
                       at > 0 && at + ttl < now;
        json_decref(r);
        if (!expired)
            continue;
        const char *argv[] = {"HDEL", key, field};
        cv_redis_argv(l->w->redis, 3, argv, NULL, NULL, NULL);
    }
}

/* The planner's node reports (capacity overruns of measured loads): each
 * written once when it appears (its time is when it began), removed when
 * it is over. */
static void node_reports(live_loop_t *l, const json_t *model)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_HEALTH, NULL, 0, NULL);
    json_t *now = json_object(), *reports = cv_reconcile_node_reports(model);
    size_t i;
    json_t *r;
    json_array_foreach(reports, i, r)
    {
        char field[512];
        snprintf(field, sizeof(field), "%s|%s", json_string_value(json_object_get(r, "source")),
                 json_string_value(json_object_get(r, "property")));
        json_object_set_new(now, field, json_true());
        if (json_object_get(json_object_get(model, "health"), field))
            continue;
        char *text = json_dumps(r, JSON_COMPACT);
        const char *argv[] = {"HSETNX", key, field, text ? text : "{}"};
        cv_redis_argv(l->w->redis, 4, argv, NULL, NULL, NULL);
        free(text);
    }
    const char *field;
    json_t *v;
    json_object_foreach(json_object_get(model, "health"), field, v)
    {
        const char *bar = strchr(field, '|');
        if (bar && strncmp(bar + 1, "NodeCapacity_", 13) == 0 &&
            strncmp(field, "System.PLB:", 11) == 0 && !json_object_get(now, field)) {
            const char *argv[] = {"HDEL", key, field};
            cv_redis_argv(l->w->redis, 3, argv, NULL, NULL, NULL);
        }
    }
    json_decref(reports);
    json_decref(now);
}

static void on_model(void *arg, json_t *model, int rc, const char *err)
{
    live_loop_t *l = arg;
    if (!model) {
        cv_debug("live: cluster loop: %s (%d)", err, rc);
        pass_end(l);
        return;
    }
    mark_nodes(l, model);
    prune_health(l, model);
    node_reports(l, model);
    l->services = json_array();
    const char *svc;
    json_t *v;
    json_object_foreach(json_object_get(model, "services"), svc, v)
    {
        json_array_append_new(l->services, json_pack("{s:s, s:O?, s:O?, s:O?, s:O?}", "svc", svc,
                                                     "stack", json_object_get(v, "stack"),
                                                     "resource", json_object_get(v, "resource"),
                                                     "state", json_object_get(v, "state"),
                                                     "converge", json_object_get(v, "converge")));
    }
    json_decref(model);
    l->next = 0;
    reconcile_next(l);
}

/* ---------------------------------------------------------------- the lease */

static void pass_start(live_loop_t *l)
{
    if (l->stopped)
        pass_end(l);
    else
        cv__live_read(l->w, on_model, l);
}

static void on_lease_renewed(cv_redis_t *redis, redisReply *rep, void *ud)
{
    live_loop_t *l = ud;
    (void)redis;
    bool renewed = cv_reply_answer(CV_SCRIPT_LEASE_RENEW, rep) == CV_ANSWER_VALUE &&
                   rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
    if (renewed)
        pass_start(l);
    else
        pass_end(l);
}

static void on_lease_set(cv_redis_t *redis, redisReply *rep, void *ud)
{
    live_loop_t *l = ud;
    if (l->stopped || !rep) {
        pass_end(l);
        return;
    }
    if (rep->type == REDIS_REPLY_STATUS) {
        cv_info("live: this worker runs the cluster loop (lease %s)", l->lease_key);
        pass_start(l);
        return;
    }
    cv_lease_renew_keys_t keys = {.lease = l->lease_key};
    cv_lease_renew_args_t args = {.token = l->w->id, .lease_ms = LOOP_LEASE_MS};
    if (cv_redis_call(redis, CV_SCRIPT_LEASE_RENEW, keys.v, args.v, 0, NULL, NULL, on_lease_renewed,
                      l) != 0)
        pass_end(l);
}

static void on_tick(uv_timer_t *t)
{
    live_loop_t *l = t->data;
    if (l->busy || l->w->stopping || !cv_redis_connected(l->w->redis))
        return;
    l->busy = true;
    const char *argv[] = {"SET", l->lease_key, l->w->id, "NX", "PX", LOOP_LEASE_MS};
    if (cv_redis_argv(l->w->redis, 6, argv, NULL, on_lease_set, l) != 0)
        l->busy = false;
}

void *cv_live_loop_start(cv_worker_t *w)
{
    live_loop_t *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->w = w;
    cv_key(l->lease_key, sizeof(l->lease_key), CV_KEY_CRM, NULL, 0, NULL);
    uv_timer_init(w->loop, &l->timer);
    l->timer.data = l;
    uv_timer_start(&l->timer, on_tick, LOOP_INTERVAL_MS, LOOP_INTERVAL_MS);
    return l;
}

static void on_timer_closed(uv_handle_t *h)
{
    live_loop_t *l = h->data;
    l->timer_closed = true;
    maybe_free(l);
}

void cv_live_loop_stop(void *loop)
{
    live_loop_t *l = loop;
    if (!l)
        return;
    l->stopped = true;
    uv_timer_stop(&l->timer);
    uv_close((uv_handle_t *)&l->timer, on_timer_closed);
}
