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
#include "cv__digest.h"
#include "cv__fn_messages.h"
#include "cv__template_internal.h"
#include "cv_base.h"
#include "cv_rtype.h"

#include <ctype.h>
#include <stdlib.h>
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
        if (cv__fn_of(item, &name, &arg) == CV__FN_NONE && strcmp(fn, "get_param") == 0)
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__GET_PARAM_PATH);
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
    if (!cv__py_truthy(arg))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__GET_PARAM_NO_ARGS);
    if (!json_is_string(arg) && !json_is_array(arg))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__GET_PARAM_NOT_LIST);
    if (!json_is_string(name))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__GET_PARAM_NAME);
    if (!cv__tpl_param_known(ctx, json_string_value(name)))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__PARAM_MISSING,
                           json_string_value(name));
    return json_is_array(arg) ? check_path_items(ctx, arg, 1, path, self, "get_param") : 0;
}

/* Where Heat says a reference is: "r.Properties.p[0]" for
 * "resources.r.properties.p[0]" (heat/engine/rsrc_defn.py names the
 * sections as CloudFormation does); outputs are validated without a path
 * in Heat, which says "unknown". */
static void heat_key(const cv__path_t *path, const char *self, char *out, size_t size)
{
    static const struct {
        const char *ours, *heat;
    } sections[] = {{"properties", "Properties"},
                    {"metadata", "Metadata"},
                    {"update_policy", "UpdatePolicy"},
                    {"deletion_policy", "DeletionPolicy"}};
    size_t skip = strlen("resources.") + (self ? strlen(self) : 0);
    if (!self || strncmp(path->buf, "resources.", 10) != 0 || path->len <= skip ||
        path->buf[skip] != '.') {
        snprintf(out, size, "unknown");
        return;
    }
    const char *rest = path->buf + skip + 1;
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
        size_t n = strlen(sections[i].ours);
        if (strncmp(rest, sections[i].ours, n) == 0 &&
            (rest[n] == '\0' || rest[n] == '.' || rest[n] == '[')) {
            snprintf(out, size, "%s.%s%s", self, sections[i].heat, rest + n);
            return;
        }
    }
    snprintf(out, size, "%s.%s", self, rest);
}

/* The resource a get_resource / get_attr names must exist and not be the
 * resource making the reference: that would be a dependency on itself. */
static int check_target(const cv__tpl_ctx_t *ctx, const char *target, cv__path_t *path,
                        const char *self, const char *fn)
{
    if (self && strcmp(target, self) == 0)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "%s: resource \"%s\" cannot refer to itself", fn, target);
    if (!json_object_get(ctx->resources, target)) {
        char key[1100];
        heat_key(path, self, key, sizeof(key));
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "The specified reference \"%s\" (in %s) is incorrect.", target, key);
    }
    return 0;
}

static int check_get_resource(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                              const char *self)
{
    if (!json_is_string(arg))
        return fn_err(ctx, path, "get_resource", "expected a resource name", arg);
    return check_target(ctx, json_string_value(arg), path, self, "get_resource");
}

static int check_attribute(const cv__tpl_ctx_t *ctx, const char *target, const json_t *args,
                           cv__path_t *path)
{
    const json_t *def = json_object_get(ctx->resources, target);
    const char *type = json_string_value(json_object_get(def, "type"));
    const char *attr = json_string_value(json_array_get(args, 1));
    char msg[600], mapped[512];
    if (type && !cv__tpl_has_attr(ctx, type, def, attr))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "The Referenced Attribute (%s %s) is incorrect.", target, attr);
    if (type && cv__tpl_group_path_check(
                    ctx, cv__tpl_mapped_type(ctx, type, target, mapped, sizeof(mapped)), def, args,
                    msg, sizeof(msg)))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "%s", msg);
    return 0;
}

