/*
 * cv_http (cv_http.h): connections, their limits, requests and responses on
 * the loop.
 */
#include "cv_http.h"

#include "cv_base.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_CONNS = CV_HTTP_MAX_CONNS,
    MAX_CONNS_PER_PEER = CV_HTTP_MAX_CONNS_PER_PEER,
    HEAD_TIMEOUT_MS = CV_HTTP_HEAD_TIMEOUT_MS,
    STREAM_QUEUE_MAX = 1 << 20,
};

typedef enum { CONN_READING, CONN_HANDLING, CONN_STREAMING, CONN_ENDED } conn_state_t;

struct cv_http {
    uv_loop_t *loop;
    uv_tcp_t listener;
    cv_http_handler handler;
    void *ud;
    int port;
    int nconns; /* allocated and not yet freed */
    bool closing, listener_closed;
    cv_http_conn_t *conns;
    char discard[256]; /* what a peer sends after its head: read, not kept */
};

/*
 * A connection is freed when both its handles have closed and the handler
 * no longer holds it (it answered, ended its stream, or never got it).
 */
struct cv_http_conn {
    cv_http_t *server;
    cv_http_conn_t *prev, *next;
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_shutdown_t shutdown;
    int open_handles;
    bool closing; /* uv_close called on the handles */
    bool held;
    bool gone;     /* the peer left or the server dropped it: nothing more is sent */
    bool notified; /* on_gone called, or a send told the owner CV_EIO */
    bool head_only;
    conn_state_t state;
    char peer[INET6_ADDRSTRLEN]; /* the peer's address, without its port */
    void (*on_gone)(void *ud);
    void *gone_ud;
    size_t len;
    char buf[CV_HTTP_HEAD_MAX];
};

typedef struct write_req {
    uv_write_t req;
    char data[];
} write_req_t;

/* ------------------------------------------------------------------------ */
/* Connection lifetime                                                      */
/* ------------------------------------------------------------------------ */

static void server_maybe_free(cv_http_t *s)
{
    if (s->closing && s->listener_closed && s->nconns == 0)
        free(s);
}

static void conn_maybe_free(cv_http_conn_t *c)
{
    if (c->open_handles > 0 || c->held)
        return;
    cv_http_t *s = c->server;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
    free(c);
    server_maybe_free(s);
}

static void on_handle_closed(uv_handle_t *h)
{
    cv_http_conn_t *c = h->data;
    c->open_handles--;
    conn_maybe_free(c);
}

static void conn_close(cv_http_conn_t *c)
{
    if (c->closing)
        return;
    c->closing = true;
    c->gone = true;
    uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

/* The peer left (or the server drops it): a stream's owner is told once. */
static void conn_lost(cv_http_conn_t *c)
{
    bool tell = c->state == CONN_STREAMING && c->held && !c->notified && c->on_gone;
    c->notified = true;
    conn_close(c);
    if (tell)
        c->on_gone(c->gone_ud);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    conn_close(req->data);
}

/* Ends the connection once what is queued has been written. */
static void conn_finish(cv_http_conn_t *c)
{
    if (c->closing)
        return;
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        conn_close(c);
}

static void on_written(uv_write_t *req, int status)
{
    cv_http_conn_t *c = req->data;
    free(req);
    if (status < 0 && status != UV_ECANCELED)
        conn_lost(c);
}

/* Queues a copy of data; false when the connection cannot take it. */
static bool conn_write(cv_http_conn_t *c, const char *data, size_t len)
{
    if (c->gone)
        return false;
    write_req_t *w = malloc(sizeof(*w) + len);
    if (!w)
        return false;
    memcpy(w->data, data, len);
    w->req.data = c;
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0) {
        free(w);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Responses                                                                */
/* ------------------------------------------------------------------------ */

void cv_http_respond(cv_http_conn_t *c, int status, const char *content_type, const char *headers,
                     const void *body, size_t len)
{
    c->held = false;
    c->state = CONN_ENDED;
    if (c->gone) {
        conn_maybe_free(c);
        return;
    }
    char head[1024];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n%s\r\n",
                     status, cv_httpreq_reason(status), content_type, len, headers ? headers : "");
    if (n < 0 || (size_t)n >= sizeof(head)) {
        conn_close(c);
        return;
    }
    size_t sent = c->head_only ? 0 : len;
    char *all = malloc((size_t)n + sent + 1);
    if (!all) {
        conn_close(c);
        return;
    }
    memcpy(all, head, (size_t)n);
    if (sent)
        memcpy(all + n, body, sent);
    if (conn_write(c, all, (size_t)n + sent))
        conn_finish(c);
    else
        conn_close(c);
    free(all);
}

void cv_http_respond_text(cv_http_conn_t *c, int status, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof(text) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof(text) - 2)
        n = (int)sizeof(text) - 2;
    text[n++] = '\n';
    cv_http_respond(c, status, "text/plain; charset=utf-8", NULL, text, (size_t)n);
}

