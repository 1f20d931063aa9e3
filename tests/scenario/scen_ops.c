/*
 * Jobs: their lifecycle, and the steps every handler shares — publishing,
 * node_done / node_failed and what follows them, ending a traversal,
 * beginning one — as engine/convergence does them (cv_progress.c,
 * cv_stack_finish.c, cv_stack_begin.c), one script call per step. Also
 * the reaper of a stalled stack (cv_reaper.c with a stall threshold of 0).
 */
#include "scen_job.h"

#include "cv_base.h"
#include "cv_convergence.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scen_violation(scen_world_t *w, const char *fmt, ...)
{
    if (w->seen.violation[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->seen.violation, sizeof(w->seen.violation), fmt, ap);
    va_end(ap);
    scen_trace(w, "VIOLATION: %s", w->seen.violation);
}

redisReply *scen_call(const cv_call_t *call)
{
    scen_count_round_trip();
    redisReply *r = cv_redis_script_on(scen_redis(), call->script, call->keys, call->args,
                                       call->nextra, call->extra_keys, call->extra_args);
    if (!r)
        scen_redis_lost(cv_script_name(call->script));
    return r;
}

redisReply *scen_call_row(cv_script_t s, const char *const *keys, const char *const *args)
{
    cv_call_t call = {.script = s, .keys = keys, .args = args};
    return scen_call(&call);
}

/* ---- ops ---- */

static void ops_grow(scen_job_t *j)
{
    if (j->nops < j->opcap)
        return;
    j->opcap = j->opcap ? 2 * j->opcap : 8;
    j->ops = realloc(j->ops, j->opcap * sizeof(*j->ops));
    if (!j->ops)
        abort();
}

void scen_op_push(scen_job_t *j, const scen_op_t *op)
{
    ops_grow(j);
    j->ops[j->nops++] = *op;
}

void scen_op_push_front(scen_job_t *j, const scen_op_t *op)
{
    ops_grow(j);
    memmove(j->ops + 1, j->ops, j->nops * sizeof(*j->ops));
    j->ops[0] = *op;
    j->nops++;
}

/* cv_worker_publish_node: a CHECK job for "u/<r>" or "c/<r>". */
void scen_op_publish_node(scen_job_t *j, const char *node)
{
    scen_op_t op = {.kind = OP_PUBLISH};
    op.msg.type = CV_MSG_CHECK;
    op.msg.traversal = j->msg.traversal;
    op.msg.phase = node[0] == 'c' ? CV_PHASE_CLEANUP : CV_PHASE_UPDATE;
    snprintf(op.msg.stack, sizeof(op.msg.stack), "%s", j->msg.stack);
    snprintf(op.msg.resource, sizeof(op.msg.resource), "%s", node + 2);
    scen_op_push(j, &op);
}

/* engine_check.c hand_off: the job's OBSERVE, with the record version to
 * observe (watch: an older traversal's action, then check again). */
void scen_op_publish_observe(scen_job_t *j, const char *version, bool watch)
{
    scen_op_t op = {.kind = OP_PUBLISH, .msg = j->msg, .observe = true};
    op.msg.type = CV_MSG_OBSERVE;
    op.msg.version = strtoull(version, NULL, 10);
    op.msg.watch = watch;
    scen_op_push(j, &op);
}

/* observer_observe.c recheck: a watch's node checked again. */
void scen_op_finish(scen_job_t *j)
{
    scen_op_t op = {.kind = OP_FINISH, .msg = j->msg};
    scen_op_push(j, &op);
}

static void key(char *buf, cv_key_kind_t kind, const char *stack, uint64_t trav, const char *name)
{
    cv_key(buf, CV_KEY_MAX, kind, stack, trav, name);
}

/* stack_definition, then stack_finish COMPLETE (outputs "{}": the harness
 * does not check them); AGAIN: the script began a re-run, whose STACK job
 * is published; BUSY leaves the traversal in progress for the reaper. */
static void finish_read(scen_world_t *w, scen_job_t *j, const scen_op_t *op)
{
    char k[3][CV_KEY_MAX];
    key(k[0], CV_KEY_STACK, op->msg.stack, 0, NULL);
    key(k[1], CV_KEY_DEF, op->msg.stack, 0, NULL);
    key(k[2], CV_KEY_INDEX, op->msg.stack, 0, NULL);
    cv_stack_definition_keys_t keys = {.stack = k[0], .def = k[1], .index = k[2]};
    cv_stack_definition_args_t args = {.nil = NULL};
    redisReply *r = scen_call_row(CV_SCRIPT_STACK_DEFINITION, keys.v, args.v);
    const char *trav = cv_reply_str(r, CV_STACK_DEFINITION_R_TRAVERSAL);
    if (trav[0] && strtoull(trav, NULL, 10) == op->msg.traversal) {
        scen_op_t next = {.kind = OP_FINISH_WRITE, .msg = op->msg};
        snprintf(next.action, sizeof(next.action), "%s",
                 cv_reply_str(r, CV_STACK_DEFINITION_R_ACTION));
        scen_op_push_front(j, &next);
    }
    freeReplyObject(r);
    (void)w;
}

static void finish_write(scen_world_t *w, scen_job_t *j, const scen_op_t *op)
{
    char k[5][CV_KEY_MAX], trav[24], reason[64], lease_prefix[CV_KEY_MAX], res_prefix[CV_KEY_MAX];
    key(k[0], CV_KEY_STACK, op->msg.stack, 0, NULL);
    key(k[1], CV_KEY_EVENTS, op->msg.stack, 0, NULL);
    key(k[2], CV_KEY_DEF, op->msg.stack, 0, NULL);
    key(k[3], CV_KEY_INDEX, op->msg.stack, 0, NULL);
    key(k[4], CV_KEY_GRAPH, op->msg.stack, op->msg.traversal, NULL);
    cv_key_prefix(lease_prefix, sizeof(lease_prefix), CV_KEY_LEASE, op->msg.stack, 0);
    cv_key_prefix(res_prefix, sizeof(res_prefix), CV_KEY_RES, op->msg.stack, 0);
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)op->msg.traversal);
    snprintf(reason, sizeof(reason), "Stack %s completed successfully", op->action);
    cv_stack_finish_keys_t keys = {
        .stack = k[0], .events = k[1], .def = k[2], .index = k[3], .graph = k[4]};
    cv_stack_finish_args_t args = {.traversal = trav,
                                   .status = "COMPLETE",
                                   .reason = reason,
                                   .outputs = "{}",
                                   .worker = j->worker,
                                   .lease_prefix = lease_prefix,
                                   .res_prefix = res_prefix};
    redisReply *r = scen_call_row(CV_SCRIPT_STACK_FINISH, keys.v, args.v);
    cv_answer_t a = cv_reply_answer(CV_SCRIPT_STACK_FINISH, r);
    if (a == CV_ANSWER_INVALID)
        scen_violation(w, "stack_finish: unexpected reply (%s)",
                       r->type == REDIS_REPLY_ERROR ? r->str : "not an answer");
    int kind = cv_trav_kind_parse(op->action);
    if (a == CV_ANSWER_AGAIN && kind < 0) {
        scen_violation(w, "stack_finish: AGAIN for an unknown action %s", op->action);
    } else if (a == CV_ANSWER_AGAIN) {
        /* The script began the re-run: its STACK job, then the superseded
         * traversal's keys (an empty action: the name stays mapped). */
        uint64_t rerun = (uint64_t)cv_reply_int(r, CV_STACK_FINISH_R_RERUN_TRAVERSAL);
        scen_note_traversal(w, rerun, kind);
        scen_trace(w, "stack_finish AGAIN: %s traversal %llu runs again as traversal %llu",
                   op->action, (unsigned long long)op->msg.traversal, (unsigned long long)rerun);
        scen_op_t garbage = {.kind = OP_GARBAGE, .msg = op->msg};
        scen_op_push_front(j, &garbage);
        scen_op_t stack_job = {.kind = OP_PUBLISH};
        stack_job.msg.type = CV_MSG_STACK;
        stack_job.msg.kind = (uint8_t)kind;
        stack_job.msg.traversal = rerun;
        snprintf(stack_job.msg.stack, sizeof(stack_job.msg.stack), "%s", op->msg.stack);
        scen_op_push_front(j, &stack_job);
    } else if (a == CV_ANSWER_BUSY) {
        scen_trace(w, "stack_finish BUSY: an older action on %s is still to be recorded",
                   cv_reply_str(r, CV_STACK_FINISH_R_BUSY_RESOURCE));
    } else if (a == CV_ANSWER_OK) {
        scen_trace(w, "stack %s_COMPLETE (traversal %llu)", op->action,
                   (unsigned long long)op->msg.traversal);
        scen_op_t next = *op;
        next.kind = OP_GARBAGE;
        scen_op_push_front(j, &next);
    }
    freeReplyObject(r);
}

