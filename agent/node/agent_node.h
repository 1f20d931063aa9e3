/*
 * agent_node — one node as Redis sees it (docs/services.md): registered in
 * {cluster}:nodes and {cluster}:node:<node>, alive while its heartbeat key
 * {cluster}:alive:<node> is refreshed (every TTL/4), told what to run by
 * {cluster}:assign:<node> — read whole at start, on every notification and
 * every second, so a lost or repeated message changes nothing — and saying
 * what runs in {cluster}:report:<node>, on every change and every second.
 * Restarts are events of the replica's stack and counts in {cluster}:ledger.
 *
 * When no heartbeat got through for longer than the fence time, the node's
 * stateful replicas are killed (they may soon be placed elsewhere); they
 * start again if they are still assigned here once Redis answers.
 *
 * A simulated node (conf->simulate) runs no process: agent_replica fakes
 * them. Many nodes share one loop and one Redis connection.
 */
#ifndef AGENT_NODE_H
#define AGENT_NODE_H

#include "agent_sandbox.h"

#include "cv_io.h"

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

typedef struct cv_anode_conf {
    const char *name;
    const json_t *desc;     /* the node description */
    const json_t *settings; /* the cluster settings to publish, or NULL */
    const char *dir;        /* the node's files; unused when simulated */
    const char *address;
    int port_lo, port_hi;
    int heartbeat_ttl_ms, fence_ms;
    double reset_s;
    size_t log_cap;
    bool simulate;
    const char *agent_id;   /* "<host>:<pid>:<started>" */
    const cv_sandbox_t *sb; /* how replicas are confined; NULL when simulated */
} cv_anode_conf_t;

typedef struct cv_anode cv_anode_t;

/* A node on `redis` (shared; not owned; NULL until Redis could be reached
 * once: the node then runs its replicas, and its fence clock, without it).
 * Re-adopts what its state files name. */
cv_anode_t *cv_anode_new(uv_loop_t *loop, cv_redis_t *redis, const cv_anode_conf_t *conf);

/* The connection, once there is one. */
void cv_anode_set_redis(cv_anode_t *n, cv_redis_t *redis);

/* Registers and starts the heartbeat, the resync and the ticks. */
void cv_anode_start(cv_anode_t *n);

/* The notification channel of the node. */
const char *cv_anode_channel(const cv_anode_t *n);

/* Something changed on Redis (a notification, or a new subscription): read
 * the assignments now. */
void cv_anode_resync(cv_anode_t *n);

/* Stops heartbeating and ticking; with stop_replicas, stops every replica
 * first and calls `done` once they are all stopped and reported (else at
 * once). The replicas' processes otherwise keep running. */
void cv_anode_shutdown(cv_anode_t *n, bool stop_replicas, void (*done)(void *ud), void *ud);

void cv_anode_free(cv_anode_t *n);

#endif
