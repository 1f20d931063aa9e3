/*
 * The CHECK decision (cv_decide.h): what to do with one graph node, from
 * what was loaded under the lease. The table is at the top of cv_decide.h.
 */
#include "cv_decide.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETAINED_REASON "retained: deletion_policy is Retain"

static const char *kind_names[] = {
#define CV_CHECK_KIND_NAME(name) #name,
    CV_CHECK_KIND_MAP(CV_CHECK_KIND_NAME)
#undef CV_CHECK_KIND_NAME
};

const char *cv_check_kind_name(cv_check_kind_t kind)
{
    return (size_t)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "UNKNOWN";
}

void cv_check_outcome_clear(cv_check_outcome_t *out)
{
    json_decref(out->props);
    json_decref(out->old);
    json_decref(out->events);
    json_decref(out->deletes);
    json_decref(out->restored);
    json_decref(out->facade);
    free(out->pass);
    out->props = out->old = out->events = out->deletes = out->restored = out->facade = NULL;
    out->pass = NULL;
}

void cv_check_template_digest(const json_t *tpl, const json_t *files, char *out)
{
    /* ENCODE_ANY: an OS::Heat::Stack's template is its text until parsed. */
    char *a = tpl ? json_dumps(tpl, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
    char *b = files ? json_dumps(files, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf(out, 17, "%016llx", (unsigned long long)cv_hash_more(cv_hash_str(a), b));
    free(a);
    free(b);
}

/* Which parameters the user named (CV_ENV_GIVEN) is no part of what a
 * nested stack inherits: a change of it alone updates no nested stack. */
void cv_check_env_digest(const json_t *env, char *out)
{
    json_t *seen = json_object_get(env, CV_ENV_GIVEN) ? json_copy((json_t *)env) : NULL;
    json_object_del(seen, CV_ENV_GIVEN);
    char *a = env ? json_dumps(seen ? seen : env, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf(out, 17, "%016llx", (unsigned long long)cv_hash_str(a));
    free(a);
    json_decref(seen);
}

void cv_check_replaced_token(char *out, size_t size, const char *entry_uuid,
                             const char *record_version)
{
    snprintf(out, size, "%s:%s:old", entry_uuid, record_version);
}

static void set_kind(cv_check_outcome_t *out, cv_check_kind_t kind, const char *status,
                     const char *action, const char *reason)
{
    out->kind = kind;
    snprintf(out->status, sizeof(out->status), "%s", status);
    snprintf(out->action, sizeof(out->action), "%s", action);
    snprintf(out->reason, sizeof(out->reason), "%s", reason);
}

/* FAIL with <action>_FAILED and `fmt` as the reason. */
static void fail(cv_check_outcome_t *out, const char *action, const char *fmt, ...)
{
    char status[32];
    snprintf(status, sizeof(status), "%s_FAILED", action);
    set_kind(out, CV_CHECK_FAIL, status, action, "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
    va_end(ap);
}

/* The action a failure before any decision is recorded as. */
static const char *default_action(const cv_check_input_t *in)
{
    if (in->job->phase == CV_PHASE_CLEANUP)
        return "DELETE";
    return in->rec->exists ? "UPDATE" : "CREATE";
}

/* What the handler plans for a nested version's child stack. */
static void plan_child(const cv_check_input_t *in, cv_check_outcome_t *out, const char *op,
                       const char *suffix)
{
    out->nested = out->type->nested != NULL;
    if (!out->nested)
        return;
    snprintf(out->child_op, sizeof(out->child_op), "%s", op);
    snprintf(out->child_token, sizeof(out->child_token), "%s:%s%s", out->uuid, in->rec->version,
             suffix);
}

/* ---- update nodes ---- */

typedef struct parents {
    const json_t *sp;
} parents_t;

static int lookup_parent(void *ud, const char *name, const char **physical_id,
                         const json_t **attributes)
{
    const parents_t *p = ud;
    char node[CV_NAME_MAX + 2];
    cv_node_name(node, sizeof(node), CV_PHASE_UPDATE, name);
    json_t *d = json_object_get(p->sp, node);
    if (!d)
        return CV_ENOENT;
    *physical_id = json_string_value(json_object_get(d, "id"));
    *attributes = json_object_get(d, "attrs");
    return 0;
}

/* Desired properties: the template's, with parameters and the data the
 * parents passed through the sync point; then the type's schema. */
static json_t *desired_properties(const cv_check_input_t *in, const cv_rtype_t *type, char *errstr,
                                  size_t errstr_size)
{
    char where[CV_NAME_MAX + 32];
    snprintf(where, sizeof(where), "resources.%s.properties", in->job->resource);
    parents_t parents = {in->sp};
    cv_resolve_ctx_t rctx = {in->params, lookup_parent, &parents};
    json_t *resolved = cv_intrinsic_resolve(in->rdef->props, &rctx, where, errstr, errstr_size);
    if (!resolved)
        return NULL;
    json_t *props = cv_rtype_apply_schema(type, resolved, where, false, errstr, errstr_size);
    json_decref(resolved);
    return props;
}

/* What a nested type's child reads through resource_facade: the
 * resource's metadata and update_policy resolved like its properties, and
 * its deletion_policy (Heat's ResourceFacade). */
static json_t *facade(const cv_check_input_t *in, char *errstr, size_t errstr_size)
{
    char where[CV_NAME_MAX + 32];
    parents_t parents = {in->sp};
    cv_resolve_ctx_t rctx = {in->params, lookup_parent, &parents};
    snprintf(where, sizeof(where), "resources.%s.metadata", in->job->resource);
    json_t *meta = cv_intrinsic_resolve(in->rdef->metadata, &rctx, where, errstr, errstr_size);
    snprintf(where, sizeof(where), "resources.%s.update_policy", in->job->resource);
    const json_t *up = in->rdef->update_policy;
    json_t *update =
        meta && up ? cv_intrinsic_resolve(up, &rctx, where, errstr, errstr_size) : json_object();
    json_t *f = meta && update ? json_pack("{s:O, s:s, s:O}", "metadata", meta, "deletion_policy",
                                           cv_rdef_policy_name(in->rdef->deletion_policy),
                                           "update_policy", update)
                               : NULL;
    json_decref(meta);
    json_decref(update);
    return f;
}

/* The recorded version, as an entry of the replaced-versions list. */
static json_t *version_entry(const cv_record_t *rec)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:O, s:O, s:O, s:s, s:s, s:f}", "uuid", rec->uuid,
                     "physical_id", rec->physical_id, "type", rec->type, "declared_type",
                     cv_record_declared_type(rec), "props", rec->props, "attrs", rec->attrs, "data",
                     rec->data, "status", rec->status, "policy",
                     rec->policy[0] ? rec->policy : "Delete", "started", rec->started);
}

/* A version can be kept (updated or adopted) only while it is being, or has
 * been, created or updated successfully, by the same implementation: Heat
 * replaces a resource whose class changes (update_convergence: `type(self)
 * is not new_res_type`), as when the registry maps its type elsewhere, and
 * every template file is one class (TemplateResource), so a template
 * resource given another file keeps its child stack and updates it. */
static bool usable(const cv_record_t *rec, const char *type_name)
{
    const char *s = rec->status;
    const cv_rtype_t *recorded = cv_rtype_lookup(rec->type);
    return recorded && recorded == cv_rtype_lookup(type_name) && !cv_str_ends_with(s, "_FAILED") &&
           (cv_str_starts_with(s, "CREATE_") || cv_str_starts_with(s, "UPDATE_"));
}

/* A nested stack whose template or template files changed (a file edited,
 * not the properties), or whose environment changed (an update with new
 * parameter_defaults or resource_registry: Heat's child environment is part
 * of the child's definition), is updated too, as in Heat. A version recorded
 * before environments were digested has no "env_digest": taken as the same
 * environment, so that it is not updated for nothing. */
static bool nested_template_changed(const cv_check_input_t *in, const cv_check_outcome_t *out)
{
    if (!out->type->nested)
        return false;
    json_t *data = json_deep_copy(in->rec->data), *tpl = NULL, *params = NULL;
    char err[256], digest[24] = "";
    if (data && out->facade)
        json_object_set(data, "facade", out->facade);
    if (out->type->nested->definition(out->type_name, out->props, in->files, data, &tpl, &params,
                                      err, sizeof(err)) == 0)
        cv_check_template_digest(tpl, in->files, digest);
    const char *was = json_string_value(json_object_get(in->rec->data, "template_digest"));
    const char *env_was = json_string_value(json_object_get(in->rec->data, "env_digest"));
    char env_digest[24];
    cv_check_env_digest(in->rdef->env, env_digest);
    json_decref(data);
    json_decref(tpl);
    json_decref(params);
    return !was || strcmp(was, digest) != 0 || (env_was && strcmp(env_was, env_digest) != 0);
}

static void create(const cv_check_input_t *in, cv_check_outcome_t *out, bool replacing)
{
    const cv_record_t *rec = in->rec;
    cv_record_uuid(out->uuid, in->job->stack, in->job->resource, in->job->traversal);
    if (!replacing) {
        set_kind(out, CV_CHECK_CREATE, "CREATE_IN_PROGRESS", "CREATE", "state changed");
    } else {
        /* Heat's new version: "state changed", as any create. */
        set_kind(out, CV_CHECK_REPLACE, "CREATE_IN_PROGRESS", "CREATE", "state changed");
        out->old = json_deep_copy(rec->old);
        json_array_append_new(out->old, version_entry(rec));
    }
    plan_child(in, out, "CREATE", "");
}

/* Heat finds that changed properties need a replacement inside the
 * update's action recorder (Resource.update: _prepare_update_props, or the
 * type's handle_update, raises UpdateReplace), which writes the version's
 * UPDATE IN_PROGRESS, then UPDATE COMPLETE with the exception's text:
 * written before the replacement's own CREATE event ("first"). */
static void update_refused_events(const cv_check_input_t *in, cv_check_outcome_t *out)
{
    char why[CV_NAME_MAX + 48];
    snprintf(why, sizeof(why), "The Resource %s requires replacement.", in->job->resource);
    out->events =
        json_pack("[{s:s, s:s, s:s, s:s, s:b}, {s:s, s:s, s:s, s:s, s:b}]", "physical_id",
                  in->rec->physical_id, "action", "UPDATE", "status", "IN_PROGRESS", "reason",
                  "state changed", "first", 1, "physical_id", in->rec->physical_id, "action",
                  "UPDATE", "status", "COMPLETE", "reason", why, "first", 1);
}

/* Successors see the reference id (get_resource), not the physical id. */
static void pass_on_unchanged(const cv_record_t *rec, const char *name, cv_check_outcome_t *out)
{
    set_kind(out, CV_CHECK_DONE, "", rec->action, "");
    const char *ref = cv_rtype_reference_id(rec->type, name, rec->physical_id, rec->attrs);
    out->pass = cv_record_pass_json(ref, rec->attrs);
}

/* ---- external_id (Heat's adoption) ---- */

/* The resolved external_id of the definition into `ext` ("" when none);
 * false with the outcome a FAIL when it does not resolve to a string. */
static bool external_id_of(const cv_check_input_t *in, cv_check_outcome_t *out, char *ext,
                           size_t size)
{
    ext[0] = '\0';
    const json_t *v = in->rdef->external_id;
    if (!v)
        return true;
    char where[CV_NAME_MAX + 32], err[512];
    snprintf(where, sizeof(where), "resources.%s.external_id", in->job->resource);
    parents_t parents = {in->sp};
    cv_resolve_ctx_t rctx = {in->params, lookup_parent, &parents};
    json_t *id = cv_intrinsic_resolve(v, &rctx, where, err, sizeof(err));
    if (id && !json_is_null(id) && !json_is_string(id))
        snprintf(err, sizeof(err), "Resource %s external_id type must be string",
                 in->job->resource);
    if (!id || (!json_is_null(id) && !json_is_string(id))) {
        fail(out, default_action(in), "%s", err);
        json_decref(id);
        return false;
    }
    snprintf(ext, size, "%s", json_is_string(id) ? json_string_value(id) : "");
    json_decref(id);
    return true;
}

/* As Heat's Resource.create and update: an external resource is adopted,
 * never created; a recorded one with the same external_id is left as it is
 * whatever its properties; adding, removing or changing the external_id of
 * a recorded resource is not supported. */
static void decide_external(const cv_check_input_t *in, cv_check_outcome_t *out, const char *ext)
{
    const cv_record_t *rec = in->rec;
    const char *adopted = rec->exists ? cv_rtype_adopted_id(rec->data) : NULL;
    if (!rec->exists && out->type->nested) {
        fail(out, "CREATE", "resources.%s: external_id is not supported for %s", in->job->resource,
             out->type_name);
    } else if (!rec->exists) {
        cv_record_uuid(out->uuid, in->job->stack, in->job->resource, in->job->traversal);
        set_kind(out, CV_CHECK_CREATE, "ADOPT_IN_PROGRESS", "ADOPT", "state changed");
        snprintf(out->external_id, sizeof(out->external_id), "%s", ext);
    } else if (!adopted || strcmp(adopted, ext) != 0) {
        fail(out, "UPDATE",
             "NotSupported: resources.%s: Update to property external_id of %s (%s) is not "
             "supported.",
             in->job->resource, in->job->resource, out->type_name);
    } else if (cv_str_ends_with(rec->status, "_IN_PROGRESS")) {
        /* An older traversal's adoption not yet observed: watch it end. */
        out->kind = CV_CHECK_WAIT;
        snprintf(out->version, sizeof(out->version), "%s", rec->version);
    } else {
        pass_on_unchanged(rec, in->job->resource, out);
    }
}

/*
 * Heat's retrigger: an action an older traversal began is never cut short.
 * While its create or update is in flight this traversal only watches it
 * end (recorded as the older traversal's outcome, which never fails this
 * one) and then checks the node again; only a stack delete acts at once.
 */
static bool wait_for_older_action(const cv_check_input_t *in, cv_check_outcome_t *out)
{
    const cv_record_t *rec = in->rec;
    bool in_flight = cv_action_in_flight(rec);
    /* A stack delete and a cancel (its rollback: CANCEL) do not wait. */
    bool deleting = in->stack_action && (strcmp(in->stack_action, "DELETE") == 0 ||
                                         strcmp(in->stack_action, "CANCEL") == 0);
    if (!rec->exists || !in_flight || rec->traversal >= in->job->traversal || deleting)
        return false;
    out->kind = CV_CHECK_WAIT;
    snprintf(out->version, sizeof(out->version), "%s", rec->version);
    return true;
}

/* The replaced version a rollback, or an update over a failed replacement
 * (a manual rollback: the template given back), makes the resource again:
 * the newest one of the desired type and properties that is neither failed
 * nor being deleted. Heat restores the previous resource rather than create
 * one: its convergence picks the best existing version of a resource
 * (stack.py _get_best_existing_rsrc_db), where a failed one ranks below a
 * complete one it replaced. */
static bool rolling_back(const cv_check_input_t *in)
{
    return in->stack_action &&
           (strcmp(in->stack_action, "ROLLBACK") == 0 || strcmp(in->stack_action, "CANCEL") == 0);
}

static const json_t *restorable(const cv_check_input_t *in, const cv_check_outcome_t *out)
{
    if ((!rolling_back(in) && !cv_str_ends_with(in->rec->status, "_FAILED")) || out->type->nested)
        return NULL;
    for (size_t i = json_array_size(in->rec->old); i-- > 0;) {
        const json_t *e = json_array_get(in->rec->old, i);
        const char *type = json_string_value(json_object_get(e, "type"));
        const char *status = json_string_value(json_object_get(e, "status"));
        if (type && status && strcmp(type, out->type_name) == 0 &&
            !cv_str_ends_with(status, "_FAILED") && !cv_str_starts_with(status, "DELETE") &&
            json_equal(json_object_get(e, "props"), out->props))
            return e;
    }
    return NULL;
}

/* The restored version becomes current as it was (no action, no event);
 * the current one joins the replaced versions for the cleanup node. */
static void restore(const cv_check_input_t *in, cv_check_outcome_t *out, const json_t *entry)
{
    const char *status = json_string_value(json_object_get(entry, "status"));
    set_kind(
        out, CV_CHECK_RESTORE, status, cv_str_starts_with(status, "UPDATE") ? "UPDATE" : "CREATE",
        rolling_back(in) ? "restored by rollback" : "restored: the failed replacement is dropped");
    snprintf(out->uuid, sizeof(out->uuid), "%s", json_string_value(json_object_get(entry, "uuid")));
    out->restored = json_deep_copy(entry);
    out->old = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(in->rec->old, i, e)
    {
        if (e != entry)
            json_array_append(out->old, e);
    }
    json_array_append_new(out->old, version_entry(in->rec));
}

/* An observer saw the step of a walk end and its pause pass, at the
 * record version the job carries (cv_observe_step_job): nothing has
 * written the record since, and the action is still in flight. */
static bool step_due(const cv_check_input_t *in)
{
    const cv_record_t *rec = in->rec;
    return in->job->version != 0 && rec->exists && cv_action_in_flight(rec) &&
           strtoull(rec->version, NULL, 10) == in->job->version && cv_rtype_walk_pending(rec->data);
}

/* The walk's next step, on the recorded version as it is: its type, its
 * properties, its status (no event: the action goes on). */
static void step(const cv_check_input_t *in, cv_check_outcome_t *out)
{
    const cv_record_t *rec = in->rec;
    out->type = cv_rtype_lookup(rec->type);
    snprintf(out->type_name, sizeof(out->type_name), "%s", rec->type);
    snprintf(out->declared_type, sizeof(out->declared_type), "%s", cv_record_declared_type(rec));
    if (!out->type || !out->type->nested) {
        out->kind = CV_CHECK_END;
        return;
    }
    char status[sizeof(out->status)];
    cv_str_copy(status, sizeof(status), rec->status);
    set_kind(out, CV_CHECK_STEP, status, rec->action, rec->reason);
    snprintf(out->uuid, sizeof(out->uuid), "%s", rec->uuid);
    out->props = json_deep_copy(rec->props);
    out->older = rec->traversal != in->job->traversal;
    plan_child(in, out, "UPDATE", "");
}

static void decide_update(const cv_check_input_t *in, cv_check_outcome_t *out)
{
    const cv_record_t *rec = in->rec;
    if (step_due(in)) {
        step(in, out);
        return;
    }
    if (rec->exists && rec->traversal == in->job->traversal) {
        /* A duplicate or redelivered job: the action is recorded already. */
        if (cv_str_ends_with(rec->status, "_FAILED")) {
            out->kind = CV_CHECK_END;
        } else {
            out->kind = CV_CHECK_OBSERVE_AGAIN;
            snprintf(out->version, sizeof(out->version), "%s", rec->version);
        }
        return;
    }
    if (wait_for_older_action(in, out))
        return;
    char err[1024], ext[CV_PHYSID_MAX];
    if (!external_id_of(in, out, ext, sizeof(ext)))
        return;
    out->props = desired_properties(in, out->type, err, sizeof(err));
    if (out->props && out->type->nested && !(out->facade = facade(in, err, sizeof(err)))) {
        json_decref(out->props);
        out->props = NULL;
    }
    if (!out->props) {
        fail(out, default_action(in), "%s", err);
        return;
    }
    if (ext[0] || (rec->exists && cv_rtype_adopted_id(rec->data))) {
        decide_external(in, out, ext);
        return;
    }
    if (!rec->exists) {
        create(in, out, false);
        return;
    }
    /* Heat updates a resource whose definition changed, its type as written
     * included (`before != after.freeze()`). */
    bool unchanged = usable(rec, out->type_name) && json_equal(rec->props, out->props) &&
                     strcmp(cv_record_declared_type(rec), out->declared_type) == 0 &&
                     !nested_template_changed(in, out);
    const json_t *previous = unchanged ? NULL : restorable(in, out);
    if (previous) {
        restore(in, out, previous);
        return;
    }
    if (!usable(rec, out->type_name)) {
        create(in, out, true);
        return;
    }
    if (unchanged || out->type->never_updates) {
        pass_on_unchanged(rec, in->job->resource, out);
        return;
    }
    if (cv_rtype_needs_replacement(out->type, rec->props, out->props)) {
        create(in, out, true);
        update_refused_events(in, out);
        return;
    }
    set_kind(out, CV_CHECK_UPDATE, "UPDATE_IN_PROGRESS", "UPDATE", "state changed");
    snprintf(out->uuid, sizeof(out->uuid), "%s", rec->uuid);
    plan_child(in, out, "UPDATE", "");
}

/* ---- cleanup nodes ---- */

/* An event of the replaced version `entry`, named by its type as the
 * template wrote it (a version recorded before that was kept: its type). */
static json_t *delete_event(const json_t *entry, const char *status, const char *reason)
{
    const char *pid = json_string_value(json_object_get(entry, "physical_id"));
    const char *type = json_string_value(json_object_get(entry, "declared_type"));
    if (!type)
        type = json_string_value(json_object_get(entry, "type"));
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "physical_id", pid ? pid : "", "action", "DELETE",
                     "status", status, "reason", reason, "type", type ? type : "");
}

