/*
 * live_place — the placement pass of the cluster resource manager
 * (docs/crm.md "Timers and phases"): every service of the model reconciled
 * one after another — replicas of lost nodes, replicas the restart policy
 * gave up on, unplaced ones. The planner decides everything; the pass only
 * brings each service to it in turn, and stops as soon as the role is lost.
 *
 * A stack may switch the continuous convergence of its services off (its
 * `converge_drift` is "0": submit/update --no-converge-drift): the pass then
 * leaves its services alone while the stack is settled, unless a
 * `convergectl converge` asked for one pass (the service's `converge`
 * field, cleared once reconciled). A stack in progress, and a service
 * being deleted, are always reconciled: that is the action itself.
 *
 * A service no resource will ever delete is an orphan: its stack is gone
 * or deleted, or the stack is settled, no engine holds the resource's
 * lease and its record names neither this service nor it among replaced
 * versions (an engine wrote the spec and died before recording the action,
 * and a newer traversal superseded the job). The pass deletes its
 * replicas as the resource's delete would (svc_put.lua, state deleting).
 */
#include "live_internal.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct place_pass {
    cv_worker_t *w;
    cv__live_go_on_fn go_on;
    cv__live_pass_cb cb;
    void *arg;
    json_t *services; /* [{"svc", "stack", "resource", "state", "converge"}] */
    size_t next;
    int reconciled;
    /* the current service's stack and resource, read before it is reconciled */
    bool stack_gone, stack_busy, drift_off, referenced, leased, read_failed;
    int pending; /* its reads still to answer */
} place_pass_t;

static void pass_end(place_pass_t *l)
{
    cv__live_pass_cb cb = l->cb;
    void *arg = l->arg;
    int n = l->reconciled;
    json_decref(l->services);
    free(l);
    cb(arg, n);
}

static void reconcile_next(place_pass_t *l);

static const char *current(const place_pass_t *l, const char *field)
{
    const char *s =
        json_string_value(json_object_get(json_array_get(l->services, l->next - 1), field));
    return s ? s : "";
}

static void on_reconciled(void *arg, int rc, const char *err)
{
    place_pass_t *l = arg;
    if (rc && rc != CV_EVALIDATE && rc != CV_ENOENT)
        cv_warn("crm: reconcile of service %s: %s", current(l, "svc"), err);
    if (rc == 0 && current(l, "converge")[0]) {
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, current(l, "svc"));
        const char *argv[] = {"HDEL", key, "converge"};
        cv_redis_argv(l->w->redis, 3, argv, NULL, NULL, NULL);
    }
    l->reconciled++;
    reconcile_next(l);
}

static const char *reply_str(const redisReply *rep, size_t i)
{
    return rep && rep->type == REDIS_REPLY_ARRAY && i < rep->elements &&
                   rep->element[i]->type == REDIS_REPLY_STRING
               ? rep->element[i]->str
               : NULL;
}

static void decide(place_pass_t *l);

/* Each reply of the three reads; the last one decides. */
static void read_done(place_pass_t *l, bool answered)
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
    place_pass_t *l = ud;
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
    place_pass_t *l = ud;
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
    place_pass_t *l = ud;
    l->leased = !rep || rep->type != REDIS_REPLY_INTEGER || rep->integer != 0;
    read_done(l, rep != NULL);
}

static bool orphaned(const place_pass_t *l)
{
    if (strcmp(current(l, "state"), "active") != 0)
        return false;
    return l->stack_gone || (!l->stack_busy && !l->leased && !l->referenced);
}

static void on_orphan_marked(cv_redis_t *redis, redisReply *rep, void *ud)
{
    (void)redis;
    (void)rep;
    place_pass_t *l = ud;
    cv_live_reconcile(l->w, current(l, "svc"), on_reconciled, l);
}

static void delete_orphan(place_pass_t *l)
{
    char key[CV_KEY_MAX], set[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, current(l, "svc"));
    cv_key(set, sizeof(set), CV_KEY_SERVICES, NULL, 0, NULL);
    cv_svc_put_keys_t k = {.svc = key, .services = set};
    cv_svc_put_args_t a = {.svc_id = current(l, "svc"), .spec = "", .state = "deleting"};
    cv_info("crm: service %s is an orphan (its stack or resource no longer names it): "
            "deleting its replicas",
            current(l, "svc"));
    if (cv_redis_call(l->w->redis, CV_SCRIPT_SVC_PUT, k.v, a.v, 0, NULL, NULL, on_orphan_marked,
                      l) != 0)
        pass_end(l);
}

static void decide(place_pass_t *l)
{
    if (!l->go_on(l->arg) || l->read_failed) {
        pass_end(l); /* Redis went away, or the role did: the next pass starts again */
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

static void reconcile_next(place_pass_t *l)
{
    if (!l->go_on(l->arg) || l->next >= json_array_size(l->services)) {
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

void cv__live_place_all(cv_worker_t *w, const json_t *model, cv__live_go_on_fn go_on,
                        cv__live_pass_cb cb, void *arg)
{
    place_pass_t *l = calloc(1, sizeof(*l));
    if (!l) {
        cb(arg, 0);
        return;
    }
    l->w = w;
    l->go_on = go_on;
    l->cb = cb;
    l->arg = arg;
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
    reconcile_next(l);
}
