/*
 * template_resources — the resources section: each definition's keys, its
 * type, its properties checked against the type's schema, the references
 * it makes and the dependencies they imply.
 *
 * Two passes: the first checks every name and type, so that the second can
 * check a get_attr against the attributes of a resource defined further
 * down the template.
 */
#include "cv__template_internal.h"
#include "cv_base.h"
#include "cv_rtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME 255

/* Keys of a resource definition and the first version that has them. */
static const struct {
    const char *key;
    long since;
} resource_keys[] = {
    {"type", CV__V20130523},
    {"properties", CV__V20130523},
    {"metadata", CV__V20130523},
    {"depends_on", CV__V20130523},
    {"deletion_policy", CV__V20130523},
    {"update_policy", CV__V20130523},
    {"description", CV__V20130523},
    {"condition", CV__V20161014},
    {"external_id", CV__V20161014},
};

/* ---------------------------------------------------------------- pass 1 */

static int check_name(const cv__tpl_ctx_t *ctx, const char *name)
{
    size_t len = strlen(name);
    if (len == 0)
        return cv__tpl_err(ctx, CV_EVALIDATE, "resources", "a resource name may not be empty");
    if (len > MAX_NAME)
        return cv__tpl_err(ctx, CV_EVALIDATE, "resources",
                           "resource name \"%.40s...\" is longer than %d bytes", name, MAX_NAME);
    if (strchr(name, '/'))
        return cv__tpl_err(ctx, CV_EVALIDATE, "resources",
                           "resource name \"%s\" may not contain '/'", name);
    return 0;
}

static int check_keys(const cv__tpl_ctx_t *ctx, const char *where, const json_t *def)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)def, key, v)
    {
        size_t i = 0, n = sizeof(resource_keys) / sizeof(resource_keys[0]);
        while (i < n &&
               !(strcmp(resource_keys[i].key, key) == 0 && ctx->version >= resource_keys[i].since))
            i++;
        if (i == n)
            return cv__tpl_err(ctx, CV_EVALIDATE, where,
                               "unknown key \"%s\" (allowed: type, properties, metadata, "
                               "depends_on, deletion_policy, update_policy, description%s)",
                               key,
                               ctx->version >= CV__V20161014 ? ", condition, external_id" : "");
    }
    return 0;
}

static int check_type(const cv__tpl_ctx_t *ctx, const char *where, const json_t *def,
                      const char *mapped)
{
    const json_t *type = json_object_get(def, "type");
    if (!type)
        return cv__tpl_err(ctx, CV_EVALIDATE, where, "a resource needs a \"type\"");
    if (!json_is_string(type))
        return cv__tpl_err(ctx, CV_EVALIDATE, where, "type must be a string, got %s",
                           cv__type_name(type));
    const char *name = mapped;
    if (cv_rtype_is_template_file(name) && !cv__tpl_type_known(ctx, name))
        return cv__tpl_err(ctx, CV_EVALIDATE, where,
                           "template file \"%s\" was not uploaded with the stack", name);
    if (!cv__tpl_type_known(ctx, name))
        return cv__tpl_err(ctx, CV_EVALIDATE, where, "The Resource Type (%s) could not be found.",
                           name);
    return 0;
}

static int check_definition(const cv__tpl_ctx_t *ctx, const char *name, const json_t *def,
                            cv_tpl_resource_t *res)
{
    char where[300];
    snprintf(where, sizeof(where), "resources.%s", name);
    int rc = check_name(ctx, name);
    if (rc == 0 && !json_is_object(def))
        rc = cv__tpl_err(ctx, CV_EVALIDATE, where, "must be a map, got %s", cv__type_name(def));
    rc = rc ? rc : check_keys(ctx, where, def);
    /* The environment's resource_registry may map the type (env_registry.c). */
    char buf[512];
    const char *type = json_string_value(json_object_get(def, "type"));
    const char *mapped = type ? cv__tpl_mapped_type(ctx, type, name, buf, sizeof(buf)) : NULL;
    rc = rc ? rc : check_type(ctx, where, def, mapped);
    if (rc)
        return rc;
    res->name = strdup(name);
    res->type = strdup(mapped);
    res->declared_type = strdup(type);
    return res->name && res->type && res->declared_type ? 0 : CV_ENOMEM;
}

