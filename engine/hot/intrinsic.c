/*
 * intrinsic — evaluating get_param, get_resource, get_attr, str_replace and
 * list_join, with Heat's semantics; the functions that build lists
 * (str_split, list_concat, filter, contains...), maps (map_merge,
 * map_replace), repeat, make_url, digest and yaql are in intrinsic_lists.c,
 * intrinsic_maps.c, intrinsic_repeat.c, intrinsic_url.c,
 * intrinsic_digest.c and yaql.c, called from here, and the paths of
 * get_param and get_attr in intrinsic_paths.c.
 *
 * Arguments are evaluated before the function that receives them, so calls
 * nest freely ({str_replace: {params: {$ip: {get_attr: [...]}}}}). Every
 * lookup goes through the caller's context; nothing here keeps state, so
 * any number of threads may resolve at once.
 *
 * Where Heat answers a missing key with a neutral value rather than an
 * error, so do we: get_param of a path that is not there gives "", get_attr
 * of an attribute or path that is not there gives null.
 */
#include "cv__fn_messages.h"
#include "cv__template_internal.h"
#include "cv_base.h"
#include "cv_rtype.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * How much one resolution may copy and build. Every get_param / get_attr
 * copies a value and every placeholder or item of str_replace / list_join
 * repeats one, so the result can be the product of input sizes: 900 bytes
 * of YAML (a parameter and a list of aliased get_param calls) resolved to
 * gigabytes. Sizes are counted roughly, as the text of strings plus
 * NODE_BYTES per value copied; past the budget the resolution fails.
 */
#define MAX_RESOLVED_BYTES CV__MAX_RESOLVED_BYTES
#define NODE_BYTES CV__NODE_BYTES

typedef struct resolver {
    const cv_resolve_ctx_t *ctx;
    cv__path_t path;
    int in_args;         /* inside a call's arguments, which add nothing to the path */
    cv__budget_t budget; /* bytes this resolution may still copy or build */
    char *errstr;
    size_t errstr_size;
} resolver_t;

static json_t *resolve(resolver_t *r, const json_t *expr);

