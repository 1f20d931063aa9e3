/*
 * Internal to the worker shell (cv_worker*.c): its options, and its health —
 * the liveness record, outages of Redis and Kafka, retry accounting.
 */
#ifndef CV__WORKER_H
#define CV__WORKER_H

#include "cv_log.h"
#include "cv_worker.h"

/* Defaults, then the environment (CONVERGE_LEASE_MS, CONVERGE_MAX_ATTEMPTS,
 * CONVERGE_MAX_*, CONVERGE_LOG_*), then argv; the log options into *log. Returns 0, or CV_EINVAL
 * after printing why; exits 0 after --help. */
int cv__worker_args(cv_worker_t *w, int argc, char **argv, const cv_worker_def_t *def,
                    cv_log_opts_t *log);

/* Starts the liveness record and outage reporting; stops them. */
void cv__worker_health_start(cv_worker_t *w);
void cv__worker_health_stop(cv_worker_t *w);

/* Writes the liveness record now if Redis is up (e.g. when stopping). */
void cv__worker_liveness_now(cv_worker_t *w);

/* Broker reachability as the consumer sees it (a cv_kafka_state_cb, ud = w). */
void cv__worker_kafka_state(void *ud, bool up, const char *why);

/* Redis reachability as a probe of the worker's sees it (ud = w). */
void cv__worker_redis_state(void *ud, bool up, const char *why);

/* Replaces a consumer librdkafka raised a fatal error on (cv_worker.c);
 * called every liveness tick. */
void cv__worker_consumer_renew(cv_worker_t *w);

/* Over both lanes' consumers (cv_worker.c): jobs in flight; whether each
 * has joined its group; whether a group dropped this member; leaving and
 * joining the topics again (errors as cv_consumer_subscribe). */
int cv__worker_inflight(const cv_worker_t *w);
bool cv__worker_joined(const cv_worker_t *w);
bool cv__worker_group_lost(const cv_worker_t *w);
void cv__worker_unsubscribe(cv_worker_t *w);
int cv__worker_subscribe(cv_worker_t *w, char *errstr, size_t errstr_size);

/* Serves the worker's metrics (cv_worker_metrics.c): 0, or 2 after
 * printing why (a bad --metrics-addr, a port in use). */
int cv__worker_metrics_start(cv_worker_t *w, const char *prog);

/* A job's end, counted (a cv_consumer_conf_t.on_job_end, ud = w). */
void cv__worker_job_end(void *ud, const cv_job_end_t *end);

/* Steps aside or back (cv_worker_isolation.c); called every liveness tick. */
void cv__worker_isolation_tick(cv_worker_t *w, double now);

#endif
