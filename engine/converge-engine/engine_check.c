/*
 * CHECK jobs: converge one graph node of one traversal.
 *
 * Under the resource's lease (one atomic script also loads the definition,
 * parameters, record, sync point and graph entry) cv_check_decide says what
 * to do; this file carries the outcome out in a straight line: the type's
 * operation (engine_converge.c), child stacks (engine_nested.c) and
 * services in the cluster (engine_service.c), then a
 * fenced write of the action (check_finish.lua) and an OBSERVE job, or
 * "done" / "failed" through cv_progress. The Kafka offset is committed only
 * once the outcome is in Redis and every message it published is
 * acknowledged.
 */
#include "engine.h"
#include "engine_check.h"

#include "cv_convergence.h"
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void stop_renewing(check_t *c)
{
    cv_lease_stop(c->keeper);
    c->keeper = NULL;
}

/* Nested resources' jobs loading and beginning child stacks at once, per
 * engine and lane: each holds its stack's template files and its child's
 * definition (about 1 MB for a member of 1,000 resources), and a group
 * hands out all its members' jobs together. */
#define NESTED_MAX 8
static cv_gate_t nested_gates[2] = {CV_GATE_INIT(NESTED_MAX), CV_GATE_INIT(NESTED_MAX)};

static cv_gate_t *nested_gate(check_t *c)
{
    return &nested_gates[c->run.msg.express ? 1 : 0];
}

/* A script released the lease (check_finish, check_done, node_done). */
static void lease_released(check_t *c)
{
    c->leased = false;
    stop_renewing(c);
}

static void check_reset(cv_jobrun_t *run)
{
    check_t *c = (check_t *)run;
    cv_gate_leave(nested_gate(c), &c->nested);
    stop_renewing(c);
    cv_check_loaded_clear(&c->in);
    json_decref(c->children);
    c->children = NULL;
    json_decref(c->services);
    c->services = NULL;
    cv_check_outcome_clear(&c->out);
    cv_record_state_clear(&c->st);
    memset(&c->st, 0, sizeof(c->st));
    c->leased = false;
}

void cv__check_backoff(check_t *c)
{
    cv_jobrun_retry(&c->run);
}

static void on_released(cv_redis_t *r, redisReply *rep, void *ud)
{
    (void)r;
    (void)rep;
    cv_jobrun_end(ud);
}

void cv__check_release_and_end(check_t *c)
{
    if (!c->leased) {
        cv_jobrun_end(&c->run);
        return;
    }
    const cv_msg_t *m = &c->run.msg;
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_LEASE, m->stack, m->traversal, m->resource);
    cv_lease_release_keys_t k = {.lease = key};
    cv_lease_release_args_t a = {.token = c->token};
    if (cv_redis_call(c->run.w->redis, CV_SCRIPT_LEASE_RELEASE, k.v, a.v, 0, NULL, NULL,
                      on_released, c) != 0)
        cv_jobrun_end(&c->run); /* the lease expires by itself */
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

static void hand_off(check_t *c, const char *version, bool watch)
{
    cv_msg_t m = c->run.msg;
    m.type = CV_MSG_OBSERVE;
    m.version = strtoull(version, NULL, 10);
    m.watch = watch;
    if (cv_worker_publish(c->run.w, CV_TOPIC_OBSERVE, &m, on_observe_delivered, c) != 0)
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
    const cv_msg_t *m = &c->run.msg;
    char logged[512];
    cv_str_redact_quoted(logged, sizeof(logged), reason);
    cv_warn("stack %s resource %s: %s", m->stack, m->resource, logged);
    cv_node_failed_t f = {m, c->in.rec.version, status, reason, c->in.rec.physical_id, action};
    if (cv_progress_node_failed(c->run.w, &f, on_progress, c) != 0)
        cv__check_backoff(c);
}

/* node_done released the lease once it answered OK (it answers FENCED and
 * NONODE before releasing it): no lease_release then. */
static void on_done(void *ud, int rc)
{
    check_t *c = ud;
    if (rc == 0)
        lease_released(c);
    on_progress(c, rc);
}

