/*
 * CHECK jobs: converge one graph node of one traversal — the job lifecycle.
 *
 * Under the resource's lease (one atomic script also loads the definition,
 * parameters, record, sync point and graph entry) the decision is taken by
 * engine_converge.c; this file runs the outcome: a fenced write of the action
 * (check_finish.lua) and an OBSERVE job, or "done" / "failed" through
 * cv_progress. The Kafka offset is committed only once the outcome is in
 * Redis and every message it published is acknowledged.
 */
#include "engine.h"
#include "engine_check.h"

#include "cv_error.h"
#include "cv_keys.h"
#include "cv_log.h"
#include "cv_poison.h"
#include "cv_progress.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_start(void *arg);

static void stop_renewing(check_t *c)
{
    cv_lease_stop(c->keeper);
    c->keeper = NULL;
}

static void check_reset(check_t *c)
{
    stop_renewing(c);
    json_decref(c->rdef);
    json_decref(c->params);
    json_decref(c->sp);
    json_decref(c->props);
    json_decref(c->st.data);
    json_decref(c->st.attrs);
    json_decref(c->old);
    json_decref(c->events);
    json_decref(c->files);
    json_decref(c->children);
    free(c->graph_entry);
    cv_record_clear(&c->rec);
    c->rdef = c->params = c->sp = c->props = c->st.data = c->st.attrs = NULL;
    c->old = c->events = c->files = c->children = NULL;
    c->graph_entry = NULL;
    c->leased = false;
}

static void check_end(check_t *c)
{
    check_reset(c);
    cv_job_finish(c->job);
    free(c);
}

static void check_retry(check_t *c, unsigned delay_ms)
{
    check_reset(c);
    c->w->stats.retries++;
    cv_worker_later(c->w, delay_ms, check_start, c);
}

/* A job that keeps failing while Redis and Kafka answer is given up:
 * dead-lettered, its stack failed with the reason (cv_poison). */
void cv__check_backoff(check_t *c)
{
    check_reset(c);
    if (!cv_poison_retry(c->w, &c->retry, c->job, &c->msg, check_start, c))
        free(c);
}

static void on_released(cv_redis_t *r, redisReply *rep, void *ud)
{
    (void)r;
    (void)rep;
    check_end(ud);
}

void cv__check_release_and_end(check_t *c)
{
    if (!c->leased) {
        check_end(c);
        return;
    }
    char key[CV_KEY_MAX];
    cv_key_resource(key, sizeof(key), c->msg.stack, "lease", c->msg.resource);
    const char *keys[] = {key}, *args[] = {c->token};
    if (cv_redis_script(c->w->redis, CV_SCRIPT_LEASE_RELEASE, 1, keys, 1, args, NULL, on_released,
                        c) != 0)
        check_end(c); /* the lease expires by itself */
}

/* ---- hand-off to the observers ---- */

static void on_observe_delivered(void *ud, int err)
{
    check_t *c = ud;
    if (err)
        cv__check_backoff(c);
    else
        cv__check_release_and_end(c);
}

void cv__check_hand_off(check_t *c, const char *version)
{
    cv_msg_t m = c->msg;
    m.type = CV_MSG_OBSERVE;
    m.version = strtoull(version, NULL, 10);
    if (cv_worker_publish(c->w, CV_TOPIC_OBSERVE, &m, on_observe_delivered, c) != 0)
        cv__check_backoff(c);
}

/* ---- done / failed ---- */

static void on_progress(void *ud, int rc)
{
    check_t *c = ud;
    if (rc == CV_EREDIS || rc == CV_EKAFKA)
        cv__check_backoff(c);
    else
        cv__check_release_and_end(c); /* a no-op when node_done released it already */
}

void cv__check_fail(check_t *c, const char *status, const char *action, const char *reason)
{
    cv_warn("stack %s resource %s: %s", c->msg.stack, c->msg.resource, reason);
    cv_node_failed_t f = {&c->msg, c->rec.version, status, reason, c->rec.physical_id, action};
    if (cv_progress_node_failed(c->w, &f, on_progress, c) != 0)
        cv__check_backoff(c);
}

