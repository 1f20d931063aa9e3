/*
 * A worker cut off from Redis alone or Kafka alone steps aside
 * (cv_isolation decides when), so that its partitions and the leases of its
 * jobs go to workers that reach both:
 *
 * - it takes no job and hands back those it had (cv_jobrun_start), renews
 *   no lease (cv_lease_keep's hold_off) and runs no reaper pass;
 * - cut from Redis, it leaves the topics (the finished prefix is committed;
 *   a static member sends no LeaveGroup, so the broker hands the partitions
 *   on after the session timeout) and drops its Redis connection, so that
 *   commands queued in it cannot reach Redis when the network heals;
 * - cut from Kafka, the group has already dropped it (its heartbeats went
 *   unanswered for the session timeout): it stays subscribed, and the group
 *   assigning it partitions again is how it learns Kafka is back.
 *
 * How a cut is seen: a dropped network shows no error, the connections only
 * stop answering. Redis: a PING unanswered for REDIS_PROBE_S. Kafka: the
 * consumer's session timing out (cv_consumer_lost), besides the outages
 * librdkafka reports (all brokers down).
 */
#include "cv__worker.h"

#include "cv_isolation.h"
#include "cv_log.h"

#include <stdio.h>

#define REDIS_PROBE_S 1.5

static void on_pong(cv_redis_t *r, redisReply *rep, void *ud)
{
    cv_worker_t *w = ud;
    (void)r;
    w->redis_pinged = 0;
    if (rep && rep->type != REDIS_REPLY_ERROR && w->redis_outage.down)
        cv__worker_redis_state(w, true, "");
}

/* One PING at a time; one unanswered too long is an outage. */
static void probe_redis(cv_worker_t *w, double now)
{
    if (!w->redis || !cv_redis_connected(w->redis)) {
        w->redis_pinged = 0;
        return;
    }
    if (!w->redis_pinged) {
        const char *argv[] = {"PING"};
        if (cv_redis_argv(w->redis, 1, argv, NULL, on_pong, w) == 0)
            w->redis_pinged = now;
    } else if (now - w->redis_pinged >= REDIS_PROBE_S) {
        char why[64];
        snprintf(why, sizeof(why), "no answer to PING for %.1f s", REDIS_PROBE_S);
        cv__worker_redis_state(w, false, why);
    }
}

static double kafka_down_since(cv_worker_t *w, double now)
{
    if (cv__worker_group_lost(w)) {
        if (!w->group_lost)
            w->group_lost = now;
    } else
        w->group_lost = 0;
    double since = w->kafka_outage.down ? w->kafka_outage.since : 0;
    if (w->group_lost && (!since || w->group_lost < since))
        since = w->group_lost;
    return since;
}

static void step_aside(cv_worker_t *w, const char *from, double now)
{
    const char *other = from[0] == 'r' ? "Kafka" : "Redis";
    cv_warn("cut off from %s for %d ms or more while %s answers: stepping aside (%d jobs handed "
            "back, no lease renewed, partitions left to the group) until both answer",
            from[0] == 'r' ? "Redis" : "Kafka", w->isolation_ms, other, cv__worker_inflight(w));
    w->isolated = true;
    w->isolated_from = from;
    w->isolated_at = now;
    if (from[0] == 'r') {
        cv__worker_unsubscribe(w);
        w->unsubscribed = true;
        w->redis_pinged = 0;
        cv_redis_drop(w->redis, "stepping aside: Redis stopped answering");
    }
    cv__worker_liveness_now(w);
}

static void rejoin(cv_worker_t *w, double now)
{
    cv_info("Redis and Kafka answer again: rejoining after %.1f s aside", now - w->isolated_at);
    w->isolated = false;
    w->isolated_from = NULL;
    if (w->unsubscribed) {
        char err[256];
        if (cv__worker_subscribe(w, err, sizeof(err)) != 0) {
            cv_warn("%s; trying again", err);
            w->isolated = true; /* the next tick tries again */
            w->isolated_from = "kafka";
            return;
        }
        w->unsubscribed = false;
    }
    cv__worker_liveness_now(w);
}

void cv__worker_isolation_tick(cv_worker_t *w, double now)
{
    if (w->stopping || w->isolation_ms == 0)
        return;
    probe_redis(w, now);
    const char *from;
    cv_isolation_in_t in = {.redis_down_since = w->redis_outage.down ? w->redis_outage.since : 0,
                            .kafka_down_since = kafka_down_since(w, now),
                            .now = now,
                            .bound = w->isolation_ms / 1000.0,
                            .isolated = w->isolated};
    cv_isolation_t d = cv_isolation_decide(&in, &from);
    if (d == CV_ISOLATION_STEP_ASIDE && !w->isolated)
        step_aside(w, from, now);
    else if (d == CV_ISOLATION_STEP_ASIDE)
        w->isolated_from = from;
    else if (w->isolated)
        rejoin(w, now);
}
