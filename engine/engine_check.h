/*
 * Internal to the engine: the state of one CHECK job and the steps shared by
 * the decisions (engine_converge.c) and the job lifecycle (engine_check.c).
 */
#ifndef CV_ENGINE_CHECK_H
#define CV_ENGINE_CHECK_H

#include "cv_kafka.h"
#include "cv_msg.h"
#include "cv_record.h"
#include "cv_rtype.h"
#include "cv_worker.h"

#include <jansson.h>
#include <stdbool.h>

typedef struct check {
    cv_worker_t *w;
    cv_job_t *job;
    cv_msg_t msg;
    char node[CV_NAME_MAX + 2];
    char token[160];
    unsigned attempt;
    bool leased;
    /* loaded under the lease */
    json_t *rdef;   /* {"type", "properties", "deletion_policy", "metadata", "depends"} or NULL */
    json_t *params; /* resolved parameters */
    json_t *sp;     /* predecessor node -> {"id", "attrs"} */
    char *graph_entry;
    cv_record_t rec;
    const cv_rtype_t *type;
    /* what the action writes */
    cv_rstate_t st;
    json_t *props;  /* desired properties, resolved */
    json_t *old;    /* replaced versions to record; NULL keeps */
    json_t *events; /* extra events to record; NULL none */
    char uuid[48];
} check_t;

/* The outcome of a decision; each ends the job exactly once. */
void cv__check_record(check_t *c, const char *status, const char *action, const char *reason);
void cv__check_hand_off(check_t *c, const char *version);
void cv__check_done(check_t *c, const char *status, const char *reason, const char *action,
                    const char *pass);
void cv__check_fail(check_t *c, const char *status, const char *action, const char *reason);
void cv__check_release_and_end(check_t *c);

/* Decisions (engine_converge.c). */
void cv__converge_update_node(check_t *c);
void cv__converge_cleanup_node(check_t *c);

#endif
