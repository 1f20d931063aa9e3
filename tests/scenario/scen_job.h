/*
 * scen_job — one delivery handled step by step (internal to tests/scenario).
 *
 * A job is what a worker does with one message, cut at every Redis script
 * call and every publish: its `pc` says which stage comes next, and `ops`
 * queues what the stage decided to do afterwards (publish a message, end
 * the stack, leave the publishing set, release the lease), one op per
 * step. Between two steps the driver may run
 * another job's step, or kill this one.
 *
 * CHECK and OBSERVE jobs are the workers' own step machines
 * (cv_checkjob.h, cv_observejob.h), driven by scen_flow.c. The stages of a
 * STACK job mirror engine/converge-engine/engine_stack.c (scen_stack.c);
 * what the ops do mirrors engine/convergence (cv_progress).
 */
#ifndef SCEN_JOB_H
#define SCEN_JOB_H

#include "scen.h"

#include "cv_convergence.h"
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_hot.h"

typedef enum {
    OP_PUBLISH,      /* msg onto the bus */
    OP_FINISH,       /* cv_progress_finish_stack: read the definition */
    OP_FINISH_WRITE, /* stack_finish.lua COMPLETE */
    OP_GARBAGE,      /* the name after a delete, the traversal's keys */
} scen_op_kind_t;

typedef struct scen_op {
    scen_op_kind_t kind;
    cv_msg_t msg;    /* PUBLISH; FINISH*: stack, traversal */
    bool observe;    /* PUBLISH: the observe topic */
    char action[16]; /* FINISH_WRITE, GARBAGE: the stack's action */
} scen_op_t;

enum { PC_START = 0, PC_END = 100 };

/* A worker's step machine (cv_flow.h), driven by scen_flow.c. */
typedef struct scen_machine {
    const cv_flow_t *(*start)(void *state);
    const cv_flow_t *(*step)(void *state, const cv_flow_in_t *in);
    void (*free)(void *state);
} scen_machine_t;

struct scen_job {
    uint64_t msg_id; /* the bus message being handled; 0 for the reaper */
    cv_msg_t msg;
    int pc;
    scen_op_t *ops;
    size_t nops, opcap;
    char worker[32];
    unsigned worker_no; /* index of `worker` in scen_world_t.incarnation */
    char token[64];
    bool leased;
    char lease_key[CV_KEY_MAX];
    uint64_t began_at; /* step of check_begin OK */
    /* run by a step machine (scen_flow.c) */
    const scen_machine_t *machine;
    void *state;
    cv_checkjob_t *check;    /* state, of a CHECK job */
    const cv_flow_t *answer; /* being carried out; NULL before the first */
    bool noted, sent;        /* its lines and sweep done; its commands sent */
    size_t published;        /* its messages published */
    redisReply **raw;        /* the replies it waits for, so far */
    size_t nraw;
    /* STACK */
    cv_template_t *tpl;
    cv_graph_t *graph;
    json_t *index;
    char draft[2][CV_KEY_MAX];
};

void scen_op_push(scen_job_t *j, const scen_op_t *op);
void scen_op_push_front(scen_job_t *j, const scen_op_t *op);
void scen_op_publish_node(scen_job_t *j, const char *node);
void scen_op_publish_observe(scen_job_t *j, const char *version, bool watch);
void scen_op_finish(scen_job_t *j);

/* Runs one op; the step's result. */
scen_step_t scen_op_run(scen_world_t *w, scen_job_t *j, const scen_op_t *op);

/* The stages of each kind of job. */
scen_step_t scen_stack_step(scen_world_t *w, scen_job_t *j);
/* The next unit of a job run by a step machine (scen_flow.c); frees what it holds. */
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