static int check_get_attr(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                          const char *self)
{
    /* [resource] alone, every attribute, from 2015-10-15 (GetAttAllAttributes). */
    bool all_ok = ctx->version >= CV__V20151015;
    bool all = json_array_size(arg) == 1 && all_ok;
    if (all_ok && !cv__py_truthy(arg))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__GET_ATTR_FORMS);
    if (!json_is_array(arg))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__GET_ATTR_NOT_LIST);
    if (json_array_size(arg) < 2 && !all)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__GET_ATTR_FORM);
    const json_t *target = json_array_get(arg, 0), *attr = json_array_get(arg, 1);
    const char *fn;
    const json_t *fn_arg;
    if (!json_is_string(target))
        return fn_err(ctx, path, "get_attr", "the resource must be named by a string", target);
    int rc = check_target(ctx, json_string_value(target), path, self, "get_attr");
    if (rc == 0 && all)
        return 0;
    if (rc == 0 && json_is_string(attr))
        rc = check_attribute(ctx, json_string_value(target), arg, path);
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

static int check_replace_params(const cv__tpl_ctx_t *ctx, const char *name, const json_t *params,
                                cv__path_t *path, const char *self)
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
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__REPLACE_VALUE, name, key);
        if (key[0] == '\0')
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "%s: params keys may not be empty",
                               name);
    }
    return check_args(ctx, params, path, self);
}

/* str_replace, str_replace_strict and str_replace_vstrict, which differ
 * only once they run. */
static int check_str_replace(const cv__tpl_ctx_t *ctx, const char *name, const json_t *arg,
                             cv__path_t *path, const char *self)
{
    const json_t *tmpl = json_object_get(arg, "template");
    const json_t *params = json_object_get(arg, "params");
    const char *fn;
    const json_t *fn_arg;
    if (!json_is_object(arg) || cv__fn_of(arg, &fn, &fn_arg) != CV__FN_NONE)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__REPLACE_NOT_MAP, name);
    if (!tmpl || !params)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__REPLACE_SYNTAX, name, name);
    /* Heat ignores other keys; a typo there would be lost, so we refuse. */
    if (json_object_size(arg) != 2)
        return fn_err(ctx, path, name, "expected a map of exactly \"template\" and \"params\"",
                      arg);
    if (!literal_or_call(tmpl, JSON_STRING))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__REPLACE_TEMPLATE, name);
    if (!literal_or_call(params, JSON_OBJECT))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__REPLACE_PARAMS_MAPPING, name);
    int rc = check_args(ctx, tmpl, path, self);
    if (rc == 0 && cv__fn_of(params, &fn, &fn_arg) != CV__FN_NONE)
        return check_args(ctx, params, path, self);
    return rc ? rc : check_replace_params(ctx, name, params, path, self);
}

static int check_list_join(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                           const char *self)
{
    /* Before 2015-10-15 list_join takes exactly one list (Heat's Join). */
    bool one = ctx->version < CV__V20151015;
    if (!json_is_array(arg) || json_array_size(arg) < 2 || (one && json_array_size(arg) > 2))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, one ? CV__JOIN_USAGE_ONE : CV__JOIN_USAGE);
    if (!literal_or_call(json_array_get(arg, 0), JSON_STRING))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__JOIN_DELIMITER);
    for (size_t i = 1; i < json_array_size(arg); i++) {
        const json_t *list = json_array_get(arg, i);
        if (!json_is_null(list) && !literal_or_call(list, JSON_ARRAY))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__JOIN_NOT_LIST);
    }
    return check_args(ctx, arg, path, self);
}

/* A function newer than the template's version is refused, as Heat's
 * version tables refuse it, naming the version that introduced it. */
static int check_str_split(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                           const char *self)
{
    const char *fn;
    const json_t *fn_arg;
    if (cv__fn_of(arg, &fn, &fn_arg) != CV__FN_NONE)
        return check_args(ctx, arg, path, self);
    if (!json_is_array(arg) || json_array_size(arg) < 2)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__SPLIT_USAGE);
    const json_t *delim = json_array_get(arg, 0), *str = json_array_get(arg, 1);
    if (!json_is_null(delim) && !literal_or_call(delim, JSON_STRING))
        return fn_err(ctx, path, "str_split", "the delimiter must be a string", delim);
    if (json_is_string(delim) && json_string_length(delim) == 0)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "str_split: empty separator");
    if (!json_is_null(str) && !literal_or_call(str, JSON_STRING))
        return fn_err(ctx, path, "str_split", "the value to split must be a string", str);
    return check_args(ctx, arg, path, self);
}

