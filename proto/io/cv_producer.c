#include "cv_kafka.h"
#include "cv_kafka_conf.h"

#include "cv_base.h"
#include "cv_log.h"

#include <stdlib.h>
#include <string.h>

struct cv_producer {
    rd_kafka_t *rk;
    uv_loop_t *loop;
    cv__queue_watch_t watch; /* delivery reports, when on a loop */
    cv_kafka_state_cb on_state;
    void *state_ud;
    char auth_failure[256]; /* librdkafka's reason of the last SASL refusal */
    bool failed;            /* librdkafka raised a fatal error: this instance is done */
};

/* Metadata is asked for in steps this long, so that a refusal of our
 * credentials ends a check at once instead of at its timeout. */
#define CHECK_STEP_MS 250

static void report_state(cv_producer_t *p, bool up, const char *why)
{
    if (p->on_state)
        p->on_state(p->state_ud, up, why);
}

/* Errors reach us through rd_kafka_poll on the loop. Without a listener
 * (the CLI) they are logged as librdkafka would. */
static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    cv_producer_t *p = opaque;
    (void)rk;
    cv__kafka_err_t kind = cv__kafka_error_kind((rd_kafka_resp_err_t)err);
    if (err == RD_KAFKA_RESP_ERR__FATAL)
        p->failed = true; /* the owner makes a new producer (cv_producer_failed) */
    if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION)
        snprintf(p->auth_failure, sizeof(p->auth_failure), "%s", reason);
    if (p->auth_failure[0] && !p->on_state)
        cv_debug("Kafka producer: %s", reason); /* the CLI's check reports the refusal */
    else if (kind == CV__KAFKA_ERR_DOWN && p->on_state)
        report_state(p, false, reason);
    else if (kind == CV__KAFKA_ERR_OTHER || !p->on_state)
        cv_warn("Kafka producer: %s", reason);
    else
        cv_debug("Kafka producer: %s", reason);
}

typedef struct delivery {
    cv_delivery_cb cb;
    void *ud;
} delivery_t;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    delivery_t *d = m->_private;
    if (m->err)
        cv_warn("Kafka delivery to %s failed: %s", rd_kafka_topic_name(m->rkt),
                rd_kafka_err2str(m->err));
    else
        report_state(opaque, true, "");
    if (d) {
        if (d->cb)
            d->cb(d->ud, m->err ? CV_EKAFKA : 0);
        free(d);
    }
}

static void on_queue_ready(void *owner)
{
    cv_producer_t *p = owner;
    cv__queue_watch_clear(&p->watch);
    while (rd_kafka_poll(p->rk, 0) > 0)
        ;
}

int cv_producer_new(cv_producer_t **out, uv_loop_t *loop, const cv_opts_t *opts, char *errstr,
                    size_t errstr_size)
{
    /* linger 0: a dependency hop pays no batching delay; under load librdkafka
     * still batches whatever queues while a request is in flight. Measured
     * against linger 1 ms: chain hop median 2 ms vs 4 ms, flat throughput the
     * same (docs/performance.md). Idempotence: no job duplicated or reordered
     * when a send is retried after a broker failed. */
    static const char *const defaults[] = {"linger.ms",
                                           "0",
                                           "batch.num.messages",
                                           "10000",
                                           "socket.nagle.disable",
                                           "true",
                                           "acks",
                                           "all",
                                           "enable.idempotence",
                                           "true",
                                           "message.send.max.retries",
                                           "1000000",
                                           "retry.backoff.ms",
                                           "100",
                                           "message.timeout.ms",
                                           "0",
                                           NULL};
    rd_kafka_conf_t *conf = cv__kafka_conf(opts, defaults, errstr, errstr_size);
    if (!conf)
        return CV_EINVAL;
    cv_producer_t *p = calloc(1, sizeof(*p));
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    int rc = cv__kafka_new(&p->rk, RD_KAFKA_PRODUCER, conf, on_error, p, errstr, errstr_size);
    if (rc) {
        free(p);
        return rc;
    }
    p->loop = loop;
    if (loop) {
        rd_kafka_queue_t *q = rd_kafka_queue_get_main(p->rk);
        rc = cv__queue_watch_start(&p->watch, loop, q, 100, on_queue_ready, p, errstr, errstr_size);
        rd_kafka_queue_destroy(q);
        if (rc) {
            rd_kafka_destroy(p->rk);
            free(p);
            return rc;
        }
    }
    *out = p;
    return 0;
}

const char *cv_topic_lane(const char *topic, bool express)
{
    if (!express)
        return topic;
    if (strcmp(topic, CV_TOPIC_CHECK) == 0)
        return CV_TOPIC_CHECK_EXPRESS;
    if (strcmp(topic, CV_TOPIC_OBSERVE) == 0)
        return CV_TOPIC_OBSERVE_EXPRESS;
    return topic;
}

