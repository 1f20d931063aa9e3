/*
 * agent_probe — one health check probe of a replica: a TCP connect, an
 * HTTP GET (a 2xx or 3xx status passes), or a command (exit 0 passes),
 * each bounded by a timeout. The verdict comes back once, on the loop.
 * I/O only: what the verdicts mean is agent_replica's.
 */
#ifndef AGENT_PROBE_H
#define AGENT_PROBE_H

#include <stdbool.h>
#include <uv.h>

/* ok, or !ok with why ("connect 127.0.0.1:31001: connection refused"). */
typedef void (*cv_probe_cb)(void *ud, bool ok, const char *why);

typedef struct cv_probe_req {
    int kind;            /* cv_health_kind_t */
    const char *address; /* tcp/http */
    int port;
    const char *path;        /* http */
    const char *const *argv; /* command (the sandbox helper's argv for it) */
    const char *label;       /* command: the program as written, for the verdict */
    char **env;              /* command */
    const char *cwd;         /* command */
    double timeout;          /* seconds */
} cv_probe_req_t;

/* Starts a probe; cb is always called (also when it cannot start). */
void cv_probe_start(uv_loop_t *loop, const cv_probe_req_t *req, cv_probe_cb cb, void *ud);

#endif
