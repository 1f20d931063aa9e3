/*
 * Nested stacks in the CHECK step machine: a nested resource's action
 * begins a traversal of its child stack (create, update or delete), then
 * the action is recorded and handed to the observers, who watch the
 * child's status.
 *
 * Beginning comes before recording so that a recorded action always has a
 * child traversal behind it. A crash in between is retried by the job's
 * redelivery with the same token (the version's uuid and the record version
 * the action was decided on), which stack_begin.lua answers with the
 * traversal already begun instead of a new one.
 */
#include "cv__checkjob.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An OS::Heat::Stack's template is its text (YAML or JSON), parsed here:
 * engine/hot cannot include the template parser. Takes `text`. */
static json_t *parse_template(json_t *text, char *errstr, size_t errstr_size)
{
    char why[768];
    json_t *tpl = cv_yaml_load(json_string_value(text), json_string_length(text), "template", why,
                               sizeof(why));
    json_decref(text);
    if (!tpl)
        cv_seterr(errstr, errstr_size, CV_EVALIDATE, "properties.template: %s", why);
    else if (!json_is_object(tpl))
        cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                  "properties.template: the template must be a map");
    if (tpl && !json_is_object(tpl)) {
        json_decref(tpl);
        tpl = NULL;
    }
    return tpl;
}

/*
 * The worker's limits on the child about to be defined, before its
 * definition is built (a group's builds every member): not deeper than
 * --max-nesting-depth, and for a group, an autoscaling group or a chain,
 * no more members (and resources below them) than the limits allow, now
 * that its properties have resolved. A template resource's or an
 * OS::Heat::Stack's child is counted by its own STACK job, before anything
 * of it is written.
 */
static int check_limits(const cv_checkjob_t *j, const char *type_name, const json_t *props,
                        char *errstr, size_t errstr_size)
{
    char where[CV_NAME_MAX + 64];
    snprintf(where, sizeof(where), "the nested stack of %s", type_name);
    int rc = cv_limits_check(j->limits, CV_LIMIT_NESTING_DEPTH, (size_t)j->in.depth + 1, where,
                             errstr, errstr_size);
    const cv_rtype_t *t = cv_rtype_find(type_name);
    if (rc || !t || strcmp(type_name, "OS::Heat::Stack") == 0)
        return rc;
    cv_tpl_opts_t opts = {.files = j->in.files, .depth = j->in.depth, .env = j->in.rdef.env};
    cv_tpl_count_t count;
    return cv_template_count_nested(type_name, props, type_name, &opts, j->limits, &count, errstr,
                                    errstr_size);
}

/* The child's definition: its template and parameters, and the digests
 * and name its parent's version keeps. */
static int define_child(cv_checkjob_t *j, json_t *entry, const char *child, const char *type_name,
                        const json_t *props, json_t *data, char *errstr, size_t errstr_size)
{
    const cv_nested_ops_t *ops = cv_rtype_lookup(type_name)->nested;
    json_t *tpl = NULL, *params = NULL;
    int rc = check_limits(j, type_name, props, errstr, errstr_size);
    if (rc == 0)
        rc = ops->definition(type_name, props, j->in.files, data, &tpl, &params, errstr,
                             errstr_size);
    if (rc)
        return rc;
    char digest[24];
    cv_check_template_digest(tpl, j->in.files, digest);
    json_object_set_new(data, "template_digest", json_string(digest));
    cv_check_env_digest(j->in.rdef.env, digest);
    json_object_set_new(data, "env_digest", json_string(digest));
    if (json_is_string(tpl) && (tpl = parse_template(tpl, errstr, errstr_size)) == NULL) {
        json_decref(params);
        return CV_EVALIDATE;
    }
    char name[CV_NAME_MAX * 2 + 32];
    snprintf(name, sizeof(name), "%s-%s-%.12s", j->in.stack_name, j->msg.resource, child);
    json_object_set_new(data, "stack_name", json_string(name));
    json_object_set_new(entry, "template", tpl);
    json_object_set_new(entry, "params", params);
    return 0;
}

int cv__checkjob_plan_child(void *job, const char *op, const char *child, const char *type_name,
                            const json_t *props, json_t *data, const char *token, char *errstr,
                            size_t errstr_size)
{
    cv_checkjob_t *j = job;
    json_t *entry = json_pack("{s:s, s:s, s:s, s:s, s:O}", "op", op, "stack", child, "type",
                              type_name, "token", token, "data", data);
    if (!entry)
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    if (cv_trav_kind_parse(op) != CV_TRAV_DELETE) {
        int rc = define_child(j, entry, child, type_name, props, data, errstr, errstr_size);
        if (rc) {
            json_decref(entry);
            return rc;
        }
    }
    if (!j->children)
        j->children = json_array();
    json_array_append_new(j->children, entry);
    return 0;
}

