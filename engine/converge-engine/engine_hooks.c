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

#include "cv_hot.h"
#include "cv_contract.h"
#include "cv_io.h"

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

/* The events a replacement writes before its own ("first": the update
 * Heat began on the superseded version), taken out of the outcome when a
 * pre-create hook stops the replacement: its pause writes them, before the
 * pause's event, as Heat's order has them. Returns their JSON, or NULL. */
static char *events_before_create(check_t *c, const char *hooks)
{
    if (!strstr(hooks, "pre-create") || !c->out.events)
        return NULL;
    json_t *first = json_array(), *rest = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(c->out.events, i, e)
    {
        json_array_append(json_is_true(json_object_get(e, "first")) ? first : rest, e);
    }
    json_decref(c->out.events);
    c->out.events = rest;
    char *text = json_array_size(first) ? json_dumps(first, JSON_COMPACT) : NULL;
    json_decref(first);
    return text;
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
    char *before = events_before_create(c, hooks);
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
                                .worker = c->run.w->id,
                                .type = c->out.declared_type,
                                .before = before ? before : ""};
    if (cv_redis_call(c->run.w->redis, CV_SCRIPT_HOOK_WAIT, keys.v, args.v, 0, NULL, NULL,
                      on_hook_wait, c) != 0)
        cv__check_backoff(c);
    free(before);
    return true;
}
