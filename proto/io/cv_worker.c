#include "cv__worker.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_log.h"
#include "cv_metrics.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define SHUTDOWN_GRACE_S 10
/* How long a worker waits at its start for the metadata of the topics it
 * produces to (cv_producer_prepare). */
#define PREPARE_MS 3000

unsigned cv_backoff_ms(unsigned attempt)
{
    unsigned base = 50u << (attempt < 7 ? attempt : 7); /* 100 ms .. 6.4 s */
    return base / 2 + (unsigned)rand() % (base / 2 + 1);
}

static void stop_loop_handles(cv_worker_t *w)
{
    cv__worker_health_stop(w);
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
    int inflight = cv__worker_inflight(w);
    if (inflight > 0 && cv_now() < w->shutdown_deadline)
        return;
    if (inflight > 0)
        cv_warn("stopping with %d jobs in flight; they will be redelivered", inflight);
    cv__worker_liveness_now(w);
    for (int l = 0; l < CV_LANES; l++) {
        cv_consumer_close(w->lanes[l]);
        w->lanes[l] = NULL;
    }
    cv_producer_free(w->producer);
    w->producer = NULL;
    cv_redis_close(w->redis);
    w->redis = NULL;
    cv_metrics_stop();
    stop_loop_handles(w);
}

static void on_signal(uv_signal_t *s, int signum)
{
    cv_worker_t *w = s->data;
    if (w->stopping)
        return;
    cv_info("signal %d: stopping (grace %d s)", signum, SHUTDOWN_GRACE_S);
    w->stopping = true;
    if (w->stop)
        w->stop(w->services);
    w->services = NULL;
    w->shutdown_deadline = cv_now() + SHUTDOWN_GRACE_S;
    uv_timer_start(&w->shutdown_timer, on_shutdown_tick, 0, 50);
}

/* The lane's consumer: the bulk lane in the role's group, the express lane
 * in a group of its own ("<group>-express"). */
static int consumer_open(cv_worker_t *w, int lane, cv_consumer_t **out, char *errstr,
                         size_t errstr_size)
{
    char group[128];
    snprintf(group, sizeof(group), "%s%s", w->def->group,
             lane == CV_LANE_EXPRESS ? "-express" : "");
    const char *topics[] = {cv_topic_lane(w->def->topic, lane == CV_LANE_EXPRESS)};
    cv_consumer_conf_t conf = {.group = group,
                               .instance = w->id,
                               .topics = topics,
                               .ntopics = 1,
                               .window = lane == CV_LANE_EXPRESS ? CV_EXPRESS_WINDOW : w->window,
                               .session_ms = w->session_ms,
                               .handler = w->def->handler,
                               .ud = w,
                               .on_state = cv__worker_kafka_state,
                               .on_job_end = cv__worker_job_end};
    return cv_consumer_new(out, w->loop, &w->opts, &conf, errstr, errstr_size);
}

/* A consumer librdkafka gave up on is replaced: its jobs in flight finish
 * uncommitted (redelivered, their leases fence any repeat); the new one
 * joins as the same static member, or stays out while the worker is aside
 * from Redis. Tried again every tick until it works. */
void cv__worker_consumer_renew(cv_worker_t *w)
{
    for (int l = 0; l < CV_LANES && !w->stopping; l++) {
        if (!w->lanes[l] || !cv_consumer_failed(w->lanes[l]))
            continue;
        char err[512];
        cv_consumer_t *fresh;
        if (consumer_open(w, l, &fresh, err, sizeof(err)) != 0) {
            cv_warn("cannot replace the failed Kafka consumer: %s; trying again", err);
            continue;
        }
        cv_warn("the Kafka consumer failed for good: replaced by a new one (%d jobs in flight "
                "will be redelivered)",
                cv_consumer_inflight(w->lanes[l]));
        cv_consumer_close(w->lanes[l]);
        w->lanes[l] = fresh;
        if (w->unsubscribed)
            cv_consumer_unsubscribe(fresh);
    }
}

int cv__worker_inflight(const cv_worker_t *w)
{
    int n = 0;
    for (int l = 0; l < CV_LANES; l++)
        n += w->lanes[l] ? cv_consumer_inflight(w->lanes[l]) : 0;
    return n;
}

