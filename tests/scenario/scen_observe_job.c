/*
 * OBSERVE jobs, as observer/converge-observer/observer_observe.c runs them: observe_load.lua,
 * the real decision before looking (cv_observe_decide), the type's looks
 * (type->observe on the versions it asks about), the decision on what was
 * seen, then node_done.lua or node_failed.lua. A look that finds an action
 * still in progress hands the job back: its message is delivered again
 * later, as the observer's timer would look again.
 */
#include "scen_job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PC_DONE = 1, PC_FAILED = 2, PC_OLDER = 3 };

/* One version's look: the type observes the state cv_record_state builds
 * (observer_observe.c ask). An unknown type is not asked: the decision
 * fails it. */
static bool look_at(const scen_job_t *j, cv_rstate_t *st, cv_look_t *look, const char *type_name,
                    const cv_version_t *v)
{
    const cv_rtype_t *type = cv_rtype_lookup(type_name);
    if (!type)
        return false;
    cv_record_state(st, v, SCEN_NOW);
    look->observed = type->observe(st, cv_observe_action(&j->msg, &j->rec));
    look->retry_at = st->retry_at;
    look->reason = st->reason;
    look->attrs = st->attrs;
    look->data = st->data;
    return true;
}

/* The looks the decision asked for (the current version; for a cleanup
 * node every replaced version being deleted), then the decision on them:
 * observer_observe.c look_at_current, look_at_old, look. */
static void look(scen_job_t *j)
{
    bool cleanup = j->msg.phase == CV_PHASE_CLEANUP && !j->msg.watch;
    size_t nold = cleanup ? json_array_size(j->rec.old) : 0;
    cv_look_t *old = calloc(nold + 1, sizeof(*old));
    cv_rstate_t *states = calloc(nold + 1, sizeof(*states));
    bool *asked = calloc(nold + 1, sizeof(bool));
    cv_observe_looks_t looks = {.old = old, .nold = nold};
    if (cv_observe_wants_look(&j->msg, j->rec.status)) {
        cv_version_t v = {.stack = j->msg.stack,
                          .resource = j->msg.resource,
                          .uuid = cleanup ? NULL : j->rec.uuid,
                          .physical_id = j->rec.physical_id,
                          .props = cleanup ? NULL : j->rec.props,
                          .data = j->rec.data,
                          .attrs = cleanup ? NULL : j->rec.attrs,
                          .started = j->rec.started};
        asked[nold] = look_at(j, &states[nold], &looks.current, j->rec.type, &v);
    }
    for (size_t i = 0; i < nold; i++) {
        const json_t *e = json_array_get(j->rec.old, i);
        if (!cv_observe_wants_look(&j->msg, json_string_value(json_object_get(e, "status"))))
            continue;
        cv_version_t v = {.stack = j->msg.stack,
                          .resource = j->msg.resource,
                          .physical_id = json_string_value(json_object_get(e, "physical_id")),
                          .data = json_object_get(e, "data"),
                          .started = json_number_value(json_object_get(e, "started"))};
        asked[i] =
            look_at(j, &states[i], &old[i], json_string_value(json_object_get(e, "type")), &v);
    }
    cv_observe_outcome_clear(&j->oout);
    cv_observe_decide(&j->msg, &j->rec, &looks, SCEN_NOW, &j->oout);
    for (size_t i = 0; i <= nold; i++)
        if (asked[i])
            cv_record_state_clear(&states[i]);
    free(old);
    free(states);
    free(asked);
}