/* Heat shows the arguments and the item as JSON. */
static int concat_item_err(const cv__tpl_ctx_t *ctx, const cv__path_t *path, const json_t *arg,
                           const json_t *item)
{
    char *all = json_dumps(arg, JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
    char *one = json_dumps(item, JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
    int rc = cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__CONCAT_ITEM, all ? all : "?",
                         one ? one : "?");
    free(all);
    free(one);
    return rc;
}

static int check_list_concat(const cv__tpl_ctx_t *ctx, const char *name, const json_t *arg,
                             cv__path_t *path, const char *self)
{
    if (!literal_or_call(arg, JSON_ARRAY))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__CONCAT_USAGE, name, name);
    for (size_t i = 0; json_is_array(arg) && i < json_array_size(arg); i++) {
        const json_t *list = json_array_get(arg, i);
        if (!json_is_null(list) && !literal_or_call(list, JSON_ARRAY))
            return concat_item_err(ctx, path, arg, list);
    }
    return check_args(ctx, arg, path, self);
}

/* A literal null or map, or a call that computes one. */
static bool map_or_null(const json_t *v)
{
    return json_is_null(v) || literal_or_call(v, JSON_OBJECT);
}

static int check_map_merge(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                           const char *self)
{
    if (!literal_or_call(arg, JSON_ARRAY))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__MERGE_USAGE);
    for (size_t i = 0; json_is_array(arg) && i < json_array_size(arg); i++) {
        const json_t *m = json_array_get(arg, i);
        char shown[CV__PY_REPR_MAX];
        cv__py_repr(m, shown, sizeof(shown));
        if (!map_or_null(m))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__MERGE_ITEM, shown, cv__py_type(m));
    }
    return check_args(ctx, arg, path, self);
}

static int check_map_replace(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                             const char *self)
{
    const char *fn;
    const json_t *fn_arg;
    if (cv__fn_of(arg, &fn, &fn_arg) != CV__FN_NONE)
        return check_args(ctx, arg, path, self);
    if (!json_is_array(arg) || json_array_size(arg) != 2)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__MAP_REPLACE_USAGE);
    const json_t *in = json_array_get(arg, 0), *repl = json_array_get(arg, 1);
    if (!map_or_null(in) || !map_or_null(repl))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__MAP_REPLACE_MAPS);
    const char *key;
    const json_t *value;
    if (cv__fn_of(repl, &fn, &fn_arg) != CV__FN_NONE)
        return check_args(ctx, arg, path, self);
    json_object_foreach((json_t *)repl, key, value)
    {
        if (strcmp(key, "keys") != 0 && strcmp(key, "values") != 0)
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__MAP_REPLACE_USAGE);
        if (!map_or_null(value))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__MAP_REPLACE_MAPS);
    }
    const char *from;
    const json_t *to;
    json_object_foreach(json_object_get(repl, "keys"), from, to)
    {
        if (!json_is_null(to) && !literal_or_call(to, JSON_STRING))
            return fn_err(ctx, path, "map_replace", "key replacements must be strings", to);
    }
    return check_args(ctx, arg, path, self);
}

static int check_digest(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                        const char *self)
{
    const char *fn;
    const json_t *fn_arg;
    if (cv__fn_of(arg, &fn, &fn_arg) != CV__FN_NONE)
        return check_args(ctx, arg, path, self);
    if (!json_is_array(arg))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__DIGEST_NOT_STRINGS);
    for (size_t i = 0; i < json_array_size(arg); i++)
        if (!literal_or_call(json_array_get(arg, i), JSON_STRING))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__DIGEST_NOT_STRINGS);
    if (json_array_size(arg) != 2)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__DIGEST_USAGE);
    const json_t *alg = json_array_get(arg, 0);
    char hex[CV__DIGEST_HEX_MAX], name[16];
    size_t n = json_string_length(alg);
    for (size_t i = 0; json_is_string(alg) && i < n && i < sizeof(name) - 1; i++)
        name[i] = (char)tolower((unsigned char)json_string_value(alg)[i]);
    name[n < sizeof(name) ? n : sizeof(name) - 1] = '\0';
    if (json_is_string(alg) && (n >= sizeof(name) || cv__digest_hex(name, "", 0, hex) != 0))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__DIGEST_ALGORITHM);
    return check_args(ctx, arg, path, self);
}

