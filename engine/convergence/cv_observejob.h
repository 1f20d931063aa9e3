/*
 * cv_observejob — an OBSERVE job as a step machine: watch one graph node's
 * action until it is settled (cv_flow.h says how a step machine is
 * driven).
 *
 * The record is read with the version the engine wrote (observe_load.lua);
 * cv_observe_decide says whether there is anything to look at (a newer
 * action may own the resource) and, once the type has looked at every
 * version the node watches, what that means: in progress looks again after
 * a delay (LATER: never a sleeping worker, and the stack touched so the
 * reaper does not take it for stalled); failed fails the traversal;
 * complete records the observation and satisfies the successors
 * (cv_progress). A cleanup node watches every version it is deleting. A
 * waiting type (cv_rtype_t.watches: a WaitCondition) is handed the record
 * of the resource it watches, read just before the look (signal_watch.lua);
 * a nested version its child stack's status (one HMGET per child, each in
 * its own slot); a Converge::Service version its service's cluster state
 * (svc_look.lua). A watch (WAIT of a newer traversal) records the older
 * action's end as that traversal's own, then has its node checked again.
 * The observer (observer/converge-observer) runs these answers on Redis and
 * Kafka, the scenario harness over its seeded bus.
 */
#ifndef CV_OBSERVEJOB_H
#define CV_OBSERVEJOB_H

#include <jansson.h>

#include "cv_contract.h"
#include "cv_decide.h"
#include "cv_flow.h"
#include "cv_progress.h"
#include "cv_record.h"

/* What the job waits for. */
typedef enum {
    CV_OBSERVEJOB_LOAD,     /* observe_load's reply */
    CV_OBSERVEJOB_WATCHED,  /* signal_watch's reply: the resource a waiting type watches */
    CV_OBSERVEJOB_CHILDREN, /* the status of the nested versions' child stacks */
    CV_OBSERVEJOB_SERVICES, /* the cluster state of the Converge::Service versions */
    CV_OBSERVEJOB_PUBLISH,  /* the node's CHECK job delivered (a recheck, a walk's step) */
    CV_OBSERVEJOB_OLDER,    /* a watch: the older traversal's outcome recorded (cv_progress) */
    CV_OBSERVEJOB_PROGRESS, /* the node done or failed (cv_progress) */
} cv_observejob_state_t;

typedef struct cv_observejob {
    cv_observejob_state_t state;
    cv_msg_t msg;
    char worker[CV_ID_MAX];
    cv_record_t rec; /* as observe_load read it */
    char *graph_entry;
    json_t *reading;  /* what the reads under way are of, in the order of their replies */
    json_t *children; /* nested versions' child stacks as read now: id -> snapshot */
    json_t *watched;  /* a waiting type's watched resource as read now, or NULL */
    json_t *services; /* Converge::Service versions' cluster state as read now: svc -> snapshot */
    cv_observe_outcome_t out;
    cv_msg_t older; /* a watch's SETTLED_OLDER: the older traversal's job */
    cv_progress_t progress;
    cv_flow_buf_t buf; /* the answer */
} cv_observejob_t;

/* A job of OBSERVE message m by worker `worker`, nothing loaded. */
void cv_observejob_init(cv_observejob_t *o, const cv_msg_t *m, const char *worker);

/* observe_load, from nothing loaded. */
const cv_flow_t *cv_observejob_start(cv_observejob_t *o);

/* The next answer, given what the last one returned. */
const cv_flow_t *cv_observejob_step(cv_observejob_t *o, const cv_flow_in_t *in);

/* Drops what an attempt loaded: the job is as cv_observejob_init left it. */
void cv_observejob_reset(cv_observejob_t *o);

const cv_msg_t *cv_observejob_msg(const cv_observejob_t *o);
cv_observejob_state_t cv_observejob_state(const cv_observejob_t *o);
/* The last decision taken (before or after the look). */
const cv_observe_outcome_t *cv_observejob_outcome(const cv_observejob_t *o);

#endif
