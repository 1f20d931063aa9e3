/*
 * agent_replica — one replica on this node, from its first start to its
 * last stop: its processes (one per task, started and stopped together),
 * its restart policy, its health check, its ports, volumes and log files,
 * its state file, and the report that says all of it.
 *
 * States (docs/services.md): starting → running → healthy (the health check
 * passed after the grace period, or there is none and the grace period
 * passed); a task that exits, or `retries` failed checks (unhealthy), stops
 * the whole group, and the restart policy says backoff (then starting
 * again), stopped (done), or failed (gave_up when max_times was reached).
 * cv_replica_stop (no longer assigned, fenced, agent exit) signals the
 * processes with the kill policy's signal, SIGKILL after its grace period:
 * stopping → stopped.
 *
 * In a simulated node (host->simulate) nothing is spawned: a replica is
 * healthy a moment after its start, with its declared load.
 */
#ifndef AGENT_REPLICA_H
#define AGENT_REPLICA_H

#include "agent_ports.h"
#include "agent_report.h"
#include "agent_sandbox.h"
#include "agent_spec.h"

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

typedef struct cv_replica cv_replica_t;

/* The node a replica runs on: its settings and the calls back into it. */
typedef struct cv_rhost {
    uv_loop_t *loop;
    const char *dir, *node, *address, *agent_id;
    cv_ports_t *ports;
    size_t log_cap;
    double reset_s; /* healthy seconds after which the restart counter resets */
    bool simulate;
    const cv_sandbox_t *sb; /* how replicas are confined; NULL when simulated */
    void *ud;
    /* The report changed: publish it soon. */
    void (*changed)(void *ud, cv_replica_t *r);
    /* A restart happened: an event with this reason. */
    void (*restarted)(void *ud, cv_replica_t *r, const char *reason);
    /* Count in the ledger: "start" (first start of the rid) or "restart". */
    void (*ledger)(void *ud, cv_replica_t *r, const char *what);
} cv_rhost_t;

/* A replica of `spec` (moved into it) that runs nothing yet. */
cv_replica_t *cv_replica_new(cv_rhost_t *h, cv_rspec_t *spec);

/* Starts it for the first time on this node (or after a fence). */
void cv_replica_start(cv_replica_t *r);

/* Takes over what a previous agent run left (a state file's object): live
 * processes are adopted as they are; dead ones go to the restart policy. */
void cv_replica_adopt(cv_replica_t *r, const json_t *state);

/* Stops its processes by the kill policy (with `now`: SIGKILL at once), for
 * `why`; it is then stopped for good (a stopped replica is restarted only by
 * cv_replica_start). */
void cv_replica_stop(cv_replica_t *r, const char *why, bool now);

/* Every 250 ms: re-adopted processes' liveness; every 1 s (`full`):
 * usage measures, log caps, the restart counter's reset. */
void cv_replica_tick(cv_replica_t *r, bool full);

/* The report (a new object). */
json_t *cv_replica_report(const cv_replica_t *r);

/* The node's sum: adds this replica's current load to `sum`. */
void cv_replica_add_load(const cv_replica_t *r, json_t *sum);

const char *cv_replica_rid(const cv_replica_t *r);
const cv_rspec_t *cv_replica_spec(const cv_replica_t *r);
cv_replica_state_t cv_replica_state(const cv_replica_t *r);
/* Stopped by cv_replica_stop and no process left. */
bool cv_replica_stopped(const cv_replica_t *r);
/* Whether a process of it may be running. */
bool cv_replica_has_processes(const cv_replica_t *r);

/* Frees it (its handles close on the loop); its processes are left as they
 * are, and its state file too unless `forget`. */
void cv_replica_free(cv_replica_t *r, bool forget);

#endif
