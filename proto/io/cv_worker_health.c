/*
 * A worker's health, as operators see it: the liveness record
 * (<prefix>worker:<id>, docs/keyspace.md) and one log line when an outage of
 * Redis or Kafka starts and one when it ends. Jobs keep retrying through an
 * outage; only failures while both services answer count towards a job's
 * attempt limit (cv_worker_retry).
 */
#include "cv__worker.h"

#include "cv_keyfile.h"
#include "cv_contract.h"
#include "cv_log.h"
#include "cv_metrics.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LIVENESS_TTL_S 10
#define LIVENESS_INTERVAL_MS 2000
#define LIVENESS_TICK_MS 250
#define KAFKA_PROBE_S 1.0

/* ---- outages ---- */

static void on_redis_state(void *ud, bool up, const char *why)
{
    cv_worker_t *w = ud;
    double duration;
    if (up && cv_outage_up(&w->redis_outage, cv_now(), &duration))
        cv_info("Redis at %s:%d is back after %.1f s (outage %llu)", w->opts.redis_host,
                w->opts.redis_port, duration, (unsigned long long)w->redis_outage.count);
    else if (!up && cv_outage_down(&w->redis_outage, cv_now(), why))
        cv_warn("Redis at %s:%d is unreachable (%s); jobs wait and retry until it is back",
                w->opts.redis_host, w->opts.redis_port, why);
    else
        cv_debug("Redis: %s", up ? "connected" : why);
}

static void on_kafka_state(void *ud, bool up, const char *why)
{
    cv_worker_t *w = ud;
    double duration;
    if (up && cv_outage_up(&w->kafka_outage, cv_now(), &duration))
        cv_info("Kafka at %s is back after %.1f s (outage %llu)", w->opts.kafka, duration,
                (unsigned long long)w->kafka_outage.count);
    else if (!up && cv_outage_down(&w->kafka_outage, cv_now(), why))
        cv_warn("Kafka at %s is unreachable (%s); jobs wait and retry until it is back",
                w->opts.kafka, why);
}

bool cv_worker_services_up(const cv_worker_t *w)
{
    return w->redis && cv_redis_available(w->redis) && !w->kafka_outage.down;
}

unsigned cv_worker_retry(cv_worker_t *w, cv_retry_t *r)
{
    if (cv_retry_exhausted(r, cv_worker_services_up(w), (unsigned)w->max_attempts))
        return 0;
    return cv_backoff_ms(r->attempt);
}

/* ---- the liveness record ---- */

typedef struct fields {
    const char *argv[48];
    char buf[16][48];
    int argc, nbuf;
} fields_t;

static void add(fields_t *f, const char *name, const char *value)
{
    f->argv[f->argc++] = name;
    f->argv[f->argc++] = value;
}

static void add_u64(fields_t *f, const char *name, uint64_t v)
{
    snprintf(f->buf[f->nbuf], sizeof(f->buf[0]), "%llu", (unsigned long long)v);
    add(f, name, f->buf[f->nbuf++]);
}

static void add_time(fields_t *f, const char *name, double t)
{
    snprintf(f->buf[f->nbuf], sizeof(f->buf[0]), "%.3f", t);
    add(f, name, f->buf[f->nbuf++]);
}

/* When the liveness record's HSET was sent: one at a time is enough for a
 * sample (a reply that crosses a newer write measures from the newer). */
static double sent_at;

static void on_liveness_written(cv_redis_t *r, redisReply *rep, void *ud)
{
    (void)r;
    if (rep && rep->type != REDIS_REPLY_ERROR)
        cv_metrics_redis_roundtrip(cv_now() - *(double *)ud);
}

