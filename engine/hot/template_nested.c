/*
 * template_nested — resources that are stacks of their own, checked before
 * anything runs: a template resource's properties against the parameters of
 * its template file, a group's member definition against the member type,
 * get_attr against a template's outputs or a group's attributes, and the
 * nested templates themselves, recursively, no deeper than max_depth.
 *
 * A nested template is checked with the parent's property values known
 * before anything runs (literals and what the parameters make of them,
 * template_fold.c) as its parameters; values that still read resources are
 * checked when the child stack is expanded, once they have resolved.
 */
#include "cv__template_internal.h"
#include "cv_base.h"
#include "cv_rtype.h"

#include <stdio.h>
#include <string.h>

static const json_t *file_of(const cv__tpl_ctx_t *ctx, const char *type)
{
    const json_t *f = json_object_get(ctx->opts.files, type);
    return json_is_object(f) ? f : NULL;
}

bool cv__tpl_type_known(const cv__tpl_ctx_t *ctx, const char *type)
{
    return cv_rtype_find(type) || (cv_rtype_is_template_file(type) && file_of(ctx, type));
}

static int check_depth(const cv__tpl_ctx_t *ctx, const char *where, const char *what)
{
    if (ctx->opts.depth + 1 <= ctx->opts.max_depth)
        return 0;
    return cv__tpl_err(ctx, CV_EVALIDATE, where,
                       "%s would nest stacks deeper than %d levels (the limit), set by "
                       "CONVERGE_MAX_NESTING_DEPTH, or the workers' --max-nesting-depth",
                       what, ctx->opts.max_depth);
}

static int check_parameters_given(const cv__tpl_ctx_t *ctx, const char *file, const json_t *child,
                                  const json_t *props, const char *where)
{
    const json_t *params = json_object_get(child, "parameters");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)props, key, v)
    {
        if (!json_object_get(params, key))
            return cv__tpl_err(ctx, CV_EVALIDATE, where,
                               "unknown property \"%s\": template %s has no such parameter", key,
                               file);
    }
    json_object_foreach((json_t *)params, key, v)
    {
        const json_t *dflt = json_object_get(v, "default");
        const json_t *given = json_object_get(props, key);
        /* As in Heat, the environment's parameter_defaults reach nested templates. */
        if (!dflt || json_is_null(dflt))
            dflt = json_object_get(json_object_get(ctx->opts.env, "parameter_defaults"), key);
        if ((!dflt || json_is_null(dflt)) && (!given || json_is_null(given)))
            return cv__tpl_err(ctx, CV_EVALIDATE, where,
                               "property \"%s\" is required: template %s declares the parameter "
                               "without a default",
                               key, file);
    }
    return 0;
}

/* The properties whose values are known now: no intrinsic call inside. */
static bool holds_call(const json_t *v)
{
    const char *name;
    const json_t *arg;
    if (cv__fn_of(v, &name, &arg) != CV__FN_NONE)
        return true;
    size_t i;
    const json_t *item;
    json_array_foreach(v, i, item)
    {
        if (holds_call(item))
            return true;
    }
    const char *key;
    json_object_foreach((json_t *)v, key, item)
    {
        if (holds_call(item))
            return true;
    }
    return false;
}

static json_t *literal_values(const json_t *props)
{
    json_t *out = json_object();
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)props, key, v)
    {
        if (!holds_call(v))
            json_object_set(out, key, (json_t *)v);
    }
    return out;
}

static int check_template_resource(const cv__tpl_ctx_t *ctx, const char *file, const json_t *props,
                                   const char *where)
{
    const json_t *child = file_of(ctx, file);
    if (!child)
        return cv__tpl_err(ctx, CV_EVALIDATE, where,
                           "template file \"%s\" was not uploaded with the stack", file);
    /* A cycle is named before the depth it would reach is. */
    const cv_tpl_chain_t *found = cv__tpl_chain_find(ctx->opts.chain, file, child);
    if (found) {
        char at[1200];
        snprintf(at, sizeof(at), "%s: %s", ctx->fname, where);
        return cv__tpl_chain_cycle(ctx->opts.chain, found, file, at, ctx->errstr, ctx->errstr_size);
    }
    int rc = check_depth(ctx, where, file);
    rc = rc ? rc : check_parameters_given(ctx, file, child, props, where);
    if (rc)
        return rc;
    cv_tpl_chain_t node = {.file = file, .label = file, .tree = child, .up = ctx->opts.chain};
    cv_tpl_opts_t opts = ctx->opts;
    opts.chain = &node;
    opts.depth++;
    opts.params_later = 1;
    json_t *values = literal_values(props);
    cv_template_t *tpl = NULL;
    char err[1024];
    rc = cv_template_from_json_opts(child, file, values, &opts, &tpl, err, sizeof(err));
    json_decref(values);
    cv_template_free(tpl);
    return rc ? cv__tpl_err(ctx, rc, where, "%s", err) : 0;
}

