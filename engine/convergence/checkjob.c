/*
 * The pieces of a CHECK job's steps (cv_checkjob.h): what check_begin
 * loaded, the type operations, the fields of the writes. The step machine
 * itself is checkjob_flow.c.
 */
#include "cv_checkjob.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what check_begin loaded ---- */

/* The sync point holds each predecessor's data as JSON text, its
 * attributes sealed when the deployment seals (*rc CV_EIO: not openable). */
static json_t *sync_point_of(const cv_resp_t *flat, int *rc)
{
    json_t *raw = cv_resp_to_object(flat), *sp = json_object();
    const char *pred;
    json_t *v;
    json_object_foreach(raw, pred, v)
    {
        int r = 0;
        json_t *d = cv_unseal_loads(json_string_value(v), &r, NULL, 0);
        if (r)
            *rc = r;
        json_object_set_new(sp, pred, json_is_object(d) ? d : json_object());
        if (d && !json_is_object(d))
            json_decref(d);
    }
    json_decref(raw);
    return sp;
}

int cv_check_load(cv_check_loaded_t *l, const cv_msg_t *job, const cv_resp_t *rep)
{
    memset(l, 0, sizeof(*l));
    if (cv_resp_count(rep) != CV_CHECK_BEGIN_R_OK_ELEMENTS)
        return CV_EPROTO;
    /* A definition that does not decode is as none: the decision says so
     * ("no stored definition"), as it says of a missing one. */
    const char *rdef = cv_resp_str(rep, CV_CHECK_BEGIN_R_RDEF);
    if (rdef[0])
        cv_rdef_decode(&l->rdef, rdef, NULL, 0);
    int sealed = 0;
    l->params = cv_unseal_loads(cv_resp_str(rep, CV_CHECK_BEGIN_R_PARAMS), &sealed, NULL, 0);
    if (l->params && !json_is_object(l->params)) {
        json_decref(l->params);
        l->params = NULL;
    }
    if (cv_record_parse(&l->rec, cv_resp_at(rep, CV_CHECK_BEGIN_R_RECORD)) != 0)
        sealed = CV_EIO;
    l->sp = sync_point_of(cv_resp_at(rep, CV_CHECK_BEGIN_R_SP), &sealed);
    l->graph_entry = strdup(cv_resp_str(rep, CV_CHECK_BEGIN_R_GRAPH_ENTRY));
    snprintf(l->stack_name, sizeof(l->stack_name), "%s",
             cv_resp_str(rep, CV_CHECK_BEGIN_R_STACK_NAME));
    if (l->params)
        cv_record_pseudo_params(l->params, job->stack, l->stack_name);
    l->depth = atoi(cv_resp_str(rep, CV_CHECK_BEGIN_R_DEPTH));
    const char *files = cv_resp_str(rep, CV_CHECK_BEGIN_R_FILES);
    l->files = files[0] ? json_loads(files, 0, NULL) : NULL;
    snprintf(l->stack_action, sizeof(l->stack_action), "%s",
             cv_resp_str(rep, CV_CHECK_BEGIN_R_STACK_ACTION));
    return sealed;
}

void cv_check_loaded_clear(cv_check_loaded_t *l)
{
    cv_rdef_clear(&l->rdef);
    json_decref(l->params);
    json_decref(l->sp);
    json_decref(l->files);
    free(l->graph_entry);
    cv_record_clear(&l->rec);
    memset(l, 0, sizeof(*l));
}

cv_check_input_t cv_check_input(const cv_check_loaded_t *l, const cv_msg_t *job, double now,
                                const char *load_error)
{
    return (cv_check_input_t){.job = job,
                              .rec = &l->rec,
                              .rdef = cv_rdef_defined(&l->rdef) ? &l->rdef : NULL,
                              .params = l->params,
                              .sp = l->sp,
                              .files = l->files,
                              .stack_action = l->stack_action,
                              .now = now,
                              .load_error = load_error};
}

/* ---- the type operations ---- */

/* Starts the delete of one replaced version (an entry of out->old, which
 * gets the type's data); non-zero with the reason in *reason when not. */