static json_t *fail(resolver_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static json_t *fail(resolver_t *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cv_seterr(r->errstr, r->errstr_size, CV_EVALIDATE, "%s: %s",
              r->path.len ? r->path.buf : "(value)", msg);
    return NULL;
}

static json_t *fail_got(resolver_t *r, const char *fn, const char *what, const json_t *got)
{
    char shown[128];
    cv__describe(got, shown, sizeof(shown));
    return fail(r, "%s: %s, got %s", fn, what, shown);
}

/* ---------------------------------------------------------------- budget */

/* The size of a copy of `v`, counted until it passes `limit`. */
static size_t size_of(const json_t *v, size_t limit)
{
    size_t size = NODE_BYTES + (json_is_string(v) ? json_string_length(v) : 0), i;
    const char *key;
    json_t *item;
    json_array_foreach(v, i, item)
    {
        if (size > limit)
            break;
        size += size_of(item, limit - size);
    }
    json_object_foreach((json_t *)v, key, item)
    {
        if (size > limit)
            break;
        size += strlen(key) + size_of(item, limit - size);
    }
    return size;
}

size_t cv__resolved_size(const json_t *v, size_t limit)
{
    return size_of(v, limit);
}

static json_t *too_large(resolver_t *r, const char *fn)
{
    r->budget.exceeded = true;
    return fail(r, "%s: " CV__TOO_LARGE_PHRASE " %d bytes", fn, MAX_RESOLVED_BYTES);
}

/* A copy of a parameter or attribute value, within the budget. The caller
 * may change what it gets without changing the parameters or attributes,
 * which other resolutions share. */
static json_t *copy_value(resolver_t *r, const char *fn, const json_t *value)
{
    size_t size = size_of(value, r->budget.left);
    if (size > r->budget.left)
        return too_large(r, fn);
    r->budget.left -= size;
    return json_deep_copy(value);
}

/* ---------------------------------------------------------------- lookups */

static json_t *get_param(resolver_t *r, const json_t *args)
{
    const json_t *name = json_is_array(args) ? json_array_get(args, 0) : args;
    if (!cv__py_truthy(args))
        return fail(r, CV__GET_PARAM_NO_ARGS);
    if (!json_is_string(args) && !json_is_array(args))
        return fail(r, CV__GET_PARAM_NOT_LIST);
    if (!json_is_string(name))
        return fail(r, CV__GET_PARAM_NAME);
    const json_t *value = json_object_get(r->ctx->parameters, json_string_value(name));
    if (!value)
        return fail(r, CV__PARAM_MISSING, json_string_value(name));
    json_t *made = NULL;
    if (json_is_array(args))
        value = cv__path_walk(value, args, 1, true, &made);
    json_t *out = value ? copy_value(r, "get_param", value) : json_string("");
    json_decref(made);
    return out;
}

static int lookup(resolver_t *r, const char *fn, const char *name, const char **id,
                  const json_t **attrs)
{
    *id = NULL;
    *attrs = NULL;
    int rc = r->ctx->resource ? r->ctx->resource(r->ctx->ud, name, id, attrs) : CV_ENOENT;
    if (rc == CV_ENOENT)
        fail(r, "%s: resource \"%s\" is not available", fn, name);
    else if (rc)
        fail(r, "%s: resource \"%s\": %s", fn, name, cv_strerror(rc));
    return rc;
}

static json_t *get_resource(resolver_t *r, const json_t *args)
{
    if (!json_is_string(args))
        return fail_got(r, "get_resource", "expected a resource name", args);
    const char *id;
    const json_t *attrs;
    if (lookup(r, "get_resource", json_string_value(args), &id, &attrs))
        return NULL;
    return id ? json_string(id) : json_null();
}

/* get_attr [R] (Heat from 2015-10-15, checked at validation): every
 * attribute of R, as a map. */
static json_t *get_all_attrs(resolver_t *r, const json_t *name)
{
    const char *id;
    const json_t *attrs;
    if (!json_is_string(name))
        return fail_got(r, "get_attr", "resource and attribute must be strings", name);
    if (lookup(r, "get_attr", json_string_value(name), &id, &attrs))
        return NULL;
    json_t *all = json_is_object(attrs) ? copy_value(r, "get_attr", attrs) : json_object();
    cv_rtype_attrs_shown(all);
    return all;
}

static json_t *get_attr(resolver_t *r, const json_t *args)
{
    const json_t *name = json_array_get(args, 0), *attr = json_array_get(args, 1);
    if (json_is_array(args) && json_array_size(args) == 1)
        return get_all_attrs(r, name);
    if (!cv__py_truthy(args))
        return fail(r, CV__GET_ATTR_FORMS);
    if (!json_is_array(args))
        return fail(r, CV__GET_ATTR_NOT_LIST);
    if (!json_is_string(name) || !json_is_string(attr))
        return fail_got(r, "get_attr", "resource and attribute must be strings", args);
    const char *id;
    const json_t *attrs;
    if (lookup(r, "get_attr", json_string_value(name), &id, &attrs))
        return NULL;
    char msg[400];
    json_t *group_value = NULL;
    int rc = cv__group_get_attr(attrs, args, &group_value, msg, sizeof(msg));
    if (rc < 0)
        return fail(r, "get_attr: %s", msg);
    if (rc == 0) { /* a group reads the path its own way */
        json_t *out = copy_value(r, "get_attr", group_value);
        json_decref(group_value);
        return out;
    }
    json_t *made = NULL;
    const json_t *value =
        cv__path_walk(json_object_get(attrs, json_string_value(attr)), args, 2, false, &made);
    json_t *out = value ? copy_value(r, "get_attr", value) : json_null();
    json_decref(made);
    return out;
}

/* ---------------------------------------------------------------- strings */

/* A value as Heat turns it into text for str_replace and list_join: null is
 * empty, numbers and booleans as Python prints them, lists and maps as
 * JSON. NULL for anything else (there is nothing else). */
static char *text_of(const json_t *v)
{
    char num[64];
    switch (json_typeof(v)) {
    case JSON_NULL:
        return strdup("");
    case JSON_STRING:
        return strndup(json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
    case JSON_REAL:
        cv__fmt_number(v, num, sizeof(num));
        return strdup(num);
    case JSON_TRUE:
        return strdup("True");
    case JSON_FALSE:
        return strdup("False");
    default:
        return cv__dump_sorted(v);
    }
}

/* A string being built, at most `max` bytes long (the budget left). A
 * failure that is not the buffer's own (a text that could not be made)
 * marks the buffer failed too: either way the result is out of memory. */
typedef struct strbuf {
    cv_buf_t text;
    size_t max;
    bool too_long;
} strbuf_t;

static void sb_add(strbuf_t *sb, const char *s, size_t n)
{
    if (sb->text.failed || sb->too_long)
        return;
    if (n > sb->max - sb->text.len)
        sb->too_long = true;
    else
        cv_buf_add(&sb->text, s, n);
}

static json_t *sb_finish(resolver_t *r, strbuf_t *sb, const char *fn)
{
    size_t len = sb->text.len;
    json_t *s = sb->text.failed || sb->too_long ? NULL : json_stringn(cv_buf_str(&sb->text), len);
    cv_buf_free(&sb->text);
    if (sb->too_long)
        return too_large(r, fn);
    if (s)
        r->budget.left -= len;
    return s ? s : fail(r, "out of memory or invalid UTF-8 building a string");
}

/* The text of one str_replace placeholder and what replaces it. */
typedef struct subst {
    const char *key;
    size_t key_len;
    char *value;
    size_t value_len;
    bool found; /* the template had it, for str_replace_strict */
} subst_t;

/* Longer placeholders first, then in byte order: Heat's order, which keeps
 * "$host" from eating the start of "$hostname". */
static int cmp_subst(const void *a, const void *b)
{
    const subst_t *x = a, *y = b;
    if (x->key_len != y->key_len)
        return x->key_len > y->key_len ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* A run of the template still to be scanned, or a value already put in
 * (never scanned again, so a value containing a placeholder stays as is). */
typedef struct piece {
    const char *s;
    size_t len;
    bool value;
} piece_t;

typedef CV_VEC(piece_t) pieces_t;

/* Heat's algorithm: split every unscanned run on the placeholder and put
 * the value between the parts; then the next placeholder, on what is left. */
static bool split_on(pieces_t *in, pieces_t *out, subst_t *sub)
{
    out->n = 0;
    for (size_t i = 0; i < in->n; i++) {
        piece_t p = in->v[i];
        const char *hit;
        while (!p.value && (hit = memmem(p.s, p.len, sub->key, sub->key_len))) {
            sub->found = true;
            if (cv_vec_push(out, (piece_t){p.s, (size_t)(hit - p.s), false}) != 0 ||
                cv_vec_push(out, (piece_t){sub->value, sub->value_len, true}) != 0)
                return false;
            p.len -= (size_t)(hit - p.s) + sub->key_len;
            p.s = hit + sub->key_len;
        }
        if (cv_vec_push(out, p) != 0)
            return false;
    }
    return true;
}

static json_t *substitute(resolver_t *r, const char *fn, const json_t *tmpl, subst_t *subs,
                          size_t n)
{
    pieces_t a = {0}, b = {0};
    bool ok =
        cv_vec_push(&a, (piece_t){json_string_value(tmpl), json_string_length(tmpl), false}) == 0;
    for (size_t i = 0; ok && i < n; i++) {
        ok = split_on(&a, &b, &subs[i]);
        pieces_t t = a;
        a = b;
        b = t;
    }
    /* Measured before anything is built: a result past the budget fails
     * without first building as much of it as the budget allows. */
    size_t total = 0;
    for (size_t i = 0; ok && i < a.n && total <= r->budget.left; i++)
        total += a.v[i].len;
    strbuf_t sb = {.max = r->budget.left, .too_long = total > r->budget.left};
    for (size_t i = 0; ok && i < a.n; i++)
        sb_add(&sb, a.v[i].s, a.v[i].len);
    sb.text.failed = sb.text.failed || !ok;
    cv_vec_free(&a);
    cv_vec_free(&b);
    return sb_finish(r, &sb, fn);
}

/* How str_replace treats its params: str_replace_strict also wants every
 * one found in the template, str_replace_vstrict none empty besides. */
typedef enum { REPLACE_LAX, REPLACE_STRICT, REPLACE_VSTRICT } strictness_t;

/* Whether str_replace_vstrict refuses a value: null, "", [] or {}. */
static bool empty_value(const json_t *v)
{
    return json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0) ||
           ((json_is_array(v) || json_is_object(v)) &&
            json_array_size(v) + json_object_size(v) == 0);
}

/* Heat's "The following params were not found in the template: a,b",
 * the names in the order they were replaced (longest first). */
static json_t *not_found(resolver_t *r, const subst_t *subs, size_t n)
{
    char list[384] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof(list); i++)
        if (!subs[i].found)
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", len ? "," : "",
                                    subs[i].key);
    return fail(r, "The following params were not found in the template: %s", list);
}

