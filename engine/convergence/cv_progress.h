/*
 * cv_progress — how a finished graph node moves its traversal forward.
 *
 * One atomic script marks the node done (fenced by the record version) and
 * adds it to each successor's sync point; every successor whose set became
 * complete gets its check job; when the last node is done the stack's
 * outputs are resolved and it becomes <ACTION>_COMPLETE. A node that fails
 * fails its traversal. The callback runs once every message it published
 * is acknowledged by Kafka, so the caller may then commit its own offset.
 * A failure of a stack that asked for rollback begins the rollback traversal
 * in the same script that records it (node_failed.lua); the callback runs
 * once the rollback's STACK job is acknowledged.
 */
#ifndef CV_PROGRESS_H
#define CV_PROGRESS_H

#include "cv_calls.h"
#include "cv_contract.h"
#include "cv_io.h"

/* rc: 0 progressed; CV_ESTALE (superseded or settled: nothing to do);
 * CV_EFENCED (the record moved on); CV_EREDIS / CV_EKAFKA (retry the job). */
typedef void (*cv_progress_cb)(void *ud, int rc);

/* Marks d's node done (cv_call_node_done) and publishes the CHECK jobs of
 * the successors it made ready. */
int cv_progress_node_done(cv_worker_t *w, const cv_node_done_t *d, cv_progress_cb cb, void *ud);

/* Records the action `f` and marks d's node done in one step
 * (cv_call_check_done: an action that settled at once), then as
 * cv_progress_node_done; CV_EFENCED: nothing was written. */
int cv_progress_check_done(cv_worker_t *w, const cv_check_finish_t *f, const cv_node_done_t *d,
                           cv_progress_cb cb, void *ud);

/* cv_progress_check_done for n actions of one stack and traversal that
 * settled together: those of nodes without successors in one step
 * (cv_call_check_done_many), the others each alone. Each item's cb[i]
 * runs exactly once with its own outcome, at once when it could not be
 * sent. */
void cv_progress_check_done_many(cv_worker_t *w, const cv_check_finish_t *const *f,
                                 const cv_node_done_t *const *d, size_t n, cv_progress_cb cb,
                                 void *const *ud);

/* Records a failed action and fails the traversal (cv_call_node_failed);
 * a stack that asks for it is rolling back in the same step, and the
 * rollback's STACK job is published. */
int cv_progress_node_failed(cv_worker_t *w, const cv_node_failed_t *f, cv_progress_cb cb, void *ud);

/* Begins the traversal b (cv_stack_begin_t, proto/contract/cv_script.h): nested
 * stacks are begun this way by their parent, in the parent job's lane
 * (`express`, cv_msg_t.express). */
/* rc: 0 begun (or begun already with this token) and its STACK job
 * acknowledged; CV_ENOENT no such stack; CV_EEXIST (CREATE of an existing
 * stack under another token); CV_EREDIS / CV_EKAFKA transient. */
typedef void (*cv_begin_cb)(void *ud, int rc, uint64_t traversal);

int cv_progress_begin_stack(cv_worker_t *w, const cv_stack_begin_t *b, bool express, cv_begin_cb cb,
                            void *ud);

/* stack_finish.lua: a stack still in progress on `traversal` becomes
 * <ACTION>_<status> (status "COMPLETE" or "FAILED") with reason and
 * outputs (a JSON object text); its reply (lua header) goes to cb. Returns
 * 0, or CV_EREDIS when not connected (cb is then not called). */
int cv_progress_stack_status(cv_worker_t *w, const char *stack, uint64_t traversal,
                             const char *status, const char *reason, const char *outputs,
                             cv_redis_cb cb, void *ud);

/* Ends a traversal whose every node is done (also used for empty stacks). */
int cv_progress_finish_stack(cv_worker_t *w, const char *stack, uint64_t traversal,
                             cv_progress_cb cb, void *ud);

#endif
