#include "cv_kafka.h"
#include "cv_kafka_conf.h"

#include "cv_base.h"
#include "cv_log.h"
#include "cv_contract.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTITION_TRACKS 512

typedef struct ptrack {
    char topic[128]; /* a copy: a message's topic handle dies with the message */
    int32_t partition;
    cv_partition_track_t track;
    bool dirty; /* committable advanced since the last store */
} ptrack_t;

/* A job holds a copy of its message, never librdkafka's message: a kept
 * message pins its whole fetch buffer (up to a partition's fetch size), and
 * a job may wait minutes (an OBSERVE watching a child stack). */
struct cv_job {
    cv_offset_slot_t slot; /* in its partition's tracker while in flight */
    cv_consumer_t *c;
    char *payload; /* NULL once orphaned */
    size_t len;
    int32_t partition; /* -1 once orphaned */
    int64_t offset;
    ptrack_t *pt;
    void *data;
    int parts; /* the handler's parts of it not ended yet (cv_job_split) */
    bool handed_back;
    bool orphan;         /* still its handler's when the consumer closed */
    bool dead;           /* cv_job_set_dead */
    int kind;            /* cv_job_set_kind */
    double started, hop; /* dispatched at; hop latency (< 0: unknown) */
};

struct cv_consumer {
    rd_kafka_t *rk;
    rd_kafka_queue_t *queue;
    uv_loop_t *loop;
    cv_consumer_conf_t conf;
    cv__queue_watch_t watch;
    uv_idle_t resume;
    int inflight;
    bool closing;
    int orphans;       /* jobs that outlived the close: this struct must too */
    bool watch_closed; /* the queue watch's handles are closed */
    bool joined;       /* received an assignment (possibly empty) from the group */
    bool lost;         /* the group dropped this member (session timed out): cut off? */
    bool failed;       /* librdkafka raised a fatal error: this instance is done */
    /* the topics, copied: the caller's list need not outlive cv_consumer_new,
     * and a worker that stepped aside subscribes again (cv_consumer_subscribe) */
    rd_kafka_topic_partition_list_t *subscription;
    ptrack_t tracks[MAX_PARTITION_TRACKS];
    int ntracks;
    cv_kafka_lag_t lag[CV_KAFKA_LAG_MAX]; /* at the last statistics */
    int nlag;
};

static ptrack_t *track_for(cv_consumer_t *c, rd_kafka_topic_t *rkt, int32_t partition)
{
    const char *name = rd_kafka_topic_name(rkt);
    for (int i = 0; i < c->ntracks; i++)
        if (c->tracks[i].partition == partition && strcmp(c->tracks[i].topic, name) == 0)
            return &c->tracks[i];
    if (c->ntracks == MAX_PARTITION_TRACKS)
        return NULL;
    ptrack_t *pt = &c->tracks[c->ntracks++];
    snprintf(pt->topic, sizeof(pt->topic), "%s", name);
    pt->partition = partition;
    pt->dirty = false;
    cv_track_init(&pt->track);
    return pt;
}

/* Hands the committable offsets to librdkafka, which commits them on its
 * auto-commit timer and when partitions are revoked. */
static void store_offsets(cv_consumer_t *c)
{
    rd_kafka_topic_partition_list_t *list = NULL;
    for (int i = 0; i < c->ntracks; i++) {
        ptrack_t *pt = &c->tracks[i];
        if (!pt->dirty)
            continue;
        if (!list)
            list = rd_kafka_topic_partition_list_new(8);
        rd_kafka_topic_partition_list_add(list, pt->topic, pt->partition)->offset =
            pt->track.committable;
        pt->dirty = false;
    }
    if (!list)
        return;
    rd_kafka_resp_err_t err = rd_kafka_offsets_store(c->rk, list);
    if (err && err != RD_KAFKA_RESP_ERR__STATE)
        cv_debug("offset store: %s", rd_kafka_err2str(err));
    rd_kafka_topic_partition_list_destroy(list);
}

static void free_job(cv_job_t *job)
{
    free(job->payload);
    free(job);
}

static void drain(cv_consumer_t *c);

static void on_resume(uv_idle_t *h)
{
    uv_idle_stop(h);
    drain(h->data);
}

