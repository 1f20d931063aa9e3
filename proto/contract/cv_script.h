/*
 * cv_script — what the C side knows about each Redis script, generated from
 * one table (cv_script.def; Redis's commands.def is the model).
 *
 * Per script: its id (cv_script_t), name (the file proto/lua/<name>.lua),
 * key and argument counts, and two types a caller fills by name:
 *
 *     cv_check_begin_keys_t k = {.stack = sk, .res = rk, ...};
 *     cv_check_begin_args_t a = {.traversal = t, .node = n, ...};
 *     cv_redis_call(r, CV_SCRIPT_CHECK_BEGIN, k.v, a.v, 0, NULL, NULL, cb, ud);
 *
 * A field left out is NULL, which the callers (cv_redis) send as "". The
 * answers a script gives are one enum, cv_answer_t, and a reply's elements
 * have names: CV_CHECK_BEGIN_R_GRAPH_ENTRY, so no caller reads a position
 * by number. Pure: no I/O, no hiredis (cv_redis reads replies with this).
 */
#ifndef CV_SCRIPT_H
#define CV_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "cv_script.def"

typedef enum {
#define CV__SCRIPT_ENUM(name, NAME, shape, variadic) CV_SCRIPT_##NAME,
    CV_SCRIPT_TABLE(CV__SCRIPT_ENUM)
#undef CV__SCRIPT_ENUM
        CV_SCRIPT__COUNT
} cv_script_t;

/* How a script's reply reads (the row's shape). */
typedef enum {
    CV_SCRIPT_ANSWERS, /* {'WORD', ...}: the first element is an answer word */
    CV_SCRIPT_VALUE,   /* the script's value; maybe one of its answer words */
} cv_script_shape_t;

typedef enum {
#define CV__ANSWER_ENUM(WORD) CV_ANSWER_##WORD,
    CV_ANSWER_LIST(CV__ANSWER_ENUM)
#undef CV__ANSWER_ENUM
    /* A value-shaped script answered its value (cv_reply_answer only). */
    CV_ANSWER_VALUE,
    /* Not an answer of this script: an error reply, a lost connection, a
     * word of another script. Never acted upon as an answer. */
    CV_ANSWER_INVALID,
} cv_answer_t;

/* Counts: CV_<NAME>_NKEYS, CV_<NAME>_NARGS (the fixed part, for variadic rows). */
#define CV__SCRIPT_ONE(field) +1
#define CV__SCRIPT_COUNTS(name, NAME, shape, variadic)                                             \
    enum {                                                                                         \
        CV_##NAME##_NKEYS = 0 CV_##NAME##_KEYS(CV__SCRIPT_ONE),                                    \
        CV_##NAME##_NARGS = 0 CV_##NAME##_ARGS(CV__SCRIPT_ONE)                                     \
    };
CV_SCRIPT_TABLE(CV__SCRIPT_COUNTS)
#undef CV__SCRIPT_COUNTS

/*
 * cv_<name>_keys_t and cv_<name>_args_t: the fields in the script's order,
 * overlaid on v[], which is what is passed on. v[N] is always NULL (the
 * `nil` field): an end mark, and what gives a row without arguments a type.
 */
