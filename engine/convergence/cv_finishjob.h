/*
 * cv_finishjob — a traversal's end as a step machine of its own (cv_flow.h):
 * what the reaper does with a traversal whose every node is done but that
 * did not end (its last worker died first). The end itself is cv_progress's
 * (outputs, <ACTION>_COMPLETE, a re-run, the name freed, the sweep), the
 * same the last node's job runs.
 */
#ifndef CV_FINISHJOB_H
#define CV_FINISHJOB_H

#include "cv_contract.h"
#include "cv_flow.h"
#include "cv_progress.h"

typedef struct cv_finishjob {
    char stack[CV_ID_MAX];
    uint64_t traversal;
    char worker[CV_ID_MAX];
    int rc; /* the end's outcome (cv_progress.h), once DONE or RETRY */
    cv_progress_t progress;
    cv_flow_buf_t buf;
} cv_finishjob_t;

void cv_finishjob_init(cv_finishjob_t *f, const char *stack, uint64_t traversal,
                       const char *worker);
const cv_flow_t *cv_finishjob_start(cv_finishjob_t *f);
/* The next answer; DONE (or RETRY: Redis or Kafka failed) once over. */
const cv_flow_t *cv_finishjob_step(cv_finishjob_t *f, const cv_flow_in_t *in);
void cv_finishjob_reset(cv_finishjob_t *f);
/* The end's outcome once the job is over. */
int cv_finishjob_rc(const cv_finishjob_t *f);

#endif
