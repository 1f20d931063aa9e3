#include "cv_redis_sub.h"

#include "cv__redis_uv.h"

#include "cv_base.h"
#include "cv_log.h"
#include "cv_redis.h"

#include <hiredis/async.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct cv_redis_sub {
    uv_loop_t *loop;
    const cv_opts_t *opts;
    char **channels;
    size_t nchannels;
    cv_redis_sub_cb cb;
    void *ud;
    redisAsyncContext *ac;
    uv_timer_t timer;
    unsigned backoff_ms;
    bool closing, warned;
};

static void reconnect_later(cv_redis_sub_t *s);

static void on_timer_closed(uv_handle_t *h)
{
    free(h->data);
}

static void on_message(redisAsyncContext *ac, void *reply, void *privdata)
{
    cv_redis_sub_t *s = privdata;
    redisReply *r = reply;
    (void)ac;
    if (!r || s->closing || r->type != REDIS_REPLY_ARRAY || r->elements < 3)
        return;
    const char *kind = r->element[0]->str;
    if (kind && strcmp(kind, "message") == 0 && r->element[2]->type == REDIS_REPLY_STRING)
        s->cb(s->ud, r->element[1]->str, r->element[2]->str);
    else if (kind && strcmp(kind, "subscribe") == 0 && r->element[2]->type == REDIS_REPLY_INTEGER &&
             (size_t)r->element[2]->integer == s->nchannels)
        s->cb(s->ud, NULL, NULL); /* every channel subscribed: resync */
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    cv_redis_sub_t *s = ac->data;
    if (status != REDIS_OK) {
        s->ac = NULL;
        if (!s->closing)
            reconnect_later(s);
        return;
    }
    s->backoff_ms = 0;
    s->warned = false;
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    cv_redis_sub_t *s = ac->data;
    (void)status;
    s->ac = NULL;
    if (s->closing) {
        uv_close((uv_handle_t *)&s->timer, on_timer_closed);
        return;
    }
    reconnect_later(s);
}

/* Warned once per outage, like an unreachable Redis. */
static void on_auth_refused(void *ud, const char *why)
{
    cv_redis_sub_t *s = ud;
    if (!s->warned)
        cv_warn("subscribing: %s", why);
    s->warned = true;
}

static int subscribe(cv_redis_sub_t *s)
{
    redisAsyncContext *ac = redisAsyncConnect(s->opts->redis_host, s->opts->redis_port);
    if (!ac)
        return CV_ENOMEM;
    if (ac->err) {
        if (!s->warned)
            cv_warn("subscribing at Redis %s:%d: %s", s->opts->redis_host, s->opts->redis_port,
                    ac->errstr);
        s->warned = true;
        redisAsyncFree(ac);
        return CV_EREDIS;
    }
    ac->data = s;
    if (cv__redis_uv_attach(ac, s->loop) != REDIS_OK) {
        redisAsyncFree(ac);
        return CV_ENOMEM;
    }
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    cv_redis_auth_async(ac, s->opts, on_auth_refused, s);
    if (s->opts->redis_db)
        redisAsyncCommand(ac, NULL, NULL, "SELECT %d", s->opts->redis_db);
    size_t argc = s->nchannels + 1;
    const char **argv = calloc(argc, sizeof(*argv));
    if (!argv) {
        redisAsyncFree(ac);
        return CV_ENOMEM;
    }
    argv[0] = "SUBSCRIBE";
    for (size_t i = 0; i < s->nchannels; i++)
        argv[i + 1] = s->channels[i];
    redisAsyncCommandArgv(ac, on_message, s, (int)argc, argv, NULL);
    free(argv);
    s->ac = ac;
    return 0;
}

static void on_timer(uv_timer_t *t)
{
    cv_redis_sub_t *s = t->data;
    if (subscribe(s) != 0)
        reconnect_later(s);
}

static void reconnect_later(cv_redis_sub_t *s)
{
    s->backoff_ms = s->backoff_ms ? s->backoff_ms * 2 : 100;
    if (s->backoff_ms > 2000)
        s->backoff_ms = 2000;
    uv_timer_start(&s->timer, on_timer, s->backoff_ms, 0);
}

int cv_redis_sub_open(cv_redis_sub_t **out, uv_loop_t *loop, const cv_opts_t *opts,
                      const char *const *channels, size_t nchannels, cv_redis_sub_cb cb, void *ud)
{
    cv_redis_sub_t *s = calloc(1, sizeof(*s));
    if (!s)
        return CV_ENOMEM;
    s->channels = calloc(nchannels + 1, sizeof(char *));
    if (!s->channels) {
        free(s);
        return CV_ENOMEM;
    }
    for (size_t i = 0; i < nchannels; i++)
        s->channels[i] = strdup(channels[i]);
    s->nchannels = nchannels;
    s->loop = loop;
    s->opts = opts;
    s->cb = cb;
    s->ud = ud;
    uv_timer_init(loop, &s->timer);
    s->timer.data = s;
    uv_timer_start(&s->timer, on_timer, 0, 0);
    *out = s;
    return 0;
}

void cv_redis_sub_close(cv_redis_sub_t *s)
{
    if (!s)
        return;
    s->closing = true;
    for (size_t i = 0; i < s->nchannels; i++)
        free(s->channels[i]);
    free(s->channels);
    s->channels = NULL;
    uv_timer_stop(&s->timer);
    if (s->ac)
        redisAsyncDisconnect(s->ac); /* on_disconnect closes the timer and frees */
    else
        uv_close((uv_handle_t *)&s->timer, on_timer_closed);
}
