/*
 * CHECK jobs, run: each node's job is a step machine (cv_checkjob.h, in
 * engine/convergence) and this file its driver on the engine's loop
 * (cv_flowjob). What is the engine's own: its lease tokens, the gate that
 * lets only so many nested resources' jobs hold their child's definition
 * at once, the live engine that reconciles services, and the batching of
 * one message's jobs — one check_begin for all of them, and the writes of
 * those that settled at once in one check_done_many. The Kafka offset is
 * committed only once the outcome is in Redis and every message it
 * published is acknowledged.
 */
#include "engine.h"

#include "cv_convergence.h"
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nested resources' jobs loading and beginning child stacks at once, per
 * engine and lane: each holds its stack's template files and its child's
 * definition (about 1 MB for a member of 1,000 resources), and a group
 * hands out all its members' jobs together. */
#define NESTED_MAX 8
static cv_gate_t nested_gates[2] = {CV_GATE_INIT(NESTED_MAX), CV_GATE_INIT(NESTED_MAX)};

/* While the parts of one check_begin reply are handed out, the jobs whose
 * action settled at once wait here to be recorded together; NULL
 * otherwise. */
typedef struct settling {
    size_t n;
    cv_flowjob_t *fj[CV_MSG_NODES_MAX];
    const cv_flow_t *a[CV_MSG_NODES_MAX];
} settling_t;
static settling_t *settling;

/* ---- the machine's functions ---- */

static const cv_flow_t *check_start(void *machine)
{
    return cv_checkjob_start(machine);
}

static const cv_flow_t *check_step(void *machine, const cv_flow_in_t *in)
{
    return cv_checkjob_step(machine, in);
}

static void check_reset(void *machine)
{
    cv_checkjob_reset(machine);
}

static bool check_lease(const void *machine, const char **key, const char **token)
{
    static char lease[CV_KEY_MAX]; /* the loop's thread only: copied by cv_lease_keep */
    if (!cv_checkjob_leased(machine))
        return false;
    cv_checkjob_lease_key(machine, lease, sizeof(lease));
    *key = lease;
    *token = cv_checkjob_token(machine);
    return true;
}

/* A nested resource waits for its place holding nothing: admitted, it
 * loads again (check_begin is re-entrant for its token; a lease that ran
 * out meanwhile is taken again, or BUSY). */
static cv_gate_t *check_gate(cv_flowjob_t *fj, const cv_flow_in_t *in)
{
    if (!in || !cv_checkjob_wants_place(fj->machine, in))
        return NULL;
    return &nested_gates[fj->run.msg.express ? 1 : 0];
}

static void check_reconcile(cv_worker_t *w, const char *svc, cv_flowjob_reconciled_cb cb, void *ud)
{
    cv_live_reconcile(w, svc, cb, ud);
}

/* A check_done of a node without successors, answered while a message's
 * jobs are handed out: kept to go with the others'. */
static bool check_intercept(cv_flowjob_t *fj, const cv_flow_t *a)
{
    if (!settling || a->nmsgs != 0 || a->ncmds != 1 || !a->cmds[0].reply)
        return false;
    const cv_call_t *call = a->cmds[0].call;
    if (!call || call->script != CV_SCRIPT_CHECK_DONE || call->nextra > 0)
        return false;
    settling->fj[settling->n] = fj;
    settling->a[settling->n++] = a;
    return true;
}

static const cv_flowjob_ops_t check_ops = {.start = check_start,
                                           .step = check_step,
                                           .reset = check_reset,
                                           .lease = check_lease,
                                           .gate = check_gate,
                                           .reconcile = check_reconcile,
                                           .intercept = check_intercept};

/* ---- the actions that settled together ---- */

typedef struct done_many {
    size_t n;
    cv_flowjob_t *fj[CV_MSG_NODES_MAX];
} done_many_t;

/* Each job takes its part of the reply (every part the same when the call
 * failed). */
static void feed_parts(cv_flowjob_t *const *fj, size_t n, const cv_resp_t *reply)
{
    for (size_t i = 0; i < n; i++) {
        const cv_resp_t *replies[] = {cv_resp_part(reply, i, n)};
        cv_flow_in_t in = {.now = cv_now(), .replies = replies, .nreplies = 1};
        cv_flowjob_feed(fj[i], &in);
    }
}

