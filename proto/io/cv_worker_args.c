/*
 * The worker's options: where the services are (cv_opts), its identity,
 * window, lease time, attempt limit and input limits. Every numeric option
 * also has an environment variable, so a deployment can set it for all of
 * its workers at once.
 */
#include "cv__worker.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_log.h"
#include "cv_metrics.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_LIMIT_BASE = 1000 }; /* getopt values of the --max-* limit options */

static void usage(FILE *f, const char *prog, const cv_worker_def_t *def)
{
    char limits[2048];
    cv_limits_usage(limits, sizeof(limits));
    fprintf(f,
            "usage: %s [options]\n"
            "Converge %s worker: consumes %s and keeps stacks converging.\n\n"
            "options:\n"
            "  --redis URL        Redis (default $CONVERGE_REDIS or redis://127.0.0.1:6379/0;\n"
            "                     password: first line of $CONVERGE_REDIS_PASSWORD_FILE; a\n"
            "                     cluster's announced addresses: $CONVERGE_REDIS_ADDRESS_MAP)\n"
            "  --kafka BROKERS    Kafka bootstrap servers (default $CONVERGE_KAFKA)\n"
            "  --kafka-opt K=V    librdkafka setting, repeatable (also $CONVERGE_KAFKA_OPTS,\n"
            "                     comma-separated)\n"
            "  --id ID            worker id, no spaces or '@' (default %s-<host>-<pid>); unique\n"
            "                     among running workers: a worker started with the id of\n"
            "                     one that died takes over its leases at once\n"
            "  --prefix P         Redis key prefix (default $CONVERGE_PREFIX or cv:)\n"
            "  --window N         jobs in flight at most (default 2048)\n"
            "  --lease-ms MS      resource lease time, renewed while held (default 5000;\n"
            "                     $CONVERGE_LEASE_MS)\n"
            "  --session-ms MS    Kafka group session: how long the partitions of a worker\n"
            "                     that died wait before they move (default 6000;\n"
            "                     $CONVERGE_SESSION_MS; the broker's\n"
            "                     group.min.session.timeout.ms bounds it)\n"
            "  --max-attempts N   transient failures of a job, while Redis and Kafka are\n"
            "                     reachable, before it is dead-lettered and its stack failed\n"
            "                     (default 20; $CONVERGE_MAX_ATTEMPTS)\n"
            "  --reap-stall-ms MS  engines: re-queue the work of a stack in progress that\n"
            "                     made no progress for this long (default 10000;\n"
            "                     $CONVERGE_REAP_STALL_MS)\n"
            "  --reap-interval-ms MS  how often the reaper looks (default 2000;\n"
            "                     $CONVERGE_REAP_INTERVAL_MS)\n"
            "  --isolation-ms MS  cut off from Redis alone or Kafka alone this long, step\n"
            "                     aside: hand the jobs back, leave the group, renew no\n"
            "                     lease until both answer (default 5000; 0: never;\n"
            "                     $CONVERGE_ISOLATION_MS)\n"
            "  --deleted-retention-s S  engines: purge every key of a stack this long after\n"
            "                     its delete completed (default 86400; at least 1, for\n"
            "                     `delete --wait` to see it; $CONVERGE_DELETED_RETENTION_S)\n"
            "  --max-events-per-stack N  a stack keeps about its last N events (default\n"
            "                     1000, as Heat; 0: all; $CONVERGE_MAX_EVENTS_PER_STACK)\n"
            "%s" CV_LOG_OPTS_USAGE "  --help             this text\n%s",
            prog, def->role, def->topic, def->role, limits,
            def->usage_extra ? def->usage_extra : "");
    fputs("metrics (docs/metrics.md):\n" CV_METRICS_USAGE, f);
}

/* --metrics-addr: checked when the endpoint starts (cv_metrics_serve), so
 * that a bad address and a port in use are told alike. */