static void done(check_t *c)
{
    cv_node_done_t d;
    cv_check_written_t written;
    cv_check_done_of(&d, &written, &c->run.msg, &c->in, &c->out, c->token);
    int rc = cv_progress_node_done(c->run.w, &d, on_done, c);
    cv_check_written_clear(&written);
    if (rc)
        cv__check_backoff(c);
}

/* ---- an action that settled at once: recorded, and its node done ---- */

static void on_settled(void *ud, int rc)
{
    check_t *c = ud;
    if (rc == CV_EREDIS || rc == CV_EKAFKA) {
        cv__check_backoff(c);
        return;
    }
    lease_released(c); /* check_done released it */
    if (rc == CV_EFENCED) {
        cv_worker_count(c->run.w, CV_STAT_FENCED, 1);
        cv_warn("stack %s resource %s: write refused (the record moved on)", c->run.msg.stack,
                c->run.msg.resource);
    } else if (rc == 0) {
        cv_worker_count(c->run.w, CV_STAT_ACTED, 1);
    }
    cv_jobrun_end(&c->run);
}

/* While the answers of one check_begin for a message's jobs are handed
 * out, the jobs that settle at once wait here to be recorded together
 * (settle_together); NULL otherwise. */
typedef struct settling {
    size_t n;
    check_t *c[CV_MSG_NODES_MAX];
} settling_t;
static settling_t *settling;

static void settled_clear(check_t *c)
{
    cv_check_written_clear(&c->settled.written);
    cv_observe_outcome_clear(&c->settled.seen);
}

/* The observers' look, taken here: nothing to hand them. */
static bool settle_at_once(check_t *c)
{
    cv_observe_outcome_t *seen = &c->settled.seen;
    if (!cv_check_settled(&c->run.msg, &c->in, &c->out, &c->st, c->now, seen))
        return false;
    cv_check_finish_of(&c->settled.f, &c->settled.written, &c->run.msg, &c->in, &c->out, &c->st,
                       c->token);
    c->settled.d = cv_observe_done_of(&c->run.msg, seen, c->in.graph_entry, c->st.physical_id);
    c->settled.d.publishing = true; /* this CHECK job, redelivered, publishes them again */
    if (settling) {
        settling->c[settling->n++] = c;
        return true;
    }
    int rc = cv_progress_check_done(c->run.w, &c->settled.f, &c->settled.d, on_settled, c);
    settled_clear(c); /* sent: the call held its own copy */
    if (rc != 0)
        cv__check_backoff(c);
    return true;
}

/* Records the actions that settled while a message's jobs were answered. */
static void settle_together(cv_worker_t *w, settling_t *s)
{
    const cv_check_finish_t *f[CV_MSG_NODES_MAX];
    const cv_node_done_t *d[CV_MSG_NODES_MAX];
    void *ud[CV_MSG_NODES_MAX];
    for (size_t i = 0; i < s->n; i++) {
        f[i] = &s->c[i]->settled.f;
        d[i] = &s->c[i]->settled.d;
        ud[i] = s->c[i];
    }
    /* Each callback may end its job: the strings go first. */
    cv_check_written_t written[CV_MSG_NODES_MAX];
    cv_observe_outcome_t seen[CV_MSG_NODES_MAX];
    for (size_t i = 0; i < s->n; i++) {
        written[i] = s->c[i]->settled.written;
        seen[i] = s->c[i]->settled.seen;
    }
    cv_progress_check_done_many(w, f, d, s->n, on_settled, ud);
    for (size_t i = 0; i < s->n; i++) {
        cv_check_written_clear(&written[i]);
        cv_observe_outcome_clear(&seen[i]);
    }
}

/* ---- recording an action ---- */

static void on_recorded(cv_redis_t *r, redisReply *rep, void *ud)
{
    check_t *c = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_CHECK_FINISH, rep);
    if (answer == CV_ANSWER_INVALID) {
        if (rep && rep->type == REDIS_REPLY_ERROR)
            cv_warn("check_finish: %s", rep->str);
        cv__check_backoff(c);
        return;
    }
    lease_released(c); /* check_finish released it */
    const char *version = cv_reply_str(rep, CV_CHECK_FINISH_R_VERSION);
    if (answer != CV_ANSWER_OK) {
        cv_worker_count(c->run.w, CV_STAT_FENCED, 1);
        cv_warn("stack %s resource %s: write refused (version moved to %s)", c->run.msg.stack,
                c->run.msg.resource, version);
        cv_jobrun_end(&c->run);
        return;
    }
    cv_worker_count(c->run.w, CV_STAT_ACTED, 1);
    hand_off(c, version, c->out.older);
}