static bool has_status(const json_t *entry, const char *status)
{
    const char *s = json_string_value(json_object_get(entry, "status"));
    return s && strcmp(s, status) == 0;
}

/*
 * The replaced versions after this job: a delete already running (a
 * redelivery, or a superseded traversal's cleanup) is kept to be observed,
 * not started again; a retained version leaves the stack at once; every
 * other one is deleted now (listed in out->deletes). Returns how many were
 * deleted or retained (something new to record), or -1 after a FAIL.
 */
static int plan_replaced(const cv_check_input_t *in, cv_check_outcome_t *out)
{
    out->old = json_array();
    out->events = json_array();
    out->deletes = json_array();
    int changed = 0;
    size_t i;
    json_t *e;
    json_array_foreach(in->rec->old, i, e)
    {
        const char *policy = json_string_value(json_object_get(e, "policy"));
        if (has_status(e, "DELETE_IN_PROGRESS")) {
            json_array_append(out->old, e);
            continue;
        }
        changed++;
        if (policy && strcmp(policy, "Retain") == 0) {
            json_array_append_new(out->events, delete_event(e, "COMPLETE", RETAINED_REASON));
            continue;
        }
        if (!cv_rtype_lookup(json_string_value(json_object_get(e, "type")))) {
            fail(out, "DELETE", "resources.%s: The Resource Type (%s) could not be found.",
                 in->job->resource, json_string_value(json_object_get(e, "type")));
            return -1;
        }
        json_t *copy = json_deep_copy(e);
        json_object_set_new(copy, "status", json_string("DELETE_IN_PROGRESS"));
        json_object_set_new(copy, "started", json_real(in->now));
        json_array_append_new(out->deletes, json_integer((json_int_t)json_array_size(out->old)));
        json_array_append_new(out->old, copy);
        json_array_append_new(out->events, delete_event(e, "IN_PROGRESS", "state changed"));
    }
    return changed;
}

