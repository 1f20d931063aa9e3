/*
 * cv_progress — a node done or failed and what follows, and a traversal
 * begun by a worker, as steps (cv_progress.h). The traversal's end is
 * progress_finish.c.
 */
#include "cv_progress.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_syncpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the sub-flow waits for. */
enum {
    P_IDLE,
    P_DONE,     /* node_done's (or check_done's) reply */
    P_OUT,      /* the successors' jobs delivered, and the end's first read */
    P_ENDING,   /* the traversal's end, after the last node */
    P_FAILED,   /* node_failed's reply */
    P_ROLLBACK, /* the rollback's STACK job delivered */
    P_FINISH,   /* a traversal's end on its own */
    P_BEGIN,    /* stack_begin's reply */
    P_BEGUN,    /* the begun traversal's STACK job delivered */
};

static void start(cv_progress_t *p, int state, const cv_msg_t *job, const char *worker)
{
    cv_progress_clear(p);
    p->state = state;
    if (job)
        p->job = *job;
    p->worker = worker;
}

/* The sub-flow is over: *rc its outcome. */
static const cv_flow_t *over(cv_progress_t *p, int *rc, int outcome)
{
    *rc = outcome;
    cv_progress_clear(p);
    return NULL;
}

/* What a node_done or node_failed answer means for the job. */
static int status_of(cv_flow_buf_t *b, cv_script_t script, const cv_resp_t *rep)
{
    if (cv_resp_error(rep))
        cv__flow_log(b, CV_FLOW_WARN, "script error: %s", rep->str);
    switch (cv_resp_answer(script, rep)) {
    case CV_ANSWER_OK:
    case CV_ANSWER_ROLLBACK:
        return 0;
    case CV_ANSWER_FENCED:
        return CV_EFENCED;
    case CV_ANSWER_STALE:
    case CV_ANSWER_SETTLED:
    case CV_ANSWER_NONODE: /* a forged job the loading script let through; never counted */
        return CV_ESTALE;
    default:
        return CV_EREDIS;
    }
}

void cv__progress_watch(cv_flow_buf_t *b, const char *stack)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_ACTIVE, NULL, 0, NULL);
    const char *argv[] = {"SADD", key, stack};
    cv__flow_argv(b, false, 3, argv);
}

/* ------------------------------------------------------------------------
 * Node done
 * ------------------------------------------------------------------------ */

/* Sends the built call (rc: the builder's); its reply comes to P_DONE. */
static const cv_flow_t *send_done(cv_progress_t *p, cv_flow_buf_t *b, int rc)
{
    if (rc == 0)
        rc = cv__flow_call_of(b, p->call, true);
    if (rc != 0) {
        /* Not sent: the job tries again. */
        p->rc = rc;
        return cv__flow_end(b, CV_FLOW_RETRY);
    }
    return cv__flow_end(b, CV_FLOW_IO);
}

static bool call_new(cv_progress_t *p)
{
    p->call = malloc(sizeof(*p->call)); /* a builder fills it (6 KB not zeroed) */
    if (!p->call)
        return false;
    p->call->tail = NULL;
    p->call->nextra = 0;
    return true;
}

const cv_flow_t *cv_progress_node_done(cv_progress_t *p, cv_flow_buf_t *b, const cv_node_done_t *d,
                                       const char *worker)
{
    start(p, P_DONE, d->job, worker);
    p->publishing = d->publishing;
    if (!call_new(p))
        return send_done(p, b, CV_ENOMEM);
    cv_node_done_t own = *d;
    own.job = &p->job;
    return send_done(p, b, cv_call_node_done(p->call, &own, worker));
}

const cv_flow_t *cv_progress_check_done(cv_progress_t *p, cv_flow_buf_t *b,
                                        const cv_check_finish_t *f, const cv_node_done_t *d,
                                        const char *worker)
{
    start(p, P_DONE, d->job, worker);
    p->publishing = d->publishing;
    if (!call_new(p))
        return send_done(p, b, CV_ENOMEM);
    cv_check_finish_t own = *f;
    own.job = &p->job;
    return send_done(p, b, cv_call_check_done(p->call, &own, d, worker));
}

/* The CHECK jobs of n successors, in one message. */
static void publish_checks(cv_progress_t *p, cv_flow_buf_t *b, const char *const *nodes, size_t n)
{
    if (n == 0)
        return;
    int rc = cv__flow_nodes(b, p->job.stack, p->job.traversal, nodes, n, p->job.express);
    if (rc)
        p->rc = rc;
}

/* Everything is out: the node leaves the traversal's publishing set (sent
 * and forgotten: should it be lost, a redelivery publishes once more). The
 * script put it there only with successors or as the last. */
