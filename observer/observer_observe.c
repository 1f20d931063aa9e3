/*
 * OBSERVE jobs. The record is read with the version the engine wrote; if it
 * moved on, a newer action owns the resource and this job ends. Otherwise
 * the type observes reality: IN_PROGRESS waits on a timer (never a sleeping
 * worker) and looks again; FAILED fails the traversal; COMPLETE records the
 * observation and satisfies the successors. A cleanup node observes every
 * version it is deleting (replaced versions, and the current one when the
 * resource left the definition) and is done when all are gone.
 */
#include "observer.h"

#include "cv_error.h"
#include "cv_keys.h"
#include "cv_log.h"
#include "cv_poison.h"
#include "cv_progress.h"
#include "cv_reaper.h"
#include "cv_record.h"
#include "cv_rtype.h"
#include "cv_str.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest pause between two looks at a resource that is in progress. */
#define MAX_LOOK_INTERVAL_MS 5000

typedef struct observe {
    cv_worker_t *w;
    cv_job_t *job;
    cv_msg_t msg;
    char node[CV_NAME_MAX + 2];
    char version[24];
    cv_retry_t retry;
    cv_record_t rec;
    char *graph_entry;
    cv_rstate_t st;
    json_t *children; /* nested versions' child stacks as read now: id -> snapshot */
} observe_t;

static void observe_start(void *arg);

static void observe_reset(observe_t *o)
{
    cv_record_clear(&o->rec);
    free(o->graph_entry);
    o->graph_entry = NULL;
    json_decref(o->children);
    o->children = NULL;
    json_decref(o->st.data);
    json_decref(o->st.attrs);
    o->st.data = o->st.attrs = NULL;
}

static void observe_end(observe_t *o)
{
    observe_reset(o);
    cv_job_finish(o->job);
    free(o);
}

static void observe_later(observe_t *o, unsigned ms)
{
    observe_reset(o);
    cv_worker_later(o->w, ms, observe_start, o);
}

/* A job that keeps failing while Redis and Kafka answer is given up:
 * dead-lettered, its stack failed with the reason (cv_poison). */
static void observe_retry(observe_t *o)
{
    observe_reset(o);
    if (!cv_poison_retry(o->w, &o->retry, o->job, &o->msg, observe_start, o))
        free(o);
}

static void on_progress(void *ud, int rc)
{
    observe_t *o = ud;
    if (rc == CV_EREDIS || rc == CV_EKAFKA) {
        observe_retry(o);
        return;
    }
    if (rc == CV_EFENCED)
        o->w->stats.fenced++;
    else if (rc == CV_ESTALE)
        o->w->stats.stale++;
    observe_end(o);
}

static void settled_complete(observe_t *o)
{
    bool deleted = strcmp(o->rec.action, "DELETE") == 0;
    char status[48];
    snprintf(status, sizeof(status), "%s_COMPLETE", o->rec.action);
    char *attrs = json_dumps(o->st.attrs, JSON_COMPACT);
    char *data = json_dumps(o->st.data, JSON_COMPACT);
    json_t *pass = json_pack("{s:s, s:O}", "id", o->rec.physical_id, "attrs", o->st.attrs);
    char *pass_text = json_dumps(pass, JSON_COMPACT);
    json_decref(pass);
    cv_node_done_t d = {&o->msg,
                        o->graph_entry,
                        o->version,
                        deleted ? "DELETED" : status,
                        attrs,
                        data,
                        "state changed",
                        deleted ? "{}" : pass_text,
                        o->rec.physical_id,
                        o->rec.action,
                        "",
                        "",
                        "",
                        false}; /* a redelivered OBSERVE job publishes again */
    int rc = cv_progress_node_done(o->w, &d, on_progress, o);
    free(attrs);
    free(data);
    free(pass_text);
    if (rc)
        observe_retry(o);
}