#define CV__SCRIPT_FIELD(field) const char *field;
#define CV__SCRIPT_TYPES(name, NAME, shape, variadic)                                              \
    typedef union {                                                                                \
        struct {                                                                                   \
            CV_##NAME##_KEYS(CV__SCRIPT_FIELD) const char *nil;                                    \
        };                                                                                         \
        const char *v[CV_##NAME##_NKEYS + 1];                                                      \
    } cv_##name##_keys_t;                                                                          \
    _Static_assert(sizeof(cv_##name##_keys_t) == sizeof(const char * [CV_##NAME##_NKEYS + 1]),     \
                   "the keys of " #name " are pointers only");                                     \
    typedef union {                                                                                \
        struct {                                                                                   \
            CV_##NAME##_ARGS(CV__SCRIPT_FIELD) const char *nil;                                    \
        };                                                                                         \
        const char *v[CV_##NAME##_NARGS + 1];                                                      \
    } cv_##name##_args_t;                                                                          \
    _Static_assert(sizeof(cv_##name##_args_t) == sizeof(const char * [CV_##NAME##_NARGS + 1]),     \
                   "the arguments of " #name " are pointers only");
CV_SCRIPT_TABLE(CV__SCRIPT_TYPES)
#undef CV__SCRIPT_TYPES
#undef CV__SCRIPT_FIELD

/* Reply positions: each row's R(POS, i) becomes CV_<NAME>_R_<POS> = i. (The
 * preprocessor cannot hand the row's NAME to R, hence one R per row; a row
 * added without one does not compile.) */
#define CV__SCRIPT_R_ROW(name, NAME, shape, variadic)                                              \
    enum cv__##name##_reply{CV_##NAME##_REPLY(CV__R_##NAME) CV__##NAME##_R_END};

#define CV__R_STACK_BEGIN(P, i) CV_STACK_BEGIN_R_##P = i,
#define CV__R_STACK_EXPANDED(P, i) CV_STACK_EXPANDED_R_##P = i,
#define CV__R_CHECK_BEGIN(P, i) CV_CHECK_BEGIN_R_##P = i,
#define CV__R_CHECK_FINISH(P, i) CV_CHECK_FINISH_R_##P = i,
#define CV__R_CHECK_DONE(P, i) CV_CHECK_DONE_R_##P = i,
#define CV__R_CHECK_DONE_MANY(P, i) CV_CHECK_DONE_MANY_R_##P = i,
#define CV__R_LEASE_RELEASE(P, i) CV_LEASE_RELEASE_R_##P = i,
#define CV__R_OBSERVE_LOAD(P, i) CV_OBSERVE_LOAD_R_##P = i,
#define CV__R_NODE_DONE(P, i) CV_NODE_DONE_R_##P = i,
#define CV__R_NODE_FAILED(P, i) CV_NODE_FAILED_R_##P = i,
#define CV__R_STACK_FINISH(P, i) CV_STACK_FINISH_R_##P = i,
#define CV__R_STACK_DEFINITION(P, i) CV_STACK_DEFINITION_R_##P = i,
#define CV__R_RESOURCE_REF(P, i) CV_RESOURCE_REF_R_##P = i,
#define CV__R_LEASE_RENEW(P, i) CV_LEASE_RENEW_R_##P = i,
#define CV__R_STACK_TOUCH(P, i) CV_STACK_TOUCH_R_##P = i,
#define CV__R_STACK_REAP(P, i) CV_STACK_REAP_R_##P = i,
#define CV__R_STACK_REAP_NODES(P, i) CV_STACK_REAP_NODES_R_##P = i,
#define CV__R_RESOURCE_MARK(P, i) CV_RESOURCE_MARK_R_##P = i,
#define CV__R_SIGNAL_SEND(P, i) CV_SIGNAL_SEND_R_##P = i,
#define CV__R_SIGNAL_BEGIN(P, i) CV_SIGNAL_BEGIN_R_##P = i,
#define CV__R_SIGNAL_FINISH(P, i) CV_SIGNAL_FINISH_R_##P = i,
#define CV__R_SIGNAL_WATCH(P, i) CV_SIGNAL_WATCH_R_##P = i,
#define CV__R_HOOK_WAIT(P, i) CV_HOOK_WAIT_R_##P = i,
#define CV__R_HOOK_CLEAR(P, i) CV_HOOK_CLEAR_R_##P = i,
#define CV__R_SIGNAL_FORWARD(P, i) CV_SIGNAL_FORWARD_R_##P = i,
#define CV__R_SVC_COMMIT(P, i) CV_SVC_COMMIT_R_##P = i,
#define CV__R_SVC_PUT(P, i) CV_SVC_PUT_R_##P = i,
#define CV__R_SVC_LOOK(P, i) CV_SVC_LOOK_R_##P = i,
#define CV__R_CRM_LEASE(P, i) CV_CRM_LEASE_R_##P = i,
#define CV__R_SVC_MOVE(P, i) CV_SVC_MOVE_R_##P = i,
#define CV__R_ROLLOUT_CTL(P, i) CV_ROLLOUT_CTL_R_##P = i,
#define CV__R_TRAVERSAL_SWEEP(P, i) CV_TRAVERSAL_SWEEP_R_##P = i,
#define CV__R_STACK_PURGE(P, i) CV_STACK_PURGE_R_##P = i,
CV_SCRIPT_TABLE(CV__SCRIPT_R_ROW)
#undef CV__SCRIPT_R_ROW

/* node_done: successor k's three elements, in the order of its sync point
 * key in the variadic tail. */
typedef enum {
    CV_NODE_DONE_SUCC_ADDED,   /* 1: this call added the node to successor k's set */
    CV_NODE_DONE_SUCC_SIZE,    /* the size of that set now */
    CV_NODE_DONE_SUCC_IS_DONE, /* 1: successor k is done itself */
} cv_node_done_succ_t;
#define CV_NODE_DONE_R_SUCC(k, what)                                                               \
    (CV_NODE_DONE_R_FIRST_SUCCESSOR + CV_NODE_DONE_R_SUCCESSOR_STRIDE * (k) + (what))
/* check_done answers as node_done does: one reader serves both. */
_Static_assert((int)CV_CHECK_DONE_R_ADDED == (int)CV_NODE_DONE_R_ADDED &&
                   (int)CV_CHECK_DONE_R_DONE == (int)CV_NODE_DONE_R_DONE &&
                   (int)CV_CHECK_DONE_R_TOTAL == (int)CV_NODE_DONE_R_TOTAL &&
                   (int)CV_CHECK_DONE_R_FIRST_SUCCESSOR == (int)CV_NODE_DONE_R_FIRST_SUCCESSOR &&
                   (int)CV_CHECK_DONE_R_SUCCESSOR_STRIDE == (int)CV_NODE_DONE_R_SUCCESSOR_STRIDE,
               "check_done's reply is node_done's");

/* stack_reap_nodes: node j's three elements: "CHECK" or "OBSERVE", the node,
 * and (OBSERVE) the record version its action wrote. */
typedef enum {
    CV_STACK_REAP_NODES_N_KIND,
    CV_STACK_REAP_NODES_N_NODE,
    CV_STACK_REAP_NODES_N_VERSION,
} cv_stack_reap_node_t;
#define CV_STACK_REAP_NODES_R_NODE(j, what)                                                        \
    (CV_STACK_REAP_NODES_R_FIRST_NODE + CV_STACK_REAP_NODES_R_NODE_STRIDE * (j) + (what))

/* The file proto/lua/<name>.lua holds the script. */
const char *cv_script_name(cv_script_t s);
size_t cv_script_nkeys(cv_script_t s); /* the fixed part of a variadic row */
size_t cv_script_nargs(cv_script_t s);
bool cv_script_variadic(cv_script_t s);
cv_script_shape_t cv_script_shape(cv_script_t s);
/* The name of key / argument i (0-based) of the row; NULL past the end. */
const char *cv_script_key_name(cv_script_t s, size_t i);
const char *cv_script_arg_name(cv_script_t s, size_t i);
/* The row's answers, ended by CV_ANSWER_INVALID. */
const cv_answer_t *cv_script_answers(cv_script_t s);

/* "OK", "FENCED", ...; "VALUE", "INVALID". */
const char *cv_answer_name(cv_answer_t a);

/* The answer `first_element` of a reply of script s means: INVALID for
 * NULL and for any word not in s's row. */
cv_answer_t cv_script_answer(cv_script_t s, const char *first_element);

/* ---- stack_begin's arguments: one builder for the CLI and the workers ---- */

/* A traversal to begin (stack_begin.lua). Strings left NULL count as "":
 * keep what is stored, none. */
typedef struct cv_stack_begin {
    int kind;          /* cv_trav_kind_t */
    const char *stack; /* id */
    const char *name;  /* CREATE */
    const char *tpl, *params, *files, *fname;
    const char *env;      /* the stack's environment (JSON); CREATE, UPDATE */
    const char *parent;   /* CREATE of a nested stack: {"stack","resource","depth"} */
    const char *token;    /* a repeat with the same token begins nothing new */
    const char *rollback; /* "1", "0"; NULL or "" keeps the stack's setting */
    /* A re-run of a traversal that found records made behind its back:
     * stack_begin keeps counting re-runs (the stack's `reruns`) instead of
     * starting the count again. The workers' re-runs are begun by
     * stack_finish.lua itself (AGAIN); no caller sets this today. */
    bool rerun;
    /* ROLLBACK of `convergectl cancel`: like a delete, the traversal does not
     * wait for the cancelled update's actions in flight (Heat's cancel). */
    bool cancel;
    /* Continuous convergence of the stack's services ("1", "0"; NULL or ""
     * keeps the stack's setting; a CREATE without it is "1"). */
    const char *drift;
    /* UPDATE: "1" makes its services' updates go one upgrade domain at a
     * time (`convergectl upgrade`), "0" not; NULL or "" keeps the setting. */
    const char *upgrade;
} cv_stack_begin_t;

/* Fills the arguments of stack_begin for b, begun by `client` (a worker id,
 * "convergectl"). The strings are b's and the kind's name: a lives as long
 * as they do. */
void cv_script_stack_begin_args(cv_stack_begin_args_t *a, const cv_stack_begin_t *b,
                                const char *client);

#endif
