/*
 * CHECK jobs: converge one graph node of one traversal.
 *
 * Under the resource's lease (one atomic script also loads the definition,
 * parameters, record, sync point and graph entry) the engine decides:
 *   - the node's action was already taken in this traversal → hand it to the
 *     observers again (a redelivered or duplicated job);
 *   - update node, no record → create through the resource type;
 *   - cleanup node → delete (or retain), or nothing when nothing exists.
 * The action's result is written by a fenced script, then an OBSERVE job is
 * published; the Kafka offset is committed only after that is acknowledged.
 */
#include "engine.h"

#include "cv_error.h"
#include "cv_keys.h"
#include "cv_log.h"
#include "cv_progress.h"
#include "cv_record.h"
#include "cv_rtype.h"
#include "cv_template.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct check {
    cv_worker_t *w;
    cv_job_t *job;
    cv_msg_t msg;
    char node[CV_NAME_MAX + 2];
    char token[160];
    unsigned attempt;
    bool leased;
    /* loaded under the lease */
    json_t *rdef;   /* {"type", "properties", "deletion_policy", "metadata"} */
    json_t *params; /* resolved parameters */
    json_t *sp;     /* predecessor node -> {"id", "attrs"} */
    char *graph_entry;
    cv_record_t rec;
    const cv_rtype_t *type;
    cv_rstate_t st;
    json_t *props; /* desired properties, resolved */
    char uuid[48];
} check_t;

static void check_start(void *arg);

static void check_reset(check_t *c)
{
    json_decref(c->rdef);
    json_decref(c->params);
    json_decref(c->sp);
    json_decref(c->props);
    json_decref(c->st.data);
    json_decref(c->st.attrs);
    free(c->graph_entry);
    cv_record_clear(&c->rec);
    c->rdef = c->params = c->sp = c->props = c->st.data = c->st.attrs = NULL;
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

static void on_released(cv_redis_t *r, redisReply *rep, void *ud)
{
    (void)r;
    (void)rep;
    check_end(ud);
}

/* Ends the job, giving the lease back first when this job still holds it. */
static void release_and_end(check_t *c)
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
        check_retry(c, cv_backoff_ms(++c->attempt));
    else
        release_and_end(c);
}

static void hand_off(check_t *c, const char *version)
{
    cv_msg_t m = c->msg;
    m.type = CV_MSG_OBSERVE;
    m.version = strtoull(version, NULL, 10);
    if (cv_worker_publish(c->w, CV_TOPIC_OBSERVE, &m, on_observe_delivered, c) != 0)
        check_retry(c, cv_backoff_ms(++c->attempt));
}

/* ---- outcomes ---- */

static void on_progress(void *ud, int rc)
{
    check_t *c = ud;
    if (rc == CV_EREDIS || rc == CV_EKAFKA)
        check_retry(c, cv_backoff_ms(++c->attempt));
    else
        release_and_end(c);
}

static void fail_node(check_t *c, const char *status, const char *action, const char *reason)
{
    cv_warn("stack %s resource %s: %s", c->msg.stack, c->msg.resource, reason);
    cv_node_failed_t f = {&c->msg, c->rec.version, status, reason, c->rec.physical_id, action};
    if (cv_progress_node_failed(c->w, &f, on_progress, c) != 0)
        check_retry(c, cv_backoff_ms(++c->attempt));
}

/* The node needs no action; it still satisfies its successors. */
static void node_done(check_t *c, const char *status, const char *reason, const char *action)
{
    cv_node_done_t d = {&c->msg, c->graph_entry,     "",    status, "", "", reason,
                        "{}",    c->rec.physical_id, action};
    if (cv_progress_node_done(c->w, &d, on_progress, c) != 0)
        check_retry(c, cv_backoff_ms(++c->attempt));
}

static void on_recorded(cv_redis_t *r, redisReply *rep, void *ud)
{
    check_t *c = ud;
    (void)r;
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        check_retry(c, cv_backoff_ms(++c->attempt));
        return;
    }
    c->leased = false; /* check_finish released it */
    if (strcmp(cv_reply_str(rep, 0), "OK") != 0) {
        c->w->stats.fenced++;
        cv_warn("stack %s resource %s: write refused (version moved to %s)", c->msg.stack,
                c->msg.resource, cv_reply_str(rep, 1));
        check_end(c);
        return;
    }
    c->w->stats.acted++;
    hand_off(c, cv_reply_str(rep, 1));
}

