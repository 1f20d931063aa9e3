/*
 * OS::Heat::ResourceGroup — `count` copies of `resource_def` as members of a
 * child stack named "0", "1", ... ; `index_var` (default "%index%") in the
 * member properties is replaced by the member's name.
 *
 * As in Heat, names listed in `removal_policies` (resource_list) that are
 * members are removed and never used again (data.blacklist, appended to, or
 * replaced with removal_policies_mode "update"); the members are the first
 * `count` names not blacklisted, so scaling down removes the highest.
 *
 * update_policy batch_create creates the members in batches
 * (rtype_group_batch.c); rolling_update rolls a changed resource_def out in
 * batches (rtype_group_rolling.c): both walk the child through one update
 * per batch (cv_rtype.h).
 *
 * The child template's outputs carry what the attributes need: `refs` and,
 * for each attribute a member type has, "a.<attr>" — the list over the
 * members. attributes() turns them into Heat's refs, refs_map, attributes,
 * removed_rsrc_list, <attr>, resource.<n> and resource.<n>.<attr>, marked
 * (CV_RTYPE_GROUP_KEY) so that get_attr reads a path after them as Heat's
 * ResourceGroup.get_attribute does (engine/hot/intrinsic_group.c).
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cv_prop_schema_t group_props[] = {
    {"count", CV_PROP_INTEGER, false, "1", true},
    {"index_var", CV_PROP_STRING, false, "\"%index%\"", true},
    {"resource_def", CV_PROP_MAP, true, NULL, true},
    {"removal_policies", CV_PROP_LIST, false, "[]", true},
    {"removal_policies_mode", CV_PROP_STRING, false, "\"append\"", true},
};

static const char *const group_attrs[] = {"refs", "refs_map", "attributes", "removed_rsrc_list",
                                          NULL};

static int check_resource_def(const json_t *def, const char *where, char *errstr,
                              size_t errstr_size)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)def, key, v)
    {
        if (strcmp(key, "type") && strcmp(key, "properties") && strcmp(key, "metadata"))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.resource_def.%s: unknown key (allowed: type, properties, "
                             "metadata)",
                             where, key);
    }
    const json_t *type = json_object_get(def, "type");
    if (!json_is_string(type) && !cv_is_intrinsic(type))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.resource_def.type: a string is required", where);
    const json_t *props = json_object_get(def, "properties");
    if (props && !json_is_null(props) && !json_is_object(props) && !cv_is_intrinsic(props))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.resource_def.properties: must be a map", where);
    return 0;
}

static int check_policies(const json_t *policies, const char *where, char *errstr,
                          size_t errstr_size)
{
    size_t i;
    const json_t *p;
    json_array_foreach(policies, i, p)
    {
        if (cv_is_intrinsic(p))
            continue;
        const json_t *list = json_object_get(p, "resource_list");
        if (!json_is_object(p) || (list && !json_is_array(list) && !cv_is_intrinsic(list)))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.removal_policies[%zu]: expected {resource_list: [names]}", where,
                             i);
    }
    return 0;
}

static int group_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    const json_t *count = json_object_get(props, "count");
    if (json_is_integer(count) && json_integer_value(count) < 0)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s.count: must be at least 0", where);
    const json_t *var = json_object_get(props, "index_var");
    if (json_is_string(var) && strlen(json_string_value(var)) < 3)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.index_var: must be at least 3 characters long", where);
    const json_t *mode = json_object_get(props, "removal_policies_mode");
    if (json_is_string(mode) && strcmp(json_string_value(mode), "append") &&
        strcmp(json_string_value(mode), "update"))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.removal_policies_mode: must be \"append\" or \"update\"", where);
    const json_t *def = json_object_get(props, "resource_def");
    int rc = json_is_object(def) && !cv_is_intrinsic(def)
                 ? check_resource_def(def, where, errstr, errstr_size)
                 : 0;
    const json_t *policies = json_object_get(props, "removal_policies");
    if (rc == 0 && json_is_array(policies))
        rc = check_policies(policies, where, errstr, errstr_size);
    return rc;
}

/* ---- the members ---- */

/* Adds to the blacklist the removal_policies entries that are members, or
 * every entry when the group is created (Heat's _get_new_skiplist_entries
 * takes every name while the group has no resource_id): a group created
 * with resource_list ["0"] has members "1", "2", ... */
static json_t *next_blacklist(const json_t *props, const json_t *data)
{
    const char *mode = json_string_value(json_object_get(props, "removal_policies_mode"));
    bool replace = mode && strcmp(mode, "update") == 0;
    const json_t *old = json_object_get(data, "blacklist");
    json_t *bl = replace || !json_is_array(old) ? json_array() : json_deep_copy(old);
    const json_t *names = json_object_get(data, "names");
    bool creating = names == NULL;
    size_t i, j;
    const json_t *p, *entry;
    json_array_foreach(json_object_get(props, "removal_policies"), i, p)
    {
        json_array_foreach(json_object_get(p, "resource_list"), j, entry)
        {
            char num[24];
            const char *name = json_string_value(entry);
            if (json_is_integer(entry)) { /* Heat tolerates [1] for ["1"] */
                snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(entry));
                name = num;
            }
            if (name &&
                (creating || cv__group_contains(names, name) || cv__group_contains(old, name)) &&
                !cv__group_contains(bl, name))
                json_array_append_new(bl, json_string(name));
        }
    }
    return bl;
}