bool cv__worker_joined(const cv_worker_t *w)
{
    for (int l = 0; l < CV_LANES; l++)
        if (!w->lanes[l] || !cv_consumer_joined(w->lanes[l]))
            return false;
    return true;
}

bool cv__worker_group_lost(const cv_worker_t *w)
{
    for (int l = 0; l < CV_LANES; l++)
        if (w->lanes[l] && cv_consumer_lost(w->lanes[l]))
            return true;
    return false;
}

void cv__worker_unsubscribe(cv_worker_t *w)
{
    for (int l = 0; l < CV_LANES; l++)
        cv_consumer_unsubscribe(w->lanes[l]);
}

int cv__worker_subscribe(cv_worker_t *w, char *errstr, size_t errstr_size)
{
    int rc = 0;
    for (int l = 0; l < CV_LANES && rc == 0; l++)
        rc = cv_consumer_subscribe(w->lanes[l], errstr, errstr_size);
    return rc;
}

static int connect_all(cv_worker_t *w)
{
    char err[512];
    int rc = cv_redis_open(&w->redis, w->loop, &w->opts, err, sizeof(err));
    if (!rc)
        rc = cv_producer_new(&w->producer, w->loop, &w->opts, err, sizeof(err));
    /* Kafka down at the start: one wait of PREPARE_MS, then on all the same;
     * credentials refused are configuration, not an outage: exit 3
     * (cv_producer_prepare has said why) */
    if (!rc) {
        rc = cv_producer_prepare(w->producer, CV_TOPIC_CHECK, PREPARE_MS);
        if (rc == 0)
            rc = cv_producer_prepare(w->producer, CV_TOPIC_OBSERVE, PREPARE_MS);
        if (rc == CV_EAUTH)
            return rc;
        rc = 0;
    }
    for (int l = 0; l < CV_LANES && !rc; l++)
        rc = consumer_open(w, l, &w->lanes[l], err, sizeof(err));
    if (rc)
        cv_error("%s", err);
    return rc;
}

/* ---- counters ---- */

void cv_worker_count(cv_worker_t *w, cv_stat_t s, uint64_t n)
{
    assert(s < CV_STAT_MAX);
    w->cv__stat[s] += n;
}

uint64_t cv_worker_stat(const cv_worker_t *w, cv_stat_t s)
{
    assert(s < CV_STAT_MAX);
    return w->cv__stat[s];
}

/* "stopped: 12 jobs, 3 actions, ..., 0 handed back": every counter, in table order. */
static void log_counters(const cv_worker_t *w)
{
    static const char *const words[] = {
#define XX(name, log_words, liveness_field) log_words,
        CV_STAT_MAP(XX)
#undef XX
    };
    char line[512];
    size_t len = 0;
    for (int s = 0; s < CV_STAT_MAX && len < sizeof(line); s++)
        len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%llu %s", s ? ", " : "",
                                (unsigned long long)cv_worker_stat(w, (cv_stat_t)s), words[s]);
    cv_info("stopped: %s", line);
}

/* ---- the process ---- */

/* Unique per process start: two starts of one worker id differ in start
 * time or pid (a pid is not reused within a microsecond). The lease scripts
 * rely on it (lib.lua lease_holder_gone). */
static void name_incarnation(cv_worker_t *w)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    unsigned long long us =
        (unsigned long long)tv.tv_sec * 1000000ull + (unsigned long long)tv.tv_usec;
    snprintf(w->incarnation, sizeof(w->incarnation), "%llx-%x", us, (unsigned)getpid());
    snprintf(w->holder, sizeof(w->holder), "%s%c%s", w->id, CV_HOLDER_SEP, w->incarnation);
}

