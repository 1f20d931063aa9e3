/*
 * The CHECK step machine's straight line (cv_checkjob.h): check_begin's
 * answer, the decision, the type's operation, the fenced write and the
 * hand-off to the observers, or the node done or failed; the lease
 * released at the end. The job ends exactly once, in exactly one of
 * "done and propagated" or "failed and recorded", or with a retry of the
 * whole job.
 */
#include "cv__checkjob.h"

#include "cv_base.h"
#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cv_flow_t *cv__checkjob_end(cv_checkjob_t *j, cv_flow_kind_t kind)
{
    return cv__flow_end(&j->buf, kind);
}

/* ---- the end: the lease released ---- */

const cv_flow_t *cv__checkjob_release_and_end(cv_checkjob_t *j)
{
    if (!j->leased)
        return cv__checkjob_end(j, CV_FLOW_DONE);
    cv_call_t *call = cv__flow_call(&j->buf, true);
    if (!call) /* the lease expires by itself */
        return cv__checkjob_end(j, CV_FLOW_DONE);
    cv_call_lease_release(call, &j->msg, j->token);
    j->state = CV_CHECKJOB_RELEASE;
    return cv__checkjob_end(j, CV_FLOW_IO);
}

static const cv_flow_t *released(cv_checkjob_t *j)
{
    j->leased = false;
    return cv__checkjob_end(j, CV_FLOW_DONE);
}

/* ---- hand-off to the observers ---- */

static const cv_flow_t *hand_off(cv_checkjob_t *j, const char *version, bool watch)
{
    cv_msg_t m = j->msg;
    m.type = CV_MSG_OBSERVE;
    m.version = strtoull(version, NULL, 10);
    m.watch = watch;
    if (cv__flow_msg(&j->buf, &m) != 0)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    j->state = CV_CHECKJOB_HANDOFF;
    return cv__checkjob_end(j, CV_FLOW_IO);
}

static const cv_flow_t *handed_off(cv_checkjob_t *j, const cv_flow_in_t *in)
{
    if (in->published)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    return cv__checkjob_release_and_end(j);
}

/* ---- done / failed (cv_progress) ---- */

const cv_flow_t *cv__checkjob_progress(cv_checkjob_t *j, const cv_flow_t *a, int then)
{
    j->state = CV_CHECKJOB_PROGRESS;
    j->then = then;
    return a;
}

const cv_flow_t *cv__checkjob_fail(cv_checkjob_t *j, const char *status, const char *action,
                                   const char *reason)
{
    cv_flow_buf_t *b = &j->buf;
    char logged[512];
    cv_str_redact_quoted(logged, sizeof(logged), reason);
    cv__flow_log(b, CV_FLOW_WARN, "stack %s resource %s: %s", j->msg.stack, j->msg.resource,
                 logged);
    cv_node_failed_t f = {&j->msg,
                          j->in.rec.version,
                          cv__flow_keep(b, status),
                          cv__flow_keep(b, reason),
                          j->in.rec.physical_id,
                          cv__flow_keep(b, action)};
    return cv__checkjob_progress(j, cv_progress_node_failed(&j->progress, b, &f, j->worker),
                                 CV__CHECKJOB_THEN_RELEASE);
}

static const cv_flow_t *done(cv_checkjob_t *j)
{
    cv_node_done_t d;
    cv_check_done_of(&d, &j->written, &j->msg, &j->in, &j->out, j->token);
    return cv__checkjob_progress(j, cv_progress_node_done(&j->progress, &j->buf, &d, j->worker),
                                 CV__CHECKJOB_THEN_DONE);
}

/*
 * A job for a node an engine marked done without knowing its successors'
 * jobs published (check_begin.lua says so) is a redelivery after that engine
 * died: node_done again, changing nothing, publishes those whose sync point
 * is complete and that are not done themselves (cv_sp_should_publish).
 * Every other job for a done node is a duplicate and ends there: republishing
 * for those too made each duplicate start a wave down the graph.
 */
static const cv_flow_t *republish(cv_checkjob_t *j, const char *graph_entry)
{
    cv__flow_count(&j->buf, CV_FLOW_STALE);
    j->in.graph_entry = strdup(graph_entry);
    if (!j->in.graph_entry)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    cv_node_done_t d = {.job = &j->msg, .graph_entry = j->in.graph_entry, .publishing = true};
    return cv__checkjob_progress(j, cv_progress_node_done(&j->progress, &j->buf, &d, j->worker),
                                 CV__CHECKJOB_THEN_RELEASE);
}

/* An action that settled at once: its write and its node done were one
 * step; check_done released the lease. */