/* A closed consumer is freed once its handles are closed and no orphaned
 * job points at it any more. */
static void free_consumer(cv_consumer_t *c)
{
    if (c->subscription)
        rd_kafka_topic_partition_list_destroy(c->subscription);
    free(c);
}

static void free_when_unused(cv_consumer_t *c)
{
    if (c->watch_closed && c->orphans == 0)
        free_consumer(c);
}

static void on_watch_closed(void *owner)
{
    cv_consumer_t *c = owner;
    c->watch_closed = true;
    free_when_unused(c);
}

/* The message's last part ended: its owner hears how (the metrics). */
static void report_end(cv_job_t *job)
{
    cv_consumer_t *c = job->c;
    if (!c->conf.on_job_end)
        return;
    cv_job_end_t end = {.kind = job->kind,
                        .dead = job->dead,
                        .handed_back = job->handed_back || job->orphan,
                        .seconds = cv_now() - job->started,
                        .hop_seconds = job->hop};
    c->conf.on_job_end(c->conf.ud, &end);
}

static void free_orphan(cv_job_t *job)
{
    cv_consumer_t *c = job->c;
    report_end(job);
    free_job(job); /* its message went with the consumer */
    c->orphans--;
    free_when_unused(c);
}

static void resume_soon(cv_consumer_t *c)
{
    /* Resume consuming on the next loop turn, not inside the caller's stack. */
    if (!c->closing && !uv_is_active((uv_handle_t *)&c->resume))
        uv_idle_start(&c->resume, on_resume);
}

void cv_job_split(cv_job_t *job, int parts)
{
    if (!job->orphan)
        job->c->inflight += parts - job->parts;
    job->parts = parts;
}

/* One part of the job ended (the job itself when it was not split): it no
 * longer counts in the window, and a finished one makes room for more.
 * Whether it was the last part. */
static bool part_ended(cv_job_t *job, bool finished)
{
    if (job->orphan) {
        if (--job->parts == 0)
            free_orphan(job);
        return false;
    }
    job->c->inflight--;
    if (finished)
        resume_soon(job->c);
    if (--job->parts > 0)
        return false;
    report_end(job);
    return true;
}

void cv_job_finish(cv_job_t *job)
{
    if (!part_ended(job, true))
        return;
    /* A part handed back leaves the whole message to be redelivered. */
    if (job->handed_back)
        return;
    if (cv_track_done(&job->pt->track, &job->slot))
        job->pt->dirty = true;
    free_job(job);
}

void cv_job_hand_back(cv_job_t *job)
{
    if (!job->orphan)
        job->handed_back = true;
    part_ended(job, false);
}

/*
 * Lets go of a partition's jobs. Jobs handed back are freed; a job still in
 * flight keeps its struct for its handler, which may yet finish or hand it
 * back, but loses its message and no longer counts in the window: its
 * offset will not be committed by this member.
 */
static void release_track(cv_consumer_t *c, ptrack_t *pt)
{
    for (cv_offset_slot_t *s = pt->track.head, *next; s; s = next) {
        cv_job_t *job = (cv_job_t *)s;
        next = s->next;
        if (job->parts == 0) { /* handed back, and no part of it still running */
            free_job(job);
            continue;
        }
        free(job->payload);
        job->payload = NULL;
        job->len = 0;
        job->partition = -1;
        job->offset = -1;
        job->orphan = true;
        c->orphans++;
        c->inflight -= job->parts;
    }
    cv_track_init(&pt->track);
    pt->dirty = false;
}

/* At close (the shutdown grace ran out, or the worker steps aside). */
static void release_all(cv_consumer_t *c)
{
    for (int i = 0; i < c->ntracks; i++)
        release_track(c, &c->tracks[i]);
}

/* A partition taken back by the group starts afresh if it comes back: its
 * jobs here are redelivered from the committed offset, wherever it goes. */
static void release_revoked(cv_consumer_t *c, const rd_kafka_topic_partition_list_t *parts)
{
    store_offsets(c); /* librdkafka commits what was stored when the revocation ends */
    for (int p = 0; p < parts->cnt; p++)
        for (int i = 0; i < c->ntracks; i++)
            if (c->tracks[i].partition == parts->elems[p].partition &&
                strcmp(c->tracks[i].topic, parts->elems[p].topic) == 0)
                release_track(c, &c->tracks[i]);
}

