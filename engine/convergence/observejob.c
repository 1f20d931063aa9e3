/*
 * The OBSERVE step machine's line (cv_observejob.h): observe_load's
 * answer, the decision before looking, and what the decision on the looks
 * says — look again later, the node done or failed, a watch's older action
 * recorded and its node checked again, a walk's next step asked for.
 */
#include "cv__observejob.h"

#include "cv_base.h"
#include "cv_contract.h"

#include <stdlib.h>
#include <string.h>

/* What follows cv_progress. */
enum { THEN_END, THEN_RECHECK };

const cv_flow_t *cv__observejob_end(cv_observejob_t *o, cv_flow_kind_t kind)
{
    return cv__flow_end(&o->buf, kind);
}

/* ---- a CHECK job of the node: a recheck, a walk's step ---- */

static const cv_flow_t *publish(cv_observejob_t *o, const cv_msg_t *m)
{
    if (cv__flow_msg(&o->buf, m) != 0)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    o->state = CV_OBSERVEJOB_PUBLISH;
    return cv__observejob_end(o, CV_FLOW_IO);
}

/* A watch: the older action settled, this traversal checks again. */
static const cv_flow_t *recheck(cv_observejob_t *o)
{
    cv_msg_t m = cv_observe_recheck_job(&o->msg);
    return publish(o, &m);
}

static const cv_flow_t *published(cv_observejob_t *o, const cv_flow_in_t *in)
{
    return cv__observejob_end(o, in->published ? CV_FLOW_RETRY : CV_FLOW_DONE);
}

/* ---- done / failed (cv_progress) ---- */

static const cv_flow_t *progress(cv_observejob_t *o, const cv_flow_t *a, int then)
{
    o->state = then == THEN_RECHECK ? CV_OBSERVEJOB_OLDER : CV_OBSERVEJOB_PROGRESS;
    return a;
}

static const cv_flow_t *node_done(cv_observejob_t *o)
{
    cv_node_done_t d = cv_observe_done_of(&o->msg, &o->out, o->graph_entry, o->rec.physical_id);
    return progress(o, cv_progress_node_done(&o->progress, &o->buf, &d, o->worker), THEN_END);
}

static const cv_flow_t *node_failed(cv_observejob_t *o)
{
    char logged[512];
    cv_str_redact_quoted(logged, sizeof(logged), o->out.reason);
    cv__flow_log(&o->buf, CV_FLOW_WARN, "stack %s: %s", o->msg.stack, logged);
    cv_node_failed_t f = cv_observe_failed_of(&o->msg, &o->out, o->rec.physical_id);
    return progress(o, cv_progress_node_failed(&o->progress, &o->buf, &f, o->worker), THEN_END);
}

/* Records the older action's end as that traversal's outcome: with no
 * successors and a superseded traversal, nothing else moves. */
static const cv_flow_t *settle_older(cv_observejob_t *o)
{
    o->older = cv_observe_older_job(&o->msg, &o->rec);
    if (cv_str_ends_with(o->out.status, "_FAILED")) {
        cv_node_failed_t f = cv_observe_failed_of(&o->older, &o->out, o->rec.physical_id);
        return progress(o, cv_progress_node_failed(&o->progress, &o->buf, &f, o->worker),
                        THEN_RECHECK);
    }
    cv_node_done_t d = cv_observe_done_of(&o->older, &o->out, "", o->rec.physical_id);
    return progress(o, cv_progress_node_done(&o->progress, &o->buf, &d, o->worker), THEN_RECHECK);
}

static const cv_flow_t *progressed(cv_observejob_t *o, int rc)
{
    if (rc == CV_EREDIS || rc == CV_EKAFKA)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    if (o->state == CV_OBSERVEJOB_OLDER)
        return recheck(o); /* STALE (superseded, as expected) or FENCED (moved on): either way */
    if (rc == CV_EFENCED)
        cv__flow_count(&o->buf, CV_FLOW_FENCED);
    else if (rc == CV_ESTALE)
        cv__flow_count(&o->buf, CV_FLOW_STALE);
    return cv__observejob_end(o, CV_FLOW_DONE);
}

static const cv_flow_t *progress_step(cv_observejob_t *o, const cv_flow_in_t *in)
{
    int rc = 0;
    const cv_flow_t *a = cv_progress_step(&o->progress, &o->buf, in, &rc);
    return a ? a : progressed(o, rc);
}

/* ---- what the looks said ---- */

/* Looks again after the delay; being watched, the traversal is not
 * stalled (stack_touch.lua, sent and forgotten). */
static const cv_flow_t *look_again(cv_observejob_t *o)
{
    cv_call_t *call = cv__flow_call(&o->buf, false);
    if (call)
        cv_call_stack_touch(call, &o->msg);
    return cv__flow_later(&o->buf, o->out.delay_ms);
}

const cv_flow_t *cv__observejob_settle(cv_observejob_t *o)
{
    switch (o->out.kind) {
    case CV_OBSERVE_SETTLED_OLDER:
        return settle_older(o);
    case CV_OBSERVE_WAIT:
        return look_again(o);
    case CV_OBSERVE_FAILED:
        return node_failed(o);
    case CV_OBSERVE_STEP: {
        /* A walk's step ended and its pause passed: the engine begins the next. */
        cv_msg_t m = cv_observe_step_job(&o->msg, &o->rec);
        return publish(o, &m);
    }
    default: /* COMPLETE */
        return node_done(o);
    }
}

