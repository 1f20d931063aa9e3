/* The converge-observer process (internal). */
#ifndef CV_OBSERVER_H
#define CV_OBSERVER_H

#include "cv_io.h"
#include "cv_contract.h"

/* Observes the node named by `m` until settled; finishes `job` exactly once. */
void cv__observer_observe_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);

#endif
