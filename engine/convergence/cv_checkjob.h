/*
 * cv_checkjob — a CHECK job as a step machine: converge one graph node of
 * one traversal (cv_flow.h says how a step machine is driven).
 *
 * Under the resource's lease (check_begin.lua also loads the definition,
 * parameters, record, sync point and graph entry) cv_check_decide says what
 * to do; the job carries it out in a straight line: hooks that stop the
 * action first (hook_wait.lua), the type's operation, child stacks begun
 * (a nested type) and services put into the cluster (Converge::Service),
 * then a fenced write of the action (check_finish.lua) and an OBSERVE job;
 * when the action settled at once, the write and the node done in one step
 * (check_done.lua) and the successors' CHECK jobs; or "done" / "failed"
 * through cv_progress. A lease that is held is released at the end. The
 * engine (engine/converge-engine) runs these answers on Redis and Kafka,
 * the scenario harness (tests/scenario) over its seeded bus: both drive the
 * same steps.
 *
 * Also the pieces of the job that the steps are made of, each without I/O:
 * reading what check_begin loaded, running the type operations the
 * decision (cv_decide.h) names, and the fields of the writes that record
 * them.
 */
#ifndef CV_CHECKJOB_H
#define CV_CHECKJOB_H

#include <jansson.h>

#include "cv_calls.h"
#include "cv_decide.h"
#include "cv_contract.h"
#include "cv_flow.h"
#include "cv_progress.h"
#include "cv_rdef.h"
#include "cv_record.h"
#include "cv_resp.h"
#include "cv_hot.h"

/* What check_begin.lua loaded under the lease (its OK reply), parsed. */
typedef struct cv_check_loaded {
    cv_rdef_t rdef; /* this traversal's definition; cv_rdef_defined false: none */
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
int cv_check_load(cv_check_loaded_t *l, const cv_msg_t *job, const cv_resp_t *rep);
void cv_check_loaded_clear(cv_check_loaded_t *l);

/* The decision input over what was loaded (`load_error`: what could not be). */
cv_check_input_t cv_check_input(const cv_check_loaded_t *l, const cv_msg_t *job, double now,
                                const char *load_error);

/*
 * Plans the child-stack traversal of a nested version (checkjob_nested.c):
 * `op` CREATE, UPDATE or DELETE of stack `child`, from `props` of type
 * `type_name`, noting what it begins in `data`. Returns 0 or non-zero with
 * the reason in errstr.
 */
typedef int (*cv_check_plan_fn)(void *ud, const char *op, const char *child, const char *type_name,
                                const json_t *props, json_t *data, const char *token, char *errstr,
                                size_t errstr_size);

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

/* ------------------------------------------------------------------------
 * The step machine
 * ------------------------------------------------------------------------ */

typedef struct cv_checkjob_conf {
    const char *worker;        /* the worker's id (the scripts' `worker`) */
    const char *token;         /* the lease's token: names its holder */
    unsigned lease_ms;         /* the lease's time */
    const cv_limits_t *limits; /* the worker's input limits (a child stack's) */
} cv_checkjob_conf_t;

/* What the job waits for. */
typedef enum {
    CV_CHECKJOB_BEGIN,     /* check_begin's reply: the lease and what the action needs */
    CV_CHECKJOB_HOOK,      /* hook_wait's reply */
    CV_CHECKJOB_CLUSTER,   /* the cluster's settings and nodes and the stack's upgrade field */
    CV_CHECKJOB_SVC_PUT,   /* svc_put's reply */
    CV_CHECKJOB_RECONCILE, /* the live engine's reconcile of a service */
    CV_CHECKJOB_RECORD,    /* check_finish's reply */
    CV_CHECKJOB_HANDOFF,   /* the OBSERVE job delivered */
    CV_CHECKJOB_PROGRESS,  /* cv_progress: node done or failed, a child stack begun */
    CV_CHECKJOB_RELEASE,   /* lease_release's reply */
} cv_checkjob_state_t;

typedef struct cv_checkjob {
    cv_checkjob_state_t state;
    int then; /* what follows the cv_progress under way (checkjob_flow.c) */
    cv_msg_t msg;
    char worker[CV_ID_MAX];
    char token[160];
    unsigned lease_ms;
    const cv_limits_t *limits;
    bool leased;          /* the lease is this job's: keep it renewed */
    cv_check_loaded_t in; /* loaded under the lease */
    double now;           /* when the decision was taken */
    cv_check_outcome_t out;
    cv_rstate_t st;             /* the version acted on, after the type's operation */
    json_t *children;           /* child-stack traversals to begin before recording */
    json_t *services;           /* Converge::Service puts and deletes to do before recording */
    cv_check_written_t written; /* the texts the last write carried */
    cv_observe_outcome_t seen;  /* an action that settled at once: the look */
    cv_progress_t progress;
    cv_flow_buf_t buf; /* the answer */
} cv_checkjob_t;

/* A job of CHECK message m (one node: cv_msg_next_node), nothing loaded.
 * Its first step takes check_begin's reply, however it was asked for
 * (cv_checkjob_start, or cv_call_check_begin_many for several jobs). */
void cv_checkjob_init(cv_checkjob_t *j, const cv_msg_t *m, const cv_checkjob_conf_t *conf);

/* check_begin, from nothing loaded. */
const cv_flow_t *cv_checkjob_start(cv_checkjob_t *j);

/* The next answer, given what the last one returned. */
const cv_flow_t *cv_checkjob_step(cv_checkjob_t *j, const cv_flow_in_t *in);

/* Drops what an attempt loaded and holds: the job is as cv_checkjob_init
 * left it (what it started is not undone: a lease runs out). */
void cv_checkjob_reset(cv_checkjob_t *j);

/* Whether the job holds its resource's lease now; its key and token. */
bool cv_checkjob_leased(const cv_checkjob_t *j);
void cv_checkjob_lease_key(const cv_checkjob_t *j, char *key, size_t size);
const char *cv_checkjob_token(const cv_checkjob_t *j);
const cv_msg_t *cv_checkjob_msg(const cv_checkjob_t *j);
cv_checkjob_state_t cv_checkjob_state(const cv_checkjob_t *j);
/* The decision taken (kind and action), once check_begin answered OK. */
const cv_check_outcome_t *cv_checkjob_outcome(const cv_checkjob_t *j);

/* Whether check_begin's reply `in` is of a nested resource's job, which
 * loads its stack's template files and builds its child's definition: a
 * worker may let only so many of those run at once (cv_gate). */
bool cv_checkjob_wants_place(const cv_checkjob_t *j, const cv_flow_in_t *in);

#endif
