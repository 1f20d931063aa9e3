/*
 * yaql — the subset of yaql (the query language of Heat's `yaql` function)
 * that Heat's tests and documentation use: `$` and `$.key` paths, `$` and
 * `$1` / `$2` in lambdas, numbers, strings, true, false and null, the
 * operators = != < > <= >= in + - * / mod and or not (yaql's precedence),
 * the methods sum, len, contains, select, where, distinct, reduce,
 * mergeWith, min, max, keys, values, toDict, toUpper, toLower, and the
 * functions int, len, sum, min, max, dict, list; with Heat's limits
 * (limit_iterators, memory_quota).
 *
 * Anything else is refused with "yaql expression not supported: <the
 * construct>", never evaluated differently from yaql: a template that
 * needs more fails at validation, with the construct named, rather than
 * running with a wrong value.
 *
 * An expression is parsed into a small tree (yaql_parse.c), then evaluated
 * here over JSON with `$` bound to {"data": <data>}, as Heat binds it.
 */
#include "cv__template_internal.h"
#include "cv__yaql.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- evaluation */

typedef struct eval {
    const json_t *vars[3]; /* $ (and $1), $2 */
    char *errstr;
    size_t errstr_size;
} eval_t;

static json_t *eval(eval_t *e, const cv__yaql_node_t *n);

static json_t *efail(eval_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static json_t *efail(eval_t *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->errstr, e->errstr_size, fmt, ap);
    va_end(ap);
    return NULL;
}

/* A number that stays an integer when both sides are. */
static json_t *number(double d, bool integer)
{
    return integer && fabs(d) < 9e15 ? json_integer((json_int_t)d) : json_real(d);
}

static json_t *add(eval_t *e, const json_t *a, const json_t *b, bool minus)
{
    if (json_is_number(a) && json_is_number(b)) {
        double x = json_number_value(a), y = json_number_value(b);
        return number(minus ? x - y : x + y, json_is_integer(a) && json_is_integer(b));
    }
    if (!minus && json_is_string(a) && json_is_string(b)) {
        size_t la = json_string_length(a), lb = json_string_length(b);
        char *buf = malloc(la + lb + 1);
        if (!buf)
            return efail(e, "out of memory");
        memcpy(buf, json_string_value(a), la);
        memcpy(buf + la, json_string_value(b), lb);
        json_t *s = json_stringn(buf, la + lb);
        free(buf);
        return s;
    }
    if (!minus && json_is_array(a) && json_is_array(b)) {
        json_t *out = json_deep_copy(a);
        json_array_extend(out, (json_t *)b);
        return out;
    }
    return efail(e, "yaql expression not supported: the operator %c on %s and %s",
                 minus ? '-' : '+', cv__type_name(a), cv__type_name(b));
}

static json_t *sum(eval_t *e, const json_t *list)
{
    if (!json_is_array(list))
        return efail(e, "yaql: sum() of %s", cv__type_name(list));
    double total = 0;
    bool integer = true;
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *v = json_array_get(list, i);
        if (!json_is_number(v))
            return efail(e, "yaql: sum() of a list holding %s", cv__type_name(v));
        integer = integer && json_is_integer(v);
        total += json_number_value(v);
    }
    return number(total, integer);
}

static json_t *len(eval_t *e, const json_t *v)
{
    if (json_is_string(v)) {
        /* Characters, not bytes: count the bytes that start one. */
        json_int_t n = 0;
        for (const unsigned char *c = (const unsigned char *)json_string_value(v); *c; c++)
            n += (*c & 0xC0) != 0x80;
        return json_integer(n);
    }
    if (json_is_array(v) || json_is_object(v))
        return json_integer((json_int_t)(json_array_size(v) + json_object_size(v)));
    return efail(e, "yaql: len() of %s", cv__type_name(v));
}

