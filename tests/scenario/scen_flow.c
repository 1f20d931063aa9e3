/*
 * The harness's driver of the workers' step machines (cv_flow.h): a job's
 * answers carried out over the seeded bus and the harness's Redis, one
 * unit per step of the schedule — an answer's commands (a round trip), or
 * one of its messages — so that a job may die between any two. What came
 * back goes to the machine's next step, as the workers' driver does
 * (cv_flowrun.c); a job that would wait or retry hands its message back,
 * delivered again later. Besides, the driver watches the replies for what
 * the invariants need: which traversal a script began, when a lease was
 * taken, an action recorded for a superseded traversal, a count that
 * overran, an answer no script gives.
 */
#include "scen_job.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what the replies tell the invariants ---- */

/* An action is started only by a job whose traversal was current when it
 * took the lease (check_begin): never one superseded. */
static void check_not_superseded(scen_world_t *w, const scen_job_t *j)
{
    uint64_t next = j->msg.traversal + 1;
    const char *action = j->check ? cv_checkjob_outcome(j->check)->action : "an action";
    if (next < SCEN_MAX_TRAV && w->seen.trav_began[next] && w->seen.trav_began[next] <= j->began_at)
        scen_violation(w, "%s of %s started for traversal %llu after %llu began", action,
                       j->msg.resource, (unsigned long long)j->msg.traversal,
                       (unsigned long long)next);
}

/* The lease's holder before check_begin: a takeover when it answers OK. */
static char *holder_before(const cv_call_t *call)
{
    const char *get[] = {"GET", call->k.check_begin.lease};
    redisReply *held = scen_cmd(2, get);
    char *holder = held->type == REDIS_REPLY_STRING ? strdup(held->str) : NULL;
    freeReplyObject(held);
    return holder;
}

static void begun(scen_world_t *w, scen_job_t *j, const cv_call_t *call, const redisReply *r,
                  const char *holder)
{
    cv_answer_t a = cv_reply_answer(CV_SCRIPT_CHECK_BEGIN, r);
    if (a == CV_ANSWER_OK) {
        j->began_at = w->step;
        if (holder && strcmp(holder, call->a.check_begin.token) != 0) {
            scen_trace(w, "  %s takes over the lease %s of an earlier incarnation (%s)",
                       call->a.check_begin.token, call->k.check_begin.lease, holder);
            w->takeovers++;
        }
    } else if (a == CV_ANSWER_NOTREADY) {
        /* Only a Redis failover's lost write makes a job early; the harness
         * loses none, so an early job is a publishing bug. */
        scen_violation(w, "CHECK %c/%s t%llu before its sync point was complete (%s of %s)",
                       j->msg.phase ? 'c' : 'u', j->msg.resource,
                       (unsigned long long)j->msg.traversal,
                       cv_reply_str(r, CV_CHECK_BEGIN_R_NOTREADY_SATISFIED),
                       cv_reply_str(r, CV_CHECK_BEGIN_R_NOTREADY_PREDS));
    }
}

/* node_done's or check_done's OK: a count never overruns. */
static void done_counted(scen_world_t *w, const scen_job_t *j, const redisReply *r)
{
    long long done = cv_reply_int(r, CV_NODE_DONE_R_DONE);
    long long total = cv_reply_int(r, CV_NODE_DONE_R_TOTAL);
    if (done > total)
        scen_violation(w, "traversal %llu: done %lld > total %lld",
                       (unsigned long long)j->msg.traversal, done, total);
}

/* The kind of the traversal the stack is on now (the one a script began). */
static int stack_kind(scen_world_t *w)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACK, w->stack, 0, NULL);
    const char *argv[] = {"HGET", key, "action"};
    redisReply *r = scen_cmd(3, argv);
    int kind = r->type == REDIS_REPLY_STRING ? cv_trav_kind_parse(r->str) : -1;
    freeReplyObject(r);
    return kind;
}