/* ---- loading ---- */

static const cv_flow_t *loaded(cv_observejob_t *o, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    cv_answer_t answer = cv_resp_answer(CV_SCRIPT_OBSERVE_LOAD, rep);
    if (answer == CV_ANSWER_NONODE)
        return cv__observejob_end(o, CV_FLOW_UNKNOWN_NODE);
    if (answer != CV_ANSWER_VALUE || cv_resp_count(rep) != CV_OBSERVE_LOAD_R_GRAPH_ENTRY + 1)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    if (!cv_resp_str(rep, CV_OBSERVE_LOAD_R_TRAVERSAL)[0] &&
        !cv_resp_str(rep, CV_OBSERVE_LOAD_R_STATUS)[0]) /* no traversal, no status: no stack */
        return cv__observejob_end(o, CV_FLOW_UNKNOWN_STACK);
    if (cv_record_parse(&o->rec, cv_resp_at(rep, CV_OBSERVE_LOAD_R_RECORD)) != 0) {
        cv__flow_log(&o->buf, CV_FLOW_WARN,
                     "stack %s resource %s: a stored value is sealed with a key this worker's key "
                     "file (CONVERGE_SECRET_KEY_FILE) does not hold; retrying",
                     o->msg.stack, o->msg.resource);
        cv_record_clear(&o->rec);
        return cv__observejob_end(o, CV_FLOW_RETRY);
    }
    o->graph_entry = strdup(cv_resp_str(rep, CV_OBSERVE_LOAD_R_GRAPH_ENTRY));
    cv_observe_decide(&o->msg, &o->rec, NULL, in->now, &o->out);
    switch (o->out.kind) {
    case CV_OBSERVE_STALE_END:
        cv__flow_count(&o->buf, CV_FLOW_STALE);
        return cv__observejob_end(o, CV_FLOW_DONE);
    case CV_OBSERVE_REDELIVERED_DELETED:
        return node_done(o); /* done again, which republishes */
    case CV_OBSERVE_RECHECK:
        cv_observe_outcome_clear(&o->out);
        return recheck(o);
    case CV_OBSERVE_FAILED: /* abandoned by mark-unhealthy: nothing to look at */
        return node_failed(o);
    default: /* LOOK, LOOK_CLEANUP, LOOK_WATCH */
        cv_observe_outcome_clear(&o->out);
        return cv__observejob_read_then_look(o, in->now);
    }
}

/* ------------------------------------------------------------------------
 * The machine
 * ------------------------------------------------------------------------ */

void cv_observejob_init(cv_observejob_t *o, const cv_msg_t *m, const char *worker)
{
    memset(o, 0, sizeof(*o));
    o->msg = *m;
    cv_str_copy(o->worker, sizeof(o->worker), worker);
    cv__flow_begin(&o->buf);
}

const cv_flow_t *cv_observejob_start(cv_observejob_t *o)
{
    cv_observejob_reset(o);
    cv_call_t *call = cv__flow_call(&o->buf, true);
    if (!call)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    cv_call_observe_load(call, &o->msg);
    return cv__observejob_end(o, CV_FLOW_IO);
}

const cv_flow_t *cv_observejob_step(cv_observejob_t *o, const cv_flow_in_t *in)
{
    cv__flow_begin(&o->buf); /* what the last answer referred to was sent with it */
    switch (o->state) {
    case CV_OBSERVEJOB_LOAD:
        return loaded(o, in);
    case CV_OBSERVEJOB_WATCHED:
        return cv__observejob_watched(o, in);
    case CV_OBSERVEJOB_CHILDREN:
        return cv__observejob_children(o, in);
    case CV_OBSERVEJOB_SERVICES:
        return cv__observejob_services(o, in);
    case CV_OBSERVEJOB_PUBLISH:
        return published(o, in);
    case CV_OBSERVEJOB_OLDER:
    case CV_OBSERVEJOB_PROGRESS:
        break;
    }
    return progress_step(o, in);
}

void cv_observejob_reset(cv_observejob_t *o)
{
    cv_record_clear(&o->rec);
    memset(&o->rec, 0, sizeof(o->rec));
    free(o->graph_entry);
    o->graph_entry = NULL;
    json_decref(o->reading);
    json_decref(o->children);
    json_decref(o->watched);
    json_decref(o->services);
    o->reading = o->children = o->watched = o->services = NULL;
    cv_observe_outcome_clear(&o->out);
    memset(&o->out, 0, sizeof(o->out));
    cv_progress_clear(&o->progress);
    cv__flow_clear(&o->buf);
    cv__flow_begin(&o->buf);
    o->state = CV_OBSERVEJOB_LOAD;
}

const cv_msg_t *cv_observejob_msg(const cv_observejob_t *o)
{
    return &o->msg;
}

cv_observejob_state_t cv_observejob_state(const cv_observejob_t *o)
{
    return o->state;
}

const cv_observe_outcome_t *cv_observejob_outcome(const cv_observejob_t *o)
{
    return &o->out;
}
