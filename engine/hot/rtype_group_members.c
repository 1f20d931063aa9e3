/*
 * rtype_group_members — what the group types (OS::Heat::ResourceGroup and
 * OS::Heat::AutoScalingGroup) share: a member's definition in the child
 * template, the attribute names a member type has, and the child
 * template's outputs that carry the members' references and attributes to
 * the group ("refs" and "a.<attr>", lists in the order of the members),
 * and the order of members acted on in batches (batch_create, rollouts).
 */
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

bool cv__group_contains(const json_t *list, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return true;
    }
    return false;
}

json_t *cv__group_member_attr_names(const char *type, const json_t *files)
{
    json_t *out = json_array();
    const cv_rtype_t *t = cv_rtype_find(type);
    if (t) {
        for (const char *const *a = t->attrs; a && *a; a++)
            json_array_append_new(out, json_string(*a));
        return out;
    }
    const char *key;
    const json_t *v;
    json_object_foreach(json_object_get(json_object_get(files, type), "outputs"), key, v)
    {
        json_array_append_new(out, json_string(key));
    }
    return out;
}

json_t *cv__group_member(const json_t *def, const char *var, const char *name)
{
    const json_t *props = json_object_get(def, "properties");
    json_t *m = json_pack("{s:O}", "type", json_object_get(def, "type"));
    if (json_is_object(props))
        json_object_set_new(m, "properties",
                            var ? cv_rtype_substitute(props, var, name) : json_deep_copy(props));
    const json_t *meta = json_object_get(def, "metadata");
    if (json_is_object(meta))
        json_object_set(m, "metadata", (json_t *)meta);
    return m;
}

json_t *cv__group_outputs(const json_t *names, const json_t *attr_names)
{
    json_t *outputs = json_object(), *refs = json_array();
    size_t i, j;
    const json_t *n, *a;
    json_array_foreach(names, i, n)
    {
        json_array_append_new(refs, json_pack("{s:O}", "get_resource", n));
    }
    json_object_set_new(outputs, "refs", json_pack("{s:o}", "value", refs));
    json_array_foreach(attr_names, j, a)
    {
        json_t *list = json_array();
        json_array_foreach(names, i, n)
        {
            json_array_append_new(list, json_pack("{s:[O,O]}", "get_attr", n, a));
        }
        char key[300];
        snprintf(key, sizeof(key), "a.%s", json_string_value(a));
        json_object_set_new(outputs, key, json_pack("{s:o}", "value", list));
    }
    return outputs;
}

json_t *cv__group_template(const json_t *def, const char *var, const json_t *names,
                           const json_t *attr_names)
{
    json_t *resources = json_object();
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        json_object_set_new(resources, json_string_value(n),
                            cv__group_member(def, var, json_string_value(n)));
    }
    return json_pack("{s:s, s:o, s:o}", "heat_template_version", "2015-04-30", "resources",
                     resources, "outputs", cv__group_outputs(names, attr_names));
}

json_t *cv__group_refs(const json_t *outputs, const json_t *names, bool by_index)
{
    const json_t *refs = json_object_get(outputs, "refs");
    json_t *attrs = json_object(), *map = json_object();
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        const json_t *ref = json_array_get(refs, i);
        char key[300];
        if (by_index)
            snprintf(key, sizeof(key), "resource.%zu", i);
        else
            snprintf(key, sizeof(key), "resource.%s", json_string_value(n));
        json_object_set(attrs, key, ref ? (json_t *)ref : json_null());
        json_object_set(map, json_string_value(n), ref ? (json_t *)ref : json_null());
    }
    json_object_set_new(attrs, "refs",
                        json_is_array(refs) ? json_incref((json_t *)refs) : json_array());
    json_object_set_new(attrs, "refs_map", map);
    return attrs;
}

const json_t *cv__group_member_values(const json_t *outputs, const char *attr)
{
    char key[300];
    snprintf(key, sizeof(key), "a.%s", attr);
    return json_object_get(outputs, key);
}

/* ---- batches: members acted on in turns ---- */

/* The members of `batch` that are members of `resources`. */
static json_t *present(const json_t *batch, const json_t *resources)
{
    json_t *out = json_array();
    size_t i;
    const json_t *n;
    json_array_foreach(batch, i, n)
    {
        if (json_is_string(n) && json_object_get(resources, json_string_value(n)))
            json_array_append(out, (json_t *)n);
    }
    return out;
}

void cv__group_order_batches(json_t *resources, const json_t *batches, double pause,
                             const char *pause_prefix)
{
    json_t *before = NULL; /* the previous non-empty batch's members */
    size_t i, j, k = 0;
    const json_t *batch, *n;
    json_array_foreach(batches, i, batch)
    {
        json_t *members = present(batch, resources);
        if (!json_array_size(members)) {
            json_decref(members);
            continue;
        }
        json_t *deps = before ? json_incref(before) : NULL;
        if (before && pause > 0) {
            char pname[64];
            snprintf(pname, sizeof(pname), "%s%zu", pause_prefix, ++k);
            json_object_set_new(resources, pname,
                                json_pack("{s:s, s:{s:f}, s:O}", "type", "OS::Heat::Delay",
                                          "properties", "min_wait", pause, "depends_on", before));
            json_decref(deps);
            deps = json_pack("[s]", pname);
        }
        json_array_foreach(members, j, n)
        {
            if (deps)
                json_object_set(json_object_get(resources, json_string_value(n)), "depends_on",
                                deps);
        }
        json_decref(deps);
        json_decref(before);
        before = members;
    }
    json_decref(before);
}

bool cv__group_rollout_intact(const json_t *rollout, const json_t *names)
{
    size_t i, j;
    const json_t *batch, *n;
    json_array_foreach(json_object_get(rollout, "batches"), i, batch)
    {
        json_array_foreach(batch, j, n)
        {
            if (!cv__group_contains(names, json_string_value(n)))
                return false;
        }
    }
    return true;
}

void cv__group_apply_rollout(json_t *resources, const json_t *rollout)
{
    if (!rollout)
        return;
    const json_t *batches = json_object_get(rollout, "batches");
    size_t i, j;
    const json_t *batch, *n;
    /* A batch_create order would contradict the rollout's (a cycle). */
    json_array_foreach(batches, i, batch)
    {
        json_array_foreach(batch, j, n)
        {
            json_object_del(json_object_get(resources, json_string_value(n)), "depends_on");
        }
    }
    char prefix[48];
    snprintf(prefix, sizeof(prefix), "rollout_%lld_pause_",
             (long long)json_integer_value(json_object_get(rollout, "id")));
    cv__group_order_batches(resources, batches,
                            json_number_value(json_object_get(rollout, "pause_time")), prefix);
}