/* Python's < between two numbers or two strings, as min and max compare. */
static int compare(eval_t *e, const json_t *a, const json_t *b, bool *ok)
{
    *ok = true;
    if (json_is_number(a) && json_is_number(b))
        return (json_number_value(a) > json_number_value(b)) -
               (json_number_value(a) < json_number_value(b));
    if (json_is_string(a) && json_is_string(b))
        return strcmp(json_string_value(a), json_string_value(b));
    *ok = false;
    efail(e, "yaql: cannot compare %s with %s", cv__type_name(a), cv__type_name(b));
    return 0;
}

static json_t *extreme(eval_t *e, const json_t *items, bool want_max)
{
    if (!json_is_array(items) || json_array_size(items) == 0)
        return efail(e, "yaql: %s() of %s", want_max ? "max" : "min",
                     json_is_array(items) ? "an empty list" : cv__type_name(items));
    const json_t *best = json_array_get(items, 0);
    for (size_t i = 1; i < json_array_size(items); i++) {
        bool ok;
        int c = compare(e, json_array_get(items, i), best, &ok);
        if (!ok)
            return NULL;
        if (want_max ? c > 0 : c < 0)
            best = json_array_get(items, i);
    }
    return json_incref((json_t *)best);
}

static json_t *to_int(eval_t *e, const json_t *v)
{
    if (json_is_integer(v))
        return json_incref((json_t *)v);
    if (json_is_real(v))
        return json_integer((json_int_t)json_real_value(v));
    if (json_is_null(v))
        return json_integer(0);
    if (json_is_string(v)) {
        char *end;
        const char *s = json_string_value(v);
        long long i = strtoll(s, &end, 10);
        while (isspace((unsigned char)*end))
            end++;
        if (*s && *end == '\0')
            return json_integer(i);
    }
    return efail(e, "yaql: int() of %s", cv__type_name(v));
}

/* yaql's mergeWith defaults: maps merged key by key, lists joined keeping
 * the items of the second not already in the first, anything else taken
 * from the second. */
static json_t *merge(const json_t *a, const json_t *b)
{
    if (json_is_object(a) && json_is_object(b)) {
        json_t *out = json_deep_copy(a);
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)b, key, v)
        {
            const json_t *old = json_object_get(out, key);
            json_object_set_new(out, key, old ? merge(old, v) : json_deep_copy(v));
        }
        return out;
    }
    if (json_is_array(a) && json_is_array(b)) {
        json_t *out = json_deep_copy(a);
        for (size_t i = 0; out && i < json_array_size(b); i++)
            if (!cv__py_in(json_array_get(b, i), out))
                json_array_append(out, json_array_get(b, i));
        return out;
    }
    return json_deep_copy(b);
}

/* select(f) and reduce(f): the argument is evaluated per item. */
static json_t *with_vars(eval_t *e, const cv__yaql_node_t *f, const json_t *a, const json_t *b)
{
    eval_t inner = {{a, a, b}, e->errstr, e->errstr_size};
    return eval(&inner, f);
}

