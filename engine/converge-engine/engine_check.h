/*
 * Internal to the engine: the state of one CHECK job and the steps that
 * carry its decision (cv_check_decide) out — the job lifecycle and the
 * writes (engine_check.c), the type operations (cv_check_act), the child
 * stacks (engine_nested.c), the services in the cluster (engine_service.c).
 */
#ifndef CV_ENGINE_CHECK_H
#define CV_ENGINE_CHECK_H

#include "cv_convergence.h"
#include "cv_io.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdbool.h>

typedef struct check {
    cv_jobrun_t run; /* first: the job, its lifecycle and its retries */
    char node[CV_NAME_MAX + 2];
    char token[160];
    bool leased;
    cv_lease_keeper_t *keeper; /* renews the lease while it is held */
    cv_check_loaded_t in;      /* loaded under the lease */
    double now;                /* when the decision was taken */
    /* the decision, and what carrying it out produced */
    cv_check_outcome_t out;
    cv_rstate_t st;   /* the version acted on, after the type's operation */
    json_t *children; /* child-stack traversals to begin before recording */
    json_t *services; /* Converge::Service puts and deletes to do before recording */
    /* A nested resource's job loads its stack's template files and builds
     * its child's definition: a place among NESTED_MAX of its lane first. */
    cv_gate_waiter_t nested;
    /* An action that settled at once, kept while the other jobs of its
     * message are answered, to be recorded with theirs (engine_check.c). */
    struct {
        cv_check_finish_t f;
        cv_check_written_t written;
        cv_node_done_t d;
        cv_observe_outcome_t seen;
    } settled;
} check_t;

/* Carrying out the outcome; each ends the job exactly once. */
void cv__check_record(check_t *c);
void cv__check_fail(check_t *c, const char *status, const char *action, const char *reason);
/* A transient failure: the whole job again after a backoff. */
void cv__check_backoff(check_t *c);
/* Carries the decided outcome out; releases the lease and ends the job. */
void cv__check_carry_out(check_t *c);
void cv__check_release_and_end(check_t *c);

/* Hooks (engine_hooks.c): true when the outcome waits for hook_wait.lua,
 * which then has it carried out (every hook cleared) or ends the job (the
 * resource pauses until its hook is cleared). */
bool cv__hooks_pause(check_t *c);

/* Nested stacks (engine_nested.c). cv__nested_plan adds the child-stack
 * traversal that a nested version's action needs ("CREATE", "UPDATE" or
 * "DELETE"; `data` is the version's private data, where the begun traversal
 * is noted); cv__check_record then has cv__nested_begin begin them all and
 * record the outcome after. */
int cv__nested_plan(void *check, const char *op, const char *child, const char *type_name,
                    const json_t *props, json_t *data, const char *token, char *err, size_t errsz);
void cv__nested_begin(check_t *c);

/* Converge::Service (engine_service.c). cv__service_plan lists, after the
 * type operations, the services the action puts into the cluster or marks
 * deleting; cv__check_record then has cv__service_begin write and
 * reconcile them all and record the outcome after (or fail it: an
 * unknown metric). */
void cv__service_plan(check_t *c);
void cv__service_begin(check_t *c);

#endif