static void finished(scen_world_t *w, const cv_call_t *call, const redisReply *r)
{
    const char *traversal = call->a.stack_finish.traversal;
    switch (cv_reply_answer(CV_SCRIPT_STACK_FINISH, r)) {
    case CV_ANSWER_AGAIN: {
        uint64_t rerun = (uint64_t)cv_reply_int(r, CV_STACK_FINISH_R_RERUN_TRAVERSAL);
        scen_note_traversal(w, rerun, stack_kind(w));
        scen_trace(w, "stack_finish AGAIN: traversal %s runs again as traversal %llu", traversal,
                   (unsigned long long)rerun);
        break;
    }
    case CV_ANSWER_BUSY:
        scen_trace(w, "stack_finish BUSY: an older action on %s is still to be recorded",
                   cv_reply_str(r, CV_STACK_FINISH_R_BUSY_RESOURCE));
        break;
    case CV_ANSWER_OK:
        scen_trace(w, "stack complete (traversal %s)", traversal);
        break;
    default:
        break;
    }
}

/* The graph that stands for traversal t (the invariants ask which cleanup
 * nodes it had). */
static void expanded(scen_world_t *w, const cv_call_t *call)
{
    uint64_t t = strtoull(call->a.stack_expanded.traversal, NULL, 10);
    if (t >= SCEN_MAX_TRAV)
        return;
    const char *hkeys[] = {"HKEYS", call->k.stack_expanded.graph};
    redisReply *r = scen_cmd(2, hkeys);
    json_t *nodes = json_array();
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
        json_array_append_new(nodes, json_string(r->element[i]->str));
    freeReplyObject(r);
    json_decref(w->seen.trav_nodes[t]);
    w->seen.trav_nodes[t] = nodes;
    scen_trace(w, "expanded traversal %llu: %zu nodes", (unsigned long long)t,
               json_array_size(nodes));
}

/* What one script's reply says to the invariants. */
static void replied(scen_world_t *w, scen_job_t *j, const cv_call_t *call, const redisReply *r,
                    const char *holder)
{
    cv_answer_t a = cv_reply_answer(call->script, r);
    if (a == CV_ANSWER_INVALID && call->script != CV_SCRIPT_STACK_BEGIN)
        scen_violation(w, "%s of %c/%s: %s", cv_script_name(call->script), j->msg.phase ? 'c' : 'u',
                       j->msg.resource,
                       r->type == REDIS_REPLY_ERROR ? r->str : "not one of its answers");
    switch (call->script) {
    case CV_SCRIPT_CHECK_BEGIN:
        begun(w, j, call, r, holder);
        break;
    case CV_SCRIPT_CHECK_FINISH:
        if (a == CV_ANSWER_OK)
            check_not_superseded(w, j);
        break;
    case CV_SCRIPT_CHECK_DONE:
        if (a != CV_ANSWER_FENCED && a != CV_ANSWER_INVALID)
            check_not_superseded(w, j);
        /* fall through */
    case CV_SCRIPT_NODE_DONE:
        if (a == CV_ANSWER_NONODE)
            scen_violation(w, "%s of %c/%s: NONODE", cv_script_name(call->script),
                           j->msg.phase ? 'c' : 'u', j->msg.resource);
        if (a == CV_ANSWER_OK)
            done_counted(w, j, r);
        break;
    case CV_SCRIPT_NODE_FAILED:
        if (a == CV_ANSWER_ROLLBACK) {
            uint64_t t = (uint64_t)cv_reply_int(r, CV_NODE_FAILED_R_TRAVERSAL);
            scen_note_traversal(w, t, CV_TRAV_ROLLBACK);
            scen_trace(w, "begin ROLLBACK traversal %llu (by node_failed)", (unsigned long long)t);
        }
        break;
    case CV_SCRIPT_STACK_FINISH:
        finished(w, call, r);
        break;
    case CV_SCRIPT_STACK_EXPANDED:
        if (a == CV_ANSWER_OK)
            expanded(w, call);
        break;
    default:
        break;
    }
}

/* ---- carrying an answer out ---- */

/* Self-test: the first successor's sync point never hears of its
 * predecessor. */
