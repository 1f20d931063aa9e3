#include "cv_calls.h"

#include "cv_base.h"
#include "cv_traversal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* The call's own copies of the job's traversal and node name. */
static void job_strings(cv_call_t *call, const cv_msg_t *job)
{
    cv_u64_str(call->traversal, job->traversal);
    cv_node_name(call->node, sizeof(call->node), job->phase, job->resource);
}

/* Key i of the call's storage, of `kind` for job's stack, traversal and `name`. */
static const char *key(cv_call_t *call, int i, cv_key_kind_t kind, const cv_msg_t *job,
                       const char *name)
{
    cv_key(call->key[i], CV_KEY_MAX, kind, job->stack, job->traversal, name);
    return call->key[i];
}

void cv__call_begin(cv_call_t *call, cv_script_t s)
{
    call->script = s;
    call->nextra = 0;
    call->extra_keys = call->extra_args = NULL;
    call->successor_preds = NULL;
    call->tail = NULL;
}

void cv_call_free(cv_call_t *call)
{
    free(call->tail);
    call->tail = NULL;
    call->nextra = 0;
}

/* ------------------------------------------------------------------------
 * node_done
 * ------------------------------------------------------------------------ */

/* The tail in one allocation: successor sync-point keys (and their text),
 * successor names (and their text), their numbers of predecessors. */
typedef struct tail {
    const char **keys;
    const char **names;
    size_t *preds;
} tail_t;

static int node_done_tail(cv_call_t *call, const cv_msg_t *j, const char *graph_entry)
{
    /* Most nodes of a big stack have no successor: nothing to decode. */
    if (strncmp(graph_entry, CV_TRAVERSAL_NO_SUCCESSORS, strlen(CV_TRAVERSAL_NO_SUCCESSORS)) == 0)
        return 0;
    json_t *e = json_loads(graph_entry, 0, NULL);
    json_t *succs = json_object_get(e, "s");
    size_t n = json_is_array(succs) ? json_array_size(succs) : 0;
    size_t text = 0;
    for (size_t i = 0; i < n; i++) {
        const char *succ = json_string_value(json_array_get(json_array_get(succs, i), 0));
        text += CV_KEY_MAX + strlen(or_empty(succ)) + 1;
    }
    if (n == 0) {
        json_decref(e);
        return 0;
    }
    size_t ptrs = 2 * n * sizeof(const char *), preds = n * sizeof(size_t);
    char *mem = malloc(ptrs + preds + text);
    if (!mem) {
        json_decref(e);
        return CV_ENOMEM;
    }
    const char **keys = (const char **)mem, **names = keys + n;
    size_t *npreds = (size_t *)(mem + ptrs);
    char *p = mem + ptrs + preds;
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(succs, i);
        const char *succ = or_empty(json_string_value(json_array_get(s, 0)));
        size_t len = strlen(succ);
        memcpy(p, succ, len + 1);
        names[i] = p;
        p += len + 1;
        size_t klen = cv_key(p, CV_KEY_MAX, CV_KEY_SP, j->stack, j->traversal, succ);
        keys[i] = p;
        p += klen + 1;
        npreds[i] = (size_t)json_integer_value(json_array_get(s, 1));
    }
    json_decref(e);
    call->tail = mem;
    call->nextra = n;
    call->extra_keys = keys;
    call->extra_args = names;
    call->successor_preds = npreds;
    return 0;
}

int cv_call_node_done(cv_call_t *call, const cv_node_done_t *d, const char *worker_id)
{
    const cv_msg_t *j = d->job;
    cv__call_begin(call, CV_SCRIPT_NODE_DONE);
    job_strings(call, j);
    call->k.node_done = (cv_node_done_keys_t){
        .stack = key(call, 0, CV_KEY_STACK, j, NULL),
        .res = key(call, 1, CV_KEY_RES, j, j->resource),
        .done = key(call, 2, CV_KEY_DONE, j, NULL),
        .events = key(call, 3, CV_KEY_EVENTS, j, NULL),
        .counts = key(call, 4, CV_KEY_COUNTS, j, NULL),
        .index = key(call, 5, CV_KEY_INDEX, j, NULL),
        .lease = key(call, 6, CV_KEY_LEASE, j, j->resource),
        .graph = key(call, 7, CV_KEY_GRAPH, j, NULL),
        .publishing = key(call, 8, CV_KEY_PUBLISHING, j, NULL),
    };
    call->a.node_done = (cv_node_done_args_t){
        .traversal = call->traversal,
        .node = call->node,
        .version = or_empty(d->version),
        .status = or_empty(d->status),
        .attrs = or_empty(d->attrs),
        .reason = or_empty(d->reason),
        .pass = or_empty(d->pass),
        .worker = worker_id,
        .resource = j->resource,
        .physical_id = or_empty(d->physical_id),
        .action = or_empty(d->action),
        .data = or_empty(d->data),
        .old = or_empty(d->old),
        .events = or_empty(d->events),
        .lease_token = or_empty(d->lease_token),
        .publishing = d->publishing ? "1" : "",
    };
    call->keys = call->k.node_done.v;
    call->args = call->a.node_done.v;
    return node_done_tail(call, j, or_empty(d->graph_entry));
}

