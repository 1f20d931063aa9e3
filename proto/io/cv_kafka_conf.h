/* Internal: librdkafka configuration shared by the producer and the consumer. */
#ifndef CV_KAFKA_CONF_H
#define CV_KAFKA_CONF_H

#include <librdkafka/rdkafka.h>
#include <stddef.h>

#include "cv_opts.h"

/* defaults: NULL-terminated key, value, key, value... list. */
rd_kafka_conf_t *cv__kafka_conf(const cv_opts_t *opts, const char *const *defaults, char *errstr,
                                size_t errstr_size);

/* What a librdkafka error says about reachability: ALL_BROKERS_DOWN is an
 * outage; a transport error of one broker is routine while others serve
 * (and is part of an outage otherwise); anything else deserves a warning. */
typedef enum { CV__KAFKA_ERR_DOWN, CV__KAFKA_ERR_ROUTINE, CV__KAFKA_ERR_OTHER } cv__kafka_err_t;
cv__kafka_err_t cv__kafka_error_kind(rd_kafka_resp_err_t err);

/* Creates a client of `type` from conf with on_error and its opaque
 * attached. conf is used up either way: librdkafka takes it only on
 * success, so on failure it is destroyed here. Returns 0 or CV_EKAFKA. */
int cv__kafka_new(rd_kafka_t **out, rd_kafka_type_t type, rd_kafka_conf_t *conf,
                  void (*on_error)(rd_kafka_t *rk, int err, const char *reason, void *opaque),
                  void *opaque, char *errstr, size_t errstr_size);

#include <uv.h>

#include "cv_kafka.h"

/* The consumer lag of every partition with one (consumer_lag >= 0) in a
 * librdkafka statistics JSON (topics -> partitions -> consumer_lag), up to
 * max; returns how many, or -1 when the text is not such JSON. */
int cv__kafka_stats_lag(const char *json, size_t len, cv_kafka_lag_t *out, int max);

/*
 * A librdkafka queue signalled into a libuv loop: librdkafka writes to a pipe
 * when the queue goes from empty to non-empty, the loop polls the pipe, and a
 * timer calls on_ready now and then as a safety net for a missed edge.
 */
typedef struct cv__queue_watch {
    int pipefd[2];
    uv_poll_t poll;
    uv_timer_t timer;
    void (*on_ready)(void *owner);
    void *owner;
    void (*on_closed)(void *owner);
} cv__queue_watch_t;

int cv__queue_watch_start(cv__queue_watch_t *qw, uv_loop_t *loop, rd_kafka_queue_t *queue,
                          unsigned safety_ms, void (*on_ready)(void *owner), void *owner,
                          char *errstr, size_t errstr_size);

/* Empties the pipe; call before draining the queue itself. */
void cv__queue_watch_clear(cv__queue_watch_t *qw);

/* Stops watching; on_closed(owner) runs once the handles are closed. */
void cv__queue_watch_close(cv__queue_watch_t *qw, void (*on_closed)(void *owner));
#endif
