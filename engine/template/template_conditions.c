/*
 * template_conditions — Heat's conditions (heat_template_version 2016-10-14
 * and later): the `conditions:` section, `condition:` on resources and
 * outputs, the condition functions (equals, not, and, or, contains) and
 * `if`, as heat/engine/conditions.py and hot/functions.py define them.
 *
 * Conditions read only parameters, so they are decided when the template is
 * parsed with its parameter values: this file turns the template into the
 * one that runs — resources whose condition is false are left out, outputs
 * whose condition is false get the value null, every `if` is replaced by
 * the branch it takes — and the rest of the parser sees only that. A
 * condition that flips on update therefore creates or deletes the resources
 * it guards through the ordinary update, and a reference from a kept
 * resource to one left out is the ordinary unknown-reference error, as in
 * Heat. Like Heat's If (a macro), only the branch taken is checked.
 * get_file, whose argument is a literal key into the stack's files, is
 * replaced by the file's text in the same walk.
 *
 * A nested template checked before its parent's properties resolve
 * (params_later) may lack the value a condition reads: such a condition is
 * taken as true there, and decided for real when the child stack runs.
 */
#include "cv__template_internal.h"
#include "cv_error.h"
#include "cv_rtype.h"

#include <math.h>
#include <string.h>

/* What evaluating a condition expression may end in besides a value. */
enum { UNKNOWN = 1 };

typedef struct conds {
    const cv__tpl_ctx_t *ctx;
    const cv_template_t *tpl;
    const json_t *defs; /* the conditions section; {} when absent */
    json_t *values;     /* name -> true / false, or null while being evaluated */
} conds_t;

static int cond_named(conds_t *c, const char *name, const char *where, bool *out);

/* ---------------------------------------------------------------- evaluation */

static int cond_resolve(conds_t *c, const json_t *expr, const char *where, json_t **out);

static int cond_err(conds_t *c, const char *where, const char *fmt, const char *fn)
{
    return cv__tpl_err(c->ctx, CV_EVALIDATE, where, fmt, fn);
}

/* Heat's ConditionBoolean._get_condition: a boolean is itself, anything
 * else must name a condition. */
static int cond_of(conds_t *c, const json_t *v, const char *where, bool *out)
{
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 0;
    }
    if (json_is_string(v))
        return cond_named(c, json_string_value(v), where, out);
    char shown[128];
    cv__describe(v, shown, sizeof(shown));
    return cv__tpl_err(c->ctx, CV_EVALIDATE, where, "Invalid condition \"%s\"", shown);
}

static int fn_get_param(conds_t *c, const json_t *args, const char *where, json_t **out)
{
    const json_t *name = json_is_array(args) ? json_array_get(args, 0) : args;
    if (!json_is_string(name)) {
        char shown[128];
        cv__describe(args, shown, sizeof(shown));
        return cv__tpl_err(c->ctx, CV_EVALIDATE, where,
                           "get_param: expected a parameter name or a list [name, key/index...], "
                           "got %s",
                           shown);
    }
    if (!cv__tpl_param_known(c->ctx, json_string_value(name)))
        return cv__tpl_err(c->ctx, CV_EVALIDATE, where,
                           "get_param: parameter \"%s\" is not defined in the template",
                           json_string_value(name));
    if (!json_object_get(c->tpl->parameters, json_string_value(name)) && c->ctx->opts.params_later)
        return UNKNOWN;
    json_t *call = json_pack("{s:O}", "get_param", args);
    cv_resolve_ctx_t rctx = {.parameters = c->tpl->parameters};
    char err[512];
    *out = call ? cv_intrinsic_resolve(call, &rctx, where, err, sizeof(err)) : NULL;
    json_decref(call);
    if (!*out)
        return cv_seterr(c->ctx->errstr, c->ctx->errstr_size, CV_EVALIDATE, "%s: %s", c->ctx->fname,
                         err);
    return 0;
}

static int fn_equals(conds_t *c, const char *fn, const json_t *args, const char *where,
                     json_t **out)
{
    if (!json_is_array(args) || json_array_size(args) != 2)
        return cond_err(c, where, "Arguments to \"%s\" must be of the form: [value_1, value_2]",
                        fn);
    json_t *a = NULL, *b = NULL;
    int rc = cond_resolve(c, json_array_get(args, 0), where, &a);
    rc = rc ? rc : cond_resolve(c, json_array_get(args, 1), where, &b);
    if (rc == 0)
        *out = json_boolean(cv__py_equal(a, b));
    json_decref(a);
    json_decref(b);
    return rc;
}