/* ------------------------------------------------------------------------
 * node_failed
 * ------------------------------------------------------------------------ */

void cv_call_node_failed(cv_call_t *call, const cv_node_failed_t *f, const char *worker_id)
{
    const cv_msg_t *j = f->job;
    cv__call_begin(call, CV_SCRIPT_NODE_FAILED);
    job_strings(call, j);
    /* Heat's wording, so that tools reading reasons keep working. */
    snprintf(call->reason, sizeof(call->reason), "Resource %s failed: %s", or_empty(f->action),
             or_empty(f->reason));
    call->k.node_failed = (cv_node_failed_keys_t){
        .stack = key(call, 0, CV_KEY_STACK, j, NULL),
        .res = key(call, 1, CV_KEY_RES, j, j->resource),
        .events = key(call, 2, CV_KEY_EVENTS, j, NULL),
        .counts = key(call, 3, CV_KEY_COUNTS, j, NULL),
        .def = key(call, 4, CV_KEY_DEF, j, NULL),
    };
    call->a.node_failed = (cv_node_failed_args_t){
        .traversal = call->traversal,
        .version = or_empty(f->version),
        .status = or_empty(f->status),
        .reason = or_empty(f->reason),
        .worker = worker_id,
        .resource = j->resource,
        .physical_id = or_empty(f->physical_id),
        .action = or_empty(f->action),
        .stack_reason = call->reason,
    };
    call->keys = call->k.node_failed.v;
    call->args = call->a.node_failed.v;
}

/* ------------------------------------------------------------------------
 * check_begin, check_finish
 * ------------------------------------------------------------------------ */

void cv_call_check_begin(cv_call_t *call, const cv_msg_t *job, const char *token, unsigned lease_ms)
{
    const cv_msg_t *j = job;
    cv__call_begin(call, CV_SCRIPT_CHECK_BEGIN);
    job_strings(call, j);
    snprintf(call->number, sizeof(call->number), "%u", lease_ms);
    call->k.check_begin = (cv_check_begin_keys_t){
        .stack = key(call, 0, CV_KEY_STACK, j, NULL),
        .res = key(call, 1, CV_KEY_RES, j, j->resource),
        .lease = key(call, 2, CV_KEY_LEASE, j, j->resource),
        .rdef = key(call, 3, CV_KEY_RDEF, j, NULL),
        .sp = key(call, 4, CV_KEY_SP, j, call->node),
        .done = key(call, 5, CV_KEY_DONE, j, NULL),
        .def = key(call, 6, CV_KEY_DEF, j, NULL),
        .graph = key(call, 7, CV_KEY_GRAPH, j, NULL),
        .publishing = key(call, 8, CV_KEY_PUBLISHING, j, NULL),
    };
    call->a.check_begin = (cv_check_begin_args_t){
        .traversal = call->traversal,
        .node = call->node,
        .token = token,
        .lease_ms = call->number,
        .resource = j->resource,
    };
    call->keys = call->k.check_begin.v;
    call->args = call->a.check_begin.v;
}

