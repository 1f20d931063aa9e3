/*
 * agent_ports — the node's host ports: which replica holds which port.
 *
 * A replica asks for a port by number (a fixed host port) or 0 (any port of
 * the node's range, --ports). Allocation walks the range from where the
 * last one stopped, so a port just freed is not handed out again at once
 * (a client of the old replica may still be connected to it). A port taken
 * by another replica is refused; `is_free` lets the caller skip ports some
 * other process of the host already listens on. Re-adopted replicas
 * reserve the ports their state file names. Pure logic: no I/O.
 */
#ifndef AGENT_PORTS_H
#define AGENT_PORTS_H

#include "cv_base.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct cv_port_use {
    int port;
    char owner[160];
} cv_port_use_t;

typedef struct cv_ports {
    int lo, hi, next;
    CV_VEC(cv_port_use_t) used;
} cv_ports_t;

/* Whether the host can bind `port` (NULL: assume it can). */
typedef bool (*cv_ports_free_fn)(void *ud, int port);

void cv_ports_init(cv_ports_t *p, int lo, int hi);
void cv_ports_free(cv_ports_t *p);

/* The owner holding `port`, or NULL. */
const char *cv_ports_owner(const cv_ports_t *p, int port);

/* Takes `port` for `owner` (a fixed port, or a reservation): 0, or
 * CV_EEXIST when another owner holds it (the same owner may take it again). */
int cv_ports_take(cv_ports_t *p, int port, const char *owner);

/* A free port of the range for `owner`: the port (> 0), or CV_ENOENT when the
 * range is exhausted. */
int cv_ports_alloc(cv_ports_t *p, const char *owner, cv_ports_free_fn is_free, void *ud);

/* Releases every port `owner` holds. */
void cv_ports_release(cv_ports_t *p, const char *owner);

/* "<lo>-<hi>" into lo, hi: 0, or CV_EINVAL. */
int cv_ports_parse_range(const char *text, int *lo, int *hi);

#endif