/* Writes the action just taken (fenced by the version read under the lease). */
static void record_action(check_t *c, const char *status, const char *action)
{
    char k[4][CV_KEY_MAX], trav[24];
    cv_key_resource(k[0], CV_KEY_MAX, c->msg.stack, "res", c->msg.resource);
    cv_key_resource(k[1], CV_KEY_MAX, c->msg.stack, "lease", c->msg.resource);
    cv_key_stack(k[2], CV_KEY_MAX, c->msg.stack, "events");
    cv_key_stack(k[3], CV_KEY_MAX, c->msg.stack, "counts");
    const char *keys[] = {k[0], k[1], k[2], k[3]};
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)c->msg.traversal);
    char *props = json_dumps(c->props ? c->props : c->rec.props, JSON_COMPACT);
    char *attrs = json_dumps(c->st.attrs, JSON_COMPACT);
    char *data = json_dumps(c->st.data, JSON_COMPACT);
    const char *args[] = {c->rec.version,
                          c->token,
                          status,
                          action,
                          "state changed",
                          c->st.physical_id,
                          c->uuid,
                          c->type->name,
                          props,
                          attrs,
                          data,
                          trav,
                          c->w->id,
                          c->msg.resource,
                          "IN_PROGRESS"};
    int rc = cv_redis_script(c->w->redis, CV_SCRIPT_CHECK_FINISH, 4, keys, 15, args, NULL,
                             on_recorded, c);
    free(props);
    free(attrs);
    free(data);
    if (rc)
        check_retry(c, cv_backoff_ms(++c->attempt));
}

/* ---- the actions ---- */

static int lookup_parent(void *ud, const char *name, const char **physical_id,
                         const json_t **attributes)
{
    check_t *c = ud;
    char node[CV_NAME_MAX + 2];
    cv_node_name(node, sizeof(node), CV_PHASE_UPDATE, name);
    json_t *d = json_object_get(c->sp, node);
    if (!d)
        return CV_ENOENT;
    *physical_id = json_string_value(json_object_get(d, "id"));
    *attributes = json_object_get(d, "attrs");
    return 0;
}

/* Desired properties: the template's, with parameters and the data the
 * parents passed through the sync point; then the type's schema. */
static int desired_properties(check_t *c, char *err, size_t errsz)
{
    char where[CV_NAME_MAX + 32];
    snprintf(where, sizeof(where), "resources.%s.properties", c->msg.resource);
    cv_resolve_ctx_t rctx = {c->params, lookup_parent, c};
    json_t *resolved =
        cv_intrinsic_resolve(json_object_get(c->rdef, "properties"), &rctx, where, err, errsz);
    if (!resolved)
        return CV_EVALIDATE;
    c->props = cv_rtype_apply_schema(c->type, resolved, where, false, err, errsz);
    json_decref(resolved);
    if (!c->props)
        return CV_EVALIDATE;
    if (c->type->validate && c->type->validate(c->props, where, err, errsz) != 0)
        return CV_EVALIDATE;
    return 0;
}

static void prepare_state(check_t *c)
{
    memset(&c->st, 0, sizeof(c->st));
    c->st.stack_name = c->msg.stack;
    c->st.resource_name = c->msg.resource;
    c->st.uuid = c->uuid;
    c->st.now = cv_now();
    c->st.action_started = c->rec.started;
    snprintf(c->st.physical_id, sizeof(c->st.physical_id), "%s", c->rec.physical_id);
    c->st.data = json_deep_copy(c->rec.data);
    c->st.attrs = json_deep_copy(c->rec.attrs);
}

static void do_create(check_t *c)
{
    char err[1024];
    cv_record_uuid(c->uuid, c->msg.stack, c->msg.resource, c->msg.traversal);
    prepare_state(c);
    if (desired_properties(c, err, sizeof(err)) != 0) {
        fail_node(c, "CREATE_FAILED", "CREATE", err);
        return;
    }
    c->st.props = c->props;
    if (c->type->create(&c->st) != 0) {
        char reason[CV_REASON_MAX + CV_NAME_MAX + 32];
        snprintf(reason, sizeof(reason), "resources.%s: %s", c->msg.resource, c->st.reason);
        fail_node(c, "CREATE_FAILED", "CREATE", reason);
        return;
    }
    record_action(c, "CREATE_IN_PROGRESS", "CREATE");
}

static void do_delete(check_t *c)
{
    const char *policy = json_string_value(json_object_get(c->rdef, "deletion_policy"));
    if (policy && strcmp(policy, "Retain") == 0) {
        node_done(c, "DELETED", "retained: deletion_policy is Retain", "DELETE");
        return;
    }
    snprintf(c->uuid, sizeof(c->uuid), "%s", c->rec.uuid);
    prepare_state(c);
    c->st.props = c->rec.props;
    if (c->type->remove(&c->st) != 0) {
        char reason[CV_REASON_MAX + CV_NAME_MAX + 32];
        snprintf(reason, sizeof(reason), "resources.%s: %s", c->msg.resource, c->st.reason);
        fail_node(c, "DELETE_FAILED", "DELETE", reason);
        return;
    }
    record_action(c, "DELETE_IN_PROGRESS", "DELETE");
}

