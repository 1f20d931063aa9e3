#include "cv_kafka_conf.h"
#include "cv_kafka.h"

#include "cv_base.h"
#include "cv_log.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * librdkafka's own log lines, in ours. A broker connection failing (FAIL)
 * or an error already handed to our error callbacks (ERROR) is routine
 * during an outage, which the worker reports once, so those are debug
 * lines; anything else at error level or worse stays visible. Called from
 * librdkafka's threads: cv_log writes each line with one call.
 */
static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    bool routine = strcmp(fac, "FAIL") == 0 || strcmp(fac, "ERROR") == 0;
    if (level <= 3 && !routine) /* syslog LOG_ERR */
        cv_warn("librdkafka %s: %s", fac, buf);
    else
        cv_debug("librdkafka %s: %s", fac, buf);
}

/* Our defaults first; the user's pass-through settings after, so they win.
 * librdkafka's errors name a property, never a secret's value (a string
 * property such as sasl.password is not validated). */
rd_kafka_conf_t *cv__kafka_conf(const cv_opts_t *opts, const char *const *defaults, char *errstr,
                                size_t errstr_size)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, on_log);
    char err[512];
    if (rd_kafka_conf_set(conf, "bootstrap.servers", opts->kafka, err, sizeof(err)) !=
        RD_KAFKA_CONF_OK)
        goto fail;
    for (size_t i = 0; defaults && defaults[i]; i += 2)
        if (rd_kafka_conf_set(conf, defaults[i], defaults[i + 1], err, sizeof(err)) !=
            RD_KAFKA_CONF_OK)
            goto fail;
    for (int i = 0; i < opts->nkafka_opts; i++) {
        char key[256];
        const char *kv = opts->kafka_opts[i];
        const char *eq = strchr(kv, '=');
        snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
        if (rd_kafka_conf_set(conf, key, eq + 1, err, sizeof(err)) != RD_KAFKA_CONF_OK)
            goto fail;
    }
    /* The password file's, last: it wins (cv_opts.h). */
    if (opts->kafka_pass[0] && rd_kafka_conf_set(conf, "sasl.password", opts->kafka_pass, err,
                                                 sizeof(err)) != RD_KAFKA_CONF_OK)
        goto fail;
    return conf;
fail:
    cv_seterr(errstr, errstr_size, CV_EINVAL, "Kafka configuration: %s", err);
    rd_kafka_conf_destroy(conf);
    return NULL;
}

cv__kafka_err_t cv__kafka_error_kind(rd_kafka_resp_err_t err)
{
    switch (err) {
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
        return CV__KAFKA_ERR_DOWN;
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
        return CV__KAFKA_ERR_ROUTINE;
    default:
        return CV__KAFKA_ERR_OTHER;
    }
}

int cv__kafka_new(rd_kafka_t **out, rd_kafka_type_t type, rd_kafka_conf_t *conf,
                  void (*on_error)(rd_kafka_t *rk, int err, const char *reason, void *opaque),
                  void *opaque, char *errstr, size_t errstr_size)
{
    char err[512];
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_conf_set_opaque(conf, opaque);
    *out = rd_kafka_new(type, conf, err, sizeof(err));
    if (*out)
        return 0;
    rd_kafka_conf_destroy(conf);
    return cv_seterr(errstr, errstr_size, CV_EKAFKA, "Kafka %s: %s",
                     type == RD_KAFKA_PRODUCER ? "producer" : "consumer", err);
}

static void on_pipe_readable(uv_poll_t *h, int status, int events)
{
    cv__queue_watch_t *qw = h->data;
    (void)status;
    (void)events;
    qw->on_ready(qw->owner);
}

static void on_safety_timer(uv_timer_t *t)
{
    cv__queue_watch_t *qw = t->data;
    qw->on_ready(qw->owner);
}

int cv__queue_watch_start(cv__queue_watch_t *qw, uv_loop_t *loop, rd_kafka_queue_t *queue,
                          unsigned safety_ms, void (*on_ready)(void *owner), void *owner,
                          char *errstr, size_t errstr_size)
{
    if (pipe2(qw->pipefd, O_NONBLOCK | O_CLOEXEC) != 0)
        return cv_seterr(errstr, errstr_size, CV_EIO, "pipe: out of descriptors");
    qw->on_ready = on_ready;
    qw->owner = owner;
    rd_kafka_queue_io_event_enable(queue, qw->pipefd[1], "1", 1);
    uv_poll_init(loop, &qw->poll, qw->pipefd[0]);
    qw->poll.data = qw;
    uv_poll_start(&qw->poll, UV_READABLE, on_pipe_readable);
    uv_timer_init(loop, &qw->timer);
    qw->timer.data = qw;
    uv_timer_start(&qw->timer, on_safety_timer, safety_ms, safety_ms);
    return 0;
}

void cv__queue_watch_clear(cv__queue_watch_t *qw)
{
    char buf[256];
    while (read(qw->pipefd[0], buf, sizeof(buf)) > 0)
        ;
}

/* Handles close in order: the timer's callback runs before the poll's. */
static void on_poll_closed(uv_handle_t *h)
{
    cv__queue_watch_t *qw = h->data;
    close(qw->pipefd[0]);
    close(qw->pipefd[1]);
    if (qw->on_closed)
        qw->on_closed(qw->owner);
}

void cv__queue_watch_close(cv__queue_watch_t *qw, void (*on_closed)(void *owner))
{
    qw->on_closed = on_closed;
    uv_timer_stop(&qw->timer);
    uv_close((uv_handle_t *)&qw->timer, NULL);
    uv_poll_stop(&qw->poll);
    uv_close((uv_handle_t *)&qw->poll, on_poll_closed);
}

rd_kafka_conf_t *cv_kafka_conf_new(const cv_opts_t *opts, const char *const *defaults, char *errstr,
                                   size_t errstr_size)
{
    return cv__kafka_conf(opts, defaults, errstr, errstr_size);
}