static int fn_not(conds_t *c, const char *fn, const json_t *args, const char *where, json_t **out)
{
    if (json_is_null(args))
        return cond_err(c, where, "Argument to \"%s\" must be a condition", fn);
    json_t *v = NULL;
    bool b = false;
    int rc = cond_resolve(c, args, where, &v);
    rc = rc ? rc : cond_of(c, v, where, &b);
    json_decref(v);
    if (rc == 0)
        *out = json_boolean(!b);
    return rc;
}

/* and / or: every argument is evaluated first, as Heat resolves the list
 * before looking at it; then all / any. */
static int fn_and_or(conds_t *c, const char *fn, bool is_and, const json_t *args, const char *where,
                     json_t **out)
{
    if (!json_is_array(args))
        return cond_err(c, where, "Arguments to \"%s\" must be a list of conditions", fn);
    if (json_array_size(args) < 2)
        return cond_err(c, where, "The minimum number of condition arguments to \"%s\" is 2.", fn);
    json_t *items = NULL;
    int rc = cond_resolve(c, args, where, &items);
    bool result = is_and;
    for (size_t i = 0; rc == 0 && i < json_array_size(items) && result == is_and; i++) {
        bool b = false;
        rc = cond_of(c, json_array_get(items, i), where, &b);
        result = is_and ? b : !b ? false : true;
    }
    json_decref(items);
    if (rc == 0)
        *out = json_boolean(result);
    return rc;
}

static int fn_contains(conds_t *c, const char *fn, const json_t *args, const char *where,
                       json_t **out)
{
    if (!json_is_array(args) || json_array_size(args) == 0)
        return cv__tpl_err(c->ctx, CV_EVALIDATE, where,
                           "Incorrect arguments to \"%s\" should be: \"%s\" : [ \"value1\", [ "
                           "\"value1\", \"value2\"]]",
                           fn, fn);
    if (json_array_size(args) != 2)
        return cond_err(c, where,
                        "Arguments to \"%s\" must be of the form: [value1, [value1, value2]]", fn);
    json_t *value = NULL, *seq = NULL;
    int rc = cond_resolve(c, json_array_get(args, 0), where, &value);
    rc = rc ? rc : cond_resolve(c, json_array_get(args, 1), where, &seq);
    if (rc == 0 && !json_is_array(seq) && !json_is_string(seq))
        rc = cond_err(c, where, "Second argument to \"%s\" should be a sequence.", fn);
    if (rc == 0)
        *out = json_boolean(cv__py_in(value, seq));
    json_decref(value);
    json_decref(seq);
    return rc;
}

/* yaql in a condition (2017-09-01): its data may read parameters. */
static int fn_yaql(conds_t *c, const char *fn, const json_t *args, const char *where, json_t **out)
{
    const json_t *expr = json_object_get(args, "expression");
    const char *key;
    const json_t *v;
    bool extra = false;
    json_object_foreach((json_t *)args, key, v)
    {
        extra = extra || (strcmp(key, "expression") != 0 && strcmp(key, "data") != 0);
    }
    if (!json_is_object(args))
        return cv__tpl_err(c->ctx, CV_EVALIDATE, where, "%s: " CV__YAQL_NOT_MAP, fn);
    if (!expr || extra)
        return cv__tpl_err(c->ctx, CV_EVALIDATE, where, "%s: " CV__YAQL_USAGE, fn);
    json_t *e = NULL, *data = NULL;
    int rc = cond_resolve(c, expr, where, &e);
    const json_t *d = json_object_get(args, "data");
    if (rc == 0 && d)
        rc = cond_resolve(c, d, where, &data);
    else if (rc == 0 && !(data = json_object()))
        rc = CV_ENOMEM;
    if (rc == 0 && !json_is_string(e))
        rc = cond_err(c, where, "%s: " CV__YAQL_NOT_STRING, fn);
    char msg[512];
    if (rc == 0 && !(*out = cv__yaql_eval(json_string_value(e), data, msg, sizeof(msg))))
        rc = cv__tpl_err(c->ctx, CV_EVALIDATE, where, "%s: %s", fn, msg);
    json_decref(e);
    json_decref(data);
    return rc;
}