/* ---------------------------------------------------------------- pass 2 */

/* A map-valued key that may be absent or empty: {} then. */
static int map_key(const cv__tpl_ctx_t *ctx, const json_t *def, const char *key, cv__path_t *path,
                   const json_t **out)
{
    const json_t *v = json_object_get(def, key);
    *out = v && !json_is_null(v) ? v : NULL;
    if (!*out)
        return 0;
    size_t mark = cv__path_key(path, key);
    const char *fn;
    const json_t *arg;
    int rc = 0;
    cv__fn_t call = json_is_object(v) ? cv__fn_of(v, &fn, &arg) : CV__FN_NONE;
    if (!json_is_object(v) || (call != CV__FN_NONE && call != CV__FN_DATA))
        rc = cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "must be a map, got %s",
                         json_is_object(v) ? "a function call" : cv__type_name(v));
    cv__path_pop(path, mark);
    return rc;
}

static int check_depends_on(const cv__tpl_ctx_t *ctx, const char *self, const json_t *deps,
                            const char *where)
{
    const json_t *item = deps;
    for (size_t i = 0; json_is_array(deps) ? i < json_array_size(deps) : i < 1; i++) {
        if (json_is_array(deps))
            item = json_array_get(deps, i);
        if (!json_is_string(item))
            return cv__tpl_err(ctx, CV_EVALIDATE, where,
                               "must be a resource name or a list of them, got %s",
                               cv__type_name(item));
        const char *dep = json_string_value(item);
        if (strcmp(dep, self) == 0)
            return cv__tpl_err(ctx, CV_EVALIDATE, where, "resource \"%s\" cannot depend on itself",
                               self);
        if (!json_object_get(ctx->resources, dep))
            return cv__tpl_err(ctx, CV_EVALIDATE, where,
                               "The specified reference \"%s\" (in %s) is incorrect.", dep, self);
    }
    return 0;
}

static const char *policy_named(const cv__tpl_ctx_t *ctx, const char *s)
{
    static const char *const canonical[] = {"Delete", "Retain", "Snapshot"};
    static const char *const lower[] = {"delete", "retain", "snapshot"};
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(s, canonical[i]) == 0)
            return canonical[i];
        /* Heat accepts the lower-case spellings since 2016-10-14. */
        if (ctx->version >= CV__V20161014 && strcmp(s, lower[i]) == 0)
            return canonical[i];
    }
    return NULL;
}

/* Heat lets the policy come from a parameter; parameters are known here. */
static int parse_deletion_policy(const cv__tpl_ctx_t *ctx, const cv_template_t *tpl,
                                 const json_t *def, const char *where, cv_tpl_resource_t *res)
{
    const json_t *v = json_object_get(def, "deletion_policy");
    json_t *resolved = NULL;
    const char *fn;
    const json_t *arg;
    bool from_param = v && cv__fn_of(v, &fn, &arg) == CV__FN_GET_PARAM;
    if (from_param && ctx->opts.params_later && json_is_string(arg) &&
        !json_object_get(tpl->parameters, json_string_value(arg)))
        from_param = false, v = NULL; /* given by the parent later; checked then */
    if (from_param) {
        cv_resolve_ctx_t rctx = {.parameters = tpl->parameters};
        char err[512];
        if (!(resolved = cv_intrinsic_resolve(v, &rctx, where, err, sizeof(err))))
            return cv_seterr(ctx->errstr, ctx->errstr_size, CV_EVALIDATE, "%s: %s", ctx->fname,
                             err);
        v = resolved;
    }
    const char *policy = "Delete";
    if (v && !json_is_null(v))
        policy = json_is_string(v) ? policy_named(ctx, json_string_value(v)) : NULL;
    char shown[64];
    cv__describe(v, shown, sizeof(shown));
    json_decref(resolved);
    if (!policy)
        return cv__tpl_err(ctx, CV_EVALIDATE, where,
                           "invalid deletion policy %s; must be Delete, Retain or Snapshot", shown);
    res->deletion_policy = strdup(policy);
    return res->deletion_policy ? 0 : CV_ENOMEM;
}