int cv_http_stream_start(cv_http_conn_t *c, const char *content_type, void (*on_gone)(void *ud),
                         void *ud)
{
    c->state = CONN_STREAMING;
    c->on_gone = on_gone;
    c->gone_ud = ud;
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nCache-Control: no-cache\r\n"
                     "Connection: close\r\n\r\n",
                     content_type);
    if (n < 0 || (size_t)n >= sizeof(head) || !conn_write(c, head, (size_t)n)) {
        c->notified = true;
        return CV_EIO;
    }
    return 0;
}

int cv_http_stream_send(cv_http_conn_t *c, const void *data, size_t len)
{
    if (!c->gone && uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > STREAM_QUEUE_MAX)
        conn_close(c); /* a reader this slow would make the server hold all it missed */
    if (c->head_only || (!c->gone && conn_write(c, data, len)))
        return 0;
    c->notified = true;
    return CV_EIO;
}

void cv_http_stream_end(cv_http_conn_t *c)
{
    c->held = false;
    c->state = CONN_ENDED;
    if (c->gone)
        conn_maybe_free(c);
    else
        conn_finish(c);
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */
/* ------------------------------------------------------------------------ */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    cv_http_conn_t *c = h->data;
    if (c->state == CONN_READING)
        *buf = uv_buf_init(c->buf + c->len, (unsigned)(sizeof(c->buf) - c->len));
    else
        *buf = uv_buf_init(c->server->discard, sizeof(c->server->discard));
}

/* The head is complete: the handler gets the request. */
static void dispatch(cv_http_conn_t *c, const cv_http_req_t *req)
{
    uv_timer_stop(&c->timer);
    c->state = CONN_HANDLING;
    c->held = true;
    c->head_only = strcmp(req->method, "HEAD") == 0;
    if (strcmp(req->method, "GET") != 0 && !c->head_only) {
        cv_http_respond(c, 405, "text/plain; charset=utf-8", "Allow: GET, HEAD\r\n",
                        "only GET and HEAD\n", 18);
        return;
    }
    c->server->handler(c, req, c->server->ud);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    cv_http_conn_t *c = stream->data;
    if (nread < 0) {
        conn_lost(c);
        return;
    }
    if (c->state != CONN_READING || nread == 0)
        return;
    c->len += (size_t)nread;
    cv_http_req_t req;
    char why[256];
    int rc = cv_httpreq_parse(c->buf, c->len, &req, why, sizeof(why));
    if (rc > 0) {
        dispatch(c, &req);
    } else if (rc < 0) {
        c->state = CONN_HANDLING;
        c->held = true;
        cv_http_respond_text(c, rc == CV_ETOOBIG ? 431 : 400, "%s", why);
    }
}

static void on_head_timeout(uv_timer_t *t)
{
    cv_http_conn_t *c = t->data;
    if (c->state == CONN_READING)
        conn_close(c);
}

/* The peer's address (not its port: one client opens many), "" if unknown. */
static void conn_name_peer(cv_http_conn_t *c)
{
    struct sockaddr_storage sa;
    int len = sizeof(sa);
    c->peer[0] = '\0';
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&sa, &len) != 0)
        return;
    if (sa.ss_family == AF_INET6)
        uv_ip6_name((struct sockaddr_in6 *)&sa, c->peer, sizeof(c->peer));
    else
        uv_ip4_name((struct sockaddr_in *)&sa, c->peer, sizeof(c->peer));
}

/* The connections open besides c (from c's peer only when `peer`), and the
 * oldest of them still waiting for its request head (the list is newest
 * first), or NULL. */
static int count_open(const cv_http_t *s, const cv_http_conn_t *c, bool peer,
                      cv_http_conn_t **oldest_idle)
{
    int n = 0;
    *oldest_idle = NULL;
    for (cv_http_conn_t *o = s->conns; o; o = o->next) {
        if (o == c || o->closing || (peer && strcmp(o->peer, c->peer) != 0))
            continue;
        n++;
        if (o->state == CONN_READING)
            *oldest_idle = o;
    }
    return n;
}