static json_t *select_items(eval_t *e, const json_t *list, const cv__yaql_node_t *f)
{
    if (!json_is_array(list))
        return efail(e, "yaql: select() of %s", cv__type_name(list));
    json_t *out = json_array();
    for (size_t i = 0; out && i < json_array_size(list); i++) {
        json_t *v = with_vars(e, f, json_array_get(list, i), NULL);
        if (!v || json_array_append_new(out, v)) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static json_t *reduce_items(eval_t *e, const json_t *list, const cv__yaql_node_t *f)
{
    if (!json_is_array(list) || json_array_size(list) == 0)
        return efail(e, "yaql: reduce() of %s",
                     json_is_array(list) ? "an empty list" : cv__type_name(list));
    json_t *acc = json_incref(json_array_get(list, 0));
    for (size_t i = 1; acc && i < json_array_size(list); i++) {
        json_t *next = with_vars(e, f, acc, json_array_get(list, i));
        json_decref(acc);
        acc = next;
    }
    return acc;
}

/* ---------------------------------------------------------------- limits */

/* yaql's limit_iterable: a collection taken or given back has at most
 * limit_iterators items. */
static bool too_many(eval_t *e, const json_t *v)
{
    if (json_array_size(v) + json_object_size(v) <= CV__YAQL_LIMIT_ITERATORS)
        return false;
    efail(e, "Collection length exceeds %d elements", CV__YAQL_LIMIT_ITERATORS);
    return true;
}

/* Python's sys.getsizeof of what yaql holds for `v` (64-bit CPython:
 * a str of ASCII is 49 bytes and one per character, a tuple 40 and 8 per
 * item, a dict 64 and 8 per entry besides its table), shallow as yaql's
 * limit_memory_usage counts it. */
static size_t py_size(const json_t *v)
{
    if (json_is_string(v))
        return 49 + json_string_length(v);
    if (json_is_array(v))
        return 40 + 8 * json_array_size(v);
    if (json_is_object(v))
        return 64 + 8 * json_object_size(v);
    return 32;
}

/* yaql's runner checks every function's result against memory_quota. */
static json_t *within_quota(eval_t *e, json_t *v)
{
    if (v && py_size(v) > CV__YAQL_MEMORY_QUOTA) {
        json_decref(v);
        return efail(e, "Expression consumed too much memory");
    }
    return v;
}

/* yaql's convert_output_data: every collection of the result is limited. */
static bool output_ok(eval_t *e, const json_t *v)
{
    if (too_many(e, v))
        return false;
    size_t i;
    const char *key;
    json_t *item;
    json_array_foreach(v, i, item)
    {
        if (!output_ok(e, item))
            return false;
    }
    json_object_foreach((json_t *)v, key, item)
    {
        if (!output_ok(e, item))
            return false;
    }
    return true;
}

/* ---------------------------------------------------------------- operators */

static bool is_number(const json_t *v)
{
    return json_is_number(v); /* booleans are not numbers in JSON, as in yaql's Number() */
}

static json_t *no_match(eval_t *e, const char *op, const json_t *a, const json_t *b)
{
    return efail(e, "yaql: the operator %s does not take %s and %s", op, cv__type_name(a),
                 cv__type_name(b));
}

/* Python's floor division and modulo (the sign of the divisor). */
static json_t *divide(eval_t *e, const json_t *a, const json_t *b, bool mod)
{
    if (!is_number(a) || !is_number(b))
        return no_match(e, mod ? "mod" : "/", a, b);
    if (json_number_value(b) == 0)
        return efail(e, json_is_integer(a) && json_is_integer(b)
                            ? "integer division or modulo by zero"
                        : mod ? "float modulo"
                              : "float division by zero");
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        json_int_t q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {
            q -= 1;
            r += y;
        }
        return json_integer(mod ? r : q);
    }
    double x = json_number_value(a), y = json_number_value(b);
    if (!mod)
        return json_real(x / y);
    double r = fmod(x, y);
    return json_real(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
}

static json_t *multiply(eval_t *e, const json_t *a, const json_t *b)
{
    if (is_number(a) && is_number(b))
        return number(json_number_value(a) * json_number_value(b),
                      json_is_integer(a) && json_is_integer(b));
    const json_t *str = json_is_string(a) ? a : b, *times = json_is_string(a) ? b : a;
    if (!json_is_string(str) || !json_is_integer(times))
        return no_match(e, "*", a, b);
    json_int_t n = json_integer_value(times);
    size_t len = json_string_length(str);
    if (n <= 0)
        return json_string("");
    /* Measured before it is built: yaql checks the quota first too. */
    if (49 + len * (size_t)n > CV__YAQL_MEMORY_QUOTA || len * (size_t)n / (size_t)n != len)
        return efail(e, "Expression consumed too much memory");
    char *buf = malloc(len * (size_t)n + 1);
    if (!buf)
        return efail(e, "out of memory");
    for (json_int_t i = 0; i < n; i++)
        memcpy(buf + (size_t)i * len, json_string_value(str), len);
    json_t *out = json_stringn(buf, len * (size_t)n);
    free(buf);
    return out;
}

static json_t *order(eval_t *e, const char *op, const json_t *a, const json_t *b)
{
    bool comparable = (is_number(a) && is_number(b)) || (json_is_string(a) && json_is_string(b));
    if (!comparable)
        return no_match(e, op, a, b);
    bool ok;
    int c = compare(e, a, b, &ok);
    bool lt = op[0] == '<', eq = op[1] == '=';
    return json_boolean(lt ? (c < 0 || (eq && c == 0)) : (c > 0 || (eq && c == 0)));
}

/* `a in b`: an item of a list, or a substring. */
static json_t *in(eval_t *e, const json_t *a, const json_t *b)
{
    if (json_is_string(a) && json_is_string(b))
        return json_boolean(strstr(json_string_value(b), json_string_value(a)) != NULL);
    if (!json_is_array(b))
        return no_match(e, "in", a, b);
    return too_many(e, b) ? NULL : json_boolean(cv__py_in(a, b));
}

static json_t *arith(eval_t *e, const char *op, const json_t *a, const json_t *b)
{
    if (strcmp(op, "=") == 0 || strcmp(op, "!=") == 0)
        return json_boolean(cv__py_equal(a, b) == (op[0] == '='));
    if (strcmp(op, "in") == 0)
        return in(e, a, b);
    if (op[0] == '<' || op[0] == '>')
        return order(e, op, a, b);
    if (op[0] == '+' || op[0] == '-')
        return add(e, a, b, op[0] == '-');
    if (op[0] == '*')
        return multiply(e, a, b);
    return divide(e, a, b, op[0] == 'm');
}

/* `and` and `or` are Python's: the right side only when needed, and the
 * value of the side that decided. */
static json_t *binary(eval_t *e, const cv__yaql_node_t *n)
{
    json_t *left = eval(e, n->recv);
    if (!left)
        return NULL;
    bool logic = strcmp(n->name, "and") == 0 || strcmp(n->name, "or") == 0;
    if (logic && cv__py_truthy(left) == (n->name[0] == 'o'))
        return left;
    json_t *right = eval(e, n->right), *out = NULL;
    if (logic) {
        json_decref(left);
        return right;
    }
    if (right)
        out = within_quota(e, arith(e, n->name, left, right));
    json_decref(left);
    json_decref(right);
    return out;
}

static json_t *negate(eval_t *e, const json_t *v)
{
    if (json_is_integer(v))
        return json_integer(-json_integer_value(v));
    if (json_is_real(v))
        return json_real(-json_real_value(v));
    return efail(e, "yaql: the operator - does not take %s", cv__type_name(v));
}

/* ---------------------------------------------------------------- collections */

/* where(f): the items for which f is true. */
static json_t *where_items(eval_t *e, const json_t *list, const cv__yaql_node_t *f)
{
    if (!json_is_array(list))
        return efail(e, "yaql: where() of %s", cv__type_name(list));
    if (too_many(e, list))
        return NULL;
    json_t *out = json_array();
    for (size_t i = 0; out && i < json_array_size(list); i++) {
        json_t *keep = with_vars(e, f, json_array_get(list, i), NULL);
        bool yes = keep && cv__py_truthy(keep);
        json_decref(keep);
        if (!keep || (yes && json_array_append(out, json_array_get(list, i)))) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* distinct(): the first of each run of equal items, in order. */
static json_t *distinct(eval_t *e, const json_t *list)
{
    if (!json_is_array(list))
        return efail(e, "yaql: distinct() of %s", cv__type_name(list));
    if (too_many(e, list))
        return NULL;
    json_t *out = json_array();
    for (size_t i = 0; out && i < json_array_size(list); i++)
        if (!cv__py_in(json_array_get(list, i), out))
            json_array_append(out, json_array_get(list, i));
    return out;
}

/* keys() / values() of a map, in its order. */
static json_t *keys_or_values(eval_t *e, const json_t *map, bool keys)
{
    if (!json_is_object(map))
        return efail(e, "yaql: %s() of %s", keys ? "keys" : "values", cv__type_name(map));
    json_t *out = json_array();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)map, key, v)
    {
        json_array_append_new(out, keys ? json_string(key) : json_incref(v));
    }
    return out;
}

/* toDict(keySelector, valueSelector): a map of each item's key and value
 * (the item itself without a value selector); keys must be strings here,
 * as JSON's are. */
static json_t *to_dict(eval_t *e, const json_t *list, const cv__yaql_node_t *const *sel, int n)
{
    if (!json_is_array(list))
        return efail(e, "yaql: toDict() of %s", cv__type_name(list));
    if (too_many(e, list))
        return NULL;
    json_t *out = json_object();
    for (size_t i = 0; out && i < json_array_size(list); i++) {
        const json_t *item = json_array_get(list, i);
        json_t *k = with_vars(e, sel[0], item, NULL);
        json_t *v = k && n > 1 ? with_vars(e, sel[1], item, NULL) : json_incref((json_t *)item);
        bool ok = k && v && json_is_string(k);
        if (k && v && !ok)
            efail(e, "yaql expression not supported: toDict() with a key that is %s",
                  cv__type_name(k));
        if (!ok || json_object_set(out, json_string_value(k), v)) {
            json_decref(out);
            out = NULL;
        }
        json_decref(k);
        json_decref(v);
    }
    return out;
}

static json_t *change_case(eval_t *e, const json_t *s, bool upper)
{
    if (!json_is_string(s))
        return efail(e, "yaql: %s() of %s", upper ? "toUpper" : "toLower", cv__type_name(s));
    char *buf = strndup(json_string_value(s), json_string_length(s));
    if (!buf)
        return efail(e, "out of memory");
    /* ASCII letters only: other letters are refused rather than cased
     * differently from Python's str.upper(). */
    for (char *c = buf; *c; c++) {
        if ((unsigned char)*c >= 0x80) {
            free(buf);
            return efail(e, "yaql expression not supported: %s() of text beyond ASCII",
                         upper ? "toUpper" : "toLower");
        }
        *c = (char)(upper ? toupper((unsigned char)*c) : tolower((unsigned char)*c));
    }
    json_t *out = json_stringn(buf, json_string_length(s));
    free(buf);
    return out;
}

/* dict(k => v, ...) or dict([[k, v], ...]). */
static json_t *make_dict(eval_t *e, const cv__yaql_node_t *n, json_t *const *args)
{
    json_t *out = json_object();
    bool pairs = n->nargs > 0 && n->args[0]->kind == N_PAIR;
    const json_t *list = !pairs && n->nargs == 1 ? args[0] : NULL;
    if (!pairs && n->nargs == 1 && (!json_is_array(list) || too_many(e, list))) {
        json_decref(out);
        return json_is_array(list) ? NULL : efail(e, "yaql: dict() of %s", cv__type_name(args[0]));
    }
    size_t count = pairs ? (size_t)n->nargs : json_array_size(list);
    for (size_t i = 0; out && i < count; i++) {
        const json_t *pair = pairs ? args[i] : json_array_get(list, i);
        const json_t *k = json_array_get(pair, 0);
        if (json_array_size(pair) != 2 || !json_is_string(k)) {
            json_decref(out);
            return efail(e, "yaql expression not supported: dict() of an item that is not a "
                            "pair with a string key");
        }
        json_object_set(out, json_string_value(k), json_array_get(pair, 1));
    }
    return out;
}

/* list(a, b, ...): its arguments, a list among them unpacked (yaql's
 * list() unpacks iterables, strings and maps excepted). */
static json_t *make_list(eval_t *e, int nargs, json_t *const *args)
{
    json_t *out = json_array();
    for (int i = 0; out && i < nargs; i++) {
        if (json_is_array(args[i]) && too_many(e, args[i])) {
            json_decref(out);
            return NULL;
        }
        if (json_is_array(args[i]))
            json_array_extend(out, args[i]);
        else
            json_array_append(out, args[i]);
    }
    return out;
}

static json_t *method(eval_t *e, const cv__yaql_node_t *n, const json_t *recv)
{
    const char *m = n->name;
    if (json_is_array(recv) && too_many(e, recv))
        return NULL;
    if (strcmp(m, "select") == 0)
        return select_items(e, recv, n->args[0]);
    if (strcmp(m, "where") == 0)
        return where_items(e, recv, n->args[0]);
    if (strcmp(m, "toDict") == 0)
        return to_dict(e, recv, (const cv__yaql_node_t *const *)n->args, n->nargs);
    if (strcmp(m, "reduce") == 0)
        return reduce_items(e, recv, n->args[0]);
    json_t *args[CV__YAQL_MAX_ARGS] = {0}, *out = NULL;
    int i = 0;
    while (i < n->nargs && (args[i] = eval(e, n->args[i])))
        i++;
    if (i == n->nargs) {
        if (strcmp(m, "sum") == 0)
            out = sum(e, recv);
        else if (strcmp(m, "len") == 0)
            out = len(e, recv);
        else if (strcmp(m, "contains") == 0 && (json_is_array(recv) || json_is_object(recv)))
            out = json_boolean(json_is_array(recv)
                                   ? cv__py_in(args[0], recv)
                                   : json_is_string(args[0]) &&
                                         json_object_get(recv, json_string_value(args[0])));
        else if (strcmp(m, "contains") == 0)
            out = efail(e, "yaql expression not supported: method contains() of %s",
                        cv__type_name(recv));
        else if (strcmp(m, "mergeWith") == 0 && json_is_object(recv) && json_is_object(args[0]))
            out = merge(recv, args[0]);
        else if (strcmp(m, "mergeWith") == 0)
            out = efail(e, "yaql: mergeWith() of %s and %s", cv__type_name(recv),
                        cv__type_name(args[0]));
        else if (strcmp(m, "distinct") == 0)
            out = distinct(e, recv);
        else if (strcmp(m, "keys") == 0 || strcmp(m, "values") == 0)
            out = keys_or_values(e, recv, m[0] == 'k');
        else if (strcmp(m, "toUpper") == 0 || strcmp(m, "toLower") == 0)
            out = change_case(e, recv, m[2] == 'U');
        else if (n->nargs == 0)
            out = extreme(e, recv, strcmp(m, "max") == 0);
        else
            out = efail(e, "yaql expression not supported: method %s() with arguments", m);
    }
    for (int j = 0; j < i; j++)
        json_decref(args[j]);
    return out;
}

/* A function: len(x), int(x), min(a, b), max(a, b) and min(list). */
static json_t *function(eval_t *e, const cv__yaql_node_t *n)
{
    json_t *args[CV__YAQL_MAX_ARGS] = {0}, *out = NULL;
    int i = 0;
    while (i < n->nargs && (args[i] = eval(e, n->args[i])))
        i++;
    for (int j = 0; i == n->nargs && j < i && strcmp(n->name, "list") != 0; j++)
        if (json_is_array(args[j]) && too_many(e, args[j]))
            i = -1;
    if (i == n->nargs) {
        if (strcmp(n->name, "dict") == 0)
            out = make_dict(e, n, args);
        else if (strcmp(n->name, "list") == 0)
            out = make_list(e, n->nargs, args);
        else if (strcmp(n->name, "sum") == 0)
            out = sum(e, args[0]);
        else if (strcmp(n->name, "len") == 0 && n->nargs == 1)
            out = len(e, args[0]);
        else if (strcmp(n->name, "int") == 0)
            out = to_int(e, args[0]);
        else if (n->nargs == 1)
            out = extreme(e, args[0], strcmp(n->name, "max") == 0);
        else {
            json_t *pair = json_pack("[OO]", args[0], args[1]);
            out = pair ? extreme(e, pair, strcmp(n->name, "max") == 0) : NULL;
            json_decref(pair);
        }
    }
    for (int j = 0; j < n->nargs && args[j]; j++)
        json_decref(args[j]);
    return out;
}

static json_t *eval(eval_t *e, const cv__yaql_node_t *n)
{
    json_t *recv = NULL, *right = NULL, *out = NULL;
    switch (n->kind) {
    case N_DOLLAR:
        return json_incref((json_t *)e->vars[0]);
    case N_ARG:
        if (!e->vars[n->arg])
            return efail(e, "yaql: $%d is not defined here", n->arg);
        return json_incref((json_t *)e->vars[n->arg]);
    case N_NUM:
    case N_STR:
        return json_incref(n->value);
    case N_CALL:
        return within_quota(e, function(e, n));
    case N_PAIR:
        recv = eval(e, n->recv);
        right = recv ? eval(e, n->right) : NULL;
        out = right ? json_pack("[OO]", recv, right) : NULL;
        json_decref(recv);
        json_decref(right);
        return out;
    case N_BINOP:
        return binary(e, n);
    case N_NOT:
        if (!(recv = eval(e, n->recv)))
            return NULL;
        out = json_boolean(!cv__py_truthy(recv));
        json_decref(recv);
        return out;
    case N_NEG:
        if (!(recv = eval(e, n->recv)))
            return NULL;
        out = negate(e, recv);
        json_decref(recv);
        return out;
    case N_MEMBER:
        if (!(recv = eval(e, n->recv)))
            return NULL;
        if (json_is_object(recv))
            out = json_incref(json_object_get(recv, n->name));
        else if (json_is_null(recv))
            out = json_null(); /* yaql: a key of nothing is nothing */
        else
            out =
                efail(e, "yaql expression not supported: .%s of %s", n->name, cv__type_name(recv));
        if (!out && json_is_object(recv))
            out = json_null();
        json_decref(recv);
        return out;
    case N_METHOD:
        if (!(recv = eval(e, n->recv)))
            return NULL;
        out = within_quota(e, method(e, n, recv));
        json_decref(recv);
        return out;
    }
    return NULL;
}

/* ---------------------------------------------------------------- entry points */

/* Whether `args` has only the keys Heat's Yaql takes, expression among them. */
static bool yaql_keys(const json_t *args)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)args, key, v)
    {
        if (strcmp(key, "expression") != 0 && strcmp(key, "data") != 0)
            return false;
    }
    return json_object_get(args, "expression") != NULL;
}