void cv_job_set_kind(cv_job_t *job, int kind)
{
    job->kind = kind;
}

void cv_job_set_dead(cv_job_t *job)
{
    job->dead = true;
}

void cv_job_set_data(cv_job_t *job, void *data)
{
    job->data = data;
}

void *cv_job_data(const cv_job_t *job)
{
    return job->data;
}

const void *cv_job_payload(const cv_job_t *job, size_t *len)
{
    *len = job->len;
    return job->payload ? job->payload : "";
}

int32_t cv_job_partition(const cv_job_t *job)
{
    return job->partition;
}

int64_t cv_job_offset(const cv_job_t *job)
{
    return job->offset;
}

int cv_consumer_inflight(const cv_consumer_t *c)
{
    return c->inflight;
}

int cv_consumer_lag(const cv_consumer_t *c, cv_kafka_lag_t *out, int max)
{
    int n = c->nlag < max ? c->nlag : max;
    memcpy(out, c->lag, (size_t)n * sizeof(*out));
    return n;
}

/* librdkafka's statistics, served on the loop like every callback of the
 * consumer's queue: only the lag is kept. */
static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque)
{
    (void)rk;
    cv_consumer_t *c = opaque;
    int n = cv__kafka_stats_lag(json, len, c->lag, CV_KAFKA_LAG_MAX);
    if (n >= 0)
        c->nlag = n;
    return 0; /* librdkafka frees the text */
}

/* Consumer errors arrive as messages or through the error callback.
 * Reachability goes to the listener, which logs an outage once; routine
 * transport errors of one broker are only debug lines. */
static void consumer_error(cv_consumer_t *c, rd_kafka_resp_err_t err, const char *reason)
{
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
        c->failed = true; /* the owner makes a new consumer (cv_consumer_failed) */
        cv_warn("Kafka consumer: %s", reason);
        return;
    }
    cv__kafka_err_t kind = cv__kafka_error_kind(err);
    if (kind == CV__KAFKA_ERR_DOWN && c->conf.on_state)
        c->conf.on_state(c->conf.ud, false, reason);
    else if (kind == CV__KAFKA_ERR_OTHER || (!c->conf.on_state && kind == CV__KAFKA_ERR_DOWN))
        cv_warn("Kafka consumer: %s", reason);
    else if (err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
        cv_debug("Kafka consumer: %s", reason);
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    (void)rk;
    consumer_error(opaque, (rd_kafka_resp_err_t)err, reason);
}

static void dispatch(cv_consumer_t *c, rd_kafka_message_t *rkm)
{
    if (rkm->err) {
        consumer_error(c, rkm->err, rd_kafka_message_errstr(rkm));
        rd_kafka_message_destroy(rkm);
        return;
    }
    if (c->conf.on_state)
        c->conf.on_state(c->conf.ud, true, "");
    ptrack_t *pt = track_for(c, rkm->rkt, rkm->partition);
    cv_job_t *job = calloc(1, sizeof(*job));
    char *payload = job ? malloc(rkm->len + 1) : NULL;
    if (!pt || !payload) {
        /* Not tracked means never committed: the message will be redelivered. */
        cv_error("cannot track message %s[%d]@%lld", rd_kafka_topic_name(rkm->rkt), rkm->partition,
                 (long long)rkm->offset);
        free(payload);
        free(job);
        rd_kafka_message_destroy(rkm);
        return;
    }
    if (rkm->len)
        memcpy(payload, rkm->payload, rkm->len);
    payload[rkm->len] = '\0';
    job->c = c;
    job->payload = payload;
    job->len = rkm->len;
    job->partition = rkm->partition;
    job->offset = rkm->offset;
    job->pt = pt;
    job->parts = 1;
    job->started = cv_now();
    rd_kafka_timestamp_type_t tstype;
    int64_t produced_ms = rd_kafka_message_timestamp(rkm, &tstype);
    job->hop = -1;
    if (produced_ms > 0) /* clocks apart: never a negative latency */
        job->hop = fmax(0, job->started - (double)produced_ms / 1000.0);
    rd_kafka_message_destroy(rkm);
    cv_track_push(&pt->track, &job->slot, job->offset);
    c->inflight++;
    c->conf.handler(job, job->payload, job->len, c->conf.ud);
}