static const cv_flow_t *settled(cv_checkjob_t *j, int rc)
{
    if (rc == CV_EREDIS || rc == CV_EKAFKA)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    j->leased = false;
    if (rc == CV_EFENCED) {
        cv__flow_count(&j->buf, CV_FLOW_FENCED);
        cv__flow_log(&j->buf, CV_FLOW_WARN,
                     "stack %s resource %s: write refused (the record moved on)", j->msg.stack,
                     j->msg.resource);
    } else if (rc == 0) {
        cv__flow_count(&j->buf, CV_FLOW_ACTED);
    }
    return cv__checkjob_end(j, CV_FLOW_DONE);
}

/* cv_progress is over with outcome rc. */
static const cv_flow_t *progressed(cv_checkjob_t *j, int rc)
{
    switch (j->then) {
    case CV__CHECKJOB_THEN_SETTLED:
        return settled(j, rc);
    case CV__CHECKJOB_THEN_CHILD:
        return cv__checkjob_child_begun(j, rc);
    case CV__CHECKJOB_THEN_DONE:
        /* node_done released the lease once it answered OK (it answers
         * FENCED and NONODE before releasing it). */
        if (rc == 0)
            j->leased = false;
        break;
    default:
        break;
    }
    if (rc == CV_EREDIS || rc == CV_EKAFKA)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    return cv__checkjob_release_and_end(j); /* nothing to release when node_done did */
}

static const cv_flow_t *progress_step(cv_checkjob_t *j, const cv_flow_in_t *in)
{
    int rc = 0;
    const cv_flow_t *a = cv_progress_step(&j->progress, &j->buf, in, &rc);
    return a ? a : progressed(j, rc);
}

/* ---- recording an action ---- */

/* The observers' look, taken here: nothing to hand them. */
static const cv_flow_t *settle_at_once(cv_checkjob_t *j)
{
    if (!cv_check_settled(&j->msg, &j->in, &j->out, &j->st, j->now, &j->seen))
        return NULL;
    cv_check_finish_t f;
    cv_check_finish_of(&f, &j->written, &j->msg, &j->in, &j->out, &j->st, j->token);
    cv_node_done_t d = cv_observe_done_of(&j->msg, &j->seen, j->in.graph_entry, j->st.physical_id);
    d.publishing = true; /* this CHECK job, redelivered, publishes them again */
    return cv__checkjob_progress(j,
                                 cv_progress_check_done(&j->progress, &j->buf, &f, &d, j->worker),
                                 CV__CHECKJOB_THEN_SETTLED);
}

/*
 * Writes the action just taken, fenced by the version read under the lease.
 * An empty status leaves the current version as it is and records only the
 * replaced versions (a cleanup of old versions).
 */
const cv_flow_t *cv__checkjob_record(cv_checkjob_t *j)
{
    if (json_array_size(j->children) >
        0) /* nested stacks first: recording says they are under way */
        return cv__checkjob_children(j);
    if (json_array_size(j->services) >
        0) /* then services: recording says they are in the cluster */
        return cv__checkjob_services(j);
    const cv_flow_t *a = settle_at_once(j);
    if (a)
        return a;
    cv_check_finish_t f;
    cv_check_finish_of(&f, &j->written, &j->msg, &j->in, &j->out, &j->st, j->token);
    cv_call_t *call = cv__flow_call(&j->buf, true);
    if (!call)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    cv_call_check_finish(call, &f, j->worker);
    j->state = CV_CHECKJOB_RECORD;
    return cv__checkjob_end(j, CV_FLOW_IO);
}

static const cv_flow_t *recorded(cv_checkjob_t *j, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    cv_answer_t answer = cv_resp_answer(CV_SCRIPT_CHECK_FINISH, rep);
    if (answer == CV_ANSWER_INVALID) {
        if (cv_resp_error(rep))
            cv__flow_log(&j->buf, CV_FLOW_WARN, "check_finish: %s", cv_resp_error(rep));
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    }
    j->leased = false; /* check_finish released it */
    const char *version = cv_resp_str(rep, CV_CHECK_FINISH_R_VERSION);
    if (answer != CV_ANSWER_OK) {
        cv__flow_count(&j->buf, CV_FLOW_FENCED);
        cv__flow_log(&j->buf, CV_FLOW_WARN,
                     "stack %s resource %s: write refused (version moved to %s)", j->msg.stack,
                     j->msg.resource, version);
        return cv__checkjob_end(j, CV_FLOW_DONE);
    }
    cv__flow_count(&j->buf, CV_FLOW_ACTED);
    return hand_off(j, version, j->out.older);
}

/* ---- carrying the decision out ---- */

static const cv_flow_t *act(cv_checkjob_t *j)
{
    if (cv_check_act(&j->msg, &j->in.rec, &j->out, j->now, &j->st, cv__checkjob_plan_child, j) !=
        0) {
        cv_check_act_failed(&j->out, &j->msg, j->st.reason);
        return cv__checkjob_fail(j, j->out.status, j->out.action, j->out.reason);
    }
    cv__checkjob_plan_services(j);
    return cv__checkjob_record(j);
}

