/*
 * agent_report — the replica report (the value of {cluster}:report:<node>,
 * docs/services.md) and the rule that says which metrics the agent measures.
 *
 * Measured metrics: a metric whose name starts with "Memory" or "memory", or
 * ends with "MB", is the replica's resident memory (RSS, MiB, rounded up);
 * one whose name starts with "cpu" in any case ("cpu", "CpuUtilization") is
 * the CPU time the replica used over the last interval, in cores (1.0 = one
 * core busy), with two decimals. Every other metric, and every metric before
 * its first measure, reports the spec's declared `load`. A value the replica
 * reported itself (its load file, agent_loadfile.h) wins over both.
 * Pure logic: no I/O.
 */
#ifndef AGENT_REPORT_H
#define AGENT_REPORT_H

#include <jansson.h>
#include <stdbool.h>

#define CV_RSTATE_MAP(XX)                                                                          \
    XX(STARTING, "starting")                                                                       \
    XX(RUNNING, "running")                                                                         \
    XX(HEALTHY, "healthy")                                                                         \
    XX(UNHEALTHY, "unhealthy")                                                                     \
    XX(BACKOFF, "backoff")                                                                         \
    XX(FAILED, "failed")                                                                           \
    XX(STOPPING, "stopping")                                                                       \
    XX(STOPPED, "stopped")

typedef enum {
#define XX(name, text) CV_RSTATE_##name,
    CV_RSTATE_MAP(XX)
#undef XX
        CV_RSTATE__COUNT
} cv_replica_state_t;

const char *cv_rstate_name(cv_replica_state_t s);

typedef enum { CV_METRIC_DECLARED = 0, CV_METRIC_MEMORY = 1, CV_METRIC_CPU = 2 } cv_metric_kind_t;

cv_metric_kind_t cv_metric_kind(const char *name);

/* One replica's report as the agent knows it. */
typedef struct cv_report {
    const char *rid;
    cv_replica_state_t state;
    long pid;                      /* first task's pid, 0 when none */
    unsigned long long start_time; /* its /proc start time (clock ticks since boot) */
    double started, since;         /* Unix s: the processes' start, the state's start */
    int restarts;
    const char *reason, *exit; /* "" when none */
    const char *address;
    const json_t *ports; /* name -> host port */
    bool gave_up;
    const char *digest;
    const json_t *declared; /* the spec's load, or NULL */
    bool measured;          /* rss_mb and cpu_cores hold a measure */
    double rss_mb, cpu_cores;
    const json_t *reported; /* metric -> the replica's own value, or NULL */
} cv_report_t;

/* The report's load: metric -> reported, measured or declared value (a new
 * object). */
json_t *cv_report_load(const cv_report_t *r);

/* The report JSON (a new object), with `load` from cv_report_load. */
json_t *cv_report_json(const cv_report_t *r);

/* Adds `load` (metric -> number) into `sum`. */
void cv_report_load_add(json_t *sum, const json_t *load);

#endif
