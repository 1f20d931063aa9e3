/*
 * The worker's metrics (docs/metrics.md): its /metrics endpoint started
 * with the process, the end of every job counted into the registry, and
 * at scrape time the counts the worker keeps anyway (the CV_STAT_*
 * counters, jobs in flight, outages, the consumers' lag) written from
 * where they are — nothing is counted twice.
 */
#include "cv__worker.h"

#include "cv_log.h"
#include "cv_metrics.h"

#include <stdio.h>
#include <string.h>

void cv__worker_job_end(void *ud, const cv_job_end_t *end)
{
    (void)ud;
    cv_job_outcome_t outcome = end->dead          ? CV_JOB_DEAD
                               : end->handed_back ? CV_JOB_HANDED_BACK
                                                  : CV_JOB_DONE;
    cv_metrics_job(end->kind, outcome, end->seconds, end->hop_seconds);
}

/* The CV_STAT_* counters published, with their family names. */
static const struct {
    cv_stat_t stat;
    const char *name, *help;
} stat_families[] = {
    {CV_STAT_ACTED, "converge_actions_total",
     "Actions taken on resources (create, update, delete)."},
    {CV_STAT_RETRIES, "converge_retries_total",
     "Job retries after a transient error or a busy lease."},
    {CV_STAT_FENCED, "converge_fenced_writes_total",
     "Writes refused by the fencing version (the lease was no longer this job's)."},
    {CV_STAT_DEAD, "converge_dead_letters_total", "Messages this worker sent to converge.dead."},
    {CV_STAT_GAVE_UP, "converge_jobs_given_up_total",
     "Jobs dead-lettered after --max-attempts failures."},
    {CV_STAT_REAPED, "converge_reaped_total", "Jobs the reaper re-queued (engines)."},
};

static void write_lag(cv_buf_t *b, const cv_worker_t *w)
{
    static cv_kafka_lag_t lag[CV_KAFKA_LAG_MAX]; /* a scrape at a time, on the loop */
    cv_prom_family(b, "converge_kafka_consumer_lag", "gauge",
                   "Messages between this worker's position and the end of each partition "
                   "assigned to it, from librdkafka's statistics (every 5 s).");
    for (int l = 0; l < CV_LANES; l++) {
        int n = w->lanes[l] ? cv_consumer_lag(w->lanes[l], lag, CV_KAFKA_LAG_MAX) : 0;
        for (int i = 0; i < n; i++) {
            char partition[16];
            snprintf(partition, sizeof(partition), "%d", (int)lag[i].partition);
            cv_prom_sample(
                b, "converge_kafka_consumer_lag",
                (const char *const[]){"topic", lag[i].topic, "partition", partition, NULL},
                (double)lag[i].lag);
        }
    }
}

static void collect(cv_buf_t *b, void *ud)
{
    const cv_worker_t *w = ud;
    cv_prom_family(b, "converge_jobs_in_flight", "gauge",
                   "Jobs handed to this worker and not yet ended, both lanes.");
    cv_prom_sample(b, "converge_jobs_in_flight", NULL, cv__worker_inflight(w));
    for (size_t i = 0; i < sizeof(stat_families) / sizeof(stat_families[0]); i++) {
        cv_prom_family(b, stat_families[i].name, "counter", stat_families[i].help);
        cv_prom_sample_u64(b, stat_families[i].name, NULL,
                           cv_worker_stat(w, stat_families[i].stat));
    }
    cv_prom_family(b, "converge_outages_total", "counter",
                   "Outages of Redis or Kafka this worker saw since it started.");
    cv_prom_sample_u64(b, "converge_outages_total", (const char *const[]){"service", "redis", NULL},
                       w->redis_outage.count);
    cv_prom_sample_u64(b, "converge_outages_total", (const char *const[]){"service", "kafka", NULL},
                       w->kafka_outage.count);
    write_lag(b, w);
}

int cv__worker_metrics_start(cv_worker_t *w, const char *prog)
{
    char err[512];
    unsigned roles = strcmp(w->role, "observer") == 0 ? CV_METRICS_OBSERVER : CV_METRICS_ENGINE;
    if (cv_metrics_serve(w->loop, w->metrics_addr, roles, w->id, w->role, err, sizeof(err))) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 2;
    }
    cv_metrics_collector(collect, w);
    return 0;
}
