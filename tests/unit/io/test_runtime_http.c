/*
 * Specification of the HTTP server (proto/io/cv_http.h) over real loopback
 * sockets: the server runs on a libuv loop in the test's thread, a client
 * thread speaks to it with plain blocking sockets, and each test reads what
 * came back on the wire. Answers given later, peers that leave first and
 * streams are covered; LeakSanitizer (the sanitizer build) checks that a
 * closed server leaves nothing behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_http.h"

#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fixture {
    uv_loop_t loop;
    uv_async_t done;
    cv_http_t *server;
    int port;
    /* the client's side */
    const char *request;
    bool leave_at_once; /* close right after sending */
    char response[8192];
    /* the handler's side */
    uv_timer_t later;
    cv_http_conn_t *pending;
    int events_sent;
    bool gone_called;
    bool client_done;
    const char *mode; /* what the handler does: "now", "later", "stream" */
    int idle;         /* connections the client opens first and never uses */
    bool oldest_idle_closed;
} fixture_t;

/* ------------------------------------------------------------------------ */
/* The client thread                                                        */
/* ------------------------------------------------------------------------ */

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Whether the server closed fd within 2 s (end of file, nothing sent). */
static bool closed_by_server(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b;
    return poll(&p, 1, 2000) == 1 && read(fd, &b, 1) == 0;
}

