/*
 * cv_poison — what a worker does with a job it cannot complete, so that no
 * job is retried forever or dropped in silence: a job for a stack that does
 * not exist, and a job that kept failing. Both go to converge.dead with the
 * reason and the original bytes (`convergectl dead` lists them), the worker
 * carries on, and a stack that was waiting on the job is failed with a
 * reason naming it rather than left in progress.
 */
#ifndef CV_POISON_H
#define CV_POISON_H

#include "cv_io.h"
#include "cv_contract.h"

/* The job names a stack whose record does not exist: dead-letters its
 * message ("<role>: unknown stack <id>") and finishes the job once that is
 * acknowledged. */
void cv_poison_unknown_stack(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);

/* A job for a graph node that its traversal does not have (forged or
 * corrupt): dead-lettered with the reason; finishes `job`. */
void cv_poison_unknown_node(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);

/* The job failed `failures` times while Redis and Kafka answered
 * (cv_worker_retry said to give up): fails its traversal when Redis lets us
 * (the stack, if still in progress on that traversal, becomes
 * <ACTION>_FAILED with a reason naming the job), dead-letters its message
 * with the reason, and finishes the job once both are done. */
void cv_poison_give_up(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m, unsigned failures);

/* A transient failure of a job (Redis or Kafka away, a reply it could not
 * use): calls start(arg) again after a backoff and returns true, or, once
 * cv_worker_retry says to give up, gives the job up (cv_poison_give_up) and
 * returns false: then the caller frees its state. */
bool cv_poison_retry(cv_worker_t *w, cv_retry_t *r, cv_job_t *job, const cv_msg_t *m,
                     void (*start)(void *arg), void *arg);

#endif
