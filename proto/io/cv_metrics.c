#include "cv_metrics.h"

#include "cv_base.h"
#include "cv_http.h"
#include "cv_log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Seconds: from a fast Redis script to a slow action or a long observation. */
static const double job_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                    0.5,   1,      2.5,   5,    10,    30,   60};
/* A round trip on loopback is tens of microseconds; a loaded Redis, ms. */
static const double rtt_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                    0.025,  0.05,    0.1,    0.25,  0.5,    1};
enum {
    NJOB_BOUNDS = sizeof(job_bounds) / sizeof(job_bounds[0]),
    NRTT_BOUNDS = sizeof(rtt_bounds) / sizeof(rtt_bounds[0]),
    MAX_COLLECTORS = 4,
};

static const char *const kind_names[CV_METRICS_KINDS] = {"invalid", "stack", "check",
                                                         "observe", "dead",  "signal"};
enum { KIND_DEAD = 4 }; /* CV_MSG_DEAD */
static const char *const outcome_names[CV_JOB__OUTCOMES] = {"done", "dead", "handed_back"};

/* The registry: this process's, on its loop (see the header). */
static struct {
    uint64_t values[CV_METRIC__COUNT];
    uint64_t jobs[CV_METRICS_KINDS][CV_JOB__OUTCOMES];
    cv_prom_hist_t duration[CV_METRICS_KINDS], hop[CV_METRICS_KINDS], rtt;
    bool hists_ready;
    uint64_t health[3]; /* ok, warning, error */
    struct {
        cv_metrics_collect_fn fn;
        void *ud;
    } collectors[MAX_COLLECTORS];
    int ncollectors;
    unsigned roles;
    char id[128], role[32], address[300];
    double started;
    cv_http_t *http;
} reg;

static void hists_init(void)
{
    if (reg.hists_ready)
        return;
    for (int k = 0; k < CV_METRICS_KINDS; k++) {
        cv_prom_hist_init(&reg.duration[k], job_bounds, NJOB_BOUNDS);
        cv_prom_hist_init(&reg.hop[k], job_bounds, NJOB_BOUNDS);
    }
    cv_prom_hist_init(&reg.rtt, rtt_bounds, NRTT_BOUNDS);
    reg.hists_ready = true;
}

void cv_metrics_add(cv_metric_id_t m, uint64_t n)
{
    reg.values[m] += n;
}

void cv_metrics_job(int kind, cv_job_outcome_t outcome, double seconds, double hop_seconds)
{
    hists_init();
    if (kind < 0 || kind >= CV_METRICS_KINDS)
        kind = 0;
    reg.jobs[kind][outcome]++;
    if (outcome == CV_JOB_DONE)
        cv_prom_hist_observe(&reg.duration[kind], seconds);
    if (hop_seconds >= 0)
        cv_prom_hist_observe(&reg.hop[kind], hop_seconds);
}

void cv_metrics_redis_roundtrip(double seconds)
{
    hists_init();
    cv_prom_hist_observe(&reg.rtt, seconds);
}

void cv_metrics_health_reports(uint64_t ok, uint64_t warning, uint64_t error)
{
    reg.health[0] = ok;
    reg.health[1] = warning;
    reg.health[2] = error;
}

void cv_metrics_collector(cv_metrics_collect_fn fn, void *ud)
{
    if (reg.ncollectors == MAX_COLLECTORS) {
        cv_warn("metrics: more than %d collectors; one is left out", MAX_COLLECTORS);
        return;
    }
    reg.collectors[reg.ncollectors].fn = fn;
    reg.collectors[reg.ncollectors++].ud = ud;
}

/* ---- the text ---- */

