/*
 * template_conditions — evaluating Heat's conditions (heat_template_version
 * 2016-10-14 and later): the `conditions:` section, a condition named by a
 * resource, an output or `if`, the condition functions (get_param, equals,
 * not, and, or, and from 2017-09-01 contains and yaql) and conditions that
 * name conditions, with Heat's errors for unknown names and cycles, as
 * heat/engine/conditions.py and hot/functions.py define them. What the
 * conditions do to the template is template_running.c's.
 *
 * A nested template checked before its parent's properties resolve
 * (params_later) may lack the value a condition reads: such a condition is
 * taken as true there, and decided for real when the child stack runs.
 */
#include "cv__fn_messages.h"
#include "cv__template_internal.h"
#include "cv_base.h"
#include "cv_rtype.h"

#include <string.h>

/* What evaluating a condition expression may end in besides a value. */
enum { UNKNOWN = 1 };

typedef cv__conds_t conds_t;

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
        return cv__tpl_err(c->ctx, CV_EVALIDATE, where, CV__PARAM_MISSING, json_string_value(name));
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
 * condition_functions); the version's other functions are refused there
 * (cond_resolve), anything else is data. */
static int call(conds_t *c, const char *fn, const json_t *args, const char *where, json_t **out)
{
    if (strcmp(fn, "get_param") == 0)
        return fn_get_param(c, args, where, out);
    if (strcmp(fn, "equals") == 0)
        return fn_equals(c, fn, args, where, out);
    if (strcmp(fn, "not") == 0)
        return fn_not(c, fn, args, where, out);
    if (strcmp(fn, "and") == 0 || strcmp(fn, "or") == 0)
        return fn_and_or(c, fn, fn[0] == 'a', args, where, out);
    if (strcmp(fn, "contains") == 0)
        return fn_contains(c, fn, args, where, out);
    return fn_yaql(c, fn, args, where, out);
}

/* What the one-key map `expr` is in a condition of this template's version:
 * its key in *fn when it is anything but data. */
static cv__hot_kind_t cond_kind(const conds_t *c, const json_t *expr, const char **fn)
{
    if (!cv_is_intrinsic(expr))
        return CV__HOT_DATA;
    *fn = json_object_iter_key(json_object_iter((json_t *)expr));
    return cv__hot_condition(*fn, c->ctx->version);
}

/* Heat's function.resolve over a condition expression: calls evaluated,
 * lists and maps item by item, anything else as it is. */
static int cond_resolve(conds_t *c, const json_t *expr, const char *where, json_t **out)
{
    *out = NULL;
    const char *fn = NULL;
    switch (cond_kind(c, expr, &fn)) {
    case CV__HOT_FUNCTION:
        return call(c, fn, json_object_iter_value(json_object_iter((json_t *)expr)), where, out);
    case CV__HOT_REMOVED:
        return cond_err(c, where, CV__HOT_REMOVED_MSG, fn);
    case CV__HOT_INVALID:
        return cond_err(c, where, CV__HOT_INVALID_MSG, fn);
    case CV__HOT_DATA:
        break;
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
int cv__cond_value(cv__conds_t *c, const json_t *cond, const char *where, bool *out)
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

/* Heat's _check_condition_type: a definition is a boolean or a call of
 * what a condition may name (an Invalid or Removed one fails when it is
 * evaluated, with its own message); plain data is not a condition. */
static bool cond_definition(const cv__tpl_ctx_t *ctx, const json_t *def)
{
    if (json_is_boolean(def))
        return true;
    if (!cv_is_intrinsic(def))
        return false;
    const char *fn = json_object_iter_key(json_object_iter((json_t *)def));
    return cv__hot_condition(fn, ctx->version) != CV__HOT_DATA;
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
        if (!cond_definition(ctx, def)) {
            char shown[256], at[600];
            cv__describe(def, shown, sizeof(shown));
            snprintf(at, sizeof(at), "conditions.%s", name);
            return cv__tpl_err(ctx, CV_EVALIDATE, at,
                               "The definition of condition \"%s\" is invalid: %s", name, shown);
        }
    }
    return 0;
}

int cv__conds_init(cv__conds_t *c, const cv__tpl_ctx_t *ctx, const json_t *root,
                   const cv_template_t *tpl)
{
    const json_t *defs = ctx->version >= CV__V20161014 ? json_object_get(root, "conditions") : NULL;
    *c = (cv__conds_t){.ctx = ctx, .tpl = tpl, .values = json_object(), .empty = json_object()};
    c->defs = json_is_object(defs) ? defs : c->empty;
    int rc = check_section(ctx, defs);
    if (rc == 0 && !(c->values && c->empty))
        rc = CV_ENOMEM;
    /* Every condition is evaluated, used or not, as Heat validates them all. */
    const char *name;
    const json_t *def;
    json_object_foreach((json_t *)c->defs, name, def)
    {
        bool b;
        if (rc == 0)
            rc = cond_named(c, name, "conditions", &b);
        if (rc == UNKNOWN)
            rc = 0;
    }
    return rc;
}

void cv__conds_clear(cv__conds_t *c)
{
    json_decref(c->values);
    json_decref(c->empty);
    c->values = c->empty = NULL;
}