static void decide_cleanup(const cv_check_input_t *in, cv_check_outcome_t *out)
{
    const cv_record_t *rec = in->rec;
    if (!rec->exists) {
        set_kind(out, CV_CHECK_NOTHING, "", "DELETE", "");
        out->pass = strdup("{}");
        return;
    }
    if (wait_for_older_action(in, out))
        return;
    int changed = plan_replaced(in, out);
    if (changed < 0)
        return;
    bool wanted = in->rdef != NULL; /* the resource is in this traversal's definition */
    bool current_deleting = strcmp(rec->status, "DELETE_IN_PROGRESS") == 0;
    if (!wanted && !current_deleting) {
        if (strcmp(rec->policy, "Retain") == 0) {
            set_kind(out, CV_CHECK_RETAIN_CURRENT, "DELETED", "DELETE", RETAINED_REASON);
            out->pass = strdup("{}");
            return;
        }
        set_kind(out, CV_CHECK_DELETE_CURRENT, "DELETE_IN_PROGRESS", "DELETE", "state changed");
        snprintf(out->uuid, sizeof(out->uuid), "%s", rec->uuid);
        plan_child(in, out, "DELETE", ":delete");
        return;
    }
    if (changed > 0) {
        set_kind(out, CV_CHECK_DELETE_REPLACED, "", "DELETE", "state changed");
    } else if (current_deleting || json_array_size(out->old) > 0) {
        out->kind = CV_CHECK_OBSERVE_DELETES;
        snprintf(out->version, sizeof(out->version), "%s", rec->version);
    } else {
        set_kind(out, CV_CHECK_NOTHING, "", "DELETE", ""); /* none replaced, or all retained */
        out->pass = strdup("{}");
    }
}

