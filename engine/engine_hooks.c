/*
 * Hooks (Heat's breakpoints), engine side: a resource that the
 * environment's registry stops with `hooks: pre-create | pre-update |
 * pre-delete` pauses before that action until the hook is cleared
 * (convergectl hook-clear, or a signal {"unset_hook": HOOK}).
 *
 * The expansion wrote the hooks of each node into its graph entry ("h",
 * CV_ENV_HOOK_* bits: pre-create and pre-update on the update node,
 * pre-delete on the cleanup node). After the decision, an action that a
 * hook stops goes through hook_wait.lua: it pauses the resource (the event
 * "<ACTION> paused until Hook <hook> is cleared") and the job ends, leaving
 * the node not done; once every hook it needs is cleared, the job that
 * hook_clear.lua had published carries the outcome out. As in Heat, an
 * update pauses every resource it reaches with pre-update, changed or not;
 * a replacement pauses on pre-update, then on pre-create, and the delete
 * of the version it replaced on pre-delete.
 */
#include "engine.h"
#include "engine_check.h"

#include "cv_env.h"
#include "cv_error.h"
#include "cv_keys.h"
#include "cv_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The hooks the outcome needs cleared, in the order Heat meets them. */
static void needed_hooks(const check_t *c, unsigned bits, char *out, size_t size)
{
    const cv_check_outcome_t *o = &c->out;
    bool pre_update = o->kind == CV_CHECK_UPDATE || o->kind == CV_CHECK_REPLACE ||
                      (o->kind == CV_CHECK_DONE && c->in.rec.exists);
    bool pre_create = o->kind == CV_CHECK_CREATE || o->kind == CV_CHECK_REPLACE;
    /* Heat deletes the version a replacement left behind as any resource. */
    bool pre_delete = o->kind == CV_CHECK_DELETE_CURRENT || o->kind == CV_CHECK_DELETE_REPLACED;
    out[0] = '\0';
    if (pre_update && (bits & CV_ENV_HOOK_PRE_UPDATE))
        snprintf(out + strlen(out), size - strlen(out), "pre-update ");
    if (pre_create && (bits & CV_ENV_HOOK_PRE_CREATE))
        snprintf(out + strlen(out), size - strlen(out), "pre-create ");
    if (pre_delete && (bits & CV_ENV_HOOK_PRE_DELETE))
        snprintf(out + strlen(out), size - strlen(out), "pre-delete ");
}

static unsigned hook_bits(const char *graph_entry)
{
    json_t *entry = graph_entry ? json_loads(graph_entry, 0, NULL) : NULL;
    unsigned bits = (unsigned)json_integer_value(json_object_get(entry, "h"));
    json_decref(entry);
    return bits;
}

static void on_hook_wait(cv_redis_t *r, redisReply *rep, void *ud)
{
    check_t *c = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_HOOK_WAIT, rep);
    if (answer == CV_ANSWER_INVALID) {
        cv__check_backoff(c);
        return;
    }
    if (answer == CV_ANSWER_OK) {
        cv__check_carry_out(c);
        return;
    }
    if (answer == CV_ANSWER_PAUSED)
        cv_info("stack %s resource %s: paused until hook %s is cleared", c->run.msg.stack,
                c->run.msg.resource, cv_reply_str(rep, CV_HOOK_WAIT_R_HOOK));
    cv__check_release_and_end(c);
}

/* The resource's state as Heat's events name it: INIT COMPLETE before its
 * first action. */
static void current_state(const cv_record_t *rec, char *action, char *status, size_t size)
{
    const char *sep = rec->exists ? strchr(rec->status, '_') : NULL;
    if (!sep) {
        snprintf(action, size, "INIT");
        snprintf(status, size, "COMPLETE");
        return;
    }
    snprintf(action, size, "%.*s", (int)(sep - rec->status), rec->status);
    snprintf(status, size, "%s", sep + 1);
}

