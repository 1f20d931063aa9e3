/*
 * Nested stacks, engine side: a nested resource's action begins a traversal
 * of its child stack (create, update or delete), then the action is
 * recorded and handed to the observers, who watch the child's status.
 *
 * Beginning comes before recording so that a recorded action always has a
 * child traversal behind it. A crash in between is retried by the job's
 * redelivery with the same token (the version's uuid and the record version
 * the action was decided on), which stack_begin.lua answers with the
 * traversal already begun instead of a new one.
 */
#include "engine_check.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_convergence.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An OS::Heat::Stack's template is its text (YAML or JSON), parsed here:
 * engine/hot cannot include the template parser. Takes `text`. */
static json_t *parse_template(json_t *text, char *err, size_t errsz)
{
    char why[768];
    json_t *tpl = cv_yaml_load(json_string_value(text), json_string_length(text), "template", why,
                               sizeof(why));
    json_decref(text);
    if (!tpl)
        cv_seterr(err, errsz, CV_EVALIDATE, "properties.template: %s", why);
    else if (!json_is_object(tpl))
        cv_seterr(err, errsz, CV_EVALIDATE, "properties.template: the template must be a map");
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
static int check_limits(const check_t *c, const char *type_name, const json_t *props, char *err,
                        size_t errsz)
{
    const cv_limits_t *l = &c->run.w->limits;
    char where[CV_NAME_MAX + 64];
    snprintf(where, sizeof(where), "the nested stack of %s", type_name);
    int rc = cv_limits_check(l, CV_LIMIT_NESTING_DEPTH, (size_t)c->in.depth + 1, where, err, errsz);
    const cv_rtype_t *t = cv_rtype_find(type_name);
    if (rc || !t || strcmp(type_name, "OS::Heat::Stack") == 0)
        return rc;
    cv_tpl_opts_t opts = {
        .files = c->in.files, .depth = c->in.depth, .env = json_object_get(c->in.rdef, "env")};
    cv_tpl_count_t count;
    return cv_template_count_nested(type_name, props, type_name, &opts, l, &count, err, errsz);
}

int cv__nested_plan(void *check, const char *op, const char *child, const char *type_name,
                    const json_t *props, json_t *data, const char *token, char *err, size_t errsz)
{
    check_t *c = check;
    json_t *entry = json_pack("{s:s, s:s, s:s, s:s, s:O}", "op", op, "stack", child, "type",
                              type_name, "token", token, "data", data);
    if (!entry)
        return cv_seterr(err, errsz, CV_ENOMEM, "out of memory");
    if (cv_trav_kind_parse(op) != CV_TRAV_DELETE) {
        const cv_nested_ops_t *ops = cv_rtype_lookup(type_name)->nested;
        json_t *tpl = NULL, *params = NULL;
        int rc = check_limits(c, type_name, props, err, errsz);
        if (rc == 0)
            rc = ops->definition(type_name, props, c->in.files, data, &tpl, &params, err, errsz);
        if (rc) {
            json_decref(entry);
            return rc;
        }
        char digest[24];
        cv_check_template_digest(tpl, c->in.files, digest);
        json_object_set_new(data, "template_digest", json_string(digest));
        cv_check_env_digest(json_object_get(c->in.rdef, "env"), digest);
        json_object_set_new(data, "env_digest", json_string(digest));
        if (json_is_string(tpl) && (tpl = parse_template(tpl, err, errsz)) == NULL) {
            json_decref(params);
            json_decref(entry);
            return CV_EVALIDATE;
        }
        char name[CV_NAME_MAX * 2 + 32];
        snprintf(name, sizeof(name), "%s-%s-%.12s", c->in.stack_name, c->run.msg.resource, child);
        json_object_set_new(data, "stack_name", json_string(name));
        json_object_set_new(entry, "template", tpl);
        json_object_set_new(entry, "params", params);
    }
    if (!c->children)
        c->children = json_array();
    json_array_append_new(c->children, entry);
    return 0;
}

static void on_child_begun(void *ud, int rc, uint64_t traversal)
{
    check_t *c = ud;
    json_t *entry = json_array_get(c->children, 0);
    const char *op = json_string_value(json_object_get(entry, "op"));
    const char *child = json_string_value(json_object_get(entry, "stack"));
    if (rc == CV_EREDIS || rc == CV_EKAFKA || rc == CV_ENOMEM) {
        cv__check_backoff(c);
        return;
    }
    if (rc == CV_EEXIST || (rc == CV_ENOENT && cv_trav_kind_parse(op) != CV_TRAV_DELETE)) {
        char reason[CV_REASON_MAX];
        snprintf(reason, sizeof(reason), "resources.%s: nested stack %s: %s", c->run.msg.resource,
                 child, rc == CV_EEXIST ? "exists already" : "does not exist");
        char status[48];
        snprintf(status, sizeof(status), "%s_FAILED", c->out.action);
        cv__check_fail(c, status, c->out.action, reason);
        return;
    }
    /* A delete of a child that is gone already waits for nothing. */
    json_object_set_new(json_object_get(entry, "data"), "traversal",
                        json_integer(rc == CV_ENOENT ? 0 : (json_int_t)traversal));
    cv_info("stack %s resource %s: nested stack %s %s traversal %llu", c->run.msg.stack,
            c->run.msg.resource, child, op, (unsigned long long)traversal);
    json_array_remove(c->children, 0);
    cv__nested_begin(c);
}

static char *dump(const json_t *v)
{
    return v ? json_dumps(v, JSON_COMPACT) : strdup("");
}

static int begin_child(check_t *c, const json_t *entry)
{
    const char *op = json_string_value(json_object_get(entry, "op"));
    const char *child = json_string_value(json_object_get(entry, "stack"));
    char name[CV_NAME_MAX * 2 + 32], key[CV_KEY_MAX];
    snprintf(name, sizeof(name), "%s-%s-%.12s", c->in.stack_name, c->run.msg.resource, child);
    if (cv_trav_kind_parse(op) == CV_TRAV_CREATE) {
        /* Operators (and status) find a stack's children here. */
        cv_key(key, sizeof(key), CV_KEY_CHILDREN, c->run.msg.stack, 0, NULL);
        const char *argv[] = {"SADD", key, child};
        cv_redis_argv(c->run.w->redis, 3, argv, NULL, NULL, NULL);
    }
    json_t *parent = json_pack("{s:s, s:s, s:i}", "stack", c->run.msg.stack, "resource",
                               c->run.msg.resource, "depth", c->in.depth + 1);
    char *tpl = dump(json_object_get(entry, "template"));
    /* a nested stack's parameters are its parent's properties: any may
     * carry a secret, so all are sealed */
    char *params = cv_seal_members_dumps(json_object_get(entry, "params"), NULL);
    char *files = cv_trav_kind_parse(op) == CV_TRAV_DELETE ? strdup("") : dump(c->in.files);
    char *parent_text = dump(parent);
    /* The child's environment (Heat's child environment) came with the
     * resource's definition; a delete needs none. */
    const json_t *env = json_object_get(c->in.rdef, "env");
    char *env_text = cv_trav_kind_parse(op) == CV_TRAV_DELETE ? strdup("") : dump(env);
    cv_stack_begin_t b = {.kind = cv_trav_kind_parse(op),
                          .stack = child,
                          .name = name,
                          .tpl = tpl,
                          .params = params,
                          .files = files,
                          .fname = json_string_value(json_object_get(entry, "type")),
                          .parent = parent_text,
                          .env = env_text,
                          .token = json_string_value(json_object_get(entry, "token"))};
    int rc = cv_progress_begin_stack(c->run.w, &b, c->run.msg.express, on_child_begun, c);
    json_decref(parent);
    free(tpl);
    free(params);
    free(files);
    free(parent_text);
    free(env_text);
    return rc;
}

void cv__nested_begin(check_t *c)
{
    if (json_array_size(c->children) == 0) {
        json_decref(c->children);
        c->children = NULL;
        cv__check_record(c);
        return;
    }
    if (begin_child(c, json_array_get(c->children, 0)) != 0)
        cv__check_backoff(c);
}