json_t *cv__fn_yaql(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size)
{
    if (!json_is_object(args))
        return cv__fn_fail(errstr, errstr_size, "yaql: " CV__YAQL_NOT_MAP);
    if (!yaql_keys(args))
        return cv__fn_fail(errstr, errstr_size, "yaql: " CV__YAQL_USAGE);
    const json_t *expression = json_object_get(args, "expression");
    if (!json_is_string(expression))
        return cv__fn_fail(errstr, errstr_size, "yaql: " CV__YAQL_NOT_STRING);
    const json_t *data = json_object_get(args, "data");
    json_t *empty = data ? NULL : json_object();
    char why[400];
    json_t *out =
        cv__yaql_eval(json_string_value(expression), data ? data : empty, why, sizeof(why));
    json_decref(empty);
    if (!out)
        return cv__fn_fail(errstr, errstr_size, "yaql: %s", why);
    size_t size = cv__resolved_size(out, budget->left);
    if (size > budget->left) {
        json_decref(out);
        return cv__fn_too_large(budget, errstr, errstr_size, "yaql");
    }
    budget->left -= size;
    return out;
}

int cv__yaql_check(const char *expression, char *errstr, size_t errstr_size)
{
    cv__yaql_node_t *n = cv__yaql_parse(expression, errstr, errstr_size);
    int rc = n ? cv__yaql_check_tree(n, errstr, errstr_size) : -1;
    cv__yaql_free(n);
    return rc;
}

json_t *cv__yaql_eval(const char *expression, const json_t *data, char *errstr, size_t errstr_size)
{
    cv__yaql_node_t *n = cv__yaql_parse(expression, errstr, errstr_size);
    if (!n || cv__yaql_check_tree(n, errstr, errstr_size) != 0) {
        cv__yaql_free(n);
        return NULL;
    }
    json_t *root = json_pack("{s:O}", "data", data);
    eval_t e = {{root, root, NULL}, errstr, errstr_size};
    json_t *out = root ? eval(&e, n) : NULL;
    if (out && !output_ok(&e, out)) {
        json_decref(out);
        out = NULL;
    }
    json_decref(root);
    cv__yaql_free(n);
    return out;
}
