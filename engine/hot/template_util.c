/*
 * template_util — the small pieces every part of the template language
 * shares: error locations, the table of intrinsic-function names, and
 * turning values into text the way Heat (that is, Python) does, so that
 * "{get_param: port}" substitutes "8080" and not "8080.000000".
 */
#include "cv__template_internal.h"
#include "cv_rtype.h"
#include "cv_base.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- locations */

void cv__path_init(cv__path_t *p, const char *start)
{
    p->len = 0;
    p->buf[0] = '\0';
    if (start)
        cv__path_key(p, start);
}

static void path_append(cv__path_t *p, const char *s)
{
    size_t room = sizeof(p->buf) - 1 - p->len;
    size_t n = strlen(s);
    if (n > room)
        n = room;
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

size_t cv__path_key(cv__path_t *p, const char *key)
{
    size_t before = p->len;
    if (p->len)
        path_append(p, ".");
    path_append(p, key);
    return before;
}

size_t cv__path_index(cv__path_t *p, size_t index)
{
    size_t before = p->len;
    char tmp[32];
    snprintf(tmp, sizeof(tmp), "[%zu]", index);
    path_append(p, tmp);
    return before;
}

void cv__path_pop(cv__path_t *p, size_t len)
{
    p->len = len;
    p->buf[len] = '\0';
}

int cv__tpl_err(const cv__tpl_ctx_t *ctx, int err, const char *where, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (where && *where)
        return cv_seterr(ctx->errstr, ctx->errstr_size, err, "%s: %s: %s", ctx->fname, where, msg);
    return cv_seterr(ctx->errstr, ctx->errstr_size, err, "%s: %s", ctx->fname, msg);
}

/* ---------------------------------------------------------------- functions */

static const struct {
    const char *name;
    cv__fn_t fn;
} supported_fns[] = {
    {"get_param", CV__FN_GET_PARAM},
    {"get_resource", CV__FN_GET_RESOURCE},
    {"get_attr", CV__FN_GET_ATTR},
    {"str_replace", CV__FN_STR_REPLACE},
    {"list_join", CV__FN_LIST_JOIN},
    {"str_split", CV__FN_STR_SPLIT},
    {"list_concat", CV__FN_LIST_CONCAT},
    {"list_concat_unique", CV__FN_LIST_CONCAT_UNIQUE},
    {"map_merge", CV__FN_MAP_MERGE},
    {"map_replace", CV__FN_MAP_REPLACE},
    {"str_replace_strict", CV__FN_STR_REPLACE_STRICT},
    {"str_replace_vstrict", CV__FN_STR_REPLACE_VSTRICT},
    {"digest", CV__FN_DIGEST},
    {"repeat", CV__FN_REPEAT},
    {"make_url", CV__FN_MAKE_URL},
    {"filter", CV__FN_FILTER},
    {"contains", CV__FN_CONTAINS},
    {"resource_facade", CV__FN_RESOURCE_FACADE},
    {"yaql", CV__FN_YAQL},
};

/* Whether a one-key map is a function call at all is cv_is_intrinsic()'s
 * single table (engine/hot), so the schema checks and the language agree;
 * a call of one of Heat's functions not in supported_fns must be refused,
 * not run with the call as data. */
static cv__fn_t supported_fn(const char *key)
{
    for (size_t i = 0; i < sizeof(supported_fns) / sizeof(supported_fns[0]); i++)
        if (strcmp(supported_fns[i].name, key) == 0)
            return supported_fns[i].fn;
    return CV__FN_UNSUPPORTED;
}

/* The only key of `v` when it is a map of exactly one key, else NULL. */
static const char *only_key(const json_t *v)
{
    if (!json_is_object(v) || json_object_size(v) != 1)
        return NULL;
    return json_object_iter_key(json_object_iter((json_t *)v));
}

cv__fn_t cv__fn_of(const json_t *v, const char **name, const json_t **arg)
{
    const char *key = only_key(v);
    bool data = key && strcmp(key, CV__DATA_KEY) == 0;
    if (!data && !cv_is_intrinsic(v))
        return CV__FN_NONE;
    *name = key;
    *arg = json_object_iter_value(json_object_iter((json_t *)v));
    return data ? CV__FN_DATA : supported_fn(key);
}

/*
 * Heat's HOT function tables (heat/engine/hot/template.py, the `functions`
 * of HOTemplate20130523 ... HOTemplate20210416): the version a name enters
 * the table in, and the version from which the table maps it to
 * hot_funcs.Removed (0: never). A name outside a version's table is no
 * function there at all.
 */
static const struct {
    const char *name;
    long since, removed;
} hot_functions[] = {
    {"get_param", CV__V20130523, 0},
    {"get_resource", CV__V20130523, 0},
    {"get_attr", CV__V20130523, 0},
    {"list_join", CV__V20130523, 0},
    {"str_replace", CV__V20130523, 0},
    {"resource_facade", CV__V20130523, 0},
    {"get_file", CV__V20130523, 0},
    {"Fn::Select", CV__V20130523, CV__V20151015},
    {"Fn::GetAZs", CV__V20130523, CV__V20141016},
    {"Fn::Join", CV__V20130523, CV__V20141016},
    {"Fn::Split", CV__V20130523, CV__V20141016},
    {"Fn::Replace", CV__V20130523, CV__V20141016},
    {"Fn::Base64", CV__V20130523, CV__V20141016},
    {"Fn::MemberListToMap", CV__V20130523, CV__V20141016},
    {"Fn::ResourceFacade", CV__V20130523, CV__V20141016},
    {"Ref", CV__V20130523, CV__V20141016},
    {"repeat", CV__V20150430, 0},
    {"digest", CV__V20150430, 0},
    {"str_split", CV__V20151015, 0},
    {"map_merge", CV__V20160408, 0},
    {"yaql", CV__V20161014, 0},
    {"map_replace", CV__V20161014, 0},
    {"if", CV__V20161014, 0},
    {"filter", CV__V20170224, 0},
    {"str_replace_strict", CV__V20170224, 0},
    {"make_url", CV__V20170901, 0},
    {"list_concat", CV__V20170901, 0},
    {"list_concat_unique", CV__V20170901, 0},
    {"str_replace_vstrict", CV__V20170901, 0},
    {"contains", CV__V20170901, 0},
};

cv__hot_kind_t cv__hot_function(const char *name, long version)
{
    for (size_t i = 0; i < sizeof(hot_functions) / sizeof(hot_functions[0]); i++) {
        if (strcmp(hot_functions[i].name, name) != 0)
            continue;
        if (version < hot_functions[i].since)
            return CV__HOT_DATA;
        if (hot_functions[i].removed && version >= hot_functions[i].removed)
            return CV__HOT_REMOVED;
        return CV__HOT_FUNCTION;
    }
    return CV__HOT_DATA;
}

/* Heat's condition_functions (HOTemplate20161014, HOTemplate20170901) and
 * _parser_condition_functions: the version's other functions are Invalid
 * in a condition, its Removed ones stay Removed. */
cv__hot_kind_t cv__hot_condition(const char *name, long version)
{
    static const char *const since_2016[] = {"get_param", "equals", "not", "and", "or"};
    for (size_t i = 0; i < sizeof(since_2016) / sizeof(since_2016[0]); i++)
        if (strcmp(since_2016[i], name) == 0)
            return CV__HOT_FUNCTION;
    if (version >= CV__V20170901 && (strcmp(name, "yaql") == 0 || strcmp(name, "contains") == 0))
        return CV__HOT_FUNCTION;
    cv__hot_kind_t kind = cv__hot_function(name, version);
    return kind == CV__HOT_FUNCTION ? CV__HOT_INVALID : kind;
}

bool cv__hot_plain_data(const json_t *v, long version)
{
    const char *key = only_key(v);
    if (!key)
        return false;
    if (strcmp(key, CV__DATA_KEY) == 0)
        return true;
    return cv_is_intrinsic(v) && cv__hot_function(key, version) == CV__HOT_DATA;
}

json_t *cv__fn_fail(char *errstr, size_t errstr_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errstr, errstr_size, fmt, ap);
    va_end(ap);
    return NULL;
}

