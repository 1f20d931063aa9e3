/*
 * rtype_group_members — what the group types (OS::Heat::ResourceGroup and
 * OS::Heat::AutoScalingGroup) share: a member's definition in the child
 * template, the attribute names a member type has, and the child
 * template's outputs that carry the members' references and attributes to
 * the group ("refs" and "a.<attr>", lists in the order of the members).
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

const json_t *cv__group_member_values(const json_t *outputs, const char *attr)
{
    char key[300];
    snprintf(key, sizeof(key), "a.%s", attr);
    return json_object_get(outputs, key);
}

/* ---- batches: members acted on in turns ---- */

static json_t *depends_list(json_t *member)
{
    json_t *deps = json_object_get(member, "depends_on");
    if (!json_is_array(deps)) {
        deps = json_array();
        json_object_set_new(member, "depends_on", deps);
    }
    return deps;
}

void cv__group_order_batches(json_t *resources, const json_t *rollout)
{
    const json_t *chunks = json_object_get(rollout, "batches");
    double pause = json_number_value(json_object_get(rollout, "pause_time"));
    const json_t *previous = NULL;
    size_t k;
    const json_t *chunk;
    json_array_foreach(chunks, k, chunk)
    {
        json_t *after = json_array(); /* what this batch waits for */
        if (previous && pause > 0) {
            char name[32];
            snprintf(name, sizeof(name), "pause-%zu", k);
            json_t *wait =
                json_pack("{s:s, s:{s:O, s:{s:f, s:f}}, s:O}", "type", "OS::Heat::TestResource",
                          "properties", "value", json_object_get(rollout, "id"), "action_wait_secs",
                          "create", pause, "update", pause, "depends_on", previous);
            json_object_set_new(resources, name, wait);
            json_array_append_new(after, json_string(name));
        } else if (previous) {
            json_array_extend(after, (json_t *)previous);
        }
        size_t i;
        const json_t *n;
        json_array_foreach(chunk, i, n)
        {
            json_t *member = json_object_get(resources, json_string_value(n));
            if (member && json_array_size(after))
                json_array_extend(depends_list(member), after);
        }
        json_decref(after);
        previous = chunk;
    }
}