/* The functions a condition may call in this template's version (Heat's
 * condition_functions); any other function is refused there. */
static int call(conds_t *c, const char *fn, const json_t *args, const char *where, json_t **out)
{
    bool v2017 = c->ctx->version >= CV__V20170901;
    if (strcmp(fn, "get_param") == 0)
        return fn_get_param(c, args, where, out);
    if (strcmp(fn, "equals") == 0)
        return fn_equals(c, fn, args, where, out);
    if (strcmp(fn, "not") == 0)
        return fn_not(c, fn, args, where, out);
    if (strcmp(fn, "and") == 0 || strcmp(fn, "or") == 0)
        return fn_and_or(c, fn, fn[0] == 'a', args, where, out);
    if (v2017 && strcmp(fn, "contains") == 0)
        return fn_contains(c, fn, args, where, out);
    if (v2017 && strcmp(fn, "yaql") == 0)
        return fn_yaql(c, fn, args, where, out);
    return cond_err(c, where, "The function \"%s\" is invalid in this context", fn);
}

/* Heat's function.resolve over a condition expression: calls evaluated,
 * lists and maps item by item, anything else as it is. */
static int cond_resolve(conds_t *c, const json_t *expr, const char *where, json_t **out)
{
    *out = NULL;
    if (cv_is_intrinsic(expr)) {
        void *it = json_object_iter((json_t *)expr);
        return call(c, json_object_iter_key(it), json_object_iter_value(it), where, out);
    }
    json_t *copy = json_is_array(expr)    ? json_array()
                   : json_is_object(expr) ? json_object()
                                          : json_incref((json_t *)expr);
    int rc = copy ? 0 : CV_ENOMEM;
    for (size_t i = 0; rc == 0 && json_is_array(expr) && i < json_array_size(expr); i++) {
        json_t *v = NULL;
        rc = cond_resolve(c, json_array_get(expr, i), where, &v);
        if (rc == 0 && json_array_append_new(copy, v))
            rc = CV_ENOMEM;
    }
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)(json_is_object(expr) ? expr : NULL), key, item)
    {
        json_t *v = NULL;
        if (rc == 0)
            rc = cond_resolve(c, item, where, &v);
        if (rc == 0 && json_object_set_new(copy, key, v))
            rc = CV_ENOMEM;
    }
    if (rc)
        json_decref(copy);
    else
        *out = copy;
    return rc;
}

/* Heat's Conditions.is_enabled for a name, memoised, with its cycle check. */
static int cond_named(conds_t *c, const char *name, const char *where, bool *out)
{
    const json_t *def = json_object_get(c->defs, name);
    if (!def)
        return cv__tpl_err(c->ctx, CV_EVALIDATE, where, "Invalid condition \"%s\"", name);
    const json_t *known = json_object_get(c->values, name);
    if (json_is_null(known))
        return cv__tpl_err(c->ctx, CV_EVALIDATE, where, "Circular definition for condition \"%s\"",
                           name);
    if (known) {
        *out = json_is_true(known);
        return 0;
    }
    if (json_object_set_new(c->values, name, json_null()))
        return CV_ENOMEM;
    char at[600];
    snprintf(at, sizeof(at), "conditions.%s", name);
    json_t *v = NULL;
    int rc = cond_resolve(c, def, at, &v);
    if (rc == 0 && !json_is_boolean(v)) {
        char shown[256];
        cv__describe(v, shown, sizeof(shown));
        rc = cv__tpl_err(c->ctx, CV_EVALIDATE, at,
                         "The definition of condition \"%s\" is invalid: %s", name, shown);
    }
    if (rc == 0) {
        *out = json_is_true(v);
        rc = json_object_set(c->values, name, v) ? CV_ENOMEM : 0;
    }
    if (rc == UNKNOWN)
        json_object_del(c->values, name); /* evaluated again where it is used */
    json_decref(v);
    return rc;
}

/*
 * A `condition:` of a resource or output, or the first argument of `if`:
 * a name, a boolean, or (as Heat parses it with its condition functions)
 * an expression. UNKNOWN (params_later only) counts as true.
 */
static int cond_value(conds_t *c, const json_t *cond, const char *where, bool *out)
{
    json_t *v = NULL;
    int rc = cond_resolve(c, cond, where, &v);
    rc = rc ? rc : cond_of(c, v, where, out);
    json_decref(v);
    if (rc == UNKNOWN) {
        *out = true;
        rc = 0;
    }
    return rc;
}

