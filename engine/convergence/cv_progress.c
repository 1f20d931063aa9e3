#include "cv_progress.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_reaper.h"
#include "cv_syncpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Node done
 * ------------------------------------------------------------------------ */

typedef struct done_ctx {
    cv_worker_t *w;
    cv_msg_t job;
    cv_progress_cb cb;
    void *ud;
    cv_call_t call;  /* node_done: its successors are call.extra_args */
    bool publishing; /* leave the publishing set once every job is out */
    bool recorded;   /* node_done answered OK */
    bool last;       /* the traversal's last node done: its end is ours */
    int pending;     /* deliveries and the stack finish still outstanding */
    int rc;
} done_ctx_t;

/* Fire and forget: should this be lost, a redelivery publishes once more. */
static void leave_publishing_set(done_ctx_t *ctx)
{
    char key[CV_KEY_MAX], node[CV_NAME_MAX + 2];
    const cv_msg_t *j = &ctx->job;
    cv_key(key, sizeof(key), CV_KEY_PUBLISHING, j->stack, j->traversal, NULL);
    cv_node_name(node, sizeof(node), j->phase, j->resource);
    const char *argv[] = {"SREM", key, node};
    cv_redis_argv(ctx->w->redis, 3, argv, NULL, NULL, NULL);
}

static void done_release(done_ctx_t *ctx)
{
    if (--ctx->pending > 0)
        return;
    /* The script put the node there only with successors or as the last. */
    if (ctx->publishing && ctx->recorded && ctx->rc == 0 && (ctx->call.nextra > 0 || ctx->last))
        leave_publishing_set(ctx);
    ctx->cb(ctx->ud, ctx->rc);
    cv_call_free(&ctx->call);
    free(ctx);
}

static void on_successor_delivered(void *ud, int err)
{
    done_ctx_t *ctx = ud;
    if (err)
        ctx->rc = CV_EKAFKA;
    done_release(ctx);
}

static void on_stack_finished(void *ud, int rc)
{
    done_ctx_t *ctx = ud;
    if (rc && rc != CV_ESTALE)
        ctx->rc = rc;
    done_release(ctx);
}

/* The CHECK jobs of n successors, in one message. */
static void publish_checks(done_ctx_t *ctx, const char *const *nodes, size_t n)
{
    if (n == 0)
        return;
    ctx->pending++;
    int rc = cv_worker_publish_nodes(ctx->w, ctx->job.stack, ctx->job.traversal, nodes, n,
                                     ctx->job.express, on_successor_delivered, ctx);
    if (rc) {
        ctx->pending--;
        ctx->rc = rc;
    }
}