/* ---- beginning them, one after the other ---- */

/* JSON text (or "" for none), freed with the answer. */
static const char *dump(cv_flow_buf_t *b, const json_t *v)
{
    char *text = v ? json_dumps(v, JSON_COMPACT) : strdup("");
    return text ? cv__flow_own(b, text) : "";
}

static const cv_flow_t *begin_child(cv_checkjob_t *j, const json_t *entry)
{
    cv_flow_buf_t *b = &j->buf;
    const char *op = json_string_value(json_object_get(entry, "op"));
    const char *child = json_string_value(json_object_get(entry, "stack"));
    bool deleting = cv_trav_kind_parse(op) == CV_TRAV_DELETE;
    char name[CV_NAME_MAX * 2 + 32];
    snprintf(name, sizeof(name), "%s-%s-%.12s", j->in.stack_name, j->msg.resource, child);
    if (cv_trav_kind_parse(op) == CV_TRAV_CREATE) {
        /* Operators (and status) find a stack's children here. */
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_CHILDREN, j->msg.stack, 0, NULL);
        const char *argv[] = {"SADD", key, child};
        cv__flow_argv(b, false, 3, argv);
    }
    json_t *parent = json_pack("{s:s, s:s, s:i}", "stack", j->msg.stack, "resource",
                               j->msg.resource, "depth", j->in.depth + 1);
    /* a nested stack's parameters are its parent's properties: any may
     * carry a secret, so all are sealed */
    char *params = cv_seal_members_dumps(json_object_get(entry, "params"), NULL);
    /* The child's environment (Heat's child environment) came with the
     * resource's definition; a delete needs none. */
    cv_stack_begin_t sb = {.kind = cv_trav_kind_parse(op),
                           .stack = child,
                           .name = cv__flow_keep(b, name),
                           .tpl = dump(b, json_object_get(entry, "template")),
                           .params = params ? cv__flow_own(b, params) : "",
                           .files = deleting ? "" : dump(b, j->in.files),
                           .fname = json_string_value(json_object_get(entry, "type")),
                           .parent = dump(b, parent),
                           .env = deleting ? "" : dump(b, j->in.rdef.env),
                           .token = json_string_value(json_object_get(entry, "token"))};
    json_decref(parent);
    return cv__checkjob_progress(j,
                                 cv_progress_begin(&j->progress, b, &sb, j->msg.express, j->worker),
                                 CV__CHECKJOB_THEN_CHILD);
}

const cv_flow_t *cv__checkjob_children(cv_checkjob_t *j)
{
    if (json_array_size(j->children) == 0) {
        json_decref(j->children);
        j->children = NULL;
        return cv__checkjob_record(j);
    }
    return begin_child(j, json_array_get(j->children, 0));
}

const cv_flow_t *cv__checkjob_child_begun(cv_checkjob_t *j, int rc)
{
    json_t *entry = json_array_get(j->children, 0);
    const char *op = json_string_value(json_object_get(entry, "op"));
    const char *child = json_string_value(json_object_get(entry, "stack"));
    uint64_t traversal = cv_progress_begun(&j->progress);
    if (rc == CV_EREDIS || rc == CV_EKAFKA || rc == CV_ENOMEM)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    if (rc == CV_EEXIST || (rc == CV_ENOENT && cv_trav_kind_parse(op) != CV_TRAV_DELETE)) {
        char reason[CV_REASON_MAX], status[48];
        snprintf(reason, sizeof(reason), "resources.%s: nested stack %s: %s", j->msg.resource,
                 child, rc == CV_EEXIST ? "exists already" : "does not exist");
        snprintf(status, sizeof(status), "%s_FAILED", j->out.action);
        return cv__checkjob_fail(j, status, j->out.action, reason);
    }
    /* A delete of a child that is gone already waits for nothing. */
    json_object_set_new(json_object_get(entry, "data"), "traversal",
                        json_integer(rc == CV_ENOENT ? 0 : (json_int_t)traversal));
    cv__flow_log(&j->buf, CV_FLOW_INFO, "stack %s resource %s: nested stack %s %s traversal %llu",
                 j->msg.stack, j->msg.resource, child, op, (unsigned long long)traversal);
    json_array_remove(j->children, 0);
    return cv__checkjob_children(j);
}