static bool taken_in_this_traversal(const check_t *c)
{
    return c->rec.exists && c->rec.traversal == c->msg.traversal;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void decide(check_t *c)
{
    if (taken_in_this_traversal(c)) {
        /* A duplicate or redelivered job: the action is recorded already. */
        if (ends_with(c->rec.status, "_FAILED"))
            release_and_end(c);
        else
            hand_off(c, c->rec.version);
        return;
    }
    if (c->msg.phase == CV_PHASE_CLEANUP) {
        if (!c->rec.exists)
            node_done(c, "", "", "DELETE");
        else
            do_delete(c);
        return;
    }
    do_create(c);
}

static int load(check_t *c, const redisReply *rep, char *err, size_t errsz)
{
    c->rdef = json_loads(cv_reply_str(rep, 1), 0, NULL);
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
    const char *type = json_string_value(json_object_get(c->rdef, "type"));
    if (!c->rdef || !c->params || !type)
        return cv_seterr(err, errsz, CV_EPROTO, "resources.%s: no stored definition",
                         c->msg.resource);
    c->type = cv_rtype_find(c->rec.exists && c->rec.type[0] ? c->rec.type : type);
    if (!c->type)
        return cv_seterr(err, errsz, CV_EVALIDATE, "resources.%s: unknown resource type \"%s\"",
                         c->msg.resource, type);
    return 0;
}

static void on_begin(cv_redis_t *r, redisReply *rep, void *ud)
{
    check_t *c = ud;
    (void)r;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements < 1) {
        if (rep && rep->type == REDIS_REPLY_ERROR)
            cv_warn("check_begin: %s", rep->str);
        check_retry(c, cv_backoff_ms(++c->attempt));
        return;
    }
    const char *verdict = cv_reply_str(rep, 0);
    if (strcmp(verdict, "BUSY") == 0) {
        long long pttl = cv_reply_int(rep, 1);
        check_retry(c, (unsigned)(pttl > 20 ? (pttl < 5000 ? pttl : 5000) : 20));
        return;
    }
    if (strcmp(verdict, "OK") != 0) {
        c->w->stats.stale++; /* STALE, SETTLED or DONE: nothing to do */
        check_end(c);
        return;
    }
    c->leased = true;
    char err[512];
    if (rep->elements != 6 || load(c, rep, err, sizeof(err)) != 0) {
        if (rep->elements != 6)
            snprintf(err, sizeof(err), "resources.%s: malformed check_begin reply",
                     c->msg.resource);
        fail_node(c, c->msg.phase == CV_PHASE_CLEANUP ? "DELETE_FAILED" : "CREATE_FAILED",
                  c->msg.phase == CV_PHASE_CLEANUP ? "DELETE" : "CREATE", err);
        return;
    }
    decide(c);
}

static void check_start(void *arg)
{
    check_t *c = arg;
    if (c->w->stopping)
        return; /* left unfinished: redelivered after the restart */
    char k[8][CV_KEY_MAX], trav[24], lease_ms[16];
    cv_key_stack(k[0], CV_KEY_MAX, c->msg.stack, "stack");
    cv_key_resource(k[1], CV_KEY_MAX, c->msg.stack, "res", c->msg.resource);
    cv_key_resource(k[2], CV_KEY_MAX, c->msg.stack, "lease", c->msg.resource);
    cv_key_trav(k[3], CV_KEY_MAX, c->msg.stack, "rdef", c->msg.traversal);
    cv_key_syncpoint(k[4], CV_KEY_MAX, c->msg.stack, c->msg.traversal, c->node);
    cv_key_trav(k[5], CV_KEY_MAX, c->msg.stack, "done", c->msg.traversal);
    cv_key_stack(k[6], CV_KEY_MAX, c->msg.stack, "def");
    cv_key_trav(k[7], CV_KEY_MAX, c->msg.stack, "graph", c->msg.traversal);
    const char *keys[] = {k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7]};
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)c->msg.traversal);
    snprintf(lease_ms, sizeof(lease_ms), "%d", c->w->lease_ms);
    const char *args[] = {trav, c->node, c->token, lease_ms, c->msg.resource};
    if (cv_redis_script(c->w->redis, CV_SCRIPT_CHECK_BEGIN, 8, keys, 5, args, NULL, on_begin, c) !=
        0)
        check_retry(c, cv_backoff_ms(++c->attempt));
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
