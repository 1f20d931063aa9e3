/*
 * What a CHECK job does to its resource, decided under the lease.
 *
 * Update node (the resource is in the definition):
 *   no record                          → create
 *   action already taken this traversal → observe it again (a redelivery)
 *   recorded version unusable (failed, being deleted, other type)
 *                                       → replace: create the new version first
 *   desired properties unchanged        → in progress: adopt the running action
 *                                         (observe it for this traversal — how an
 *                                         update overtakes a stuck create, H16);
 *                                         complete: done, attributes passed on
 *   changed                             → update in place, or replace when a
 *                                         changed property does not allow updates
 * Cleanup node (the resource had a record when the traversal started):
 *   delete the replaced versions and, when the resource left the definition,
 *   the current one (Retain: drop them from the stack, keep them in reality).
 */
#include "engine_check.h"

#include "cv_error.h"
#include "cv_keys.h"
#include "cv_log.h"
#include "cv_str.h"
#include "cv_template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lookup_parent(void *ud, const char *name, const char **physical_id,
                         const json_t **attributes)
{
    check_t *c = ud;
    char node[CV_NAME_MAX + 2];
    cv_node_name(node, sizeof(node), CV_PHASE_UPDATE, name);
    json_t *d = json_object_get(c->sp, node);
    if (!d)
        return CV_ENOENT;
    *physical_id = json_string_value(json_object_get(d, "id"));
    *attributes = json_object_get(d, "attrs");
    return 0;
}

/* Desired properties: the template's, with parameters and the data the
 * parents passed through the sync point; then the type's schema. */
static int desired_properties(check_t *c, char *err, size_t errsz)
{
    char where[CV_NAME_MAX + 32];
    snprintf(where, sizeof(where), "resources.%s.properties", c->msg.resource);
    cv_resolve_ctx_t rctx = {c->params, lookup_parent, c};
    json_t *resolved =
        cv_intrinsic_resolve(json_object_get(c->rdef, "properties"), &rctx, where, err, errsz);
    if (!resolved)
        return CV_EVALIDATE;
    c->props = cv_rtype_apply_schema(c->type, resolved, where, false, err, errsz);
    json_decref(resolved);
    return c->props ? 0 : CV_EVALIDATE;
}

/* The state a type operation works on, from a recorded version. */
static void state_from(check_t *c, cv_rstate_t *st, const char *physical_id, const json_t *data,
                       const json_t *attrs)
{
    json_decref(st->data);
    json_decref(st->attrs);
    memset(st, 0, sizeof(*st));
    st->stack_name = c->msg.stack;
    st->resource_name = c->msg.resource;
    st->uuid = c->uuid;
    st->now = cv_now();
    st->action_started = c->rec.started;
    snprintf(st->physical_id, sizeof(st->physical_id), "%s", physical_id);
    st->data = data ? json_deep_copy(data) : json_object();
    st->attrs = attrs ? json_deep_copy(attrs) : json_object();
}

static void fail_action(check_t *c, const char *action, const char *why)
{
    char status[32], reason[CV_REASON_MAX + CV_NAME_MAX + 32];
    snprintf(status, sizeof(status), "%s_FAILED", action);
    snprintf(reason, sizeof(reason), "resources.%s: %s", c->msg.resource, why);
    cv__check_fail(c, status, action, reason);
}

/* ---- update nodes ---- */

/* The recorded version, as an entry of the replaced-versions list. */
static json_t *version_entry(const cv_record_t *rec)
{
    return json_pack("{s:s, s:s, s:s, s:O, s:O, s:O, s:s, s:s, s:f}", "uuid", rec->uuid,
                     "physical_id", rec->physical_id, "type", rec->type, "props", rec->props,
                     "attrs", rec->attrs, "data", rec->data, "status", rec->status, "policy",
                     rec->policy[0] ? rec->policy : "Delete", "started", rec->started);
}

/* A nested version's child-stack traversal, planned for when the action is
 * recorded; false when it cannot be (the action failed: reason in st). */
static bool plan_child(check_t *c, const char *op, const char *child, const json_t *props,
                       json_t *data, const char *suffix)
{
    char token[96];
    snprintf(token, sizeof(token), "%s:%s%s", c->uuid, c->rec.version, suffix);
    return cv__nested_plan(c, op, child, c->type_name, props, data, token, c->st.reason,
                           sizeof(c->st.reason)) == 0;
}