static int remove_replaced(const cv_msg_t *job, const cv_record_t *rec, json_t *entry, double now,
                           cv_check_plan_fn plan, void *ud, char *reason, size_t reasonsz)
{
    const char *type_name = json_string_value(json_object_get(entry, "type"));
    const cv_rtype_t *type = cv_rtype_lookup(type_name);
    const char *uuid = json_string_value(json_object_get(entry, "uuid"));
    cv_version_t v = {.stack = job->stack,
                      .resource = job->resource,
                      .uuid = uuid,
                      .physical_id = json_string_value(json_object_get(entry, "physical_id")),
                      .props = json_object_get(entry, "props"),
                      .data = json_object_get(entry, "data"),
                      .attrs = json_object_get(entry, "attrs"),
                      .started = rec->started};
    cv_rstate_t st;
    cv_record_state(&st, &v, now);
    int rc = type->remove(&st);
    if (rc == 0 && type->nested && plan) {
        char token[96];
        cv_check_replaced_token(token, sizeof(token), uuid, rec->version);
        rc = plan(ud, "DELETE", st.physical_id, type_name, NULL, st.data, token, st.reason,
                  sizeof(st.reason));
    }
    if (rc == 0)
        json_object_set(entry, "data", st.data);
    else
        snprintf(reason, reasonsz, "%s", st.reason);
    cv_record_state_clear(&st);
    return rc;
}

/* The type's operation on the version the outcome acts on. */
static int operate(const cv_msg_t *job, const cv_record_t *rec, const cv_check_outcome_t *out,
                   double now, cv_rstate_t *st)
{
    cv_version_t v = {.stack = job->stack,
                      .resource = job->resource,
                      .uuid = out->uuid,
                      .physical_id = rec->physical_id,
                      .props = rec->props,
                      .data = rec->data,
                      .attrs = rec->attrs,
                      .started = rec->started};
    switch (out->kind) {
    case CV_CHECK_CREATE:
    case CV_CHECK_REPLACE:
        v.physical_id = NULL;
        v.data = v.attrs = NULL;
        v.props = out->props;
        cv_record_state(st, &v, now);
        if (out->external_id[0])
            return cv_rtype_adopt(st, out->external_id);
        return out->type->create(st);
    case CV_CHECK_UPDATE:
        v.props = out->props;
        cv_record_state(st, &v, now);
        st->old_props = rec->props;
        return out->type->update(st);
    case CV_CHECK_DELETE_CURRENT:
        cv_record_state(st, &v, now);
        return out->type->remove(st);
    case CV_CHECK_STEP:
        /* The child's next traversal is planned from the advanced walk. */
        cv_record_state(st, &v, now);
        return cv_rtype_walk_next(st->data);
    case CV_CHECK_RESTORE:
        /* No action: the state is the restored version's, to be recorded. */
        v.physical_id = json_string_value(json_object_get(out->restored, "physical_id"));
        v.data = json_object_get(out->restored, "data");
        v.attrs = json_object_get(out->restored, "attrs");
        cv_record_state(st, &v, now);
        return 0;
    default:
        return 0; /* DELETE_REPLACED: the replaced versions only */
    }
}

int cv_check_act(const cv_msg_t *job, const cv_record_t *rec, cv_check_outcome_t *out, double now,
                 cv_rstate_t *st, cv_check_plan_fn plan, void *ud)
{
    size_t i;
    json_t *index;
    json_array_foreach(out->deletes, i, index)
    {
        json_t *entry = json_array_get(out->old, (size_t)json_integer_value(index));
        if (remove_replaced(job, rec, entry, now, plan, ud, st->reason, sizeof(st->reason)) != 0)
            return CV_EFAILED;
    }
    if (operate(job, rec, out, now, st) != 0)
        return CV_EFAILED;
    if (!out->nested || !plan)
        return 0;
    /* A delete names the child the record names; a create or update the one
     * the type named. */
    bool deleting = out->kind == CV_CHECK_DELETE_CURRENT;
    if (!deleting && out->facade && st->data)
        json_object_set(st->data, "facade", out->facade);
    return plan(ud, out->child_op, deleting ? rec->physical_id : st->physical_id, out->type_name,
                deleting ? NULL : out->props, st->data, out->child_token, st->reason,
                sizeof(st->reason));
}

