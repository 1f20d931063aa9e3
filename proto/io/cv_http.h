/*
 * cv_http — a small HTTP/1.1 server on a libuv loop, for what Converge
 * serves besides its work: Prometheus metrics and the read-only web
 * console. GET and HEAD only; one request per connection (every response
 * says "Connection: close"), which is all a scraper or a console page
 * needs and keeps the server free of keep-alive state.
 *
 * The handler is called on the loop with the parsed request and answers
 * at once or later (after a Redis reply, say) through cv_http_respond, or
 * opens a stream (server-sent events) with cv_http_stream_start. The
 * connection stays valid until one of those ends it, whatever the peer
 * does meanwhile: a response to a peer that left is dropped.
 *
 * Limits, so that no client starves the others (docs/web.md): a request
 * head of CV_HTTP_HEAD_MAX bytes at most, sent whole within
 * CV_HTTP_HEAD_TIMEOUT_MS of connecting (else the connection is closed,
 * however slowly it trickles in); CV_HTTP_MAX_CONNS_PER_PEER connections
 * from one address and CV_HTTP_MAX_CONNS in all: a new connection past
 * either closes the oldest one (of that peer, or of anyone) that has not
 * sent its head yet, and is refused with 503 only when all are busy; 1 MiB
 * queued on a stream whose reader does not keep up (it is then ended as if
 * the peer left).
 */
#ifndef CV_HTTP_H
#define CV_HTTP_H

#include <stddef.h>
#include <uv.h>

#include "cv_base.h"

#define CV_HTTP_MAX_CONNS 256
#define CV_HTTP_MAX_CONNS_PER_PEER 32
#define CV_HTTP_HEAD_TIMEOUT_MS 5000

typedef struct cv_http cv_http_t;
typedef struct cv_http_conn cv_http_conn_t;

/* Called once per request; must end in cv_http_respond or a stream. */
typedef void (*cv_http_handler)(cv_http_conn_t *c, const cv_http_req_t *req, void *ud);

/* Listens on addr ("HOST:PORT", "[IPV6]:PORT", ":PORT"; port 0: a free
 * one). 0, or CV_EINVAL / CV_EIO with errstr naming the address and why. */
int cv_http_start(uv_loop_t *loop, const char *addr, cv_http_handler handler, void *ud,
                  cv_http_t **out, char *errstr, size_t errstr_size);

/* The port listened on (the one chosen when 0 was asked). */
int cv_http_port(const cv_http_t *s);

/* Stops listening and drops every connection (streams get their on_gone);
 * the memory goes once the handles have closed and every connection the
 * handler still holds has been answered. */
void cv_http_close(cv_http_t *s);

/* Answers and ends the request: status, Content-Type, extra header lines
 * (each ending in "\r\n", or NULL) and the body (none sent for HEAD). */
void cv_http_respond(cv_http_conn_t *c, int status, const char *content_type, const char *headers,
                     const void *body, size_t len);

/* cv_http_respond with a text/plain body from a format. */
void cv_http_respond_text(cv_http_conn_t *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Answers 200 with content_type and no length: what follows, sent with
 * cv_http_stream_send, is the body until cv_http_stream_end. on_gone(ud) is
 * called once if the peer leaves (or reads too slowly, or the server
 * closes) first; the owner must then call cv_http_stream_end. 0, or CV_EIO
 * when the peer has already left (then end it at once).
 */
int cv_http_stream_start(cv_http_conn_t *c, const char *content_type, void (*on_gone)(void *ud),
                         void *ud);
int cv_http_stream_send(cv_http_conn_t *c, const void *data, size_t len);
void cv_http_stream_end(cv_http_conn_t *c);

#endif
