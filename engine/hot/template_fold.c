/*
 * template_fold — the values of a resource's properties that are known
 * before anything runs.
 *
 * Heat validates a stack with its parameters (heat/engine/properties.py
 * Properties.validate resolves every property value): a function whose
 * arguments are wrong once evaluated refuses the stack with a 400, before
 * anything is stored. What can be evaluated before any resource exists is
 * what depends only on parameters, literals, conditions and files (the last
 * two are decided when the template is parsed: template_running.c). Such a
 * call is replaced by its value here; a call that reads a resource
 * (get_resource, get_attr), the parent resource (resource_facade) or a
 * parameter whose value is not known yet (a nested template's, given by
 * its parent later) stays as written, with its arguments folded, so that a
 * known call inside an unknown one is evaluated too.
 *
 * The folded properties are only what validation looks at (the type's
 * schema and rules, nested templates, group members); what is stored and
 * run is the template as written, resolved by the engine.
 */
#include "cv__template_internal.h"
#include "cv_base.h"

/* Whether a get_param names a parameter whose value is known now. */
static bool param_known(const cv_template_t *tpl, const json_t *arg)
{
    const json_t *name = json_is_array(arg) ? json_array_get(arg, 0) : arg;
    return json_is_string(name) && json_object_get(tpl->parameters, json_string_value(name));
}

static bool knowable(const cv_template_t *tpl, const json_t *v);

static bool items_knowable(const cv_template_t *tpl, const json_t *v)
{
    size_t i;
    const char *key;
    const json_t *item;
    json_array_foreach(v, i, item)
    {
        if (!knowable(tpl, item))
            return false;
    }
    json_object_foreach((json_t *)v, key, item)
    {
        if (!knowable(tpl, item))
            return false;
    }
    return true;
}

/* Whether `v` reads nothing but parameters with values and literals. */
static bool knowable(const cv_template_t *tpl, const json_t *v)
{
    const char *name;
    const json_t *arg;
    switch (cv__fn_of(v, &name, &arg)) {
    case CV__FN_NONE:
        return items_knowable(tpl, v);
    case CV__FN_GET_RESOURCE:
    case CV__FN_GET_ATTR:
    case CV__FN_RESOURCE_FACADE:
    case CV__FN_UNSUPPORTED:
        return false;
    case CV__FN_GET_PARAM:
        return param_known(tpl, arg) && knowable(tpl, arg);
    default:
        return knowable(tpl, arg);
    }
}

typedef struct folder {
    const cv__tpl_ctx_t *ctx;
    const cv_template_t *tpl;
    cv__path_t path;
    int in_args;         /* inside a call's arguments, which add nothing to the path */
    cv__budget_t budget; /* what the evaluations of one resource may still build */
    int rc;
} folder_t;

static json_t *fold(folder_t *f, const json_t *v);

static json_t *fold_parts(folder_t *f, const json_t *v);

/* A known value: evaluated as the engine will evaluate it, reported where
 * the engine would report it. The evaluations of one resource's properties
 * share one size guard (CV__MAX_RESOLVED_BYTES: Converge's, not a rule of
 * Heat's), as one resolution by the engine does: a tree of aliased calls,
 * each small, must not fold into gigabytes. Once past it, what is left is
 * kept as written, for the engine to refuse when it resolves it (and what
 * it expands into is counted against the limits a user can change,
 * cv_template_count, whose refusal says which). */
static json_t *evaluate(folder_t *f, const json_t *v)
{
    cv_resolve_ctx_t rctx = {.parameters = f->tpl->parameters};
    char err[768];
    json_t *out = cv__intrinsic_resolve_within(v, &rctx, f->path.buf, &f->budget, err, sizeof(err));
    if (out)
        return out;
    if (f->budget.exceeded) {
        f->budget.left = 0;
        return json_incref((json_t *)v);
    }
    f->rc =
        cv_seterr(f->ctx->errstr, f->ctx->errstr_size, CV_EVALIDATE, "%s: %s", f->ctx->fname, err);
    return NULL;
}

static json_t *fold_items(folder_t *f, const json_t *v)
{
    json_t *out = json_is_array(v) ? json_array() : json_object();
    size_t i;
    const char *key;
    const json_t *item;
    json_array_foreach(v, i, item)
    {
        size_t mark = f->in_args ? f->path.len : cv__path_index(&f->path, i);
        json_t *folded = out ? fold(f, item) : NULL;
        cv__path_pop(&f->path, mark);
        if (!folded || json_array_append_new(out, folded))
            goto failed;
    }
    json_object_foreach((json_t *)v, key, item)
    {
        size_t mark = f->in_args ? f->path.len : cv__path_key(&f->path, key);
        json_t *folded = out ? fold(f, item) : NULL;
        cv__path_pop(&f->path, mark);
        if (!folded || json_object_set_new(out, key, folded))
            goto failed;
    }
    if (out)
        return out;
failed:
    json_decref(out);
    if (!f->rc)
        f->rc = CV_ENOMEM;
    return NULL;
}

/* A call that stays: its name over its folded arguments. The map that a
 * CV__DATA_KEY wraps is data, whose keys extend the path. */
static json_t *fold_call(folder_t *f, const json_t *v, bool data)
{
    void *it = json_object_iter((json_t *)v);
    f->in_args += !data;
    json_t *arg = fold(f, json_object_iter_value(it));
    f->in_args -= !data;
    json_t *out = arg ? json_object() : NULL;
    if (out && json_object_set_new(out, json_object_iter_key(it), arg) == 0)
        return out;
    if (!out)
        json_decref(arg); /* json_object_set_new releases it when it fails */
    json_decref(out);
    if (!f->rc)
        f->rc = CV_ENOMEM;
    return NULL;
}

/* `v` kept as written, what is inside it folded. */
static json_t *fold_parts(folder_t *f, const json_t *v)
{
    const char *name;
    const json_t *arg;
    cv__fn_t fn = cv__fn_of(v, &name, &arg);
    if (fn == CV__FN_NONE && !json_is_array(v) && !json_is_object(v))
        return json_incref((json_t *)v);
    return fn == CV__FN_NONE ? fold_items(f, v) : fold_call(f, v, fn == CV__FN_DATA);
}

static json_t *fold(folder_t *f, const json_t *v)
{
    if (f->budget.left == 0)
        return json_incref((json_t *)v);
    return knowable(f->tpl, v) ? evaluate(f, v) : fold_parts(f, v);
}

json_t *cv__tpl_fold(const cv__tpl_ctx_t *ctx, const cv_template_t *tpl, const json_t *v,
                     const char *where, int *rc)
{
    folder_t f = {.ctx = ctx, .tpl = tpl, .budget.left = CV__MAX_RESOLVED_BYTES};
    cv__path_init(&f.path, where);
    json_t *out = fold(&f, v);
    *rc = out ? 0 : f.rc ? f.rc : CV_ENOMEM;
    return out;
}
