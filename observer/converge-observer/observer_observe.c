/*
 * OBSERVE jobs. The record is read with the version the engine wrote;
 * cv_observe_decide says whether there is anything to look at (a newer
 * action may own the resource) and, once the type has looked at every
 * version the node watches, what that means: in progress waits on a timer
 * (never a sleeping worker) and looks again; failed fails the traversal;
 * complete records the observation and satisfies the successors. A cleanup
 * node watches every version it is deleting (replaced versions, and the
 * current one when the resource left the definition). A waiting type
 * (cv_rtype_t.watches: a WaitCondition) is handed the record of the
 * resource it watches, read just before the look (signal_watch.lua). A
 * Converge::Service version is handed its service's cluster state, read
 * just before the look (svc_look.lua, observer_services.c).
 */
#include "observer.h"

#include "cv_convergence.h"
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct observe {
    cv_jobrun_t run; /* first: the job, its lifecycle and its retries */
    char node[CV_NAME_MAX + 2];
    cv_record_t rec;
    char *graph_entry;
    json_t *children; /* nested versions' child stacks as read now: id -> snapshot */
    json_t *watched;  /* a waiting type's watched resource as read now, or NULL */
    json_t *services; /* Converge::Service versions' cluster state as read now: svc -> snapshot */
    cv_observe_outcome_t out;
} observe_t;

static void observe_reset(cv_jobrun_t *run)
{
    observe_t *o = (observe_t *)run;
    cv_record_clear(&o->rec);
    free(o->graph_entry);
    o->graph_entry = NULL;
    json_decref(o->children);
    o->children = NULL;
    json_decref(o->watched);
    o->watched = NULL;
    json_decref(o->services);
    o->services = NULL;
    cv_observe_outcome_clear(&o->out);
}

static void on_progress(void *ud, int rc)
{
    observe_t *o = ud;
    if (rc == CV_EREDIS || rc == CV_EKAFKA) {
        cv_jobrun_retry(&o->run);
        return;
    }
    if (rc == CV_EFENCED)
        cv_worker_count(o->run.w, CV_STAT_FENCED, 1);
    else if (rc == CV_ESTALE)
        cv_worker_count(o->run.w, CV_STAT_STALE, 1);
    cv_jobrun_end(&o->run);
}

/* ---- carrying the outcome out ---- */

static void node_done(observe_t *o)
{
    cv_node_done_t d = cv_observe_done_of(&o->run.msg, &o->out, o->graph_entry, o->rec.physical_id);
    if (cv_flowrun_node_done(o->run.w, &d, on_progress, o) != 0)
        cv_jobrun_retry(&o->run);
}

static void node_failed(observe_t *o)
{
    char logged[512];
    cv_str_redact_quoted(logged, sizeof(logged), o->out.reason);
    cv_warn("stack %s: %s", o->run.msg.stack, logged);
    cv_node_failed_t f = cv_observe_failed_of(&o->run.msg, &o->out, o->rec.physical_id);
    if (cv_flowrun_node_failed(o->run.w, &f, on_progress, o) != 0)
        cv_jobrun_retry(&o->run);
}

/* ---- a watch: the older action settled, this traversal checks again ---- */

static void on_recheck_delivered(void *ud, int err)
{
    observe_t *o = ud;
    if (err)
        cv_jobrun_retry(&o->run);
    else
        cv_jobrun_end(&o->run);
}

static void recheck(observe_t *o)
{
    cv_msg_t m = cv_observe_recheck_job(&o->run.msg);
    if (cv_worker_publish(o->run.w, CV_TOPIC_CHECK, &m, on_recheck_delivered, o) != 0)
        cv_jobrun_retry(&o->run);
}

/* A walk's step ended and its pause passed: the engine begins the next. */
static void step(observe_t *o)
{
    cv_msg_t m = cv_observe_step_job(&o->run.msg, &o->rec);
    if (cv_worker_publish(o->run.w, CV_TOPIC_CHECK, &m, on_recheck_delivered, o) != 0)
        cv_jobrun_retry(&o->run);
}

static void on_older_recorded(void *ud, int rc)
{
    observe_t *o = ud;
    if (rc == CV_EREDIS || rc == CV_EKAFKA) {
        cv_jobrun_retry(&o->run);
        return;
    }
    recheck(o); /* STALE (superseded, as expected) or FENCED (moved on): either way */
}

/* Records the older action's end as that traversal's outcome: with no
 * successors and a superseded traversal, nothing else moves. */