int cv_worker_main(int argc, char **argv, const cv_worker_def_t *def)
{
    static cv_worker_t w; /* one per process; signal handlers reach it */
    char err[512];
    cv_log_opts_t log;
    w.role = def->role;
    w.window = 2048;
    w.lease_ms = 5000; /* short, because it is renewed while held (cv_lease) */
    w.session_ms = 6000;
    w.max_attempts = 20;
    w.reap_stall_ms = 10000; /* twice the longest pause between two looks of an observer */
    w.reap_interval_ms = 2000;
    w.deleted_retention_s = 86400; /* a day, to read a deleted stack's events and ledger */
    w.max_events_per_stack = CV_REDIS_EVENTS_MAX;
    w.isolation_ms = 5000; /* longer than a Redis restart or a broker failover */
    cv_limits_init(&w.limits);
    if (cv_opts_from_env(&w.opts, err, sizeof(err))) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 2;
    }
    if (cv__worker_args(&w, argc, argv, def, &log))
        return 2;
    if (!w.id[0]) {
        char host[64] = "host";
        gethostname(host, sizeof(host) - 1);
        snprintf(w.id, sizeof(w.id), "%s-%.32s-%d", def->role, host, (int)getpid());
    }
    name_incarnation(&w);
    if (cv_keys_set_prefix(w.opts.prefix)) {
        fprintf(stderr, "%s: --prefix too long\n", argv[0]);
        return 2;
    }
    cv_log_start(def->role, w.id, &log);
    cv_opts_warn_unauthenticated(&w.opts, true);
    srand((unsigned)getpid() ^ (unsigned)(cv_now() * 1000));
    w.loop = uv_default_loop();
    w.started = cv_now();
    w.def = def;
    int rc = cv__worker_metrics_start(&w, argv[0]);
    if (rc) {
        cv_opts_free(&w.opts);
        return rc;
    }
    if (connect_all(&w)) {
        cv_opts_free(&w.opts);
        return 3;
    }
    cv__worker_health_start(&w);
    if (def->start)
        w.services = def->start(&w);
    w.stop = def->stop;
    uv_timer_init(w.loop, &w.shutdown_timer);
    w.shutdown_timer.data = &w;
    uv_signal_init(w.loop, &w.sigterm);
    w.sigterm.data = &w;
    uv_signal_start(&w.sigterm, on_signal, SIGTERM);
    uv_signal_init(w.loop, &w.sigint);
    w.sigint.data = &w;
    uv_signal_start(&w.sigint, on_signal, SIGINT);
    cv_info("%s started: incarnation %s, redis %s, kafka %s, window %d, lease %d ms, max "
            "attempts %d",
            def->role, w.incarnation, w.opts.redis_url, w.opts.kafka, w.window, w.lease_ms,
            w.max_attempts);
    uv_run(w.loop, UV_RUN_DEFAULT);
    uv_loop_close(w.loop);
    log_counters(&w);
    cv_opts_free(&w.opts);
    return 0;
}

/* Encodes m and sends it under key (NULL: no key). cb runs only when the
 * message was handed to the producer (rc 0). */
static int send_msg(cv_worker_t *w, const char *topic, const cv_msg_t *m, const char *key,
                    size_t klen, cv_delivery_cb cb, void *ud)
{
    char *buf;
    size_t len;
    int rc = cv_msg_encode(m, &buf, &len);
    if (rc)
        return rc;
    rc = cv_producer_send(w->producer, topic, key, klen, buf, len, cb, ud);
    free(buf);
    return rc;
}

int cv_worker_publish(cv_worker_t *w, const char *topic, const cv_msg_t *m, cv_delivery_cb cb,
                      void *ud)
{
    char key[CV_ID_MAX + CV_NAME_MAX + 2];
    size_t klen = cv_msg_key(m, key, sizeof(key));
    return send_msg(w, cv_topic_lane(topic, m->express), m, key, klen, cb, ud);
}

