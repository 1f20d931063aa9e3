/*
 * env_load — Heat environment files.
 *
 * Of an environment we use the parameter values: `parameters` (what the
 * user chose, overriding values given before) and `parameter_defaults`
 * (values used only where nothing else was given). The other sections Heat
 * defines are accepted and ignored, so existing environment files load;
 * a section Heat does not know is an error, since it is most likely a typo
 * of one that matters.
 */
#include "cv__template_internal.h"
#include "cv_error.h"

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
    /* An empty environment file is a valid, empty environment. */
    json_t *env = cv__yaml_load(text, len, ctx.fname, true, errstr, errstr_size);
    if (!env)
        return CV_EPARSE;
    int rc = 0;
    if (!json_is_null(env) && !json_is_object(env))
        rc = cv__tpl_err(&ctx, CV_EVALIDATE, NULL, "an environment must be a map, got %s",
                         cv__type_name(env));
    rc = rc ? rc : check_sections(&ctx, env);
    rc = rc ? rc : merge(env, params, defaults);
    if (rc == CV_ENOMEM)
        cv__tpl_err(&ctx, rc, NULL, "out of memory");
    json_decref(env);
    return rc;
}