static void settle_older(observe_t *o)
{
    cv_msg_t older = cv_observe_older_job(&o->run.msg, &o->rec);
    int rc;
    if (cv_str_ends_with(o->out.status, "_FAILED")) {
        cv_node_failed_t f = cv_observe_failed_of(&older, &o->out, o->rec.physical_id);
        rc = cv_flowrun_node_failed(o->run.w, &f, on_older_recorded, o);
    } else {
        cv_node_done_t d = cv_observe_done_of(&older, &o->out, "", o->rec.physical_id);
        rc = cv_flowrun_node_done(o->run.w, &d, on_older_recorded, o);
    }
    if (rc != 0)
        cv_jobrun_retry(&o->run);
}

static void settle(observe_t *o)
{
    switch (o->out.kind) {
    case CV_OBSERVE_SETTLED_OLDER:
        settle_older(o);
        break;
    case CV_OBSERVE_WAIT:
        cv_reaper_touch(o->run.w, &o->run.msg); /* being watched: not stalled */
        cv_jobrun_later(&o->run, o->out.delay_ms);
        break;
    case CV_OBSERVE_FAILED:
        node_failed(o);
        break;
    case CV_OBSERVE_STEP:
        step(o);
        break;
    default: /* COMPLETE */
        node_done(o);
        break;
    }
}

/* ---- looking ---- */

/* One version the type is asked about, and what it answered. */
typedef struct looker {
    cv_rstate_t st;
    bool asked;
} looker_t;

/* Asks the version's type, handing a nested version the child stack read. */
static void ask(const observe_t *o, looker_t *l, cv_look_t *look, const char *type_name,
                const cv_version_t *v)
{
    const cv_rtype_t *type = cv_rtype_lookup(type_name);
    if (!type)
        return; /* the decision fails it */
    cv_record_state(&l->st, v, cv_now());
    const json_t *snap = json_object_get(o->children, v->physical_id ? v->physical_id : "");
    if (snap)
        json_object_set(l->st.data, "child", (json_t *)snap);
    if (o->watched && v->props && type->watches) /* the current version of an update node */
        json_object_set(l->st.data, "watched", o->watched);
    const json_t *cluster = json_object_get(o->services, v->physical_id ? v->physical_id : "");
    if (cluster && cv_service_is(type_name))
        json_object_set(l->st.data, "cluster", (json_t *)cluster);
    l->asked = true;
    look->observed = type->observe(&l->st, cv_observe_action(&o->run.msg, &o->rec));
    look->retry_at = l->st.retry_at;
    look->reason = l->st.reason;
    look->attrs = l->st.attrs;
    look->data = l->st.data;
}

static void look_at_current(const observe_t *o, looker_t *l, cv_look_t *look)
{
    const cv_record_t *rec = &o->rec;
    bool cleanup = o->run.msg.phase == CV_PHASE_CLEANUP && !o->run.msg.watch;
    if (!cv_observe_wants_look(&o->run.msg, rec->status))
        return;
    cv_version_t v = {.stack = o->run.msg.stack,
                      .resource = o->run.msg.resource,
                      .uuid = cleanup ? NULL : rec->uuid,
                      .physical_id = rec->physical_id,
                      .props = cleanup ? NULL : rec->props,
                      .data = rec->data,
                      .attrs = cleanup ? NULL : rec->attrs,
                      .started = rec->started};
    ask(o, l, look, rec->type, &v);
}

static void look_at_old(const observe_t *o, const json_t *entry, looker_t *l, cv_look_t *look)
{
    if (!cv_observe_wants_look(&o->run.msg, json_string_value(json_object_get(entry, "status"))))
        return;
    cv_version_t v = {.stack = o->run.msg.stack,
                      .resource = o->run.msg.resource,
                      .physical_id = json_string_value(json_object_get(entry, "physical_id")),
                      .data = json_object_get(entry, "data"),
                      .started = json_number_value(json_object_get(entry, "started"))};
    ask(o, l, look, json_string_value(json_object_get(entry, "type")), &v);
}

