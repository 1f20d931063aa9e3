/*
 * cv_checkjob — the steps of a CHECK job that do no I/O, shared by the
 * engine (engine/converge-engine/engine_check.c) and the scenario harness (tests/scenario):
 * reading what check_begin.lua loaded under the lease, running the type
 * operations the decision (cv_decide.h) names, and the fields of the
 * check_finish.lua write that records them. Keeping them here means the
 * harness drives the engine's own steps, not a copy of them.
 */
#ifndef CV_CHECKJOB_H
#define CV_CHECKJOB_H

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cv_calls.h"
#include "cv_decide.h"
#include "cv_contract.h"
#include "cv_record.h"
#include "cv_hot.h"

/* What check_begin.lua loaded under the lease (its OK reply), parsed. */
typedef struct cv_check_loaded {
    json_t *rdef; /* {"type", "properties", "deletion_policy", "metadata", "depends"}; NULL none */
    json_t *params; /* resolved parameters, pseudo parameters added; NULL: not JSON */
    json_t *sp;     /* sync point: predecessor node -> {"id", "attrs"} */
    json_t *files;  /* the stack's template files; NULL unless the resource is nested */
    char *graph_entry;
    cv_record_t rec;
    char stack_name[CV_NAME_MAX];
    int depth;             /* the stack's nesting depth */
    char stack_action[16]; /* the traversal's kind: CREATE ... ROLLBACK, or CANCEL */
} cv_check_loaded_t;

/* Parses check_begin's OK reply for `job` into *l (which then owns what it
 * holds: cv_check_loaded_clear). Returns 0, CV_EPROTO when the reply
 * does not have the OK shape (l is then left empty), or CV_EIO when a
 * sealed value cannot be opened (cv_seal.h; l holds what was parsed). */
int cv_check_load(cv_check_loaded_t *l, const cv_msg_t *job, const redisReply *rep);
void cv_check_loaded_clear(cv_check_loaded_t *l);

/* The decision input over what was loaded (`load_error`: what could not be). */
cv_check_input_t cv_check_input(const cv_check_loaded_t *l, const cv_msg_t *job, double now,
                                const char *load_error);

/*
 * Plans the child-stack traversal of a nested version (engine_nested.c):
 * `op` CREATE, UPDATE or DELETE of stack `child`, from `props` of type
 * `type_name`, noting what it begins in `data`. Returns 0 or non-zero with
 * the reason in err.
 */
typedef int (*cv_check_plan_fn)(void *ud, const char *op, const char *child, const char *type_name,
                                const json_t *props, json_t *data, const char *token, char *err,
                                size_t errsz);

/*
 * Runs the type operations the outcome names: the deletes of the replaced
 * versions it lists (each entry of out->old gets the type's data back),
 * then create / update / remove of the version acted on, into *st (which
 * the caller clears with cv_record_state_clear). Every nested version's
 * child stack is planned through `plan` (NULL: the caller has no nested
 * types). Returns 0, or non-zero with the type's reason in st->reason.
 */
int cv_check_act(const cv_msg_t *job, const cv_record_t *rec, cv_check_outcome_t *out, double now,
                 cv_rstate_t *st, cv_check_plan_fn plan, void *ud);

/* Turns an outcome whose type operation failed (`why`, the type's reason)
 * into FAIL: <ACTION>_FAILED, with a reason naming the resource. */
void cv_check_act_failed(cv_check_outcome_t *out, const cv_msg_t *job, const char *why);

/* The JSON texts a check_finish write carries; cv_check_written_clear frees them. */
typedef struct cv_check_written {
    char *props, *attrs, *data, *dependencies, *old, *events;
    char started[32];   /* RESTORE: the restored version's start time; STEP: the action's */
    char traversal[24]; /* STEP of an older traversal's action: that traversal */
} cv_check_written_t;

/*
 * The check_finish.lua fields that record an outcome carried out: the
 * version acted on (`st` after cv_check_act; NULL when no type operation
 * ran) under the lease `token`, fenced by the loaded record's version.
 * Strings are borrowed from l, out, st and `w` (filled here).
 */
void cv_check_finish_of(cv_check_finish_t *f, cv_check_written_t *w, const cv_msg_t *job,
                        const cv_check_loaded_t *l, const cv_check_outcome_t *out,
                        const cv_rstate_t *st, const char *token);
void cv_check_written_clear(cv_check_written_t *w);

/*
 * Whether the action just carried out settled at once: the observer's own
 * decision (cv_observe_decide), on the record as the write of `out` would
 * leave it and on the type's look at it now, is COMPLETE. Then *obs holds
 * that outcome (clear it with cv_observe_outcome_clear) and the engine
 * records the action and the node done in one step (check_done.lua,
 * cv_call_check_done with cv_observe_done_of) instead of handing the
 * version to the observers: OS::Heat::None, Value, RandomString and the
 * like cost one job instead of two. Only the CREATE, UPDATE or REPLACE of
 * an update node (not a watch, not an adoption), by a type whose look needs
 * nothing read first (no child stack, watched resource or cluster state);
 * `st` is the state cv_check_act left. Otherwise false, *obs empty.
 */
bool cv_check_settled(const cv_msg_t *job, const cv_check_loaded_t *l,
                      const cv_check_outcome_t *out, const cv_rstate_t *st, double now,
                      cv_observe_outcome_t *obs);

/*
 * The node_done.lua fields of an outcome that ends the node without an
 * action to watch (DONE, RETAIN_CURRENT, NOTHING), fenced by the loaded
 * record's version, releasing the lease `token`, publishing (an engine has
 * no other job that would publish the successors should it die). Strings
 * are borrowed from l, out and `w` (filled here: old, events).
 */
void cv_check_done_of(cv_node_done_t *d, cv_check_written_t *w, const cv_msg_t *job,
                      const cv_check_loaded_t *l, const cv_check_outcome_t *out, const char *token);

#endif