/*
 * Writes the action just taken, fenced by the version read under the lease.
 * An empty status leaves the current version as it is and records only the
 * replaced versions (a cleanup of old versions).
 */
void cv__check_record(check_t *c)
{
    if (json_array_size(c->children) > 0) {
        /* Nested stacks first: recording says they are under way. */
        cv__nested_begin(c);
        return;
    }
    if (json_array_size(c->services) > 0) {
        /* Then the services: recording says they are in the cluster. */
        cv__service_begin(c);
        return;
    }
    if (settle_at_once(c))
        return;
    cv_check_finish_t f;
    cv_check_written_t written;
    cv_check_finish_of(&f, &written, &c->run.msg, &c->in, &c->out, &c->st, c->token);
    cv_call_t call;
    cv_call_check_finish(&call, &f, c->run.w->id);
    int rc = cv_redis_call(c->run.w->redis, call.script, call.keys, call.args, call.nextra,
                           call.extra_keys, call.extra_args, on_recorded, c);
    cv_call_free(&call);
    cv_check_written_clear(&written);
    if (rc)
        cv__check_backoff(c);
}

/* ---- carrying the decision out ---- */

static void act(check_t *c)
{
    if (cv_check_act(&c->run.msg, &c->in.rec, &c->out, c->now, &c->st, cv__nested_plan, c) != 0) {
        cv_check_act_failed(&c->out, &c->run.msg, c->st.reason);
        cv__check_fail(c, c->out.status, c->out.action, c->out.reason);
        return;
    }
    cv__service_plan(c);
    cv__check_record(c);
}

void cv__check_carry_out(check_t *c)
{
    const cv_check_outcome_t *o = &c->out;
    switch (o->kind) {
    case CV_CHECK_CREATE:
    case CV_CHECK_UPDATE:
    case CV_CHECK_REPLACE:
    case CV_CHECK_RESTORE:
    case CV_CHECK_STEP:
    case CV_CHECK_DELETE_CURRENT:
    case CV_CHECK_DELETE_REPLACED:
        act(c);
        break;
    case CV_CHECK_WAIT:
        hand_off(c, o->version, true);
        break;
    case CV_CHECK_OBSERVE_AGAIN:
    case CV_CHECK_OBSERVE_DELETES:
        hand_off(c, o->version, false);
        break;
    case CV_CHECK_DONE:
    case CV_CHECK_RETAIN_CURRENT:
    case CV_CHECK_NOTHING:
        done(c);
        break;
    case CV_CHECK_END:
        cv__check_release_and_end(c);
        break;
    case CV_CHECK_FAIL:
        cv__check_fail(c, o->status, o->action, o->reason);
        break;
    }
}

/* ---- loading under the lease ---- */

static void decide(check_t *c, const char *load_error)
{
    c->now = cv_now();
    cv_check_input_t in = cv_check_input(&c->in, &c->run.msg, c->now, load_error);
    cv_check_decide(&in, &c->out);
    if (!cv__hooks_pause(c))
        cv__check_carry_out(c);
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
    cv_worker_count(c->run.w, CV_STAT_STALE, 1);
    c->in.graph_entry = strdup(graph_entry);
    cv_node_done_t d = {.job = &c->run.msg, .graph_entry = c->in.graph_entry, .publishing = true};
    if (!c->in.graph_entry || cv_progress_node_done(c->run.w, &d, on_progress, c) != 0)
        cv__check_backoff(c);
}

static void take_lease(check_t *c)
{
    const cv_msg_t *m = &c->run.msg;
    char lease[CV_KEY_MAX];
    c->leased = true;
    cv_key(lease, sizeof(lease), CV_KEY_LEASE, m->stack, m->traversal, m->resource);
    c->keeper = cv_lease_keep(c->run.w->loop, c->run.w->redis, lease, c->token,
                              (unsigned)c->run.w->lease_ms, &c->run.w->isolated);
}