/* Looks at every version the node watches, then settles. */
static void look(observe_t *o)
{
    bool cleanup = o->run.msg.phase == CV_PHASE_CLEANUP && !o->run.msg.watch;
    size_t nold = cleanup ? json_array_size(o->rec.old) : 0;
    looker_t current = {0}, *old = calloc(nold + 1, sizeof(*old));
    cv_look_t *old_looks = calloc(nold + 1, sizeof(*old_looks));
    if (!old || !old_looks) {
        free(old);
        free(old_looks);
        cv_jobrun_retry(&o->run);
        return;
    }
    cv_observe_looks_t looks = {.old = old_looks, .nold = nold};
    look_at_current(o, &current, &looks.current);
    for (size_t i = 0; i < nold; i++)
        look_at_old(o, json_array_get(o->rec.old, i), &old[i], &old_looks[i]);
    cv_observe_decide(&o->run.msg, &o->rec, &looks, cv_now(), &o->out);
    cv_record_state_clear(&current.st);
    for (size_t i = 0; i < nold; i++)
        cv_record_state_clear(&old[i].st);
    free(old);
    free(old_looks);
    settle(o);
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

/* ---- services: their cluster state is read first ---- */

/* The Converge::Service versions this job observes: svc id -> whether a
 * delete is observed (every node's reports are read then). */
static json_t *services_to_read(const observe_t *o)
{
    json_t *wants = json_object();
    if (cv_service_is(o->rec.type) && o->rec.physical_id[0] &&
        cv_observe_wants_look(&o->run.msg, o->rec.status))
        json_object_set_new(
            wants, o->rec.physical_id,
            json_boolean(cv_observe_action(&o->run.msg, &o->rec) == CV_ACTION_DELETE));
    bool cleanup = o->run.msg.phase == CV_PHASE_CLEANUP && !o->run.msg.watch;
    size_t i;
    const json_t *e;
    json_array_foreach(cleanup ? o->rec.old : NULL, i, e)
    {
        const char *pid = json_string_value(json_object_get(e, "physical_id"));
        if (pid && pid[0] && cv_service_is(json_string_value(json_object_get(e, "type"))))
            json_object_set_new(wants, pid, json_true());
    }
    return wants;
}

static void on_services(void *ud, json_t *snapshots)
{
    observe_t *o = ud;
    if (!snapshots) {
        cv_jobrun_retry(&o->run);
        return;
    }
    o->services = snapshots;
    look(o);
}

static void read_services_then_look(observe_t *o)
{
    json_t *wants = services_to_read(o);
    if (json_object_size(wants) == 0) {
        json_decref(wants);
        look(o);
        return;
    }
    int rc = cv__observer_read_services(o->run.w, wants, on_services, o);
    json_decref(wants);
    if (rc != 0)
        cv_jobrun_retry(&o->run);
}

static void on_children(void *ud, json_t *snapshots)
{
    observe_t *o = ud;
    if (!snapshots) {
        cv_jobrun_retry(&o->run);
        return;
    }
    o->children = snapshots;
    read_services_then_look(o);
}

static void read_children_then_look(observe_t *o)
{
    json_t *ids = children_to_read(o);
    if (json_array_size(ids) == 0) {
        json_decref(ids);
        read_services_then_look(o);
        return;
    }
    int rc = cv__observer_read_children(o->run.w, ids, on_children, o);
    json_decref(ids);
    if (rc != 0)
        cv_jobrun_retry(&o->run);
}

/* ---- waiting types: the resource they watch is read first ---- */

static void on_watched(cv_redis_t *r, redisReply *rep, void *ud)
{
    observe_t *o = ud;
    (void)r;
    if (cv_reply_answer(CV_SCRIPT_SIGNAL_WATCH, rep) != CV_ANSWER_VALUE ||
        rep->elements != CV_SIGNAL_WATCH_R_DATA + 1) {
        cv_jobrun_retry(&o->run);
        return;
    }
    json_t *data = json_loads(cv_reply_str(rep, CV_SIGNAL_WATCH_R_DATA), 0, NULL);
    o->watched =
        json_pack("{s:s, s:s, s:o}", "name", cv_reply_str(rep, CV_SIGNAL_WATCH_R_NAME), "type",
                  cv_reply_str(rep, CV_SIGNAL_WATCH_R_TYPE), "data", data ? data : json_object());
    read_children_then_look(o);
}

/* The reference a waiting type's current version watches, or NULL. */
static const char *watched_ref(const observe_t *o)
{
    const cv_rtype_t *type = cv_rtype_lookup(o->rec.type);
    if (!type || !type->watches || o->run.msg.phase != CV_PHASE_UPDATE)
        return NULL;
    return json_string_value(json_object_get(o->rec.props, type->watches));
}

/* Reads the watched resource and registers this job's version as its
 * waiter (a signal to it then has the observers look at once). */
static void watch_then_look(observe_t *o)
{
    const char *ref = watched_ref(o);
    if (!ref) {
        read_children_then_look(o);
        return;
    }
    const cv_msg_t *m = &o->run.msg;
    char index[CV_KEY_MAX], res_prefix[CV_KEY_MAX], waiters_prefix[CV_KEY_MAX], trav[24], watch[4];
    cv_key(index, sizeof(index), CV_KEY_INDEX, m->stack, 0, NULL);
    cv_key_prefix(res_prefix, sizeof(res_prefix), CV_KEY_RES, m->stack, 0);
    cv_key_prefix(waiters_prefix, sizeof(waiters_prefix), CV_KEY_WAITERS, m->stack, 0);
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)m->traversal);
    snprintf(watch, sizeof(watch), "%u", m->watch ? 1u : 0u);
    cv_signal_watch_keys_t keys = {.index = index};
    cv_signal_watch_args_t args = {.resource = m->resource,
                                   .ref = ref,
                                   .traversal = trav,
                                   .version = o->rec.version,
                                   .watch = watch,
                                   .res_prefix = res_prefix,
                                   .waiters_prefix = waiters_prefix};
    if (cv_redis_call(o->run.w->redis, CV_SCRIPT_SIGNAL_WATCH, keys.v, args.v, 0, NULL, NULL,
                      on_watched, o) != 0)
        cv_jobrun_retry(&o->run);
}

