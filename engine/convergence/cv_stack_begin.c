/*
 * Beginning a traversal from a worker: the traversals of a nested stack
 * begun by its parent's resource. stack_begin.lua writes the state; the
 * STACK job is published once it is in Redis, so a crash in between leaves
 * a traversal that a retry (same token) publishes again.
 */
#include "cv_progress.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_reaper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct begin_ctx {
    cv_worker_t *w;
    cv_msg_t msg;
    cv_begin_cb cb;
    void *ud;
} begin_ctx_t;

static void on_stack_job_delivered(void *ud, int err)
{
    begin_ctx_t *ctx = ud;
    ctx->cb(ctx->ud, err ? CV_EKAFKA : 0, ctx->msg.traversal);
    free(ctx);
}

static int error_code(const redisReply *rep)
{
    if (!rep || rep->type != REDIS_REPLY_ERROR)
        return CV_EREDIS;
    if (strncmp(rep->str, "ENOENT", 6) == 0)
        return CV_ENOENT;
    if (strncmp(rep->str, "EEXIST", 6) == 0)
        return CV_EEXIST;
    return CV_EREDIS;
}

static void on_begun(cv_redis_t *r, redisReply *rep, void *ud)
{
    begin_ctx_t *ctx = ud;
    (void)r;
    if (cv_reply_answer(CV_SCRIPT_STACK_BEGIN, rep) != CV_ANSWER_VALUE || rep->elements != 1) {
        ctx->cb(ctx->ud, error_code(rep), 0);
        free(ctx);
        return;
    }
    ctx->msg.traversal = (uint64_t)cv_reply_int(rep, CV_STACK_BEGIN_R_TRAVERSAL);
    /* Nested stacks have no name: the reaper finds a lost STACK job of one here. */
    cv_reaper_watch(ctx->w, ctx->msg.stack);
    if (cv_worker_publish(ctx->w, CV_TOPIC_CHECK, &ctx->msg, on_stack_job_delivered, ctx) != 0)
        on_stack_job_delivered(ctx, CV_EKAFKA);
}

int cv_progress_begin_stack(cv_worker_t *w, const cv_stack_begin_t *b, bool express, cv_begin_cb cb,
                            void *ud)
{
    begin_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return CV_ENOMEM;
    ctx->w = w;
    ctx->cb = cb;
    ctx->ud = ud;
    ctx->msg.type = CV_MSG_STACK;
    ctx->msg.kind = (uint8_t)b->kind;
    ctx->msg.express = express;
    snprintf(ctx->msg.stack, sizeof(ctx->msg.stack), "%s", b->stack);
    cv_call_t call;
    cv_call_stack_begin(&call, b, w->id);
    int rc =
        cv_redis_call(w->redis, call.script, call.keys, call.args, 0, NULL, NULL, on_begun, ctx);
    if (rc)
        free(ctx);
    return rc;
}