static void settled_failed(observe_t *o, const char *why)
{
    char status[48], reason[CV_REASON_MAX], mention[CV_NAME_MAX + 16];
    snprintf(status, sizeof(status), "%s_FAILED", o->rec.action);
    /* A reason must name the resource; types may already have done so. */
    snprintf(mention, sizeof(mention), "resources.%s", o->msg.resource);
    if (strstr(why, mention))
        snprintf(reason, sizeof(reason), "%s", why);
    else
        snprintf(reason, sizeof(reason), "%s: %s", mention, why);
    cv_warn("stack %s: %s", o->msg.stack, reason);
    cv_node_failed_t f = {&o->msg, o->version, status, reason, o->rec.physical_id, o->rec.action};
    if (cv_progress_node_failed(o->w, &f, on_progress, o) != 0)
        observe_retry(o);
}

static cv_action_t action_of(const char *name)
{
    if (strcmp(name, "DELETE") == 0)
        return CV_ACTION_DELETE;
    if (strcmp(name, "UPDATE") == 0)
        return CV_ACTION_UPDATE;
    return CV_ACTION_CREATE;
}

/* A nested version observes its child stack: hand it what was read. */
static void add_child(const observe_t *o, json_t *data, const char *physical_id)
{
    const json_t *snap = json_object_get(o->children, physical_id);
    if (snap)
        json_object_set(data, "child", (json_t *)snap);
}

static void look(observe_t *o)
{
    const cv_rtype_t *type = cv_rtype_lookup(o->rec.type);
    if (!type) {
        char why[256];
        snprintf(why, sizeof(why), "unknown resource type \"%s\"", o->rec.type);
        settled_failed(o, why);
        return;
    }
    memset(&o->st, 0, sizeof(o->st));
    o->st.stack_name = o->msg.stack;
    o->st.resource_name = o->msg.resource;
    o->st.uuid = o->rec.uuid;
    o->st.props = o->rec.props;
    o->st.now = cv_now();
    o->st.action_started = o->rec.started;
    snprintf(o->st.physical_id, sizeof(o->st.physical_id), "%s", o->rec.physical_id);
    o->st.data = json_deep_copy(o->rec.data);
    o->st.attrs = json_deep_copy(o->rec.attrs);
    add_child(o, o->st.data, o->rec.physical_id);
    switch (type->observe(&o->st, action_of(o->rec.action))) {
    case CV_OBSERVED_IN_PROGRESS: {
        double wait_ms = (o->st.retry_at - cv_now()) * 1000.0;
        unsigned ms = wait_ms < 1                      ? 1
                      : wait_ms > MAX_LOOK_INTERVAL_MS ? MAX_LOOK_INTERVAL_MS
                                                       : (unsigned)wait_ms;
        cv_reaper_touch(o->w, &o->msg); /* being watched: not stalled */
        observe_later(o, ms);
        break;
    }
    case CV_OBSERVED_FAILED:
        settled_failed(o, o->st.reason[0] ? o->st.reason : "observed failure");
        break;
    case CV_OBSERVED_COMPLETE:
        settled_complete(o);
        break;
    }
}

/* ---- cleanup nodes ---- */

typedef struct cleanup_look {
    json_t *remaining; /* versions to keep in the record */
    json_t *events;    /* DELETE COMPLETE of each version gone */
    double retry_at;   /* earliest time to look again; 0: nothing in progress */
    char why[512];     /* a failure, "" when none */
} cleanup_look_t;

static cv_observed_t observe_version(observe_t *o, const char *type_name, const char *physical_id,
                                     const json_t *data, double started, char *why, size_t whysz,
                                     double *retry_at)
{
    const cv_rtype_t *type = cv_rtype_lookup(type_name);
    if (!type) {
        snprintf(why, whysz, "unknown resource type \"%s\"", type_name);
        return CV_OBSERVED_FAILED;
    }
    cv_rstate_t st = {0};
    st.stack_name = o->msg.stack;
    st.resource_name = o->msg.resource;
    st.now = cv_now();
    st.action_started = started;
    snprintf(st.physical_id, sizeof(st.physical_id), "%s", physical_id);
    st.data = data ? json_deep_copy(data) : json_object();
    st.attrs = json_object();
    add_child(o, st.data, physical_id);
    cv_observed_t r = type->observe(&st, CV_ACTION_DELETE);
    if (r == CV_OBSERVED_FAILED)
        snprintf(why, whysz, "%s", st.reason[0] ? st.reason : "delete failed");
    *retry_at = st.retry_at;
    json_decref(st.data);
    json_decref(st.attrs);
    return r;
}

