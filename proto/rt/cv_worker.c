#include "cv_worker.h"

#include "cv_error.h"
#include "cv_keys.h"
#include "cv_log.h"
#include "cv_msg.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIVENESS_TTL_S 10
#define LIVENESS_INTERVAL_MS 2000
#define LIVENESS_TICK_MS 250
#define SHUTDOWN_GRACE_S 10

static void usage(FILE *f, const char *prog, const cv_worker_def_t *def)
{
    fprintf(f,
            "usage: %s [options]\n"
            "Converge %s worker: consumes %s and keeps stacks converging.\n\n"
            "options:\n"
            "  --redis URL        Redis (default $CONVERGE_REDIS or redis://127.0.0.1:6379/0)\n"
            "  --kafka BROKERS    Kafka bootstrap servers (default $CONVERGE_KAFKA)\n"
            "  --kafka-opt K=V    librdkafka setting, repeatable (also $CONVERGE_KAFKA_OPTS,\n"
            "                     comma-separated)\n"
            "  --id ID            worker id (default %s-<host>-<pid>)\n"
            "  --prefix P         Redis key prefix (default $CONVERGE_PREFIX or cv:)\n"
            "  --window N         jobs in flight at most (default 2048)\n"
            "  --lease-ms MS      resource lease time (default 30000)\n"
            "  --verbose          debug logs\n"
            "  --help             this text\n%s",
            prog, def->role, def->topic, def->role, def->usage_extra ? def->usage_extra : "");
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

static int parse_args(cv_worker_t *w, int argc, char **argv, const cv_worker_def_t *def,
                      int *verbose)
{
    static const struct option longopts[] = {{"redis", required_argument, 0, 'r'},
                                             {"kafka", required_argument, 0, 'k'},
                                             {"kafka-opt", required_argument, 0, 'o'},
                                             {"id", required_argument, 0, 'i'},
                                             {"prefix", required_argument, 0, 'p'},
                                             {"window", required_argument, 0, 'w'},
                                             {"lease-ms", required_argument, 0, 'l'},
                                             {"verbose", no_argument, 0, 'v'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    char err[512] = "";
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case 'r':
            rc = cv_opts_set_redis(&w->opts, optarg, err, sizeof(err));
            break;
        case 'k':
            snprintf(w->opts.kafka, sizeof(w->opts.kafka), "%s", optarg);
            break;
        case 'o':
            rc = cv_opts_add_kafka(&w->opts, optarg, err, sizeof(err));
            break;
        case 'i':
            if (strlen(optarg) >= sizeof(w->id) || strchr(optarg, ' '))
                rc = cv_seterr(err, sizeof(err), CV_EINVAL,
                               "--id: at most %zu characters, no spaces", sizeof(w->id) - 1);
            else
                snprintf(w->id, sizeof(w->id), "%s", optarg);
            break;
        case 'p':
            snprintf(w->opts.prefix, sizeof(w->opts.prefix), "%s", optarg);
            break;
        case 'w':
            if (parse_int(optarg, 1, 1000000, &w->window))
                rc = cv_seterr(err, sizeof(err), CV_EINVAL, "--window: expected 1..1000000");
            break;
        case 'l':
            if (parse_int(optarg, 100, 3600000, &w->lease_ms))
                rc = cv_seterr(err, sizeof(err), CV_EINVAL, "--lease-ms: expected 100..3600000");
            break;
        case 'v':
            *verbose = 1;
            break;
        case 'h':
            usage(stdout, argv[0], def);
            exit(0);
        default:
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
    return 0;
}

unsigned cv_backoff_ms(unsigned attempt)
{
    unsigned base = 50u << (attempt < 7 ? attempt : 7); /* 100 ms .. 6.4 s */
    return base / 2 + (unsigned)rand() % (base / 2 + 1);
}

/* The liveness record: operators see who is up, and since when, and what it did. */
static void write_liveness(cv_worker_t *w, const char *state);

/* Ticks often so a change of state (joining → ready → stopping) shows at once;
 * writes only on a change or every LIVENESS_INTERVAL_MS. */
static void on_liveness(uv_timer_t *t)
{
    cv_worker_t *w = t->data;
    if (!w->redis || !cv_redis_connected(w->redis))
        return;
    const char *state = w->stopping                       ? "stopping"
                        : cv_consumer_joined(w->consumer) ? "ready"
                                                          : "joining";
    double now = cv_now();
    if (state == w->liveness_state && now - w->liveness_written < LIVENESS_INTERVAL_MS / 1000.0)
        return;
    w->liveness_state = state;
    w->liveness_written = now;
    write_liveness(w, state);
}

static void write_liveness(cv_worker_t *w, const char *state)
{
    char key[CV_KEY_MAX], idkey[128], pid[16], started[32], seen[32], jobs[24], acted[24];
    snprintf(idkey, sizeof(idkey), "worker:%s", w->id);
    cv_key_global(key, sizeof(key), idkey);
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    snprintf(started, sizeof(started), "%.3f", w->started);
    snprintf(seen, sizeof(seen), "%.3f", cv_now());
    snprintf(jobs, sizeof(jobs), "%llu", (unsigned long long)w->stats.jobs);
    snprintf(acted, sizeof(acted), "%llu", (unsigned long long)w->stats.acted);
    char inflight[16];
    snprintf(inflight, sizeof(inflight), "%d", w->consumer ? cv_consumer_inflight(w->consumer) : 0);
    const char *hset[] = {"HSET",    key,     "role",      w->role, "pid",      pid,
                          "started", started, "last_seen", seen,    "state",    state,
                          "jobs",    jobs,    "actions",   acted,   "inflight", inflight};
    cv_redis_argv(w->redis, (int)(sizeof(hset) / sizeof(hset[0])), hset, NULL, NULL, NULL);
    char ttl[8];
    snprintf(ttl, sizeof(ttl), "%d", LIVENESS_TTL_S);
    const char *expire[] = {"EXPIRE", key, ttl};
    cv_redis_argv(w->redis, 3, expire, NULL, NULL, NULL);
}

static void stop_loop_handles(cv_worker_t *w)
{
    uv_timer_stop(&w->liveness);
    uv_close((uv_handle_t *)&w->liveness, NULL);
    uv_timer_stop(&w->shutdown_timer);
    uv_close((uv_handle_t *)&w->shutdown_timer, NULL);
    uv_signal_stop(&w->sigterm);
    uv_close((uv_handle_t *)&w->sigterm, NULL);
    uv_signal_stop(&w->sigint);
    uv_close((uv_handle_t *)&w->sigint, NULL);
}

/* Graceful stop: consume nothing new, give jobs in flight a grace period,
 * commit the finished prefix; unfinished jobs are redelivered elsewhere. */
static void on_shutdown_tick(uv_timer_t *t)
{
    cv_worker_t *w = t->data;
    int inflight = cv_consumer_inflight(w->consumer);
    if (inflight > 0 && cv_now() < w->shutdown_deadline)
        return;
    if (inflight > 0)
        cv_warn("stopping with %d jobs in flight; they will be redelivered", inflight);
    on_liveness(&w->liveness);
    cv_consumer_close(w->consumer);
    w->consumer = NULL;
    cv_producer_free(w->producer);
    w->producer = NULL;
    cv_redis_close(w->redis);
    w->redis = NULL;
    stop_loop_handles(w);
}

static void on_signal(uv_signal_t *s, int signum)
{
    cv_worker_t *w = s->data;
    if (w->stopping)
        return;
    cv_info("signal %d: stopping (grace %d s)", signum, SHUTDOWN_GRACE_S);
    w->stopping = true;
    w->shutdown_deadline = cv_now() + SHUTDOWN_GRACE_S;
    uv_timer_start(&w->shutdown_timer, on_shutdown_tick, 0, 50);
}

static int connect_all(cv_worker_t *w, const cv_worker_def_t *def)
{
    char err[512];
    int rc = cv_redis_open(&w->redis, w->loop, &w->opts, err, sizeof(err));
    if (!rc)
        rc = cv_producer_new(&w->producer, w->loop, &w->opts, err, sizeof(err));
    if (!rc) {
        const char *topics[] = {def->topic};
        cv_consumer_conf_t conf = {def->group, topics, 1, w->window, def->handler, w};
        rc = cv_consumer_new(&w->consumer, w->loop, &w->opts, &conf, err, sizeof(err));
    }
    if (rc)
        cv_error("%s", err);
    return rc;
}

int cv_worker_main(int argc, char **argv, const cv_worker_def_t *def)
{
    static cv_worker_t w; /* one per process; signal handlers reach it */
    char err[512];
    int verbose = 0;
    w.role = def->role;
    w.window = 2048;
    w.lease_ms = 30000;
    if (cv_opts_from_env(&w.opts, err, sizeof(err))) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 2;
    }
    if (parse_args(&w, argc, argv, def, &verbose))
        return 2;
    if (!w.id[0]) {
        char host[64] = "host";
        gethostname(host, sizeof(host) - 1);
        snprintf(w.id, sizeof(w.id), "%s-%.32s-%d", def->role, host, (int)getpid());
    }
    if (cv_keys_set_prefix(w.opts.prefix)) {
        fprintf(stderr, "%s: --prefix too long\n", argv[0]);
        return 2;
    }
    cv_log_init(w.id, verbose ? CV_LOG_DEBUG : CV_LOG_INFO);
    srand((unsigned)getpid() ^ (unsigned)(cv_now() * 1000));
    w.loop = uv_default_loop();
    w.started = cv_now();
    if (connect_all(&w, def)) {
        cv_opts_free(&w.opts);
        return 3;
    }
    uv_timer_init(w.loop, &w.liveness);
    w.liveness.data = &w;
    uv_timer_start(&w.liveness, on_liveness, 0, LIVENESS_TICK_MS);
    uv_timer_init(w.loop, &w.shutdown_timer);
    w.shutdown_timer.data = &w;
    uv_signal_init(w.loop, &w.sigterm);
    w.sigterm.data = &w;
    uv_signal_start(&w.sigterm, on_signal, SIGTERM);
    uv_signal_init(w.loop, &w.sigint);
    w.sigint.data = &w;
    uv_signal_start(&w.sigint, on_signal, SIGINT);
    cv_info("%s started: redis %s, kafka %s, window %d", def->role, w.opts.redis_url, w.opts.kafka,
            w.window);
    uv_run(w.loop, UV_RUN_DEFAULT);
    uv_loop_close(w.loop);
    cv_info("stopped: %llu jobs, %llu actions, %llu retries, %llu stale, %llu fenced",
            (unsigned long long)w.stats.jobs, (unsigned long long)w.stats.acted,
            (unsigned long long)w.stats.retries, (unsigned long long)w.stats.stale,
            (unsigned long long)w.stats.fenced);
    cv_opts_free(&w.opts);
    return 0;
}

int cv_worker_publish(cv_worker_t *w, const char *topic, const cv_msg_t *m, cv_delivery_cb cb,
                      void *ud)
{
    char *buf;
    size_t len;
    int rc = cv_msg_encode(m, &buf, &len);
    if (rc)
        return rc;
    char key[CV_ID_MAX + CV_NAME_MAX + 2];
    size_t klen = cv_msg_key(m, key, sizeof(key));
    rc = cv_producer_send(w->producer, topic, key, klen, buf, len, cb, ud);
    free(buf);
    return rc;
}

void cv_worker_dead_letter(cv_worker_t *w, const void *payload, size_t len, const char *reason,
                           cv_delivery_cb cb, void *ud)
{
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = CV_MSG_DEAD;
    snprintf(m.reason, sizeof(m.reason), "%s", reason);
    m.original = payload;
    m.original_len = len;
    cv_warn("dead-lettering a message: %s", reason);
    w->stats.dead++;
    char *buf = NULL;
    size_t blen;
    if (cv_msg_encode(&m, &buf, &blen) != 0 ||
        cv_producer_send(w->producer, CV_TOPIC_DEAD, NULL, 0, buf, blen, cb, ud) != 0) {
        if (cb)
            cb(ud, CV_EKAFKA);
    }
    free(buf);
}

typedef struct later {
    uv_timer_t timer;
    void (*fn)(void *arg);
    void *arg;
} later_t;

static void on_later_closed(uv_handle_t *h)
{
    free(h->data);
}

static void on_later(uv_timer_t *t)
{
    later_t *l = t->data;
    l->fn(l->arg);
    uv_close((uv_handle_t *)&l->timer, on_later_closed);
}

int cv_worker_later(cv_worker_t *w, unsigned ms, void (*fn)(void *arg), void *arg)
{
    later_t *l = malloc(sizeof(*l));
    if (!l)
        return CV_ENOMEM;
    l->fn = fn;
    l->arg = arg;
    uv_timer_init(w->loop, &l->timer);
    l->timer.data = l;
    uv_timer_start(&l->timer, on_later, ms, 0);
    return 0;
}

static void on_dead_delivered(void *ud, int err)
{
    (void)err; /* a failed dead letter is logged by the producer; never block the partition */
    cv_job_finish(ud);
}

int cv_worker_accept(cv_worker_t *w, cv_job_t *job, const void *payload, size_t len,
                     unsigned accepted, cv_msg_t *m)
{
    char err[256], reason[320];
    w->stats.jobs++;
    int rc = cv_msg_decode(payload, len, m, err, sizeof(err));
    if (rc == 0 && !(accepted & (1u << m->type))) {
        snprintf(err, sizeof(err), "message type %s does not belong on the topic this %s reads",
                 cv_msg_type_name(m->type), w->role);
        rc = CV_EPROTO;
    }
    if (rc == 0)
        return 0;
    snprintf(reason, sizeof(reason), "%s: %s", w->role, err);
    cv_worker_dead_letter(w, payload, len, reason, on_dead_delivered, job);
    return CV_EPROTO;
}

int cv_worker_publish_node(cv_worker_t *w, const char *stack, uint64_t traversal, const char *node,
                           cv_delivery_cb cb, void *ud)
{
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = CV_MSG_CHECK;
    snprintf(m.stack, sizeof(m.stack), "%s", stack);
    m.traversal = traversal;
    m.phase = node[0] == 'c' ? CV_PHASE_CLEANUP : CV_PHASE_UPDATE;
    snprintf(m.resource, sizeof(m.resource), "%s", node + 2);
    return cv_worker_publish(w, CV_TOPIC_CHECK, &m, cb, ud);
}