/* Heat's ResourceGroup.validate_nested_stack: a group of no members does
 * not validate their definition, "to enable folks to disable features via
 * a zero count". The count is the one the parameters make (template_fold.c). */
static bool no_members(const json_t *props)
{
    json_t *count = cv__param_to_number(json_object_get(props, "count"));
    bool none = json_is_number(count) && json_number_value(count) == 0;
    json_decref(count);
    return none;
}

static int check_group(const cv__tpl_ctx_t *ctx, const json_t *props, const char *where)
{
    /* A ResourceGroup's resource_def, or an AutoScalingGroup's resource
     * (whose members have no index variable). */
    if (json_object_get(props, "resource_def") && no_members(props))
        return 0;
    const char *key = json_object_get(props, "resource_def") ? "resource_def" : "resource";
    const json_t *def = json_object_get(props, key);
    const char *type = json_string_value(json_object_get(def, "type"));
    if (!type)
        return 0; /* computed: checked once it resolves */
    char mapped[512];
    type = cv__tpl_mapped_type(ctx, type, NULL, mapped, sizeof(mapped));
    char at[1100];
    snprintf(at, sizeof(at), "%s.%s", where, key);
    if (cv_rtype_is_template_file(type) && !cv__tpl_type_known(ctx, type))
        return cv__tpl_err(ctx, CV_EVALIDATE, at,
                           "template file \"%s\" was not uploaded with the stack", type);
    if (!cv__tpl_type_known(ctx, type))
        return cv__tpl_err(ctx, CV_EVALIDATE, at, "The Resource Type (%s) could not be found.",
                           type);
    int rc = check_depth(ctx, at, "the group's members");
    const json_t *mprops = json_object_get(def, "properties");
    if (rc || cv_is_intrinsic(mprops))
        return rc; /* computed properties: checked once they resolve */
    cv__tpl_ctx_t sub = *ctx;
    sub.opts.depth++;
    /* As Heat does, member "0" stands for every member. */
    const char *var = json_string_value(json_object_get(props, "index_var"));
    json_t *member = !json_is_object(mprops) ? json_object()
                     : strcmp(key, "resource") == 0
                         ? json_deep_copy(mprops)
                         : cv_rtype_substitute(mprops, var ? var : "%index%", "0");
    snprintf(at, sizeof(at), "%s.%s.properties", where, key);
    rc = cv__tpl_check_props(&sub, type, member, at);
    json_decref(member);
    return rc;
}

/* Heat's ResourceChain.validate_nested_stack: every type the chain lists
 * must be one this stack can make (under the environment's mappings, which
 * only the template's validation sees). A computed list is checked once it
 * resolves. */
static int check_chain(const cv__tpl_ctx_t *ctx, const json_t *props, const char *where)
{
    const json_t *types = json_object_get(props, "resources");
    size_t i;
    const json_t *item;
    json_array_foreach(types, i, item)
    {
        if (!json_is_string(item))
            continue; /* a call, or refused by the type's own check */
        char mapped[512], at[1100];
        const char *type =
            cv__tpl_mapped_type(ctx, json_string_value(item), NULL, mapped, sizeof(mapped));
        snprintf(at, sizeof(at), "%s.resources[%zu]", where, i);
        if (cv_rtype_is_template_file(type) && !cv__tpl_type_known(ctx, type))
            return cv__tpl_err(ctx, CV_EVALIDATE, at,
                               "template file \"%s\" was not uploaded with the stack", type);
        if (!cv__tpl_type_known(ctx, type))
            return cv__tpl_err(ctx, CV_EVALIDATE, at, "The Resource Type (%s) could not be found.",
                               type);
    }
    return 0;
}

int cv__tpl_check_props(const cv__tpl_ctx_t *ctx, const char *type, const json_t *props,
                        const char *where)
{
    const cv_rtype_t *t = cv_rtype_find(type);
    if (!t)
        return check_template_resource(ctx, type, props, where);
    char err[768];
    err[0] = '\0';
    json_t *applied = cv_rtype_apply_schema(t, props, where, true, err, sizeof(err));
    json_decref(applied);
    if (!applied)
        return cv_seterr(ctx->errstr, ctx->errstr_size, CV_EVALIDATE, "%s: %s", ctx->fname,
                         err[0] ? err : where);
    if (t->nested && strcmp(type, "OS::Heat::ResourceChain") == 0)
        return check_chain(ctx, props, where);
    return t->nested ? check_group(ctx, props, where) : 0;
}