/* stack_unname.lua: the name is freed if it still maps to the stack
 * (cv_reaper_unname: the fast path after a delete, and the reaper). */
void scen_unname(scen_world_t *w)
{
    char names[CV_KEY_MAX];
    key(names, CV_KEY_STACKS, NULL, 0, NULL);
    cv_stack_unname_keys_t keys = {.stacks = names};
    cv_stack_unname_args_t args = {.name = w->name, .id = w->stack};
    redisReply *r = scen_call_row(CV_SCRIPT_STACK_UNNAME, keys.v, args.v);
    if (r->type != REDIS_REPLY_INTEGER)
        scen_violation(w, "stack_unname: %s", r->type == REDIS_REPLY_ERROR ? r->str : "not 0/1");
    else if (r->integer == 1)
        scen_trace(w, "the name %s is free again", w->name);
    freeReplyObject(r);
}

/* The name of a deleted stack is free again; the traversal's keys are
 * garbage once it ended or its re-run began (cv_stack_finish.c). */
static void garbage(scen_world_t *w, const scen_op_t *op)
{
    char graph[CV_KEY_MAX];
    key(graph, CV_KEY_GRAPH, op->msg.stack, op->msg.traversal, NULL);
    if (strcmp(op->action, "DELETE") == 0)
        scen_unname(w);
    const char *hkeys[] = {"HKEYS", graph};
    redisReply *nodes = scen_cmd(2, hkeys);
    size_t n = nodes->type == REDIS_REPLY_ARRAY ? nodes->elements : 0;
    char(*k)[CV_KEY_MAX] = malloc((n + 4) * CV_KEY_MAX);
    const char **argv = malloc((n + 5) * sizeof(*argv));
    argv[0] = "UNLINK";
    for (size_t i = 0; i < n; i++) {
        key(k[i], CV_KEY_SP, op->msg.stack, op->msg.traversal, nodes->element[i]->str);
        argv[1 + i] = k[i];
    }
    static const cv_key_kind_t what[] = {CV_KEY_GRAPH, CV_KEY_RDEF, CV_KEY_DONE, CV_KEY_PUBLISHING};
    for (size_t i = 0; i < 4; i++) {
        key(k[n + i], what[i], op->msg.stack, op->msg.traversal, NULL);
        argv[1 + n + i] = k[n + i];
    }
    freeReplyObject(scen_cmd((int)(n + 5), argv));
    freeReplyObject(nodes);
    free(k);
    free(argv);
}