static void do_create(check_t *c, bool replacing)
{
    cv_record_uuid(c->uuid, c->msg.stack, c->msg.resource, c->msg.traversal);
    state_from(c, &c->st, "", NULL, NULL);
    c->st.props = c->props;
    if (c->type->create(&c->st) != 0 ||
        (c->type->nested &&
         !plan_child(c, "CREATE", c->st.physical_id, c->props, c->st.data, ""))) {
        fail_action(c, "CREATE", c->st.reason);
        return;
    }
    char reason[CV_PHYSID_MAX + 32] = "state changed";
    if (replacing) {
        c->old = json_deep_copy(c->rec.old);
        json_array_append_new(c->old, version_entry(&c->rec));
        snprintf(reason, sizeof(reason), "replacing %s", c->rec.physical_id);
    }
    cv__check_record(c, "CREATE_IN_PROGRESS", "CREATE", reason);
}

static void do_update(check_t *c)
{
    snprintf(c->uuid, sizeof(c->uuid), "%s", c->rec.uuid);
    state_from(c, &c->st, c->rec.physical_id, c->rec.data, c->rec.attrs);
    c->st.props = c->props;
    c->st.old_props = c->rec.props;
    if (c->type->update(&c->st) != 0 ||
        (c->type->nested &&
         !plan_child(c, "UPDATE", c->st.physical_id, c->props, c->st.data, ""))) {
        fail_action(c, "UPDATE", c->st.reason);
        return;
    }
    cv__check_record(c, "UPDATE_IN_PROGRESS", "UPDATE", "state changed");
}

static void pass_on_unchanged(check_t *c)
{
    json_t *pass = json_pack("{s:s, s:O}", "id", c->rec.physical_id, "attrs", c->rec.attrs);
    char *text = json_dumps(pass, JSON_COMPACT);
    json_decref(pass);
    cv__check_done(c, "", "", c->rec.action, text);
    free(text);
}

/* A version can be kept (updated or adopted) only while it is being, or has
 * been, created or updated successfully. */
static bool usable(const check_t *c)
{
    const char *s = c->rec.status;
    return strcmp(c->rec.type, c->type_name) == 0 && !cv_str_ends_with(s, "_FAILED") &&
           (cv_str_starts_with(s, "CREATE_") || cv_str_starts_with(s, "UPDATE_"));
}

/* A nested stack whose template or template files changed (a file edited,
 * not the properties) is updated too, as in Heat. */
static bool nested_template_changed(check_t *c)
{
    if (!c->type->nested)
        return false;
    json_t *data = json_deep_copy(c->rec.data), *tpl = NULL, *params = NULL;
    char err[256], digest[24] = "";
    if (c->type->nested->definition(c->type_name, c->props, c->files, data, &tpl, &params, err,
                                    sizeof(err)) == 0)
        cv__nested_digest(tpl, c->files, digest);
    const char *was = json_string_value(json_object_get(c->rec.data, "template_digest"));
    json_decref(data);
    json_decref(tpl);
    json_decref(params);
    return !was || strcmp(was, digest) != 0;
}

void cv__converge_update_node(check_t *c)
{
    if (c->rec.exists && c->rec.traversal == c->msg.traversal) {
        /* A duplicate or redelivered job: the action is recorded already. */
        if (cv_str_ends_with(c->rec.status, "_FAILED"))
            cv__check_release_and_end(c);
        else
            cv__check_hand_off(c, c->rec.version);
        return;
    }
    char err[1024];
    const char *action = c->rec.exists ? "UPDATE" : "CREATE";
    if (desired_properties(c, err, sizeof(err)) != 0) {
        char status[32];
        snprintf(status, sizeof(status), "%s_FAILED", action);
        cv__check_fail(c, status, action, err);
        return;
    }
    if (!c->rec.exists) {
        do_create(c, false);
        return;
    }
    if (!usable(c)) {
        do_create(c, true);
        return;
    }
    if (json_equal(c->rec.props, c->props) && !nested_template_changed(c)) {
        if (cv_str_ends_with(c->rec.status, "_IN_PROGRESS"))
            cv__check_hand_off(c, c->rec.version);
        else
            pass_on_unchanged(c);
        return;
    }
    if (cv_rtype_needs_replacement(c->type, c->rec.props, c->props))
        do_create(c, true);
    else
        do_update(c);
}

/* ---- cleanup nodes ---- */

static json_t *event(const char *physical_id, const char *status, const char *reason)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "physical_id", physical_id, "action", "DELETE",
                     "status", status, "reason", reason);
}

