/*
 * cv_calls — the arguments of the scripts that move a traversal, built in
 * one place.
 *
 * This module owns what node_done, node_failed, check_begin, check_finish
 * and stack_begin are called with: which keys (named by cv_keys) and which
 * arguments, in the order of their rows in proto/contract/cv_script.def. Builders are
 * pure (no I/O): the asynchronous workers send what they build with
 * cv_redis_call, and a synchronous test harness sends the very same call
 * with cv_redis_script_sync, so both drive the scripts identically.
 *
 *     cv_call_t call;
 *     if (cv_call_node_done(&call, &d, w->id) == 0) {
 *         cv_redis_call(w->redis, call.script, call.keys, call.args, call.nextra,
 *                       call.extra_keys, call.extra_args, cb, ud);
 *         cv_call_free(&call);
 *     }
 *
 * A call refers to the strings of its input (and holds copies of what it
 * formats): it is valid while they are, and until cv_call_free.
 */
#ifndef CV_CALLS_H
#define CV_CALLS_H

#include <stdbool.h>
#include <stddef.h>

#include "cv_contract.h"

#define CV_CALL_KEYS_MAX 9 /* the most fixed keys of a row built here */

typedef struct cv_call {
    cv_script_t script;
    const char *const *keys; /* cv_script_nkeys(script) of them */
    const char *const *args; /* cv_script_nargs(script) of them */
    size_t nextra;           /* variadic tail (node_done: the successors) */
    const char *const *extra_keys, *const *extra_args;
    /* node_done: successor i's number of predecessors; its node name is
     * extra_args[i]. */
    const size_t *successor_preds;

    /* Storage; read through the pointers above. */
    union {
        cv_node_done_keys_t node_done;
        cv_node_failed_keys_t node_failed;
        cv_check_begin_keys_t check_begin;
        cv_check_finish_keys_t check_finish;
        cv_check_done_keys_t check_done;
        cv_check_done_many_keys_t check_done_many;
        cv_stack_begin_keys_t stack_begin;
    } k;
    union {
        cv_node_done_args_t node_done;
        cv_node_failed_args_t node_failed;
        cv_check_begin_args_t check_begin;
        cv_check_finish_args_t check_finish;
        cv_check_done_args_t check_done;
        cv_check_done_many_args_t check_done_many;
        cv_stack_begin_args_t stack_begin;
    } a;
    char key[CV_CALL_KEYS_MAX][CV_KEY_MAX];
    char traversal[24], number[24], node[CV_NAME_MAX + 2];
    char reason[CV_REASON_MAX + CV_NAME_MAX + 64];
    void *tail; /* one allocation: the variadic tail */
} cv_call_t;

/* Frees what a builder allocated (the variadic tail); the call is then void. */
void cv_call_free(cv_call_t *call);

/* ---- node_done ---- */

/* Every string left NULL counts as "" (keep, none, any). */
typedef struct cv_node_done {
    const cv_msg_t *job;     /* stack, traversal, resource, phase */
    const char *graph_entry; /* the node's entry in the traversal graph (JSON) */
    const char *version;     /* expected record version; "" for any */
    const char *status;      /* new resource status; "" unchanged; "DELETED" removes */
    const char *attrs;       /* "" keeps */
    const char *data;        /* type-private data; "" keeps */
    const char *reason;
    const char *pass; /* JSON passed to successors: {"id":..,"attrs":{..}} */
    const char *physical_id;
    const char *action;      /* for the event: CREATE / DELETE / ... */
    const char *old;         /* replaced versions json; "" keeps */
    const char *events;      /* extra events json list; "" none */
    const char *lease_token; /* the caller's lease, released atomically; "" none */
    /* The caller has no job that would run this again should it die before
     * the successors' jobs are published (an engine: the CHECK job that
     * finds the node done must publish them). The node is in the traversal's
     * publishing set from the write until they are. */
    bool publishing;
} cv_node_done_t;

/* The successors come from d->graph_entry ("s": [[node, preds], ...]; none
 * when it is not JSON). Returns 0, or CV_ENOMEM (nothing to free). */
int cv_call_node_done(cv_call_t *call, const cv_node_done_t *d, const char *worker_id);

/* ---- node_failed ---- */

typedef struct cv_node_failed {
    const cv_msg_t *job;
    const char *version;
    const char *status; /* e.g. CREATE_FAILED */
    const char *reason; /* the resource's reason */
    const char *physical_id;
    const char *action;
} cv_node_failed_t;

/* The stack's reason is Heat's wording: "Resource <action> failed: <reason>". */
void cv_call_node_failed(cv_call_t *call, const cv_node_failed_t *f, const char *worker_id);

/* ---- check_begin ---- */

/* The lease of job's resource for `token`, `lease_ms` long. */
void cv_call_check_begin(cv_call_t *call, const cv_msg_t *job, const char *token,
                         unsigned lease_ms);

/* check_begin for the n (1 to CV_MSG_NODES_MAX) nodes of one stack and
 * traversal that one message carried: jobs[0] as cv_call_check_begin, the
 * others in the variadic tail; tokens[i] is jobs[i]'s lease token. The
 * reply is then a list of n check_begin replies. 0 or CV_ENOMEM. */
int cv_call_check_begin_many(cv_call_t *call, const cv_msg_t *const *jobs,
                             const char *const *tokens, size_t n, unsigned lease_ms);

/* ---- check_finish ---- */

/* Every string left NULL counts as "" (see check_finish.lua). */
typedef struct cv_check_finish {
    const cv_msg_t *job;
    const char *version; /* the record version read under the lease */
    const char *token;   /* the lease, released */
    const char *status;  /* "" records only the replaced versions */
    const char *action, *reason, *physical_id, *uuid, *type;
    const char *declared_type;        /* the type the template wrote: reported, in events too */
    const char *props, *attrs, *data; /* JSON */
    const char *event_status;         /* "" no event */
    const char *dependencies;         /* JSON list; "" keeps the index entry */
    const char *policy;               /* deletion policy */
    const char *old;                  /* replaced versions JSON; "" keeps */
    const char *events;               /* extra events JSON list; "" none */
    const char *started;              /* when the action started, Unix seconds; "" now */
    const char *traversal;            /* the record's traversal; NULL: the job's */
} cv_check_finish_t;

void cv_call_check_finish(cv_call_t *call, const cv_check_finish_t *f, const char *worker_id);

/* ---- check_done ---- */

/* The write of `f` (its status and event_status are left out: the action is
 * recorded IN_PROGRESS in the event stream only) and then the node done as
 * `d` says (status, attrs and data as the look left them, reason, pass,
 * successors from d->graph_entry), in one step. Returns 0, or CV_ENOMEM
 * (nothing to free). */
int cv_call_check_done(cv_call_t *call, const cv_check_finish_t *f, const cv_node_done_t *d,
                       const char *worker_id);

/* check_done for the n check_done calls `items` (built by
 * cv_call_check_done, of one stack and traversal) in one step: the reply
 * is a list of their replies. Only for nodes without successors, whose
 * strings hold no byte 0xff (the separator of their fields): CV_EINVAL
 * otherwise (send those alone); CV_ENOMEM. The call refers to items'
 * strings. */
int cv_call_check_done_many(cv_call_t *call, const cv_call_t *const *items, size_t n);

/* ---- stack_begin ---- */

/* stack_begin of b by `client` (a worker id, "convergectl"). */
void cv_call_stack_begin(cv_call_t *call, const cv_stack_begin_t *b, const char *client);

#endif