static char *dump_or_empty(const json_t *j)
{
    return j ? json_dumps(j, JSON_COMPACT) : strdup("");
}

void cv__check_done(check_t *c, const char *status, const char *reason, const char *action,
                    const char *pass)
{
    char *old = dump_or_empty(c->old), *events = dump_or_empty(c->events);
    cv_node_done_t d = {
        &c->msg, c->graph_entry,     c->rec.version, status, "",     "",       reason,
        pass,    c->rec.physical_id, action,         old,    events, c->token, true};
    int rc = cv_progress_node_done(c->w, &d, on_progress, c);
    free(old);
    free(events);
    if (rc)
        cv__check_backoff(c);
}

/* ---- recording an action ---- */

static void on_recorded(cv_redis_t *r, redisReply *rep, void *ud)
{
    check_t *c = ud;
    (void)r;
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        if (rep && rep->type == REDIS_REPLY_ERROR)
            cv_warn("check_finish: %s", rep->str);
        cv__check_backoff(c);
        return;
    }
    c->leased = false; /* check_finish released it */
    stop_renewing(c);
    if (strcmp(cv_reply_str(rep, 0), "OK") != 0) {
        c->w->stats.fenced++;
        cv_warn("stack %s resource %s: write refused (version moved to %s)", c->msg.stack,
                c->msg.resource, cv_reply_str(rep, 1));
        check_end(c);
        return;
    }
    c->w->stats.acted++;
    cv__check_hand_off(c, cv_reply_str(rep, 1));
}

/* The resource's dependencies as recorded in the index, for cleanup order. */
static char *dependencies_of(const check_t *c)
{
    json_t *deps = c->rdef ? json_object_get(c->rdef, "depends") : NULL;
    return deps ? json_dumps(deps, JSON_COMPACT) : strdup("[]");
}

/*
 * Writes the action just taken, fenced by the version read under the lease.
 * An empty status leaves the current version as it is and records only the
 * replaced versions (a cleanup of old versions).
 */
void cv__check_record(check_t *c, const char *status, const char *action, const char *reason)
{
    if (json_array_size(c->children) > 0) {
        /* Nested stacks first: recording says they are under way. */
        cv__nested_begin(c, status, action, reason);
        return;
    }
    char k[7][CV_KEY_MAX], trav[24];
    cv_key_resource(k[0], CV_KEY_MAX, c->msg.stack, "res", c->msg.resource);
    cv_key_resource(k[1], CV_KEY_MAX, c->msg.stack, "lease", c->msg.resource);
    cv_key_stack(k[2], CV_KEY_MAX, c->msg.stack, "events");
    cv_key_stack(k[3], CV_KEY_MAX, c->msg.stack, "counts");
    cv_key_stack(k[4], CV_KEY_MAX, c->msg.stack, "index");
    cv_key_stack(k[5], CV_KEY_MAX, c->msg.stack, "ledger");
    cv_key_stack(k[6], CV_KEY_MAX, c->msg.stack, "stack");
    const char *keys[] = {k[0], k[1], k[2], k[3], k[4], k[5], k[6]};
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)c->msg.traversal);
    bool current = status[0] != '\0';
    char *props = json_dumps(c->props ? c->props : c->rec.props, JSON_COMPACT);
    char *attrs = json_dumps(c->st.attrs ? c->st.attrs : c->rec.attrs, JSON_COMPACT);
    char *data = json_dumps(c->st.data ? c->st.data : c->rec.data, JSON_COMPACT);
    char *deps = current && c->msg.phase == CV_PHASE_UPDATE ? dependencies_of(c) : strdup("");
    char *old = dump_or_empty(c->old), *events = dump_or_empty(c->events);
    const char *policy =
        c->rdef ? json_string_value(json_object_get(c->rdef, "deletion_policy")) : c->rec.policy;
    const char *args[] = {c->rec.version,
                          c->token,
                          status,
                          action,
                          reason,
                          c->st.physical_id,
                          c->uuid,
                          c->type_name,
                          props,
                          attrs,
                          data,
                          trav,
                          c->w->id,
                          c->msg.resource,
                          current ? "IN_PROGRESS" : "",
                          deps,
                          policy ? policy : "Delete",
                          old,
                          events};
    int rc = cv_redis_script(c->w->redis, CV_SCRIPT_CHECK_FINISH, 7, keys, 19, args, NULL,
                             on_recorded, c);
    free(props);
    free(attrs);
    free(data);
    free(deps);
    free(old);
    free(events);
    if (rc)
        cv__check_backoff(c);
}