/* ---- loading ---- */

static void on_load(cv_redis_t *r, redisReply *rep, void *ud)
{
    observe_t *o = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_OBSERVE_LOAD, rep);
    if (answer == CV_ANSWER_NONODE) {
        cv_poison_unknown_node(o->run.w, o->run.job, &o->run.msg);
        cv_jobrun_drop(&o->run);
        return;
    }
    if (answer != CV_ANSWER_VALUE || rep->elements != CV_OBSERVE_LOAD_R_GRAPH_ENTRY + 1) {
        cv_jobrun_retry(&o->run);
        return;
    }
    if (!cv_reply_str(rep, CV_OBSERVE_LOAD_R_TRAVERSAL)[0] &&
        !cv_reply_str(rep, CV_OBSERVE_LOAD_R_STATUS)[0]) {
        /* no traversal, no status: the stack does not exist */
        cv_poison_unknown_stack(o->run.w, o->run.job, &o->run.msg);
        cv_jobrun_drop(&o->run);
        return;
    }
    cv_resp_t *reply = cv_flowrun_resp(rep, false);
    int parsed = cv_record_parse(&o->rec, cv_resp_at(reply, CV_OBSERVE_LOAD_R_RECORD));
    free(reply);
    if (parsed != 0) {
        cv_warn("stack %s resource %s: a stored value is sealed with a key this worker's key "
                "file (CONVERGE_SECRET_KEY_FILE) does not hold; retrying",
                o->run.msg.stack, o->run.msg.resource);
        cv_record_clear(&o->rec);
        cv_jobrun_retry(&o->run);
        return;
    }
    o->graph_entry = strdup(cv_reply_str(rep, CV_OBSERVE_LOAD_R_GRAPH_ENTRY));
    cv_observe_decide(&o->run.msg, &o->rec, NULL, cv_now(), &o->out);
    switch (o->out.kind) {
    case CV_OBSERVE_STALE_END:
        cv_worker_count(o->run.w, CV_STAT_STALE, 1);
        cv_jobrun_end(&o->run);
        break;
    case CV_OBSERVE_REDELIVERED_DELETED:
        node_done(o); /* done again, which republishes */
        break;
    case CV_OBSERVE_RECHECK:
        cv_observe_outcome_clear(&o->out);
        recheck(o);
        break;
    case CV_OBSERVE_FAILED: /* abandoned by mark-unhealthy: nothing to look at */
        node_failed(o);
        break;
    default: /* LOOK, LOOK_CLEANUP, LOOK_WATCH */
        cv_observe_outcome_clear(&o->out);
        watch_then_look(o);
        break;
    }
}

static void observe_start(cv_jobrun_t *run)
{
    observe_t *o = (observe_t *)run;
    const cv_msg_t *m = &run->msg;
    char stack[CV_KEY_MAX], res[CV_KEY_MAX], graph[CV_KEY_MAX], trav[24];
    cv_key(stack, sizeof(stack), CV_KEY_STACK, m->stack, m->traversal, NULL);
    cv_key(res, sizeof(res), CV_KEY_RES, m->stack, m->traversal, m->resource);
    cv_key(graph, sizeof(graph), CV_KEY_GRAPH, m->stack, m->traversal, NULL);
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)m->traversal);
    cv_observe_load_keys_t keys = {.stack = stack, .res = res, .graph = graph};
    cv_observe_load_args_t args = {.node = o->node, .traversal = trav};
    if (cv_redis_call(run->w->redis, CV_SCRIPT_OBSERVE_LOAD, keys.v, args.v, 0, NULL, NULL, on_load,
                      o) != 0)
        cv_jobrun_retry(run);
}

void cv__observer_observe_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    observe_t *o = calloc(1, sizeof(*o));
    cv_jobrun_init(&o->run, w, job, m, observe_start, observe_reset);
    cv_node_name(o->node, sizeof(o->node), m->phase, m->resource);
    cv_jobrun_start(&o->run);
}
