/*
 * OS::Heat::Value — exposes its `value` property as the `value` attribute,
 * converted to `type` when one is given (as a HOT parameter of that type
 * would be). Useful to name a computed value once and get_attr it elsewhere.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

static const cv_prop_schema_t value_props[] = {
    {"value", CV_PROP_ANY, true, NULL, true},
    {"type", CV_PROP_STRING, false, NULL, true},
};

static const char *const value_attrs[] = {"value", NULL};

/* "a,b" → ["a", "b"], "a," → ["a", ""] and "" → [], exactly as Heat's
 * delim_string_to_list (no trimming); a list is kept as it is. */
static json_t *to_delimited_list(const json_t *v)
{
    if (json_is_array(v))
        return json_deep_copy(v);
    if (!json_is_string(v))
        return NULL;
    json_t *list = json_array();
    const char *s = json_string_value(v);
    if (!list || !*s)
        return list;
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (json_array_append_new(list, json_stringn(s, len)) != 0) {
            json_decref(list);
            return NULL;
        }
        if (!comma)
            return list;
        s = comma + 1;
    }
}

/* A map or a list, or a string holding one as JSON text. */
static json_t *to_json(const json_t *v)
{
    if (json_is_object(v) || json_is_array(v))
        return json_deep_copy(v);
    if (!json_is_string(v))
        return NULL;
    return json_loads(json_string_value(v), 0, NULL); /* rejects scalars */
}

static json_t *to_string(const json_t *v)
{
    return cv__rtype_coerce(CV_PROP_STRING, v);
}

static json_t *to_number(const json_t *v)
{
    return cv__rtype_coerce(CV_PROP_NUMBER, v);
}

static json_t *to_boolean(const json_t *v)
{
    return cv__rtype_coerce(CV_PROP_BOOLEAN, v);
}

/* HOT's parameter types, which Value's `type` names. */
static const struct value_type {
    const char *name;
    json_t *(*convert)(const json_t *v);
} value_types[] = {
    {"string", to_string}, {"number", to_number},   {"comma_delimited_list", to_delimited_list},
    {"json", to_json},     {"boolean", to_boolean},
};

static const struct value_type *find_value_type(const char *name)
{
    for (size_t i = 0; i < sizeof(value_types) / sizeof(value_types[0]); i++)
        if (strcmp(value_types[i].name, name) == 0)
            return &value_types[i];
    return NULL;
}

/* Returns the converted value, or NULL with `errstr` filled in. Without a
 * type, the value is taken as it is. */
static json_t *convert(const json_t *value, const char *type, char *errstr, size_t errstr_size)
{
    if (!type)
        return json_deep_copy(value);
    const struct value_type *vt = find_value_type(type);
    json_t *out = vt ? vt->convert(value) : NULL;
    if (!out) {
        char got[128];
        cv__rtype_describe(value, got, sizeof(got));
        snprintf(errstr, errstr_size, "cannot convert %s to %s", got, type);
    }
    return out;
}

/* Values that still hold intrinsic functions are converted only once
 * resolved, at create. */
static int value_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    const json_t *type = json_object_get(props, "type");
    const json_t *value = json_object_get(props, "value");
    if (cv_is_intrinsic(type))
        return 0;
    const char *name = json_string_value(type);
    if (name && !find_value_type(name))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.type: \"%s\" is not one of string, number, comma_delimited_list, "
                         "json, boolean",
                         where, name);
    if (!value || cv__rtype_contains_intrinsic(value))
        return 0;
    char why[256];
    json_t *out = convert(value, name, why, sizeof(why));
    if (!out)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s.value: %s", where, why);
    json_decref(out);
    return 0;
}

static int value_publish(cv_rstate_t *st)
{
    const json_t *type = json_object_get(st->props, "type");
    char why[256];
    json_t *out =
        convert(json_object_get(st->props, "value"), json_string_value(type), why, sizeof(why));
    if (!out)
        return cv_seterr(st->reason, sizeof(st->reason), CV_EFAILED,
                         "resources.%s.properties.value: %s", st->resource_name, why);
    return json_object_set_new(st->attrs, "value", out) ? CV_ENOMEM : 0;
}

static int value_create(cv_rstate_t *st)
{
    cv__rtype_set_physical_id(st);
    return value_publish(st);
}

static int value_update(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        cv__rtype_set_physical_id(st);
    return value_publish(st);
}

static int value_remove(cv_rstate_t *st)
{
    (void)st;
    return 0;
}

static cv_observed_t value_observe(cv_rstate_t *st, cv_action_t action)
{
    (void)st;
    (void)action;
    return CV_OBSERVED_COMPLETE;
}

const cv_rtype_t cv__rtype_value = {
    .name = "OS::Heat::Value",
    .props = value_props,
    .nprops = sizeof(value_props) / sizeof(value_props[0]),
    .attrs = value_attrs,
    .validate = value_validate,
    .create = value_create,
    .update = value_update,
    .remove = value_remove,
    .observe = value_observe,
};