void cv_check_act_failed(cv_check_outcome_t *out, const cv_msg_t *job, const char *why)
{
    char action[sizeof(out->action)], reason[sizeof(out->reason)];
    snprintf(action, sizeof(action), "%s", out->action[0] ? out->action : "DELETE");
    snprintf(reason, sizeof(reason), "resources.%s: %s", job->resource, why);
    cv_check_outcome_clear(out);
    out->kind = CV_CHECK_FAIL;
    snprintf(out->status, sizeof(out->status), "%s_FAILED", action);
    snprintf(out->action, sizeof(out->action), "%s", action);
    snprintf(out->reason, sizeof(out->reason), "%s", reason);
}

/* ---- the write that records it ---- */

static char *dump_or_empty(const json_t *j)
{
    return j ? cv_record_json(j) : strdup("");
}

void cv_check_finish_of(cv_check_finish_t *f, cv_check_written_t *w, const cv_msg_t *job,
                        const cv_check_loaded_t *l, const cv_check_outcome_t *out,
                        const cv_rstate_t *st, const char *token)
{
    bool current = out->status[0] != '\0';
    bool restoring = out->kind == CV_CHECK_RESTORE, stepping = out->kind == CV_CHECK_STEP;
    /* A step goes on with the action: its start, no event of its own. */
    snprintf(w->started, sizeof(w->started), "%.6f",
             stepping ? l->rec.started
                      : json_number_value(json_object_get(out->restored, "started")));
    cv_u64_str(w->traversal, l->rec.traversal);
    const json_t *attrs = st && st->attrs ? st->attrs : l->rec.attrs;
    const json_t *data = st && st->data ? st->data : l->rec.data;
    w->props = cv_record_json_sealed(out->props ? out->props : l->rec.props);
    w->attrs = cv_record_json_sealed(attrs);
    w->data = cv_record_json(data);
    w->dependencies =
        current && job->phase == CV_PHASE_UPDATE ? cv_rdef_depends_json(&l->rdef) : strdup("");
    w->old = out->old ? cv_record_old_json(out->old) : strdup("");
    w->events = dump_or_empty(out->events);
    const char *policy =
        cv_rdef_defined(&l->rdef) ? cv_rdef_policy_name(l->rdef.deletion_policy) : l->rec.policy;
    *f =
        (cv_check_finish_t){.job = job,
                            .version = l->rec.version,
                            .token = token,
                            .status = out->status,
                            .action = out->action,
                            .reason = out->reason,
                            .physical_id = st ? st->physical_id : "",
                            .uuid = out->uuid,
                            .type = out->type_name,
                            .declared_type = out->declared_type,
                            .props = w->props,
                            .attrs = w->attrs,
                            .data = w->data,
                            .event_status = current && !restoring && !stepping ? "IN_PROGRESS" : "",
                            .started = restoring || stepping ? w->started : "",
                            .traversal = out->older ? w->traversal : NULL,
                            .dependencies = w->dependencies,
                            .policy = policy ? policy : "Delete",
                            .old = w->old,
                            .events = w->events};
}

void cv_check_done_of(cv_node_done_t *d, cv_check_written_t *w, const cv_msg_t *job,
                      const cv_check_loaded_t *l, const cv_check_outcome_t *out, const char *token)
{
    memset(w, 0, sizeof(*w));
    w->old = out->old ? cv_record_old_json(out->old) : strdup("");
    w->events = dump_or_empty(out->events);
    *d = (cv_node_done_t){.job = job,
                          .graph_entry = l->graph_entry,
                          .version = l->rec.version,
                          .status = out->status,
                          .reason = out->reason,
                          .pass = out->pass,
                          .physical_id = l->rec.physical_id,
                          .action = out->action,
                          .old = w->old,
                          .events = w->events,
                          .lease_token = token,
                          .publishing = true};
}

