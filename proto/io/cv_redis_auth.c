/*
 * AUTH on an asynchronous connection, and the one sentence that says a
 * Redis refused our credentials (naming the user, never the password).
 */
#include "cv_redis.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>

int cv_redis_auth_refused(const cv_opts_t *opts, const char *why, char *errstr, size_t errstr_size)
{
    return cv_seterr(errstr, errstr_size, CV_EAUTH,
                     "Redis at %s:%d refused the credentials of user %s: %s", opts->redis_host,
                     opts->redis_port, cv_opts_redis_user(opts), why);
}

typedef struct auth_call {
    const cv_opts_t *opts;
    void (*on_refused)(void *ud, const char *why);
    void *ud;
} auth_call_t;

/* A NULL reply is a lost connection, which the disconnect callback reports. */
static void on_auth(redisAsyncContext *ac, void *reply, void *privdata)
{
    auth_call_t *call = privdata;
    redisReply *r = reply;
    if (r && r->type == REDIS_REPLY_ERROR) {
        char why[512];
        cv_redis_auth_refused(call->opts, r->str, why, sizeof(why));
        call->on_refused(call->ud, why);
        redisAsyncDisconnect(ac);
    }
    free(call);
}

void cv_redis_auth_async(redisAsyncContext *ac, const cv_opts_t *opts,
                         void (*on_refused)(void *ud, const char *why), void *ud)
{
    const char *argv[3];
    int argc = cv_opts_redis_auth_argv(opts, argv);
    auth_call_t *call = argc ? malloc(sizeof(*call)) : NULL;
    if (!call)
        return; /* no password; or no memory, and the commands will say NOAUTH */
    *call = (auth_call_t){opts, on_refused, ud};
    if (redisAsyncCommandArgv(ac, on_auth, call, argc, argv, NULL) != REDIS_OK)
        free(call);
}