static int check_repeat(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                        const char *self)
{
    const char *fn;
    const json_t *fn_arg;
    if (!json_is_object(arg) || cv__fn_of(arg, &fn, &fn_arg) != CV__FN_NONE)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__REPEAT_NOT_MAP);
    const json_t *for_each = json_object_get(arg, "for_each");
    const json_t *perm = json_object_get(arg, "permutations");
    if (!for_each || !json_object_get(arg, "template"))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "%s", CV__REPEAT_SYNTAX);
    /* Heat before 2017-09-01 ignores "permutations" and always takes every
     * combination; refusing it is better than running it differently. */
    if (perm && ctx->version < CV__V20170901)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "repeat: permutations needs heat_template_version 2017-09-01 or later");
    if (perm && !json_is_boolean(perm))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__REPEAT_PERMUTATIONS);
    if (!literal_or_call(for_each, JSON_OBJECT))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__REPEAT_FOR_EACH);
    bool maps = ctx->version >= CV__V20161014 && !json_is_false(perm);
    const char *var;
    const json_t *list;
    json_object_foreach(
        cv__fn_of(for_each, &fn, &fn_arg) == CV__FN_NONE ? (json_t *)for_each : NULL, var, list)
    {
        if (!json_is_null(list) && !literal_or_call(list, JSON_ARRAY) &&
            !(maps && json_is_object(list)))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                               maps ? CV__REPEAT_LISTS_OR_MAPS : CV__REPEAT_LISTS);
    }
    return check_args(ctx, arg, path, self);
}

static int check_make_url(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                          const char *self)
{
    static const char *const keys[] = {"scheme", "username", "password", "host",
                                       "port",   "path",     "query",    "fragment"};
    const char *fn;
    const json_t *fn_arg;
    if (!json_is_object(arg) || cv__fn_of(arg, &fn, &fn_arg) != CV__FN_NONE)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__URL_NOT_MAP);
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)arg, key, value)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            known = known || strcmp(key, keys[i]) == 0;
        if (!known)
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__URL_INVALID, key);
        if (strcmp(key, "query") == 0 && !literal_or_call(value, JSON_OBJECT))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__URL_QUERY);
        char text[64], msg[768];
        if (strcmp(key, "port") == 0 && cv__fn_of(value, &fn, &fn_arg) == CV__FN_NONE &&
            !cv__url_port_ok(value, arg, text, sizeof(text), msg, sizeof(msg)))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "%s", msg);
        if (strcmp(key, "query") != 0 && strcmp(key, "port") != 0 &&
            !literal_or_call(value, JSON_STRING))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__URL_NOT_STRING, key);
    }
    return check_args(ctx, arg, path, self);
}

/* filter and contains: Heat checks the number of arguments when it parses
 * the call; what they hold is checked once resolved. */
static int check_pair(const cv__tpl_ctx_t *ctx, cv__fn_t fn, const json_t *arg, cv__path_t *path,
                      const char *self)
{
    const char *name;
    const json_t *fn_arg;
    if (cv__fn_of(arg, &name, &fn_arg) != CV__FN_NONE)
        return check_args(ctx, arg, path, self);
    if (fn == CV__FN_FILTER && !json_is_array(arg))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "Argument to \"filter\" must be a list");
    if (fn == CV__FN_FILTER && json_array_size(arg) != 2)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "\"filter\" expected 2 arguments of the form [values, sequence] but "
                           "got %zu arguments instead",
                           json_array_size(arg));
    if (fn == CV__FN_CONTAINS && (!json_is_array(arg) || json_array_size(arg) == 0))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "Incorrect arguments to \"contains\" should be: \"contains\" : [ "
                           "\"value1\", [ \"value1\", \"value2\"]]");
    if (fn == CV__FN_CONTAINS && json_array_size(arg) != 2)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                           "Arguments to \"contains\" must be of the form: [value1, [value1, "
                           "value2]]");
    return check_args(ctx, arg, path, self);
}

