/*
 * cv_kafka — Kafka producer and consumer on a worker's libuv loop.
 *
 * librdkafka signals its queues through a pipe (queue IO events), which the
 * loop polls, so a worker has one thread of control. The consumer hands each
 * message to a handler as a job and keeps many jobs in flight (a bounded
 * window); a job's offset becomes committable only when every earlier job of
 * its partition is finished (cv_offsets.h) — at-least-once delivery where the
 * effect of a job is in Redis before its offset is committed.
 *
 * Every librdkafka setting can be passed through (cv_opts_t.kafka_opts):
 * security (SASL, TLS), timeouts, anything a cluster needs. The defaults
 * assume a broker of Kafka 2.4 or later: static group membership,
 * cooperative rebalancing and the idempotent producer (docs/kafka.md).
 */
#ifndef CV_KAFKA_H
#define CV_KAFKA_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "cv_opts.h"

#define CV_TOPIC_CHECK "converge.check"
#define CV_TOPIC_OBSERVE "converge.observe"
#define CV_TOPIC_DEAD "converge.dead"
/* The express lane (cv_msg_t.express): twins of the job topics that the
 * workers consume ahead of them, with a window of their own. */
#define CV_TOPIC_CHECK_EXPRESS "converge.check.express"
#define CV_TOPIC_OBSERVE_EXPRESS "converge.observe.express"

/* The topic a job for `topic` (CV_TOPIC_CHECK or CV_TOPIC_OBSERVE) goes to:
 * its express twin when `express`; any other topic is itself. */
const char *cv_topic_lane(const char *topic, bool express);

/*
 * A librdkafka configuration with the brokers and pass-through settings of
 * `opts` over the given defaults (NULL-terminated key, value, ... list), for
 * tools that need a handle of their own. NULL with errstr on a bad setting.
 */
rd_kafka_conf_t *cv_kafka_conf_new(const cv_opts_t *opts, const char *const *defaults, char *errstr,
                                   size_t errstr_size);

/*
 * Broker reachability as librdkafka reports it: `up` false when every
 * broker connection is down (ALL_BROKERS_DOWN), true when a message is
 * delivered or consumed or a probe finds a connection up. Reported on every
 * such event: the listener (the worker's outage record) makes one outage of
 * them. Runs on the loop.
 */
typedef void (*cv_kafka_state_cb)(void *ud, bool up, const char *why);

/* ---- producer ---- */

typedef struct cv_producer cv_producer_t;

/* Called once the broker acknowledged the message (err 0) or it failed (CV_EKAFKA). */
typedef void (*cv_delivery_cb)(void *ud, int err);

/* `loop` may be NULL for a synchronous user (the CLI), who calls cv_producer_flush. */
int cv_producer_new(cv_producer_t **out, uv_loop_t *loop, const cv_opts_t *opts, char *errstr,
                    size_t errstr_size);

/* Queues a message (payload copied). cb may be NULL. Returns 0 or CV_EKAFKA. */
int cv_producer_send(cv_producer_t *p, const char *topic, const char *key, size_t keylen,
                     const void *payload, size_t len, cv_delivery_cb cb, void *ud);

/* Waits up to timeout_ms for every queued message; returns 0 or CV_ETIMEDOUT / CV_EKAFKA. */
int cv_producer_flush(cv_producer_t *p, int timeout_ms);

/* Asks the brokers for metadata: 0 when reachable within timeout_ms;
 * CV_EAUTH as soon as a broker refused our SASL credentials (errstr names
 * the brokers and the user, never the password); else CV_EKAFKA with errstr
 * naming the brokers. */
int cv_producer_check(cv_producer_t *p, const char *brokers, int timeout_ms, char *errstr,
                      size_t errstr_size);

/* Learns `topic`'s partitions and leaders now, waiting up to timeout_ms,
 * instead of at its first message: librdkafka looks an unknown topic up at
 * most once a second, which a worker's first jobs after its start would
 * otherwise wait for (measured: a first 20-resource chain 2.2 s, the next
 * 0.1 s). 0, CV_EAUTH when a broker refused our SASL credentials, or
 * CV_EKAFKA when the metadata did not come (the first send then waits as it
 * would have). */
int cv_producer_prepare(cv_producer_t *p, const char *topic, int timeout_ms);

/* Number of messages queued or awaiting acknowledgement. */
int cv_producer_outq(cv_producer_t *p);

/* Reports reachability to `cb` (may be NULL: warnings are logged instead). */
void cv_producer_on_state(cv_producer_t *p, cv_kafka_state_cb cb, void *ud);

/* Asks librdkafka, without blocking, whether a broker connection is up, and
 * reports it up when one is — how the end of an outage is noticed by a
 * worker that has nothing to send. */
void cv_producer_probe(cv_producer_t *p);

/* librdkafka gave up on this producer for good (a fatal error: the
 * idempotent producer was refused its id, e.g. before its ACLs took
 * effect): nothing it sends will go out. The owner makes a new one. */
bool cv_producer_failed(const cv_producer_t *p);

/* Flushes what is queued (at most 5 s; a failed producer's messages fail
 * at once, their callbacks run here) and frees the producer. */
void cv_producer_free(cv_producer_t *p);

/* ---- consumer ---- */

typedef struct cv_consumer cv_consumer_t;
typedef struct cv_job cv_job_t;

