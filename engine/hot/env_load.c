/*
 * env_load — Heat environment files: reading one (cv_env_read) with its
 * sections checked as Heat checks them, and the older parameter-only view
 * of one (cv_env_load) that the parameter tests and fuzzers drive.
 *
 * A section Heat does not know is an error, since it is most likely a typo
 * of one that matters. In the registry, `hooks` and `restricted_actions`
 * take only the values Heat accepts, with Heat's messages.
 */
#include "cv__template_internal.h"
#include "cv_env.h"
#include "cv_base.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    json_type type;
} sections[] = {
    {"parameters", JSON_OBJECT},           {"parameter_defaults", JSON_OBJECT},
    {"resource_registry", JSON_OBJECT},    {"event_sinks", JSON_ARRAY},
    {"encrypted_param_names", JSON_ARRAY}, {"parameter_merge_strategies", JSON_OBJECT},
};

static int check_sections(const cv__tpl_ctx_t *ctx, const json_t *env)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)env, key, v)
    {
        size_t i = 0, n = sizeof(sections) / sizeof(sections[0]);
        while (i < n && strcmp(sections[i].name, key) != 0)
            i++;
        if (i == n)
            return cv__tpl_err(ctx, CV_EVALIDATE, key,
                               "unknown environment section \"%s\" (allowed: parameters, "
                               "parameter_defaults, resource_registry, event_sinks, "
                               "encrypted_param_names, parameter_merge_strategies)",
                               key);
        if (!json_is_null(v) && json_typeof(v) != sections[i].type)
            return cv__tpl_err(ctx, CV_EVALIDATE, key, "must be %s, got %s",
                               sections[i].type == JSON_OBJECT ? "a map" : "a list",
                               cv__type_name(v));
    }
    return 0;
}

/* ---------------------------------------------------------------- registry */

static const char *const hook_types[] = {"pre-create",  "pre-update",  "pre-delete",
                                         "post-create", "post-update", "post-delete"};
static const char *const restricted_types[] = {"update", "replace"};

static bool one_of(const json_t *v, const char *const *names, size_t n)
{
    for (size_t i = 0; json_is_string(v) && i < n; i++)
        if (strcmp(json_string_value(v), names[i]) == 0)
            return true;
    return false;
}

/* A string or a list of strings, each one of `names`. */
static bool all_of(const json_t *v, const char *const *names, size_t n)
{
    if (!json_is_array(v))
        return one_of(v, names, n);
    size_t i;
    const json_t *item;
    json_array_foreach(v, i, item)
    {
        if (!one_of(item, names, n))
            return false;
    }
    return true;
}

/* A value as Python's str() shows it in Heat's messages: 'a' in lists,
 * bare at the top. */
static void py_str(const json_t *v, bool quoted, char *out, size_t size)
{
    if (json_is_string(v)) {
        snprintf(out, size, quoted ? "'%s'" : "%s", json_string_value(v));
        return;
    }
    if (!json_is_array(v)) {
        cv__describe(v, out, size);
        return;
    }
    size_t n = (size_t)snprintf(out, size, "[");
    size_t i;
    const json_t *item;
    json_array_foreach(v, i, item)
    {
        if (n >= size)
            return;
        if (i)
            n += (size_t)snprintf(out + n, size - n, ", ");
        if (n < size)
            py_str(item, true, out + n, size - n);
        n = strlen(out);
    }
    if (n < size)
        snprintf(out + n, size - n, "]");
}

static void py_tuple(const char *const *names, size_t n, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "(");
    for (size_t i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(out + len, size - len, "%s'%s'", i ? ", " : "", names[i]);
    if (len < size)
        snprintf(out + len, size - len, ")");
}

/* Heat's _load_registry: every `hooks` and `restricted_actions`, at any
 * depth of the registry, holds valid values. */
