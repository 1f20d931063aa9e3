/*
 * Internal to the CHECK step machine (cv_checkjob.h): how its files hand
 * the job to each other. checkjob_flow.c is the straight line (load,
 * decide, carry out, record, hand off, end); checkjob_hooks.c,
 * checkjob_nested.c and checkjob_service.c add the steps hooks, child
 * stacks and services take before the action is carried out or recorded.
 * Every function returns the job's next answer.
 */
#ifndef CV__CHECKJOB_H
#define CV__CHECKJOB_H

#include "cv_checkjob.h"

/* What follows the cv_progress sub-flow under way. */
enum {
    CV__CHECKJOB_THEN_RELEASE, /* end, the lease released if it is held */
    CV__CHECKJOB_THEN_DONE,    /* node_done released the lease when it answered OK */
    CV__CHECKJOB_THEN_SETTLED, /* check_done recorded the action and the node done */
    CV__CHECKJOB_THEN_CHILD,   /* a child stack's traversal begun */
};

/* ---- checkjob_flow.c ---- */

/* Carries the decided outcome out. */
const cv_flow_t *cv__checkjob_carry_out(cv_checkjob_t *j);
/* Records the action carried out: child stacks begun first, then
 * services put, then the write (or the write and the node done). */
const cv_flow_t *cv__checkjob_record(cv_checkjob_t *j);
/* Fails the node (node_failed) with these texts (copied). */
const cv_flow_t *cv__checkjob_fail(cv_checkjob_t *j, const char *status, const char *action,
                                   const char *reason);
/* Ends the job, releasing the lease first when it is held. */
const cv_flow_t *cv__checkjob_release_and_end(cv_checkjob_t *j);
/* A cv_progress sub-flow's first answer `a`, then `then`. */
const cv_flow_t *cv__checkjob_progress(cv_checkjob_t *j, const cv_flow_t *a, int then);
/* Ends with `kind` (RETRY, DONE, ...). */
const cv_flow_t *cv__checkjob_end(cv_checkjob_t *j, cv_flow_kind_t kind);

/* ---- checkjob_hooks.c ---- */

/* The hook_wait answer when a hook stops the outcome, else NULL. */
const cv_flow_t *cv__checkjob_hooks(cv_checkjob_t *j);
const cv_flow_t *cv__checkjob_hook_replied(cv_checkjob_t *j, const cv_flow_in_t *in);

/* ---- checkjob_nested.c ---- */

/* cv_check_plan_fn: the child-stack traversal a nested version's action
 * needs, noted in j->children. */
int cv__checkjob_plan_child(void *job, const char *op, const char *child, const char *type_name,
                            const json_t *props, json_t *data, const char *token, char *errstr,
                            size_t errstr_size);
/* Begins the planned child traversals one after the other, then records. */
const cv_flow_t *cv__checkjob_children(cv_checkjob_t *j);
const cv_flow_t *cv__checkjob_child_begun(cv_checkjob_t *j, int rc);

/* ---- checkjob_service.c ---- */

/* Lists the services the action puts into the cluster or marks deleting. */
void cv__checkjob_plan_services(cv_checkjob_t *j);
/* Puts and reconciles them one after the other, then records. */
const cv_flow_t *cv__checkjob_services(cv_checkjob_t *j);
const cv_flow_t *cv__checkjob_cluster_read(cv_checkjob_t *j, const cv_flow_in_t *in);
const cv_flow_t *cv__checkjob_svc_put(cv_checkjob_t *j, const cv_flow_in_t *in);
const cv_flow_t *cv__checkjob_reconciled(cv_checkjob_t *j, const cv_flow_in_t *in);

#endif