/*
 * Makes room for the new connection c. A peer at its share, or a server at
 * its cap, loses its oldest connection that has not sent its request head
 * yet: idle connections are what a slow or hostile client holds to starve
 * the others, and closing them keeps the server answering everyone, that
 * peer too. False when every connection that counts is busy with a
 * request or a stream (c is then refused).
 */
static bool make_room(cv_http_t *s, cv_http_conn_t *c)
{
    cv_http_conn_t *idle;
    if (count_open(s, c, true, &idle) >= MAX_CONNS_PER_PEER) {
        if (!idle)
            return false;
        conn_close(idle);
    }
    if (count_open(s, c, false, &idle) >= MAX_CONNS) {
        if (!idle)
            return false;
        conn_close(idle);
    }
    return true;
}

static void on_connection(uv_stream_t *listener, int status)
{
    cv_http_t *s = listener->data;
    if (status < 0 || s->closing)
        return;
    cv_http_conn_t *c = calloc(1, sizeof(*c));
    if (!c)
        return;
    c->server = s;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    uv_tcp_init(s->loop, &c->tcp);
    uv_timer_init(s->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->open_handles = 2;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    conn_name_peer(c);
    if (!make_room(s, c)) {
        c->state = CONN_HANDLING;
        c->held = true;
        cv_http_respond_text(c, 503,
                             "too many connections (%d at most, %d from one address), all busy",
                             MAX_CONNS, MAX_CONNS_PER_PEER);
        return;
    }
    uv_timer_start(&c->timer, on_head_timeout, HEAD_TIMEOUT_MS, 0);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* ------------------------------------------------------------------------ */
/* The server                                                               */
/* ------------------------------------------------------------------------ */

/* host:port as a socket address: a literal IP, or a name resolved once. */
static int resolve(const char *host, int port, struct sockaddr_storage *sa)
{
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)sa) == 0 ||
        uv_ip6_addr(host, port, (struct sockaddr_in6 *)sa) == 0)
        return 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, NULL, &hints, &ai) != 0)
        return CV_EINVAL;
    memcpy(sa, ai->ai_addr, ai->ai_addrlen);
    if (ai->ai_family == AF_INET)
        ((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
    freeaddrinfo(ai);
    return 0;
}

static void on_listener_closed(uv_handle_t *h)
{
    cv_http_t *s = h->data;
    s->listener_closed = true;
    server_maybe_free(s);
}

int cv_http_start(uv_loop_t *loop, const char *addr, cv_http_handler handler, void *ud,
                  cv_http_t **out, char *errstr, size_t errstr_size)
{
    char host[256];
    int port;
    int rc = cv_httpreq_addr(addr, host, sizeof(host), &port, errstr, errstr_size);
    if (rc)
        return rc;
    struct sockaddr_storage sa;
    if (resolve(host, port, &sa) != 0)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "address \"%s\": unknown host \"%s\"",
                         addr, host);
    cv_http_t *s = calloc(1, sizeof(*s));
    if (!s)
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    s->loop = loop;
    s->handler = handler;
    s->ud = ud;
    uv_tcp_init(loop, &s->listener);
    s->listener.data = s;
    int uvrc = uv_tcp_bind(&s->listener, (const struct sockaddr *)&sa, 0);
    if (uvrc == 0)
        uvrc = uv_listen((uv_stream_t *)&s->listener, 128, on_connection);
    if (uvrc != 0) {
        s->closing = true;
        uv_close((uv_handle_t *)&s->listener, on_listener_closed);
        return cv_seterr(errstr, errstr_size, CV_EIO, "cannot listen on %s: %s", addr,
                         uv_strerror(uvrc));
    }
    struct sockaddr_storage bound;
    int bound_len = sizeof(bound);
    uv_tcp_getsockname(&s->listener, (struct sockaddr *)&bound, &bound_len);
    s->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);
    *out = s;
    return 0;
}

int cv_http_port(const cv_http_t *s)
{
    return s->port;
}

void cv_http_close(cv_http_t *s)
{
    s->closing = true;
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
    for (cv_http_conn_t *c = s->conns, *next; c; c = next) {
        next = c->next;
        conn_lost(c);
    }
}
