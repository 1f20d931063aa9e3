/*
 * CHECK jobs, as engine/converge-engine/engine_check.c runs them: check_begin.lua (lease and
 * load), the real decision (cv_check_decide), the type's operation the
 * outcome names (engine_converge.c), then one of: the fenced write
 * (check_finish.lua) and the OBSERVE job; when the action settled at once
 * (cv_check_settled), the write and the node done in one step
 * (check_done.lua) and the successors; node_done.lua and the successors;
 * node_failed.lua and maybe a rollback; the lease released. Each script
 * call is a step of its own.
 */
#include "scen_job.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PC_RECORD = 1, PC_DONE = 2, PC_FAILED = 3, PC_REPUBLISH = 4 };

/* The lease a check job asks for: long, since the harness expires the
 * leases of killed jobs itself. */
#define LEASE_MS 600000

/* What check_begin loaded, read by the engine's own step (cv_check_load)
 * into the job's fields, which the OBSERVE steps share. Returns 0 or
 * CV_EPROTO (the reply does not have the OK shape). */
static int load(scen_job_t *j, const redisReply *r)
{
    cv_check_loaded_t l;
    int rc = cv_check_load(&l, &j->msg, r);
    j->rdef = l.rdef;
    j->params = l.params;
    j->sp = l.sp;
    j->files = l.files;
    j->graph_entry = l.graph_entry;
    memcpy(j->stack_action, l.stack_action, sizeof(j->stack_action));
    j->rec = l.rec;
    j->have_rec = rc == 0;
    return rc;
}

/* The job's fields seen as what check_begin loaded (borrowed: never cleared). */
static cv_check_loaded_t loaded(const scen_job_t *j)
{
    cv_check_loaded_t l = (cv_check_loaded_t){.rdef = j->rdef,
                                              .params = j->params,
                                              .sp = j->sp,
                                              .files = j->files,
                                              .graph_entry = j->graph_entry,
                                              .rec = j->rec};
    memcpy(l.stack_action, j->stack_action, sizeof(l.stack_action));
    return l;
}

/* The type operations the outcome names, run by the engine's own step. */
static int act(scen_job_t *j)
{
    j->have_st = true;
    return cv_check_act(&j->msg, &j->rec, &j->out, SCEN_NOW, &j->st, NULL, NULL);
}

/* A type operation that failed fails the node. */
static void fail_action(scen_job_t *j)
{
    cv_check_act_failed(&j->out, &j->msg, j->have_st ? j->st.reason : "");
    j->pc = PC_FAILED;
}

static void decided(scen_world_t *w, scen_job_t *j)
{
    scen_trace(w, "  %c/%s t%llu decided %s %s", j->msg.phase ? 'c' : 'u', j->msg.resource,
               (unsigned long long)j->msg.traversal, cv_check_kind_name(j->out.kind),
               j->out.status);
    switch (j->out.kind) {
    case CV_CHECK_CREATE:
    case CV_CHECK_REPLACE:
    case CV_CHECK_UPDATE:
    case CV_CHECK_RESTORE:
    case CV_CHECK_STEP:
    case CV_CHECK_DELETE_CURRENT:
    case CV_CHECK_DELETE_REPLACED:
        if (act(j) != 0)
            fail_action(j);
        else
            j->pc = PC_RECORD;
        break;
    case CV_CHECK_WAIT:
    case CV_CHECK_OBSERVE_AGAIN:
    case CV_CHECK_OBSERVE_DELETES:
        scen_op_publish_observe(j, j->out.version, j->out.kind == CV_CHECK_WAIT);
        scen_op_release(j);
        j->pc = PC_END;
        break;
    case CV_CHECK_DONE:
    case CV_CHECK_RETAIN_CURRENT:
    case CV_CHECK_NOTHING:
        j->pc = PC_DONE;
        break;
    case CV_CHECK_END:
        scen_op_release(j);
        j->pc = PC_END;
        break;
    case CV_CHECK_FAIL:
        j->pc = PC_FAILED;
        break;
    }
}

