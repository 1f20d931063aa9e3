/*
 * cv_calls — the calls of the jobs' steps besides the traversal's writes
 * (cv_calls.c): leases, hooks, services, the loads and reads, a
 * traversal's expansion and its end. Each fills the keys from cv_keys and
 * the arguments in the row's order (proto/contract/cv_script.def).
 */
#include "cv_calls.h"

#include "cv_base.h"

#include <stdio.h>
#include <string.h>

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* Key i of the call's storage, of `kind` for `stack`, `traversal` and `name`. */
static const char *key(cv_call_t *call, int i, cv_key_kind_t kind, const char *stack,
                       uint64_t traversal, const char *name)
{
    cv_key(call->key[i], CV_KEY_MAX, kind, stack, traversal, name);
    return call->key[i];
}

/* Key storage i as the prefix of `kind`'s keys of `stack`. */
static const char *prefix(cv_call_t *call, int i, cv_key_kind_t kind, const char *stack)
{
    cv_key_prefix(call->key[i], CV_KEY_MAX, kind, stack, 0);
    return call->key[i];
}

void cv_call_lease_release(cv_call_t *call, const cv_msg_t *job, const char *token)
{
    cv__call_begin(call, CV_SCRIPT_LEASE_RELEASE);
    call->k.lease_release = (cv_lease_release_keys_t){
        .lease = key(call, 0, CV_KEY_LEASE, job->stack, job->traversal, job->resource)};
    call->a.lease_release = (cv_lease_release_args_t){.token = token};
    call->keys = call->k.lease_release.v;
    call->args = call->a.lease_release.v;
}

void cv_call_hook_wait(cv_call_t *call, const cv_msg_t *job, const cv_hook_wait_t *h,
                       const char *worker_id)
{
    cv__call_begin(call, CV_SCRIPT_HOOK_WAIT);
    cv_u64_str(call->traversal, job->traversal);
    cv_node_name(call->node, sizeof(call->node), job->phase, job->resource);
    call->k.hook_wait = (cv_hook_wait_keys_t){
        .stack = key(call, 0, CV_KEY_STACK, job->stack, 0, NULL),
        .hooks = key(call, 1, CV_KEY_HOOKS, job->stack, 0, NULL),
        .events = key(call, 2, CV_KEY_EVENTS, job->stack, 0, NULL),
    };
    call->a.hook_wait = (cv_hook_wait_args_t){.traversal = call->traversal,
                                              .resource = job->resource,
                                              .hooks = or_empty(h->hooks),
                                              .node = call->node,
                                              .action = or_empty(h->action),
                                              .status = or_empty(h->status),
                                              .physical_id = or_empty(h->physical_id),
                                              .worker = worker_id,
                                              .type = or_empty(h->type),
                                              .before = or_empty(h->before)};
    call->keys = call->k.hook_wait.v;
    call->args = call->a.hook_wait.v;
}

void cv_call_svc_put(cv_call_t *call, const char *svc, const char *spec, const char *state,
                     const char *stack, const char *stack_name, const char *resource)
{
    cv__call_begin(call, CV_SCRIPT_SVC_PUT);
    call->k.svc_put = (cv_svc_put_keys_t){
        .svc = key(call, 0, CV_KEY_SVC, NULL, 0, svc),
        .services = key(call, 1, CV_KEY_SERVICES, NULL, 0, NULL),
    };
    call->a.svc_put = (cv_svc_put_args_t){.svc_id = svc,
                                          .spec = or_empty(spec),
                                          .state = state,
                                          .stack = stack,
                                          .stack_name = or_empty(stack_name),
                                          .resource = resource};
    call->keys = call->k.svc_put.v;
    call->args = call->a.svc_put.v;
}

void cv_call_stack_definition(cv_call_t *call, const char *stack)
{
    cv__call_begin(call, CV_SCRIPT_STACK_DEFINITION);
    call->k.stack_definition = (cv_stack_definition_keys_t){
        .stack = key(call, 0, CV_KEY_STACK, stack, 0, NULL),
        .def = key(call, 1, CV_KEY_DEF, stack, 0, NULL),
        .index = key(call, 2, CV_KEY_INDEX, stack, 0, NULL),
    };
    call->a.stack_definition = (cv_stack_definition_args_t){.nil = NULL};
    call->keys = call->k.stack_definition.v;
    call->args = call->a.stack_definition.v;
}

void cv_call_stack_expanded(cv_call_t *call, const cv_msg_t *job, const char *rdef_draft,
                            const char *graph_draft, size_t nodes, const char *params)
{
    cv__call_begin(call, CV_SCRIPT_STACK_EXPANDED);
    cv_u64_str(call->traversal, job->traversal);
    snprintf(call->number, sizeof(call->number), "%zu", nodes);
    call->k.stack_expanded = (cv_stack_expanded_keys_t){
        .stack = key(call, 0, CV_KEY_STACK, job->stack, 0, NULL),
        .def = key(call, 1, CV_KEY_DEF, job->stack, 0, NULL),
        .rdef = key(call, 2, CV_KEY_RDEF, job->stack, job->traversal, NULL),
        .graph = key(call, 3, CV_KEY_GRAPH, job->stack, job->traversal, NULL),
        .rdef_draft = rdef_draft,
        .graph_draft = graph_draft,
    };
    call->a.stack_expanded = (cv_stack_expanded_args_t){
        .traversal = call->traversal, .nodes = call->number, .params = params};
    call->keys = call->k.stack_expanded.v;
    call->args = call->a.stack_expanded.v;
}

