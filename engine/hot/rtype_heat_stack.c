/*
 * OS::Heat::Stack — a nested stack made from the `template` property (the
 * template's text, as in Heat, or — a Converge extension — the template as
 * a map) with `parameters`. Heat creates it through a Heat API, possibly in
 * another region; Converge has one region, so the stack is a child stack
 * like a template resource's, and `context` is accepted for compatibility
 * (a changed region_name still replaces the resource, as in Heat).
 *
 * definition() hands the template text over as a string: the engine parses
 * it (this module cannot include the template parser, which includes it).
 * The attributes are Heat's: `outputs` (the child's outputs by name, so
 * get_attr [s, outputs, name] is one output) and `stack_name`, the child's
 * name, which the engine puts into data.stack_name. get_resource of it is
 * the child stack's id, as Heat's get_reference_id gives the stack id.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

static const cv_prop_schema_t heat_stack_props[] = {
    {"context", CV_PROP_MAP, false, NULL, true},
    {"template", CV_PROP_ANY, true, NULL, true},
    {"timeout", CV_PROP_INTEGER, false, NULL, true},
    {"parameters", CV_PROP_MAP, false, "{}", true},
};

static const char *const heat_stack_attrs[] = {"stack_name", "outputs", NULL};

static const char *const context_keys[] = {"region_name", "credential_secret_id", "ca_cert",
                                           "insecure"};

static int heat_stack_validate(const json_t *props, const char *where, char *errstr,
                               size_t errstr_size)
{
    const json_t *tpl = json_object_get(props, "template");
    if (tpl && !cv_is_intrinsic(tpl) && !json_is_string(tpl) && !json_is_object(tpl)) {
        char got[128];
        cv__rtype_describe(tpl, got, sizeof(got));
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.template: expected the template's text (or a map), got %s", where,
                         got);
    }
    const char *key;
    const json_t *v;
    json_object_foreach(json_object_get(props, "context"), key, v)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof(context_keys) / sizeof(context_keys[0]); i++)
            known = known || strcmp(context_keys[i], key) == 0;
        if (!known)
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s.context: Unknown Property %s",
                             where, key);
    }
    return 0;
}

static int heat_stack_definition(const char *type_name, const json_t *props, const json_t *files,
                                 json_t *data, json_t **tpl, json_t **params, char *errstr,
                                 size_t errstr_size)
{
    (void)type_name;
    (void)files;
    (void)data;
    const json_t *t = json_object_get(props, "template");
    if (!json_is_string(t) && !json_is_object(t))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "template: the template's text (or a map) is required");
    *tpl = json_deep_copy(t);
    const json_t *p = json_object_get(props, "parameters");
    *params = json_is_object(p) ? json_deep_copy(p) : json_object();
    return *tpl && *params ? 0 : CV_ENOMEM;
}

static json_t *heat_stack_attributes(const json_t *outputs, const json_t *data)
{
    json_t *attrs = json_object();
    json_object_set_new(attrs, "outputs",
                        json_is_object(outputs) ? json_deep_copy(outputs) : json_object());
    const json_t *name = json_object_get(data, "stack_name");
    json_object_set_new(attrs, "stack_name", name ? json_deep_copy(name) : json_null());
    return attrs;
}

static const cv_nested_ops_t heat_stack_ops = {heat_stack_definition, heat_stack_attributes};

static cv_observed_t heat_stack_observe(cv_rstate_t *st, cv_action_t action)
{
    return cv__nested_observe_child(st, action, &heat_stack_ops);
}

/* Heat's needs_replace_with_prop_diff: another region is another stack. */
static bool heat_stack_needs_replacement(const json_t *old_props, const json_t *new_props)
{
    const json_t *was = json_object_get(json_object_get(old_props, "context"), "region_name");
    const json_t *now = json_object_get(json_object_get(new_props, "context"), "region_name");
    return !(was == now || (was && now && json_equal(was, now)));
}

const cv_rtype_t cv__rtype_heat_stack = {
    .name = "OS::Heat::Stack",
    .props = heat_stack_props,
    .nprops = sizeof(heat_stack_props) / sizeof(heat_stack_props[0]),
    .attrs = heat_stack_attrs,
    .validate = heat_stack_validate,
    .create = cv__nested_create,
    .update = cv__nested_update,
    .remove = cv__nested_remove,
    .observe = heat_stack_observe,
    .needs_replacement = heat_stack_needs_replacement,
    .nested = &heat_stack_ops,
};