static void look_at_old(observe_t *o, json_t *entry, cleanup_look_t *l)
{
    if (strcmp(json_string_value(json_object_get(entry, "status")), "DELETE_IN_PROGRESS") != 0) {
        json_array_append(l->remaining, entry);
        return;
    }
    const char *pid = json_string_value(json_object_get(entry, "physical_id"));
    double retry_at = 0;
    cv_observed_t r = observe_version(o, json_string_value(json_object_get(entry, "type")),
                                      pid ? pid : "", json_object_get(entry, "data"),
                                      json_number_value(json_object_get(entry, "started")), l->why,
                                      sizeof(l->why), &retry_at);
    if (r == CV_OBSERVED_COMPLETE) {
        json_array_append_new(l->events, json_pack("{s:s, s:s, s:s, s:s}", "physical_id",
                                                   pid ? pid : "", "action", "DELETE", "status",
                                                   "COMPLETE", "reason", "state changed"));
        return;
    }
    json_array_append(l->remaining, entry);
    if (r == CV_OBSERVED_IN_PROGRESS && (l->retry_at == 0 || retry_at < l->retry_at))
        l->retry_at = retry_at;
}

static void cleanup_finished(observe_t *o, bool current_gone, const cleanup_look_t *l)
{
    char *old = json_dumps(l->remaining, JSON_COMPACT);
    char *events = json_dumps(l->events, JSON_COMPACT);
    cv_node_done_t d = {&o->msg,
                        o->graph_entry,
                        o->version,
                        current_gone ? "DELETED" : "",
                        "",
                        "",
                        "state changed",
                        "{}",
                        o->rec.physical_id,
                        "DELETE",
                        old,
                        events,
                        "",
                        false};
    int rc = cv_progress_node_done(o->w, &d, on_progress, o);
    free(old);
    free(events);
    if (rc)
        observe_retry(o);
}

static void look_cleanup(observe_t *o)
{
    cleanup_look_t l = {json_array(), json_array(), 0, ""};
    size_t i;
    json_t *entry;
    json_array_foreach(o->rec.old, i, entry)
    {
        look_at_old(o, entry, &l);
    }
    bool current = strcmp(o->rec.status, "DELETE_IN_PROGRESS") == 0;
    bool current_gone = false;
    if (current && !l.why[0]) {
        double retry_at = 0;
        cv_observed_t r = observe_version(o, o->rec.type, o->rec.physical_id, o->rec.data,
                                          o->rec.started, l.why, sizeof(l.why), &retry_at);
        current_gone = r == CV_OBSERVED_COMPLETE;
        if (r == CV_OBSERVED_IN_PROGRESS && (l.retry_at == 0 || retry_at < l.retry_at))
            l.retry_at = retry_at;
    }
    if (l.why[0]) {
        settled_failed(o, l.why);
    } else if (l.retry_at > 0) {
        double wait_ms = (l.retry_at - cv_now()) * 1000.0;
        cv_reaper_touch(o->w, &o->msg); /* being watched: not stalled */
        observe_later(o, wait_ms < 1                      ? 1
                         : wait_ms > MAX_LOOK_INTERVAL_MS ? MAX_LOOK_INTERVAL_MS
                                                          : (unsigned)wait_ms);
    } else {
        cleanup_finished(o, current_gone, &l);
    }
    json_decref(l.remaining);
    json_decref(l.events);
}

/* ---- nested versions: their child stacks are read first ---- */

static bool is_nested(const char *type_name)
{
    const cv_rtype_t *t = cv_rtype_lookup(type_name);
    return t && t->nested;
}

/* The child stacks the versions this job observes are waiting on. */
static json_t *children_to_read(const observe_t *o)
{
    json_t *ids = json_array();
    if (is_nested(o->rec.type))
        json_array_append_new(ids, json_string(o->rec.physical_id));
    size_t i;
    const json_t *e;
    json_array_foreach(o->rec.old, i, e)
    {
        const char *pid = json_string_value(json_object_get(e, "physical_id"));
        if (pid && is_nested(json_string_value(json_object_get(e, "type"))))
            json_array_append_new(ids, json_string(pid));
    }
    return ids;
}