static void sabotage(scen_world_t *w, cv_call_t *call)
{
    bool done = call->script == CV_SCRIPT_NODE_DONE || call->script == CV_SCRIPT_CHECK_DONE;
    if (w->sabotage == SCEN_SABOTAGE_SYNC_POINT && done && call->nextra > 0 && !w->sabotaged) {
        w->sabotaged = true;
        call->nextra = 0;
    }
}

static void keep_reply(scen_job_t *j, redisReply *r)
{
    j->raw = realloc(j->raw, (j->nraw + 1) * sizeof(*j->raw));
    if (!j->raw)
        abort();
    j->raw[j->nraw++] = r;
}

static void send_cmd(scen_world_t *w, scen_job_t *j, const cv_flow_cmd_t *c)
{
    redisReply *r;
    if (c->call) {
        sabotage(w, c->call);
        char *holder = c->call->script == CV_SCRIPT_CHECK_BEGIN ? holder_before(c->call) : NULL;
        r = scen_call(c->call);
        replied(w, j, c->call, r, holder);
        free(holder);
    } else {
        r = scen_cmd(c->argc, (const char **)c->argv);
    }
    if (c->reply)
        keep_reply(j, r);
    else
        freeReplyObject(r);
}

static void send_cmds(scen_world_t *w, scen_job_t *j, const cv_flow_t *a)
{
    for (size_t i = 0; i < a->ncmds; i++)
        send_cmd(w, j, &a->cmds[i]);
}

/* A sweep of the stack's retired traversals, as cv_purge_sweep does it
 * after the job: traversal_sweep.lua until DONE. */
static void sweep(scen_world_t *w, const char *stack)
{
    char gc[CV_KEY_MAX], prefix[CV_KEY_MAX], traversal[24] = "", cursor[64] = "0";
    cv_key(gc, sizeof(gc), CV_KEY_GC, stack, 0, NULL);
    cv_key(prefix, sizeof(prefix), CV_KEY_STACK, stack, 0, NULL);
    prefix[strlen(prefix) - strlen("stack")] = '\0';
    for (;;) {
        cv_traversal_sweep_keys_t keys = {.gc = gc};
        cv_traversal_sweep_args_t args = {
            .stack_prefix = prefix, .traversal = traversal, .cursor = cursor, .count = "500"};
        redisReply *r = scen_call_row(CV_SCRIPT_TRAVERSAL_SWEEP, keys.v, args.v);
        cv_answer_t a = cv_reply_answer(CV_SCRIPT_TRAVERSAL_SWEEP, r);
        if (a == CV_ANSWER_AGAIN) {
            snprintf(traversal, sizeof(traversal), "%s",
                     cv_reply_str(r, CV_TRAVERSAL_SWEEP_R_TRAVERSAL));
            snprintf(cursor, sizeof(cursor), "%s", cv_reply_str(r, CV_TRAVERSAL_SWEEP_R_CURSOR));
        } else if (a != CV_ANSWER_DONE) {
            scen_violation(w, "traversal_sweep: %s",
                           r->type == REDIS_REPLY_ERROR ? r->str : "not one of its answers");
        }
        freeReplyObject(r);
        if (a != CV_ANSWER_AGAIN)
            return;
    }
}

static void notes(scen_world_t *w, const cv_flow_t *a)
{
    for (size_t i = 0; i < a->nlogs; i++)
        scen_trace(w, "  %s", a->logs[i].text);
    if (a->sweep)
        sweep(w, a->sweep);
}

static void drop_replies(scen_job_t *j)
{
    for (size_t i = 0; i < j->nraw; i++)
        freeReplyObject(j->raw[i]);
    free(j->raw);
    j->raw = NULL;
    j->nraw = 0;
}

static scen_step_t carry(scen_world_t *w, scen_job_t *j);

