/*
 * Jobs: a delivered message becomes the worker's own step machine —
 * cv_checkjob, cv_observejob or cv_stackjob, made as the engine and the
 * observer make them (engine_check.c, observer_observe.c, engine_stack.c)
 * — which scen_flow.c drives; and what the harness does as the CLI
 * (stack_begin of the operator's create, update and delete) and as the
 * reaper's fast path (stack_unname). The harness holds no copy of the
 * jobs' steps.
 */
#include "scen_job.h"

#include "cv_base.h"
#include "cv_convergence.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lease a check job asks for: long, since the harness expires the
 * leases of killed jobs itself. */
#define LEASE_MS 600000

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

/* The workers' limits, at their defaults. */
static const cv_limits_t *limits(void)
{
    static cv_limits_t l;
    static bool set;
    if (!set) {
        cv_limits_init(&l);
        set = true;
    }
    return &l;
}

/* ---- the machines ---- */

/* The functions of the step machine cv_<name>_t, for scen_flow.c. */
#define MACHINE(name)                                                                              \
    static const cv_flow_t *name##_start(void *state)                                              \
    {                                                                                              \
        return cv_##name##_start(state);                                                           \
    }                                                                                              \
    static const cv_flow_t *name##_step(void *state, const cv_flow_in_t *in)                       \
    {                                                                                              \
        return cv_##name##_step(state, in);                                                        \
    }                                                                                              \
    static void name##_free(void *state)                                                           \
    {                                                                                              \
        cv_##name##_reset(state);                                                                  \
        free(state);                                                                               \
    }                                                                                              \
    static const scen_machine_t name##_machine = {name##_start, name##_step, name##_free};

MACHINE(checkjob)
MACHINE(observejob)
MACHINE(stackjob)
MACHINE(finishjob)

static void *state_of(size_t size)
{
    void *state = calloc(1, size);
    if (!state)
        abort();
    return state;
}

/* The engine's CHECK job, as engine_check.c makes it. */
static void check_job(scen_job_t *j)
{
    j->check = state_of(sizeof(*j->check));
    cv_checkjob_conf_t conf = {
        .worker = j->worker, .token = j->token, .lease_ms = LEASE_MS, .limits = limits()};
    cv_checkjob_init(j->check, &j->msg, &conf);
    j->machine = &checkjob_machine;
    j->state = j->check;
}

/* The observer's OBSERVE job, as observer_observe.c makes it. */
static void observe_job(scen_job_t *j)
{
    cv_observejob_t *o = state_of(sizeof(*o));
    cv_observejob_init(o, &j->msg, j->worker);
    j->machine = &observejob_machine;
    j->state = o;
}

/* The engine's STACK job, as engine_stack.c makes it: the job's token
 * names its expansion's drafts. */
static void stack_job(scen_job_t *j)
{
    cv_stackjob_t *x = state_of(sizeof(*x));
    cv_stackjob_conf_t conf = {.worker = j->worker, .expansion = j->token, .limits = limits()};
    cv_stackjob_init(x, &j->msg, &conf);
    j->machine = &stackjob_machine;
    j->state = x;
}

/* ---- jobs ---- */

static scen_job_t *job_new(scen_world_t *w, uint64_t msg_id, const cv_msg_t *m)
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
    return j;
}

scen_job_t *scen_job_start(scen_world_t *w, uint64_t msg_id, const cv_msg_t *m)
{
    scen_job_t *j = job_new(w, msg_id, m);
    if (m->type == CV_MSG_STACK) {
        stack_job(j);
        return j;
    }
    cv_key(j->lease_key, sizeof(j->lease_key), CV_KEY_LEASE, m->stack, 0, m->resource);
    if (m->type == CV_MSG_CHECK)
        check_job(j);
    else
        observe_job(j);
    return j;
}

scen_job_t *scen_job_finish(scen_world_t *w, uint64_t traversal)
{
    cv_msg_t m = {.type = CV_MSG_STACK, .traversal = traversal};
    snprintf(m.stack, sizeof(m.stack), "%s", w->stack);
    scen_job_t *j = job_new(w, 0, &m);
    cv_finishjob_t *f = state_of(sizeof(*f));
    cv_finishjob_init(f, w->stack, traversal, j->worker);
    j->machine = &finishjob_machine;
    j->state = f;
    return j;
}

scen_step_t scen_job_step(scen_world_t *w, scen_job_t *j)
{
    return scen_flow_step(w, j);
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
    return j->check && cv_checkjob_leased(j->check) ? j->lease_key : "";
}

void scen_job_free(scen_job_t *j)
{
    if (!j)
        return;
    scen_flow_free(j);
    free(j);
}

/* ---- what the CLI does ---- */

/* stack_begin (cv_call_stack_begin), then the STACK job: as the CLI does
 * for the operator's create, update and delete. */
uint64_t scen_begin(scen_world_t *w, int kind, const char *tpl, const char *rollback)
{
    cv_stack_begin_t b = {.kind = kind,
                          .stack = w->stack,
                          .name = kind == CV_TRAV_CREATE ? w->name : NULL,
                          .tpl = tpl,
                          .params = tpl ? "{}" : NULL,
                          .fname = tpl ? "scen.yaml" : NULL,
                          .rollback = rollback};
    cv_call_t call;
    cv_call_stack_begin(&call, &b, "convergectl");
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
    scen_trace(w, "begin %s traversal %llu", cv_trav_kind_name((uint8_t)kind),
               (unsigned long long)trav);
    scen_bus_publish(w, &m, false);
    return trav;
}

/* stack_unname.lua: the name is freed if it still maps to the stack
 * (cv_reaper_unname: the fast path after a delete, and the reaper). */
void scen_unname(scen_world_t *w)
{
    char names[CV_KEY_MAX];
    cv_key(names, sizeof(names), CV_KEY_STACKS, NULL, 0, NULL);
    cv_stack_unname_keys_t keys = {.stacks = names};
    cv_stack_unname_args_t args = {.name = w->name, .id = w->stack};
    redisReply *r = scen_call_row(CV_SCRIPT_STACK_UNNAME, keys.v, args.v);
    if (r->type != REDIS_REPLY_INTEGER)
        scen_violation(w, "stack_unname: %s", r->type == REDIS_REPLY_ERROR ? r->str : "not 0/1");
    else if (r->integer == 1)
        scen_trace(w, "the name %s is free again", w->name);
    freeReplyObject(r);
}