static void write_liveness(cv_worker_t *w, const char *state)
{
    char key[CV_KEY_MAX], last_outage[256];
    cv_key(key, sizeof(key), CV_KEY_WORKER, NULL, 0, w->id);
    cv_outage_describe_last(&w->redis_outage, &w->kafka_outage, last_outage, sizeof(last_outage));
    fields_t f = {.argc = 2};
    f.argv[0] = "HSET";
    f.argv[1] = key;
    add(&f, "role", w->role);
    add_u64(&f, "pid", (uint64_t)getpid());
    add(&f, "incarnation", w->incarnation);
    add_time(&f, "started", w->started);
    add_time(&f, "last_seen", cv_now());
    add(&f, "state", state);
    static const char *const counter_fields[] = {
#define XX(name, log_words, liveness_field) liveness_field,
        CV_STAT_MAP(XX)
#undef XX
    };
    for (int s = 0; s < CV_STAT_MAX; s++)
        if (counter_fields[s])
            add_u64(&f, counter_fields[s], cv_worker_stat(w, (cv_stat_t)s));
    add_u64(&f, "inflight", (uint64_t)cv__worker_inflight(w));
    add_u64(&f, "redis_outages", w->redis_outage.count);
    add_u64(&f, "kafka_outages", w->kafka_outage.count);
    add(&f, "last_outage", last_outage);
    add(&f, "isolated_from", w->isolated ? w->isolated_from : "");
    add(&f, "metrics", cv_metrics_address());
    add(&f, "seal_key", cv_keyring_current(cv_seal_ring()));
    /* the record's write is also the sample of Redis round trips */
    sent_at = cv_now();
    cv_redis_argv(w->redis, f.argc, f.argv, NULL, on_liveness_written, &sent_at);
    char ttl[8];
    snprintf(ttl, sizeof(ttl), "%d", LIVENESS_TTL_S);
    const char *expire[] = {"EXPIRE", key, ttl};
    cv_redis_argv(w->redis, 3, expire, NULL, NULL, NULL);
}

static const char *worker_state(const cv_worker_t *w)
{
    return w->stopping            ? "stopping"
           : w->isolated          ? "isolated"
           : cv__worker_joined(w) ? "ready"
                                  : "joining";
}

void cv__worker_liveness_now(cv_worker_t *w)
{
    if (!w->redis || !cv_redis_connected(w->redis))
        return;
    const char *state = worker_state(w);
    w->liveness_state = state;
    w->liveness_written = cv_now();
    write_liveness(w, state);
}

/* A producer librdkafka gave up on is replaced; what it held fails back to
 * its jobs, which send again through the new one. Tried every tick. */
static void producer_renew(cv_worker_t *w)
{
    if (!w->producer || !cv_producer_failed(w->producer) || w->stopping)
        return;
    char err[512];
    cv_producer_t *fresh;
    if (cv_producer_new(&fresh, w->loop, &w->opts, err, sizeof(err)) != 0) {
        cv_warn("cannot replace the failed Kafka producer: %s; trying again", err);
        return;
    }
    cv_producer_on_state(fresh, on_kafka_state, w);
    cv_warn("the Kafka producer failed for good: replaced by a new one");
    cv_producer_t *old = w->producer;
    w->producer = fresh;
    cv_producer_free(old);
}

/* Ticks often so a change of state (joining → ready → stopping) shows at
 * once; writes only on a change or every LIVENESS_INTERVAL_MS. During a
 * Kafka outage it also asks librdkafka whether a broker is back, since a
 * worker with nothing to send would otherwise not notice; and it lets the
 * worker step aside or back (cv_worker_isolation.c). */
static void on_liveness(uv_timer_t *t)
{
    cv_worker_t *w = t->data;
    double now = cv_now();
    if (w->kafka_outage.down && w->producer && now - w->kafka_probed >= KAFKA_PROBE_S) {
        w->kafka_probed = now;
        cv_producer_probe(w->producer);
    }
    cv__worker_consumer_renew(w);
    producer_renew(w);
    cv__worker_isolation_tick(w, now);
    /* a rotated key file is read within a second; the record then says
     * the key this worker seals with (what `convergectl rekey` waits for) */
    static double key_checked;
    bool rekeyed = false;
    if (now - key_checked >= 1.0) {
        key_checked = now;
        rekeyed = cv_keyfile_refresh() == 1;
    }
    if (!w->redis || !cv_redis_connected(w->redis))
        return;
    const char *state = worker_state(w);
    if (!rekeyed && state == w->liveness_state &&
        now - w->liveness_written < LIVENESS_INTERVAL_MS / 1000.0)
        return;
    cv__worker_liveness_now(w);
}

void cv__worker_health_start(cv_worker_t *w)
{
    cv_outage_init(&w->redis_outage, "redis");
    cv_outage_init(&w->kafka_outage, "kafka");
    cv_redis_on_state(w->redis, on_redis_state, w);
    cv_producer_on_state(w->producer, on_kafka_state, w);
    uv_timer_init(w->loop, &w->liveness);
    w->liveness.data = w;
    uv_timer_start(&w->liveness, on_liveness, 0, LIVENESS_TICK_MS);
}

void cv__worker_health_stop(cv_worker_t *w)
{
    uv_timer_stop(&w->liveness);
    uv_close((uv_handle_t *)&w->liveness, NULL);
}

void cv__worker_redis_state(void *ud, bool up, const char *why)
{
    on_redis_state(ud, up, why);
}

/* The consumer's view of the brokers goes to the same record. */
void cv__worker_kafka_state(void *ud, bool up, const char *why)
{
    on_kafka_state(ud, up, why);
}
