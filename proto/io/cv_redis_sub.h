/*
 * cv_redis_sub — a Redis pub/sub subscription on its own connection (a
 * subscribed connection can send nothing else), on a libuv loop.
 *
 * It subscribes to a fixed list of channels and hands every message to the
 * listener. A lost connection is re-established with capped backoff and
 * the channels subscribed again; the listener is then called with channel
 * NULL, because messages published while it was away are lost: it must
 * re-read what they would have told it (pub/sub is a hint, never the
 * state).
 */
#ifndef CV_REDIS_SUB_H
#define CV_REDIS_SUB_H

#include <stddef.h>
#include <uv.h>

#include "cv_opts.h"

typedef struct cv_redis_sub cv_redis_sub_t;

/* A message on `channel`, or (channel NULL) subscribed (again): resync. */
typedef void (*cv_redis_sub_cb)(void *ud, const char *channel, const char *message);

/* Starts subscribing (connecting in the background). Returns 0 or CV_ENOMEM. */
int cv_redis_sub_open(cv_redis_sub_t **out, uv_loop_t *loop, const cv_opts_t *opts,
                      const char *const *channels, size_t nchannels, cv_redis_sub_cb cb, void *ud);
void cv_redis_sub_close(cv_redis_sub_t *s);

#endif
