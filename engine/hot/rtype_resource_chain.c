/*
 * OS::Heat::ResourceChain — one member of each type listed in `resources`,
 * named "0", "1", ..., in a child stack, each given `resource_properties`.
 * Unless `concurrent`, each member depends on the one before it, so they are
 * created in order (and deleted in reverse), as Heat's child_template builds
 * them. Heat's extra concurrency limit (the number of engines) is a
 * throttle, not a dependency users can observe; it is not imposed here.
 *
 * `resources` may change in place (members added, removed or retyped: the
 * child stack is updated); `concurrent` and `resource_properties` replace
 * the chain, as their schema has no update_allowed. The attributes are
 * those of a group (rtype_resource_group.c): refs, attributes (by member
 * name, with a path: get_attr [chain, attributes, a]), resource.<n>[.<a>]
 * and the list of any member attribute.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

static const cv_prop_schema_t chain_props[] = {
    {"resources", CV_PROP_LIST, true, NULL, true},
    {"concurrent", CV_PROP_BOOLEAN, false, "false", false},
    {"resource_properties", CV_PROP_MAP, false, NULL, false},
};

static const char *const chain_attrs[] = {"refs", "attributes", NULL};

/* As in Heat, a type name is not looked up here (it may be a template
 * resource or a registry alias); the child stack's validation does that. */
static int chain_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(props, "resources"), i, t)
    {
        if (!json_is_string(t) && !cv_is_intrinsic(t))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.resources[%zu]: a resource type name (string) is required", where,
                             i);
    }
    return 0;
}

/* The union of the members' attribute names, each once. */
static json_t *chain_attr_names(const json_t *types, const json_t *files)
{
    json_t *all = json_array(), *seen = json_object();
    size_t i, j;
    const json_t *t, *a;
    json_array_foreach(types, i, t)
    {
        json_t *names = cv__group_member_attr_names(json_string_value(t), files);
        json_array_foreach(names, j, a)
        {
            if (!json_object_get(seen, json_string_value(a))) {
                json_object_set_new(seen, json_string_value(a), json_true());
                json_array_append(all, (json_t *)a);
            }
        }
        json_decref(names);
    }
    json_decref(seen);
    return all;
}

static int chain_definition(const char *type_name, const json_t *props, const json_t *files,
                            json_t *data, json_t **tpl, json_t **params, char *errstr,
                            size_t errstr_size)
{
    (void)type_name;
    const json_t *types = json_object_get(props, "resources");
    const json_t *mprops = json_object_get(props, "resource_properties");
    bool concurrent = json_is_true(json_object_get(props, "concurrent"));
    json_t *resources = json_object(), *names = json_array();
    size_t i;
    const json_t *t;
    json_array_foreach(types, i, t)
    {
        if (!json_is_string(t)) {
            json_decref(resources);
            json_decref(names);
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "resources[%zu]: a resource type name (string) is required", i);
        }
        char name[24], prev[24];
        snprintf(name, sizeof(name), "%zu", i);
        json_t *m = json_pack("{s:O}", "type", t);
        if (json_is_object(mprops))
            json_object_set_new(m, "properties", json_deep_copy(mprops));
        if (i > 0 && !concurrent) {
            snprintf(prev, sizeof(prev), "%zu", i - 1);
            json_object_set_new(m, "depends_on", json_pack("[s]", prev));
        }
        json_object_set_new(resources, name, m);
        json_array_append_new(names, json_string(name));
    }
    json_t *attr_names = chain_attr_names(types, files);
    *tpl = json_pack("{s:s, s:o, s:o}", "heat_template_version", "2015-04-30", "resources",
                     resources, "outputs", cv__group_outputs(names, attr_names));
    *params = json_object();
    json_object_set_new(data, "names", names);
    json_object_set_new(data, "attrs", attr_names);
    return *tpl && *params ? 0 : CV_ENOMEM;
}

static json_t *chain_attributes(const json_t *outputs, const json_t *data)
{
    json_t *attrs = cv__group_attributes(outputs, data, &cv__rtype_resource_chain);
    /* Heat's chain has neither of these group attributes. */
    json_object_del(attrs, "refs_map");
    json_object_del(attrs, "removed_rsrc_list");
    return attrs;
}

static const cv_nested_ops_t chain_ops = {chain_definition, chain_attributes};

static cv_observed_t chain_observe(cv_rstate_t *st, cv_action_t action)
{
    return cv__nested_observe_child(st, action, &chain_ops);
}

const cv_rtype_t cv__rtype_resource_chain = {
    .name = "OS::Heat::ResourceChain",
    .props = chain_props,
    .nprops = sizeof(chain_props) / sizeof(chain_props[0]),
    .attrs = chain_attrs,
    .validate = chain_validate,
    .create = cv__nested_create,
    .update = cv__nested_update,
    .remove = cv__nested_remove,
    .observe = chain_observe,
    .nested = &chain_ops,
};
