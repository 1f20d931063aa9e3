/*
 * cv_syncpoint — the arithmetic of sync points.
 *
 * A sync point belongs to one traversal-graph node and holds the SET of its
 * predecessors that are satisfied (with the data each passes on). The set
 * lives in Redis and is updated by one atomic script; this module is the
 * decision taken on the script's answer, kept pure so it is unit-tested:
 * whether the node's job must be published now.
 *
 * Rules: satisfying is idempotent (a duplicate never double-counts); the job
 * is published by whoever completes the set; a redelivered "predecessor
 * done" (the predecessor was already recorded done before this delivery)
 * publishes again for successors that are complete, because the first
 * delivery may have died before publishing. Duplicated jobs are harmless:
 * every handler is idempotent.
 */
#ifndef CV_SYNCPOINT_H
#define CV_SYNCPOINT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cv_sp_answer {
    size_t required;  /* number of predecessors of the node */
    size_t satisfied; /* size of the satisfied set after this call */
    bool added;       /* this call added the predecessor to the set */
    bool node_done;   /* the successor itself is already done in this traversal */
} cv_sp_answer_t;

/* Whether the successor's job is to be published by this caller.
 * `redelivery`: the predecessor was already done before this call. */
bool cv_sp_should_publish(const cv_sp_answer_t *ans, bool redelivery);

/*
 * An in-memory sync point with the same set semantics as the Redis one, for
 * the deterministic scenario harness and the unit tests.
 */
typedef struct cv_syncpoint cv_syncpoint_t;

cv_syncpoint_t *cv_sp_new(size_t required);
void cv_sp_free(cv_syncpoint_t *sp);

/* Records `pred` as satisfied with `data` (copied; a later call for the same
 * pred keeps the first data). Fills *ans. Returns 0 or CV_ENOMEM. */
int cv_sp_satisfy(cv_syncpoint_t *sp, const char *pred, const char *data, cv_sp_answer_t *ans);

/* Data passed by `pred`, or NULL when it has not satisfied the point. */
const char *cv_sp_data(const cv_syncpoint_t *sp, const char *pred);

bool cv_sp_complete(const cv_syncpoint_t *sp);

#endif