scen_step_t scen_op_run(scen_world_t *w, scen_job_t *j, const scen_op_t *op)
{
    switch (op->kind) {
    case OP_PUBLISH:
        scen_bus_publish(w, &op->msg, op->observe);
        break;
    case OP_FINISH:
        finish_read(w, j, op);
        break;
    case OP_FINISH_WRITE:
        finish_write(w, j, op);
        break;
    case OP_GARBAGE:
        garbage(w, op);
        break;
    }
    return SCEN_STEP_MORE;
}

/* ---- jobs ---- */

/* The lease a check job asks for: long, since the harness expires the
 * leases of killed jobs itself. */
#define LEASE_MS 600000

static const cv_flow_t *check_start(void *state)
{
    return cv_checkjob_start(state);
}

static const cv_flow_t *check_step(void *state, const cv_flow_in_t *in)
{
    return cv_checkjob_step(state, in);
}

static void check_free(void *state)
{
    cv_checkjob_reset(state);
    free(state);
}

static const scen_machine_t check_machine = {check_start, check_step, check_free};

static const cv_flow_t *observe_start(void *state)
{
    return cv_observejob_start(state);
}

static const cv_flow_t *observe_step(void *state, const cv_flow_in_t *in)
{
    return cv_observejob_step(state, in);
}

static void observe_free(void *state)
{
    cv_observejob_reset(state);
    free(state);
}

static const scen_machine_t observe_machine = {observe_start, observe_step, observe_free};

/* The observer's OBSERVE job, as observer_observe.c makes it. */
static void observe_job(scen_job_t *j)
{
    cv_observejob_t *o = calloc(1, sizeof(*o));
    if (!o)
        abort();
    cv_observejob_init(o, &j->msg, j->worker);
    j->machine = &observe_machine;
    j->state = o;
}

/* The engine's CHECK job, as engine_check.c makes it. */
static void check_job(scen_job_t *j)
{
    static cv_limits_t limits;
    static bool limits_set;
    if (!limits_set) {
        cv_limits_init(&limits);
        limits_set = true;
    }
    j->check = calloc(1, sizeof(*j->check));
    if (!j->check)
        abort();
    cv_checkjob_conf_t conf = {
        .worker = j->worker, .token = j->token, .lease_ms = LEASE_MS, .limits = &limits};
    cv_checkjob_init(j->check, &j->msg, &conf);
    j->machine = &check_machine;
    j->state = j->check;
}