static void on_begin(cv_redis_t *r, redisReply *rep, void *ud)
{
    check_t *c = ud;
    (void)r;
    switch (cv_reply_answer(CV_SCRIPT_CHECK_BEGIN, rep)) {
    case CV_ANSWER_BUSY: {
        /* A live holder usually lets go within milliseconds; a dead one's lease
         * runs out. Poll at most every 250 ms rather than sleeping the PTTL. */
        long long pttl = cv_reply_int(rep, CV_CHECK_BEGIN_R_BUSY_PTTL);
        cv_worker_count(c->run.w, CV_STAT_RETRIES, 1);
        cv_jobrun_later(&c->run, (unsigned)(pttl < 20 ? 20 : pttl > 250 ? 250 : pttl));
        return;
    }
    case CV_ANSWER_UNKNOWN:
        cv_poison_unknown_stack(c->run.w, c->run.job, &c->run.msg);
        cv_jobrun_drop(&c->run);
        return;
    case CV_ANSWER_NONODE:
        cv_poison_unknown_node(c->run.w, c->run.job, &c->run.msg);
        cv_jobrun_drop(&c->run);
        return;
    case CV_ANSWER_DONE:
        if (rep->elements == CV_CHECK_BEGIN_R_DONE_GRAPH_ENTRY + 1) {
            republish_successors(c, cv_reply_str(rep, CV_CHECK_BEGIN_R_DONE_GRAPH_ENTRY));
            return;
        }
        cv_worker_count(c->run.w, CV_STAT_STALE, 1); /* done, and its successors' jobs published */
        cv_jobrun_end(&c->run);
        return;
    case CV_ANSWER_NOTREADY:
        /* Early: a failover lost a predecessor's completion after its
         * successors' jobs went out. Redone, it publishes this job again. */
        cv_info("CHECK %s/%s t%llu: %s of %s predecessors done, not run before the others",
                c->run.msg.stack, c->run.msg.resource, (unsigned long long)c->run.msg.traversal,
                cv_reply_str(rep, CV_CHECK_BEGIN_R_NOTREADY_SATISFIED),
                cv_reply_str(rep, CV_CHECK_BEGIN_R_NOTREADY_PREDS));
        cv_worker_count(c->run.w, CV_STAT_STALE, 1);
        cv_jobrun_end(&c->run);
        return;
    case CV_ANSWER_STALE:
    case CV_ANSWER_SETTLED:
        cv_worker_count(c->run.w, CV_STAT_STALE, 1); /* nothing to do */
        cv_jobrun_end(&c->run);
        return;
    case CV_ANSWER_OK:
        break;
    default:
        if (rep && rep->type == REDIS_REPLY_ERROR)
            cv_warn("check_begin: %s", rep->str);
        cv__check_backoff(c);
        return;
    }
    /* A nested resource waits for its place holding nothing: admitted, it
     * loads again (check_begin is re-entrant for its token; a lease that
     * ran out meanwhile is taken again, or BUSY). */
    if (rep->elements > CV_CHECK_BEGIN_R_FILES && cv_reply_str(rep, CV_CHECK_BEGIN_R_FILES)[0] &&
        !cv_gate_enter(nested_gate(c), &c->nested))
        return;
    take_lease(c);
    if (rep->elements == CV_CHECK_BEGIN_R_OK_ELEMENTS &&
        cv_reply_str(rep, CV_CHECK_BEGIN_R_TOOK_OVER)[0])
        cv_metrics_add(CV_METRIC_LEASE_TAKEOVERS, 1);
    int loaded = cv_check_load(&c->in, &c->run.msg, rep);
    if (loaded == CV_EIO) {
        /* A value sealed with a key this worker lacks: another worker, or
         * this one once its key file holds the key, can do the job. */
        cv_warn("stack %s resource %s: a stored value is sealed with a key this worker's key "
                "file (CONVERGE_SECRET_KEY_FILE) does not hold; retrying",
                c->run.msg.stack, c->run.msg.resource);
        cv_check_loaded_clear(&c->in);
        cv__check_backoff(c);
        return;
    }
    if (loaded != 0) {
        char err[CV_REASON_MAX];
        snprintf(err, sizeof(err), "resources.%s: malformed check_begin reply",
                 c->run.msg.resource);
        decide(c, err);
        return;
    }
    decide(c, NULL);
}