json_t *cv__fn_fail_got(char *errstr, size_t errstr_size, const char *fn, const char *what,
                        const json_t *got)
{
    char shown[128];
    cv__describe(got, shown, sizeof(shown));
    return cv__fn_fail(errstr, errstr_size, "%s: %s, got %s", fn, what, shown);
}

json_t *cv__fn_too_large(cv__budget_t *budget, char *errstr, size_t errstr_size, const char *fn)
{
    budget->exceeded = true;
    return cv__fn_fail(errstr, errstr_size, "%s: " CV__TOO_LARGE_PHRASE " %d bytes", fn,
                       CV__MAX_RESOLVED_BYTES);
}

/* ---------------------------------------------------------------- scalars */

void cv__fmt_number(const json_t *num, char *out, size_t size)
{
    cv_format_number(num, out, size);
}

void cv__describe(const json_t *v, char *out, size_t size)
{
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!s) {
        snprintf(out, size, "?");
        return;
    }
    if (strlen(s) >= size && size > 4)
        snprintf(out, size, "%.*s...", (int)(size - 4), s);
    else
        snprintf(out, size, "%s", s);
    free(s);
}

const char *cv__type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "a map";
    case JSON_ARRAY:
        return "a list";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

char *cv__dump_sorted(const json_t *v)
{
    /* Without JSON_COMPACT jansson separates with ", " and ": ", which is
     * exactly Python's json.dumps default. */
    return json_dumps(v, JSON_SORT_KEYS | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
}

/* ---------------------------------------------------------------- Python values */

/* Python's ==, which Heat's equals and contains use: 1 == 1.0 and
 * True == 1, maps and lists compared item by item. */
/* Python's == on numbers and booleans: True == 1 == 1.0; integers compare
 * exactly (2**53 + 1 != 2**53), a real makes it a real comparison. */
static bool py_number_equal(const json_t *a, const json_t *b)
{
    if (json_is_real(a) || json_is_real(b)) {
        double x = json_is_boolean(a) ? json_is_true(a) : json_number_value(a);
        double y = json_is_boolean(b) ? json_is_true(b) : json_number_value(b);
        return x == y;
    }
    json_int_t x = json_is_boolean(a) ? json_is_true(a) : json_integer_value(a);
    json_int_t y = json_is_boolean(b) ? json_is_true(b) : json_integer_value(b);
    return x == y;
}

bool cv__py_equal(const json_t *a, const json_t *b)
{
    bool a_num = json_is_number(a) || json_is_boolean(a);
    bool b_num = json_is_number(b) || json_is_boolean(b);
    if (a_num || b_num)
        return a_num && b_num && py_number_equal(a, b);
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!cv__py_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        const char *key;
        const json_t *v;
        if (json_object_size(a) != json_object_size(b))
            return false;
        json_object_foreach((json_t *)a, key, v)
        {
            const json_t *w = json_object_get(b, key);
            if (!w || !cv__py_equal(v, w))
                return false;
        }
        return true;
    }
    return json_equal(a, b);
}

/* Python's `value in sequence` for the sequences JSON has: a list's items,
 * or a substring of a string. */
bool cv__py_in(const json_t *value, const json_t *seq)
{
    if (json_is_string(seq))
        return json_is_string(value) &&
               memmem(json_string_value(seq), json_string_length(seq), json_string_value(value),
                      json_string_length(value)) != NULL;
    for (size_t i = 0; i < json_array_size(seq); i++)
        if (cv__py_equal(value, json_array_get(seq, i)))
            return true;
    return false;
}

bool cv__py_truthy(const json_t *v)
{
    if (json_is_null(v))
        return false;
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_number(v))
        return json_number_value(v) != 0;
    if (json_is_string(v))
        return json_string_length(v) > 0;
    return json_array_size(v) + json_object_size(v) > 0;
}