static json_t *str_replace(resolver_t *r, const char *fn, strictness_t strictness,
                           const json_t *args)
{
    const json_t *tmpl = json_object_get(args, "template");
    const json_t *params = json_object_get(args, "params");
    if (!json_is_object(args))
        return fail(r, CV__REPLACE_NOT_MAP, fn);
    if (!tmpl || !params)
        return fail(r, CV__REPLACE_SYNTAX, fn, fn);
    if (!json_is_string(tmpl))
        return fail(r, CV__REPLACE_TEMPLATE, fn);
    if (!json_is_object(params))
        return fail(r, CV__REPLACE_PARAMS_MAP, fn);
    size_t n = json_object_size(params), i = 0;
    subst_t *subs = calloc(n ? n : 1, sizeof(*subs));
    if (!subs)
        return fail(r, "out of memory");
    const char *err = NULL, *key;
    const json_t *value;
    json_object_foreach((json_t *)params, key, value)
    {
        subs[i] = (subst_t){key, strlen(key), text_of(value), 0, false};
        if (!subs[i].value)
            err = "out of memory";
        else
            subs[i].value_len = strlen(subs[i].value);
        if (subs[i++].key_len == 0 && !err)
            err = "params keys may not be empty";
    }
    qsort(subs, i, sizeof(*subs), cmp_subst);
    /* Heat checks the values in the order it replaces them. */
    const char *empty = NULL;
    for (size_t j = 0; strictness == REPLACE_VSTRICT && !empty && j < i; j++)
        if (empty_value(json_object_get(params, subs[j].key)))
            empty = subs[j].key;
    json_t *result = NULL;
    if (err) {
        fail(r, "%s: %s", fn, err);
    } else if (empty) {
        fail(r,
             "%s has an undefined or empty value for param %s, must be a defined non-empty value",
             fn, empty);
    } else {
        result = substitute(r, fn, tmpl, subs, n);
        for (size_t j = 0; result && strictness != REPLACE_LAX && j < n; j++) {
            if (!subs[j].found) {
                json_decref(result);
                result = not_found(r, subs, n);
            }
        }
    }
    for (size_t j = 0; j < i; j++)
        free(subs[j].value);
    free(subs);
    return result;
}