/* ---- restricted actions ---- */

/*
 * Heat's ResourceActionRestricted: an update or a replacement that the
 * environment's registry restricts for the resource (carried in its
 * definition as "restricted_actions") fails before anything changes. The
 * FAIL has no status, so the record keeps the one it has and only an event
 * says why; the traversal fails as any failure fails it.
 */
static void apply_restrictions(const cv_check_input_t *in, cv_check_outcome_t *out)
{
    bool updating = out->kind == CV_CHECK_UPDATE, replacing = out->kind == CV_CHECK_REPLACE;
    if (!(updating && in->rdef->restrict_update) && !(replacing && in->rdef->restrict_replace))
        return;
    const char *action = updating ? "update" : "replace";
    const cv_rtype_t *type = out->type;
    char type_name[sizeof(out->type_name)], declared[sizeof(out->declared_type)];
    snprintf(type_name, sizeof(type_name), "%s", out->type_name);
    snprintf(declared, sizeof(declared), "%s", out->declared_type);
    cv_check_outcome_clear(out);
    memset(out, 0, sizeof(*out));
    out->type = type;
    snprintf(out->type_name, sizeof(out->type_name), "%s", type_name);
    snprintf(out->declared_type, sizeof(out->declared_type), "%s", declared);
    fail(out, "UPDATE", "ResourceActionRestricted: resources.%s: %s is restricted for resource.",
         in->job->resource, action);
    out->status[0] = '\0';
}

