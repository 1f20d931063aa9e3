/*
 * scen_job — one delivery handled step by step (internal to tests/scenario).
 *
 * A job is what a worker does with one message: the worker's own step
 * machine (cv_checkjob.h, cv_observejob.h, cv_stackjob.h; the reaper's
 * cv_finishjob.h), whose answers scen_flow.c carries out one unit per step
 * of the schedule — an answer's commands, or one of its messages. Between
 * two steps the driver may run another job's step, or kill this one.
 */
#ifndef SCEN_JOB_H
#define SCEN_JOB_H

#include "scen.h"

#include "cv_convergence.h"
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_hot.h"

/* A worker's step machine (cv_flow.h): how to start it, step it, free it. */
typedef struct scen_machine {
    const cv_flow_t *(*start)(void *state);
    const cv_flow_t *(*step)(void *state, const cv_flow_in_t *in);
    void (*free)(void *state);
} scen_machine_t;

struct scen_job {
    uint64_t msg_id; /* the bus message being handled; 0 for the reaper */
    cv_msg_t msg;
    char worker[32];
    unsigned worker_no; /* index of `worker` in scen_world_t.incarnation */
    char token[64];
    char lease_key[CV_KEY_MAX];
    uint64_t began_at; /* step of check_begin OK */
    const scen_machine_t *machine;
    void *state;
    cv_checkjob_t *check;    /* state, of a CHECK job */
    const cv_flow_t *answer; /* being carried out; NULL before the first */
    bool noted, sent;        /* its lines and sweep done; its commands sent */
    size_t published;        /* its messages published */
    redisReply **raw;        /* the replies it waits for, so far */
    size_t nraw;
};

/* The job of the reaper's traversal end (cv_finishjob), not on the bus. */
scen_job_t *scen_job_finish(scen_world_t *w, uint64_t traversal);

/* The next unit of a job (scen_flow.c); frees what it holds. */
scen_step_t scen_flow_step(scen_world_t *w, scen_job_t *j);
void scen_flow_free(scen_job_t *j);

/* A script call built by cv_calls (or by hand, for the rows it has no
 * builder for), sent synchronously; counts the round trip. */
redisReply *scen_call(const cv_call_t *call);
redisReply *scen_call_row(cv_script_t s, const char *const *keys, const char *const *args);

/* The virtual clock: a fixed time past every action's start, so that
 * types never wait (TestResource wait_secs 0) and decisions are stable. */
#define SCEN_NOW 4000000000.0

#endif
