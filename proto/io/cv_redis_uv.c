#include "cv__redis_uv.h"

#include <stdlib.h>

typedef struct uv_events {
    redisAsyncContext *context; /* NULL once hiredis cleaned up */
    uv_poll_t handle;
    int events; /* what hiredis wants: UV_READABLE | UV_WRITABLE */
} uv_events_t;

static void on_poll(uv_poll_t *handle, int status, int events)
{
    uv_events_t *p = handle->data;
    if (status < 0) {
        /* libuv stopped the handle; reading makes hiredis see the socket's
         * error and disconnect. Should the read find nothing wrong, keep
         * polling for what hiredis asked. */
        if (p->context)
            redisAsyncHandleRead(p->context);
        if (p->context && p->events)
            uv_poll_start(&p->handle, p->events, on_poll);
        return;
    }
    if (p->context && (events & UV_READABLE))
        redisAsyncHandleRead(p->context);
    if (p->context && (events & UV_WRITABLE))
        redisAsyncHandleWrite(p->context);
}

static void update(uv_events_t *p)
{
    if (p->events)
        uv_poll_start(&p->handle, p->events, on_poll);
    else
        uv_poll_stop(&p->handle);
}

static void add_read(void *privdata)
{
    uv_events_t *p = privdata;
    p->events |= UV_READABLE;
    update(p);
}

static void del_read(void *privdata)
{
    uv_events_t *p = privdata;
    p->events &= ~UV_READABLE;
    update(p);
}

static void add_write(void *privdata)
{
    uv_events_t *p = privdata;
    p->events |= UV_WRITABLE;
    update(p);
}

static void del_write(void *privdata)
{
    uv_events_t *p = privdata;
    p->events &= ~UV_WRITABLE;
    update(p);
}

static void on_closed(uv_handle_t *handle)
{
    free(handle->data);
}

static void cleanup(void *privdata)
{
    uv_events_t *p = privdata;
    p->context = NULL; /* hiredis is freeing it */
    uv_close((uv_handle_t *)&p->handle, on_closed);
}

int cv__redis_uv_attach(redisAsyncContext *ac, uv_loop_t *loop)
{
    if (ac->ev.data)
        return REDIS_ERR;
    uv_events_t *p = calloc(1, sizeof(*p));
    if (!p)
        return REDIS_ERR;
    if (uv_poll_init(loop, &p->handle, ac->c.fd) != 0) {
        free(p);
        return REDIS_ERR;
    }
    p->handle.data = p;
    p->context = ac;
    ac->ev.addRead = add_read;
    ac->ev.delRead = del_read;
    ac->ev.addWrite = add_write;
    ac->ev.delWrite = del_write;
    ac->ev.cleanup = cleanup;
    ac->ev.data = p;
    return REDIS_OK;
}