static void check_start(cv_jobrun_t *run)
{
    check_t *c = (check_t *)run;
    cv_call_t call;
    cv_call_check_begin(&call, &run->msg, c->token, (unsigned)run->w->lease_ms);
    int rc = cv_redis_call(run->w->redis, call.script, call.keys, call.args, call.nextra,
                           call.extra_keys, call.extra_args, on_begin, c);
    cv_call_free(&call);
    if (rc != 0)
        cv__check_backoff(c);
}

static void nested_admitted(cv_gate_waiter_t *w)
{
    check_t *c = (check_t *)((char *)w - offsetof(check_t, nested));
    cv_jobrun_start(&c->run); /* hands it back when the worker is stopping */
}

static check_t *check_new(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    static unsigned long long seq;
    check_t *c = calloc(1, sizeof(*c));
    cv_jobrun_init(&c->run, w, job, m, check_start, check_reset);
    c->nested.start = nested_admitted;
    cv_node_name(c->node, sizeof(c->node), m->phase, m->resource);
    /* The token names the holder, so an operator reading a lease sees who,
     * and a successor of this process with the same id sees it is gone. */
    snprintf(c->token, sizeof(c->token), "%s:%llu", w->holder, ++seq);
    return c;
}

/* The first start of the jobs one message carried: one check_begin for all
 * of them (the stack read once), each job then going on with its own
 * answer as if it had asked alone. Starting again later, each asks alone. */
typedef struct begin_many {
    size_t n;
    check_t *c[CV_MSG_NODES_MAX];
} begin_many_t;

static void on_begin_many(cv_redis_t *r, redisReply *rep, void *ud)
{
    begin_many_t *b = ud;
    cv_worker_t *w = b->c[0]->run.w;
    settling_t s = {0};
    settling = &s;
    for (size_t i = 0; i < b->n; i++)
        on_begin(r, cv_reply_part(rep, i, b->n), b->c[i]);
    settling = NULL;
    free(b);
    if (s.n > 0)
        settle_together(w, &s);
}

static void begin_together(cv_worker_t *w, begin_many_t *b)
{
    const cv_msg_t *jobs[CV_MSG_NODES_MAX];
    const char *tokens[CV_MSG_NODES_MAX];
    for (size_t i = 0; i < b->n; i++) {
        jobs[i] = &b->c[i]->run.msg;
        tokens[i] = b->c[i]->token;
    }
    cv_call_t call;
    int rc = cv_call_check_begin_many(&call, jobs, tokens, b->n, (unsigned)w->lease_ms);
    if (rc == 0)
        rc = cv_redis_call(w->redis, call.script, call.keys, call.args, call.nextra,
                           call.extra_keys, call.extra_args, on_begin_many, b);
    cv_call_free(&call);
    if (rc == 0)
        return;
    for (size_t i = 0; i < b->n; i++)
        cv__check_backoff(b->c[i]);
    free(b);
}

/* A message carrying several nodes' jobs runs them side by side, each as if
 * it had come alone; its offset is committed once all of them finished. */
void cv__engine_check_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    begin_many_t *b = calloc(1, sizeof(*b));
    if (!b) {
        cv_worker_hand_back(w, job); /* redelivered whole */
        return;
    }
    cv_msg_t one;
    for (size_t pos = 0; cv_msg_next_node(m, &pos, &one);)
        b->c[b->n++] = check_new(w, job, &one);
    if (b->n > 1) {
        cv_job_split(job, (int)b->n);
        if (!w->stopping && !w->isolated) {
            begin_together(w, b);
            return;
        }
    }
    /* One job, or a worker handing its jobs back (cv_jobrun_start). */
    for (size_t i = 0; i < b->n; i++)
        cv_jobrun_start(&b->c[i]->run);
    free(b);
}
