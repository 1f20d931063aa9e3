/*
 * intrinsic_group — get_attr of a group's attributes, as Heat's
 * get_attribute of each group type reads them (heat/engine/resources/
 * openstack/heat/resource_group.py, resource_chain.py,
 * autoscaling_group.py). A group overrides how the path after the
 * attribute name is read, so a plain walk is not what Heat gives:
 *
 * - a member attribute with a path, [g, attr, p...], applies the path to
 *   each member's value (the list of get_attr [member, attr, p...]), not to
 *   the list;
 * - [g, resource.N, attr, p...] and [g, resource.N.attr, p...] are
 *   get_attr [N, attr, p...] of member N; [g, resource.N] its reference id;
 * - attributes (ResourceGroup, chain) and outputs / outputs_list
 *   (AutoScalingGroup) need an attribute after them, and apply the rest of
 *   the path to each member's value;
 * - refs takes a path (but not an AutoScalingGroup's); refs_map,
 *   removed_rsrc_list and current_size are whole whatever follows them.
 *
 * A member that is not there is an error for [g, resource.N] (and for any
 * path of a chain's or an AutoScalingGroup's), "Member 'N' not found in
 * group resource 'g'."; a ResourceGroup's resource.N.attr of a member that
 * is not there is null, as Heat's fallback finds no resource.
 */
#include "cv__template_internal.h"
#include "cv_base.h"
#include "cv_rtype.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { RESOURCE_GROUP, CHAIN, AUTOSCALING } kind_t;

typedef struct group {
    kind_t kind;
    const char *name; /* the group's resource name, for messages */
    const json_t *attrs;
    const json_t *members; /* names, in order */
    const json_t *values;  /* attribute -> member name -> value */
} group_t;

static int no_attribute(const group_t *g, const char *key, char *errstr, size_t errstr_size)
{
    snprintf(errstr, errstr_size, "The Referenced Attribute (%s %s) is incorrect.", g->name, key);
    return CV_EVALIDATE;
}

static int no_member(const group_t *g, const char *member, char *errstr, size_t errstr_size)
{
    snprintf(errstr, errstr_size, "Member '%s' not found in group resource '%s'.", member, g->name);
    return CV_EVALIDATE;
}

/* get_attr [member, attr, args[from]...] of one member: NULL when there is
 * nothing there (Heat's None). */
static json_t *member_value(const group_t *g, const char *member, const json_t *attr,
                            const json_t *args, size_t from)
{
    if (!json_is_string(attr))
        return NULL;
    const json_t *v = json_object_get(json_object_get(g->values, json_string_value(attr)), member);
    json_t *made = NULL;
    const json_t *at = v ? cv__path_walk(v, args, from, false, &made) : NULL;
    json_t *out = at ? json_deep_copy(at) : NULL;
    json_decref(made);
    return out;
}

/* The members' values of attr with the path args[from...]: a list in the
 * members' order, or a map by member name (`by_name`). */
static json_t *over_members(const group_t *g, const json_t *attr, const json_t *args, size_t from,
                            bool by_name)
{
    json_t *out = by_name ? json_object() : json_array();
    size_t i;
    const json_t *n;
    json_array_foreach(g->members, i, n)
    {
        json_t *v = member_value(g, json_string_value(n), attr, args, from);
        if (by_name)
            json_object_set_new(out, json_string_value(n), v ? v : json_null());
        else
            json_array_append_new(out, v ? v : json_null());
    }
    return out;
}

/* Python's int(text) as Heat's AutoScalingGroup reads resource.<i>:
 * optional blanks and sign around decimal digits. */
static bool py_int(const char *text, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || errno)
        return false;
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    *out = v;
    return *end == '\0';
}

/* The name of member `target` of resource.<target>: the name itself
 * (ResourceGroup, chain), or the member at that index, oldest first, with
 * Python's negative indexes (AutoScalingGroup). NULL when there is none,
 * with the message. */
static const char *member_named(const group_t *g, const char *target, int *rc, char *errstr,
                                size_t errstr_size)
{
    if (g->kind != AUTOSCALING) {
        size_t i;
        const json_t *n;
        json_array_foreach(g->members, i, n)
        {
            if (strcmp(json_string_value(n), target) == 0)
                return json_string_value(n);
        }
        *rc = g->kind == CHAIN ? no_member(g, target, errstr, errstr_size) : 0;
        return NULL;
    }
    long long i, count = (long long)json_array_size(g->members);
    if (!py_int(target, &i)) {
        snprintf(errstr, errstr_size, "invalid literal for int() with base 10: '%s'", target);
        *rc = CV_EVALIDATE;
        return NULL;
    }
    if (i < 0)
        i += count;
    if (i < 0 || i >= count) {
        *rc = no_member(g, target, errstr, errstr_size);
        return NULL;
    }
    return json_string_value(json_array_get(g->members, (size_t)i));
}