static int check_unsupported_keys(const cv__tpl_ctx_t *ctx, const json_t *def, cv__path_t *path)
{
    const json_t *desc = json_object_get(def, "description");
    if (desc && !json_is_null(desc) && !json_is_string(desc)) {
        cv__path_key(path, "description");
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "must be a string, got %s",
                           cv__type_name(desc));
    }
    return 0;
}

/* Heat's external_id: a string (or a function giving one) naming an
 * existing physical resource, which the resource adopts instead of creating
 * one. As in Heat, an external resource may not depend_on others. */
static int parse_external_id(const cv__tpl_ctx_t *ctx, const json_t *def, cv__path_t *path,
                             cv_tpl_resource_t *res)
{
    const json_t *v = json_object_get(def, "external_id");
    if (!v || json_is_null(v))
        return 0;
    size_t mark = cv__path_key(path, "external_id");
    int rc = 0;
    if (!json_is_string(v) && !cv_is_intrinsic(v))
        rc = cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                         "Resource %s external_id type must be string", res->name);
    rc = rc ? rc : cv__tpl_check_intrinsics(ctx, v, path, res->name);
    cv__path_pop(path, mark);
    const json_t *deps = json_object_get(def, "depends_on");
    if (rc == 0 && deps && !json_is_null(deps) &&
        !(json_is_array(deps) && !json_array_size(deps))) {
        char shown[256];
        cv__describe(v, shown, sizeof(shown));
        rc = cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                         "Invalid dependency with external %s resource: %s", res->type,
                         json_is_string(v) ? json_string_value(v) : shown);
    }
    if (rc == 0 && !(res->external_id = json_deep_copy(v)))
        rc = CV_ENOMEM;
    return rc;
}

static int check_schema(const cv__tpl_ctx_t *ctx, const cv_tpl_resource_t *res, const json_t *def,
                        const json_t *props, const char *where)
{
    /* A nested template is checked under its own environment, as it runs. */
    cv__tpl_ctx_t sub = *ctx;
    json_t *child = cv__tpl_child_env(ctx, res->name,
                                      json_string_value(json_object_get(def, "type")), res->type);
    if (child)
        sub.opts.env = child;
    int rc = cv__tpl_check_props(&sub, res->type, props, where);
    json_decref(child);
    return rc;
}

static int check_section_intrinsics(const cv__tpl_ctx_t *ctx, const json_t *v, cv__path_t *path,
                                    const char *key, const char *self)
{
    if (!v)
        return 0;
    size_t mark = cv__path_key(path, key);
    int rc = cv__tpl_check_intrinsics(ctx, v, path, self);
    cv__path_pop(path, mark);
    return rc;
}

