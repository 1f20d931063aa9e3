/*
 * cv_live — the placement engine on the live cluster model in Redis.
 *
 * Reconciling a service: read the live model (nodes, their heartbeats and
 * admin state, every service's spec and placement, the agents' reports),
 * plan with the pure planner (scheduler/placement/cv_reconcile.h), commit the
 * plan with svc_commit.lua, which re-checks the service's generation, node
 * status and capacity; a losing commit re-plans with fresh state. Any worker
 * may reconcile any service at any time: the commit makes it safe.
 *
 * The cluster resource manager (docs/crm.md): one observer at a time holds
 * its role (lease {cluster}:crm, fenced by an epoch) and runs its phases on
 * timers — refresh of the model, nodes and health reports; placement (every
 * service reconciled: replicas of lost nodes, replicas the restart policy
 * gave up on, unplaced ones); constraint check and balancing (the moves of
 * cv_balance written into the services' records, then reconciled) — and
 * keeps {cluster}:crm:status.
 *
 * I/O glue only: every decision is the planner's. Keys: docs/services.md.
 */
#ifndef CV_LIVE_H
#define CV_LIVE_H

#include "cv_io.h"

/* rc 0: the service's placement is committed (replicas may still be
 * unplaced: they are listed in its `unplaced` and wait for capacity);
 * otherwise a CV_E* code with `err` saying why (the service was rejected:
 * CV_EVALIDATE with the shortfall; Redis unreachable: CV_EREDIS). */
typedef void (*cv_live_done_cb)(void *arg, int rc, const char *err);

/* Reconciles the service `svc` now; `cb` is called once, on the loop. */
void cv_live_reconcile(cv_worker_t *w, const char *svc, cv_live_done_cb cb, void *arg);

/* The cluster resource manager on the worker's loop (observers start it;
 * stopping it gives its lease up). */
void *cv_live_loop_start(cv_worker_t *w);
void cv_live_loop_stop(void *loop);

#endif