static bool template_has_output(const cv__tpl_ctx_t *ctx, const char *file, const char *attr)
{
    const json_t *child = file_of(ctx, file);
    return !child || strcmp(attr, "OS::stack_id") == 0 ||
           json_object_get(json_object_get(child, "outputs"), attr) != NULL;
}

bool cv__tpl_has_attr(const cv__tpl_ctx_t *ctx, const char *type, const json_t *def,
                      const char *attr)
{
    const cv_rtype_t *t = cv_rtype_find(type);
    if (!t)
        return strcmp(attr, "show") == 0 || template_has_output(ctx, type, attr);
    if (cv_rtype_has_attr(t, attr) || !t->nested)
        return cv_rtype_has_attr(t, attr);
    /* A group: resource.<n>[.<attr>] and whatever its members have. */
    if (strncmp(attr, "resource.", 9) == 0)
        return true;
    const json_t *rdef = json_object_get(json_object_get(def, "properties"), "resource_def");
    const char *mtype = json_string_value(json_object_get(rdef, "type"));
    return !mtype || cv__tpl_has_attr(ctx, mtype, NULL, attr);
}

/* The first member's name, as Heat's validate_nested_stack picks it: the
 * first of "0", "1", ... that no literal removal_policies entry names (at
 * create every name listed there is skipped). */
static void first_member(const json_t *props, char *out, size_t size)
{
    for (long long i = 0;; i++) {
        bool listed = false;
        size_t j, k;
        const json_t *p, *n;
        snprintf(out, size, "%lld", i);
        json_array_foreach(json_object_get(props, "removal_policies"), j, p)
        {
            json_array_foreach(json_object_get(p, "resource_list"), k, n)
            {
                listed = listed || (json_is_string(n) && strcmp(json_string_value(n), out) == 0) ||
                         (json_is_integer(n) && json_integer_value(n) == i);
            }
        }
        if (!listed)
            return;
    }
}

/* The size an AutoScalingGroup's nested stack is validated with:
 * desired_capacity, or else min_size (0 when computed). */
static bool asg_starts_empty(const json_t *props)
{
    json_t *desired = cv__param_to_number(json_object_get(props, "desired_capacity"));
    json_t *min = cv__param_to_number(json_object_get(props, "min_size"));
    const json_t *size = json_is_number(desired) && json_number_value(desired) ? desired : min;
    bool empty = !json_is_number(size) || json_number_value(size) <= 0;
    json_decref(desired);
    json_decref(min);
    return empty;
}

int cv__tpl_group_path_check(const cv__tpl_ctx_t *ctx, const char *type, const json_t *def,
                             const json_t *args, char *errstr, size_t errstr_size)
{
    const json_t *props = json_object_get(def, "properties");
    bool asg = strcmp(type, "OS::Heat::AutoScalingGroup") == 0;
    if (!asg && strcmp(type, "OS::Heat::ResourceGroup") != 0)
        return 0;
    const json_t *mdef = json_object_get(props, asg ? "resource" : "resource_def");
    const char *mtype = json_string_value(json_object_get(mdef, "type"));
    const char *key = json_string_value(json_array_get(args, 1));
    if (!mtype || !key || (asg ? asg_starts_empty(props) : no_members(props)))
        return 0;
    char first[24], mapped[512];
    first_member(props, first, sizeof(first));
    const char *attr = NULL;
    const json_t *next = json_array_get(args, 2);
    if (strncmp(key, "resource.", 9) == 0) {
        const char *rest = key + 9, *dot = strchr(rest, '.');
        size_t len = dot ? (size_t)(dot - rest) : strlen(rest);
        /* A ResourceGroup's test stack has only its first member; an
         * AutoScalingGroup's output covers every member. */
        if (asg || (len == strlen(first) && strncmp(rest, first, len) == 0))
            attr = dot ? dot + 1 : json_string_value(next);
    } else if (asg ? strcmp(key, "outputs") == 0 || strcmp(key, "outputs_list") == 0
                   : strcmp(key, "attributes") == 0) {
        attr = json_string_value(next);
    }
    mtype = cv__tpl_mapped_type(ctx, mtype, NULL, mapped, sizeof(mapped));
    if (!attr || !cv__tpl_type_known(ctx, mtype) || cv__tpl_has_attr(ctx, mtype, NULL, attr))
        return 0;
    snprintf(errstr, errstr_size, "The Referenced Attribute (%s %s) is incorrect.", first, attr);
    return CV_EVALIDATE;
}
