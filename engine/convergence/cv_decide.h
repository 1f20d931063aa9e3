/*
 * cv_decide — what a CHECK job does to its graph node, and what an OBSERVE
 * job concludes from a look, as pure functions.
 *
 * The jobs' step machines (cv_checkjob.h, cv_observejob.h) load under the lease, call these, and
 * carry the outcome out in a straight line: they run the type's create / update / remove, begin
 * child stacks, write the record, hand off to the observers, or mark the node done or failed.
 * Nothing here does I/O or reads the clock (time is an input), so the same decisions run unchanged
 * in the unit tests and the scenario harness.
 *
 * CHECK, update node (the resource is in this traversal's definition):
 *   load error, no stored definition, unknown type       FAIL
 *   action already recorded for this traversal             OBSERVE_AGAIN, or END
 *                                                          when it failed
 *   an older traversal's create or update still in flight  WAIT (Heat's retrigger:
 *   (not in a stack delete or cancel, which never wait)    watch it end, check again)
 *   properties do not resolve or fit the schema            FAIL
 *   no record                                              CREATE
 *   rollback, and a replaced version that is not failed    RESTORE (it becomes the
 *   nor being deleted has the desired type and properties  resource again, untouched)
 *   recorded version failed, being deleted, or of another  REPLACE
 *   implementation (Heat's class: a built-in type; every
 *   template file is one, its child stack updated instead)
 *   type the template wrote changed, same implementation   UPDATE (unless the type
 *                                                          never updates)
 *   properties, nested template and child environment      DONE
 *   unchanged (a child recorded without "env_digest" is
 *   taken as unchanged in its environment), or a type
 *   that never updates (OS::Heat::None, as in Heat)
 *   changed, a changed property does not allow updates    REPLACE
 *   changed otherwise                                      UPDATE
 *   external_id (Heat's adoption): no record               CREATE, action ADOPT
 *     recorded with the same external_id                   as unchanged (WAIT/DONE)
 *     external_id added, removed or changed                FAIL (Heat's NotSupported)
 *   UPDATE or REPLACE that the environment restricts       FAIL, without a status:
 *   (the definition's restrict_update, restrict_replace)   the record is left as it is
 * CHECK, cleanup node (the resource had a record when the traversal began):
 *   load error, recorded type unknown                      FAIL
 *   no record                                              NOTHING
 *   an older traversal's create or update still in flight  WAIT
 *   (not in a stack delete or cancel, which cancel it)
 *   a replaced version's type is unknown                   FAIL
 *   resource left the definition, current not deleting     DELETE_CURRENT, or
 *                                                          RETAIN_CURRENT (Retain)
 *   replaced versions to delete or retain                  DELETE_REPLACED
 *   only deletes already running                           OBSERVE_DELETES
 *   nothing left to remove                                 NOTHING
 * A cleanup node with a record plans the replaced versions first: one
 * being deleted already is kept to be observed, a retained one leaves the
 * stack, every other one is deleted (`deletes`). DELETE_CURRENT and
 * DELETE_REPLACED start those deletes; RETAIN_CURRENT records only their
 * events, as the record goes (what the engine always did).
 *
 * OBSERVE (cv_observe_decide, before looking and after):
 *   cleanup node, record deleted already                   REDELIVERED_DELETED
 *   cleanup node, version handed over                      LOOK_CLEANUP
 *   watch (WAIT): the older action still in flight         LOOK_WATCH
 *   watch: the older action settled, moved on or gone      RECHECK (its node's
 *                                                          CHECK job again)
 *   version moved on, or its outcome recorded failed       STALE_END
 *   otherwise                                              LOOK
 *   a look: a failure (or an unknown type)                 FAILED
 *           something in progress                          WAIT
 *           all settled                                    COMPLETE
 *   a watch's look: in progress                            WAIT
 *           complete or failed: recorded as the older      SETTLED_OLDER
 *           traversal's outcome (never failing this one),
 *           then RECHECK
 */
#ifndef CV_DECIDE_H
#define CV_DECIDE_H

