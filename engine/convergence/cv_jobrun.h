/*
 * cv_jobrun — the lifecycle every job handler shares: start, start again
 * after a timer or a backoff, give up, end, hand back when stopping.
 *
 * A handler keeps a cv_jobrun_t as the FIRST member of its state (so that
 * the state is freed through it) and supplies two functions: `start` begins
 * (again) the job's work from nothing, `reset` drops what one attempt loaded
 * (NULL: nothing to drop; it may run on a state it already dropped, or on
 * one that never started). Every path ends the job exactly once:
 *
 *   cv_jobrun_start   runs start(), or, when the worker is stopping or has
 *                     stepped aside (cut off from Redis or Kafka), resets,
 *                     hands the job back unfinished (redelivered to another
 *                     worker) and frees the state
 *   cv_jobrun_end     reset, finish the job (its offset may be committed),
 *                     free the state
 *   cv_jobrun_later   reset, then cv_jobrun_start after `ms` (a lease held
 *                     by another, a resource still in progress)
 *   cv_jobrun_retry   reset, then after a backoff cv_jobrun_start again; a
 *                     job that keeps failing while Redis and Kafka answer is
 *                     given up (cv_poison_retry: dead-lettered, its stack
 *                     failed) and the state freed
 *   cv_jobrun_drop    reset and free the state without finishing the job:
 *                     someone else finishes it (cv_poison_unknown_*)
 *
 * After cv_jobrun_end, cv_jobrun_retry (when it gives up) and cv_jobrun_drop
 * the handler's state is gone: touch nothing of it afterwards.
 */
#ifndef CV_JOBRUN_H
#define CV_JOBRUN_H

#include "cv_io.h"
#include "cv_contract.h"

typedef struct cv_jobrun cv_jobrun_t;
typedef void (*cv_jobrun_fn)(cv_jobrun_t *run);

struct cv_jobrun {
    cv_worker_t *w;
    cv_job_t *job;
    cv_msg_t msg;
    cv_retry_t retry;
    cv_jobrun_fn start;
    cv_jobrun_fn reset;
};

/* Fills `run` (the first member of a calloc'd state) for `job`; starts nothing. */
void cv_jobrun_init(cv_jobrun_t *run, cv_worker_t *w, cv_job_t *job, const cv_msg_t *m,
                    cv_jobrun_fn start, cv_jobrun_fn reset);

void cv_jobrun_start(cv_jobrun_t *run);
void cv_jobrun_end(cv_jobrun_t *run);
void cv_jobrun_later(cv_jobrun_t *run, unsigned ms);
void cv_jobrun_retry(cv_jobrun_t *run);
void cv_jobrun_drop(cv_jobrun_t *run);

#endif
