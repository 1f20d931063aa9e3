/*
 * env_merge — several environment files made one, in order, exactly as
 * Heat's merge_environments (heat/common/environment_util.py) makes them
 * from repeated `-e` files: parameter sections by merge strategy and
 * declared type, every other section key by key, the later file winning.
 */
#include "cv__template_internal.h"
#include "cv_env.h"
#include "cv_base.h"

#include <stdio.h>
#include <string.h>

typedef struct merge_ctx {
    const char *fname;
    char *errstr;
    size_t errstr_size;
} merge_ctx_t;

static int merge_fail(const merge_ctx_t *m, const char *fmt, const char *a, const char *b)
{
    cv_seterr(m->errstr, m->errstr_size, CV_EVALIDATE, "%s: ", m->fname);
    size_t n = strlen(m->errstr);
    if (n < m->errstr_size)
        snprintf(m->errstr + n, m->errstr_size - n, fmt, a, b, m->fname);
    return CV_EVALIDATE;
}

/* Python truthiness of a section or value: empty and null are false. */
static bool truthy(const json_t *v)
{
    if (!v || json_is_null(v) || json_is_false(v))
        return false;
    if (json_is_object(v))
        return json_object_size(v) > 0;
    if (json_is_array(v))
        return json_array_size(v) > 0;
    if (json_is_string(v))
        return json_string_length(v) > 0;
    if (json_is_integer(v))
        return json_integer_value(v) != 0;
    if (json_is_real(v))
        return json_real_value(v) != 0;
    return true;
}

/* merge_list: lists extend, strings join with ','. NULL: the two do not
 * combine (Heat fails on them too). */
static json_t *merge_list(json_t *old, const json_t *new)
{
    if (!truthy(old))
        return json_incref((json_t *)new);
    if (json_is_array(new) && json_is_array(old)) {
        json_t *out = json_copy(old);
        json_array_extend(out, (json_t *)new);
        return out;
    }
    if (json_is_string(new) && json_is_string(old))
        return json_sprintf("%s,%s", json_string_value(old), json_string_value(new));
    return NULL;
}

static json_t *concat(const json_t *old, const json_t *new)
{
    return json_sprintf("%s%s", json_is_string(old) ? json_string_value(old) : "",
                        json_string_value(new));
}

/* merge_map: a new map of `old` with `new`'s non-null keys over it;
 * deep: maps merge, lists extend, strings concatenate. */
static json_t *merge_map(const json_t *old, const json_t *new, bool deep)
{
    if (!truthy(old))
        return json_incref((json_t *)new);
    json_t *out = json_deep_copy(old);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)new, k, v)
    {
        if (json_is_null(v))
            continue;
        json_t *was = json_object_get(out, k), *merged = NULL;
        if (!deep || (!json_is_object(v) && !json_is_array(v) && !json_is_string(v)))
            merged = json_incref(v);
        else if (json_is_object(v))
            merged = truthy(was) && json_is_object(was) ? merge_map(was, v, true) : json_incref(v);
        else if (json_is_array(v))
            merged = truthy(was) ? merge_list(was, v) : json_incref(v);
        else
            merged = concat(was, v);
        json_object_set_new(out, k, merged ? merged : json_incref(v));
    }
    return out;
}

/* ---------------------------------------------------------------- parameters */

static const char *strategy_of(const json_t *in_file, const char *name, const json_t *known)
{
    if (!json_is_object(in_file))
        return "overwrite";
    const json_t *dflt = json_object_get(in_file, "default");
    const char *env_default = json_is_string(dflt) ? json_string_value(dflt) : "overwrite";
    const json_t *s = json_object_get(in_file, name);
    if (!s)
        s = json_object_get(known, name);
    const char *chosen = json_is_string(s) ? json_string_value(s) : env_default;
    if (strcmp(chosen, "overwrite") == 0 || strcmp(chosen, "merge") == 0 ||
        strcmp(chosen, "deep_merge") == 0)
        return chosen;
    return env_default;
}