/* resource.<target>[.<attr>] with the path args[2...]. */
static int member_attr(const group_t *g, const char *key, const json_t *args, json_t **out,
                       char *errstr, size_t errstr_size)
{
    char target[256];
    const char *rest = key + strlen("resource."), *dot = strchr(rest, '.');
    size_t len = dot ? (size_t)(dot - rest) : strlen(rest);
    snprintf(target, sizeof(target), "%.*s", (int)len, rest);
    int rc = 0;
    const char *member = member_named(g, target, &rc, errstr, errstr_size);
    if (!dot && json_array_size(args) == 2) { /* the member's reference id */
        if (!member)
            return rc ? rc : no_member(g, target, errstr, errstr_size);
        const json_t *ref = json_object_get(json_object_get(g->attrs, "refs_map"), member);
        if (!ref) {
            char rkey[300];
            snprintf(rkey, sizeof(rkey), "resource.%s", member);
            ref = json_object_get(g->attrs, rkey);
        }
        *out = ref ? json_deep_copy(ref) : json_null();
        return 0;
    }
    if (!member) {
        *out = rc ? NULL : json_null();
        return rc;
    }
    json_t *attr = dot ? json_string(dot + 1) : NULL;
    *out = member_value(g, member, dot ? attr : json_array_get(args, 2), args, dot ? 2 : 3);
    json_decref(attr);
    if (!*out)
        *out = json_null();
    return 0;
}

/* A whole attribute, whatever path follows it. */
static int whole(const group_t *g, const char *key, json_t **out)
{
    const json_t *v = json_object_get(g->attrs, key);
    *out = v ? json_deep_copy(v) : json_null();
    return 0;
}

/* The attribute with the path walked, as for any resource. */
static int walked(const group_t *g, const char *key, const json_t *args, json_t **out)
{
    json_t *made = NULL;
    const json_t *v = cv__path_walk(json_object_get(g->attrs, key), args, 2, false, &made);
    *out = v ? json_deep_copy(v) : json_null();
    json_decref(made);
    return 0;
}

static int resource_group_attr(const group_t *g, const char *key, const json_t *args, json_t **out,
                               char *errstr, size_t errstr_size)
{
    bool path = json_array_size(args) > 2;
    if (strcmp(key, "refs") == 0)
        return walked(g, key, args, out);
    if (g->kind == RESOURCE_GROUP &&
        (strcmp(key, "refs_map") == 0 || strcmp(key, "removed_rsrc_list") == 0))
        return whole(g, key, out);
    if (strcmp(key, "attributes") == 0) {
        if (!path)
            return no_attribute(g, key, errstr, errstr_size);
        *out = over_members(g, json_array_get(args, 2), args, 3, true);
        return 0;
    }
    if (strncmp(key, "resource.", 9) == 0)
        return member_attr(g, key, args, out, errstr, errstr_size);
    if (!json_object_get(g->values, key))
        return walked(g, key, args, out); /* no member has it: null, as before */
    json_t *name = json_string(key);
    *out = over_members(g, name, args, 2, false);
    json_decref(name);
    return 0;
}

static int autoscaling_attr(const group_t *g, const char *key, const json_t *args, json_t **out,
                            char *errstr, size_t errstr_size)
{
    if (strcmp(key, "current_size") == 0 || strcmp(key, "refs") == 0 ||
        strcmp(key, "refs_map") == 0)
        return whole(g, key, out);
    bool list = strcmp(key, "outputs_list") == 0;
    if (list || strcmp(key, "outputs") == 0) {
        if (json_array_size(args) < 3)
            return no_attribute(g, key, errstr, errstr_size);
        *out = over_members(g, json_array_get(args, 2), args, 3, !list);
        return 0;
    }
    if (strncmp(key, "resource.", 9) == 0)
        return member_attr(g, key, args, out, errstr, errstr_size);
    return no_attribute(g, key, errstr, errstr_size);
}

int cv__group_get_attr(const json_t *attrs, const json_t *args, json_t **out, char *errstr,
                       size_t errstr_size)
{
    const json_t *mark = json_object_get(attrs, CV_RTYPE_GROUP_KEY);
    const char *kind = json_string_value(json_object_get(mark, "kind"));
    if (!kind)
        return 1;
    group_t g = {.name = json_string_value(json_array_get(args, 0)),
                 .attrs = attrs,
                 .members = json_object_get(mark, "members")};
    if (strcmp(kind, "OS::Heat::AutoScalingGroup") == 0) {
        g.kind = AUTOSCALING;
        g.values = json_object_get(attrs, "outputs");
    } else {
        g.kind = strcmp(kind, "OS::Heat::ResourceChain") == 0 ? CHAIN : RESOURCE_GROUP;
        g.values = json_object_get(attrs, "attributes");
    }
    const char *key = json_string_value(json_array_get(args, 1));
    *out = NULL;
    return g.kind == AUTOSCALING ? autoscaling_attr(&g, key, args, out, errstr, errstr_size)
                                 : resource_group_attr(&g, key, args, out, errstr, errstr_size);
}