static int set_metrics_addr(cv_worker_t *w, const char *addr, char *errstr, size_t errstr_size)
{
    if (strlen(addr) >= sizeof(w->metrics_addr))
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "--metrics-addr: at most %zu characters",
                         sizeof(w->metrics_addr) - 1);
    snprintf(w->metrics_addr, sizeof(w->metrics_addr), "%s", addr);
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return CV_EINVAL;
    *out = (int)v;
    return 0;
}

/* The numeric options: option name, environment variable, bounds. */
typedef struct int_opt {
    int id;
    const char *name, *env;
    int lo, hi;
    size_t offset;
} int_opt_t;

static const int_opt_t int_opts[] = {
    {'w', "window", NULL, 1, 1000000, offsetof(cv_worker_t, window)},
    {'l', "lease-ms", "CONVERGE_LEASE_MS", 100, 3600000, offsetof(cv_worker_t, lease_ms)},
    {'S', "session-ms", "CONVERGE_SESSION_MS", 100, 3600000, offsetof(cv_worker_t, session_ms)},
    {'a', "max-attempts", "CONVERGE_MAX_ATTEMPTS", 1, 1000000, offsetof(cv_worker_t, max_attempts)},
    {'s', "reap-stall-ms", "CONVERGE_REAP_STALL_MS", 100, 86400000,
     offsetof(cv_worker_t, reap_stall_ms)},
    {'n', "reap-interval-ms", "CONVERGE_REAP_INTERVAL_MS", 100, 3600000,
     offsetof(cv_worker_t, reap_interval_ms)},
    {'I', "isolation-ms", "CONVERGE_ISOLATION_MS", 0, 3600000, offsetof(cv_worker_t, isolation_ms)},
    {'R', "deleted-retention-s", "CONVERGE_DELETED_RETENTION_S", 1, 315360000,
     offsetof(cv_worker_t, deleted_retention_s)},
    {'E', "max-events-per-stack", "CONVERGE_MAX_EVENTS_PER_STACK", 0, 100000000,
     offsetof(cv_worker_t, max_events_per_stack)},
};
enum { NINT_OPTS = sizeof(int_opts) / sizeof(int_opts[0]) };

static int set_int(cv_worker_t *w, const int_opt_t *o, const char *text, bool from_env,
                   char *errstr, size_t errstr_size)
{
    if (parse_int(text, o->lo, o->hi, (int *)((char *)w + o->offset)) == 0)
        return 0;
    return cv_seterr(errstr, errstr_size, CV_EINVAL, "%s%s: expected %d..%d", from_env ? "" : "--",
                     from_env ? o->env : o->name, o->lo, o->hi);
}

/* Numeric settings taken from the environment before argv. */
static int from_env(cv_worker_t *w, char *errstr, size_t errstr_size)
{
    for (int i = 0; i < NINT_OPTS; i++) {
        const char *v = int_opts[i].env ? getenv(int_opts[i].env) : NULL;
        if (v && *v && set_int(w, &int_opts[i], v, true, errstr, errstr_size))
            return CV_EINVAL;
    }
    return cv_limits_from_env(&w->limits, errstr, errstr_size);
}

/* A worker id names the holder of its leases ("<id>@<incarnation>:<n>"), so
 * it may not contain the separator: the id is what precedes the first one. */
static int set_id(cv_worker_t *w, const char *id, char *errstr, size_t errstr_size)
{
    if (strlen(id) >= sizeof(w->id) || strchr(id, ' ') || strchr(id, CV_HOLDER_SEP))
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "--id \"%s\": at most %zu characters, no spaces and no '%c' (it "
                         "separates a worker id from its incarnation in lease holders)",
                         id, sizeof(w->id) - 1, CV_HOLDER_SEP);
    snprintf(w->id, sizeof(w->id), "%s", id);
    return 0;
}

