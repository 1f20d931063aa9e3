/*
 * Reading child stacks for the observation of nested resources: one HMGET
 * per child (each in its own hash tag, so never one script), all sent in one
 * loop turn and so pipelined.
 */
#include "observer.h"

#include "cv_keys.h"

#include <stdlib.h>
#include <string.h>

typedef struct read_ctx {
    cv_children_cb cb;
    void *ud;
    json_t *snapshots;
    int pending;
    bool failed;
} read_ctx_t;

static json_t *snapshot(const redisReply *rep)
{
    const char *status = cv_reply_str(rep, 0);
    json_t *outputs = json_loads(cv_reply_str(rep, 3), 0, NULL);
    return json_pack("{s:b, s:s, s:I, s:s, s:o, s:I}", "exists", status[0] != '\0', "status",
                     status, "traversal", (json_int_t)strtoll(cv_reply_str(rep, 1), NULL, 10),
                     "reason", cv_reply_str(rep, 2), "outputs", outputs ? outputs : json_object(),
                     "reruns", (json_int_t)strtoll(cv_reply_str(rep, 4), NULL, 10));
}

static void release(read_ctx_t *ctx)
{
    if (--ctx->pending > 0)
        return;
    if (ctx->failed) {
        json_decref(ctx->snapshots);
        ctx->snapshots = NULL;
    }
    ctx->cb(ctx->ud, ctx->snapshots);
    free(ctx);
}

/* hiredis callbacks carry one pointer: each request gets its id with it. */
typedef struct request {
    read_ctx_t *ctx;
    char id[CV_ID_MAX];
} request_t;

static void on_reply(cv_redis_t *r, redisReply *rep, void *ud)
{
    request_t *req = ud;
    read_ctx_t *ctx = req->ctx;
    (void)r;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 5)
        ctx->failed = true;
    else
        json_object_set_new(ctx->snapshots, req->id, snapshot(rep));
    free(req);
    release(ctx);
}

int cv__observer_read_children(cv_worker_t *w, const json_t *ids, cv_children_cb cb, void *ud)
{
    read_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return -1;
    ctx->cb = cb;
    ctx->ud = ud;
    ctx->snapshots = json_object();
    ctx->pending = 1;
    size_t i;
    const json_t *id;
    json_array_foreach(ids, i, id)
    {
        request_t *req = calloc(1, sizeof(*req));
        char key[CV_KEY_MAX];
        if (!req) {
            ctx->failed = true;
            continue;
        }
        req->ctx = ctx;
        snprintf(req->id, sizeof(req->id), "%s", json_string_value(id));
        cv_key(key, sizeof(key), CV_KEY_STACK, req->id, 0, NULL);
        const char *argv[] = {"HMGET", key, "status", "traversal", "reason", "outputs", "reruns"};
        ctx->pending++;
        if (cv_redis_argv(w->redis, 7, argv, NULL, on_reply, req) != 0) {
            free(req);
            ctx->pending--;
            ctx->failed = true;
        }
    }
    release(ctx); /* drops the count that kept it alive while sending */
    return 0;
}
