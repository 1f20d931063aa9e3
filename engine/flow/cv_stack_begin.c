/*
 * Beginning a traversal from a worker: a rollback or delete re-run of the
 * worker's own stack, or the traversals of a nested stack begun by its
 * parent's resource. stack_begin.lua writes the state; the STACK job is
 * published once it is in Redis, so a crash in between leaves a traversal
 * that a retry (same token) publishes again.
 */
#include "cv_progress.h"

#include "cv_error.h"
#include "cv_keys.h"
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
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 1) {
        ctx->cb(ctx->ud, error_code(rep), 0);
        free(ctx);
        return;
    }
    ctx->msg.traversal = (uint64_t)cv_reply_int(rep, 0);
    /* Nested stacks have no name: the reaper finds a lost STACK job of one here. */
    cv_reaper_watch(ctx->w, ctx->msg.stack);
    if (cv_worker_publish(ctx->w, CV_TOPIC_CHECK, &ctx->msg, on_stack_job_delivered, ctx) != 0)
        on_stack_job_delivered(ctx, CV_EKAFKA);
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

int cv_progress_begin_stack(cv_worker_t *w, const cv_stack_begin_t *b, cv_begin_cb cb, void *ud)
{
    begin_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return CV_ENOMEM;
    ctx->w = w;
    ctx->cb = cb;
    ctx->ud = ud;
    ctx->msg.type = CV_MSG_STACK;
    ctx->msg.kind = (uint8_t)b->kind;
    snprintf(ctx->msg.stack, sizeof(ctx->msg.stack), "%s", b->stack);
    char k[3][CV_KEY_MAX];
    cv_key_stack(k[0], CV_KEY_MAX, b->stack, "stack");
    cv_key_stack(k[1], CV_KEY_MAX, b->stack, "def");
    cv_key_stack(k[2], CV_KEY_MAX, b->stack, "events");
    const char *keys[] = {k[0], k[1], k[2]};
    /* A worker's own delete re-run keeps counting re-runs (stack_begin ARGV 9). */
    const char *rerun = b->kind == CV_TRAV_DELETE && !b->token ? "1" : "";
    const char *args[] = {cv_trav_kind_name((uint8_t)b->kind),
                          or_empty(b->name),
                          b->stack,
                          or_empty(b->tpl),
                          or_empty(b->params),
                          or_empty(b->fname),
                          w->id,
                          b->kind == CV_TRAV_CREATE ? "0" : "",
                          rerun,
                          or_empty(b->files),
                          or_empty(b->parent),
                          or_empty(b->token)};
    int rc =
        cv_redis_script(w->redis, CV_SCRIPT_STACK_BEGIN, 3, keys, 12, args, NULL, on_begun, ctx);
    if (rc)
        free(ctx);
    return rc;
}

/* ---- a worker's own stack: rollback, delete re-run ---- */

typedef struct start_ctx {
    cv_progress_cb cb;
    void *ud;
} start_ctx_t;

static void on_started(void *ud, int rc, uint64_t traversal)
{
    start_ctx_t *ctx = ud;
    (void)traversal;
    ctx->cb(ctx->ud, rc == CV_ENOENT || rc == CV_EEXIST ? CV_EREDIS : rc);
    free(ctx);
}

int cv_progress_start_traversal(cv_worker_t *w, const char *stack, int kind, cv_progress_cb cb,
                                void *ud)
{
    start_ctx_t *ctx = malloc(sizeof(*ctx));
    if (!ctx)
        return CV_ENOMEM;
    ctx->cb = cb;
    ctx->ud = ud;
    cv_stack_begin_t b = {.kind = kind, .stack = stack};
    int rc = cv_progress_begin_stack(w, &b, on_started, ctx);
    if (rc)
        free(ctx);
    return rc;
}