/* One option; 1 for an unknown one (usage is printed). */
static int parse_one(cv_worker_t *w, int c, const char *arg, cv_log_opts_t *log, char *errstr,
                     size_t errstr_size)
{
    switch (c) {
    case 'r':
        return cv_opts_set_redis(&w->opts, arg, errstr, errstr_size);
    case 'k':
        snprintf(w->opts.kafka, sizeof(w->opts.kafka), "%s", arg);
        return 0;
    case 'o':
        return cv_opts_add_kafka(&w->opts, arg, errstr, errstr_size);
    case 'i':
        return set_id(w, arg, errstr, errstr_size);
    case 'p':
        snprintf(w->opts.prefix, sizeof(w->opts.prefix), "%s", arg);
        return 0;
    case 'v':
        log->level = CV_LOG_DEBUG;
        return 0;
    case 'F':
        return cv_log_opts_set(log, "log-format", arg, errstr, errstr_size);
    case 'L':
        return cv_log_opts_set(log, "log-level", arg, errstr, errstr_size);
    case 'M':
        return set_metrics_addr(w, arg, errstr, errstr_size);
    default:
        for (int i = 0; i < NINT_OPTS; i++)
            if (int_opts[i].id == c)
                return set_int(w, &int_opts[i], arg, false, errstr, errstr_size);
        if (c >= OPT_LIMIT_BASE && c < OPT_LIMIT_BASE + CV_LIMIT__COUNT)
            return cv_limits_set(&w->limits, cv_limit_option((cv_limit_t)(c - OPT_LIMIT_BASE)), arg,
                                 errstr, errstr_size);
        return 1;
    }
}

int cv__worker_args(cv_worker_t *w, int argc, char **argv, const cv_worker_def_t *def,
                    cv_log_opts_t *log)
{
    static const struct option fixed[] = {
        {"redis", required_argument, 0, 'r'},        {"kafka", required_argument, 0, 'k'},
        {"kafka-opt", required_argument, 0, 'o'},    {"id", required_argument, 0, 'i'},
        {"prefix", required_argument, 0, 'p'},       {"verbose", no_argument, 0, 'v'},
        {"log-format", required_argument, 0, 'F'},   {"log-level", required_argument, 0, 'L'},
        {"metrics-addr", required_argument, 0, 'M'}, {"help", no_argument, 0, 'h'}};
    enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]) };
    struct option longopts[NFIXED + NINT_OPTS + CV_LIMIT__COUNT + 1], *o = longopts;
    memcpy(o, fixed, sizeof(fixed));
    o += NFIXED;
    for (int i = 0; i < NINT_OPTS; i++)
        *o++ = (struct option){int_opts[i].name, required_argument, 0, int_opts[i].id};
    for (int i = 0; i < CV_LIMIT__COUNT; i++)
        *o++ = (struct option){cv_limit_option((cv_limit_t)i), required_argument, 0,
                               OPT_LIMIT_BASE + i};
    *o = (struct option){0, 0, 0, 0};
    char err[512] = "";
    const char *metrics_env = getenv(CV_METRICS_ADDR_ENV);
    if (set_metrics_addr(w, metrics_env && *metrics_env ? metrics_env : CV_METRICS_ADDR_DEFAULT,
                         err, sizeof(err))) {
        fprintf(stderr, "%s: $%s: %s\n", argv[0], CV_METRICS_ADDR_ENV, err);
        return CV_EINVAL;
    }
    if (from_env(w, err, sizeof(err)) || cv_log_opts_from_env(log, err, sizeof(err))) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return CV_EINVAL;
    }
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout, argv[0], def);
            exit(0);
        }
        int rc = parse_one(w, c, optarg, log, err, sizeof(err));
        if (rc == 1) {
            usage(stderr, argv[0], def);
            return CV_EINVAL;
        }
        if (rc) {
            fprintf(stderr, "%s: %s\n", argv[0], err);
            return rc;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument \"%s\"\n", argv[0], argv[optind]);
        return CV_EINVAL;
    }
    cv_redis_set_events_max(w->max_events_per_stack); /* before the scripts load */
    return 0;
}