static void *client(void *arg)
{
    fixture_t *f = arg;
    int idle[CV_HTTP_MAX_CONNS_PER_PEER];
    for (int i = 0; i < f->idle; i++)
        idle[i] = connect_to(f->port);
    int fd = connect_to(f->port);
    if (fd >= 0) {
        ssize_t w = write(fd, f->request, strlen(f->request));
        (void)w;
        size_t n = 0;
        ssize_t r;
        while (!f->leave_at_once &&
               (r = read(fd, f->response + n, sizeof(f->response) - 1 - n)) > 0)
            n += (size_t)r;
        f->response[n] = '\0';
        close(fd);
    }
    if (f->idle > 0)
        f->oldest_idle_closed = idle[0] >= 0 && closed_by_server(idle[0]);
    for (int i = 0; i < f->idle; i++)
        if (idle[i] >= 0)
            close(idle[i]);
    uv_async_send(&f->done);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The handler                                                              */
/* ------------------------------------------------------------------------ */

static void maybe_finish(fixture_t *f);

static void on_gone(void *ud)
{
    fixture_t *f = ud;
    f->gone_called = true;
    uv_timer_stop(&f->later);
    cv_http_stream_end(f->pending);
    f->pending = NULL;
    maybe_finish(f);
}

static void on_later(uv_timer_t *t)
{
    fixture_t *f = t->data;
    if (strcmp(f->mode, "later") == 0) {
        uv_timer_stop(t);
        cv_http_respond(f->pending, 200, "text/plain", NULL, "late\n", 5);
        f->pending = NULL;
        maybe_finish(f);
        return;
    }
    char event[64];
    int n = snprintf(event, sizeof(event), "id: %d\ndata: tick\n\n", ++f->events_sent);
    if (cv_http_stream_send(f->pending, event, (size_t)n) != 0 || f->events_sent == 3) {
        uv_timer_stop(t);
        cv_http_stream_end(f->pending);
        f->pending = NULL;
        maybe_finish(f);
    }
}

static void handler(cv_http_conn_t *c, const cv_http_req_t *req, void *ud)
{
    fixture_t *f = ud;
    if (strcmp(f->mode, "now") == 0) {
        char body[256];
        int n = snprintf(body, sizeof(body), "path=%s query=%s\n", req->path, req->query);
        cv_http_respond(c, strcmp(req->path, "/") == 0 ? 200 : 404, "text/plain", NULL, body,
                        (size_t)n);
        return;
    }
    f->pending = c;
    if (strcmp(f->mode, "stream") == 0)
        assert_int_equal(cv_http_stream_start(c, "text/event-stream", on_gone, f), 0);
    uv_timer_start(&f->later, on_later, 20, 20);
}

/* ------------------------------------------------------------------------ */
/* Running one exchange                                                     */
/* ------------------------------------------------------------------------ */

/* Closes everything once the client has finished and the handler holds
 * no connection (a late answer to a peer that left is still given). */
static void maybe_finish(fixture_t *f)
{
    if (!f->client_done || f->pending)
        return;
    cv_http_close(f->server);
    uv_close((uv_handle_t *)&f->done, NULL);
    uv_close((uv_handle_t *)&f->later, NULL);
}

static void on_done(uv_async_t *a)
{
    fixture_t *f = a->data;
    f->client_done = true;
    maybe_finish(f);
}

/* Serves one request from the client thread, sent after `idle` connections
 * that send nothing; returns what it read. */
static const char *exchange_after(fixture_t *f, int idle, const char *mode, const char *request,
                                  bool leave)
{
    memset(f, 0, sizeof(*f));
    f->idle = idle;
    f->leave_at_once = leave;
    f->mode = mode;
    f->request = request;
    uv_loop_init(&f->loop);
    uv_async_init(&f->loop, &f->done, on_done);
    uv_timer_init(&f->loop, &f->later);
    f->done.data = f->later.data = f;
    char err[256];
    assert_int_equal(cv_http_start(&f->loop, "127.0.0.1:0", handler, f, &f->server, err, 256), 0);
    f->port = cv_http_port(f->server);
    assert_true(f->port > 0);
    pthread_t t;
    pthread_create(&t, NULL, client, f);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    pthread_join(t, NULL);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    return f->response;
}

static const char *exchange(fixture_t *f, const char *mode, const char *request, bool leave)
{
    return exchange_after(f, 0, mode, request, leave);
}

static void test_a_get_is_answered_with_length_and_close(void **state)
{
    (void)state;
    fixture_t f;
    const char *r = exchange(&f, "now", "GET /?a=1 HTTP/1.1\r\nHost: x\r\n\r\n", false);
    assert_non_null(strstr(r, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(r, "Content-Length: 17\r\n"));
    assert_non_null(strstr(r, "Connection: close\r\n"));
    assert_non_null(strstr(r, "\r\n\r\npath=/ query=a=1\n"));
}

static void test_a_head_gets_the_headers_without_the_body(void **state)
{
    (void)state;
    fixture_t f;
    const char *r = exchange(&f, "now", "HEAD /x HTTP/1.1\r\n\r\n", false);
    assert_non_null(strstr(r, "HTTP/1.1 404 Not Found\r\n"));
    assert_non_null(strstr(r, "Content-Length: 15\r\n"));
    assert_null(strstr(r, "path="));
}

static void test_other_methods_get_405_naming_the_allowed_ones(void **state)
{
    (void)state;
    fixture_t f;
    const char *r = exchange(&f, "now", "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", false);
    assert_non_null(strstr(r, "HTTP/1.1 405 Method Not Allowed\r\n"));
    assert_non_null(strstr(r, "Allow: GET, HEAD\r\n"));
}

static void test_a_malformed_request_gets_400_with_the_reason(void **state)
{
    (void)state;
    fixture_t f;
    const char *r = exchange(&f, "now", "GET nopath HTTP/1.1\r\n\r\n", false);
    assert_non_null(strstr(r, "HTTP/1.1 400 Bad Request\r\n"));
    assert_non_null(strstr(r, "the target must be a path"));
}

static void test_an_answer_given_later_reaches_the_peer(void **state)
{
    (void)state;
    fixture_t f;
    const char *r = exchange(&f, "later", "GET / HTTP/1.1\r\n\r\n", false);
    assert_non_null(strstr(r, "\r\n\r\nlate\n"));
}

static void test_an_answer_to_a_peer_that_left_is_dropped(void **state)
{
    (void)state;
    fixture_t f;
    assert_string_equal(exchange(&f, "later", "GET / HTTP/1.1\r\n\r\n", true), "");
    assert_null(f.pending);
}

static void test_a_stream_sends_each_event_then_ends(void **state)
{
    (void)state;
    fixture_t f;
    const char *r = exchange(&f, "stream", "GET /events HTTP/1.1\r\n\r\n", false);
    assert_non_null(strstr(r, "Content-Type: text/event-stream\r\n"));
    assert_null(strstr(r, "Content-Length"));
    const char *p = strstr(r, "id: 1\ndata: tick\n\nid: 2\ndata: tick\n\nid: 3\ndata: tick\n\n");
    assert_non_null(p);
    assert_false(f.gone_called);
}

static void test_listening_on_a_port_in_use_fails_naming_it(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    cv_http_t *a, *b;
    char err[256] = "", addr[64];
    assert_int_equal(cv_http_start(&loop, "127.0.0.1:0", handler, NULL, &a, err, 256), 0);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", cv_http_port(a));
    assert_int_equal(cv_http_start(&loop, addr, handler, NULL, &b, err, 256), CV_EIO);
    assert_non_null(strstr(err, addr));
    assert_int_equal(cv_http_start(&loop, "no.such.host.invalid:1", handler, NULL, &b, err, 256),
                     CV_EINVAL);
    assert_non_null(strstr(err, "unknown host"));
    cv_http_close(a);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* One peer holding its whole share of connections idle: its next request
 * is still answered, and the oldest idle connection is the one closed. */
static void test_a_peer_at_its_cap_loses_its_oldest_idle_connection_not_the_new(void **state)
{
    (void)state;
    fixture_t f;
    const char *r =
        exchange_after(&f, CV_HTTP_MAX_CONNS_PER_PEER, "now", "GET / HTTP/1.1\r\n\r\n", false);
    assert_non_null(strstr(r, "HTTP/1.1 200 OK\r\n"));
    assert_true(f.oldest_idle_closed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_get_is_answered_with_length_and_close),
        cmocka_unit_test(test_a_head_gets_the_headers_without_the_body),
        cmocka_unit_test(test_other_methods_get_405_naming_the_allowed_ones),
        cmocka_unit_test(test_a_malformed_request_gets_400_with_the_reason),
        cmocka_unit_test(test_an_answer_given_later_reaches_the_peer),
        cmocka_unit_test(test_an_answer_to_a_peer_that_left_is_dropped),
        cmocka_unit_test(test_a_stream_sends_each_event_then_ends),
        cmocka_unit_test(test_listening_on_a_port_in_use_fails_naming_it),
        cmocka_unit_test(test_a_peer_at_its_cap_loses_its_oldest_idle_connection_not_the_new),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
