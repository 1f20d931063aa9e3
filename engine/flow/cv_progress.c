#include "cv_progress.h"

#include "cv_error.h"
#include "cv_keys.h"
#include "cv_log.h"
#include "cv_syncpoint.h"

#include <jansson.h>
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
    json_t *succs;   /* [[node, npreds], ...] */
    bool publishing; /* leave the publishing set once every job is out */
    bool recorded;   /* node_done answered OK */
    int pending;     /* deliveries and the stack finish still outstanding */
    int rc;
} done_ctx_t;

/* Fire and forget: should this be lost, a redelivery publishes once more. */
static void leave_publishing_set(done_ctx_t *ctx)
{
    char key[CV_KEY_MAX], node[CV_NAME_MAX + 2];
    const cv_msg_t *j = &ctx->job;
    cv_key_trav(key, sizeof(key), j->stack, "publishing", j->traversal);
    cv_node_name(node, sizeof(node), j->phase, j->resource);
    const char *argv[] = {"SREM", key, node};
    cv_redis_argv(ctx->w->redis, 3, argv, NULL, NULL, NULL);
}

static void done_release(done_ctx_t *ctx)
{
    if (--ctx->pending > 0)
        return;
    if (ctx->publishing && ctx->recorded && ctx->rc == 0)
        leave_publishing_set(ctx);
    ctx->cb(ctx->ud, ctx->rc);
    json_decref(ctx->succs);
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

static int publish_check(done_ctx_t *ctx, const char *node)
{
    ctx->pending++;
    int rc = cv_worker_publish_node(ctx->w, ctx->job.stack, ctx->job.traversal, node,
                                    on_successor_delivered, ctx);
    if (rc) {
        ctx->pending--;
        ctx->rc = rc;
    }
    return rc;
}

static int status_of(const redisReply *rep)
{
    if (!rep)
        return CV_EREDIS;
    if (rep->type == REDIS_REPLY_ERROR) {
        cv_warn("script error: %s", rep->str);
        return CV_EREDIS;
    }
    const char *s = cv_reply_str(rep, 0);
    if (strcmp(s, "OK") == 0)
        return 0;
    if (strcmp(s, "FENCED") == 0)
        return CV_EFENCED;
    /* NONODE: a forged job the loading script let through; never counted. */
    if (strcmp(s, "STALE") == 0 || strcmp(s, "SETTLED") == 0 || strcmp(s, "NONODE") == 0)
        return CV_ESTALE;
    return CV_EREDIS;
}

static void on_node_done(cv_redis_t *r, redisReply *rep, void *ud)
{
    done_ctx_t *ctx = ud;
    (void)r;
    ctx->rc = status_of(rep);
    ctx->recorded = ctx->rc == 0;
    if (ctx->rc == 0) {
        bool redelivery = cv_reply_int(rep, 1) == 0;
        long long done = cv_reply_int(rep, 2), total = cv_reply_int(rep, 3);
        size_t i;
        json_t *s;
        json_array_foreach(ctx->succs, i, s)
        {
            cv_sp_answer_t ans = {(size_t)json_integer_value(json_array_get(s, 1)),
                                  (size_t)cv_reply_int(rep, 5 + 3 * i),
                                  cv_reply_int(rep, 4 + 3 * i) == 1,
                                  cv_reply_int(rep, 6 + 3 * i) == 1};
            if (cv_sp_should_publish(&ans, redelivery))
                publish_check(ctx, json_string_value(json_array_get(s, 0)));
        }
        if (done >= total) {
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

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static json_t *successors_of(const char *graph_entry)
{
    json_t *e = json_loads(graph_entry, 0, NULL);
    json_t *s = json_incref(json_object_get(e, "s"));
    json_decref(e);
    if (!json_is_array(s)) {
        json_decref(s);
        s = json_array();
    }
    return s;
}

int cv_progress_node_done(cv_worker_t *w, const cv_node_done_t *d, cv_progress_cb cb, void *ud)
{
    done_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return CV_ENOMEM;
    ctx->w = w;
    ctx->job = *d->job;
    ctx->cb = cb;
    ctx->ud = ud;
    ctx->pending = 1;
    ctx->publishing = d->publishing;
    ctx->succs = successors_of(or_empty(d->graph_entry));
    size_t nsucc = json_array_size(ctx->succs), nkeys = 9 + nsucc, nargs = 16 + nsucc;
    char(*keys)[CV_KEY_MAX] = malloc(nkeys * CV_KEY_MAX);
    const char **kp = malloc(nkeys * sizeof(*kp)), **args = malloc(nargs * sizeof(*args));
    if (!keys || !kp || !args) {
        free(keys);
        free(kp);
        free(args);
        json_decref(ctx->succs);
        free(ctx);
        return CV_ENOMEM;
    }
    const cv_msg_t *j = d->job;
    char node[CV_NAME_MAX + 2], trav[24];
    cv_node_name(node, sizeof(node), j->phase, j->resource);
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)j->traversal);
    cv_key_stack(keys[0], CV_KEY_MAX, j->stack, "stack");
    cv_key_resource(keys[1], CV_KEY_MAX, j->stack, "res", j->resource);
    cv_key_trav(keys[2], CV_KEY_MAX, j->stack, "done", j->traversal);
    cv_key_stack(keys[3], CV_KEY_MAX, j->stack, "events");
    cv_key_stack(keys[4], CV_KEY_MAX, j->stack, "counts");
    cv_key_stack(keys[5], CV_KEY_MAX, j->stack, "index");
    cv_key_resource(keys[6], CV_KEY_MAX, j->stack, "lease", j->resource);
    cv_key_trav(keys[7], CV_KEY_MAX, j->stack, "graph", j->traversal);
    cv_key_trav(keys[8], CV_KEY_MAX, j->stack, "publishing", j->traversal);
    const char *fixed[] = {trav,
                           node,
                           or_empty(d->version),
                           or_empty(d->status),
                           or_empty(d->attrs),
                           or_empty(d->reason),
                           or_empty(d->pass),
                           w->id,
                           j->resource,
                           or_empty(d->physical_id),
                           or_empty(d->action),
                           or_empty(d->data),
                           or_empty(d->old),
                           or_empty(d->events),
                           or_empty(d->lease_token),
                           d->publishing ? "1" : ""};
    memcpy(args, fixed, sizeof(fixed));
    for (size_t i = 0; i < nsucc; i++) {
        const char *succ = json_string_value(json_array_get(json_array_get(ctx->succs, i), 0));
        cv_key_syncpoint(keys[9 + i], CV_KEY_MAX, j->stack, j->traversal, succ ? succ : "");
        args[16 + i] = succ ? succ : "";
    }
    for (size_t i = 0; i < nkeys; i++)
        kp[i] = keys[i];
    int rc = cv_redis_script(w->redis, CV_SCRIPT_NODE_DONE, (int)nkeys, kp, (int)nargs, args, NULL,
                             on_node_done, ctx);
    free(keys);
    free(kp);
    free(args);
    if (rc) {
        json_decref(ctx->succs);
        free(ctx);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Node failed
 * ------------------------------------------------------------------------ */

typedef struct fail_ctx {
    cv_worker_t *w;
    char stack[CV_ID_MAX];
    cv_progress_cb cb;
    void *ud;
} fail_ctx_t;

static void on_rollback_started(void *ud, int rc)
{
    fail_ctx_t *ctx = ud;
    ctx->cb(ctx->ud, rc);
    free(ctx);
}

static void on_node_failed(cv_redis_t *r, redisReply *rep, void *ud)
{
    fail_ctx_t *ctx = ud;
    (void)r;
    int rc = status_of(rep);
    if (rc == 0 && strcmp(cv_reply_str(rep, 1), "ROLLBACK") == 0) {
        cv_info("stack %s: failed; rolling back", ctx->stack);
        if (cv_progress_start_traversal(ctx->w, ctx->stack, CV_TRAV_ROLLBACK, on_rollback_started,
                                        ctx) == 0)
            return;
        rc = CV_EREDIS;
    }
    ctx->cb(ctx->ud, rc);
    free(ctx);
}

int cv_progress_node_failed(cv_worker_t *w, const cv_node_failed_t *f, cv_progress_cb cb, void *ud)
{
    fail_ctx_t *ctx = malloc(sizeof(*ctx));
    if (!ctx)
        return CV_ENOMEM;
    const cv_msg_t *j = f->job;
    ctx->w = w;
    snprintf(ctx->stack, sizeof(ctx->stack), "%s", j->stack);
    ctx->cb = cb;
    ctx->ud = ud;
    char k[4][CV_KEY_MAX];
    cv_key_stack(k[0], CV_KEY_MAX, j->stack, "stack");
    cv_key_resource(k[1], CV_KEY_MAX, j->stack, "res", j->resource);
    cv_key_stack(k[2], CV_KEY_MAX, j->stack, "events");
    cv_key_stack(k[3], CV_KEY_MAX, j->stack, "counts");
    const char *keys[] = {k[0], k[1], k[2], k[3]};
    char trav[24], stack_reason[CV_REASON_MAX + CV_NAME_MAX + 64];
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)j->traversal);
    /* Heat's wording, so that tools reading reasons keep working. */
    snprintf(stack_reason, sizeof(stack_reason), "Resource %s failed: %s", f->action, f->reason);
    const char *args[] = {trav,        f->version,     f->status, f->reason,   w->id,
                          j->resource, f->physical_id, f->action, stack_reason};
    int rc = cv_redis_script(w->redis, CV_SCRIPT_NODE_FAILED, 4, keys, 9, args, NULL,
                             on_node_failed, ctx);
    if (rc)
        free(ctx);
    return rc;
}