/* ---------------------------------------------------------------- if */

/* `removed`: a wallaby `if` without a false branch took it, so the item
 * holding it goes away (Heat's Ellipsis). */
static int apply_if(conds_t *c, const json_t *v, cv__path_t *path, json_t **out, bool *removed);

static int take_branch(conds_t *c, const json_t *args, cv__path_t *path, json_t **out,
                       bool *removed)
{
    size_t n = json_array_size(args);
    bool nullable = c->ctx->version >= CV__V20210416;
    if (!json_is_array(args) || !(n == 3 || (nullable && n == 2)))
        return cv__tpl_err(c->ctx, CV_EVALIDATE, path->buf,
                           "Arguments to \"if\" must be of the form: [condition_name, "
                           "value_if_true, value_if_false]");
    bool taken = false;
    int rc = cond_value(c, json_array_get(args, 0), path->buf, &taken);
    if (rc)
        return rc;
    if (!taken && n == 2) {
        *removed = true;
        return 0;
    }
    return apply_if(c, json_array_get(args, taken ? 1 : 2), path, out, removed);
}

static int apply_if_array(conds_t *c, const json_t *v, cv__path_t *path, json_t *out)
{
    for (size_t i = 0; i < json_array_size(v); i++) {
        size_t mark = cv__path_index(path, i);
        json_t *item = NULL;
        bool removed = false;
        int rc = apply_if(c, json_array_get(v, i), path, &item, &removed);
        cv__path_pop(path, mark);
        if (rc == 0 && !removed && json_array_append_new(out, item))
            rc = CV_ENOMEM;
        if (rc)
            return rc;
    }
    return 0;
}

static int apply_if_object(conds_t *c, const json_t *v, cv__path_t *path, json_t *out)
{
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)v, key, item)
    {
        size_t mark = cv__path_key(path, key);
        json_t *value = NULL;
        bool removed = false;
        int rc = apply_if(c, item, path, &value, &removed);
        cv__path_pop(path, mark);
        if (rc == 0 && !removed && json_object_set_new(out, key, value))
            rc = CV_ENOMEM;
        if (rc)
            return rc;
    }
    return 0;
}

/* Heat's GetFile: the text uploaded under the key its argument names
 * (cli/cli_files.c rewrites a path to that key). Its argument is a literal
 * — the client uploads only what it can read in the template — so it is
 * decided here, like `if`; the text is not scanned for functions. */
static int get_file(conds_t *c, const json_t *arg, const cv__path_t *path, json_t **out)
{
    if (!json_is_string(arg))
        return cv__tpl_err(c->ctx, CV_EVALIDATE, path->buf,
                           "Argument to \"get_file\" must be a string");
    const json_t *text = json_object_get(c->ctx->opts.files, json_string_value(arg));
    if (!json_is_string(text))
        return cv__tpl_err(c->ctx, CV_EVALIDATE, path->buf,
                           "No content found in the \"files\" section for get_file path: %s",
                           json_string_value(arg));
    *out = json_incref((json_t *)text);
    return 0;
}

static int apply_if(conds_t *c, const json_t *v, cv__path_t *path, json_t **out, bool *removed)
{
    *out = NULL;
    *removed = false;
    const char *fn = NULL;
    const json_t *arg = NULL;
    bool call = cv__fn_of(v, &fn, &arg) != CV__FN_NONE;
    if (call && c->ctx->version >= CV__V20161014 && strcmp(fn, "if") == 0)
        return take_branch(c, arg, path, out, removed);
    if (call && strcmp(fn, "get_file") == 0)
        return get_file(c, arg, path, out);
    if (!json_is_array(v) && !json_is_object(v)) {
        *out = json_incref((json_t *)v);
        return 0;
    }
    json_t *copy = json_is_array(v) ? json_array() : json_object();
    int rc = !copy              ? CV_ENOMEM
             : json_is_array(v) ? apply_if_array(c, v, path, copy)
                                : apply_if_object(c, v, path, copy);
    if (rc)
        json_decref(copy);
    else
        *out = copy;
    return rc;
}

/* A section of a kept resource or output with its `if`s replaced. */
static int section_if(conds_t *c, const json_t *v, cv__path_t *path, const char *key, json_t **out)
{
    size_t mark = cv__path_key(path, key);
    bool removed = false;
    int rc = apply_if(c, v, path, out, &removed);
    cv__path_pop(path, mark);
    if (rc == 0 && removed)
        *out = json_null();
    return rc;
}

