#include "cv_purge.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Graph entries one traversal_sweep.lua call looks at: a few hundred
 * UNLINKs, well under a millisecond of Redis' time. */
#define SWEEP_BATCH "500"

typedef struct purge_ctx {
    cv_worker_t *w;
    char id[CV_ID_MAX];
    char prefix[CV_KEY_MAX]; /* '<prefix>{<id>}:' */
    char gc[CV_KEY_MAX];
    char traversal[24], cursor[64];
    bool purge; /* sweep, then stack_purge.lua */
    char age[24];
    cv_purge_cb cb;
    void *ud;
} purge_ctx_t;

static void finish(purge_ctx_t *c, int rc, cv_answer_t answer)
{
    if (c->cb)
        c->cb(c->ud, rc, answer);
    free(c);
}

static purge_ctx_t *ctx_new(cv_worker_t *w, const char *stack, cv_purge_cb cb, void *ud)
{
    purge_ctx_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->w = w;
    snprintf(c->id, sizeof(c->id), "%s", stack);
    /* The stack's keys up to their kind: what "def" or "sp:7:u/x" follows. */
    cv_key(c->prefix, sizeof(c->prefix), CV_KEY_STACK, stack, 0, NULL);
    c->prefix[strlen(c->prefix) - strlen("stack")] = '\0';
    cv_key(c->gc, sizeof(c->gc), CV_KEY_GC, stack, 0, NULL);
    snprintf(c->cursor, sizeof(c->cursor), "0");
    c->cb = cb;
    c->ud = ud;
    return c;
}

/* ---- after a purge: the global keys that name the stack ---- */

static void forget_deleted(cv_worker_t *w, const char *stack)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_DELETED, NULL, 0, NULL);
    const char *argv[] = {"ZREM", key, stack};
    cv_redis_argv(w->redis, 3, argv, NULL, NULL, NULL);
}

/* A nested stack's parent lists it in `children` (another slot): listing
 * skips a child that is gone, so this only keeps the set from growing. */
static void leave_parent(cv_worker_t *w, const char *parent, const char *stack)
{
    if (!parent[0])
        return;
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_CHILDREN, parent, 0, NULL);
    const char *argv[] = {"SREM", key, stack};
    cv_redis_argv(w->redis, 3, argv, NULL, NULL, NULL);
}

static void on_purged(cv_redis_t *r, redisReply *rep, void *ud)
{
    purge_ctx_t *c = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_STACK_PURGE, rep);
    switch (answer) {
    case CV_ANSWER_OK:
        cv_info("purge: stack %s (%s) deleted %s s ago: every key of it removed",
                cv_reply_str(rep, CV_STACK_PURGE_R_NAME), c->id,
                cv_reply_str(rep, CV_STACK_PURGE_R_SINCE));
        leave_parent(c->w, cv_reply_str(rep, CV_STACK_PURGE_R_PARENT), c->id);
        forget_deleted(c->w, c->id);
        break;
    case CV_ANSWER_GONE:
    case CV_ANSWER_LIVE: /* begun again: noted again should it be deleted again */
        forget_deleted(c->w, c->id);
        break;
    case CV_ANSWER_BUSY:
        cv_info("purge: stack %s: the lease of %s is held; purged once it is released", c->id,
                cv_reply_str(rep, CV_STACK_PURGE_R_RESOURCE));
        break;
    case CV_ANSWER_YOUNG:
    case CV_ANSWER_AGAIN: /* swept meanwhile by another worker's new retiree: next pass */
        break;
    default:
        cv_warn("purge: stack %s: %s", c->id,
                rep && rep->type == REDIS_REPLY_ERROR ? rep->str : "no answer from Redis");
        finish(c, CV_EREDIS, answer);
        return;
    }
    finish(c, 0, answer);
}

static void purge_call(purge_ctx_t *c)
{
    char stack[CV_KEY_MAX], def[CV_KEY_MAX];
    cv_key(stack, sizeof(stack), CV_KEY_STACK, c->id, 0, NULL);
    cv_key(def, sizeof(def), CV_KEY_DEF, c->id, 0, NULL);
    cv_stack_purge_keys_t keys = {.stack = stack, .def = def, .gc = c->gc};
    cv_stack_purge_args_t args = {.age = c->age, .stack_prefix = c->prefix};
    if (cv_redis_call(c->w->redis, CV_SCRIPT_STACK_PURGE, keys.v, args.v, 0, NULL, NULL, on_purged,
                      c) != 0)
        finish(c, CV_EREDIS, CV_ANSWER_INVALID);
}

/* ---- the sweep of retired traversals ---- */

static int sweep_call(purge_ctx_t *c);

static void on_swept(cv_redis_t *r, redisReply *rep, void *ud)
{
    purge_ctx_t *c = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_TRAVERSAL_SWEEP, rep);
    if (answer == CV_ANSWER_AGAIN && !c->w->stopping) {
        snprintf(c->traversal, sizeof(c->traversal), "%s",
                 cv_reply_str(rep, CV_TRAVERSAL_SWEEP_R_TRAVERSAL));
        snprintf(c->cursor, sizeof(c->cursor), "%s",
                 cv_reply_str(rep, CV_TRAVERSAL_SWEEP_R_CURSOR));
        if (sweep_call(c) != 0)
            finish(c, CV_EREDIS, CV_ANSWER_INVALID);
    } else if (answer == CV_ANSWER_DONE && c->purge) {
        purge_call(c);
    } else if (answer == CV_ANSWER_DONE) {
        finish(c, 0, answer);
    } else {
        if (rep && rep->type == REDIS_REPLY_ERROR)
            cv_warn("purge: sweeping the traversals of stack %s: %s", c->id, rep->str);
        finish(c, CV_EREDIS, answer);
    }
}

/* 0, or CV_EREDIS when not sent. */
static int sweep_call(purge_ctx_t *c)
{
    cv_traversal_sweep_keys_t keys = {.gc = c->gc};
    cv_traversal_sweep_args_t args = {
        .stack_prefix = c->prefix,
        .traversal = c->traversal,
        .cursor = c->cursor,
        .count = SWEEP_BATCH,
    };
    return cv_redis_call(c->w->redis, CV_SCRIPT_TRAVERSAL_SWEEP, keys.v, args.v, 0, NULL, NULL,
                         on_swept, c);
}

/* The first call: on failure nothing was sent and cb is not called. */
static int start(purge_ctx_t *c)
{
    if (sweep_call(c) == 0)
        return 0;
    free(c);
    return CV_EREDIS;
}

int cv_purge_sweep(cv_worker_t *w, const char *stack, cv_purge_cb cb, void *ud)
{
    purge_ctx_t *c = ctx_new(w, stack, cb, ud);
    if (!c)
        return CV_ENOMEM;
    return start(c);
}

int cv_purge_stack(cv_worker_t *w, const char *stack, long age_s, cv_purge_cb cb, void *ud)
{
    purge_ctx_t *c = ctx_new(w, stack, cb, ud);
    if (!c)
        return CV_ENOMEM;
    c->purge = true;
    snprintf(c->age, sizeof(c->age), "%ld", age_s);
    return start(c);
}

void cv_purge_note_deleted(cv_worker_t *w, const char *stack)
{
    char key[CV_KEY_MAX], now[32];
    cv_key(key, sizeof(key), CV_KEY_DELETED, NULL, 0, NULL);
    snprintf(now, sizeof(now), "%.3f", cv_now());
    const char *argv[] = {"ZADD", key, "NX", now, stack};
    cv_redis_argv(w->redis, 5, argv, NULL, NULL, NULL);
}
