/*
 * The stack page's live graph: a server-sent event stream per open page
 * (web_server.h). Each stream reads the stack's graph document every
 * stream_interval_ms and sends it when it changed, so a page sees every
 * resource turn green without asking; a comment line every 15 s keeps
 * proxies from closing a quiet stream.
 */
#include "web_server.h"

#include "web_api.h"

#include "cv_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEPALIVE_MS 15000

typedef struct web_stream {
    web_server_t *server;
    cv_http_conn_t *conn;
    uv_timer_t timer;
    char stack[WEB_NAME_MAX];
    char *last;            /* the document last sent */
    uint64_t last_sent_ms; /* when anything was last sent */
    unsigned long seq;     /* the id of the next event */
    struct web_stream *next;
} web_stream_t;

static web_stream_t *streams;

static void on_closed(uv_handle_t *h)
{
    web_stream_t *st = h->data;
    free(st->last);
    free(st);
}

/* Ends the stream: the connection now, the memory once the timer closed. */
static void stream_end(web_stream_t *st)
{
    for (web_stream_t **p = &streams; *p; p = &(*p)->next) {
        if (*p == st) {
            *p = st->next;
            break;
        }
    }
    uv_timer_stop(&st->timer);
    cv_http_stream_end(st->conn);
    uv_close((uv_handle_t *)&st->timer, on_closed);
}

static void on_gone(void *ud)
{
    stream_end(ud);
}

static int send_event(web_stream_t *st, const char *event, const char *data)
{
    size_t n = strlen(data) + strlen(event) + 64;
    char *buf = malloc(n);
    int len = snprintf(buf, n, "id: %lu\nevent: %s\ndata: %s\n\n", st->seq++, event, data);
    int rc = cv_http_stream_send(st->conn, buf, (size_t)len);
    free(buf);
    st->last_sent_ms = uv_now(st->server->loop);
    return rc;
}

/* One look at the stack: the graph when it changed, "gone" when the
 * stack is; a keepalive comment when nothing was sent for a while. */
static void on_tick(uv_timer_t *t)
{
    web_stream_t *st = t->data;
    int status = 200;
    json_t *doc = web_api_stack_graph(st->server->cli, st->stack, &status);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(doc);
    int rc = 0;
    if (text && (!st->last || strcmp(text, st->last) != 0)) {
        rc = send_event(st, "graph", text);
        free(st->last);
        st->last = text;
        text = NULL;
    } else if (!doc && status == 404) {
        send_event(st, "gone", "{}");
        rc = -1;
    } else if (uv_now(st->server->loop) - st->last_sent_ms >= KEEPALIVE_MS) {
        rc = cv_http_stream_send(st->conn, ": keepalive\n\n", 13);
        st->last_sent_ms = uv_now(st->server->loop);
    }
    free(text);
    if (rc != 0)
        stream_end(st);
}

void web_stream_start(web_server_t *s, cv_http_conn_t *c, const char *stack)
{
    int status = 200;
    json_t *doc = web_api_stack_graph(s->cli, stack, &status);
    if (!doc) {
        web_server_json(c, status,
                        status == 404 ? web_api_error("stack %s not found", stack)
                                      : web_api_error("Redis did not answer as expected"));
        return;
    }
    json_decref(doc);
    web_stream_t *st = calloc(1, sizeof(*st));
    st->server = s;
    st->conn = c;
    snprintf(st->stack, sizeof(st->stack), "%s", stack);
    uv_timer_init(s->loop, &st->timer);
    st->timer.data = st;
    st->next = streams;
    streams = st;
    if (cv_http_stream_start(c, "text/event-stream", on_gone, st) != 0) {
        stream_end(st);
        return;
    }
    cv_http_stream_send(c, "retry: 2000\n\n", 13);
    on_tick(&st->timer);
    if (!uv_is_closing((uv_handle_t *)&st->timer))
        uv_timer_start(&st->timer, on_tick, (uint64_t)s->stream_interval_ms,
                       (uint64_t)s->stream_interval_ms);
}

void web_stream_close_all(void)
{
    while (streams)
        stream_end(streams);
}