static const cv_flow_t *done_over(cv_progress_t *p, cv_flow_buf_t *b, int *rc)
{
    if (p->publishing && p->recorded && p->rc == 0 && (p->call->nextra > 0 || p->last)) {
        char key[CV_KEY_MAX], node[CV_NAME_MAX + 2];
        cv_key(key, sizeof(key), CV_KEY_PUBLISHING, p->job.stack, p->job.traversal, NULL);
        cv_node_name(node, sizeof(node), p->job.phase, p->job.resource);
        const char *argv[] = {"SREM", key, node};
        cv__flow_argv(b, false, 3, argv);
    }
    return over(p, rc, p->rc);
}

/* node_done's reply, or check_done's (the same shape): the successors it
 * made ready, and the traversal's end when this was its last node. */
static const cv_flow_t *done_replied(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in,
                                     int *rc)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    size_t before = b->a.nmsgs;
    p->rc = status_of(b, p->call->script, rep);
    p->recorded = p->rc == 0;
    if (p->rc != 0)
        return over(p, rc, p->rc);
    bool redelivery = cv_resp_int(rep, CV_NODE_DONE_R_ADDED) == 0;
    long long done = cv_resp_int(rep, CV_NODE_DONE_R_DONE);
    long long total = cv_resp_int(rep, CV_NODE_DONE_R_TOTAL);
    const char *ready[CV_MSG_NODES_MAX];
    size_t nready = 0, per = cv_msg_batch_size(p->call->nextra);
    for (size_t i = 0; i < p->call->nextra; i++) {
        cv_sp_answer_t ans = {
            p->call->successor_preds[i],
            (size_t)cv_resp_int(rep, CV_NODE_DONE_R_SUCC(i, CV_NODE_DONE_SUCC_SIZE)),
            cv_resp_int(rep, CV_NODE_DONE_R_SUCC(i, CV_NODE_DONE_SUCC_ADDED)) == 1,
            cv_resp_int(rep, CV_NODE_DONE_R_SUCC(i, CV_NODE_DONE_SUCC_IS_DONE)) == 1};
        if (!cv_sp_should_publish(&ans, redelivery))
            continue;
        ready[nready++] = p->call->extra_args[i];
        if (nready == per) {
            publish_checks(p, b, ready, nready);
            nready = 0;
        }
    }
    publish_checks(p, b, ready, nready);
    if (done >= total) {
        p->last = true;
        cv__progress_finish_start(p, b, p->job.stack, p->job.traversal);
    }
    if (b->a.nmsgs == before && !p->last)
        return done_over(p, b, rc);
    p->state = P_OUT;
    return cv__flow_end(b, CV_FLOW_IO);
}

/* The traversal's end went on: its next answer, or its outcome taken in. */
static const cv_flow_t *ending(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in, int *rc)
{
    int finished = 0;
    const cv_flow_t *a = cv__progress_finish_step(p, b, in, &finished);
    if (a) {
        p->state = P_ENDING;
        return a;
    }
    if (finished && finished != CV_ESTALE)
        p->rc = finished;
    return done_over(p, b, rc);
}

static const cv_flow_t *out_delivered(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in,
                                      int *rc)
{
    if (in->published)
        p->rc = CV_EKAFKA;
    if (p->last)
        return ending(p, b, in, rc);
    return done_over(p, b, rc);
}

/* ------------------------------------------------------------------------
 * Node failed
 * ------------------------------------------------------------------------ */

const cv_flow_t *cv_progress_node_failed(cv_progress_t *p, cv_flow_buf_t *b,
                                         const cv_node_failed_t *f, const char *worker)
{
    start(p, P_FAILED, f->job, worker);
    cv_call_t *call = cv__flow_call(b, true);
    if (!call) {
        p->rc = CV_ENOMEM;
        return cv__flow_end(b, CV_FLOW_RETRY);
    }
    cv_node_failed_t own = *f;
    own.job = &p->job;
    cv_call_node_failed(call, &own, worker);
    return cv__flow_end(b, CV_FLOW_IO);
}

/* node_failed.lua began the rollback traversal itself, in the step that
 * failed the stack; what is left is its STACK job. Should it be lost (this
 * worker dies, Kafka refuses it), the stack is ROLLBACK_IN_PROGRESS and
 * never expanded, and the reaper re-queues the job: a retry of this job
 * finds the traversal superseded and publishes nothing. */
static const cv_flow_t *publish_rollback(cv_progress_t *p, cv_flow_buf_t *b, uint64_t traversal)
{
    cv__flow_log(b, CV_FLOW_INFO, "stack %s: failed; rolling back (traversal %llu)", p->job.stack,
                 (unsigned long long)traversal);
    /* Nested stacks have no name: the reaper finds a lost STACK job of one here. */
    cv__progress_watch(b, p->job.stack);
    cv_msg_t m = {.type = CV_MSG_STACK,
                  .kind = CV_TRAV_ROLLBACK,
                  .traversal = traversal,
                  .express = p->job.express};
    cv_str_copy(m.stack, sizeof(m.stack), p->job.stack);
    if (cv__flow_msg(b, &m) != 0)
        return NULL;
    p->state = P_ROLLBACK;
    return cv__flow_end(b, CV_FLOW_IO);
}