#include "cv_calls.h"
#include "cv_contract.h"
#include "cv_rdef.h"
#include "cv_record.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Longest pause between two looks at a resource that is in progress. */
#define CV_MAX_LOOK_INTERVAL_MS 5000
/* Longest pause between two looks of a watch (an older action in flight). */
#define CV_WATCH_LOOK_INTERVAL_MS 1000

/* ---- CHECK ---- */

#define CV_CHECK_KIND_MAP(XX)                                                                      \
    XX(CREATE)          /* run type->create on a new version, record it, observe */                \
    XX(UPDATE)          /* run type->update on the recorded version, record, observe */            \
    XX(REPLACE)         /* as CREATE; the recorded version joins `old` for cleanup */              \
    XX(WAIT)            /* an older traversal's action is in flight: watch it, then recheck */     \
    XX(RESTORE)         /* rollback: a replaced version becomes current again, untouched */        \
    XX(STEP)            /* a walk's next step: the child's next traversal, record, observe */      \
    XX(OBSERVE_AGAIN)   /* this traversal's action is recorded (a redelivery): observe */          \
    XX(DONE)            /* unchanged and complete: node done, `pass` to the successors */          \
    XX(END)             /* this traversal's action is recorded failed: nothing to do */            \
    XX(FAIL)            /* node failed: status, action, reason */                                  \
    XX(DELETE_CURRENT)  /* run type->remove on the current version, record, observe */             \
    XX(RETAIN_CURRENT)  /* Retain: node done with status DELETED, nothing removed */               \
    XX(DELETE_REPLACED) /* record only the replaced versions' deletes started, observe */          \
    XX(OBSERVE_DELETES) /* only deletes already running: observe them */                           \
    XX(NOTHING)         /* node done, nothing to remove */

typedef enum {
#define CV_CHECK_KIND_ENUM(name) CV_CHECK_##name,
    CV_CHECK_KIND_MAP(CV_CHECK_KIND_ENUM)
#undef CV_CHECK_KIND_ENUM
} cv_check_kind_t;

typedef struct cv_check_input {
    const cv_msg_t *job;    /* stack, resource, phase, traversal */
    const cv_record_t *rec; /* as loaded under the lease */
    const cv_rdef_t *rdef;  /* this traversal's definition of the resource; NULL none */
    const json_t *params;   /* resolved parameters (pseudo ones added); NULL: not JSON */
    const json_t *sp;       /* sync point: predecessor node -> {"id", "attrs"} */
    const json_t *files;    /* the stack's template files; NULL unless nested */
    double now;             /* Unix seconds: when replaced versions' deletes start */
    const char *load_error; /* non-NULL: what could not be loaded; the outcome is FAIL */
    /* The traversal's kind (CREATE, UPDATE, DELETE, ROLLBACK; CANCEL: the
     * rollback of a cancel); NULL counts as "". */
    const char *stack_action;
} cv_check_input_t;

/* Every string is "" when it does not apply; every json_t is owned, NULL
 * when it does not apply. */
