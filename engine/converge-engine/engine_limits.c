/*
 * The engine's limits, published: the hash <prefix>limits (option name ->
 * value, e.g. max-resources -> 100000) is what convergectl validate, submit
 * and update check a template against before they store anything, so that
 * they refuse with the engine's words what the engine would refuse.
 *
 * Written at start (tried every second until Redis takes it) and every
 * LIMITS_REFRESH_MS after, so that it comes back after a Redis restart or a
 * flush without the engines restarting. The hash has no expiry: a client
 * reading it while every engine is down still checks against the limits
 * they last ran with. Engines of one deployment are meant to share their
 * limits; when they differ, the one that wrote last is what clients see,
 * and every engine still enforces its own.
 */
#include "engine.h"

#include "cv_contract.h"
#include "cv_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define LIMITS_REFRESH_MS 30000
#define LIMITS_RETRY_MS 1000 /* until a write succeeded: Redis may not answer yet */

typedef struct limits_pub {
    uv_timer_t timer;
    cv_worker_t *w;
    uint64_t written; /* loop time of the last write Redis acknowledged; 0: none */
} limits_pub_t;

static void on_written(cv_redis_t *r, redisReply *rep, void *ud)
{
    limits_pub_t *p = ud;
    (void)r;
    if (rep && rep->type != REDIS_REPLY_ERROR)
        p->written = uv_now(p->w->loop);
    else
        cv_warn("limits: Redis refused the write of the engine's limits: %s",
                rep ? rep->str : "no reply");
}

static void publish(uv_timer_t *t)
{
    limits_pub_t *p = t->data;
    if (p->written && uv_now(p->w->loop) - p->written < LIMITS_REFRESH_MS)
        return;
    const cv_limits_t *l = &p->w->limits;
    char key[CV_KEY_MAX], values[CV_LIMIT__COUNT][24];
    const char *argv[2 + 2 * CV_LIMIT__COUNT];
    int argc = 0;
    cv_limits_key(key, sizeof(key));
    argv[argc++] = "HSET";
    argv[argc++] = key;
    for (int i = 0; i < CV_LIMIT__COUNT; i++) {
        snprintf(values[i], sizeof(values[i]), "%zu", cv_limits_get(l, (cv_limit_t)i));
        argv[argc++] = cv_limit_option((cv_limit_t)i);
        argv[argc++] = values[i];
    }
    /* Not connected yet (or Redis away): the next tick writes it. */
    cv_redis_argv(p->w->redis, argc, argv, NULL, on_written, p);
}

void *cv__engine_limits_start(cv_worker_t *w)
{
    limits_pub_t *p = calloc(1, sizeof(*p));
    if (!p) {
        cv_warn("limits: out of memory: the engine's limits are not published");
        return NULL;
    }
    p->w = w;
    uv_timer_init(w->loop, &p->timer);
    p->timer.data = p;
    uv_timer_start(&p->timer, publish, 0, LIMITS_RETRY_MS);
    return p;
}

static void on_closed(uv_handle_t *h)
{
    free(h->data);
}

void cv__engine_limits_stop(void *handle)
{
    limits_pub_t *p = handle;
    if (!p)
        return;
    uv_timer_stop(&p->timer);
    uv_close((uv_handle_t *)&p->timer, on_closed);
}
