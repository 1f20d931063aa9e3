/*
 * Hooks (Heat's breakpoints) in the CHECK step machine: a resource that the
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
#include "cv__checkjob.h"

#include "cv_hot.h"
#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The hooks the outcome needs cleared, in the order Heat meets them. */
static void needed_hooks(const cv_checkjob_t *j, unsigned bits, char *out, size_t size)
{
    const cv_check_outcome_t *o = &j->out;
    bool pre_update = o->kind == CV_CHECK_UPDATE || o->kind == CV_CHECK_REPLACE ||
                      (o->kind == CV_CHECK_DONE && j->in.rec.exists);
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
static char *events_before_create(cv_checkjob_t *j, const char *hooks)
{
    if (!strstr(hooks, "pre-create") || !j->out.events)
        return NULL;
    json_t *first = json_array(), *rest = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(j->out.events, i, e)
    {
        json_array_append(json_is_true(json_object_get(e, "first")) ? first : rest, e);
    }
    json_decref(j->out.events);
    j->out.events = rest;
    char *text = json_array_size(first) ? json_dumps(first, JSON_COMPACT) : NULL;
    json_decref(first);
    return text;
}

const cv_flow_t *cv__checkjob_hooks(cv_checkjob_t *j)
{
    unsigned bits = hook_bits(j->in.graph_entry);
    char hooks[64];
    if (!bits)
        return NULL;
    needed_hooks(j, bits, hooks, sizeof(hooks));
    if (!hooks[0])
        return NULL;
    cv_flow_buf_t *b = &j->buf;
    char *before = events_before_create(j, hooks);
    char action[24], status[24];
    current_state(&j->in.rec, action, status, sizeof(action));
    cv_hook_wait_t h = {.hooks = cv__flow_keep(b, hooks),
                        .action = cv__flow_keep(b, action),
                        .status = cv__flow_keep(b, status),
                        .physical_id = j->in.rec.physical_id,
                        .type = j->out.declared_type,
                        .before = before ? cv__flow_own(b, before) : ""};
    cv_call_t *call = cv__flow_call(b, true);
    if (!call)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    cv_call_hook_wait(call, &j->msg, &h, j->worker);
    j->state = CV_CHECKJOB_HOOK;
    return cv__checkjob_end(j, CV_FLOW_IO);
}

const cv_flow_t *cv__checkjob_hook_replied(cv_checkjob_t *j, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    cv_answer_t answer = cv_resp_answer(CV_SCRIPT_HOOK_WAIT, rep);
    if (answer == CV_ANSWER_INVALID)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    if (answer == CV_ANSWER_OK) /* every hook it needs is cleared */
        return cv__checkjob_carry_out(j);
    if (answer == CV_ANSWER_PAUSED)
        cv__flow_log(&j->buf, CV_FLOW_INFO, "stack %s resource %s: paused until hook %s is cleared",
                     j->msg.stack, j->msg.resource, cv_resp_str(rep, CV_HOOK_WAIT_R_HOOK));
    return cv__checkjob_release_and_end(j);
}