static void drain(cv_consumer_t *c)
{
    cv__queue_watch_clear(&c->watch);
    while (!c->closing && c->inflight < c->conf.window) {
        rd_kafka_message_t *rkm = rd_kafka_consume_queue(c->queue, 0);
        if (!rkm)
            break;
        dispatch(c, rkm);
    }
    store_offsets(c);
}

static void on_queue_ready(void *owner)
{
    drain(owner);
}

/* Explicit rebalance handling to know when this member has joined, and to
 * follow the cooperative protocol: a rebalance hands out or takes back only
 * the partitions that move, so a member keeps consuming the others while a
 * worker joins or leaves. */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *partitions, void *opaque)
{
    cv_consumer_t *c = opaque;
    /* No protocol (NULL) while the consumer closes: the revocation of a
     * close is then that of the strategy set below, cooperative-sticky. */
    const char *protocol = rd_kafka_rebalance_protocol(rk);
    bool cooperative = !protocol || strcmp(protocol, "COOPERATIVE") == 0;
    rd_kafka_error_t *error = NULL;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        if (cooperative)
            error = rd_kafka_incremental_assign(rk, partitions);
        else
            rd_kafka_assign(rk, partitions);
        c->joined = true;
        c->lost = false;
        cv_info("assigned %d partitions", partitions->cnt);
    } else if (cooperative) {
        /* a lost assignment (session timed out) means rejoining, not just
         * giving some partitions back */
        if (rd_kafka_assignment_lost(rk)) {
            c->joined = false;
            c->lost = true;
        }
        release_revoked(c, partitions);
        error = rd_kafka_incremental_unassign(rk, partitions);
        cv_info("revoked %d partitions%s", partitions->cnt, c->lost ? " (group lost)" : "");
    } else {
        release_revoked(c, partitions);
        rd_kafka_assign(rk, NULL);
        c->joined = false;
    }
    if (error) {
        cv_warn("Kafka rebalance: %s", rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
    }
}

bool cv_consumer_joined(const cv_consumer_t *c)
{
    return c->joined;
}

bool cv_consumer_lost(const cv_consumer_t *c)
{
    return c->lost;
}

bool cv_consumer_failed(const cv_consumer_t *c)
{
    return c->failed;
}

static int setup_loop(cv_consumer_t *c, char *errstr, size_t errstr_size)
{
    int rc = cv__queue_watch_start(&c->watch, c->loop, c->queue, 50, on_queue_ready, c, errstr,
                                   errstr_size);
    if (rc == 0) {
        uv_idle_init(c->loop, &c->resume);
        c->resume.data = c;
    }
    return rc;
}

int cv_consumer_subscribe(cv_consumer_t *c, char *errstr, size_t errstr_size)
{
    rd_kafka_resp_err_t err = rd_kafka_subscribe(c->rk, c->subscription);
    if (err)
        return cv_seterr(errstr, errstr_size, CV_EKAFKA, "Kafka subscribe: %s",
                         rd_kafka_err2str(err));
    return 0;
}