/* The resident set from /proc/self/statm (pages); 0 where there is none. */
static uint64_t resident_bytes(void)
{
    unsigned long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    return n == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static void write_process(cv_buf_t *b)
{
    cv_prom_family(b, "converge_worker_info", "gauge",
                   "Always 1: the process's Converge id and role.");
    cv_prom_sample(b, "converge_worker_info",
                   (const char *const[]){"id", reg.id, "role", reg.role, NULL}, 1);
    cv_prom_family(b, "process_start_time_seconds", "gauge",
                   "Start time of the process since the Unix epoch in seconds.");
    cv_prom_sample(b, "process_start_time_seconds", NULL, reg.started);
    cv_prom_family(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    cv_prom_sample_u64(b, "process_resident_memory_bytes", NULL, resident_bytes());
}

static void write_table(cv_buf_t *b)
{
    static const struct {
        unsigned roles;
        const char *type, *name, *help;
    } table[] = {
#define XX(name, roles, type, metric, help) {roles, type, metric, help},
        CV_METRIC_MAP(XX)
#undef XX
    };
    for (int m = 0; m < CV_METRIC__COUNT; m++) {
        if (!(table[m].roles & reg.roles))
            continue;
        cv_prom_family(b, table[m].name, table[m].type, table[m].help);
        if (strcmp(table[m].type, "gauge") == 0)
            cv_prom_sample(b, table[m].name, NULL, (double)(int64_t)reg.values[m]);
        else
            cv_prom_sample_u64(b, table[m].name, NULL, reg.values[m]);
    }
}

/* A histogram per job kind. Not for a message that did not decode, nor for
 * a dead letter (no worker consumes converge.dead): no time worth a series. */
static void write_kind_hists(cv_buf_t *b, const char *name, const char *help,
                             const cv_prom_hist_t *hists)
{
    cv_prom_family(b, name, "histogram", help);
    for (int k = 1; k < CV_METRICS_KINDS; k++)
        if (k != KIND_DEAD)
            cv_prom_hist_write(b, name, (const char *const[]){"kind", kind_names[k], NULL},
                               &hists[k]);
}

static void write_jobs(cv_buf_t *b)
{
    cv_prom_family(b, "converge_jobs_total", "counter",
                   "Jobs (consumed messages) that ended, by message kind and outcome.");
    for (int k = 0; k < CV_METRICS_KINDS; k++)
        for (int o = 0; o < CV_JOB__OUTCOMES; o++)
            cv_prom_sample_u64(
                b, "converge_jobs_total",
                (const char *const[]){"kind", kind_names[k], "outcome", outcome_names[o], NULL},
                reg.jobs[k][o]);
    write_kind_hists(b, "converge_job_duration_seconds",
                     "Time from a job's start (its message handed to the worker) to its end, "
                     "for jobs done.",
                     reg.duration);
    write_kind_hists(b, "converge_hop_latency_seconds",
                     "Time from a job's message being produced (its Kafka timestamp) to the job "
                     "starting in this worker.",
                     reg.hop);
    cv_prom_family(b, "converge_redis_roundtrip_seconds", "histogram",
                   "Round trips to Redis of the liveness record's write, every 2 s.");
    cv_prom_hist_write(b, "converge_redis_roundtrip_seconds", NULL, &reg.rtt);
}

static void write_health(cv_buf_t *b)
{
    static const char *const states[] = {"ok", "warning", "error"};
    cv_prom_family(b, "converge_health_reports", "gauge",
                   "Health reports in the cluster by state, at the cluster resource manager's "
                   "last refresh (0 in an observer not holding its role).");
    for (int s = 0; s < 3; s++)
        cv_prom_sample_u64(b, "converge_health_reports",
                           (const char *const[]){"state", states[s], NULL}, reg.health[s]);
}

static void write_all(cv_buf_t *b)
{
    hists_init();
    write_process(b);
    write_table(b);
    if (reg.roles & CV_METRICS_WORKER)
        write_jobs(b);
    if (reg.roles & CV_METRICS_OBSERVER)
        write_health(b);
    for (int i = 0; i < reg.ncollectors; i++)
        reg.collectors[i].fn(b, reg.collectors[i].ud);
}

/* ---- the endpoint ---- */

static void on_request(cv_http_conn_t *c, const cv_http_req_t *req, void *ud)
{
    (void)ud;
    if (strcmp(req->path, "/") == 0) {
        cv_http_respond_text(c, 200, "Converge %s %s: metrics at /metrics\n", reg.role, reg.id);
        return;
    }
    if (strcmp(req->path, "/metrics") != 0) {
        cv_http_respond_text(c, 404, "not found: %s (metrics are at /metrics)\n", req->path);
        return;
    }
    cv_buf_t b;
    cv_buf_init(&b);
    write_all(&b);
    if (b.failed)
        cv_http_respond_text(c, 500, "out of memory writing the metrics\n");
    else
        cv_http_respond(c, 200, CV_PROM_CONTENT_TYPE, NULL, b.data, b.len);
    cv_buf_free(&b);
}

int cv_metrics_serve(uv_loop_t *loop, const char *addr, unsigned roles, const char *id,
                     const char *role, char *errstr, size_t errstr_size)
{
    hists_init();
    reg.roles = roles;
    reg.started = cv_now();
    snprintf(reg.id, sizeof(reg.id), "%s", id);
    snprintf(reg.role, sizeof(reg.role), "%s", role);
    reg.address[0] = '\0';
    if (strcmp(addr, "none") == 0)
        return 0;
    char host[256], why[256];
    int port;
    if (cv_httpreq_addr(addr, host, sizeof(host), &port, why, sizeof(why)))
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "--metrics-addr \"%s\": %s", addr, why);
    int rc = cv_http_start(loop, addr, on_request, NULL, &reg.http, why, sizeof(why));
    if (rc)
        return cv_seterr(errstr, errstr_size, rc, "--metrics-addr \"%s\": %s", addr, why);
    snprintf(reg.address, sizeof(reg.address), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host,
             cv_http_port(reg.http));
    cv_info("metrics at http://%s/metrics", reg.address);
    return 0;
}

const char *cv_metrics_address(void)
{
    return reg.address;
}

void cv_metrics_stop(void)
{
    if (reg.http)
        cv_http_close(reg.http);
    reg.http = NULL;
}
