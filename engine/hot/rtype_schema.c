/*
 * rtype_schema — checking resource properties against a type's schema, and
 * deciding from the schema whether an update needs a replacement, and
 * which properties and attributes the type marks secret.
 *
 * A type whose `props` table is NULL has no schema at all and accepts any
 * properties: that is OS::Heat::None, which stubs out any other type.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <string.h>

static const cv_prop_schema_t *find_prop(const cv_rtype_t *type, const char *name)
{
    for (size_t i = 0; i < type->nprops; i++)
        if (strcmp(type->props[i].name, name) == 0)
            return &type->props[i];
    return NULL;
}

/* JSON null is how YAML spells an empty value: it counts as absent. */
static const json_t *given(const json_t *props, const char *name)
{
    const json_t *v = props ? json_object_get(props, name) : NULL;
    return json_is_null(v) ? NULL : v;
}

static json_t *parse_default(const cv_prop_schema_t *s)
{
    return json_loads(s->default_json, JSON_DECODE_ANY, NULL);
}

static int check_unknown(const cv_rtype_t *type, const json_t *props, const char *where,
                         char *errstr, size_t errstr_size)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)props, key, v)
    {
        if (!find_prop(type, key))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s.%s: unknown property", where,
                             key);
    }
    return 0;
}

/* Sets out[s->name] from the given value, its default, or nothing. */
static int apply_one(const cv_prop_schema_t *s, const json_t *props, json_t *out, const char *where,
                     bool literal_only, char *errstr, size_t errstr_size)
{
    const json_t *v = given(props, s->name);
    json_t *value;
    if (!v) {
        if (s->required)
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.%s: required property is missing", where, s->name);
        if (!s->default_json)
            return 0;
        value = parse_default(s);
    } else if (literal_only && cv_is_intrinsic(v)) {
        value = json_deep_copy(v);
    } else if (!(value = cv__rtype_coerce(s->type, v))) {
        char got[128];
        cv__rtype_describe(v, got, sizeof(got));
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s.%s: expected %s, got %s", where,
                         s->name, cv__rtype_type_name(s->type), got);
    }
    if (!value || json_object_set_new(out, s->name, value) != 0)
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "%s.%s: out of memory", where, s->name);
    return 0;
}

/* The checks run in a fixed order (unknown properties, then the schema in
 * table order, then the type's own validate) so the first error reported
 * for a template is always the same one. */
json_t *cv_rtype_apply_schema(const cv_rtype_t *type, const json_t *props, const char *where,
                              bool literal_only, char *errstr, size_t errstr_size)
{
    if (props && !json_is_object(props)) {
        char got[128];
        cv__rtype_describe(props, got, sizeof(got));
        cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s: expected map, got %s", where, got);
        return NULL;
    }
    if (!type->props)
        return props ? json_deep_copy(props) : json_object();
    json_t *out = json_object();
    int rc = out ? 0 : CV_ENOMEM;
    if (rc == 0 && props)
        rc = check_unknown(type, props, where, errstr, errstr_size);
    for (size_t i = 0; rc == 0 && i < type->nprops; i++)
        rc = apply_one(&type->props[i], props, out, where, literal_only, errstr, errstr_size);
    if (rc == 0 && type->validate)
        rc = type->validate(out, where, errstr, errstr_size);
    if (rc != 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* ------------------------------------------------------------ replacement */

/* A property's value as the resource sees it: given, else the default. */
static json_t *effective(const cv_prop_schema_t *s, const json_t *props)
{
    const json_t *v = given(props, s->name);
    if (v)
        return json_incref((json_t *)v);
    return s->default_json ? parse_default(s) : NULL;
}

static bool same(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a == b;
    return json_equal((json_t *)a, (json_t *)b);
}

bool cv__rtype_props_differ(const cv_rtype_t *type, const json_t *old_props,
                            const json_t *new_props, bool replacing_only)
{
    if (!type->props)
        return !same(old_props, new_props);
    for (size_t i = 0; i < type->nprops; i++) {
        const cv_prop_schema_t *s = &type->props[i];
        if (replacing_only && s->update_allowed)
            continue;
        json_t *o = effective(s, old_props), *n = effective(s, new_props);
        bool differ = !same(o, n);
        json_decref(o);
        json_decref(n);
        if (differ)
            return true;
    }
    return false;
}

/* OS::Heat::None is never replaced, as in Heat: it stands in for any type,
 * and no property of the type it stubs out means anything to it. */
bool cv_rtype_needs_replacement(const cv_rtype_t *type, const json_t *old_props,
                                const json_t *new_props)
{
    if (!type->props)
        return false;
    if (cv__rtype_props_differ(type, old_props, new_props, true))
        return true;
    return type->needs_replacement && type->needs_replacement(old_props, new_props);
}

/* ------------------------------------------------------------ secrets */

static bool listed(const char *const *names, const char *name)
{
    for (; names && *names; names++)
        if (strcmp(*names, name) == 0)
            return true;
    return false;
}

bool cv_rtype_prop_sensitive(const cv_rtype_t *type, const char *prop)
{
    return type && listed(type->sensitive_props, prop);
}

bool cv_rtype_attr_sensitive(const cv_rtype_t *type, const char *attr)
{
    if (!type || !type->sensitive_attrs || !type->sensitive_attrs[0])
        return false;
    return strcmp(attr, "show") == 0 || listed(type->sensitive_attrs, attr);
}