/* ---------------------------------------------------------------- sections */

/* Heat's _parse_resource_field for `condition`, then is_enabled. */
static int enabled(conds_t *c, const json_t *def, cv__path_t *path, const char *name,
                   const char *what, bool *out)
{
    *out = true;
    const json_t *cond = json_object_get(def, "condition");
    if (!cond || json_is_null(cond) || c->ctx->version < CV__V20161014)
        return 0;
    size_t mark = cv__path_key(path, "condition");
    int rc = 0;
    /* Heat checks the type of a resource's condition (_parse_resource_field);
     * an output's goes straight to is_enabled, which calls it invalid. */
    if (strcmp(what, "Resource") == 0 && !json_is_string(cond) && !json_is_boolean(cond) &&
        !cv_is_intrinsic(cond))
        rc = cv__tpl_err(c->ctx, CV_EVALIDATE, path->buf,
                         "%s %s condition type must be string_or_boolean", what, name);
    rc = rc ? rc : cond_value(c, cond, path->buf, out);
    cv__path_pop(path, mark);
    return rc;
}

/* The depends_on of a kept resource without the names of resources a
 * condition left out: Heat allows a dependency on a resource that is
 * defined but disabled. */
static json_t *kept_depends(const json_t *deps, const json_t *all, const json_t *kept)
{
    if (!json_is_array(deps) && !json_is_string(deps))
        return json_incref((json_t *)deps);
    json_t *out = json_array();
    for (size_t i = 0; out && i < (json_is_array(deps) ? json_array_size(deps) : 1); i++) {
        json_t *d = json_is_array(deps) ? json_array_get(deps, i) : (json_t *)deps;
        const char *name = json_string_value(d);
        if (name && json_object_get(all, name) && !json_object_get(kept, name))
            continue;
        json_array_append(out, d);
    }
    return out;
}

/* Heat's If in a property: null taken from a branch leaves the property
 * unset, so the type's default applies. */
static void drop_null_ifs(const json_t *props, json_t *resolved)
{
    const char *key;
    const json_t *v;
    const char *fn;
    const json_t *arg;
    json_object_foreach((json_t *)props, key, v)
    {
        if (cv__fn_of(v, &fn, &arg) != CV__FN_NONE && strcmp(fn, "if") == 0 &&
            json_is_null(json_object_get(resolved, key)))
            json_object_del(resolved, key);
    }
}

static int kept_resource(conds_t *c, const char *name, const json_t *def, const json_t *all,
                         const json_t *on, json_t *kept)
{
    cv__path_t path;
    cv__path_init(&path, "resources");
    cv__path_key(&path, name);
    json_t *copy = json_object();
    int rc = copy ? 0 : CV_ENOMEM;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)def, key, v)
    {
        json_t *value = NULL;
        if (rc || (strcmp(key, "condition") == 0 && c->ctx->version >= CV__V20161014))
            continue;
        if (strcmp(key, "type") == 0)
            value = json_incref((json_t *)v);
        else
            rc = section_if(c, v, &path, key, &value);
        if (rc == 0 && strcmp(key, "properties") == 0 && json_is_object(value))
            drop_null_ifs(v, value);
        if (rc == 0 && strcmp(key, "depends_on") == 0) {
            json_t *deps = kept_depends(value, all, on);
            json_decref(value);
            value = deps;
        }
        if (rc == 0 && (!value || json_object_set_new(copy, key, value)))
            rc = CV_ENOMEM;
    }
    if (rc == 0 && json_object_set_new(kept, name, copy))
        return CV_ENOMEM;
    if (rc)
        json_decref(copy);
    return rc;
}

static int apply_resources(conds_t *c, const json_t *all, json_t *kept)
{
    const char *name;
    const json_t *def;
    json_t *on = json_object();
    int rc = on ? 0 : CV_ENOMEM;
    /* First which resources stay, so that depends_on can drop the others. */
    json_object_foreach((json_t *)all, name, def)
    {
        bool yes = true;
        cv__path_t path;
        cv__path_init(&path, "resources");
        cv__path_key(&path, name);
        if (rc == 0 && json_is_object(def))
            rc = enabled(c, def, &path, name, "Resource", &yes);
        if (rc == 0 && yes && json_object_set_new(on, name, json_true()))
            rc = CV_ENOMEM;
    }
    json_object_foreach((json_t *)all, name, def)
    {
        if (rc || !json_object_get(on, name))
            continue;
        if (json_is_object(def))
            rc = kept_resource(c, name, def, all, on, kept);
        else
            rc = json_object_set(kept, name, (json_t *)def) ? CV_ENOMEM : 0;
    }
    json_decref(on);
    return rc;
}