/* The merge of one parameter value by its declared type (param_merge). */
static json_t *merge_value(const merge_ctx_t *m, const json_t *old, const char *name,
                           const char *type, const json_t *value, bool deep)
{
    json_t *parsed = NULL, *out = NULL;
    if (strcmp(type, "json") == 0) {
        parsed = json_is_string(value) ? json_loads(json_string_value(value), 0, NULL)
                                       : json_incref((json_t *)value);
        if (!json_is_object(parsed)) {
            json_decref(parsed);
            merge_fail(m, "Invalid parameter in environment %s%s.", "", "");
            return NULL;
        }
        const json_t *was = json_object_get(old, name);
        out = merge_map(json_is_object(was) ? was : NULL, parsed, deep);
    } else if (strcmp(type, "comma_delimited_list") == 0) {
        out = merge_list(json_object_get(old, name), value);
    } else if (strcmp(type, "string") == 0 && json_is_string(value)) {
        out = concat(json_object_get(old, name), value);
    } else if (strcmp(type, "number") == 0 && json_is_number(value)) {
        const json_t *was = json_object_get(old, name);
        double sum = json_number_value(value) + (json_is_number(was) ? json_number_value(was) : 0);
        out = json_is_integer(value) && (!was || json_is_integer(was))
                  ? json_integer((json_int_t)sum)
                  : json_real(sum);
    } else if (strcmp(type, "boolean") == 0) {
        merge_fail(m, "Invalid merge strategy '%s' for parameter '%s'.", "merge", name);
        return NULL;
    }
    json_decref(parsed);
    if (!out)
        merge_fail(m, "Invalid parameter in environment %s%s.", "", "");
    return out;
}

static const char *declared_type(const json_t *decls, const char *name)
{
    const char *t = json_string_value(json_object_get(json_object_get(decls, name), "type"));
    return t ? t : "string";
}

/* merge_parameters: strategies are fixed for the whole merge first (a file
 * asking a parameter's strategy to change fails), then applied. */
static int merge_parameters(const merge_ctx_t *m, json_t *env, const char *section,
                            const json_t *new, const json_t *decls, const json_t *in_file,
                            json_t *known)
{
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)new, name, v)
    {
        if (!json_object_get(decls, name) || json_is_null(v))
            continue;
        const char *s = strategy_of(in_file, name, known);
        const char *was = json_string_value(json_object_get(known, name));
        if (!was)
            json_object_set_new(known, name, json_string(s));
        else if (strcmp(was, s) != 0)
            return merge_fail(m, "Conflicting merge strategy '%s' for parameter '%s' in file '%s'.",
                              s, name);
    }
    json_t *old = json_object_get(env, section);
    if (!truthy(old))
        return json_object_set_new(env, section, json_deep_copy(new)) ? CV_ENOMEM : 0;
    json_object_foreach((json_t *)new, name, v)
    {
        if (!json_object_get(decls, name) || json_is_null(v))
            continue;
        const char *s = json_string_value(json_object_get(known, name));
        json_t *merged = strcmp(s, "overwrite") == 0
                             ? json_incref(v)
                             : merge_value(m, old, name, declared_type(decls, name), v,
                                           strcmp(s, "deep_merge") == 0);
        if (!merged)
            return CV_EVALIDATE;
        json_object_set_new(old, name, merged);
    }
    return 0;
}

int cv_env_merge(json_t *env, json_t *strategies, const json_t *file, const json_t *param_decls,
                 const char *fname, char *errstr, size_t errstr_size)
{
    merge_ctx_t m = {fname ? fname : "-", errstr, errstr_size};
    const json_t *in_file = json_object_get(file, "parameter_merge_strategies");
    const json_t *decls = json_is_object(param_decls) ? param_decls : NULL;
    const char *section;
    json_t *v;
    json_object_foreach((json_t *)file, section, v)
    {
        if (strcmp(section, "parameter_merge_strategies") == 0 || !truthy(v))
            continue;
        int rc = 0;
        if (strcmp(section, "parameters") == 0 || strcmp(section, "parameter_defaults") == 0) {
            rc = merge_parameters(&m, env, section, v, decls, in_file, strategies);
        } else if (json_is_array(v)) {
            json_t *was = json_object_get(env, section);
            json_t *joined = json_is_array(was) ? json_copy(was) : json_array();
            json_array_extend(joined, v);
            rc = json_object_set_new(env, section, joined) ? CV_ENOMEM : 0;
        } else {
            rc = json_object_set_new(env, section,
                                     merge_map(json_object_get(env, section), v, false))
                     ? CV_ENOMEM
                     : 0;
        }
        if (rc)
            return rc == CV_ENOMEM
                       ? cv_seterr(errstr, errstr_size, rc, "%s: out of memory", m.fname)
                       : rc;
    }
    return 0;
}
