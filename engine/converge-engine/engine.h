/*
 * The converge-engine process: consumes converge.check. A STACK job expands a
 * traversal (graph, definitions, root jobs); a CHECK job converges one graph
 * node under the resource's lease and hands it to the observers; a SIGNAL
 * job applies a resource's pending signals (engine_signal.c).
 * Internal to the engine binary.
 */
#ifndef CV_ENGINE_H
#define CV_ENGINE_H

#include "cv_io.h"
#include "cv_contract.h"

/* Both take ownership of nothing; each finishes `job` exactly once. */
void cv__engine_stack_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);
void cv__engine_check_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);
void cv__engine_signal_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);

/* Publishes the engine's limits in Redis (engine_limits.c) until stopped. */
void *cv__engine_limits_start(cv_worker_t *w);
void cv__engine_limits_stop(void *handle);

#endif