static scen_step_t load(scen_world_t *w, scen_job_t *j)
{
    char k[3][CV_KEY_MAX], node[CV_NAME_MAX + 2], trav[24];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, j->msg.stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_RES, j->msg.stack, 0, j->msg.resource);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_GRAPH, j->msg.stack, j->msg.traversal, NULL);
    cv_node_name(node, sizeof(node), j->msg.phase, j->msg.resource);
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)j->msg.traversal);
    cv_observe_load_keys_t keys = {.stack = k[0], .res = k[1], .graph = k[2]};
    cv_observe_load_args_t args = {.node = node, .traversal = trav};
    redisReply *r = scen_call_row(CV_SCRIPT_OBSERVE_LOAD, keys.v, args.v);
    cv_answer_t a = cv_reply_answer(CV_SCRIPT_OBSERVE_LOAD, r);
    j->pc = PC_END;
    if (a == CV_ANSWER_NONODE || a == CV_ANSWER_INVALID ||
        r->elements != CV_OBSERVE_LOAD_R_GRAPH_ENTRY + 1) {
        scen_violation(w, "OBSERVE %s t%llu dead-lettered: %s", node,
                       (unsigned long long)j->msg.traversal,
                       a == CV_ANSWER_NONODE ? "NONODE" : "unexpected reply");
        freeReplyObject(r);
        return SCEN_STEP_MORE;
    }
    if (!cv_reply_str(r, CV_OBSERVE_LOAD_R_TRAVERSAL)[0] &&
        !cv_reply_str(r, CV_OBSERVE_LOAD_R_STATUS)[0]) {
        scen_violation(w, "OBSERVE %s dead-lettered: unknown stack", node);
        freeReplyObject(r);
        return SCEN_STEP_MORE;
    }
    cv_resp_t *reply = cv_flowrun_resp(r, false);
    cv_record_parse(&j->rec, cv_resp_at(reply, CV_OBSERVE_LOAD_R_RECORD));
    free(reply);
    j->have_rec = true;
    j->graph_entry = strdup(cv_reply_str(r, CV_OBSERVE_LOAD_R_GRAPH_ENTRY));
    freeReplyObject(r);
    cv_observe_decide(&j->msg, &j->rec, NULL, SCEN_NOW, &j->oout);
    j->have_oout = true;
    if (j->oout.kind == CV_OBSERVE_LOOK || j->oout.kind == CV_OBSERVE_LOOK_CLEANUP ||
        j->oout.kind == CV_OBSERVE_LOOK_WATCH)
        look(j);
    scen_trace(w, "  %c/%s t%llu observed %s %s", j->msg.phase ? 'c' : 'u', j->msg.resource,
               (unsigned long long)j->msg.traversal, cv_observe_kind_name(j->oout.kind),
               j->oout.status);
    switch (j->oout.kind) {
    case CV_OBSERVE_REDELIVERED_DELETED:
    case CV_OBSERVE_COMPLETE:
        j->pc = PC_DONE;
        return SCEN_STEP_MORE;
    case CV_OBSERVE_FAILED:
        j->pc = PC_FAILED;
        return SCEN_STEP_MORE;
    case CV_OBSERVE_WAIT:
        return SCEN_STEP_RETRY;
    case CV_OBSERVE_SETTLED_OLDER:
        j->pc = PC_OLDER;
        return SCEN_STEP_MORE;
    case CV_OBSERVE_RECHECK:
        scen_op_publish_recheck(j);
        return SCEN_STEP_MORE;
    default:
        return SCEN_STEP_MORE; /* STALE_END */
    }
}

static scen_step_t done(scen_world_t *w, scen_job_t *j)
{
    cv_node_done_t d = cv_observe_done_of(&j->msg, &j->oout, j->graph_entry, j->rec.physical_id);
    scen_node_done(w, j, &d);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

static scen_step_t failed(scen_world_t *w, scen_job_t *j)
{
    cv_node_failed_t f = cv_observe_failed_of(&j->msg, &j->oout, j->rec.physical_id);
    scen_trace(w, "  node failed: %s", j->oout.reason);
    scen_node_failed(w, j, &f);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

/* observer_observe.c settle_older: the older traversal's outcome, then
 * this traversal's CHECK job again. */
static scen_step_t older(scen_world_t *w, scen_job_t *j)
{
    cv_msg_t m = cv_observe_older_job(&j->msg, &j->rec);
    if (strstr(j->oout.status, "_FAILED")) {
        cv_node_failed_t f = cv_observe_failed_of(&m, &j->oout, j->rec.physical_id);
        scen_node_failed(w, j, &f);
    } else {
        cv_node_done_t d = cv_observe_done_of(&m, &j->oout, "", j->rec.physical_id);
        scen_node_done(w, j, &d);
    }
    scen_op_publish_recheck(j);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

scen_step_t scen_observe_step(scen_world_t *w, scen_job_t *j)
{
    switch (j->pc) {
    case PC_START:
        return load(w, j);
    case PC_DONE:
        return done(w, j);
    case PC_OLDER:
        return older(w, j);
    default:
        return failed(w, j);
    }
}