static bool join_list(resolver_t *r, strbuf_t *sb, const json_t *list, const json_t *delim,
                      bool *first)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *item = json_array_get(list, i);
        if (json_is_boolean(item)) {
            fail(r, CV__JOIN_ITEM, json_is_true(item) ? "True" : "False");
            return false;
        }
        char *text = text_of(item);
        if (!*first)
            sb_add(sb, json_string_value(delim), json_string_length(delim));
        sb_add(sb, text ? text : "", text ? strlen(text) : 0);
        sb->text.failed = sb->text.failed || !text;
        free(text);
        *first = false;
    }
    return true;
}

static json_t *list_join(resolver_t *r, const json_t *args)
{
    if (!json_is_array(args) || json_array_size(args) < 2)
        return fail(r, CV__JOIN_USAGE);
    const json_t *delim = json_array_get(args, 0);
    if (!json_is_string(delim))
        return fail(r, CV__JOIN_DELIMITER);
    strbuf_t sb = {.max = r->budget.left};
    bool first = true;
    for (size_t i = 1; i < json_array_size(args); i++) {
        const json_t *list = json_array_get(args, i);
        bool ok = json_is_null(list) || json_is_array(list);
        if (!ok)
            fail(r, CV__JOIN_NOT_LIST);
        if (!ok || !join_list(r, &sb, list, delim, &first)) {
            cv_buf_free(&sb.text);
            return NULL;
        }
    }
    return sb_finish(r, &sb, "list_join");
}