const cv_flow_t *cv__checkjob_carry_out(cv_checkjob_t *j)
{
    const cv_check_outcome_t *o = &j->out;
    switch (o->kind) {
    case CV_CHECK_CREATE:
    case CV_CHECK_UPDATE:
    case CV_CHECK_REPLACE:
    case CV_CHECK_RESTORE:
    case CV_CHECK_STEP:
    case CV_CHECK_DELETE_CURRENT:
    case CV_CHECK_DELETE_REPLACED:
        return act(j);
    case CV_CHECK_WAIT:
        return hand_off(j, o->version, true);
    case CV_CHECK_OBSERVE_AGAIN:
    case CV_CHECK_OBSERVE_DELETES:
        return hand_off(j, o->version, false);
    case CV_CHECK_DONE:
    case CV_CHECK_RETAIN_CURRENT:
    case CV_CHECK_NOTHING:
        return done(j);
    case CV_CHECK_END:
        return cv__checkjob_release_and_end(j);
    case CV_CHECK_FAIL:
        break;
    }
    return cv__checkjob_fail(j, o->status, o->action, o->reason);
}

/* ---- loading under the lease ---- */

static const cv_flow_t *decide(cv_checkjob_t *j, double now, const char *load_error)
{
    j->now = now;
    cv_check_input_t in = cv_check_input(&j->in, &j->msg, now, load_error);
    cv_check_decide(&in, &j->out);
    const cv_flow_t *pause = cv__checkjob_hooks(j);
    return pause ? pause : cv__checkjob_carry_out(j);
}

/* check_begin answered OK: the lease is ours, and what the action needs is
 * in the reply. */
static const cv_flow_t *loaded(cv_checkjob_t *j, const cv_resp_t *rep, double now)
{
    j->leased = true;
    if (cv_resp_count(rep) == CV_CHECK_BEGIN_R_OK_ELEMENTS &&
        cv_resp_str(rep, CV_CHECK_BEGIN_R_TOOK_OVER)[0])
        cv__flow_count(&j->buf, CV_FLOW_TAKEOVERS);
    int rc = cv_check_load(&j->in, &j->msg, rep);
    if (rc == CV_EIO) {
        /* A value sealed with a key this worker lacks: another worker, or
         * this one once its key file holds the key, can do the job. */
        cv__flow_log(&j->buf, CV_FLOW_WARN,
                     "stack %s resource %s: a stored value is sealed with a key this worker's key "
                     "file (CONVERGE_SECRET_KEY_FILE) does not hold; retrying",
                     j->msg.stack, j->msg.resource);
        cv_check_loaded_clear(&j->in);
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    }
    if (rc != 0) {
        char err[CV_REASON_MAX];
        snprintf(err, sizeof(err), "resources.%s: malformed check_begin reply", j->msg.resource);
        return decide(j, now, err);
    }
    return decide(j, now, NULL);
}

/* A job that ends without its lease: nothing done. */
static const cv_flow_t *stale(cv_checkjob_t *j)
{
    cv__flow_count(&j->buf, CV_FLOW_STALE);
    return cv__checkjob_end(j, CV_FLOW_DONE);
}

static const cv_flow_t *begun(cv_checkjob_t *j, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    switch (cv_resp_answer(CV_SCRIPT_CHECK_BEGIN, rep)) {
    case CV_ANSWER_BUSY: {
        /* A live holder usually lets go within milliseconds; a dead one's lease
         * runs out. Poll at most every 250 ms rather than sleeping the PTTL. */
        long long pttl = cv_resp_int(rep, CV_CHECK_BEGIN_R_BUSY_PTTL);
        cv__flow_count(&j->buf, CV_FLOW_RETRIES);
        return cv__flow_later(&j->buf, (unsigned)(pttl < 20 ? 20 : pttl > 250 ? 250 : pttl));
    }
    case CV_ANSWER_UNKNOWN:
        return cv__checkjob_end(j, CV_FLOW_UNKNOWN_STACK);
    case CV_ANSWER_NONODE:
        return cv__checkjob_end(j, CV_FLOW_UNKNOWN_NODE);
    case CV_ANSWER_DONE:
        if (cv_resp_count(rep) == CV_CHECK_BEGIN_R_DONE_GRAPH_ENTRY + 1)
            return republish(j, cv_resp_str(rep, CV_CHECK_BEGIN_R_DONE_GRAPH_ENTRY));
        return stale(j); /* done, and its successors' jobs published */
    case CV_ANSWER_NOTREADY:
        /* Early: a failover lost a predecessor's completion after its
         * successors' jobs went out. Redone, it publishes this job again. */
        cv__flow_log(&j->buf, CV_FLOW_INFO,
                     "CHECK %s/%s t%llu: %s of %s predecessors done, not run before the others",
                     j->msg.stack, j->msg.resource, (unsigned long long)j->msg.traversal,
                     cv_resp_str(rep, CV_CHECK_BEGIN_R_NOTREADY_SATISFIED),
                     cv_resp_str(rep, CV_CHECK_BEGIN_R_NOTREADY_PREDS));
        return stale(j);
    case CV_ANSWER_STALE:
    case CV_ANSWER_SETTLED:
        return stale(j); /* nothing to do */
    case CV_ANSWER_OK:
        return loaded(j, rep, in->now);
    default:
        if (cv_resp_error(rep))
            cv__flow_log(&j->buf, CV_FLOW_WARN, "check_begin: %s", cv_resp_error(rep));
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    }
}

