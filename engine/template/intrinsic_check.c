/*
 * intrinsic_check — intrinsic-function calls checked before anything runs.
 *
 * At validation time nothing is resolved, but a call's shape and what it
 * names are known: get_param must name a declared parameter, get_resource
 * and get_attr an existing resource other than the caller, get_attr an
 * attribute that resource's type has. Catching these here is what turns a
 * typo into an error at submit time instead of a failed resource an hour
 * into a deployment.
 *
 * Errors are reported at the value holding the call, e.g.
 * "resources.web.properties.name: get_attr: ..."; the call's own arguments
 * do not extend the path.
 */
#include "cv__template_internal.h"
#include "cv_error.h"
#include "cv_rtype.h"

#include <string.h>

bool cv__tpl_param_known(const cv__tpl_ctx_t *ctx, const char *name)
{
    return json_object_get(ctx->param_defs, name) || cv__tpl_param_pseudo(name);
}

static int fn_err(const cv__tpl_ctx_t *ctx, const cv__path_t *path, const char *fn,
                  const char *what, const json_t *got)
{
    char shown[128];
    cv__describe(got, shown, sizeof(shown));
    return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "%s: %s, got %s", fn, what, shown);
}

/* The arguments of a call: any calls inside are checked, reported at the
 * value holding the outer call (arguments have no path of their own). */
static int check_args(const cv__tpl_ctx_t *ctx, const json_t *v, cv__path_t *path, const char *self)
{
    const char *name;
    const json_t *arg;
    if (cv__fn_of(v, &name, &arg) != CV__FN_NONE)
        return cv__tpl_check_intrinsics(ctx, v, path, self);
    int rc = 0;
    for (size_t i = 0; rc == 0 && json_is_array(v) && i < json_array_size(v); i++)
        rc = check_args(ctx, json_array_get(v, i), path, self);
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)v, key, item)
    {
        if (rc == 0)
            rc = check_args(ctx, item, path, self);
    }
    return rc;
}

/* A key or index into a parameter or attribute value: literal or computed. */
static int check_path_items(const cv__tpl_ctx_t *ctx, const json_t *list, size_t from,
                            cv__path_t *path, const char *self, const char *fn)
{
    for (size_t i = from; i < json_array_size(list); i++) {
        const json_t *item = json_array_get(list, i);
        if (json_is_string(item) || json_is_integer(item))
            continue;
        const char *name;
        const json_t *arg;
        if (cv__fn_of(item, &name, &arg) == CV__FN_NONE)
            return fn_err(ctx, path, fn, "path items must be keys or indexes", item);
        int rc = check_args(ctx, item, path, self);
        if (rc)
            return rc;
    }
    return 0;
}

static int check_get_param(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                           const char *self)
{
    const json_t *name = json_is_array(arg) ? json_array_get(arg, 0) : arg;
    if (!json_is_string(name))
        return fn_err(ctx, path, "get_param",
                      "expected a parameter name or a list [name, key/index...]", arg);
    if (!cv__tpl_param_known(ctx, json_string_value(name)))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "get_param: parameter \"%s\" is not defined in the template",
                           json_string_value(name));
    return json_is_array(arg) ? check_path_items(ctx, arg, 1, path, self, "get_param") : 0;
}

/* The resource a get_resource / get_attr names must exist and not be the
 * resource making the reference: that would be a dependency on itself. */
static int check_target(const cv__tpl_ctx_t *ctx, const char *target, cv__path_t *path,
                        const char *self, const char *fn)
{
    if (self && strcmp(target, self) == 0)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "%s: resource \"%s\" cannot refer to itself", fn, target);
    if (!json_object_get(ctx->resources, target))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "%s: resource \"%s\" does not exist", fn,
                           target);
    return 0;
}

static int check_get_resource(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                              const char *self)
{
    if (!json_is_string(arg))
        return fn_err(ctx, path, "get_resource", "expected a resource name", arg);
    return check_target(ctx, json_string_value(arg), path, self, "get_resource");
}

static int check_attribute(const cv__tpl_ctx_t *ctx, const char *target, const char *attr,
                           cv__path_t *path)
{
    const json_t *def = json_object_get(ctx->resources, target);
    const char *type = json_string_value(json_object_get(def, "type"));
    if (type && !cv__tpl_has_attr(ctx, type, def, attr))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "get_attr: unknown attribute \"%s\" of resource \"%s\" (type %s)", attr,
                           target, type);
    return 0;
}

static int check_get_attr(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                          const char *self)
{
    if (!json_is_array(arg) || json_array_size(arg) < 2)
        return fn_err(ctx, path, "get_attr", "expected a list [resource, attribute, key/index...]",
                      arg);
    const json_t *target = json_array_get(arg, 0), *attr = json_array_get(arg, 1);
    const char *fn;
    const json_t *fn_arg;
    if (!json_is_string(target))
        return fn_err(ctx, path, "get_attr", "the resource must be named by a string", target);
    int rc = check_target(ctx, json_string_value(target), path, self, "get_attr");
    if (rc == 0 && json_is_string(attr))
        rc = check_attribute(ctx, json_string_value(target), json_string_value(attr), path);
    else if (rc == 0 && cv__fn_of(attr, &fn, &fn_arg) != CV__FN_NONE)
        rc = check_args(ctx, attr, path, self);
    else if (rc == 0)
        rc = fn_err(ctx, path, "get_attr", "the attribute name must be a string", attr);
    return rc ? rc : check_path_items(ctx, arg, 2, path, self, "get_attr");
}