/* ---------------------------------------------------------------- evaluation */

static size_t path_index(resolver_t *r, size_t i)
{
    return r->in_args ? r->path.len : cv__path_index(&r->path, i);
}

static size_t path_key(resolver_t *r, const char *key)
{
    return r->in_args ? r->path.len : cv__path_key(&r->path, key);
}

static json_t *resolve_data(resolver_t *r, const json_t *expr)
{
    json_t *out = json_is_array(expr) ? json_array() : json_object();
    for (size_t i = 0; out && json_is_array(expr) && i < json_array_size(expr); i++) {
        size_t mark = path_index(r, i);
        json_t *v = resolve(r, json_array_get(expr, i));
        cv__path_pop(&r->path, mark);
        if (!v || json_array_append_new(out, v)) {
            json_decref(out);
            return NULL;
        }
    }
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)expr, key, item)
    {
        size_t mark = path_key(r, key);
        json_t *v = out ? resolve(r, item) : NULL;
        cv__path_pop(&r->path, mark);
        if (!v || json_object_set_new(out, key, v)) {
            json_decref(out);
            return NULL;
        }
    }
    return out ? out : fail(r, "out of memory");
}

/* A function of intrinsic_lists.c, intrinsic_maps.c, intrinsic_repeat.c,
 * intrinsic_url.c or intrinsic_digest.c, which report without the
 * location. */
static json_t *built(resolver_t *r, cv__fn_t fn, const char *name, const json_t *args)
{
    char msg[512] = "";
    json_t *out;
    if (fn == CV__FN_STR_SPLIT)
        out = cv__fn_str_split(args, &r->budget, msg, sizeof(msg));
    else if (fn == CV__FN_MAP_MERGE)
        out = cv__fn_map_merge(args, &r->budget, msg, sizeof(msg));
    else if (fn == CV__FN_MAP_REPLACE)
        out = cv__fn_map_replace(args, &r->budget, msg, sizeof(msg));
    else if (fn == CV__FN_DIGEST)
        out = cv__fn_digest(args, &r->budget, msg, sizeof(msg));
    else if (fn == CV__FN_REPEAT)
        out = cv__fn_repeat(args, &r->budget, msg, sizeof(msg));
    else if (fn == CV__FN_MAKE_URL)
        out = cv__fn_make_url(args, &r->budget, msg, sizeof(msg));
    else if (fn == CV__FN_FILTER)
        out = cv__fn_filter(args, &r->budget, msg, sizeof(msg));
    else if (fn == CV__FN_CONTAINS)
        out = cv__fn_contains(args, msg, sizeof(msg));
    else if (fn == CV__FN_YAQL)
        out = cv__fn_yaql(args, &r->budget, msg, sizeof(msg));
    else
        out = cv__fn_list_concat(name, args, fn == CV__FN_LIST_CONCAT_UNIQUE, &r->budget, msg,
                                 sizeof(msg));
    return out ? out : fail(r, "%s", msg);
}