int cv_call_check_begin_many(cv_call_t *call, const cv_msg_t *const *jobs,
                             const char *const *tokens, size_t n, unsigned lease_ms)
{
    cv_call_check_begin(call, jobs[0], tokens[0], lease_ms);
    if (n < 2)
        return 0;
    /* Per further node: its res, lease and sp keys, then its node name. */
    size_t more = n - 1, strings = 3 * CV_KEY_MAX + CV_NAME_MAX + 2;
    size_t ptrs = 2 * 3 * more * sizeof(const char *);
    char *mem = malloc(ptrs + more * strings);
    if (!mem)
        return CV_ENOMEM;
    const char **keys = (const char **)mem, **args = keys + 3 * more;
    char *p = mem + ptrs;
    for (size_t i = 0; i < more; i++) {
        const cv_msg_t *j = jobs[i + 1];
        static const cv_key_kind_t kinds[] = {CV_KEY_RES, CV_KEY_LEASE, CV_KEY_SP};
        char *node = p + 3 * CV_KEY_MAX;
        cv_node_name(node, CV_NAME_MAX + 2, j->phase, j->resource);
        for (int k = 0; k < 3; k++) {
            keys[3 * i + (size_t)k] = p;
            cv_key(p, CV_KEY_MAX, kinds[k], j->stack, j->traversal,
                   kinds[k] == CV_KEY_SP ? node : j->resource);
            p += CV_KEY_MAX;
        }
        args[3 * i] = node;
        args[3 * i + 1] = tokens[i + 1];
        args[3 * i + 2] = j->resource;
        p += CV_NAME_MAX + 2;
    }
    call->tail = mem;
    call->nextra = 3 * more;
    call->extra_keys = keys;
    call->extra_args = args;
    return 0;
}

void cv_call_check_finish(cv_call_t *call, const cv_check_finish_t *f, const char *worker_id)
{
    const cv_msg_t *j = f->job;
    cv__call_begin(call, CV_SCRIPT_CHECK_FINISH);
    job_strings(call, j);
    call->k.check_finish = (cv_check_finish_keys_t){
        .res = key(call, 0, CV_KEY_RES, j, j->resource),
        .lease = key(call, 1, CV_KEY_LEASE, j, j->resource),
        .events = key(call, 2, CV_KEY_EVENTS, j, NULL),
        .counts = key(call, 3, CV_KEY_COUNTS, j, NULL),
        .index = key(call, 4, CV_KEY_INDEX, j, NULL),
        .ledger = key(call, 5, CV_KEY_LEDGER, j, NULL),
        .stack = key(call, 6, CV_KEY_STACK, j, NULL),
    };
    call->a.check_finish = (cv_check_finish_args_t){
        .version = or_empty(f->version),
        .token = or_empty(f->token),
        .status = or_empty(f->status),
        .action = or_empty(f->action),
        .reason = or_empty(f->reason),
        .physical_id = or_empty(f->physical_id),
        .uuid = or_empty(f->uuid),
        .type = or_empty(f->type),
        .props = or_empty(f->props),
        .attrs = or_empty(f->attrs),
        .data = or_empty(f->data),
        .traversal = f->traversal ? f->traversal : call->traversal,
        .worker = worker_id,
        .resource = j->resource,
        .event_status = or_empty(f->event_status),
        .dependencies = or_empty(f->dependencies),
        .policy = or_empty(f->policy),
        .old = or_empty(f->old),
        .events = or_empty(f->events),
        .started = or_empty(f->started),
        .declared_type = or_empty(f->declared_type),
    };
    call->keys = call->k.check_finish.v;
    call->args = call->a.check_finish.v;
}

/* ------------------------------------------------------------------------
 * check_done
 * ------------------------------------------------------------------------ */

/* A look's text, or the action's when the look kept it (""). */
static const char *looked(const char *look, const char *acted)
{
    return look && look[0] ? look : or_empty(acted);
}