/* ---- the decision ---- */

/* The type that acts: the definition's for an update node, the recorded
 * one for a cleanup node (nothing recorded: none is needed). False after
 * a FAIL. */
static bool find_type(const cv_check_input_t *in, cv_check_outcome_t *out)
{
    bool cleanup = in->job->phase == CV_PHASE_CLEANUP;
    const char *type = cleanup ? in->rec->type : in->rdef->type;
    if (cleanup && !type[0] && !in->rec->exists)
        return true;
    snprintf(out->type_name, sizeof(out->type_name), "%s", type ? type : "");
    const char *declared = cleanup ? cv_record_declared_type(in->rec) : in->rdef->declared_type;
    snprintf(out->declared_type, sizeof(out->declared_type), "%s",
             declared ? declared : out->type_name);
    out->type = cv_rtype_lookup(out->type_name);
    if (!out->type) {
        fail(out, default_action(in), "resources.%s: The Resource Type (%s) could not be found.",
             in->job->resource, out->type_name);
        return false;
    }
    return true;
}

void cv_check_decide(const cv_check_input_t *in, cv_check_outcome_t *out)
{
    memset(out, 0, sizeof(*out));
    if (in->load_error) {
        fail(out, default_action(in), "%s", in->load_error);
        return;
    }
    if (!in->params) {
        fail(out, default_action(in), "stored parameters are not JSON");
        return;
    }
    if (in->job->phase == CV_PHASE_UPDATE && !in->rdef) {
        fail(out, default_action(in), "resources.%s: no stored definition", in->job->resource);
        return;
    }
    if (!find_type(in, out))
        return;
    if (in->job->phase == CV_PHASE_CLEANUP) {
        decide_cleanup(in, out);
    } else {
        decide_update(in, out);
        apply_restrictions(in, out);
    }
}