typedef struct cv_check_outcome {
    cv_check_kind_t kind;
    /* The type that acts on the version (desired type for update nodes,
     * recorded type for cleanup); NULL when none is known. */
    const cv_rtype_t *type;
    char type_name[CV_NAME_MAX]; /* that implements it: a registered type or a template file */
    /* The type the template wrote (the definition's "declared_type", or
     * type_name when the registry did not map it; the recorded one for
     * cleanup): what the record and its events report, as Heat reports it. */
    char declared_type[CV_NAME_MAX];
    /* What the record (or node_done / node_failed) is to say: CREATE_IN_PROGRESS,
     * UPDATE_IN_PROGRESS, DELETE_IN_PROGRESS, "" (DELETE_REPLACED: the current
     * version is left as it is), DELETED (RETAIN_CURRENT), <ACTION>_FAILED (FAIL). */
    char status[32]; /* FAIL: "" when the record keeps its status (a restricted action) */
    char action[16]; /* CREATE, UPDATE, DELETE; DONE: the recorded action */
    char reason[CV_REASON_MAX + CV_NAME_MAX + 32]; /* FAIL: names the resource */
    char uuid[48];    /* the version acted on (CREATE, REPLACE: a new one) */
    char version[24]; /* WAIT, OBSERVE_AGAIN, OBSERVE_DELETES: the record version to observe */
    json_t *restored; /* RESTORE: the replaced version that becomes current again */
    json_t *props;    /* update nodes: desired properties, resolved, schema applied */
    char external_id[CV_PHYSID_MAX]; /* CREATE (action ADOPT): the physical id adopted */
    json_t *old;                     /* replaced versions to record; NULL keeps */
    json_t *events;                  /* extra events to record; NULL none */
    /* Cleanup: indexes into `old` of the replaced versions whose delete the
     * handler starts (type->remove on the entry, its data written back,
     * a child-stack delete for a nested type). They are DELETE_IN_PROGRESS
     * with `started` = now in `old` already, and their events are in `events`. */
    json_t *deletes;
    char *pass; /* DONE, RETAIN_CURRENT, NOTHING: JSON passed to the successors */
    /* A nested-stack type: the action's child-stack traversal (child_op
     * CREATE, UPDATE or DELETE) is begun before recording, with child_token
     * so that a redelivery begins nothing new. */
    bool nested;
    char child_op[8];
    char child_token[96];
    /* A nested type: what the child's resource_facade reads, {"metadata",
     * "deletion_policy", "update_policy"} resolved; put into the version's
     * data ("facade") for the type's definition. NULL for other types. */
    json_t *facade;
    /* STEP of an action an older traversal began (this job's traversal
     * waits for it): the write keeps the record's traversal, and the
     * observation that follows is a watch of that action. */
    bool older;
} cv_check_outcome_t;

/* Decides what a CHECK job does. Always fills `out` (clear it with
 * cv_check_outcome_clear); never fails: what cannot be done is FAIL. */
void cv_check_decide(const cv_check_input_t *in, cv_check_outcome_t *out);
void cv_check_outcome_clear(cv_check_outcome_t *out);
const char *cv_check_kind_name(cv_check_kind_t kind);

/* The child-stack token of a replaced version's delete (`entry_uuid` is the
 * replaced version's uuid, `record_version` the record version decided on). */
void cv_check_replaced_token(char *out, size_t size, const char *entry_uuid,
                             const char *record_version);

/* What a child stack is made from, as 16 hex digits in `out` (>= 17 bytes):
 * recorded in a nested version's data ("template_digest"), a change means
 * the child needs an update even when the properties did not change. */
void cv_check_template_digest(const json_t *tpl, const json_t *files, char *out);

/* The child stack's environment (the nested resource's definition's env, Heat's
 * child environment: parameter_defaults, resource_registry), as 16 hex
 * digits in `out` (>= 17 bytes); NULL is no environment. Recorded beside
 * the template digest ("env_digest"): a change means the child needs an
 * update. Kept apart from the template digest so that the digests of
 * children recorded before it are unchanged. */
void cv_check_env_digest(const json_t *env, char *out);

/* ---- OBSERVE ---- */

#define CV_OBSERVE_KIND_MAP(XX)                                                                    \
    XX(STALE_END)           /* a newer action owns the resource, or it failed: end */              \
    XX(REDELIVERED_DELETED) /* cleanup of a record already deleted: node done again */             \
    XX(LOOK)                /* look at the current version, then decide again */                   \
    XX(LOOK_CLEANUP)        /* look at every version being deleted, then decide again */           \
    XX(LOOK_WATCH)          /* watch: look at the older action in flight, then decide again */     \
    XX(RECHECK)             /* watch: the older action settled: its node's CHECK job again */      \
    XX(SETTLED_OLDER)       /* watch: record the older outcome (status), then RECHECK */           \
    XX(WAIT)                /* something is in progress: look again after delay_ms */              \
    XX(STEP)                /* a walk's next step is due: the node's CHECK job (step) again */     \
    XX(FAILED)              /* node failed: status, reason */                                      \
    XX(COMPLETE)            /* node done with the node_done fields */

typedef enum {
#define CV_OBSERVE_KIND_ENUM(name) CV_OBSERVE_##name,
    CV_OBSERVE_KIND_MAP(CV_OBSERVE_KIND_ENUM)
#undef CV_OBSERVE_KIND_ENUM
} cv_observe_kind_t;

/* What the type answered when asked to observe one version
 * (type->observe on the state cv_record_state built). */