void cv_call_stack_finish(cv_call_t *call, const char *stack, uint64_t traversal,
                          const char *status, const char *reason, const char *outputs,
                          const char *worker_id)
{
    cv__call_begin(call, CV_SCRIPT_STACK_FINISH);
    cv_u64_str(call->traversal, traversal);
    call->k.stack_finish = (cv_stack_finish_keys_t){
        .stack = key(call, 0, CV_KEY_STACK, stack, 0, NULL),
        .events = key(call, 1, CV_KEY_EVENTS, stack, 0, NULL),
        .def = key(call, 2, CV_KEY_DEF, stack, 0, NULL),
        .index = key(call, 3, CV_KEY_INDEX, stack, 0, NULL),
        .graph = key(call, 4, CV_KEY_GRAPH, stack, traversal, NULL),
    };
    call->a.stack_finish = (cv_stack_finish_args_t){
        .traversal = call->traversal,
        .status = status,
        .reason = reason,
        .outputs = outputs,
        .worker = worker_id,
        .lease_prefix = prefix(call, 5, CV_KEY_LEASE, stack),
        .res_prefix = prefix(call, 6, CV_KEY_RES, stack),
    };
    call->keys = call->k.stack_finish.v;
    call->args = call->a.stack_finish.v;
}

void cv_call_resource_ref(cv_call_t *call, const char *stack, const char *resource)
{
    cv__call_begin(call, CV_SCRIPT_RESOURCE_REF);
    call->k.resource_ref =
        (cv_resource_ref_keys_t){.res = key(call, 0, CV_KEY_RES, stack, 0, resource)};
    call->a.resource_ref = (cv_resource_ref_args_t){.resource = resource};
    call->keys = call->k.resource_ref.v;
    call->args = call->a.resource_ref.v;
}

void cv_call_observe_load(cv_call_t *call, const cv_msg_t *job)
{
    cv__call_begin(call, CV_SCRIPT_OBSERVE_LOAD);
    cv_u64_str(call->traversal, job->traversal);
    cv_node_name(call->node, sizeof(call->node), job->phase, job->resource);
    call->k.observe_load = (cv_observe_load_keys_t){
        .stack = key(call, 0, CV_KEY_STACK, job->stack, job->traversal, NULL),
        .res = key(call, 1, CV_KEY_RES, job->stack, job->traversal, job->resource),
        .graph = key(call, 2, CV_KEY_GRAPH, job->stack, job->traversal, NULL),
    };
    call->a.observe_load =
        (cv_observe_load_args_t){.node = call->node, .traversal = call->traversal};
    call->keys = call->k.observe_load.v;
    call->args = call->a.observe_load.v;
}

void cv_call_signal_watch(cv_call_t *call, const cv_msg_t *job, const char *ref,
                          const char *version)
{
    cv__call_begin(call, CV_SCRIPT_SIGNAL_WATCH);
    cv_u64_str(call->traversal, job->traversal);
    call->k.signal_watch =
        (cv_signal_watch_keys_t){.index = key(call, 0, CV_KEY_INDEX, job->stack, 0, NULL)};
    call->a.signal_watch = (cv_signal_watch_args_t){
        .resource = job->resource,
        .ref = ref,
        .traversal = call->traversal,
        .version = version,
        .watch = job->watch ? "1" : "0",
        .res_prefix = prefix(call, 1, CV_KEY_RES, job->stack),
        .waiters_prefix = prefix(call, 2, CV_KEY_WAITERS, job->stack),
    };
    call->keys = call->k.signal_watch.v;
    call->args = call->a.signal_watch.v;
}

void cv_call_svc_look(cv_call_t *call, const char *svc, bool all)
{
    cv__call_begin(call, CV_SCRIPT_SVC_LOOK);
    call->k.svc_look = (cv_svc_look_keys_t){
        .svc = key(call, 0, CV_KEY_SVC, NULL, 0, svc),
        .nodes = key(call, 1, CV_KEY_NODES, NULL, 0, NULL),
    };
    call->a.svc_look = (cv_svc_look_args_t){.svc_id = svc,
                                            .node_prefix = prefix(call, 2, CV_KEY_NODE, NULL),
                                            .alive_prefix = prefix(call, 3, CV_KEY_ALIVE, NULL),
                                            .report_prefix = prefix(call, 4, CV_KEY_REPORT, NULL),
                                            .all = all ? "1" : "0"};
    call->keys = call->k.svc_look.v;
    call->args = call->a.svc_look.v;
}

void cv_call_stack_touch(cv_call_t *call, const cv_msg_t *job)
{
    cv__call_begin(call, CV_SCRIPT_STACK_TOUCH);
    cv_u64_str(call->traversal, job->traversal);
    call->k.stack_touch =
        (cv_stack_touch_keys_t){.stack = key(call, 0, CV_KEY_STACK, job->stack, 0, NULL)};
    call->a.stack_touch = (cv_stack_touch_args_t){.traversal = call->traversal};
    call->keys = call->k.stack_touch.v;
    call->args = call->a.stack_touch.v;
}

void cv_call_stack_unname(cv_call_t *call, const char *name, const char *stack)
{
    cv__call_begin(call, CV_SCRIPT_STACK_UNNAME);
    call->k.stack_unname =
        (cv_stack_unname_keys_t){.stacks = key(call, 0, CV_KEY_STACKS, NULL, 0, NULL)};
    call->a.stack_unname = (cv_stack_unname_args_t){.name = name, .id = stack};
    call->keys = call->k.stack_unname.v;
    call->args = call->a.stack_unname.v;
}