static int apply_outputs(conds_t *c, const json_t *all, json_t *kept)
{
    const char *name;
    const json_t *def;
    int rc = 0;
    json_object_foreach((json_t *)all, name, def)
    {
        if (rc)
            break;
        if (!json_is_object(def)) {
            rc = json_object_set(kept, name, (json_t *)def) ? CV_ENOMEM : 0;
            continue;
        }
        cv__path_t path;
        cv__path_init(&path, "outputs");
        cv__path_key(&path, name);
        bool yes = true;
        rc = enabled(c, def, &path, name, "Output", &yes);
        json_t *copy = rc == 0 ? json_deep_copy(def) : NULL;
        if (rc == 0 && !copy)
            rc = CV_ENOMEM;
        if (copy && c->ctx->version >= CV__V20161014)
            json_object_del(copy, "condition");
        const json_t *value = json_object_get(def, "value");
        json_t *v = NULL;
        if (rc == 0 && value && yes)
            rc = section_if(c, value, &path, "value", &v);
        else if (rc == 0 && value)
            v = json_null(); /* Heat: a disabled output's value is None */
        if (rc == 0 && v && json_object_set_new(copy, "value", v))
            rc = CV_ENOMEM;
        if (rc == 0 && json_object_set_new(kept, name, copy))
            rc = CV_ENOMEM;
        else if (rc)
            json_decref(copy);
    }
    return rc;
}

static int check_section(const cv__tpl_ctx_t *ctx, const json_t *defs)
{
    if (defs && !json_is_null(defs) && !json_is_object(defs))
        return cv__tpl_err(ctx, CV_EVALIDATE, "conditions",
                           "Condition definitions must be a map. Found a %s instead",
                           json_is_array(defs)    ? "list"
                           : json_is_string(defs) ? "str"
                                                  : cv__type_name(defs));
    const char *name;
    const json_t *def;
    json_object_foreach((json_t *)defs, name, def)
    {
        if (!json_is_boolean(def) && !cv_is_intrinsic(def)) {
            char shown[256], at[600];
            cv__describe(def, shown, sizeof(shown));
            snprintf(at, sizeof(at), "conditions.%s", name);
            return cv__tpl_err(ctx, CV_EVALIDATE, at,
                               "The definition of condition \"%s\" is invalid: %s", name, shown);
        }
    }
    return 0;
}

int cv__tpl_conditions(const cv__tpl_ctx_t *ctx, const json_t *root, const cv_template_t *tpl,
                       json_t **resources, json_t **outputs)
{
    const json_t *defs = ctx->version >= CV__V20161014 ? json_object_get(root, "conditions") : NULL;
    int rc = check_section(ctx, defs);
    json_t *empty = json_object();
    conds_t c = {.ctx = ctx,
                 .tpl = tpl,
                 .defs = json_is_object(defs) ? defs : empty,
                 .values = json_object()};
    *resources = json_object();
    *outputs = json_object();
    if (rc == 0 && !(empty && c.values && *resources && *outputs))
        rc = CV_ENOMEM;
    /* Every condition is evaluated, used or not, as Heat validates them all. */
    const char *name;
    const json_t *def;
    json_object_foreach((json_t *)c.defs, name, def)
    {
        bool b;
        if (rc == 0)
            rc = cond_named(&c, name, "conditions", &b);
        if (rc == UNKNOWN)
            rc = 0;
    }
    const json_t *res = json_object_get(root, "resources");
    const json_t *outs = json_object_get(root, "outputs");
    if (rc == 0 && json_is_object(res))
        rc = apply_resources(&c, res, *resources);
    if (rc == 0 && json_is_object(outs))
        rc = apply_outputs(&c, outs, *outputs);
    json_decref(c.values);
    json_decref(empty);
    if (rc) {
        json_decref(*resources);
        json_decref(*outputs);
        *resources = *outputs = NULL;
    }
    return rc;
}
