/*
 * cv_worker — the process shell shared by converge-engine and
 * converge-observer: options, one libuv loop, the Redis connection, a Kafka
 * producer and consumer, the liveness key, signals and graceful shutdown.
 *
 * A worker holds nothing that is lost when it dies: all state is in Redis,
 * all work is in Kafka until its effect is recorded.
 */
#ifndef CV_WORKER_H
#define CV_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cv_kafka.h"
#include "cv_contract.h"
#include "cv_opts.h"
#include "cv_outage.h"
#include "cv_redis.h"

/*
 * The worker's counters: one table giving the enum (CV_STAT_<NAME>), the
 * words of the "stopped: ..." log line, and the field of the liveness record
 * (NULL: not in the record). Other modules count through cv_worker_count and
 * read through cv_worker_stat; the storage is private to the worker shell.
 */
#define CV_STAT_MAP(XX)                                                                            \
    /* jobs handled */                                                                             \
    XX(JOBS, "jobs", "jobs")                                                                       \
    /* actions taken (create/update/delete) */                                                     \
    XX(ACTED, "actions", "actions")                                                                \
    /* jobs retried after a transient error or a busy lease */                                     \
    XX(RETRIES, "retries", "retries")                                                              \
    /* jobs of superseded or settled traversals */                                                 \
    XX(STALE, "stale", NULL)                                                                       \
    /* writes refused by the fencing version */                                                    \
    XX(FENCED, "fenced", "fenced")                                                                 \
    /* messages dead-lettered */                                                                   \
    XX(DEAD, "dead", "dead")                                                                       \
    /* jobs given up after --max-attempts failures */                                              \
    XX(GAVE_UP, "given up", "gave_up")                                                             \
    /* jobs the reaper re-queued */                                                                \
    XX(REAPED, "reaped", "reaped")                                                                 \
    /* jobs given back unfinished when stopping or stepping aside */                               \
    XX(HANDED_BACK, "handed back", NULL)

/* clang-format off */
typedef enum {
#define CV_STAT_ENUM(name, log_words, liveness_field) CV_STAT_##name,
    CV_STAT_MAP(CV_STAT_ENUM)
#undef CV_STAT_ENUM
    CV_STAT_MAX /* the number of counters */
} cv_stat_t;
/* clang-format on */

enum { CV_LANE_BULK, CV_LANE_EXPRESS, CV_LANES };
/* Jobs of the express lane in flight at most: small stacks' jobs, beside
 * the window of the bulk lane. */
#define CV_EXPRESS_WINDOW 256

/* A worker id's size, and an incarnation's (both with their NUL). */
#define CV_WORKER_ID_MAX 64
#define CV_INCARNATION_MAX 32

/* What separates a worker id from its incarnation in a lease holder; a
 * worker id never contains it (--id refuses it), so the id is what precedes
 * the first one. */
#define CV_HOLDER_SEP '@'

typedef struct cv_worker {
    uv_loop_t *loop;
    cv_opts_t opts;
    char id[CV_WORKER_ID_MAX];
    /* This process start: unique per start (start time in microseconds and
     * pid, in hex), so a worker restarted with the same --id is told apart
     * from its predecessor. */
    char incarnation[CV_INCARNATION_MAX];
    /* "<id>@<incarnation>": the holder a lease taken by this process names
     * (docs/architecture.md "Delivery, leases, fencing"). */
    char holder[CV_WORKER_ID_MAX + CV_INCARNATION_MAX];
    const char *role; /* "engine" | "observer" */
    cv_redis_t *redis;
    cv_producer_t *producer;
    /* One consumer per lane (cv_msg_t.express), each in a group of its own
     * so that each lane's partitions are spread evenly over the workers:
     * [CV_LANE_BULK] the role's topic, [CV_LANE_EXPRESS] its express twin,
     * consumed with a window of its own (CV_EXPRESS_WINDOW). */
    cv_consumer_t *lanes[CV_LANES];
    int window;
    int lease_ms;
    int session_ms;   /* the Kafka group session (cv_consumer_conf_t) */
    int max_attempts; /* transient failures of one job before it is given up */
    int isolation_ms; /* a one-sided outage this long makes the worker step aside */
    /* Stepped aside (cv_isolation): cut off from Redis or Kafka alone, it
     * takes no job, hands back those it had and renews no lease until both
     * answer again. */
    bool isolated;
    const char *isolated_from; /* "redis" | "kafka" while isolated */
    double isolated_at;
    bool unsubscribed;   /* left the topics when stepping aside */
    double group_lost;   /* when the consumer group was seen lost (0: it is not) */
    double redis_pinged; /* when the outstanding PING probe was sent (0: none) */
    cv_limits_t limits;  /* input limits (message size here; templates in the CLI) */
    cv_outage_t redis_outage, kafka_outage;
    double kafka_probed;             /* last probe of the brokers during a Kafka outage */
    const struct cv_worker_def *def; /* what the role consumes (cv_worker_main's) */
    void *services;                  /* the role's own services (cv_worker_def_t.start) */
    void (*stop)(void *services);
    int reap_stall_ms;        /* a stack in progress is stalled after this without progress */
    int reap_interval_ms;     /* how often the reaper looks */
    int deleted_retention_s;  /* a deleted stack's keys are purged this long after its delete */
    int max_events_per_stack; /* a stack's event stream keeps about this many (0: all) */
    bool stopping;
    double started;
    char metrics_addr[256];         /* --metrics-addr: where /metrics is served, or "none" */
    uint64_t cv__stat[CV_STAT_MAX]; /* private: cv_worker_count / cv_worker_stat */
    uv_timer_t liveness;
    const char *liveness_state; /* last written: "joining", "ready", "isolated", "stopping" */
    double liveness_written;
    uv_timer_t shutdown_timer;
    uv_signal_t sigterm, sigint;
    double shutdown_deadline;
} cv_worker_t;