/* Without a key: a dead letter belongs to no stack's partition. */
void cv_worker_dead_letter(cv_worker_t *w, const void *payload, size_t len, const char *reason,
                           cv_delivery_cb cb, void *ud)
{
    cv_msg_t m = {.type = CV_MSG_DEAD, .original = payload, .original_len = len};
    snprintf(m.reason, sizeof(m.reason), "%s", reason);
    cv_warn("dead-lettering a message: %s", reason);
    cv_worker_count(w, CV_STAT_DEAD, 1);
    if (send_msg(w, CV_TOPIC_DEAD, &m, NULL, 0, cb, ud) != 0 && cb)
        cb(ud, CV_EKAFKA);
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

void cv_worker_hand_back(cv_worker_t *w, cv_job_t *job)
{
    cv_worker_count(w, CV_STAT_HANDED_BACK, 1);
    cv_job_hand_back(job);
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

/* What a dead letter keeps of a message over the size limit: enough to
 * tell what it was, and never itself too big for the dead-letter topic. */
#define OVERSIZE_KEEP_BYTES 65536

int cv_worker_accept(cv_worker_t *w, cv_job_t *job, const void *payload, size_t len,
                     unsigned accepted, cv_msg_t *m)
{
    char err[256], reason[320];
    cv_worker_count(w, CV_STAT_JOBS, 1);
    if (cv_limits_check(&w->limits, CV_LIMIT_MESSAGE_BYTES, len, w->role, err, sizeof(err))) {
        cv_job_set_dead(job);
        size_t keep = len < OVERSIZE_KEEP_BYTES ? len : OVERSIZE_KEEP_BYTES;
        snprintf(reason, sizeof(reason), "%s (first %zu bytes kept)", err, keep);
        cv_worker_dead_letter(w, payload, keep, reason, on_dead_delivered, job);
        return CV_ETOOBIG;
    }
    int rc = cv_msg_decode(payload, len, m, err, sizeof(err));
    if (rc == 0)
        cv_job_set_kind(job, m->type);
    if (rc == 0 && !(accepted & (1u << m->type))) {
        snprintf(err, sizeof(err), "message type %s does not belong on the topic this %s reads",
                 cv_msg_type_name(m->type), w->role);
        rc = CV_EPROTO;
    }
    if (rc == 0) {
        cv_debug("job %s: stack %s traversal %llu resource %s (%s) from partition %d offset %lld",
                 cv_msg_type_name(m->type), m->stack, (unsigned long long)m->traversal, m->resource,
                 cv_phase_name(m->phase), (int)cv_job_partition(job),
                 (long long)cv_job_offset(job));
        return 0;
    }
    snprintf(reason, sizeof(reason), "%s: %s", w->role, err);
    cv_job_set_dead(job);
    cv_worker_dead_letter(w, payload, len, reason, on_dead_delivered, job);
    return CV_EPROTO;
}

int cv_worker_publish_nodes(cv_worker_t *w, const char *stack, uint64_t traversal,
                            const char *const *nodes, size_t n, bool express, cv_delivery_cb cb,
                            void *ud)
{
    char list[(CV_MSG_NODES_MAX - 1) * (CV_NAME_MAX + 2)];
    cv_msg_t m = {.type = CV_MSG_CHECK, .traversal = traversal, .express = express};
    snprintf(m.stack, sizeof(m.stack), "%s", stack);
    if (n == 0 || n > CV_MSG_NODES_MAX || cv_msg_set_node(&m, nodes[0], strlen(nodes[0])) != 0)
        return CV_EINVAL;
    size_t len = 0;
    for (size_t i = 1; i < n; i++) {
        size_t k = strlen(nodes[i]);
        if (k > CV_NAME_MAX + 1)
            return CV_EINVAL;
        if (i > 1)
            list[len++] = '/';
        memcpy(list + len, nodes[i], k);
        len += k;
    }
    m.nodes = list;
    m.nodes_len = len;
    return cv_worker_publish(w, CV_TOPIC_CHECK, &m, cb, ud);
}

int cv_worker_publish_node(cv_worker_t *w, const char *stack, uint64_t traversal, const char *node,
                           bool express, cv_delivery_cb cb, void *ud)
{
    return cv_worker_publish_nodes(w, stack, traversal, &node, 1, express, cb, ud);
}

int cv_worker_publish_stack(cv_worker_t *w, const char *stack, int kind, uint64_t traversal,
                            bool express, cv_delivery_cb cb, void *ud)
{
    cv_msg_t m = {
        .type = CV_MSG_STACK, .kind = (uint8_t)kind, .traversal = traversal, .express = express};
    snprintf(m.stack, sizeof(m.stack), "%s", stack);
    return cv_worker_publish(w, CV_TOPIC_CHECK, &m, cb, ud);
}