static const cv_flow_t *failed_replied(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in,
                                       int *rc)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    int status = status_of(b, CV_SCRIPT_NODE_FAILED, rep);
    if (cv_resp_answer(CV_SCRIPT_NODE_FAILED, rep) != CV_ANSWER_ROLLBACK)
        return over(p, rc, status);
    const cv_flow_t *a =
        publish_rollback(p, b, (uint64_t)cv_resp_int(rep, CV_NODE_FAILED_R_TRAVERSAL));
    return a ? a : over(p, rc, CV_EKAFKA);
}

/* ------------------------------------------------------------------------
 * A traversal's end on its own, a traversal begun
 * ------------------------------------------------------------------------ */

const cv_flow_t *cv_progress_finish(cv_progress_t *p, cv_flow_buf_t *b, const char *stack,
                                    uint64_t traversal, const char *worker)
{
    start(p, P_FINISH, NULL, worker);
    return cv__progress_finish_start(p, b, stack, traversal);
}

const cv_flow_t *cv_progress_begin(cv_progress_t *p, cv_flow_buf_t *b, const cv_stack_begin_t *sb,
                                   bool express, const char *worker)
{
    start(p, P_BEGIN, NULL, worker);
    p->job.type = CV_MSG_STACK;
    p->job.kind = (uint8_t)sb->kind;
    p->job.express = express;
    cv_str_copy(p->job.stack, sizeof(p->job.stack), sb->stack);
    cv_call_t *call = cv__flow_call(b, true);
    if (!call)
        return cv__flow_end(b, CV_FLOW_RETRY);
    cv_call_stack_begin(call, sb, worker);
    return cv__flow_end(b, CV_FLOW_IO);
}

uint64_t cv_progress_begun(const cv_progress_t *p)
{
    return p->begun;
}

/* stack_begin's error replies name what went wrong first. */
static int begin_error(const cv_resp_t *rep)
{
    const char *err = cv_resp_error(rep);
    if (!err)
        return CV_EREDIS;
    if (strncmp(err, "ENOENT", 6) == 0)
        return CV_ENOENT;
    if (strncmp(err, "EEXIST", 6) == 0)
        return CV_EEXIST;
    return CV_EREDIS;
}

static const cv_flow_t *begin_replied(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in,
                                      int *rc)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    if (cv_resp_answer(CV_SCRIPT_STACK_BEGIN, rep) != CV_ANSWER_VALUE || cv_resp_count(rep) != 1)
        return over(p, rc, begin_error(rep));
    p->job.traversal = (uint64_t)cv_resp_int(rep, CV_STACK_BEGIN_R_TRAVERSAL);
    p->begun = p->job.traversal;
    /* Nested stacks have no name: the reaper finds a lost STACK job of one here. */
    cv__progress_watch(b, p->job.stack);
    if (cv__flow_msg(b, &p->job) != 0)
        return over(p, rc, CV_EKAFKA);
    p->state = P_BEGUN;
    return cv__flow_end(b, CV_FLOW_IO);
}

/* ------------------------------------------------------------------------
 * Stepping
 * ------------------------------------------------------------------------ */

static const cv_flow_t *finish_alone(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in,
                                     int *rc)
{
    int finished = 0;
    const cv_flow_t *a = cv__progress_finish_step(p, b, in, &finished);
    return a ? a : over(p, rc, finished);
}

const cv_flow_t *cv_progress_step(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in,
                                  int *rc)
{
    switch (p->state) {
    case P_DONE:
        return done_replied(p, b, in, rc);
    case P_OUT:
        return out_delivered(p, b, in, rc);
    case P_ENDING:
        return ending(p, b, in, rc);
    case P_FAILED:
        return failed_replied(p, b, in, rc);
    case P_ROLLBACK:
        return over(p, rc, in->published ? CV_EKAFKA : 0);
    case P_FINISH:
        return finish_alone(p, b, in, rc);
    case P_BEGIN:
        return begin_replied(p, b, in, rc);
    case P_BEGUN: {
        uint64_t begun = p->begun;
        const cv_flow_t *a = over(p, rc, in->published ? CV_EKAFKA : 0);
        p->begun = begun;
        return a;
    }
    default:
        return over(p, rc, CV_EINVAL);
    }
}

bool cv_progress_busy(const cv_progress_t *p)
{
    return p->state != P_IDLE;
}

void cv_progress_clear(cv_progress_t *p)
{
    if (p->call) {
        cv_call_free(p->call);
        free(p->call);
    }
    cv__progress_finish_clear(p);
    memset(p, 0, sizeof(*p));
}
