/*
 * OBSERVE jobs, run: each is a step machine (cv_observejob.h, in
 * engine/convergence) and this file its driver on the observer's loop
 * (cv_flowjob): the reads, looks and writes are the machine's; the loop,
 * the retries and the Kafka offset the worker's.
 */
#include "observer.h"

#include "cv_convergence.h"
#include "cv_io.h"

static const cv_flow_t *observe_start(void *machine)
{
    return cv_observejob_start(machine);
}

static const cv_flow_t *observe_step(void *machine, const cv_flow_in_t *in)
{
    return cv_observejob_step(machine, in);
}

static void observe_reset(void *machine)
{
    cv_observejob_reset(machine);
}

static const cv_flowjob_ops_t observe_ops = {
    .start = observe_start, .step = observe_step, .reset = observe_reset};

void cv__observer_observe_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    cv_flowjob_t *fj = cv_flowjob_new(w, job, m, &observe_ops, sizeof(cv_observejob_t));
    if (!fj) {
        cv_worker_hand_back(w, job); /* redelivered */
        return;
    }
    cv_observejob_init(fj->machine, m, w->id);
    cv_flowjob_start(fj);
}