/* yaql: Heat checks the keys when it parses the call and a literal
 * expression when it validates; so do we, and refuse what the subset of
 * yaql.c does not cover before anything runs. */
static int check_yaql(const cv__tpl_ctx_t *ctx, const json_t *arg, cv__path_t *path,
                      const char *self)
{
    const char *key;
    const json_t *v;
    bool bad_key = false;
    if (!json_is_object(arg) || cv_is_intrinsic(arg))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "yaql: " CV__YAQL_NOT_MAP);
    json_object_foreach((json_t *)arg, key, v)
    {
        bad_key = bad_key || (strcmp(key, "expression") != 0 && strcmp(key, "data") != 0);
    }
    const json_t *expression = json_object_get(arg, "expression");
    if (bad_key || !expression)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "yaql: " CV__YAQL_USAGE);
    const char *fn;
    const json_t *fn_arg;
    if (cv__fn_of(expression, &fn, &fn_arg) == CV__FN_NONE && !json_is_string(expression))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "yaql: " CV__YAQL_NOT_STRING);
    char msg[400];
    if (json_is_string(expression) &&
        cv__yaql_check(json_string_value(expression), msg, sizeof(msg)) != 0)
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "yaql: %s", msg);
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
    cv__fn_t fn = cv__fn_of(v, &name, &arg);
    switch (fn) {
    case CV__FN_GET_PARAM:
        return check_get_param(ctx, arg, path, self);
    case CV__FN_GET_RESOURCE:
        return check_get_resource(ctx, arg, path, self);
    case CV__FN_GET_ATTR:
        return check_get_attr(ctx, arg, path, self);
    case CV__FN_STR_REPLACE:
    case CV__FN_STR_REPLACE_STRICT:
    case CV__FN_STR_REPLACE_VSTRICT:
        return check_str_replace(ctx, name, arg, path, self);
    case CV__FN_LIST_JOIN:
        return check_list_join(ctx, arg, path, self);
    case CV__FN_STR_SPLIT:
        return check_str_split(ctx, arg, path, self);
    case CV__FN_LIST_CONCAT:
    case CV__FN_LIST_CONCAT_UNIQUE:
        return check_list_concat(ctx, name, arg, path, self);
    case CV__FN_MAP_MERGE:
        return check_map_merge(ctx, arg, path, self);
    case CV__FN_DIGEST:
        return check_digest(ctx, arg, path, self);
    case CV__FN_REPEAT:
        return check_repeat(ctx, arg, path, self);
    case CV__FN_MAKE_URL:
        return check_make_url(ctx, arg, path, self);
    case CV__FN_MAP_REPLACE:
        return check_map_replace(ctx, arg, path, self);
    case CV__FN_FILTER:
    case CV__FN_CONTAINS:
        return check_pair(ctx, fn, arg, path, self);
    case CV__FN_YAQL:
        return check_yaql(ctx, arg, path, self);
    case CV__FN_RESOURCE_FACADE:
        if (!cv__facade_key(arg))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__FACADE_USAGE);
        if (ctx->opts.depth == 0)
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                               "resource_facade: only the template of a template resource has a "
                               "parent resource to read");
        return 0;
    case CV__FN_UNSUPPORTED:
        /* Plain data in this version never gets here: it was wrapped
         * (CV__FN_DATA). What is left Heat either removed or defines
         * (a CloudFormation function of 2013-05-23 Converge lacks). */
        if (cv__hot_function(name, ctx->version) == CV__HOT_REMOVED)
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, CV__HOT_REMOVED_MSG, name);
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "function %s is not supported", name);
    case CV__FN_DATA:
        return check_data(ctx, arg, path, self);
    default:
        return check_data(ctx, v, path, self);
    }
}