/* A job: one consumed message. Handlers call cv_job_finish exactly once. */
typedef void (*cv_job_handler)(cv_job_t *job, const void *payload, size_t len, void *ud);

/* How a job ended, told to cv_consumer_conf_t.on_job_end once per message
 * (a split job when its last part ends). */
typedef struct cv_job_end {
    int kind;           /* cv_job_set_kind's; 0 when never set */
    bool dead;          /* cv_job_set_dead was called */
    bool handed_back;   /* a part was handed back, or the partition revoked under it */
    double seconds;     /* from its dispatch to its end */
    double hop_seconds; /* from the message's Kafka timestamp to its dispatch; < 0: none */
} cv_job_end_t;

/* The consumer lag of one assigned partition: messages between the
 * consumer's position and the partition's end, as librdkafka's statistics
 * last reported it. */
typedef struct cv_kafka_lag {
    char topic[64];
    int32_t partition;
    int64_t lag;
} cv_kafka_lag_t;
#define CV_KAFKA_LAG_MAX 256

typedef struct cv_consumer_conf {
    const char *group;
    /* group.instance.id: static membership, so that a restarted worker takes
     * its partitions back without a group rebalance (the worker id; NULL for
     * a dynamic member). Unique among live members: the broker fences a
     * second one with the same id. */
    const char *instance;
    const char *const *topics; /* copied: needed only during cv_consumer_new */
    int ntopics;
    int window;     /* jobs in flight at most */
    int session_ms; /* session.timeout.ms (0: 6000); heartbeats every quarter of it */
    cv_job_handler handler;
    void *ud;
    cv_kafka_state_cb on_state; /* may be NULL; called with ud */
    /* Called with ud as each job ends (the metrics); may be NULL. */
    void (*on_job_end)(void *ud, const cv_job_end_t *end);
} cv_consumer_conf_t;

int cv_consumer_new(cv_consumer_t **out, uv_loop_t *loop, const cv_opts_t *opts,
                    const cv_consumer_conf_t *conf, char *errstr, size_t errstr_size);

/* The job is finished: its effect is recorded; its offset may be committed. */
void cv_job_finish(cv_job_t *job);

/* The handler gives the job up unfinished (the worker is stopping or
 * stepping aside): it no longer counts as in flight, and this process never
 * commits its offset, so the group redelivers it. The job is freed when its
 * partition is revoked or the consumer closes. A job whose partition was
 * revoked while it ran is let go of: finishing or handing it back then only
 * frees it. */
void cv_job_hand_back(cv_job_t *job);

/* The handler runs the job as `parts` independent parts (the jobs of the
 * nodes one CHECK message carries), each ending with cv_job_finish or
 * cv_job_hand_back; each counts in the window as a job. The offset may be
 * committed once every part finished; one part handed back leaves the
 * message to be redelivered whole. Call it before any part ends. */
void cv_job_split(cv_job_t *job, int parts);

/* What the job is (its message type, reported in cv_job_end_t.kind), and
 * that it was dead-lettered. */
void cv_job_set_kind(cv_job_t *job, int kind);
void cv_job_set_dead(cv_job_t *job);

/* Per-job user data slot (the handler's state). */
void cv_job_set_data(cv_job_t *job, void *data);
void *cv_job_data(const cv_job_t *job);
int32_t cv_job_partition(const cv_job_t *job);
/* The message as consumed (valid until the job is finished): what a dead
 * letter carries when a handler gives up on the job. */
const void *cv_job_payload(const cv_job_t *job, size_t *len);
int64_t cv_job_offset(const cv_job_t *job);

/* Whether the group gave this member its assignment (it may be empty). */
bool cv_consumer_joined(const cv_consumer_t *c);

/* Whether the group dropped this member (its session timed out: the
 * coordinator did not answer) and has not assigned it partitions since —
 * what a worker cut off from Kafka learns of it. */
bool cv_consumer_lost(const cv_consumer_t *c);

/* Whether librdkafka raised a fatal error on this consumer (such as a
 * static member fenced by its own earlier membership after every broker
 * restarted): it consumes nothing more, and its owner closes it and makes
 * a new one. */
bool cv_consumer_failed(const cv_consumer_t *c);

/* Leaves the topics: the partitions are revoked (the finished prefix
 * committed) and, once the broker lets go of this member, assigned to
 * others. A static member (conf.instance) sends no LeaveGroup: the broker
 * lets go after the session timeout. cv_consumer_subscribe joins again
 * (errors as cv_consumer_new's). */
void cv_consumer_unsubscribe(cv_consumer_t *c);
int cv_consumer_subscribe(cv_consumer_t *c, char *errstr, size_t errstr_size);

/* Jobs handed out and not yet finished. */
int cv_consumer_inflight(const cv_consumer_t *c);

/* The lag of the consumer's assigned partitions at librdkafka's last
 * statistics (statistics.interval.ms, 5000 by default here): copies up to
 * max of them into out and returns how many. */
int cv_consumer_lag(const cv_consumer_t *c, cv_kafka_lag_t *out, int max);

/* Stops consuming and commits the finished prefix; then frees. Jobs still in
 * flight are not committed (they will be redelivered). NULL is allowed. */
void cv_consumer_close(cv_consumer_t *c);

#endif