static int check_registry(const cv__tpl_ctx_t *ctx, const json_t *reg, cv__path_t *path)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)reg, key, v)
    {
        size_t mark = cv__path_key(path, key);
        char shown[256], types[160];
        int rc = 0;
        if (strcmp(key, "hooks") == 0 && !all_of(v, hook_types, 6)) {
            py_str(v, false, shown, sizeof(shown));
            py_tuple(hook_types, 6, types, sizeof(types));
            rc = cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                             "Invalid hook type \"%s\" for resource breakpoint, acceptable hook "
                             "types are: %s",
                             shown, types);
        } else if (strcmp(key, "restricted_actions") == 0 && !all_of(v, restricted_types, 2)) {
            py_str(v, false, shown, sizeof(shown));
            py_tuple(restricted_types, 2, types, sizeof(types));
            rc = cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                             "Invalid restricted_action type \"%s\" for resource, acceptable "
                             "restricted_action types are: %s",
                             shown, types);
        } else if (json_is_object(v)) {
            rc = check_registry(ctx, v, path);
        } else if (!json_is_string(v) && !json_is_null(v) && strcmp(key, "hooks") != 0 &&
                   strcmp(key, "restricted_actions") != 0) {
            rc = cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                             "a registry entry maps to a type name or a template file, got %s",
                             cv__type_name(v));
        }
        cv__path_pop(path, mark);
        if (rc)
            return rc;
    }
    return 0;
}

static int load_checked(const cv__tpl_ctx_t *ctx, const char *text, size_t len, json_t **out)
{
    /* An empty environment file is a valid, empty environment. */
    json_t *env = cv__yaml_load(text, len, ctx->fname, true, ctx->errstr, ctx->errstr_size);
    *out = NULL;
    if (!env)
        return CV_EPARSE;
    int rc = 0;
    if (json_is_null(env)) {
        json_decref(env);
        *out = json_object();
        return *out ? 0 : CV_ENOMEM;
    }
    if (!json_is_object(env))
        rc = cv__tpl_err(ctx, CV_EVALIDATE, NULL, "an environment must be a map, got %s",
                         cv__type_name(env));
    rc = rc ? rc : check_sections(ctx, env);
    cv__path_t path;
    cv__path_init(&path, "resource_registry");
    const json_t *reg = json_object_get(env, "resource_registry");
    rc = rc || !json_is_object(reg) ? rc : check_registry(ctx, reg, &path);
    if (rc)
        json_decref(env);
    else
        *out = env;
    return rc;
}

json_t *cv_env_read(const char *text, size_t len, const char *fname, char *errstr,
                    size_t errstr_size)
{
    cv__tpl_ctx_t ctx = {
        .fname = fname ? fname : "-", .errstr = errstr, .errstr_size = errstr_size};
    json_t *env;
    load_checked(&ctx, text, len, &env);
    return env;
}

/* ---------------------------------------------------------------- parameters only */

/* Nothing is merged until the whole file has been checked, so a bad file
 * leaves `params` as it was. */
static int merge(const json_t *env, json_t *params, json_t *defaults)
{
    const char *name;
    json_t *v;
    json_object_foreach(json_object_get(env, "parameters"), name, v)
    {
        if (json_object_set(params, name, v))
            return CV_ENOMEM;
    }
    json_object_foreach(json_object_get(env, "parameter_defaults"), name, v)
    {
        if (defaults ? json_object_set(defaults, name, v) != 0
                     : !json_object_get(params, name) && json_object_set(params, name, v) != 0)
            return CV_ENOMEM;
    }
    return 0;
}

void cv_env_apply_defaults(json_t *params, const json_t *defaults, const json_t *tpl)
{
    const json_t *declared = json_object_get(tpl, "parameters");
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)defaults, name, v)
    {
        if (json_object_get(declared, name) && !json_object_get(params, name))
            json_object_set(params, name, v);
    }
}

int cv_env_load(const char *text, size_t len, const char *fname, json_t *params, json_t *defaults,
                char *errstr, size_t errstr_size)
{
    cv__tpl_ctx_t ctx = {
        .fname = fname ? fname : "-", .errstr = errstr, .errstr_size = errstr_size};
    if (!json_is_object(params))
        return cv__tpl_err(&ctx, CV_EINVAL, NULL, "no parameter map to merge into");
    json_t *env;
    int rc = load_checked(&ctx, text, len, &env);
    if (rc)
        return rc;
    rc = merge(env, params, defaults);
    if (rc == CV_ENOMEM)
        cv__tpl_err(&ctx, rc, NULL, "out of memory");
    json_decref(env);
    return rc;
}
