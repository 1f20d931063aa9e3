/*
 * cv_progress — how a finished graph node moves its traversal forward, as
 * a step machine that the job flows run inside their own (cv_flow.h).
 *
 * One atomic script marks the node done (fenced by the record version) and
 * adds it to each successor's sync point; every successor whose set became
 * complete gets its CHECK job, up to CV_MSG_NODES_MAX to a message
 * (cv_sp_should_publish decides); when the last node is done the
 * traversal ends (below). A node that fails fails its traversal; a stack
 * that asked for rollback is rolling back in the same script
 * (node_failed.lua), and its STACK job is published here. The sub-flow is
 * over once every message it published is acknowledged, so the caller may
 * then commit its own offset.
 *
 * The end of a traversal: its outputs resolved against the records of the
 * resources they reference, <ACTION>_COMPLETE (stack_finish.lua), the name
 * freed after a delete (and the stack noted for its purge), its keys swept
 * after the job (cv_flow_t.sweep). A traversal that finds records made
 * behind its back (AGAIN) is re-run instead: the script began another
 * traversal of the same kind, whose STACK job is published here; one that
 * finds an older action still to be recorded (BUSY) stays in progress, and
 * the reaper ends it once the stack's progress stalled. O(outputs) once per
 * traversal, never per resource.
 *
 * Beginning a traversal from a worker (a nested stack's, by its parent's
 * resource): stack_begin.lua, then its STACK job, so that a crash in
 * between leaves a traversal a retry (same token) publishes again.
 *
 * Each start function adds its first commands to the caller's answer `b`
 * (begun by the caller) and returns it; cv_progress_step takes what that
 * answer returned and gives the next one, or NULL once the sub-flow is
 * over, with its outcome in *rc — what is left in `b` then (a command sent
 * and forgotten, lines, a sweep) goes with the caller's next answer.
 * Outcomes: 0 progressed; CV_ESTALE superseded or settled (nothing to
 * do); CV_EFENCED the record moved on; CV_EREDIS / CV_EKAFKA transient
 * (retry the job); for a begin also CV_ENOENT (no such stack) and
 * CV_EEXIST (a CREATE of a stack begun under another token).
 */
#ifndef CV_PROGRESS_H
#define CV_PROGRESS_H

#include <jansson.h>

#include "cv_calls.h"
#include "cv_contract.h"
#include "cv_flow.h"

typedef struct cv_progress {
    int state; /* what the sub-flow waits for (progress.c); 0 idle */
    cv_msg_t job;
    const char *worker; /* the worker's id, borrowed */
    cv_call_t *call;    /* node_done / check_done: its successors' names and counts */
    bool publishing;    /* leave the publishing set once every job is out */
    bool recorded;      /* node_done answered OK */
    bool last;          /* the traversal's last node done: its end is ours */
    int rc;
    uint64_t begun; /* a begin: the traversal begun */
    /* The traversal's end (progress_finish.c). */
    struct {
        int state; /* what the end waits for (progress_finish.c); 0 none */
        char stack[CV_ID_MAX];
        uint64_t traversal;
        char action[16];
        char name[CV_NAME_MAX];
        json_t *outputs;   /* the template's outputs that run */
        json_t *params;    /* resolved parameters */
        json_t *resources; /* name -> {"id", "attrs"} of referenced resources */
        json_t *names;     /* the referenced names, in the order they were read */
        int rc;
    } fin;
} cv_progress_t;

/* Marks d's node done (cv_call_node_done) and publishes the CHECK jobs of
 * the successors it made ready. */
const cv_flow_t *cv_progress_node_done(cv_progress_t *p, cv_flow_buf_t *b, const cv_node_done_t *d,
                                       const char *worker);

/* Records the action `f` and marks d's node done in one step
 * (cv_call_check_done: an action that settled at once), then as
 * cv_progress_node_done; CV_EFENCED: nothing was written. */
const cv_flow_t *cv_progress_check_done(cv_progress_t *p, cv_flow_buf_t *b,
                                        const cv_check_finish_t *f, const cv_node_done_t *d,
                                        const char *worker);

/* Records a failed action and fails the traversal (cv_call_node_failed);
 * a stack that asks for it is rolling back, and the rollback's STACK job is
 * published. */
const cv_flow_t *cv_progress_node_failed(cv_progress_t *p, cv_flow_buf_t *b,
                                         const cv_node_failed_t *f, const char *worker);

/* Ends traversal `traversal` of `stack`, whose every node is done (an
 * empty one too). */
const cv_flow_t *cv_progress_finish(cv_progress_t *p, cv_flow_buf_t *b, const char *stack,
                                    uint64_t traversal, const char *worker);

/* Begins the traversal sb (its strings must live as long as the answer)
 * and publishes its STACK job in the lane `express`; cv_progress_begun
 * then says which traversal (0 for none). */
const cv_flow_t *cv_progress_begin(cv_progress_t *p, cv_flow_buf_t *b, const cv_stack_begin_t *sb,
                                   bool express, const char *worker);
uint64_t cv_progress_begun(const cv_progress_t *p);

/* The next answer, or NULL with the outcome in *rc. */
const cv_flow_t *cv_progress_step(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in,
                                  int *rc);

/* Whether a sub-flow is under way. */
bool cv_progress_busy(const cv_progress_t *p);

/* Drops what a sub-flow holds; the progress is idle again. */
void cv_progress_clear(cv_progress_t *p);

/* Internal to progress*.c: the traversal's end. */
const cv_flow_t *cv__progress_finish_start(cv_progress_t *p, cv_flow_buf_t *b, const char *stack,
                                           uint64_t traversal);
/* The next answer of the end, or NULL with its outcome in *rc. */
const cv_flow_t *cv__progress_finish_step(cv_progress_t *p, cv_flow_buf_t *b,
                                          const cv_flow_in_t *in, int *rc);
void cv__progress_finish_clear(cv_progress_t *p);
/* A sent-and-forgotten SADD that has the reaper watch `stack`
 * (cv_reaper_watch): nested stacks have no name it would find them by. */
void cv__progress_watch(cv_flow_buf_t *b, const char *stack);

#endif