bool cv__hooks_pause(check_t *c)
{
    unsigned bits = hook_bits(c->in.graph_entry);
    char hooks[64];
    if (!bits)
        return false;
    needed_hooks(c, bits, hooks, sizeof(hooks));
    if (!hooks[0])
        return false;
    const cv_msg_t *m = &c->run.msg;
    char k[3][CV_KEY_MAX], trav[24], action[24], status[24];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, m->stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_HOOKS, m->stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_EVENTS, m->stack, 0, NULL);
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)m->traversal);
    current_state(&c->in.rec, action, status, sizeof(action));
    cv_hook_wait_keys_t keys = {.stack = k[0], .hooks = k[1], .events = k[2]};
    cv_hook_wait_args_t args = {.traversal = trav,
                                .resource = m->resource,
                                .hooks = hooks,
                                .node = c->node,
                                .action = action,
                                .status = status,
                                .physical_id = c->in.rec.physical_id,
                                .worker = c->run.w->id};
    if (cv_redis_call(c->run.w->redis, CV_SCRIPT_HOOK_WAIT, keys.v, args.v, 0, NULL, NULL,
                      on_hook_wait, c) != 0)
        cv__check_backoff(c);
    return true;
}

/* ---- clearing (a signal {"unset_hook": HOOK}) ---- */

typedef struct clearing {
    cv_worker_t *w;
    char stack[CV_ID_MAX];
    char resource[CV_NAME_MAX];
    char hook[16];
    cv_hook_cleared_cb cb;
    void *ud;
} clearing_t;

static void on_clear_published(void *ud, int err)
{
    clearing_t *cl = ud;
    cl->cb(cl->ud, err ? CV_EKAFKA : 0, "");
    free(cl);
}

static void on_cleared(cv_redis_t *r, redisReply *rep, void *ud)
{
    clearing_t *cl = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_HOOK_CLEAR, rep);
    if (answer == CV_ANSWER_NOHOOK) {
        char message[CV_NAME_MAX + 96];
        snprintf(message, sizeof(message), "The \"%s\" hook is not defined on resource \"%s\"",
                 cl->hook[0] ? cl->hook : cv_reply_str(rep, CV_HOOK_CLEAR_R_NOHOOK_HOOK),
                 cl->resource);
        cl->cb(cl->ud, CV_ENOENT, message);
        free(cl);
        return;
    }
    if (answer != CV_ANSWER_OK || rep->elements <= CV_HOOK_CLEAR_R_CLEARED_HOOK) {
        cl->cb(cl->ud, CV_EREDIS, "");
        free(cl);
        return;
    }
    cv_info("stack %s resource %s: hook %s cleared", cl->stack, cl->resource,
            cv_reply_str(rep, CV_HOOK_CLEAR_R_CLEARED_HOOK));
    uint64_t traversal = strtoull(cv_reply_str(rep, CV_HOOK_CLEAR_R_TRAVERSAL), NULL, 10);
    if (cv_worker_publish_node(cl->w, cl->stack, traversal, cv_reply_str(rep, CV_HOOK_CLEAR_R_NODE),
                               on_clear_published, cl) != 0)
        on_clear_published(cl, CV_EKAFKA);
}

int cv__hook_clear(cv_worker_t *w, const char *stack, const char *resource, const char *hook,
                   cv_hook_cleared_cb cb, void *ud)
{
    clearing_t *cl = calloc(1, sizeof(*cl));
    if (!cl)
        return CV_ENOMEM;
    *cl = (clearing_t){.w = w, .cb = cb, .ud = ud};
    snprintf(cl->stack, sizeof(cl->stack), "%s", stack);
    snprintf(cl->resource, sizeof(cl->resource), "%s", resource);
    snprintf(cl->hook, sizeof(cl->hook), "%s", hook ? hook : "");
    char k[3][CV_KEY_MAX];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_HOOKS, stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_EVENTS, stack, 0, NULL);
    cv_hook_clear_keys_t keys = {.stack = k[0], .hooks = k[1], .events = k[2]};
    cv_hook_clear_args_t args = {.resource = cl->resource, .hook = cl->hook, .client = w->id};
    int rc = cv_redis_call(w->redis, CV_SCRIPT_HOOK_CLEAR, keys.v, args.v, 0, NULL, NULL,
                           on_cleared, cl);
    if (rc)
        free(cl);
    return rc;
}