int cv_producer_send(cv_producer_t *p, const char *topic, const char *key, size_t keylen,
                     const void *payload, size_t len, cv_delivery_cb cb, void *ud)
{
    delivery_t *d = malloc(sizeof(*d));
    if (!d)
        return CV_ENOMEM;
    *d = (delivery_t){cb, ud};
    rd_kafka_resp_err_t err = rd_kafka_producev(
        p->rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, keylen),
        RD_KAFKA_V_VALUE((void *)payload, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_OPAQUE(d), RD_KAFKA_V_END);
    if (err) {
        free(d);
        cv_warn("Kafka produce to %s failed: %s", topic, rd_kafka_err2str(err));
        return CV_EKAFKA;
    }
    return 0;
}

int cv_producer_flush(cv_producer_t *p, int timeout_ms)
{
    rd_kafka_resp_err_t err = rd_kafka_flush(p->rk, timeout_ms);
    if (err == RD_KAFKA_RESP_ERR__TIMED_OUT)
        return CV_ETIMEDOUT;
    return err ? CV_EKAFKA : 0;
}

/* Whether a broker refused our credentials: serves the queued errors
 * first, as nothing else polls a producer without a loop. */
static bool auth_refused(cv_producer_t *p)
{
    rd_kafka_poll(p->rk, 0);
    return p->auth_failure[0] != '\0';
}

static int auth_error(cv_producer_t *p, const char *brokers, char *errstr, size_t errstr_size)
{
    char user[128] = "";
    size_t n = sizeof(user);
    if (rd_kafka_conf_get(rd_kafka_conf(p->rk), "sasl.username", user, &n) != RD_KAFKA_CONF_OK ||
        !user[0])
        snprintf(user, sizeof(user), "(none)");
    return cv_seterr(errstr, errstr_size, CV_EAUTH,
                     "Kafka at %s refused the credentials of user %s: %s", brokers, user,
                     p->auth_failure);
}

/* rd_kafka_metadata in steps of CHECK_STEP_MS until it answers, the
 * credentials are refused or timeout_ms passed; the last error. */
static rd_kafka_resp_err_t metadata_or_refusal(cv_producer_t *p, rd_kafka_topic_t *rkt,
                                               const struct rd_kafka_metadata **md, int timeout_ms)
{
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
    for (int waited = 0; waited < timeout_ms && !auth_refused(p); waited += CHECK_STEP_MS) {
        int step = timeout_ms - waited < CHECK_STEP_MS ? timeout_ms - waited : CHECK_STEP_MS;
        err = rd_kafka_metadata(p->rk, 0, rkt, md, step);
        if (err != RD_KAFKA_RESP_ERR__TIMED_OUT && err != RD_KAFKA_RESP_ERR__TRANSPORT)
            break;
    }
    return err;
}

int cv_producer_check(cv_producer_t *p, const char *brokers, int timeout_ms, char *errstr,
                      size_t errstr_size)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = metadata_or_refusal(p, NULL, &md, timeout_ms);
    if (auth_refused(p)) {
        if (md)
            rd_kafka_metadata_destroy(md);
        return auth_error(p, brokers, errstr, errstr_size);
    }
    if (err || !md || md->broker_cnt == 0) {
        if (md)
            rd_kafka_metadata_destroy(md);
        return cv_seterr(errstr, errstr_size, CV_EKAFKA, "cannot reach Kafka at %s: %s", brokers,
                         err ? rd_kafka_err2str(err) : "no brokers");
    }
    rd_kafka_metadata_destroy(md);
    return 0;
}

int cv_producer_prepare(cv_producer_t *p, const char *topic, int timeout_ms)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(p->rk, topic, NULL);
    if (!rkt)
        return CV_EKAFKA;
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = metadata_or_refusal(p, rkt, &md, timeout_ms);
    if (md)
        rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    if (auth_refused(p)) {
        cv_error("Kafka refused our credentials: %s", p->auth_failure);
        return CV_EAUTH;
    }
    return err ? CV_EKAFKA : 0;
}

int cv_producer_outq(cv_producer_t *p)
{
    return rd_kafka_outq_len(p->rk);
}

void cv_producer_on_state(cv_producer_t *p, cv_kafka_state_cb cb, void *ud)
{
    p->on_state = cb;
    p->state_ud = ud;
}

/* rd_kafka_metadata with no time to wait answers at once: __TRANSPORT when
 * librdkafka has no broker connection up; otherwise it has sent the request
 * to a connected broker (and answers __TIMED_OUT, or the metadata if it was
 * cached). */
void cv_producer_probe(cv_producer_t *p)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(p->rk, 0, NULL, &md, 0);
    if (md)
        rd_kafka_metadata_destroy(md);
    if (err != RD_KAFKA_RESP_ERR__TRANSPORT)
        report_state(p, true, "");
}

bool cv_producer_failed(const cv_producer_t *p)
{
    return p->failed;
}

void cv_producer_free(cv_producer_t *p)
{
    if (!p)
        return;
    rd_kafka_flush(p->rk, 5000);
    rd_kafka_destroy(p->rk);
    if (p->loop)
        cv__queue_watch_close(&p->watch, free);
    else
        free(p);
}