/* ------------------------------------------------------------------------
 * The machine
 * ------------------------------------------------------------------------ */

void cv_checkjob_init(cv_checkjob_t *j, const cv_msg_t *m, const cv_checkjob_conf_t *conf)
{
    memset(j, 0, sizeof(*j));
    j->msg = *m;
    cv_str_copy(j->worker, sizeof(j->worker), conf->worker);
    cv_str_copy(j->token, sizeof(j->token), conf->token);
    j->lease_ms = conf->lease_ms;
    j->limits = conf->limits;
    cv__flow_begin(&j->buf);
}

const cv_flow_t *cv_checkjob_start(cv_checkjob_t *j)
{
    cv_checkjob_reset(j);
    cv_call_t *call = cv__flow_call(&j->buf, true);
    if (!call)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    cv_call_check_begin(call, &j->msg, j->token, j->lease_ms);
    return cv__checkjob_end(j, CV_FLOW_IO);
}

const cv_flow_t *cv_checkjob_step(cv_checkjob_t *j, const cv_flow_in_t *in)
{
    /* What the last answer referred to was sent with it. */
    cv__flow_begin(&j->buf);
    cv_check_written_clear(&j->written);
    cv_observe_outcome_clear(&j->seen);
    switch (j->state) {
    case CV_CHECKJOB_BEGIN:
        return begun(j, in);
    case CV_CHECKJOB_HOOK:
        return cv__checkjob_hook_replied(j, in);
    case CV_CHECKJOB_CLUSTER:
        return cv__checkjob_cluster_read(j, in);
    case CV_CHECKJOB_SVC_PUT:
        return cv__checkjob_svc_put(j, in);
    case CV_CHECKJOB_RECONCILE:
        return cv__checkjob_reconciled(j, in);
    case CV_CHECKJOB_RECORD:
        return recorded(j, in);
    case CV_CHECKJOB_HANDOFF:
        return handed_off(j, in);
    case CV_CHECKJOB_PROGRESS:
        return progress_step(j, in);
    case CV_CHECKJOB_RELEASE:
        break;
    }
    return released(j);
}

void cv_checkjob_reset(cv_checkjob_t *j)
{
    cv_check_loaded_clear(&j->in);
    cv_check_outcome_clear(&j->out);
    memset(&j->out, 0, sizeof(j->out));
    cv_record_state_clear(&j->st);
    memset(&j->st, 0, sizeof(j->st));
    json_decref(j->children);
    json_decref(j->services);
    j->children = j->services = NULL;
    cv_check_written_clear(&j->written);
    cv_observe_outcome_clear(&j->seen);
    cv_progress_clear(&j->progress);
    cv__flow_clear(&j->buf);
    cv__flow_begin(&j->buf);
    j->state = CV_CHECKJOB_BEGIN;
    j->then = 0;
    j->now = 0;
    j->leased = false;
}

bool cv_checkjob_leased(const cv_checkjob_t *j)
{
    return j->leased;
}

void cv_checkjob_lease_key(const cv_checkjob_t *j, char *key, size_t size)
{
    cv_key(key, size, CV_KEY_LEASE, j->msg.stack, j->msg.traversal, j->msg.resource);
}

const char *cv_checkjob_token(const cv_checkjob_t *j)
{
    return j->token;
}

const cv_msg_t *cv_checkjob_msg(const cv_checkjob_t *j)
{
    return &j->msg;
}

cv_checkjob_state_t cv_checkjob_state(const cv_checkjob_t *j)
{
    return j->state;
}

const cv_check_outcome_t *cv_checkjob_outcome(const cv_checkjob_t *j)
{
    return &j->out;
}

bool cv_checkjob_wants_place(const cv_checkjob_t *j, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    return j->state == CV_CHECKJOB_BEGIN &&
           cv_resp_answer(CV_SCRIPT_CHECK_BEGIN, rep) == CV_ANSWER_OK &&
           cv_resp_count(rep) > CV_CHECK_BEGIN_R_FILES &&
           cv_resp_str(rep, CV_CHECK_BEGIN_R_FILES)[0] != '\0';
}
