/*
 * Internal to the OBSERVE step machine (cv_observejob.h): observejob.c is
 * the job's line (load, decide, settle, the node done or failed);
 * observejob_look.c reads what the looks need and has the types look.
 */
#ifndef CV__OBSERVEJOB_H
#define CV__OBSERVEJOB_H

#include "cv_observejob.h"

/* ---- observejob.c ---- */

/* Carries out what the decision on the looks said. */
const cv_flow_t *cv__observejob_settle(cv_observejob_t *o);
const cv_flow_t *cv__observejob_end(cv_observejob_t *o, cv_flow_kind_t kind);

/* ---- observejob_look.c ---- */

/* Reads what the versions' looks need (the watched resource, child
 * stacks, services), one read after the other, then looks and settles. */
const cv_flow_t *cv__observejob_read_then_look(cv_observejob_t *o, double now);
const cv_flow_t *cv__observejob_watched(cv_observejob_t *o, const cv_flow_in_t *in);
const cv_flow_t *cv__observejob_children(cv_observejob_t *o, const cv_flow_in_t *in);
const cv_flow_t *cv__observejob_services(cv_observejob_t *o, const cv_flow_in_t *in);

#endif