/* ---- loading under the lease ---- */

static int load(check_t *c, const redisReply *rep, char *err, size_t errsz)
{
    const char *rdef_text = cv_reply_str(rep, 1);
    c->rdef = rdef_text[0] ? json_loads(rdef_text, 0, NULL) : NULL;
    c->params = json_loads(cv_reply_str(rep, 2), 0, NULL);
    cv_record_parse(&c->rec, rep->element[3]);
    json_t *raw = cv_reply_to_object(rep->element[4]);
    c->sp = json_object();
    const char *pred;
    json_t *v;
    json_object_foreach(raw, pred, v)
    {
        json_t *d = json_loads(json_string_value(v), 0, NULL);
        json_object_set_new(c->sp, pred, d ? d : json_object());
    }
    json_decref(raw);
    c->graph_entry = strdup(cv_reply_str(rep, 5));
    if (!c->params)
        return cv_seterr(err, errsz, CV_EPROTO, "stored parameters are not JSON");
    cv_record_pseudo_params(c->params, c->msg.stack, cv_reply_str(rep, 6));
    snprintf(c->stack_name, sizeof(c->stack_name), "%s", cv_reply_str(rep, 6));
    c->depth = atoi(cv_reply_str(rep, 7));
    const char *files = cv_reply_str(rep, 8);
    c->files = files[0] ? json_loads(files, 0, NULL) : NULL;
    if (c->msg.phase == CV_PHASE_UPDATE && !c->rdef)
        return cv_seterr(err, errsz, CV_EPROTO, "resources.%s: no stored definition",
                         c->msg.resource);
    /* Cleanup acts through the recorded type; a node with nothing recorded
     * needs no type at all. */
    const char *type = c->msg.phase == CV_PHASE_UPDATE
                           ? json_string_value(json_object_get(c->rdef, "type"))
                           : c->rec.type;
    if (c->msg.phase == CV_PHASE_CLEANUP && !type[0])
        return 0;
    snprintf(c->type_name, sizeof(c->type_name), "%s", type ? type : "");
    c->type = cv_rtype_lookup(c->type_name);
    if (!c->type)
        return cv_seterr(err, errsz, CV_EVALIDATE, "resources.%s: unknown resource type \"%s\"",
                         c->msg.resource, type ? type : "");
    return 0;
}

/*
 * A job for a node an engine marked done without knowing its successors'
 * jobs published (check_begin.lua says so) is a redelivery after that engine
 * died: node_done again, changing nothing, publishes those whose sync point
 * is complete and that are not done themselves (cv_sp_should_publish).
 * Every other job for a done node is a duplicate and ends there: republishing
 * for those too made each duplicate start a wave down the graph.
 */
static void republish_successors(check_t *c, const char *graph_entry)
{
    c->w->stats.stale++;
    c->graph_entry = strdup(graph_entry);
    cv_node_done_t d = {.job = &c->msg, .graph_entry = c->graph_entry, .publishing = true};
    if (!c->graph_entry || cv_progress_node_done(c->w, &d, on_progress, c) != 0)
        cv__check_backoff(c);
}