static int check_contents(const cv__tpl_ctx_t *ctx, const cv_template_t *tpl, const json_t *def,
                          cv_tpl_resource_t *res, const json_t *props)
{
    cv__path_t path;
    cv__path_init(&path, "resources");
    cv__path_key(&path, res->name);
    size_t base = path.len;
    const json_t *meta = json_object_get(def, "metadata");
    const json_t *update = json_object_get(def, "update_policy");
    const json_t *deps = json_object_get(def, "depends_on");
    int rc = 0;
    if (deps && !json_is_null(deps)) {
        cv__path_key(&path, "depends_on");
        rc = check_depends_on(ctx, res->name, deps, path.buf);
        cv__path_pop(&path, base);
    }
    rc = rc ? rc : check_section_intrinsics(ctx, props, &path, "properties", res->name);
    rc = rc ? rc : check_section_intrinsics(ctx, meta, &path, "metadata", res->name);
    rc = rc ? rc : check_section_intrinsics(ctx, update, &path, "update_policy", res->name);
    if (rc)
        return rc;
    cv__path_key(&path, "deletion_policy");
    rc = parse_deletion_policy(ctx, tpl, def, path.buf, res);
    cv__path_pop(&path, base);
    cv__path_key(&path, "properties");
    /* As Heat validates them: with what the parameters make of them, but
     * for a type without a schema (OS::Heat::None), whose properties Heat
     * neither reads nor validates (NoneResource.validate passes), and when
     * the caller asks for the definition as written (opts.no_eval). */
    const cv_rtype_t *t = cv_rtype_find(res->type);
    bool as_written = (t && !t->props) || ctx->opts.no_eval;
    json_t *known = rc           ? NULL
                    : as_written ? json_incref((json_t *)props)
                                 : cv__tpl_fold(ctx, tpl, props, path.buf, &rc);
    rc = rc ? rc : check_schema(ctx, res, def, known, path.buf);
    json_decref(known);
    return rc;
}

static int parse_resource(const cv__tpl_ctx_t *ctx, const cv_template_t *tpl, const json_t *def,
                          cv_tpl_resource_t *res)
{
    cv__path_t path;
    cv__path_init(&path, "resources");
    cv__path_key(&path, res->name);
    const json_t *props, *meta, *update;
    int rc = check_unsupported_keys(ctx, def, &path);
    rc = rc ? rc : parse_external_id(ctx, def, &path, res);
    rc = rc ? rc : map_key(ctx, def, "properties", &path, &props);
    rc = rc ? rc : map_key(ctx, def, "metadata", &path, &meta);
    rc = rc ? rc : map_key(ctx, def, "update_policy", &path, &update);
    if (rc)
        return rc;
    res->properties = props ? json_deep_copy(props) : json_object();
    res->metadata = meta ? json_deep_copy(meta) : json_object();
    res->update_policy = update ? json_deep_copy(update) : json_object();
    if (!res->properties || !res->metadata || !res->update_policy)
        return CV_ENOMEM;
    rc = check_contents(ctx, tpl, def, res, res->properties);
    const json_t *deps = json_object_get(def, "depends_on");
    return rc ? rc : cv__tpl_depends(res, json_is_null(deps) ? NULL : deps);
}

int cv__tpl_resources(const cv__tpl_ctx_t *ctx, cv_template_t *tpl, cv__errs_t *errs)
{
    const json_t *section = ctx->resources;
    size_t n = json_object_size(section), i = 0;
    if (n == 0)
        return 0;
    if (!(tpl->resources = calloc(n, sizeof(*tpl->resources))))
        return CV_ENOMEM;
    tpl->nresources = n;
    /* Every resource is checked and each problem kept (template_errors.c).
     * The second pass reads every definition's name and type, so only a
     * resource whose own first pass went through takes it. */
    int rc = 0;
    for (void *it = json_object_iter((json_t *)section); rc == 0 && it;
         it = json_object_iter_next((json_t *)section, it), i++) {
        const char *name = json_object_iter_key(it);
        int one = 0;
        if (strlen(name) != json_object_iter_key_len(it))
            one = cv__tpl_err(ctx, CV_EVALIDATE, "resources",
                              "resource name \"%s...\" may not contain a NUL character", name);
        one =
            one ? one : check_definition(ctx, name, json_object_iter_value(it), &tpl->resources[i]);
        rc = cv__errs_take(errs, one);
    }
    i = 0;
    for (void *it = json_object_iter((json_t *)section); rc == 0 && it;
         it = json_object_iter_next((json_t *)section, it), i++)
        if (tpl->resources[i].type)
            rc = cv__errs_take(
                errs, parse_resource(ctx, tpl, json_object_iter_value(it), &tpl->resources[i]));
    return rc;
}