typedef void (*look_fn)(observe_t *o);

typedef struct look_after {
    observe_t *o;
    look_fn then;
} look_after_t;

static void on_children(void *ud, json_t *snapshots)
{
    look_after_t *a = ud;
    observe_t *o = a->o;
    look_fn then = a->then;
    free(a);
    if (!snapshots) {
        observe_retry(o);
        return;
    }
    o->children = snapshots;
    then(o);
}

static void read_children_then(observe_t *o, look_fn then)
{
    json_t *ids = children_to_read(o);
    look_after_t *a = json_array_size(ids) ? malloc(sizeof(*a)) : NULL;
    if (!a) {
        bool none = json_array_size(ids) == 0;
        json_decref(ids);
        if (none)
            then(o);
        else
            observe_retry(o);
        return;
    }
    *a = (look_after_t){o, then};
    if (cv__observer_read_children(o->w, ids, on_children, a) != 0) {
        free(a);
        observe_retry(o);
    }
    json_decref(ids);
}

static void on_load(cv_redis_t *r, redisReply *rep, void *ud)
{
    observe_t *o = ud;
    (void)r;
    if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 &&
        strcmp(cv_reply_str(rep, 0), "NONODE") == 0) {
        observe_reset(o);
        cv_poison_unknown_node(o->w, o->job, &o->msg);
        free(o);
        return;
    }
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 4) {
        observe_retry(o);
        return;
    }
    if (!cv_reply_str(rep, 0)[0] && !cv_reply_str(rep, 1)[0]) {
        observe_reset(o); /* no traversal, no status: the stack does not exist */
        cv_poison_unknown_stack(o->w, o->job, &o->msg);
        free(o);
        return;
    }
    cv_record_parse(&o->rec, rep->element[2]);
    o->graph_entry = strdup(cv_reply_str(rep, 3));
    if (o->msg.phase == CV_PHASE_CLEANUP && !o->rec.exists) {
        /* Deleted already (a redelivery): done again, which republishes. */
        snprintf(o->version, sizeof(o->version), "%s", "");
        cleanup_look_t l = {json_array(), json_array(), 0, ""};
        cleanup_finished(o, false, &l);
        json_decref(l.remaining);
        json_decref(l.events);
        return;
    }
    if (o->msg.phase == CV_PHASE_CLEANUP && strcmp(o->rec.version, o->version) == 0) {
        read_children_then(o, look_cleanup);
        return;
    }
    if (!o->rec.exists || strcmp(o->rec.version, o->version) != 0 ||
        cv_str_ends_with(o->rec.status, "_FAILED")) {
        /* A newer action owns the resource, or the outcome is recorded. */
        o->w->stats.stale++;
        observe_end(o);
        return;
    }
    /* Also when the outcome is recorded already (a redelivery, or a manual
     * `convergectl observe`): looking again is idempotent, records what is
     * seen now, and re-satisfies the successors. */
    read_children_then(o, look);
}

static void observe_start(void *arg)
{
    observe_t *o = arg;
    if (o->w->stopping) {
        cv_worker_hand_back(o->w, o->job); /* another observer looks again */
        free(o);
        return;
    }
    char k[3][CV_KEY_MAX];
    cv_key_stack(k[0], CV_KEY_MAX, o->msg.stack, "stack");
    cv_key_resource(k[1], CV_KEY_MAX, o->msg.stack, "res", o->msg.resource);
    cv_key_trav(k[2], CV_KEY_MAX, o->msg.stack, "graph", o->msg.traversal);
    char trav[24];
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)o->msg.traversal);
    const char *keys[] = {k[0], k[1], k[2]}, *args[] = {o->node, trav};
    if (cv_redis_script(o->w->redis, CV_SCRIPT_OBSERVE_LOAD, 3, keys, 2, args, NULL, on_load, o) !=
        0)
        observe_retry(o);
}

void cv__observer_observe_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    observe_t *o = calloc(1, sizeof(*o));
    o->w = w;
    o->job = job;
    o->msg = *m;
    cv_node_name(o->node, sizeof(o->node), m->phase, m->resource);
    snprintf(o->version, sizeof(o->version), "%llu", (unsigned long long)m->version);
    observe_start(o);
}