int cv_call_check_done(cv_call_t *call, const cv_check_finish_t *f, const cv_node_done_t *d,
                       const char *worker_id)
{
    const cv_msg_t *j = f->job;
    cv__call_begin(call, CV_SCRIPT_CHECK_DONE);
    job_strings(call, j);
    call->k.check_done = (cv_check_done_keys_t){
        .stack = key(call, 0, CV_KEY_STACK, j, NULL),
        .res = key(call, 1, CV_KEY_RES, j, j->resource),
        .lease = key(call, 2, CV_KEY_LEASE, j, j->resource),
        .events = key(call, 3, CV_KEY_EVENTS, j, NULL),
        .counts = key(call, 4, CV_KEY_COUNTS, j, NULL),
        .index = key(call, 5, CV_KEY_INDEX, j, NULL),
        .ledger = key(call, 6, CV_KEY_LEDGER, j, NULL),
        .done = key(call, 7, CV_KEY_DONE, j, NULL),
        .publishing = key(call, 8, CV_KEY_PUBLISHING, j, NULL),
    };
    call->a.check_done = (cv_check_done_args_t){
        .traversal = call->traversal,
        .node = call->node,
        .resource = j->resource,
        .version = or_empty(f->version),
        .token = or_empty(f->token),
        .worker = worker_id,
        .action = or_empty(f->action),
        .reason = or_empty(f->reason),
        .status = or_empty(d->status),
        .done_reason = or_empty(d->reason),
        .physical_id = or_empty(f->physical_id),
        .uuid = or_empty(f->uuid),
        .type = or_empty(f->type),
        .props = or_empty(f->props),
        .attrs = looked(d->attrs, f->attrs),
        .data = looked(d->data, f->data),
        .dependencies = or_empty(f->dependencies),
        .policy = or_empty(f->policy),
        .old = or_empty(f->old),
        .events = or_empty(f->events),
        .pass = or_empty(d->pass),
        .declared_type = or_empty(f->declared_type),
    };
    call->keys = call->k.check_done.v;
    call->args = call->a.check_done.v;
    return node_done_tail(call, j, or_empty(d->graph_entry));
}

/* Between the fields of one node in check_done_many: no UTF-8 text has it. */
#define FIELD_SEP 0xff

int cv_call_check_done_many(cv_call_t *call, const cv_call_t *const *items, size_t n)
{
    size_t text = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i]->script != CV_SCRIPT_CHECK_DONE || items[i]->nextra > 0)
            return CV_EINVAL;
        for (size_t f = 0; f < CV_CHECK_DONE_NARGS; f++) {
            if (strchr(or_empty(items[i]->args[f]), FIELD_SEP))
                return CV_EINVAL;
            text += strlen(or_empty(items[i]->args[f])) + 1;
        }
    }
    size_t ptrs = 4 * n * sizeof(const char *);
    char *mem = malloc(ptrs + text);
    if (!mem)
        return CV_ENOMEM;
    const char *const *k0 = items[0]->keys;
    cv__call_begin(call, CV_SCRIPT_CHECK_DONE_MANY);
    call->k.check_done_many = (cv_check_done_many_keys_t){
        .stack = k0[0],
        .events = k0[3],
        .counts = k0[4],
        .index = k0[5],
        .ledger = k0[6],
        .done = k0[7],
        .publishing = k0[8],
    };
    call->a.check_done_many = (cv_check_done_many_args_t){.traversal = items[0]->args[0]};
    call->keys = call->k.check_done_many.v;
    call->args = call->a.check_done_many.v;
    const char **keys = (const char **)mem, **args = keys + 2 * n;
    char *p = mem + ptrs;
    for (size_t i = 0; i < n; i++) {
        keys[2 * i] = items[i]->keys[1];     /* res */
        keys[2 * i + 1] = items[i]->keys[2]; /* lease */
        args[2 * i] = items[i]->args[1];     /* node */
        args[2 * i + 1] = p;
        for (size_t f = 0; f < CV_CHECK_DONE_NARGS; f++) {
            size_t len = strlen(or_empty(items[i]->args[f]));
            memcpy(p, or_empty(items[i]->args[f]), len);
            p += len;
            *p++ = f + 1 < CV_CHECK_DONE_NARGS ? (char)FIELD_SEP : '\0';
        }
    }
    call->tail = mem;
    call->nextra = 2 * n;
    call->extra_keys = keys;
    call->extra_args = args;
    return 0;
}

/* ------------------------------------------------------------------------
 * stack_begin
 * ------------------------------------------------------------------------ */

void cv_call_stack_begin(cv_call_t *call, const cv_stack_begin_t *b, const char *client)
{
    cv__call_begin(call, CV_SCRIPT_STACK_BEGIN);
    cv_key(call->key[0], CV_KEY_MAX, CV_KEY_STACK, b->stack, 0, NULL);
    cv_key(call->key[1], CV_KEY_MAX, CV_KEY_DEF, b->stack, 0, NULL);
    cv_key(call->key[2], CV_KEY_MAX, CV_KEY_EVENTS, b->stack, 0, NULL);
    call->k.stack_begin = (cv_stack_begin_keys_t){
        .stack = call->key[0],
        .def = call->key[1],
        .events = call->key[2],
    };
    cv_script_stack_begin_args(&call->a.stack_begin, b, client);
    call->keys = call->k.stack_begin.v;
    call->args = call->a.stack_begin.v;
}
