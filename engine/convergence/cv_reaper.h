/*
 * cv_reaper — a stack is never left in progress with nobody working on it.
 *
 * Kafka redelivers the jobs of a worker that died, but a job can still be
 * lost for good: a client that stored a traversal and died before
 * publishing its STACK job, a broker that lost messages, a worker that
 * crashed between two steps nobody will redo. The reaper finds such stacks
 * — in progress, and no `progress` for longer than a threshold (node_done,
 * check_finish and observers still watching an action move it) — and
 * re-queues their work, which every handler accepts as a duplicate:
 *   - a traversal never expanded: its STACK job;
 *   - every node whose predecessors are all done but that is not done
 *     itself: its CHECK job (OBSERVE, with the record's version, for an
 *     update whose action of this traversal is recorded in progress);
 *   - every node done but the stack not ended: the stack is finished;
 *   - a name still mapped to a stack gone or DELETE_COMPLETE (the worker
 *     that finished the delete died before freeing it): the name is freed,
 *     only while it maps to that stack (stack_unname.lua).
 * The stacks looked at are those a worker began or expanded a traversal of
 * (<prefix>active, nested stacks included), every pass, and every named one
 * (<prefix>stacks) once per stall threshold.
 * The scan of one stack is one script that tells whether it stalled and on
 * which traversal (stack_reap.lua), then one per batch of that traversal's
 * graph entries (stack_reap_nodes.lua), bounded per pass. Any engine may run the reaper; one at
 * a time does, under the lease <prefix>reaper. What it re-queues is logged
 * and counted in the worker's liveness record (`reaped`).
 */
#ifndef CV_REAPER_H
#define CV_REAPER_H

#include "cv_contract.h"
#include "cv_io.h"

typedef struct cv_reaper cv_reaper_t;

/* Starts reaping on the worker's loop with its --reap-stall-ms (a stack is
 * stalled after this long without progress) and --reap-interval-ms (how
 * often the holder of the lease looks). NULL when out of memory. */
cv_reaper_t *cv_reaper_start(cv_worker_t *w);

/* Stops looking; a pass under way ends at its next step. NULL is allowed. */
void cv_reaper_stop(cv_reaper_t *r);

/* Adds a stack to those the reaper looks at besides the named ones of
 * <prefix>stacks: nested stacks have no name. Called when a worker begins a
 * traversal and when one is expanded; the reaper forgets a stack once it is
 * no longer in progress. Fire and forget. */
void cv_reaper_watch(cv_worker_t *w, const char *stack);

/* Frees `name` if it still maps to `stack` (stack_unname.lua): the fast
 * path of a worker that finished the stack's delete; the reaper frees it
 * later should this be lost. Fire and forget. */
void cv_reaper_unname(cv_worker_t *w, const char *name, const char *stack);

/* Tells the reaper that `job`'s traversal is being worked on although no
 * node finished (an observer watching a long action): the stack's progress
 * time moves, so it is not taken for stalled. Fire and forget. */
void cv_reaper_touch(cv_worker_t *w, const cv_msg_t *job);

#endif