static void on_begin(cv_redis_t *r, redisReply *rep, void *ud)
{
    check_t *c = ud;
    (void)r;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 1) {
        if (rep && rep->type == REDIS_REPLY_ERROR)
            cv_warn("check_begin: %s", rep->str);
        cv__check_backoff(c);
        return;
    }
    const char *verdict = cv_reply_str(rep, 0);
    if (strcmp(verdict, "BUSY") == 0) {
        /* A live holder usually lets go within milliseconds; a dead one's lease
         * runs out. Poll at most every 250 ms rather than sleeping the PTTL. */
        long long pttl = cv_reply_int(rep, 1);
        check_retry(c, (unsigned)(pttl < 20 ? 20 : pttl > 250 ? 250 : pttl));
        return;
    }
    if (strcmp(verdict, "UNKNOWN") == 0 || strcmp(verdict, "NONODE") == 0) {
        check_reset(c);
        if (strcmp(verdict, "UNKNOWN") == 0)
            cv_poison_unknown_stack(c->w, c->job, &c->msg);
        else
            cv_poison_unknown_node(c->w, c->job, &c->msg);
        free(c);
        return;
    }
    if (strcmp(verdict, "DONE") == 0 && rep->elements == 2) {
        republish_successors(c, cv_reply_str(rep, 1));
        return;
    }
    if (strcmp(verdict, "OK") != 0) {
        c->w->stats.stale++; /* STALE, SETTLED or DONE: nothing to do */
        check_end(c);
        return;
    }
    c->leased = true;
    char lease[CV_KEY_MAX];
    cv_key_resource(lease, sizeof(lease), c->msg.stack, "lease", c->msg.resource);
    c->keeper = cv_lease_keep(c->w->loop, c->w->redis, lease, c->token, (unsigned)c->w->lease_ms);
    char err[512];
    if (rep->elements != 9 || load(c, rep, err, sizeof(err)) != 0) {
        if (rep->elements != 9)
            snprintf(err, sizeof(err), "resources.%s: malformed check_begin reply",
                     c->msg.resource);
        bool cleanup = c->msg.phase == CV_PHASE_CLEANUP;
        const char *action = cleanup ? "DELETE" : c->rec.exists ? "UPDATE" : "CREATE";
        char status[32];
        snprintf(status, sizeof(status), "%s_FAILED", action);
        cv__check_fail(c, status, action, err);
        return;
    }
    if (c->msg.phase == CV_PHASE_CLEANUP)
        cv__converge_cleanup_node(c);
    else
        cv__converge_update_node(c);
}

static void check_start(void *arg)
{
    check_t *c = arg;
    if (c->w->stopping) {
        cv_worker_hand_back(c->w, c->job); /* another engine takes it up */
        free(c);
        return;
    }
    char k[9][CV_KEY_MAX], trav[24], lease_ms[16];
    cv_key_stack(k[0], CV_KEY_MAX, c->msg.stack, "stack");
    cv_key_resource(k[1], CV_KEY_MAX, c->msg.stack, "res", c->msg.resource);
    cv_key_resource(k[2], CV_KEY_MAX, c->msg.stack, "lease", c->msg.resource);
    cv_key_trav(k[3], CV_KEY_MAX, c->msg.stack, "rdef", c->msg.traversal);
    cv_key_syncpoint(k[4], CV_KEY_MAX, c->msg.stack, c->msg.traversal, c->node);
    cv_key_trav(k[5], CV_KEY_MAX, c->msg.stack, "done", c->msg.traversal);
    cv_key_stack(k[6], CV_KEY_MAX, c->msg.stack, "def");
    cv_key_trav(k[7], CV_KEY_MAX, c->msg.stack, "graph", c->msg.traversal);
    cv_key_trav(k[8], CV_KEY_MAX, c->msg.stack, "publishing", c->msg.traversal);
    const char *keys[] = {k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8]};
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)c->msg.traversal);
    snprintf(lease_ms, sizeof(lease_ms), "%d", c->w->lease_ms);
    const char *args[] = {trav, c->node, c->token, lease_ms, c->msg.resource};
    if (cv_redis_script(c->w->redis, CV_SCRIPT_CHECK_BEGIN, 9, keys, 5, args, NULL, on_begin, c) !=
        0)
        cv__check_backoff(c);
}

void cv__engine_check_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    static unsigned long long seq;
    check_t *c = calloc(1, sizeof(*c));
    c->w = w;
    c->job = job;
    c->msg = *m;
    cv_node_name(c->node, sizeof(c->node), m->phase, m->resource);
    /* The token names the holder, so an operator reading a lease sees who. */
    snprintf(c->token, sizeof(c->token), "%s:%llu", w->id, ++seq);
    check_start(c);
}