/* What a node_done or node_failed answer means for the job. */
static int status_of(cv_script_t script, const redisReply *rep)
{
    if (rep && rep->type == REDIS_REPLY_ERROR)
        cv_warn("script error: %s", rep->str);
    switch (cv_reply_answer(script, rep)) {
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

/* node_done's reply, or check_done's: the same shape. */
static void on_node_done(cv_redis_t *r, redisReply *rep, void *ud)
{
    done_ctx_t *ctx = ud;
    (void)r;
    ctx->rc = status_of(ctx->call.script, rep);
    ctx->recorded = ctx->rc == 0;
    if (ctx->rc == 0) {
        bool redelivery = cv_reply_int(rep, CV_NODE_DONE_R_ADDED) == 0;
        long long done = cv_reply_int(rep, CV_NODE_DONE_R_DONE);
        long long total = cv_reply_int(rep, CV_NODE_DONE_R_TOTAL);
        const char *ready[CV_MSG_NODES_MAX];
        size_t nready = 0, per = cv_msg_batch_size(ctx->call.nextra);
        for (size_t i = 0; i < ctx->call.nextra; i++) {
            cv_sp_answer_t ans = {
                ctx->call.successor_preds[i],
                (size_t)cv_reply_int(rep, CV_NODE_DONE_R_SUCC(i, CV_NODE_DONE_SUCC_SIZE)),
                cv_reply_int(rep, CV_NODE_DONE_R_SUCC(i, CV_NODE_DONE_SUCC_ADDED)) == 1,
                cv_reply_int(rep, CV_NODE_DONE_R_SUCC(i, CV_NODE_DONE_SUCC_IS_DONE)) == 1};
            if (!cv_sp_should_publish(&ans, redelivery))
                continue;
            ready[nready++] = ctx->call.extra_args[i];
            if (nready == per) {
                publish_checks(ctx, ready, nready);
                nready = 0;
            }
        }
        publish_checks(ctx, ready, nready);
        if (done >= total) {
            ctx->last = true;
            ctx->pending++;
            if (cv_progress_finish_stack(ctx->w, ctx->job.stack, ctx->job.traversal,
                                         on_stack_finished, ctx) != 0) {
                ctx->pending--; /* not sent: nothing will call back */
                ctx->rc = CV_EREDIS;
            }
        }
    }
    done_release(ctx);
}

static done_ctx_t *done_ctx_new(cv_worker_t *w, const cv_node_done_t *d, cv_progress_cb cb,
                                void *ud)
{
    done_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return NULL;
    ctx->w = w;
    ctx->job = *d->job;
    ctx->cb = cb;
    ctx->ud = ud;
    ctx->pending = 1;
    ctx->publishing = d->publishing;
    return ctx;
}

/* Sends the call built into ctx (rc: the builder's); frees ctx when not sent. */
static int done_send(done_ctx_t *ctx, int rc)
{
    if (rc == 0) {
        cv_call_t *c = &ctx->call;
        rc = cv_redis_call(ctx->w->redis, c->script, c->keys, c->args, c->nextra, c->extra_keys,
                           c->extra_args, on_node_done, ctx);
        if (rc)
            cv_call_free(c);
    }
    if (rc)
        free(ctx);
    return rc;
}

int cv_progress_node_done(cv_worker_t *w, const cv_node_done_t *d, cv_progress_cb cb, void *ud)
{
    done_ctx_t *ctx = done_ctx_new(w, d, cb, ud);
    if (!ctx)
        return CV_ENOMEM;
    cv_node_done_t own = *d;
    own.job = &ctx->job;
    return done_send(ctx, cv_call_node_done(&ctx->call, &own, w->id));
}

int cv_progress_check_done(cv_worker_t *w, const cv_check_finish_t *f, const cv_node_done_t *d,
                           cv_progress_cb cb, void *ud)
{
    done_ctx_t *ctx = done_ctx_new(w, d, cb, ud);
    if (!ctx)
        return CV_ENOMEM;
    cv_check_finish_t own = *f;
    own.job = &ctx->job;
    return done_send(ctx, cv_call_check_done(&ctx->call, &own, d, w->id));
}

typedef struct done_many {
    size_t n;
    done_ctx_t *ctx[CV_MSG_NODES_MAX];
} done_many_t;

static void on_done_many(cv_redis_t *r, redisReply *rep, void *ud)
{
    done_many_t *m = ud;
    for (size_t i = 0; i < m->n; i++)
        on_node_done(r, cv_reply_part(rep, i, m->n), m->ctx[i]);
    free(m);
}

/* Sends one item alone; when it cannot be sent, its callback says so. */
static void send_alone(done_ctx_t *ctx)
{
    cv_progress_cb cb = ctx->cb;
    void *ud = ctx->ud;
    int rc = done_send(ctx, 0); /* frees ctx when not sent */
    if (rc)
        cb(ud, rc);
}

/* One check_done_many for the items of m (two or more), or each alone when
 * they cannot go together. */
static void send_many(cv_worker_t *w, done_many_t *m)
{
    const cv_call_t *calls[CV_MSG_NODES_MAX];
    for (size_t i = 0; i < m->n; i++)
        calls[i] = &m->ctx[i]->call;
    cv_call_t call;
    if (cv_call_check_done_many(&call, calls, m->n) != 0) {
        for (size_t i = 0; i < m->n; i++)
            send_alone(m->ctx[i]);
        free(m);
        return;
    }
    int rc = cv_redis_call(w->redis, call.script, call.keys, call.args, call.nextra,
                           call.extra_keys, call.extra_args, on_done_many, m);
    cv_call_free(&call);
    if (rc == 0)
        return;
    for (size_t i = 0; i < m->n; i++) {
        done_ctx_t *ctx = m->ctx[i];
        ctx->cb(ctx->ud, rc);
        cv_call_free(&ctx->call);
        free(ctx);
    }
    free(m);
}

void cv_progress_check_done_many(cv_worker_t *w, const cv_check_finish_t *const *f,
                                 const cv_node_done_t *const *d, size_t n, cv_progress_cb cb,
                                 void *const *ud)
{
    done_many_t *m = calloc(1, sizeof(*m));
    for (size_t i = 0; i < n; i++) {
        done_ctx_t *ctx = done_ctx_new(w, d[i], cb, ud[i]);
        cv_check_finish_t own = *f[i];
        int rc = CV_ENOMEM;
        if (ctx) {
            own.job = &ctx->job;
            rc = cv_call_check_done(&ctx->call, &own, d[i], w->id);
        }
        if (rc) {
            free(ctx);
            cb(ud[i], rc);
        } else if (m && ctx->call.nextra == 0) {
            m->ctx[m->n++] = ctx; /* no successors: together */
        } else {
            send_alone(ctx);
        }
    }
    if (m && m->n > 1) {
        send_many(w, m);
        return;
    }
    if (m && m->n == 1)
        send_alone(m->ctx[0]);
    free(m);
}

/* ------------------------------------------------------------------------
 * Node failed
 * ------------------------------------------------------------------------ */

typedef struct fail_ctx {
    cv_worker_t *w;
    char stack[CV_ID_MAX];
    bool express; /* the failed job's lane: the rollback's */
    cv_progress_cb cb;
    void *ud;
} fail_ctx_t;

static void on_rollback_published(void *ud, int err)
{
    fail_ctx_t *ctx = ud;
    ctx->cb(ctx->ud, err ? CV_EKAFKA : 0);
    free(ctx);
}

/* node_failed.lua began the rollback traversal itself, in the step that
 * failed the stack; what is left is its STACK job. Should it be lost (this
 * worker dies, Kafka refuses it), the stack is ROLLBACK_IN_PROGRESS and
 * never expanded, and the reaper re-queues the job: a retry of this job
 * finds the traversal superseded and publishes nothing. */
static int publish_rollback(fail_ctx_t *ctx, uint64_t traversal)
{
    cv_info("stack %s: failed; rolling back (traversal %llu)", ctx->stack,
            (unsigned long long)traversal);
    /* Nested stacks have no name: the reaper finds a lost STACK job of one here. */
    cv_reaper_watch(ctx->w, ctx->stack);
    return cv_worker_publish_stack(ctx->w, ctx->stack, CV_TRAV_ROLLBACK, traversal, ctx->express,
                                   on_rollback_published, ctx);
}

static void on_node_failed(cv_redis_t *r, redisReply *rep, void *ud)
{
    fail_ctx_t *ctx = ud;
    (void)r;
    int rc = status_of(CV_SCRIPT_NODE_FAILED, rep);
    if (cv_reply_answer(CV_SCRIPT_NODE_FAILED, rep) == CV_ANSWER_ROLLBACK) {
        if (publish_rollback(ctx, (uint64_t)cv_reply_int(rep, CV_NODE_FAILED_R_TRAVERSAL)) == 0)
            return;
        rc = CV_EKAFKA;
    }
    ctx->cb(ctx->ud, rc);
    free(ctx);
}

int cv_progress_node_failed(cv_worker_t *w, const cv_node_failed_t *f, cv_progress_cb cb, void *ud)
{
    fail_ctx_t *ctx = malloc(sizeof(*ctx));
    if (!ctx)
        return CV_ENOMEM;
    ctx->w = w;
    snprintf(ctx->stack, sizeof(ctx->stack), "%s", f->job->stack);
    ctx->express = f->job->express;
    ctx->cb = cb;
    ctx->ud = ud;
    cv_call_t call;
    cv_call_node_failed(&call, f, w->id);
    int rc = cv_redis_call(w->redis, call.script, call.keys, call.args, 0, NULL, NULL,
                           on_node_failed, ctx);
    if (rc)
        free(ctx);
    return rc;
}