static scen_step_t begin(scen_world_t *w, scen_job_t *j)
{
    cv_call_t call;
    const char *get[] = {"GET", j->lease_key};
    redisReply *held = scen_cmd(2, get);
    cv_call_check_begin(&call, &j->msg, j->token, LEASE_MS);
    redisReply *r = scen_call(&call);
    if (held->type == REDIS_REPLY_STRING && strcmp(held->str, j->token) != 0 &&
        cv_reply_answer(CV_SCRIPT_CHECK_BEGIN, r) == CV_ANSWER_OK) {
        scen_trace(w, "  %s takes over the lease %s of an earlier incarnation (%s)", j->token,
                   j->lease_key, held->str);
        w->takeovers++;
    }
    freeReplyObject(held);
    cv_answer_t a = cv_reply_answer(CV_SCRIPT_CHECK_BEGIN, r);
    scen_step_t step = SCEN_STEP_MORE;
    switch (a) {
    case CV_ANSWER_BUSY:
        step = SCEN_STEP_RETRY; /* looked at again later */
        break;
    case CV_ANSWER_UNKNOWN:
    case CV_ANSWER_NONODE:
        scen_violation(w, "CHECK %c/%s t%llu dead-lettered: %s", j->msg.phase ? 'c' : 'u',
                       j->msg.resource, (unsigned long long)j->msg.traversal, cv_answer_name(a));
        j->pc = PC_END;
        break;
    case CV_ANSWER_DONE:
        if (r->elements > CV_CHECK_BEGIN_R_DONE_GRAPH_ENTRY) {
            /* Done by an engine that may have died before publishing. */
            j->graph_entry = strdup(cv_reply_str(r, CV_CHECK_BEGIN_R_DONE_GRAPH_ENTRY));
            j->pc = PC_REPUBLISH;
            scen_trace(w, "  %c/%s t%llu done by an engine that may have died: republish",
                       j->msg.phase ? 'c' : 'u', j->msg.resource,
                       (unsigned long long)j->msg.traversal);
        } else {
            j->pc = PC_END;
        }
        break;
    case CV_ANSWER_OK:
        j->leased = true;
        j->began_at = w->step;
        {
            const char *load_error = load(j, r) ? "malformed check_begin reply" : NULL;
            cv_check_loaded_t l = loaded(j);
            cv_check_input_t in = cv_check_input(&l, &j->msg, SCEN_NOW, load_error);
            cv_check_decide(&in, &j->out);
            j->have_out = true;
        }
        decided(w, j);
        break;
    case CV_ANSWER_INVALID:
        scen_violation(w, "check_begin: %s",
                       r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        j->pc = PC_END;
        break;
    case CV_ANSWER_NOTREADY:
        /* Only a Redis failover's lost write makes a job early; the harness
         * loses none, so an early job is a publishing bug. */
        scen_violation(w, "CHECK %c/%s t%llu before its sync point was complete (%s of %s)",
                       j->msg.phase ? 'c' : 'u', j->msg.resource,
                       (unsigned long long)j->msg.traversal,
                       cv_reply_str(r, CV_CHECK_BEGIN_R_NOTREADY_SATISFIED),
                       cv_reply_str(r, CV_CHECK_BEGIN_R_NOTREADY_PREDS));
        j->pc = PC_END;
        break;
    default: /* STALE, SETTLED */
        j->pc = PC_END;
        break;
    }
    freeReplyObject(r);
    return step;
}

/* An action is started only by a job whose traversal was current when it
 * took the lease (check_begin): never one superseded. */
static void check_not_superseded(scen_world_t *w, const scen_job_t *j)
{
    uint64_t next = j->msg.traversal + 1;
    if (next < SCEN_MAX_TRAV && w->seen.trav_began[next] && w->seen.trav_began[next] <= j->began_at)
        scen_violation(w, "%s of %s started for traversal %llu after %llu began", j->out.action,
                       j->msg.resource, (unsigned long long)j->msg.traversal,
                       (unsigned long long)next);
}

/* As the engine: the observers' look taken at once, written with the action. */
static bool settle_at_once(scen_world_t *w, scen_job_t *j, const cv_check_loaded_t *l,
                           const cv_check_finish_t *f)
{
    cv_observe_outcome_t seen;
    if (!j->have_st || !cv_check_settled(&j->msg, l, &j->out, &j->st, SCEN_NOW, &seen))
        return false;
    cv_node_done_t d = cv_observe_done_of(&j->msg, &seen, j->graph_entry, j->st.physical_id);
    d.publishing = true;
    scen_trace(w, "  %s settled at once", j->msg.resource);
    cv_answer_t a = scen_check_done(w, j, f, &d);
    if (a != CV_ANSWER_FENCED && a != CV_ANSWER_INVALID)
        check_not_superseded(w, j);
    cv_observe_outcome_clear(&seen);
    return true;
}

static scen_step_t record(scen_world_t *w, scen_job_t *j)
{
    cv_check_loaded_t l = loaded(j);
    cv_check_finish_t f;
    cv_check_written_t written;
    cv_check_finish_of(&f, &written, &j->msg, &l, &j->out, j->have_st ? &j->st : NULL, j->token);
    j->leased = false; /* check_finish or check_done released it */
    if (settle_at_once(w, j, &l, &f)) {
        cv_check_written_clear(&written);
        j->pc = PC_END;
        return SCEN_STEP_MORE;
    }
    cv_call_t call;
    cv_call_check_finish(&call, &f, j->worker);
    redisReply *r = scen_call(&call);
    cv_answer_t a = cv_reply_answer(CV_SCRIPT_CHECK_FINISH, r);
    if (a == CV_ANSWER_OK) {
        check_not_superseded(w, j);
        scen_op_publish_observe(j, cv_reply_str(r, CV_CHECK_FINISH_R_VERSION), false);
    } else if (a != CV_ANSWER_FENCED) {
        scen_violation(w, "check_finish of %s: %s", j->msg.resource,
                       r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    }
    freeReplyObject(r);
    cv_call_free(&call);
    cv_check_written_clear(&written);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

static scen_step_t done(scen_world_t *w, scen_job_t *j)
{
    cv_check_loaded_t l = loaded(j);
    cv_node_done_t d;
    cv_check_written_t written;
    cv_check_done_of(&d, &written, &j->msg, &l, &j->out, j->token);
    scen_node_done(w, j, &d);
    cv_check_written_clear(&written);
    /* As the engine, release after node_done: a no-op when node_done
     * released it, but node_done answers FENCED before it releases. */
    scen_op_release(j);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

static scen_step_t republish(scen_world_t *w, scen_job_t *j)
{
    cv_node_done_t d = {.job = &j->msg, .graph_entry = j->graph_entry, .publishing = true};
    scen_node_done(w, j, &d);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

static scen_step_t failed(scen_world_t *w, scen_job_t *j)
{
    cv_node_failed_t f = {.job = &j->msg,
                          .version = j->rec.version,
                          .status = j->out.status,
                          .reason = j->out.reason,
                          .physical_id = j->rec.physical_id,
                          .action = j->out.action};
    scen_trace(w, "  node failed: %s", j->out.reason);
    scen_node_failed(w, j, &f);
    scen_op_release(j);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

scen_step_t scen_check_step(scen_world_t *w, scen_job_t *j)
{
    switch (j->pc) {
    case PC_START:
        return begin(w, j);
    case PC_RECORD:
        return record(w, j);
    case PC_DONE:
        return done(w, j);
    case PC_REPUBLISH:
        return republish(w, j);
    default:
        return failed(w, j);
    }
}