/* Starts the delete of one replaced version; false when it cannot start. */
static bool remove_version(check_t *c, json_t *entry, json_t *events)
{
    const char *pid = json_string_value(json_object_get(entry, "physical_id"));
    const char *policy = json_string_value(json_object_get(entry, "policy"));
    if (policy && strcmp(policy, "Retain") == 0) {
        json_object_set_new(entry, "status", json_string("RETAINED"));
        json_array_append_new(events,
                              event(pid, "COMPLETE", "retained: deletion_policy is Retain"));
        return true;
    }
    const char *type_name = json_string_value(json_object_get(entry, "type"));
    const cv_rtype_t *type = cv_rtype_lookup(type_name);
    cv_rstate_t st = {0};
    snprintf(c->uuid, sizeof(c->uuid), "%s", json_string_value(json_object_get(entry, "uuid")));
    state_from(c, &st, pid ? pid : "", json_object_get(entry, "data"),
               json_object_get(entry, "attrs"));
    st.props = json_object_get(entry, "props");
    bool ok = type && type->remove(&st) == 0;
    if (ok && type->nested) {
        char token[96];
        snprintf(token, sizeof(token), "%s:%s:old", c->uuid, c->rec.version);
        ok = cv__nested_plan(c, "DELETE", st.physical_id, type_name, NULL, st.data, token,
                             st.reason, sizeof(st.reason)) == 0;
    }
    if (ok) {
        json_object_set_new(entry, "status", json_string("DELETE_IN_PROGRESS"));
        json_object_set_new(entry, "started", json_real(cv_now()));
        json_object_set(entry, "data", st.data);
        json_array_append_new(events, event(pid, "IN_PROGRESS", "state changed"));
    } else {
        snprintf(c->st.reason, sizeof(c->st.reason), "%s",
                 type ? st.reason : "unknown resource type");
    }
    json_decref(st.data);
    json_decref(st.attrs);
    return ok;
}

static bool is_status(const json_t *entry, const char *status)
{
    const char *s = json_string_value(json_object_get(entry, "status"));
    return s && strcmp(s, status) == 0;
}

/*
 * Starts the delete of every replaced version not already being deleted
 * (a delete already running — a redelivery, or a superseded traversal's
 * cleanup — is observed, not started again). Sets *started when it started
 * or retained anything, i.e. when there is something new to record.
 */
static int remove_replaced(check_t *c, bool *started)
{
    c->old = json_deep_copy(c->rec.old);
    c->events = json_array();
    *started = false;
    size_t i;
    json_t *e;
    json_array_foreach(c->old, i, e)
    {
        if (is_status(e, "DELETE_IN_PROGRESS"))
            continue;
        if (!remove_version(c, e, c->events))
            return CV_EFAILED;
        *started = true;
    }
    /* Retained versions leave the stack at once. */
    for (i = json_array_size(c->old); i-- > 0;)
        if (is_status(json_array_get(c->old, i), "RETAINED"))
            json_array_remove(c->old, i);
    return 0;
}

static void remove_current(check_t *c)
{
    if (strcmp(c->rec.policy, "Retain") == 0) {
        cv__check_done(c, "DELETED", "retained: deletion_policy is Retain", "DELETE", "{}");
        return;
    }
    snprintf(c->uuid, sizeof(c->uuid), "%s", c->rec.uuid);
    state_from(c, &c->st, c->rec.physical_id, c->rec.data, c->rec.attrs);
    c->st.props = c->rec.props;
    if (c->type->remove(&c->st) != 0 ||
        (c->type->nested &&
         !plan_child(c, "DELETE", c->rec.physical_id, NULL, c->st.data, ":delete"))) {
        fail_action(c, "DELETE", c->st.reason);
        return;
    }
    cv__check_record(c, "DELETE_IN_PROGRESS", "DELETE", "state changed");
}

void cv__converge_cleanup_node(check_t *c)
{
    if (!c->rec.exists) {
        cv__check_done(c, "", "", "DELETE", "{}");
        return;
    }
    bool started;
    if (remove_replaced(c, &started) != 0) {
        fail_action(c, "DELETE", c->st.reason);
        return;
    }
    bool wanted = c->rdef != NULL; /* the resource is in this traversal's definition */
    bool current_deleting = strcmp(c->rec.status, "DELETE_IN_PROGRESS") == 0;
    if (!wanted && !current_deleting) {
        remove_current(c);
        return;
    }
    if (started)
        cv__check_record(c, "", "DELETE", "state changed");
    else if (current_deleting || json_array_size(c->old) > 0)
        cv__check_hand_off(c, c->rec.version); /* only deletes already running */
    else
        cv__check_done(c, "", "", "DELETE", "{}"); /* nothing replaced, or all retained */
}