typedef struct cv_look {
    cv_observed_t observed;
    double retry_at;     /* IN_PROGRESS: when to look again (Unix seconds) */
    const char *reason;  /* FAILED: the type's reason; NULL or "" for none */
    const json_t *attrs; /* the state after observing (update node: recorded) */
    const json_t *data;
} cv_look_t;

/* The looks a LOOK or LOOK_CLEANUP asked for: the current version, and for
 * a cleanup node one per entry of rec->old, in order. A version the
 * handler did not look at (cv_observe_wants_look false, or its type
 * unknown) may be left zeroed: the decision ignores it. */
typedef struct cv_observe_looks {
    cv_look_t current;
    const cv_look_t *old;
    size_t nold;
} cv_observe_looks_t;

typedef struct cv_observe_outcome {
    cv_observe_kind_t kind;
    unsigned delay_ms; /* WAIT: in [1, CV_MAX_LOOK_INTERVAL_MS] */
    char version[24];  /* the record version node_done / node_failed is fenced by; "" any */
    char status[48];   /* FAILED: <ACTION>_FAILED; COMPLETE: <ACTION>_COMPLETE, DELETED, "" */
    char action[16];
    char reason[CV_REASON_MAX]; /* FAILED: names the resource */
    /* COMPLETE, REDELIVERED_DELETED: node_done's JSON texts ("" keeps / none); owned. */
    char *attrs, *data, *pass, *old, *events;
} cv_observe_outcome_t;

/* Whether the record's current version has a create, update or adoption
 * under way: what a newer traversal waits for (WAIT) and a watch looks at. */
bool cv_action_in_flight(const cv_record_t *rec);

/* Whether the observer asks the type about a version with `status`: the
 * current version of an update node or of a watch always; for a cleanup
 * node only the versions being deleted (DELETE_IN_PROGRESS). */
bool cv_observe_wants_look(const cv_msg_t *job, const char *status);

/* The action the type observes: the recorded one for an update node or a
 * watch, DELETE for a cleanup node. */
cv_action_t cv_observe_action(const cv_msg_t *job, const cv_record_t *rec);

/* With looks NULL (just loaded): STALE_END, REDELIVERED_DELETED, LOOK,
 * LOOK_CLEANUP, LOOK_WATCH or RECHECK. With the looks those asked for: WAIT,
 * FAILED or COMPLETE; for a watch WAIT or SETTLED_OLDER.
 * `now` is when the looks were taken (Unix seconds). Always fills `out`
 * (clear it with cv_observe_outcome_clear). */
void cv_observe_decide(const cv_msg_t *job, const cv_record_t *rec, const cv_observe_looks_t *looks,
                       double now, cv_observe_outcome_t *out);
void cv_observe_outcome_clear(cv_observe_outcome_t *out);
const char *cv_observe_kind_name(cv_observe_kind_t kind);

/* What settles the node of an OBSERVE outcome: node_done.lua's fields for
 * COMPLETE and REDELIVERED_DELETED (never publishing: a redelivered OBSERVE
 * job publishes again), node_failed.lua's for FAILED; `graph_entry` and
 * `physical_id` as loaded. Strings are borrowed from the arguments. */
cv_node_done_t cv_observe_done_of(const cv_msg_t *job, const cv_observe_outcome_t *out,
                                  const char *graph_entry, const char *physical_id);
cv_node_failed_t cv_observe_failed_of(const cv_msg_t *job, const cv_observe_outcome_t *out,
                                      const char *physical_id);

/* A watch's SETTLED_OLDER is recorded as the older traversal's own outcome
 * (node u/<resource> of traversal rec->traversal, which is superseded: the
 * write records the resource and fails or completes nothing else). */
cv_msg_t cv_observe_older_job(const cv_msg_t *job, const cv_record_t *rec);

/* The CHECK job a RECHECK publishes: the watch's own node again. */
cv_msg_t cv_observe_recheck_job(const cv_msg_t *job);

/* The CHECK job a STEP publishes: the node's own CHECK job (the job's
 * traversal, update phase) carrying the record version the step was seen
 * to end at, which the engine's STEP decision requires unchanged. */
cv_msg_t cv_observe_step_job(const cv_msg_t *job, const cv_record_t *rec);

#endif
