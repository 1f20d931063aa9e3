/*
 * Nested-stack types: what template resources and resource groups share,
 * and the template-resource type itself.
 *
 * A nested resource's physical resource is its child stack. The type only
 * names it (the child's id, derived from the version's uuid, is the physical
 * id and data.stack); the engine begins the child's traversals and the
 * observer watches its status, so nothing here does I/O.
 *
 * A template resource (type "server.yaml") passes its properties as the
 * child's parameters; its attributes are the child's outputs, plus Heat's
 * OS::stack_id. It accepts any properties here: template validation checks
 * them against the child's parameters, which only it can see.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

bool cv_rtype_is_template_file(const char *name)
{
    static const char *const suffixes[] = {".yaml", ".yml", ".template"};
    size_t len = name ? strlen(name) : 0;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t n = strlen(suffixes[i]);
        if (len > n && strcmp(name + len - n, suffixes[i]) == 0)
            return true;
    }
    return false;
}

void cv_rtype_child_stack_id(char *out, const char *uuid)
{
    size_t n = 0;
    for (const char *p = uuid ? uuid : ""; *p && n < 16; p++)
        if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
            out[n++] = *p;
        else if (*p >= 'A' && *p <= 'F')
            out[n++] = (char)(*p - 'A' + 'a');
    while (n < 16)
        out[n++] = '0';
    out[n] = '\0';
}

int cv__nested_create(cv_rstate_t *st)
{
    char id[17];
    cv_rtype_child_stack_id(id, st->uuid);
    snprintf(st->physical_id, sizeof(st->physical_id), "%s", id);
    return json_object_set_new(st->data, "stack", json_string(id)) ? CV_ENOMEM : 0;
}

int cv__nested_update(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        return cv__nested_create(st);
    return 0;
}

int cv__nested_remove(cv_rstate_t *st)
{
    (void)st;
    return 0;
}

/* ---- a walk (cv_rtype.h) ---- */

static json_int_t walk_at(const json_t *walk)
{
    return json_integer_value(json_object_get(walk, "at"));
}

bool cv_rtype_walk_pending(const json_t *data)
{
    const json_t *walk = json_object_get(data, "walk");
    json_int_t at = walk_at(walk);
    return json_is_object(walk) && at >= 0 &&
           at + 1 < json_integer_value(json_object_get(walk, "steps"));
}

int cv_rtype_walk_next(json_t *data)
{
    if (!cv_rtype_walk_pending(data))
        return CV_ENOENT;
    json_t *walk = json_object_get(data, "walk");
    return json_object_set_new(walk, "at", json_integer(walk_at(walk) + 1)) ? CV_ENOMEM : 0;
}

/* The child's traversal of a step ended (`ended`: Unix seconds, the child
 * stack's `updated`): the next step once the pause has passed since.
 * Nothing is recorded while waiting, so any observer may take over. */
static cv_observed_t walk_on(cv_rstate_t *st, double ended)
{
    const json_t *walk = json_object_get(st->data, "walk");
    double due = ended + cv__rtype_data_number(walk, "pause", 0);
    if (st->now >= due)
        return CV_OBSERVED_NEXT_STEP;
    snprintf(st->reason, sizeof(st->reason),
             "step %lld of %lld done; the next begins in %.1f s (pause_time)",
             (long long)walk_at(walk) + 1,
             (long long)json_integer_value(json_object_get(walk, "steps")), due - st->now);
    st->retry_at = due;
    return CV_OBSERVED_IN_PROGRESS;
}

/* How long to wait before looking at a child stack again: soon at first,
 * then less often for a child that takes long (at most every 2 s). */
static double next_look(const cv_rstate_t *st)
{
    double elapsed = st->now - st->action_started, wait = elapsed / 10.0;
    return st->now + (wait < 0.2 ? 0.2 : wait > 2.0 ? 2.0 : wait);
}

static cv_observed_t child_failed(cv_rstate_t *st, const json_t *child)
{
    const char *reason = json_string_value(json_object_get(child, "reason"));
    snprintf(st->reason, sizeof(st->reason), "nested stack %s %s: %s", st->physical_id,
             json_string_value(json_object_get(child, "status")), reason ? reason : "");
    return CV_OBSERVED_FAILED;
}

/*
 * data.child is the child stack as the observer read it just now
 * ({"exists", "status", "traversal", "reason", "outputs", "reruns",
 * "updated"});
 * data.traversal the child traversal this action began. It is taken out of
 * data here so that it is never recorded. The child's traversal is this
 * action's when it is `want` or one of its re-runs (stack_finish.lua began
 * them: `reruns` of them in a row end at the child's traversal).
 */
