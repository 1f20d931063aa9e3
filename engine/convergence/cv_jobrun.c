/*
 * cv_jobrun — one job lifecycle for every handler (contract in cv_jobrun.h).
 */
#include "cv_jobrun.h"

#include "cv_poison.h"

#include <stdlib.h>

void cv_jobrun_init(cv_jobrun_t *run, cv_worker_t *w, cv_job_t *job, const cv_msg_t *m,
                    cv_jobrun_fn start, cv_jobrun_fn reset)
{
    run->w = w;
    run->job = job;
    run->msg = *m;
    run->start = start;
    run->reset = reset;
}

static void reset(cv_jobrun_t *run)
{
    if (run->reset)
        run->reset(run);
}

/* cv_worker_later and cv_poison_retry call back with a void pointer. */
static void start_again(void *arg)
{
    cv_jobrun_start(arg);
}

void cv_jobrun_start(cv_jobrun_t *run)
{
    if (run->w->stopping || run->w->isolated) {
        reset(run); /* what it holds, a place in a gate (cv_gate) included */
        cv_worker_hand_back(run->w, run->job); /* another worker takes it up */
        free(run);
        return;
    }
    run->start(run);
}

void cv_jobrun_end(cv_jobrun_t *run)
{
    reset(run);
    cv_job_finish(run->job);
    free(run);
}

void cv_jobrun_later(cv_jobrun_t *run, unsigned ms)
{
    reset(run);
    if (cv_worker_later(run->w, ms, start_again, run) != 0)
        cv_jobrun_retry(run); /* no timer: the backoff's own timer may yet be had */
}

void cv_jobrun_retry(cv_jobrun_t *run)
{
    reset(run);
    if (!cv_poison_retry(run->w, &run->retry, run->job, &run->msg, start_again, run))
        free(run);
}

void cv_jobrun_drop(cv_jobrun_t *run)
{
    reset(run);
    free(run);
}