int cv_consumer_new(cv_consumer_t **out, uv_loop_t *loop, const cv_opts_t *opts,
                    const cv_consumer_conf_t *conf, char *errstr, size_t errstr_size)
{
    /* Offsets are stored by us (finished prefix only) and committed by
     * librdkafka's timer; a new group starts at the earliest message so that
     * jobs published before the first worker joined are not skipped. The
     * session timeout is how long the partitions of a worker that died
     * without leaving (kill -9, a lost host) wait for another: 6 s, the
     * lowest a Kafka broker accepts by default (group.min.session.timeout.ms;
     * the local deployment lowers both, docs/kafka.md); heartbeats come from
     * librdkafka's own thread, so a busy loop does not miss them. A worker
     * restarted with its id takes its partitions back at once (static
     * membership), and a rebalance moves only the partitions that change
     * hands (cooperative-sticky). A worker cut off from the brokers tries
     * them again every 2 s at most (10 s by default), so that it rejoins
     * soon after the network heals. Prefetch is kept to a few thousand jobs
     * (librdkafka's defaults hold up to 64 MB and 100,000 messages per
     * partition): what the window has not taken waits in Kafka, not in
     * this process, so a worker's memory does not follow the backlog. */
    static const char *const defaults[] = {"queued.min.messages",
                                           "2000",
                                           "queued.max.messages.kbytes",
                                           "1024",
                                           "fetch.max.bytes",
                                           "1048576",
                                           "enable.auto.commit",
                                           "true",
                                           "auto.commit.interval.ms",
                                           "200",
                                           "enable.auto.offset.store",
                                           "false",
                                           "auto.offset.reset",
                                           "earliest",
                                           "fetch.wait.max.ms",
                                           "100",
                                           "socket.nagle.disable",
                                           "true",
                                           "partition.assignment.strategy",
                                           "cooperative-sticky",
                                           "reconnect.backoff.max.ms",
                                           "2000",
                                           "statistics.interval.ms",
                                           "5000",
                                           NULL};
    rd_kafka_conf_t *kconf = cv__kafka_conf(opts, defaults, errstr, errstr_size);
    if (!kconf)
        return CV_EINVAL;
    char err[512], session[16], heartbeat[16];
    int session_ms = conf->session_ms > 0 ? conf->session_ms : 6000;
    snprintf(session, sizeof(session), "%d", session_ms);
    snprintf(heartbeat, sizeof(heartbeat), "%d", session_ms / 4 > 0 ? session_ms / 4 : 1);
    if (rd_kafka_conf_set(kconf, "group.id", conf->group, err, sizeof(err)) != RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(kconf, "session.timeout.ms", session, err, sizeof(err)) !=
            RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(kconf, "heartbeat.interval.ms", heartbeat, err, sizeof(err)) !=
            RD_KAFKA_CONF_OK ||
        (conf->instance && rd_kafka_conf_set(kconf, "group.instance.id", conf->instance, err,
                                             sizeof(err)) != RD_KAFKA_CONF_OK)) {
        rd_kafka_conf_destroy(kconf);
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "Kafka configuration: %s", err);
    }
    cv_consumer_t *c = calloc(1, sizeof(*c));
    rd_kafka_conf_set_rebalance_cb(kconf, on_rebalance);
    rd_kafka_conf_set_stats_cb(kconf, on_stats);
    int rc = cv__kafka_new(&c->rk, RD_KAFKA_CONSUMER, kconf, on_error, c, errstr, errstr_size);
    if (rc) {
        free(c);
        return rc;
    }
    c->loop = loop;
    c->conf = *conf;
    c->subscription = rd_kafka_topic_partition_list_new(conf->ntopics);
    for (int i = 0; i < conf->ntopics; i++)
        rd_kafka_topic_partition_list_add(c->subscription, conf->topics[i], RD_KAFKA_PARTITION_UA);
    c->conf.topics = NULL; /* the caller's: gone once we return */
    rd_kafka_poll_set_consumer(c->rk);
    c->queue = rd_kafka_queue_get_consumer(c->rk);
    rc = setup_loop(c, errstr, errstr_size);
    if (rc) {
        rd_kafka_queue_destroy(c->queue);
        rd_kafka_destroy(c->rk);
        free_consumer(c);
        return rc;
    }
    rc = cv_consumer_subscribe(c, errstr, errstr_size);
    if (rc) {
        cv_consumer_close(c); /* its loop handles exist now: closed, then freed */
        return rc;
    }
    *out = c;
    return 0;
}

void cv_consumer_unsubscribe(cv_consumer_t *c)
{
    /* The revocation comes through the rebalance callback, on the loop. */
    rd_kafka_resp_err_t err = rd_kafka_unsubscribe(c->rk);
    if (err)
        cv_warn("Kafka unsubscribe: %s", rd_kafka_err2str(err));
    c->joined = false;
    c->lost = false;
}

void cv_consumer_close(cv_consumer_t *c)
{
    if (!c)
        return;
    c->closing = true;
    store_offsets(c);
    rd_kafka_consumer_close(c->rk);
    release_all(c);
    rd_kafka_queue_destroy(c->queue);
    rd_kafka_destroy(c->rk);
    uv_idle_stop(&c->resume);
    uv_close((uv_handle_t *)&c->resume, NULL);
    cv__queue_watch_close(&c->watch, on_watch_closed);
}
