#include "agent_probe.h"

#include "agent_spec.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct probe {
    uv_loop_t *loop;
    cv_probe_cb cb;
    void *ud;
    uv_timer_t timer;
    uv_tcp_t tcp;
    uv_connect_t connect;
    uv_write_t write;
    uv_process_t proc;
    char request[512];
    char response[64];
    size_t got;
    int handles; /* open handles; the probe is freed when the last closes */
    bool done, is_tcp, is_proc, is_http;
    char target[96];
} probe_t;

static void on_handle_closed(uv_handle_t *h)
{
    probe_t *p = h->data;
    if (--p->handles == 0)
        free(p);
}

/* The verdict, once; then every handle closes. */
static void finish(probe_t *p, bool ok, const char *why)
{
    if (p->done)
        return;
    p->done = true;
    p->cb(p->ud, ok, why);
    uv_timer_stop(&p->timer);
    uv_close((uv_handle_t *)&p->timer, on_handle_closed);
    if (p->is_tcp)
        uv_close((uv_handle_t *)&p->tcp, on_handle_closed);
    if (p->is_proc) {
        uv_process_kill(&p->proc, SIGKILL);
        uv_close((uv_handle_t *)&p->proc, on_handle_closed);
    }
}

static void on_timeout(uv_timer_t *t)
{
    probe_t *p = t->data;
    char why[160];
    snprintf(why, sizeof(why), "%s: timed out", p->target);
    finish(p, false, why);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    probe_t *p = h->data;
    (void)suggested;
    buf->base = p->response + p->got;
    buf->len = sizeof(p->response) - 1 - p->got;
}

/* "HTTP/1.x NNN ...": 2xx and 3xx pass. */
static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    probe_t *p = s->data;
    (void)buf;
    if (n > 0)
        p->got += (size_t)n;
    p->response[p->got] = '\0';
    char *eol = strstr(p->response, "\r\n");
    if (!eol && n >= 0 && p->got < sizeof(p->response) - 1)
        return;
    int status = 0;
    if (sscanf(p->response, "HTTP/%*d.%*d %d", &status) != 1)
        status = 0;
    char why[200];
    if (status >= 200 && status < 400) {
        finish(p, true, "");
        return;
    }
    if (status)
        snprintf(why, sizeof(why), "%s: HTTP status %d", p->target, status);
    else
        snprintf(why, sizeof(why), "%s: no HTTP status line in the answer", p->target);
    finish(p, false, why);
}

static void on_written(uv_write_t *w, int status)
{
    probe_t *p = w->data;
    if (p->done)
        return;
    if (status < 0) {
        char why[200];
        snprintf(why, sizeof(why), "%s: %s", p->target, uv_strerror(status));
        finish(p, false, why);
        return;
    }
    uv_read_start((uv_stream_t *)&p->tcp, on_alloc, on_read);
}

static void on_connected(uv_connect_t *c, int status)
{
    probe_t *p = c->data;
    if (p->done)
        return;
    if (status < 0) {
        char why[200];
        snprintf(why, sizeof(why), "connect %s: %s", p->target, uv_strerror(status));
        finish(p, false, why);
        return;
    }
    if (!p->is_http) {
        finish(p, true, "");
        return;
    }
    uv_buf_t b = uv_buf_init(p->request, (unsigned)strlen(p->request));
    p->write.data = p;
    uv_write(&p->write, (uv_stream_t *)&p->tcp, &b, 1, on_written);
}

static void start_tcp(probe_t *p, const cv_probe_req_t *r)
{
    struct sockaddr_in addr;
    snprintf(p->target, sizeof(p->target), "%s:%d", r->address, r->port);
    if (uv_ip4_addr(r->address, r->port, &addr) != 0) {
        finish(p, false, "bad address");
        return;
    }
    uv_tcp_init(p->loop, &p->tcp);
    p->tcp.data = p;
    p->is_tcp = true;
    p->handles++;
    p->is_http = r->kind == CV_HEALTH_HTTP;
    snprintf(p->request, sizeof(p->request),
             "GET %s HTTP/1.0\r\nHost: %s:%d\r\nUser-Agent: converge-agent\r\n\r\n", r->path,
             r->address, r->port);
    p->connect.data = p;
    int rc = uv_tcp_connect(&p->connect, &p->tcp, (const struct sockaddr *)&addr, on_connected);
    if (rc) {
        char why[200];
        snprintf(why, sizeof(why), "connect %s: %s", p->target, uv_strerror(rc));
        finish(p, false, why);
    }
}

static void on_command_exit(uv_process_t *proc, int64_t status, int sig)
{
    probe_t *p = proc->data;
    char why[200];
    if (status == 0 && !sig) {
        finish(p, true, "");
        return;
    }
    if (sig)
        snprintf(why, sizeof(why), "%s: signal %d", p->target, sig);
    else
        snprintf(why, sizeof(why), "%s: exit %lld", p->target, (long long)status);
    finish(p, false, why);
}

static void start_command(probe_t *p, const cv_probe_req_t *r)
{
    snprintf(p->target, sizeof(p->target), "command %s", r->label ? r->label : r->argv[0]);
    uv_stdio_container_t stdio[3] = {
        {.flags = UV_IGNORE}, {.flags = UV_IGNORE}, {.flags = UV_IGNORE}};
    uv_process_options_t o = {.exit_cb = on_command_exit,
                              .file = r->argv[0],
                              .args = (char **)r->argv,
                              .env = r->env,
                              .cwd = r->cwd,
                              .stdio_count = 3,
                              .stdio = stdio};
    p->proc.data = p;
    int rc = uv_spawn(p->loop, &p->proc, &o);
    if (rc) {
        char why[200];
        snprintf(why, sizeof(why), "exec %s: %s", r->argv[0], strerror(-rc));
        p->handles++; /* a failed spawn's handle still closes */
        uv_close((uv_handle_t *)&p->proc, on_handle_closed);
        finish(p, false, why);
        return;
    }
    p->is_proc = true;
    p->handles++;
}

void cv_probe_start(uv_loop_t *loop, const cv_probe_req_t *req, cv_probe_cb cb, void *ud)
{
    probe_t *p = calloc(1, sizeof(*p));
    if (!p) {
        cb(ud, false, "out of memory");
        return;
    }
    p->loop = loop;
    p->cb = cb;
    p->ud = ud;
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    p->handles = 1;
    uv_timer_start(&p->timer, on_timeout, (uint64_t)(req->timeout * 1000) + 1, 0);
    if (req->kind == CV_HEALTH_COMMAND)
        start_command(p, req);
    else
        start_tcp(p, req);
}