/* The decision a CHECK job took in this step, and each answer, for --trace. */
static void trace_answer(scen_world_t *w, const scen_job_t *j)
{
    const cv_msg_t *m = &j->msg;
    char node = m->type == CV_MSG_STACK ? 's' : m->phase ? 'c' : 'u';
    if (j->check && j->began_at == w->step) {
        const cv_check_outcome_t *o = cv_checkjob_outcome(j->check);
        scen_trace(w, "  %c/%s t%llu decided %s %s", node, m->resource,
                   (unsigned long long)m->traversal, cv_check_kind_name(o->kind), o->status);
    }
    scen_trace(w, "  %c/%s t%llu answers %s (%zu commands, %zu messages)", node, m->resource,
               (unsigned long long)m->traversal, cv_flow_kind_name(j->answer->kind),
               j->answer->ncmds, j->answer->nmsgs);
}

/* What came back goes to the machine; an answer that ends the job ends it
 * in this step. */
static scen_step_t feed(scen_world_t *w, scen_job_t *j, int rc, const char *why)
{
    cv_resp_t **views = calloc(j->nraw + 1, sizeof(*views));
    for (size_t i = 0; i < j->nraw; i++)
        views[i] = cv_flowrun_resp(j->raw[i], false);
    cv_flow_in_t in = {.now = SCEN_NOW,
                       .replies = (const cv_resp_t *const *)views,
                       .nreplies = j->nraw,
                       .rc = rc,
                       .why = why};
    j->answer = j->machine->step(j->state, &in);
    trace_answer(w, j);
    for (size_t i = 0; i < j->nraw; i++)
        free(views[i]);
    free(views);
    drop_replies(j);
    j->noted = j->sent = false;
    j->published = 0;
    if (j->answer->kind == CV_FLOW_IO || j->answer->kind == CV_FLOW_RECONCILE)
        return SCEN_STEP_MORE;
    return carry(w, j);
}

/* One unit of an IO answer: its commands, or one of its messages. */
static scen_step_t carry_io(scen_world_t *w, scen_job_t *j, const cv_flow_t *a)
{
    if (!j->sent && a->ncmds > 0) {
        send_cmds(w, j, a);
        j->sent = true;
        if (a->nmsgs > 0)
            return SCEN_STEP_MORE;
    } else if (j->published < a->nmsgs) {
        const cv_msg_t *m = &a->msgs[j->published++];
        scen_bus_publish(w, m, m->type == CV_MSG_OBSERVE);
        if (j->published < a->nmsgs)
            return SCEN_STEP_MORE;
    }
    return feed(w, j, 0, NULL);
}

static scen_step_t carry(scen_world_t *w, scen_job_t *j)
{
    const cv_flow_t *a = j->answer;
    if (!j->noted) {
        notes(w, a);
        j->noted = true;
    }
    switch (a->kind) {
    case CV_FLOW_IO:
        return carry_io(w, j, a);
    case CV_FLOW_RECONCILE:
        scen_violation(w, "%s: a service to reconcile, and no live engine", j->msg.resource);
        send_cmds(w, j, a);
        return feed(w, j, CV_EINVAL, "no live engine in the harness");
    case CV_FLOW_LATER:
    case CV_FLOW_RETRY:
        send_cmds(w, j, a);
        return SCEN_STEP_RETRY; /* looked at again later: delivered again */
    case CV_FLOW_UNKNOWN_STACK:
    case CV_FLOW_UNKNOWN_NODE:
        scen_violation(w, "%s %c/%s t%llu dead-lettered: %s", cv_msg_type_name(j->msg.type),
                       j->msg.phase ? 'c' : 'u', j->msg.resource,
                       (unsigned long long)j->msg.traversal, cv_flow_kind_name(a->kind));
        return SCEN_STEP_DONE;
    default:
        send_cmds(w, j, a);
        return SCEN_STEP_DONE;
    }
}

scen_step_t scen_flow_step(scen_world_t *w, scen_job_t *j)
{
    if (!j->answer) {
        j->answer = j->machine->start(j->state);
        j->noted = j->sent = false;
        j->published = 0;
    }
    return carry(w, j);
}

void scen_flow_free(scen_job_t *j)
{
    drop_replies(j);
    if (j->machine)
        j->machine->free(j->state);
    j->state = NULL;
}