static json_t *resolve(resolver_t *r, const json_t *expr)
{
    const char *name = NULL;
    const json_t *arg = NULL;
    cv__fn_t fn = cv__fn_of(expr, &name, &arg);
    if (fn == CV__FN_NONE && (json_is_array(expr) || json_is_object(expr)))
        return resolve_data(r, expr);
    if (fn == CV__FN_NONE)
        return json_incref((json_t *)expr);
    if (fn == CV__FN_DATA)
        return resolve_data(r, arg);
    if (fn == CV__FN_UNSUPPORTED)
        return fail(r, "function %s is not supported", name);
    r->in_args++;
    json_t *args = resolve(r, arg), *out = NULL;
    r->in_args--;
    if (!args)
        return NULL;
    switch (fn) {
    case CV__FN_GET_PARAM:
        out = get_param(r, args);
        break;
    case CV__FN_GET_RESOURCE:
        out = get_resource(r, args);
        break;
    case CV__FN_GET_ATTR:
        out = get_attr(r, args);
        break;
    case CV__FN_STR_REPLACE:
    case CV__FN_STR_REPLACE_STRICT:
    case CV__FN_STR_REPLACE_VSTRICT:
        out = str_replace(r, name,
                          fn == CV__FN_STR_REPLACE          ? REPLACE_LAX
                          : fn == CV__FN_STR_REPLACE_STRICT ? REPLACE_STRICT
                                                            : REPLACE_VSTRICT,
                          args);
        break;
    case CV__FN_LIST_JOIN:
        out = list_join(r, args);
        break;
    case CV__FN_RESOURCE_FACADE:
        /* Replaced when the child stack is planned (template_facade.c). */
        out = fail(r, "resource_facade: this stack has no parent resource");
        break;
    default:
        out = built(r, fn, name, args);
        break;
    }
    json_decref(args);
    return out;
}

json_t *cv__intrinsic_resolve_within(const json_t *expr, const cv_resolve_ctx_t *ctx,
                                     const char *where, cv__budget_t *budget, char *errstr,
                                     size_t errstr_size)
{
    resolver_t r = {
        .ctx = ctx, .budget.left = budget->left, .errstr = errstr, .errstr_size = errstr_size};
    cv__path_init(&r.path, where);
    json_t *out = resolve(&r, expr);
    *budget = r.budget;
    return out;
}

json_t *cv_intrinsic_resolve(const json_t *expr, const cv_resolve_ctx_t *ctx, const char *where,
                             char *errstr, size_t errstr_size)
{
    cv__budget_t budget = {.left = MAX_RESOLVED_BYTES};
    return cv__intrinsic_resolve_within(expr, ctx, where, &budget, errstr, errstr_size);
}

void cv_intrinsic_references(const json_t *expr, json_t *out)
{
    const char *name = NULL;
    const json_t *arg = NULL;
    cv__fn_t fn = cv__fn_of(expr, &name, &arg);
    if (fn == CV__FN_GET_RESOURCE && json_is_string(arg))
        json_array_append(out, (json_t *)arg);
    if (fn == CV__FN_GET_ATTR && json_is_string(json_array_get(arg, 0)))
        json_array_append(out, json_array_get(arg, 0));
    if (fn != CV__FN_NONE) {
        cv_intrinsic_references(arg, out);
        return;
    }
    for (size_t i = 0; json_is_array(expr) && i < json_array_size(expr); i++)
        cv_intrinsic_references(json_array_get(expr, i), out);
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)expr, key, item)
    {
        cv_intrinsic_references(item, out);
    }
}
