/*
 * cv_redis — the asynchronous Redis connection of a worker.
 *
 * hiredis async on the worker's libuv loop, so commands issued back to back
 * are pipelined on one connection. Scripts (proto/lua) are loaded at connect
 * and called by SHA; after a Redis restart (NOSCRIPT) they are reloaded and
 * the caller sees an error reply and retries its job. A lost connection is
 * re-established with capped exponential backoff; callbacks of commands in
 * flight receive reply == NULL.
 */
#ifndef CV_REDIS_H
#define CV_REDIS_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "cv_opts.h"

typedef enum {
    CV_SCRIPT_STACK_BEGIN,
    CV_SCRIPT_STACK_EXPANDED,
    CV_SCRIPT_CHECK_BEGIN,
    CV_SCRIPT_CHECK_FINISH,
    CV_SCRIPT_LEASE_RELEASE,
    CV_SCRIPT_OBSERVE_LOAD,
    CV_SCRIPT_NODE_DONE,
    CV_SCRIPT_NODE_FAILED,
    CV_SCRIPT_STACK_FINISH,
    CV_SCRIPT_STACK_DEFINITION,
    CV_SCRIPT_RESOURCE_REF,
    CV_SCRIPT_LEASE_RENEW,
    CV_SCRIPT_STACK_TOUCH,
    CV_SCRIPT_STACK_REAP,
    CV_SCRIPT__COUNT
} cv_script_t;

typedef struct cv_redis cv_redis_t;

/* reply is NULL when the connection was lost; it is freed after the call. */
typedef void (*cv_redis_cb)(cv_redis_t *r, redisReply *reply, void *ud);

/* Connects (synchronously loading the scripts first). Returns 0 or CV_EREDIS. */
int cv_redis_open(cv_redis_t **out, uv_loop_t *loop, const cv_opts_t *opts, char *errstr,
                  size_t errstr_size);
void cv_redis_close(cv_redis_t *r);

/* Whether the connection is up right now. A command whose reply is NULL
 * (the connection was lost under it) sees false already. */
bool cv_redis_connected(const cv_redis_t *r);

/* Connected, and the last reply was not Redis saying it cannot serve
 * (LOADING, BUSY, MASTERDOWN, TRYAGAIN, CLUSTERDOWN). */
bool cv_redis_available(const cv_redis_t *r);

/* Called when the connection comes up (up, why "") or is lost or cannot be
 * made (!up, why says what happened) — on every attempt while Redis is away,
 * so the listener decides what an outage is — and when Redis answers that it
 * cannot serve (!up) or serves again (up). Without a listener these are
 * logged as warnings. */
typedef void (*cv_redis_state_cb)(void *ud, bool up, const char *why);
void cv_redis_on_state(cv_redis_t *r, cv_redis_state_cb cb, void *ud);

/* Sends a command given as an argument vector. Returns 0, or CV_EREDIS when
 * not connected (cb is then not called). */
int cv_redis_argv(cv_redis_t *r, int argc, const char **argv, const size_t *lens, cv_redis_cb cb,
                  void *ud);

/* Calls a script: EVALSHA sha nkeys keys... args... */
int cv_redis_script(cv_redis_t *r, cv_script_t s, int nkeys, const char **keys, int nargs,
                    const char **args, const size_t *arglens, cv_redis_cb cb, void *ud);

/* Full text of a script (prelude + body), for synchronous callers (the CLI). */
const char *cv_redis_script_text(cv_script_t s);

/* Connects synchronously (for the CLI and setup); NULL with errstr on failure. */
redisContext *cv_redis_connect_sync(const cv_opts_t *opts, char *errstr, size_t errstr_size);

/* Runs a script on a synchronous context (EVAL). Returns the reply or NULL. */
redisReply *cv_redis_script_sync(redisContext *c, cv_script_t s, int nkeys, const char **keys,
                                 int nargs, const char **args);

/* Helpers to read replies: element i as string ("" when absent or not a string). */
const char *cv_reply_str(const redisReply *r, size_t i);
long long cv_reply_int(const redisReply *r, size_t i);

#endif