/* ---- an action that settled at once ---- */

/* A type whose look needs nothing read first: no child stack, no watched
 * resource, no cluster state (what only the observer reads). */
static bool looks_alone(const cv_check_outcome_t *out)
{
    const cv_rtype_t *t = out->type;
    return t && !t->nested && !t->watches && !cv_service_is(out->type_name);
}

static bool may_settle_at_once(const cv_msg_t *job, const cv_check_outcome_t *out)
{
    bool acted = out->kind == CV_CHECK_CREATE || out->kind == CV_CHECK_UPDATE ||
                 out->kind == CV_CHECK_REPLACE;
    return job->phase == CV_PHASE_UPDATE && !job->watch && acted && !out->external_id[0] &&
           cv_str_ends_with(out->status, "_IN_PROGRESS") && looks_alone(out);
}

/* The record as check_finish would leave it (json borrowed from l, out, st). */
static cv_record_t record_written(const cv_check_loaded_t *l, const cv_check_outcome_t *out,
                                  const cv_rstate_t *st, const cv_msg_t *job, double now)
{
    cv_record_t rec = l->rec;
    rec.exists = true;
    cv_str_copy(rec.status, sizeof(rec.status), out->status);
    cv_str_copy(rec.action, sizeof(rec.action), out->action);
    cv_str_copy(rec.type, sizeof(rec.type), out->type_name);
    cv_str_copy(rec.declared_type, sizeof(rec.declared_type), out->declared_type);
    cv_str_copy(rec.physical_id, sizeof(rec.physical_id), st->physical_id);
    cv_str_copy(rec.uuid, sizeof(rec.uuid), out->uuid);
    cv_u64_str(rec.version, strtoull(l->rec.version, NULL, 10) + 1);
    rec.traversal = job->traversal;
    rec.started = now;
    rec.props = out->props;
    rec.attrs = st->attrs;
    rec.data = st->data;
    if (out->old)
        rec.old = out->old;
    return rec;
}

bool cv_check_settled(const cv_msg_t *job, const cv_check_loaded_t *l,
                      const cv_check_outcome_t *out, const cv_rstate_t *st, double now,
                      cv_observe_outcome_t *obs)
{
    memset(obs, 0, sizeof(*obs));
    if (!may_settle_at_once(job, out))
        return false;
    cv_record_t rec = record_written(l, out, st, job, now);
    cv_msg_t seen = *job;
    seen.type = CV_MSG_OBSERVE;
    seen.version = strtoull(rec.version, NULL, 10);
    cv_observe_decide(&seen, &rec, NULL, now, obs);
    bool look = obs->kind == CV_OBSERVE_LOOK;
    cv_observe_outcome_clear(obs);
    if (!look)
        return false;
    /* The look the observer would take, on the state it would build. */
    cv_version_t v = {.stack = job->stack,
                      .resource = job->resource,
                      .uuid = rec.uuid,
                      .physical_id = rec.physical_id,
                      .props = rec.props,
                      .data = rec.data,
                      .attrs = rec.attrs,
                      .started = rec.started};
    cv_rstate_t seen_st;
    cv_record_state(&seen_st, &v, now);
    cv_observe_looks_t looks = {0};
    looks.current.observed = out->type->observe(&seen_st, cv_observe_action(&seen, &rec));
    looks.current.retry_at = seen_st.retry_at;
    looks.current.reason = seen_st.reason;
    looks.current.attrs = seen_st.attrs;
    looks.current.data = seen_st.data;
    cv_observe_decide(&seen, &rec, &looks, now, obs);
    cv_record_state_clear(&seen_st);
    if (obs->kind == CV_OBSERVE_COMPLETE)
        return true;
    cv_observe_outcome_clear(obs);
    memset(obs, 0, sizeof(*obs));
    return false;
}

void cv_check_written_clear(cv_check_written_t *w)
{
    free(w->props);
    free(w->attrs);
    free(w->data);
    free(w->dependencies);
    free(w->old);
    free(w->events);
    memset(w, 0, sizeof(*w));
}
