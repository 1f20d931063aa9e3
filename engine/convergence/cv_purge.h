/*
 * cv_purge — nothing a stack leaves behind is kept forever.
 *
 * Two kinds of garbage, both removed by workers in steps that each leave
 * every reader a consistent keyspace:
 *   - the keys of a retired traversal (ended, failed, or superseded by a
 *     newer one): the script that retires it lists it in the stack's `gc`
 *     set in the same step (lib.lua retire_traversal), and a sweep removes
 *     its sync points, graph, definitions and done sets in bounded batches
 *     (traversal_sweep.lua), then takes it off the list. The worker that
 *     ends a traversal sweeps at once; the reaper sweeps every stack it
 *     watches before it forgets it, so a sweep lost with its worker is
 *     done again.
 *   - a deleted stack, after a retention period (--deleted-retention-s, as
 *     heat-manage purge_deleted): its id is noted in <prefix>deleted (a
 *     sorted set, by when the delete was seen complete) by the worker that
 *     finished the delete and by the reaper, which sees every stack that
 *     settles; the reaper purges the old enough ones: sweep, then every
 *     key of the stack in one script (stack_purge.lua: only a stack still
 *     DELETE_COMPLETE, for long enough, with no lease held), then the id
 *     leaves <prefix>deleted and its parent's `children`. `convergectl
 *     purge --older-than D` does the same at once.
 */
#ifndef CV_PURGE_H
#define CV_PURGE_H

#include "cv_contract.h"
#include "cv_io.h"

/* rc: 0 done; CV_EREDIS (Redis failed: the reaper tries again). For
 * cv_purge_stack, answer is what stack_purge.lua answered (CV_ANSWER_OK:
 * purged; GONE, LIVE, YOUNG, BUSY: nothing purged). */
typedef void (*cv_purge_cb)(void *ud, int rc, cv_answer_t answer);

/* Removes the keys of every retired traversal of `stack`, a bounded batch
 * per script call. cb (may be NULL) runs once. Returns 0, or CV_ENOMEM /
 * CV_EREDIS (cb not called). */
int cv_purge_sweep(cv_worker_t *w, const char *stack, cv_purge_cb cb, void *ud);

/* Purges the deleted stack `stack` if it is DELETE_COMPLETE for at least
 * age_s seconds (Redis' clock): its traversals swept, then every key of it
 * at once; a stack purged, gone or no longer deleted leaves <prefix>deleted
 * and its parent's `children`. Logs what it purged. Returns 0, or
 * CV_ENOMEM / CV_EREDIS (cb not called). */
int cv_purge_stack(cv_worker_t *w, const char *stack, long age_s, cv_purge_cb cb, void *ud);

/* Notes that `stack` is DELETE_COMPLETE in <prefix>deleted (ZADD NX: the
 * first sighting's time is kept). Fire and forget. */
void cv_purge_note_deleted(cv_worker_t *w, const char *stack);

#endif