cv_observed_t cv__nested_observe_child(cv_rstate_t *st, cv_action_t action,
                                       const cv_nested_ops_t *ops)
{
    json_t *child = json_incref(json_object_get(st->data, "child"));
    json_object_del(st->data, "child");
    json_int_t want = json_integer_value(json_object_get(st->data, "traversal"));
    json_int_t trav = json_integer_value(json_object_get(child, "traversal"));
    json_int_t reruns = json_integer_value(json_object_get(child, "reruns"));
    bool ours = trav >= want && trav - reruns <= want;
    const char *status = json_string_value(json_object_get(child, "status"));
    if (!status)
        status = "";
    bool exists = json_is_true(json_object_get(child, "exists"));
    cv_observed_t r = CV_OBSERVED_IN_PROGRESS;
    if (action == CV_ACTION_DELETE) {
        if (!exists || want == 0 || (trav >= want && strcmp(status, "DELETE_COMPLETE") == 0))
            r = CV_OBSERVED_COMPLETE;
        else if (ours && strcmp(status, "DELETE_FAILED") == 0)
            r = child_failed(st, child);
    } else if (!exists) {
        snprintf(st->reason, sizeof(st->reason), "nested stack %s does not exist", st->physical_id);
        r = CV_OBSERVED_FAILED;
    } else if (ours && cv_str_ends_with(status, "_COMPLETE") && cv_rtype_walk_pending(st->data)) {
        r = walk_on(st, json_number_value(json_object_get(child, "updated")));
        json_decref(child);
        return r;
    } else if (ours && cv_str_ends_with(status, "_COMPLETE")) {
        json_object_del(st->data, "walk");
        json_t *attrs = ops->attributes(json_object_get(child, "outputs"), st->data);
        json_decref(st->attrs);
        st->attrs = attrs ? attrs : json_object();
        r = CV_OBSERVED_COMPLETE;
    } else if (ours && cv_str_ends_with(status, "_FAILED")) {
        r = child_failed(st, child);
    }
    if (r == CV_OBSERVED_IN_PROGRESS)
        st->retry_at = next_look(st);
    json_decref(child);
    return r;
}

/*
 * resource_facade (Heat's ResourceFacade) reads the parent resource's
 * metadata, deletion_policy and update_policy. The engine resolves them
 * when it plans the child (data.facade) and they are put into the child's
 * template here, so the child stack holds plain values and needs no way
 * back to its parent; a changed facade is a changed template, which
 * updates the child. The template module has refused any other argument.
 */
static json_t *put_facade(const json_t *v, const json_t *facade)
{
    if (cv_is_intrinsic(v) && json_object_get(v, "resource_facade")) {
        const json_t *key = json_object_get(v, "resource_facade");
        const json_t *value =
            json_is_string(key) ? json_object_get(facade, json_string_value(key)) : NULL;
        return value ? json_deep_copy(value) : json_null();
    }
    if (!json_is_array(v) && !json_is_object(v))
        return json_incref((json_t *)v);
    json_t *copy = json_is_array(v) ? json_array() : json_object();
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item)
    {
        if (copy && json_array_append_new(copy, put_facade(item, facade)))
            copy = (json_decref(copy), NULL);
    }
    const char *key;
    json_object_foreach((json_t *)(json_is_object(v) ? v : NULL), key, item)
    {
        if (copy && json_object_set_new(copy, key, put_facade(item, facade)))
            copy = (json_decref(copy), NULL);
    }
    return copy;
}

/* The child's template is the file with the parent's facade put in. */
static int template_definition(const char *type_name, const json_t *props, const json_t *files,
                               json_t *data, json_t **tpl, json_t **params, char *errstr,
                               size_t errstr_size)
{
    const json_t *file = json_object_get(files, type_name);
    if (!json_is_object(file))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "template file \"%s\" was not uploaded with the stack", type_name);
    const json_t *facade = json_object_get(data, "facade");
    *tpl = facade ? put_facade(file, facade) : json_incref((json_t *)file);
    if (!*tpl)
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    *params = json_deep_copy(props);
    return *params ? 0 : CV_ENOMEM;
}

static json_t *template_attributes(const json_t *outputs, const json_t *data)
{
    json_t *attrs = json_is_object(outputs) ? json_deep_copy(outputs) : json_object();
    const json_t *id = json_object_get(data, "stack");
    if (attrs && id)
        json_object_set(attrs, "OS::stack_id", (json_t *)id);
    return attrs;
}

static const cv_nested_ops_t template_ops = {template_definition, template_attributes};

static cv_observed_t template_observe(cv_rstate_t *st, cv_action_t action)
{
    return cv__nested_observe_child(st, action, &template_ops);
}

const cv_rtype_t cv__rtype_template = {
    .name = "template",
    .props = NULL,
    .nprops = 0,
    .attrs = NULL,
    .validate = NULL,
    .create = cv__nested_create,
    .update = cv__nested_update,
    .remove = cv__nested_remove,
    .observe = template_observe,
    .nested = &template_ops,
};