/* A value that must be of one JSON type unless a function computes it. */
static bool literal_or_call(const json_t *v, json_type type)
{
    const char *fn;
    const json_t *arg;
    return json_typeof(v) == type || cv__fn_of(v, &fn, &arg) != CV__FN_NONE;
}

static int check_replace_params(const cv__tpl_ctx_t *ctx, const json_t *params, cv__path_t *path,
                                const char *self)
{
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)params, key, value)
    {
        /* Lists and maps are substituted as JSON since 2015-10-15. */
        bool structured = json_is_array(value) || json_is_object(value);
        const char *fn;
        const json_t *arg;
        if (structured && ctx->version < CV__V20151015 &&
            cv__fn_of(value, &fn, &arg) == CV__FN_NONE)
            return fn_err(ctx, path, "str_replace", "params values must be strings or numbers",
                          value);
        if (key[0] == '\0')
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                               "str_replace: params keys may not be empty");
    }
    return check_args(ctx, params, path, self);
}

static int check_str_replace(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                             const char *self)
{
    const json_t *tmpl = json_object_get(arg, "template");
    const json_t *params = json_object_get(arg, "params");
    if (!json_is_object(arg) || !tmpl || !params || json_object_size(arg) != 2)
        return fn_err(ctx, path, "str_replace",
                      "expected a map of exactly \"template\" and \"params\"", arg);
    if (!literal_or_call(tmpl, JSON_STRING))
        return fn_err(ctx, path, "str_replace", "template must be a string", tmpl);
    if (!literal_or_call(params, JSON_OBJECT))
        return fn_err(ctx, path, "str_replace", "params must be a map", params);
    int rc = check_args(ctx, tmpl, path, self);
    const char *fn;
    const json_t *fn_arg;
    if (rc == 0 && cv__fn_of(params, &fn, &fn_arg) != CV__FN_NONE)
        return check_args(ctx, params, path, self);
    return rc ? rc : check_replace_params(ctx, params, path, self);
}

static int check_list_join(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                           const char *self)
{
    if (!json_is_array(arg) || json_array_size(arg) < 2)
        return fn_err(ctx, path, "list_join", "expected a list [delimiter, list...]", arg);
    if (json_array_size(arg) > 2 && ctx->version < CV__V20151015)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "list_join: joining several lists needs heat_template_version "
                           "2015-10-15 or later");
    if (!literal_or_call(json_array_get(arg, 0), JSON_STRING))
        return fn_err(ctx, path, "list_join", "the delimiter must be a string",
                      json_array_get(arg, 0));
    for (size_t i = 1; i < json_array_size(arg); i++) {
        const json_t *list = json_array_get(arg, i);
        if (!json_is_null(list) && !literal_or_call(list, JSON_ARRAY))
            return fn_err(ctx, path, "list_join", "expected a list to join", list);
    }
    return check_args(ctx, arg, path, self);
}

static int check_data(const cv__tpl_ctx_t *ctx, const json_t *v, cv__path_t *path, const char *self)
{
    int rc = 0;
    if (json_is_array(v)) {
        for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
            size_t mark = cv__path_index(path, i);
            rc = cv__tpl_check_intrinsics(ctx, json_array_get(v, i), path, self);
            cv__path_pop(path, mark);
        }
    } else if (json_is_object(v)) {
        const char *key;
        const json_t *item;
        json_object_foreach((json_t *)v, key, item)
        {
            size_t mark = cv__path_key(path, key);
            rc = cv__tpl_check_intrinsics(ctx, item, path, self);
            cv__path_pop(path, mark);
            if (rc)
                break;
        }
    }
    return rc;
}

int cv__tpl_check_intrinsics(const cv__tpl_ctx_t *ctx, const json_t *v, cv__path_t *path,
                             const char *self)
{
    const char *name = NULL;
    const json_t *arg = NULL;
    switch (cv__fn_of(v, &name, &arg)) {
    case CV__FN_GET_PARAM:
        return check_get_param(ctx, arg, path, self);
    case CV__FN_GET_RESOURCE:
        return check_get_resource(ctx, arg, path, self);
    case CV__FN_GET_ATTR:
        return check_get_attr(ctx, arg, path, self);
    case CV__FN_STR_REPLACE:
        return check_str_replace(ctx, arg, path, self);
    case CV__FN_LIST_JOIN:
        return check_list_join(ctx, arg, path, self);
    case CV__FN_UNSUPPORTED:
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "function %s is not supported", name);
    default:
        return check_data(ctx, v, path, self);
    }
}
