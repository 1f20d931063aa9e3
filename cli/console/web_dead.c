/*
 * /api/dead: the dead letters are on a Kafka topic, which only convergectl
 * reads (`convergectl dead`: a consumer assigned every partition, joining
 * no group, committing nothing). converge-web runs it as a child process
 * and answers with what it printed, so the loop never waits on Kafka and
 * the console shows exactly what the CLI shows. The child inherits the
 * console's environment (CONVERGE_KAFKA, CONVERGE_KAFKA_OPTS, ...).
 */
#include "web_server.h"

#include "web_api.h"

#include "cv_base.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEAD_OUT_MAX (8 << 20) /* bytes of output kept */

typedef struct dead_run {
    cv_http_conn_t *conn;
    uv_process_t proc;
    uv_pipe_t out;
    cv_buf_t text; /* what the child printed */
    int64_t exit_status;
    int closing; /* handles still to close */
} dead_run_t;

static void finish(dead_run_t *d)
{
    json_t *list =
        d->exit_status == 0 ? json_loadb(cv_buf_str(&d->text), d->text.len, 0, NULL) : NULL;
    if (list)
        web_server_json(d->conn, 200, json_pack("{s:o}", "dead", list));
    else
        web_server_json(d->conn, 503,
                        web_api_error("convergectl dead exited with status %lld (Kafka "
                                      "unreachable? converge-web's log says why)",
                                      (long long)d->exit_status));
    cv_buf_free(&d->text);
    free(d);
}

static void on_handle_closed(uv_handle_t *h)
{
    dead_run_t *d = h->data;
    if (--d->closing == 0)
        finish(d);
}

/* The child's output is read straight into the text, with room for what
 * libuv suggests while the text is under DEAD_OUT_MAX; past it, or out of
 * memory, the read gets no room and the output ends there (503). */
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    dead_run_t *d = h->data;
    if (d->text.len < DEAD_OUT_MAX)
        cv_buf_reserve(&d->text, suggested);
    size_t room = d->text.data ? d->text.cap - d->text.len - 1 : 0;
    *buf = uv_buf_init(room ? d->text.data + d->text.len : NULL, (unsigned)room);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    dead_run_t *d = s->data;
    if (n > 0)
        cv_buf_added(&d->text, (size_t)n);
    else if (n < 0)
        uv_close((uv_handle_t *)s, on_handle_closed);
}

static void on_child_exit(uv_process_t *p, int64_t exit_status, int term_signal)
{
    dead_run_t *d = p->data;
    d->exit_status = term_signal ? 128 + term_signal : exit_status;
    uv_close((uv_handle_t *)p, on_handle_closed);
}

void web_dead_answer(web_server_t *s, cv_http_conn_t *c, const char *query)
{
    char limit[16] = "";
    if (cv_httpreq_param(query, "limit", limit, sizeof(limit)) &&
        (!limit[0] || strspn(limit, "0123456789") != strlen(limit))) {
        web_server_json(c, 400,
                        web_api_error("limit: expected a number of messages, got '%s'", limit));
        return;
    }
    dead_run_t *d = calloc(1, sizeof(*d));
    if (!d) {
        web_server_json(c, 503, web_api_error("out of memory"));
        return;
    }
    d->conn = c;
    uv_pipe_init(s->loop, &d->out, 0);
    d->out.data = d->proc.data = d;
    char *args[] = {s->convergectl, "dead", "-o", "json", limit[0] ? "--limit" : NULL, limit, NULL};
    uv_stdio_container_t stdio[3] = {
        {.flags = UV_IGNORE},
        {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&d->out},
        {.flags = UV_INHERIT_FD, .data.fd = 2},
    };
    uv_process_options_t opts = {.file = s->convergectl,
                                 .args = args,
                                 .exit_cb = on_child_exit,
                                 .stdio_count = 3,
                                 .stdio = stdio};
    int rc = uv_spawn(s->loop, &d->proc, &opts);
    if (rc != 0) {
        cv_warn("cannot run %s: %s", s->convergectl, uv_strerror(rc));
        d->exit_status = 127;
        d->closing = 2; /* a process handle uv_spawn refused is closed all the same */
        uv_close((uv_handle_t *)&d->proc, on_handle_closed);
        uv_close((uv_handle_t *)&d->out, on_handle_closed);
        return;
    }
    d->closing = 2;
    uv_read_start((uv_stream_t *)&d->out, on_alloc, on_read);
}
