/*
 * cv_metrics — the process's Prometheus metrics: the registry the hot path
 * counts into, and the /metrics endpoint that writes it out (cv_prom's
 * text, served by cv_http on the process's loop).
 *
 * One registry per process, in this module's static storage: every
 * process runs one loop and counts from it, so counting is a plain add on
 * a preallocated slot — no lock, no allocation, no pointer to pass around.
 * Counts that other modules already keep (the worker's CV_STAT_* counters,
 * jobs in flight, outages, consumer lag) are not counted twice: their owner
 * registers a collector that writes them at scrape time.
 *
 * No series carries a per-stack or per-resource label; the process is told
 * apart by Prometheus' instance label and converge_worker_info{id,role}.
 * docs/metrics.md lists every metric.
 */
#ifndef CV_METRICS_H
#define CV_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "cv_base.h"

/* The processes a family is written by (a mask): families of a role the
 * process does not have are left out of its text. */
enum {
    CV_METRICS_ENGINE = 1,
    CV_METRICS_OBSERVER = 2,
    CV_METRICS_AGENT = 4,
    CV_METRICS_WORKER = CV_METRICS_ENGINE | CV_METRICS_OBSERVER,
};

/* Counters and gauges counted here: enum CV_METRIC_<NAME>, the processes
 * that write it, its type, name and help. */
#define CV_METRIC_MAP(XX)                                                                          \
    XX(PLACEMENTS, CV_METRICS_WORKER, "counter", "converge_placements_total",                      \
       "Replicas assigned to a node by placement plans this worker committed.")                    \
    XX(MOVES, CV_METRICS_OBSERVER, "counter", "converge_moves_total",                              \
       "Replica moves the cluster resource manager's balancing wrote.")                            \
    XX(REPLICA_RESTARTS, CV_METRICS_AGENT, "counter", "converge_replica_restarts_total",           \
       "Replica processes this agent restarted after they exited.")                                \
    XX(LEASES_HELD, CV_METRICS_WORKER, "gauge", "converge_leases_held",                            \
       "Resource leases this worker holds and renews now.")                                        \
    XX(LEASES_LOST, CV_METRICS_WORKER, "counter", "converge_leases_lost_total",                    \
       "Leases this worker held that a renewal found no longer its own (expired during a pause "   \
       "or an outage, possibly taken over by another worker).")                                    \
    XX(LEASE_TAKEOVERS, CV_METRICS_ENGINE, "counter", "converge_lease_takeovers_total",            \
       "Resource leases this engine took over from a dead earlier process of its own worker id "   \
       "(restarted with the same --id) instead of waiting for them to run out.")

/* clang-format off */
typedef enum {
#define CV_METRIC_ENUM(name, roles, type, metric, help) CV_METRIC_##name,
    CV_METRIC_MAP(CV_METRIC_ENUM)
#undef CV_METRIC_ENUM
    CV_METRIC__COUNT
} cv_metric_id_t;
/* clang-format on */

/* How a job ended (converge_jobs_total's outcome label). */
typedef enum {
    CV_JOB_DONE,        /* finished: its effect recorded, its offset committable */
    CV_JOB_DEAD,        /* dead-lettered (undecodable, unknown, or given up) */
    CV_JOB_HANDED_BACK, /* left unfinished for another worker (stopping, aside, revoked) */
    CV_JOB__OUTCOMES
} cv_job_outcome_t;

/* The job kinds: 0 for a message that did not decode, else its cv_msg
 * type (1..CV_METRICS_KINDS - 1). */
#define CV_METRICS_KINDS 6

/* Adds n to a counter (or a gauge: n may wrap to subtract, as -1). */
void cv_metrics_add(cv_metric_id_t m, uint64_t n);

/* One job ended: converge_jobs_total{kind,outcome} and, for a job done,
 * converge_job_duration_seconds{kind}; hop_seconds (< 0: unknown) goes to
 * converge_hop_latency_seconds{kind}. */
void cv_metrics_job(int kind, cv_job_outcome_t outcome, double seconds, double hop_seconds);

/* A Redis round trip measured (converge_redis_roundtrip_seconds). */
void cv_metrics_redis_roundtrip(double seconds);

/* The health reports in {cluster}:health by state, as the cluster resource
 * manager's last refresh counted them (converge_health_reports{state}). */
void cv_metrics_health_reports(uint64_t ok, uint64_t warning, uint64_t error);

/* Writes a module's own families at scrape time (ud as registered). At
 * most 4 collectors. */
typedef void (*cv_metrics_collect_fn)(cv_buf_t *out, void *ud);
void cv_metrics_collector(cv_metrics_collect_fn fn, void *ud);

/*
 * Serves /metrics on addr ("HOST:PORT", port 0: a free one; "none": not at
 * all) for a process of `roles` (CV_METRICS_*) named id and role in
 * converge_worker_info. 0, or CV_EINVAL / CV_EIO with errstr naming
 * --metrics-addr, the address and why (a port in use, say).
 */
int cv_metrics_serve(uv_loop_t *loop, const char *addr, unsigned roles, const char *id,
                     const char *role, char *errstr, size_t errstr_size);

/* "host:port" served, or "" when not serving. */
const char *cv_metrics_address(void);

/* Stops serving (the loop can then end). */
void cv_metrics_stop(void);

/* The default address, and the environment variable that overrides it. */
#define CV_METRICS_ADDR_DEFAULT "127.0.0.1:0"
#define CV_METRICS_ADDR_ENV "CONVERGE_METRICS_ADDR"

/* The usage lines of --metrics-addr, shared by every process. */
#define CV_METRICS_USAGE                                                                           \
    "  --metrics-addr A   serve Prometheus metrics on http://A/metrics: HOST:PORT (port\n"         \
    "                     0: a free one, logged and written to the liveness record), or\n"         \
    "                     none (default $CONVERGE_METRICS_ADDR or 127.0.0.1:0)\n"

#endif