scen_job_t *scen_job_start(scen_world_t *w, uint64_t msg_id, const cv_msg_t *m)
{
    scen_job_t *j = calloc(1, sizeof(*j));
    if (!j)
        abort();
    j->msg_id = msg_id;
    j->msg = *m;
    j->worker_no = (unsigned)(w->jobs_started % SCEN_WORKERS);
    snprintf(j->worker, sizeof(j->worker), "w%u", j->worker_no);
    /* As engine_check.c makes it: "<worker id>@<incarnation>:<n>". */
    snprintf(j->token, sizeof(j->token), "%s@%u:%llu", j->worker, w->incarnation[j->worker_no],
             (unsigned long long)++w->jobs_started);
    if (m->type != CV_MSG_STACK)
        key(j->lease_key, CV_KEY_LEASE, m->stack, 0, m->resource);
    if (m->type == CV_MSG_CHECK && msg_id != 0) /* 0: the reaper's own ops */
        check_job(j);
    else if (m->type == CV_MSG_OBSERVE)
        observe_job(j);
    return j;
}

scen_step_t scen_job_step(scen_world_t *w, scen_job_t *j)
{
    scen_step_t r = SCEN_STEP_MORE;
    if (j->nops > 0) {
        scen_op_t op = j->ops[0];
        memmove(j->ops, j->ops + 1, (j->nops - 1) * sizeof(*j->ops));
        j->nops--;
        r = scen_op_run(w, j, &op);
    } else if (j->pc != PC_END) {
        switch (j->msg.type) {
        case CV_MSG_STACK:
            r = scen_stack_step(w, j);
            break;
        case CV_MSG_CHECK:
            r = scen_flow_step(w, j);
            break;
        default:
            r = scen_flow_step(w, j);
            break;
        }
    }
    if (r == SCEN_STEP_MORE && j->pc == PC_END && j->nops == 0)
        r = SCEN_STEP_DONE;
    return r;
}

uint64_t scen_job_msg(const scen_job_t *j)
{
    return j->msg_id;
}

unsigned scen_job_worker(const scen_job_t *j)
{
    return j->worker_no;
}

const char *scen_job_lease(const scen_job_t *j, const char **token)
{
    *token = j->token;
    if (j->check)
        return cv_checkjob_leased(j->check) ? j->lease_key : "";
    return j->leased ? j->lease_key : "";
}

void scen_job_free(scen_job_t *j)
{
    if (!j)
        return;
    free(j->ops);
    scen_flow_free(j);
    json_decref(j->index);
    cv_template_free(j->tpl);
    cv_graph_free(j->graph);
    free(j);
}

/* ---- traversals begun ---- */

/* stack_begin (cv_call_stack_begin), then the STACK job: as the CLI does
 * for the operator's create, update and delete (j NULL: published at once),
 * or queued on a worker's job j. */
uint64_t scen_begin(scen_world_t *w, int kind, const char *tpl, const char *rollback, scen_job_t *j)
{
    cv_stack_begin_t b = {.kind = kind,
                          .stack = w->stack,
                          .name = kind == CV_TRAV_CREATE ? w->name : NULL,
                          .tpl = tpl,
                          .params = tpl ? "{}" : NULL,
                          .fname = tpl ? "scen.yaml" : NULL,
                          .rollback = rollback};
    cv_call_t call;
    cv_call_stack_begin(&call, &b, j ? j->worker : "convergectl");
    redisReply *r = scen_call(&call);
    if (r->type != REDIS_REPLY_ARRAY) {
        scen_violation(w, "stack_begin %s: %s", cv_trav_kind_name((uint8_t)kind),
                       r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        freeReplyObject(r);
        return 0;
    }
    uint64_t trav = (uint64_t)cv_reply_int(r, CV_STACK_BEGIN_R_TRAVERSAL);
    freeReplyObject(r);
    scen_note_traversal(w, trav, kind);
    cv_msg_t m = {.type = CV_MSG_STACK, .traversal = trav, .kind = (uint8_t)kind};
    snprintf(m.stack, sizeof(m.stack), "%s", w->stack);
    scen_trace(w, "begin %s traversal %llu%s", cv_trav_kind_name((uint8_t)kind),
               (unsigned long long)trav, j ? " (by a worker)" : "");
    if (j) {
        scen_op_t op = {.kind = OP_PUBLISH, .msg = m};
        scen_op_push_front(j, &op);
    } else {
        scen_bus_publish(w, &m, false);
    }
    return trav;
}
