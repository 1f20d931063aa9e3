/*
 * Internal to cv_redis: hiredis's async context on a libuv loop.
 *
 * This replaces hiredis 0.14's adapters/libuv.h, which ignores a poll error:
 * libuv reports a socket error (POLLERR, e.g. a write after Redis closed the
 * connection got a reset) as a negative status and stops the handle, and
 * that adapter then returned without telling hiredis — the connection was
 * dead for good while the worker believed it connected, and never
 * reconnected after a Redis restart. Here an error is handed to hiredis as
 * a read, which fails and disconnects, and reconnecting starts.
 */
#ifndef CV__REDIS_UV_H
#define CV__REDIS_UV_H

#include <hiredis/async.h>
#include <uv.h>

/* Attaches `ac` to `loop`; REDIS_OK or REDIS_ERR. */
int cv__redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop);

#endif