static json_t *member_names(json_int_t count, const json_t *blacklist)
{
    json_t *names = json_array();
    for (json_int_t i = 0; (json_int_t)json_array_size(names) < count; i++) {
        char name[24];
        snprintf(name, sizeof(name), "%lld", (long long)i);
        if (!cv__group_contains(blacklist, name))
            json_array_append_new(names, json_string(name));
    }
    return names;
}

json_t *cv_rtype_substitute(const json_t *v, const char *var, const char *name)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v), *hit;
        size_t vlen = strlen(var), nlen = strlen(name);
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
            return NULL;
        while ((hit = strstr(s, var)) != NULL) {
            fwrite(s, 1, (size_t)(hit - s), f);
            fwrite(name, 1, nlen, f);
            s = hit + vlen;
        }
        fputs(s, f);
        fclose(f);
        json_t *r = json_stringn(out, len);
        free(out);
        return r;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item)
        {
            json_array_append_new(a, cv_rtype_substitute(item, var, name));
        }
        return a;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *key;
        const json_t *item;
        json_object_foreach((json_t *)v, key, item)
        {
            json_object_set_new(o, key, cv_rtype_substitute(item, var, name));
        }
        return o;
    }
    return json_deep_copy(v);
}

static int group_definition(const char *type_name, const json_t *props, const json_t *files,
                            json_t *data, json_t **tpl, json_t **params, char *errstr,
                            size_t errstr_size)
{
    (void)type_name;
    const json_t *def = json_object_get(props, "resource_def");
    const char *mtype = json_string_value(json_object_get(def, "type"));
    if (!mtype)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "resource_def.type: a string is required");
    json_t *bl = next_blacklist(props, data);
    json_t *names = member_names(json_integer_value(json_object_get(props, "count")), bl);
    const char *var = json_string_value(json_object_get(props, "index_var"));
    json_t *attr_names = cv__group_member_attr_names(mtype, files);
    int rc = cv__group_rolling_update(props, names, bl, data, errstr, errstr_size);
    rc = rc ? rc : cv__group_batch_create(names, data, errstr, errstr_size);
    /* A walk under way defines the child of its current step. */
    json_t *walk = json_object_get(data, "walk");
    const json_t *step = walk ? cv__group_walk_current(walk, bl) : NULL;
    if (rc == 0 && walk && !step)
        rc = cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    if (rc == 0)
        *tpl = step ? cv__group_step_template(def, json_object_get(walk, "from"),
                                              var ? var : "%index%", step, attr_names)
                    : cv__group_template(def, var ? var : "%index%", names, attr_names);
    if (rc == 0 && !*tpl)
        rc = cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    if (rc) {
        *tpl = NULL;
        json_decref(attr_names);
        json_decref(names);
        json_decref(bl);
        return rc;
    }
    *params = json_object();
    json_object_set_new(data, "names", names);
    json_object_set_new(data, "blacklist", bl);
    json_object_set_new(data, "attrs", attr_names);
    return *tpl && *params ? 0 : CV_ENOMEM;
}

static void member_attributes(json_t *attrs, const json_t *outputs, const json_t *names,
                              const char *attr, const cv_rtype_t *own)
{
    const json_t *list = cv__group_member_values(outputs, attr);
    json_t *by_name = json_object();
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        const json_t *v = json_array_get(list, i);
        json_t *value = v ? json_incref((json_t *)v) : json_null();
        char rkey[400];
        snprintf(rkey, sizeof(rkey), "resource.%s.%s", json_string_value(n), attr);
        json_object_set(attrs, rkey, value);
        json_object_set_new(by_name, json_string_value(n), value);
    }
    /* The group's own attributes win over a member attribute of that name. */
    if (!cv_rtype_has_attr(own, attr))
        json_object_set_new(attrs, attr, list ? json_incref((json_t *)list) : json_array());
    json_object_set_new(json_object_get(attrs, "attributes"), attr, by_name);
}

json_t *cv__group_attributes(const json_t *outputs, const json_t *data, const cv_rtype_t *own)
{
    const json_t *names = json_object_get(data, "names");
    const json_t *bl = json_object_get(data, "blacklist");
    json_t *attrs = cv__group_refs(outputs, names, false);
    size_t i;
    json_object_set_new(attrs, "removed_rsrc_list", cv__group_removed_list(bl));
    cv__group_mark(attrs, own->name, names);
    json_object_set_new(attrs, "attributes", json_object());
    const json_t *a;
    json_array_foreach(json_object_get(data, "attrs"), i, a)
    {
        member_attributes(attrs, outputs, names, json_string_value(a), own);
    }
    return attrs;
}

static json_t *group_attributes(const json_t *outputs, const json_t *data)
{
    return cv__group_attributes(outputs, data, &cv__rtype_resource_group);
}

static const cv_nested_ops_t group_ops = {group_definition, group_attributes};

static cv_observed_t group_observe(cv_rstate_t *st, cv_action_t action)
{
    return cv__nested_observe_child(st, action, &group_ops);
}

const cv_rtype_t cv__rtype_resource_group = {
    .name = "OS::Heat::ResourceGroup",
    .props = group_props,
    .nprops = sizeof(group_props) / sizeof(group_props[0]),
    .attrs = group_attrs,
    .validate = group_validate,
    .create = cv__nested_create,
    .update = cv__nested_update,
    .remove = cv__nested_remove,
    .observe = group_observe,
    .nested = &group_ops,
};