static void on_done_many(cv_redis_t *r, redisReply *rep, void *ud)
{
    done_many_t *m = ud;
    (void)r;
    cv_resp_t *reply = cv_flowrun_resp(rep, false);
    feed_parts(m->fj, m->n, reply);
    free(reply);
    free(m);
}

/* One check_done_many for the writes of two or more jobs, or each alone
 * when they cannot go together (cv_call_check_done_many). */
static void settle_together(cv_worker_t *w, const settling_t *s)
{
    const cv_call_t *calls[CV_MSG_NODES_MAX];
    done_many_t *m = s->n > 1 ? calloc(1, sizeof(*m)) : NULL;
    for (size_t i = 0; i < s->n; i++)
        calls[i] = s->a[i]->cmds[0].call;
    cv_call_t call;
    if (!m || cv_call_check_done_many(&call, calls, s->n) != 0) {
        free(m);
        for (size_t i = 0; i < s->n; i++)
            cv_flowjob_send(s->fj[i], s->a[i]);
        return;
    }
    m->n = s->n;
    memcpy(m->fj, s->fj, s->n * sizeof(*m->fj));
    int rc = cv_redis_call(w->redis, call.script, call.keys, call.args, call.nextra,
                           call.extra_keys, call.extra_args, on_done_many, m);
    cv_call_free(&call);
    if (rc != 0) {
        feed_parts(m->fj, m->n, NULL); /* not sent: as a reply that never came */
        free(m);
    }
}

/* ---- one message's jobs ---- */

typedef struct begin_many {
    size_t n;
    cv_flowjob_t *fj[CV_MSG_NODES_MAX];
} begin_many_t;

static void on_begin_many(cv_redis_t *r, redisReply *rep, void *ud)
{
    begin_many_t *b = ud;
    (void)r;
    cv_worker_t *w = b->fj[0]->run.w;
    cv_resp_t *reply = cv_flowrun_resp(rep, false);
    settling_t s = {0};
    settling = &s;
    feed_parts(b->fj, b->n, reply);
    settling = NULL;
    free(reply);
    free(b);
    if (s.n > 0)
        settle_together(w, &s);
}

/* The first start of the jobs one message carried: one check_begin for all
 * of them (the stack read once), each job then going on with its own
 * answer as if it had asked alone. Starting again later, each asks alone. */
static void begin_together(cv_worker_t *w, begin_many_t *b)
{
    const cv_msg_t *jobs[CV_MSG_NODES_MAX];
    const char *tokens[CV_MSG_NODES_MAX];
    for (size_t i = 0; i < b->n; i++) {
        jobs[i] = cv_checkjob_msg(b->fj[i]->machine);
        tokens[i] = cv_checkjob_token(b->fj[i]->machine);
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
        cv_jobrun_retry(&b->fj[i]->run);
    free(b);
}

static cv_flowjob_t *check_new(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    static unsigned long long seq;
    cv_flowjob_t *fj = cv_flowjob_new(w, job, m, &check_ops, sizeof(cv_checkjob_t));
    if (!fj)
        return NULL;
    /* The token names the holder, so an operator reading a lease sees who,
     * and a successor of this process with the same id sees it is gone. */
    char token[160];
    snprintf(token, sizeof(token), "%s:%llu", w->holder, ++seq);
    cv_checkjob_conf_t conf = {
        .worker = w->id, .token = token, .lease_ms = (unsigned)w->lease_ms, .limits = &w->limits};
    cv_checkjob_init(fj->machine, m, &conf);
    return fj;
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
    for (size_t pos = 0; cv_msg_next_node(m, &pos, &one);) {
        cv_flowjob_t *fj = check_new(w, job, &one);
        if (!fj)
            abort(); /* a part of the message would be lost */
        b->fj[b->n++] = fj;
    }
    if (b->n > 1) {
        cv_job_split(job, (int)b->n);
        if (!w->stopping && !w->isolated) {
            begin_together(w, b);
            return;
        }
    }
    /* One job, or a worker handing its jobs back (cv_jobrun_start). */
    for (size_t i = 0; i < b->n; i++)
        cv_flowjob_start(b->fj[i]);
    free(b);
}
