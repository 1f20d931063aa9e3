/*
 * cv_flowrun — the step machines' answers (cv_flow.h) carried out on a
 * worker: Redis commands on its connection (pipelined, asynchronous),
 * messages through its producer, its counters and logs, and the lifecycle
 * of the job a machine runs (cv_jobrun: later, retry, end, dead letter).
 * The I/O half of the job flows; the decisions are all the machines'.
 *
 * A program makes a cv_flowjob_t for a message with the machine's
 * functions (cv_flowjob_ops_t) and starts it: the driver asks the machine
 * for an answer, carries it out, gives the machine what came back, and so
 * on until the machine says the job is over. What is the program's own —
 * which gate a memory-heavy step waits in, how a service is reconciled,
 * answers it sends together with others' — comes in through the ops.
 */
#ifndef CV_FLOWRUN_H
#define CV_FLOWRUN_H

#include <hiredis/hiredis.h>
#include <stdbool.h>

#include "cv_flow.h"
#include "cv_gate.h"
#include "cv_io.h"
#include "cv_jobrun.h"
#include "cv_resp.h"

/* hiredis's reply as a cv_resp_t in one allocation (free it with free()):
 * `copy` copies the strings into it, else they point into r, which must
 * then outlive it. NULL for NULL (and when out of memory). */
cv_resp_t *cv_flowrun_resp(const redisReply *r, bool copy);

/* The answer's lines, counts and sweep, done on w. */
void cv_flowrun_notes(cv_worker_t *w, const cv_flow_t *a);

/* Sends the answer's commands and publishes its messages; cb gets what
 * came back once every awaited reply and acknowledgement is in (at once
 * when nothing could be sent). The answer may be dropped once this
 * returns. */
typedef void (*cv_flowrun_cb)(void *ud, const cv_flow_in_t *in);
void cv_flowrun_io(cv_worker_t *w, const cv_flow_t *a, cv_flowrun_cb cb, void *ud);

/* Sends the answer's commands and forgets them (answers that wait for none). */
void cv_flowrun_send(cv_worker_t *w, const cv_flow_t *a);

/* ------------------------------------------------------------------------
 * A job run by a step machine.
 * ------------------------------------------------------------------------ */

typedef struct cv_flowjob cv_flowjob_t;

typedef void (*cv_flowjob_reconciled_cb)(void *ud, int rc, const char *why);

typedef struct cv_flowjob_ops {
    /* The machine's first answer, from nothing loaded. */
    const cv_flow_t *(*start)(void *machine);
    const cv_flow_t *(*step)(void *machine, const cv_flow_in_t *in);
    /* Drops what an attempt loaded (the job may start again). */
    void (*reset)(void *machine);
    /* Optional: the lease the machine holds now, which the driver keeps
     * renewed while it does (cv_lease_keep). */
    bool (*lease)(const void *machine, const char **key, const char **token);
    /* Optional: the gate a place must be had in before the job starts
     * (in NULL) or takes `in`; NULL none. Not admitted, the job waits in
     * line holding nothing, and starts again once admitted. */
    cv_gate_t *(*gate)(cv_flowjob_t *fj, const cv_flow_in_t *in);
    /* Optional: reconciles service svc (RECONCILE answers). */
    void (*reconcile)(cv_worker_t *w, const char *svc, cv_flowjob_reconciled_cb cb, void *ud);
    /* Optional: takes an IO answer to send it itself, with others
     * (cv_flowjob_feed with its replies later); false: sent as usual. */
    bool (*intercept)(cv_flowjob_t *fj, const cv_flow_t *a);
} cv_flowjob_ops_t;

struct cv_flowjob {
    cv_jobrun_t run; /* first: the job, its lifecycle and its retries */
    const cv_flowjob_ops_t *ops;
    cv_lease_keeper_t *keeper; /* renews the machine's lease while it is held */
    cv_gate_t *gate;           /* the gate it holds a place in, or waits in */
    cv_gate_waiter_t waiter;
    void *machine; /* the machine's value, in the same allocation */
};

/* A job of `job` (message m) run by a machine of machine_size bytes,
 * zeroed, for the caller to initialise; starts nothing. */
cv_flowjob_t *cv_flowjob_new(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m,
                             const cv_flowjob_ops_t *ops, size_t machine_size);

/* Starts (cv_jobrun_start: handed back when the worker is stopping). */
void cv_flowjob_start(cv_flowjob_t *fj);

/* Gives the machine what its last answer returned and carries the next
 * answer out. fj may be gone when this returns. */
void cv_flowjob_feed(cv_flowjob_t *fj, const cv_flow_in_t *in);

/* Sends an IO answer the usual way (one an intercept gave back). */
void cv_flowjob_send(cv_flowjob_t *fj, const cv_flow_t *a);

/* ------------------------------------------------------------------------
 * The traversal moves of cv_progress for code that is no step machine
 * (the reaper, the SIGNAL job): run to their end, then cb(ud, rc).
 * ------------------------------------------------------------------------ */

typedef void (*cv_flowrun_done_cb)(void *ud, int rc);

/* cv_progress_finish: ends a traversal whose every node is done. */
int cv_flowrun_finish_stack(cv_worker_t *w, const char *stack, uint64_t traversal,
                            cv_flowrun_done_cb cb, void *ud);

/* cv_progress_begin: begins sb and publishes its STACK job; cb also gets
 * the traversal. */
typedef void (*cv_flowrun_begun_cb)(void *ud, int rc, uint64_t traversal);
int cv_flowrun_begin_stack(cv_worker_t *w, const cv_stack_begin_t *sb, bool express,
                           cv_flowrun_begun_cb cb, void *ud);

#endif
