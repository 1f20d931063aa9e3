/*
 * cv_calls — the arguments of the scripts the jobs call, built in one place.
 *
 * This module owns what the scripts that move a traversal (node_done,
 * node_failed, check_begin, check_finish, check_done, stack_begin) and
 * the jobs' other steps (calls_jobs.c: leases, hooks, services, loads,
 * expansions, a traversal's end) are called with: which keys (named by
 * cv_keys) and which arguments, in the order of their rows in
 * proto/contract/cv_script.def. Builders are pure (no I/O): the step
 * machines (cv_flow.h) answer with the calls built here, the asynchronous
 * workers send them with cv_redis_call, and the synchronous scenario
 * harness sends the very same calls with cv_redis_script_sync, so both
 * drive the scripts identically.
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
        cv_lease_release_keys_t lease_release;
        cv_hook_wait_keys_t hook_wait;
        cv_svc_put_keys_t svc_put;
        cv_stack_definition_keys_t stack_definition;
        cv_stack_expanded_keys_t stack_expanded;
        cv_stack_finish_keys_t stack_finish;
        cv_resource_ref_keys_t resource_ref;
        cv_observe_load_keys_t observe_load;
        cv_signal_watch_keys_t signal_watch;
        cv_svc_look_keys_t svc_look;
        cv_stack_touch_keys_t stack_touch;
        cv_stack_unname_keys_t stack_unname;
    } k;
    union {
        cv_node_done_args_t node_done;
        cv_node_failed_args_t node_failed;
        cv_check_begin_args_t check_begin;
        cv_check_finish_args_t check_finish;
        cv_check_done_args_t check_done;
        cv_check_done_many_args_t check_done_many;
        cv_stack_begin_args_t stack_begin;
        cv_lease_release_args_t lease_release;
        cv_hook_wait_args_t hook_wait;
        cv_svc_put_args_t svc_put;
        cv_stack_definition_args_t stack_definition;
        cv_stack_expanded_args_t stack_expanded;
        cv_stack_finish_args_t stack_finish;
        cv_resource_ref_args_t resource_ref;
        cv_observe_load_args_t observe_load;
        cv_signal_watch_args_t signal_watch;
        cv_svc_look_args_t svc_look;
        cv_stack_touch_args_t stack_touch;
        cv_stack_unname_args_t stack_unname;
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

/* ------------------------------------------------------------------------
 * The other steps of the jobs (calls_jobs.c): the strings given are
 * referred to, as above.
 * ------------------------------------------------------------------------ */

/* lease_release of job's resource, held with `token`. */
void cv_call_lease_release(cv_call_t *call, const cv_msg_t *job, const char *token);

/* hook_wait for job's node: what the resource pauses before. */
typedef struct cv_hook_wait {
    const char *hooks;           /* the hooks the action needs cleared, space-separated */
    const char *action, *status; /* the resource's state as Heat's events name it */
    const char *physical_id, *type;
    const char *before; /* events written before the pause's (JSON list), "" none */
} cv_hook_wait_t;
void cv_call_hook_wait(cv_call_t *call, const cv_msg_t *job, const cv_hook_wait_t *h,
                       const char *worker_id);

/* svc_put of Converge::Service `svc` (`spec` with state "active", or ""
 * with "deleting"), resource `resource` of stack `stack` named `stack_name`. */
void cv_call_svc_put(cv_call_t *call, const char *svc, const char *spec, const char *state,
                     const char *stack, const char *stack_name, const char *resource);

/* stack_definition of `stack`. */
void cv_call_stack_definition(cv_call_t *call, const char *stack);

/* stack_expanded of job's traversal: the drafts written, `nodes` in the
 * graph, the resolved parameters `params` (JSON). */
void cv_call_stack_expanded(cv_call_t *call, const cv_msg_t *job, const char *rdef_draft,
                            const char *graph_draft, size_t nodes, const char *params);

/* stack_finish of `traversal` of `stack`: status COMPLETE or FAILED. */
void cv_call_stack_finish(cv_call_t *call, const char *stack, uint64_t traversal,
                          const char *status, const char *reason, const char *outputs,
                          const char *worker_id);

/* resource_ref of `resource` of `stack`. */
void cv_call_resource_ref(cv_call_t *call, const char *stack, const char *resource);

/* observe_load of job's node. */
void cv_call_observe_load(cv_call_t *call, const cv_msg_t *job);

/* signal_watch: job's resource (record `version`) waits on `ref`. */
void cv_call_signal_watch(cv_call_t *call, const cv_msg_t *job, const char *ref,
                          const char *version);

/* svc_look of `svc` (`all`: every node's reports, as a delete needs). */
void cv_call_svc_look(cv_call_t *call, const char *svc, bool all);

/* stack_touch of job's traversal: an observer still watching is progress. */
void cv_call_stack_touch(cv_call_t *call, const cv_msg_t *job);

/* stack_unname: `name` freed if it still maps to `stack`. */
void cv_call_stack_unname(cv_call_t *call, const char *name, const char *stack);

/* Internal to the builders: a call of script s with no tail. */
void cv__call_begin(cv_call_t *call, cv_script_t s);

#endif