typedef struct cv_worker_def {
    const char *role;        /* "engine" | "observer" */
    const char *topic;       /* topic consumed */
    const char *group;       /* consumer group */
    cv_job_handler handler;  /* called with ud = the cv_worker_t */
    const char *usage_extra; /* role-specific lines for --help, may be NULL */
    /* The role's own services on the worker's loop (the engine's reaper):
     * started once connected, stopped as soon as the worker begins to stop.
     * Both may be NULL. */
    void *(*start)(struct cv_worker *w);
    void (*stop)(void *services);
} cv_worker_def_t;

/* Parses argv, connects and runs the loop until SIGTERM/SIGINT. Returns the exit code. */
int cv_worker_main(int argc, char **argv, const cv_worker_def_t *def);

/* Sends a message to a topic (its express twin when m->express), keyed by
 * stack/resource; cb may be NULL. */
int cv_worker_publish(cv_worker_t *w, const char *topic, const cv_msg_t *m, cv_delivery_cb cb,
                      void *ud);

/*
 * Decodes a consumed message. One over the message size limit, one that
 * does not decode, or one whose type is not in `accepted` (a mask of
 * 1u << CV_MSG_*) goes to converge.dead with the reason and its job is
 * finished once that is acknowledged: returns CV_ETOOBIG or CV_EPROTO and
 * the caller does nothing more. Returns 0 when *m is to be handled.
 */
int cv_worker_accept(cv_worker_t *w, cv_job_t *job, const void *payload, size_t len,
                     unsigned accepted, cv_msg_t *m);

/* Publishes the CHECK job of graph node `node` ("u/<resource>" or
 * "c/<resource>"), in the express lane or not (cv_msg_t.express). */
int cv_worker_publish_node(cv_worker_t *w, const char *stack, uint64_t traversal, const char *node,
                           bool express, cv_delivery_cb cb, void *ud);

/* Publishes the CHECK jobs of n (1 to CV_MSG_NODES_MAX) graph nodes of one
 * traversal in one message (cv_msg_t.nodes): one delivery, one cb.
 * CV_EINVAL for n out of range or a name that is no node's. */
int cv_worker_publish_nodes(cv_worker_t *w, const char *stack, uint64_t traversal,
                            const char *const *nodes, size_t n, bool express, cv_delivery_cb cb,
                            void *ud);

/* Publishes the STACK job of traversal `traversal` (of `kind`, a
 * cv_trav_kind_t) of `stack`: expand it. */
int cv_worker_publish_stack(cv_worker_t *w, const char *stack, int kind, uint64_t traversal,
                            bool express, cv_delivery_cb cb, void *ud);

/* Sends an undecodable or unhandleable message to converge.dead with the reason. */
void cv_worker_dead_letter(cv_worker_t *w, const void *payload, size_t len, const char *reason,
                           cv_delivery_cb cb, void *ud);

/* Calls fn(arg) once after `ms` on the worker's loop — how a job waits for a
 * lease, a backoff or an observation time without blocking anything. While
 * the worker is stopping, fn is still called: it must check w->stopping,
 * and then free its state and give the job back (cv_worker_hand_back); the
 * same while it has stepped aside (w->isolated). */
int cv_worker_later(cv_worker_t *w, unsigned ms, void (*fn)(void *arg), void *arg);

/* A job left unfinished because the worker is stopping or stepped aside: redelivered to
 * another worker; the shutdown no longer waits for it. */
void cv_worker_hand_back(cv_worker_t *w, cv_job_t *job);

/* Delay in ms before retry number `attempt` (1-based): capped exponential with jitter. */
unsigned cv_backoff_ms(unsigned attempt);

/*
 * Counts one more failure of a job and returns the delay before it tries
 * again, or 0 when it has failed --max-attempts times while the services
 * were reachable: then the caller gives up on it (cv_poison_give_up). A
 * failure during an outage only waits — an outage is not the job's fault,
 * and dead-lettering every job in flight because Redis restarted would lose
 * more than waiting does.
 */
unsigned cv_worker_retry(cv_worker_t *w, cv_retry_t *r);

/* Adds `n` to counter `s`; reads counter `s`. Counters only grow, from 0 at
 * start; the worker logs them when it stops and publishes those with a
 * liveness field in its liveness record. */
void cv_worker_count(cv_worker_t *w, cv_stat_t s, uint64_t n);
uint64_t cv_worker_stat(const cv_worker_t *w, cv_stat_t s);

/* Whether Redis and Kafka are both reachable, as far as this worker knows. */
bool cv_worker_services_up(const cv_worker_t *w);

#endif
