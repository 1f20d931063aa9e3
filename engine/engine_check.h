/*
 * Internal to the engine: the state of one CHECK job and the steps shared by
 * the decisions (engine_converge.c) and the job lifecycle (engine_check.c).
 */
#ifndef CV_ENGINE_CHECK_H
#define CV_ENGINE_CHECK_H

#include "cv_kafka.h"
#include "cv_lease.h"
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
    cv_retry_t retry;
    bool leased;
    cv_lease_keeper_t *keeper; /* renews the lease while it is held */
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
    /* nested stacks */
    char stack_name[CV_NAME_MAX];
    char type_name[CV_NAME_MAX]; /* as written: a registered type or a template file */
    int depth;                   /* this stack's nesting depth */
    json_t *files;               /* the stack's template files; loaded only for a nested resource */
    json_t *children;            /* child-stack traversals to begin before recording */
    char saved_status[32], saved_action[16], saved_reason[CV_REASON_MAX];
} check_t;

/* The outcome of a decision; each ends the job exactly once. */
void cv__check_record(check_t *c, const char *status, const char *action, const char *reason);
void cv__check_hand_off(check_t *c, const char *version);
void cv__check_done(check_t *c, const char *status, const char *reason, const char *action,
                    const char *pass);
void cv__check_fail(check_t *c, const char *status, const char *action, const char *reason);
void cv__check_release_and_end(check_t *c);
/* A transient failure: the whole job again after a backoff. */
void cv__check_backoff(check_t *c);

/* Nested stacks (engine_nested.c). cv__nested_plan adds the child-stack
 * traversal that a nested version's action needs ("CREATE", "UPDATE" or
 * "DELETE"; `data` is the version's private data, where the begun traversal
 * is noted); cv__check_record then begins them all before recording. */
int cv__nested_plan(check_t *c, const char *op, const char *child, const char *type_name,
                    const json_t *props, json_t *data, const char *token, char *err, size_t errsz);
void cv__nested_begin(check_t *c, const char *status, const char *action, const char *reason);
/* What a child stack is made from, as 16 hex digits in `out` (≥ 17 bytes):
 * a change means the child needs an update. */
void cv__nested_digest(const json_t *tpl, const json_t *files, char *out);

/* Decisions (engine_converge.c). */
void cv__converge_update_node(check_t *c);
void cv__converge_cleanup_node(check_t *c);

#endif
