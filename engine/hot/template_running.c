/*
 * template_running — the template as it runs with its parameter values:
 * resources whose condition is false are left out, outputs whose condition
 * is false get the value null, every `if` is replaced by the branch it
 * takes and every get_file by the file's text; the rest of the parser sees
 * only that. Conditions read only parameters (template_conditions.c
 * evaluates them), so this happens when the template is parsed: a
 * condition that flips on update creates or deletes the resources it
 * guards through the ordinary update, and a reference from a kept resource
 * to one left out is the ordinary unknown-reference error, as in Heat. Like
 * Heat's If (a macro), only the branch taken is checked.
 *
 * It is also where the template's version decides what is a function: a
 * one-key map the version's table does not have is stored wrapped as
 * plain data (CV__DATA_KEY), so nothing after needs the version for that.
 */
#include "cv__template_internal.h"
#include "cv_base.h"
#include "cv_rtype.h"

#include <string.h>

/* ---------------------------------------------------------------- if */

/* `removed`: a wallaby `if` without a false branch took it, so the item
 * holding it goes away (Heat's Ellipsis). */
static int apply_if(cv__conds_t *c, const json_t *v, cv__path_t *path, json_t **out, bool *removed);

static int take_branch(cv__conds_t *c, const json_t *args, cv__path_t *path, json_t **out,
                       bool *removed)
{
    size_t n = json_array_size(args);
    bool nullable = c->ctx->version >= CV__V20210416;
    if (!json_is_array(args) || !(n == 3 || (nullable && n == 2)))
        return cv__tpl_err(c->ctx, CV_EVALIDATE, path->buf,
                           "Arguments to \"if\" must be of the form: [condition_name, "
                           "value_if_true, value_if_false]");
    bool taken = false;
    int rc = cv__cond_value(c, json_array_get(args, 0), path->buf, &taken);
    if (rc)
        return rc;
    if (!taken && n == 2) {
        *removed = true;
        return 0;
    }
    return apply_if(c, json_array_get(args, taken ? 1 : 2), path, out, removed);
}

static int apply_if_array(cv__conds_t *c, const json_t *v, cv__path_t *path, json_t *out)
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

static int apply_if_object(cv__conds_t *c, const json_t *v, cv__path_t *path, json_t *out)
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
 * (cli/status/cli_files.c rewrites a path to that key). Its argument is a literal
 * — the client uploads only what it can read in the template — so it is
 * decided here, like `if`; the text is not scanned for functions. */
static int get_file(cv__conds_t *c, const json_t *arg, const cv__path_t *path, json_t **out)
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

/* A one-key map that this version has no function for, stored so that
 * readers who do not know the version take it as data (CV__DATA_KEY). */
static json_t *wrap_data(json_t *map, int *rc)
{
    json_t *wrapped = json_object();
    if (!wrapped)
        json_decref(map);
    if (!wrapped || json_object_set_new(wrapped, CV__DATA_KEY, map)) {
        json_decref(wrapped);
        *rc = CV_ENOMEM;
        return NULL;
    }
    return wrapped;
}

static int apply_if(cv__conds_t *c, const json_t *v, cv__path_t *path, json_t **out, bool *removed)
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
    if (rc == 0 && cv__hot_plain_data(v, c->ctx->version))
        copy = wrap_data(copy, &rc);
    if (rc)
        json_decref(copy);
    else
        *out = copy;
    return rc;
}

/* A section of a kept resource or output with its `if`s replaced. */
static int section_if(cv__conds_t *c, const json_t *v, cv__path_t *path, const char *key,
                      json_t **out)
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
static int enabled(cv__conds_t *c, const json_t *def, cv__path_t *path, const char *name,
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
    rc = rc ? rc : cv__cond_value(c, cond, path->buf, out);
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

static int kept_resource(cv__conds_t *c, const char *name, const json_t *def, const json_t *all,
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

static int apply_resources(cv__conds_t *c, const json_t *all, json_t *kept)
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

static int apply_outputs(cv__conds_t *c, const json_t *all, json_t *kept)
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

int cv__tpl_conditions(const cv__tpl_ctx_t *ctx, const json_t *root, const cv_template_t *tpl,
                       json_t **resources, json_t **outputs)
{
    cv__conds_t c;
    int rc = cv__conds_init(&c, ctx, root, tpl);
    *resources = json_object();
    *outputs = json_object();
    if (rc == 0 && !(*resources && *outputs))
        rc = CV_ENOMEM;
    const json_t *res = json_object_get(root, "resources");
    const json_t *outs = json_object_get(root, "outputs");
    if (rc == 0 && json_is_object(res))
        rc = apply_resources(&c, res, *resources);
    if (rc == 0 && json_is_object(outs))
        rc = apply_outputs(&c, outs, *outputs);
    cv__conds_clear(&c);
    if (rc) {
        json_decref(*resources);
        json_decref(*outputs);
        *resources = *outputs = NULL;
    }
    return rc;
}
