/*
 * The stack page's live graph: a server-sent event stream per open page
 * (web_server.h). Each stream reads the stack's graph document every
 * stream_interval_ms (off the loop, web_reads.h) and sends it when it changed, so a page sees every
 * resource turn green without asking; a comment line every 15 s keeps
 * proxies from closing a quiet stream.
 */
#include "web_server.h"

#include "web_api.h"
#include "web_reads.h"

#include "cv_io.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEPALIVE_MS 15000

typedef struct web_stream {
    web_server_t *server;
    cv_http_conn_t *conn;
    uv_timer_t timer;
    char stack[WEB_NAME_MAX]; /* read by the pool thread: never changed */
    char *last;               /* the document last sent */
    uint64_t last_sent_ms;    /* when anything was last sent */
    unsigned long seq;        /* the id of the next event */
    bool reading;             /* a read of the graph is out (web_reads.h) */
    bool ended, timer_closed; /* freed when both, and no read is out */
    struct web_stream *next;
} web_stream_t;

static web_stream_t *streams;

static void maybe_free(web_stream_t *st)
{
    if (st->ended && st->timer_closed && !st->reading) {
        free(st->last);
        free(st);
    }
}

static void on_closed(uv_handle_t *h)
{
    web_stream_t *st = h->data;
    st->timer_closed = true;
    maybe_free(st);
}

/* Ends the stream: the connection now, the memory once the timer closed
 * and the read out (if any) came back. */
static void stream_end(web_stream_t *st)
{
    for (web_stream_t **p = &streams; *p; p = &(*p)->next) {
        if (*p == st) {
            *p = st->next;
            break;
        }
    }
    st->ended = true;
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
    if (!buf)
        return -1;
    int len = snprintf(buf, n, "id: %lu\nevent: %s\ndata: %s\n\n", st->seq++, event, data);
    int rc = cv_http_stream_send(st->conn, buf, (size_t)len);
    free(buf);
    st->last_sent_ms = uv_now(st->server->loop);
    return rc;
}

static json_t *read_graph(cli_t *cli, void *arg, int *status)
{
    web_stream_t *st = arg;
    return web_api_stack_graph(cli, st->stack, status);
}

/* What one look at the stack found: the graph when it changed, "gone"
 * when the stack is; a keepalive comment when nothing was sent for a
 * while. Ends the stream when it cannot go on. */
static void send_look(web_stream_t *st, json_t *doc, int status)
{
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

static void on_look(json_t *doc, int status, void *arg)
{
    web_stream_t *st = arg;
    st->reading = false;
    if (st->ended) {
        json_decref(doc);
        maybe_free(st);
        return;
    }
    send_look(st, doc, status);
}

static void on_tick(uv_timer_t *t)
{
    web_stream_t *st = t->data;
    if (st->reading)
        return; /* Redis is slower than the interval: one read at a time */
    st->reading = true;
    web_reads_ask(st->server->reads, read_graph, on_look, st);
}

/* The first look decides between a stream and an error document. */
static void on_first_look(json_t *doc, int status, void *arg)
{
    web_stream_t *st = arg;
    web_server_t *s = st->server;
    st->reading = false;
    if (!doc) {
        web_server_json(st->conn, status,
                        status == 404 ? web_api_error("stack %s not found", st->stack)
                                      : web_api_error("Redis did not answer as expected"));
        free(st);
        return;
    }
    uv_timer_init(s->loop, &st->timer);
    st->timer.data = st;
    st->next = streams;
    streams = st;
    if (cv_http_stream_start(st->conn, "text/event-stream", on_gone, st) != 0 ||
        cv_http_stream_send(st->conn, "retry: 2000\n\n", 13) != 0) {
        json_decref(doc);
        stream_end(st);
        return;
    }
    send_look(st, doc, status);
    if (!st->ended)
        uv_timer_start(&st->timer, on_tick, (uint64_t)s->stream_interval_ms,
                       (uint64_t)s->stream_interval_ms);
}

void web_stream_start(web_server_t *s, cv_http_conn_t *c, const char *stack)
{
    web_stream_t *st = calloc(1, sizeof(*st));
    if (!st) {
        cv_http_respond_text(c, 503, "out of memory\n");
        return;
    }
    st->server = s;
    st->conn = c;
    snprintf(st->stack, sizeof(st->stack), "%s", stack);
    st->reading = true;
    web_reads_ask(s->reads, read_graph, on_first_look, st);
}

void web_stream_close_all(void)
{
    while (streams)
        stream_end(streams);
}
