/*
 * intrinsic_lists — str_split, list_concat, list_concat_unique, filter and
 * contains, with Heat's semantics (heat/engine/hot/functions.py: StrSplit,
 * ListConcat, ListConcatUnique, Filter, Contains).
 *
 * These build new lists out of values the resolver has already computed,
 * so they are plain functions of their arguments: no lookups, no location
 * (the resolver prefixes it to the message). What they build counts
 * against the resolution's budget like any copy, so that nesting them
 * through YAML aliases cannot multiply a small template into gigabytes.
 */
#include "cv__fn_messages.h"
#include "cv__template_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- str_split */

/* Python's str.isspace() for the ASCII range, which is what split(None)
 * splits on. */
static bool py_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

/* One piece of the string being split. */
typedef struct piece {
    const char *s;
    size_t len;
} piece_t;

/* Finds piece number `want` of `s` split as Python's s.split(delim) does
 * (on runs of whitespace, ends ignored, when `delim` is NULL), or counts
 * the pieces when `want` is SIZE_MAX. Returns the number of pieces seen. */
static size_t split_scan(const char *s, size_t len, const char *delim, size_t delim_len,
                         size_t want, piece_t *out)
{
    size_t n = 0, at = 0;
    if (delim) {
        for (;;) {
            const char *hit = memmem(s + at, len - at, delim, delim_len);
            size_t end = hit ? (size_t)(hit - s) : len;
            if (n == want) {
                *out = (piece_t){s + at, end - at};
                return n + 1;
            }
            n++;
            if (!hit)
                return n;
            at = end + delim_len;
        }
    }
    for (;;) {
        while (at < len && py_space(s[at]))
            at++;
        if (at == len)
            return n;
        size_t start = at;
        while (at < len && !py_space(s[at]))
            at++;
        if (n == want) {
            *out = (piece_t){s + start, at - start};
            return n + 1;
        }
        n++;
    }
}

/* Python's int(v) for an index, false when Python would refuse it. */
static bool py_int(const json_t *v, long long *out, bool *overflow)
{
    *overflow = false;
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d))
            return false;
        *overflow = d >= 9.2e18 || d <= -9.2e18;
        *out = *overflow ? 0 : (long long)d;
        return true;
    }
    if (!json_is_string(v))
        return false;
    const char *s = json_string_value(v);
    while (py_space(*s))
        s++;
    const char *digits = s + (*s == '+' || *s == '-');
    if (*digits < '0' || *digits > '9')
        return false;
    char *end;
    errno = 0;
    *out = strtoll(s, &end, 10);
    *overflow = errno == ERANGE;
    while (py_space(*end))
        end++;
    return *end == '\0';
}

json_t *cv__fn_str_split(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size)
{
    if (!json_is_array(args) || json_array_size(args) < 2)
        return cv__fn_fail(errstr, errstr_size, CV__SPLIT_USAGE);
    const json_t *delim = json_array_get(args, 0), *str = json_array_get(args, 1);
    if (json_is_null(str))
        return json_null();
    if (!json_is_string(str))
        return cv__fn_fail_got(errstr, errstr_size, "str_split",
                               "the value to split must be a string", str);
    if (!json_is_null(delim) && !json_is_string(delim))
        return cv__fn_fail_got(errstr, errstr_size, "str_split", "the delimiter must be a string",
                               delim);
    if (json_is_string(delim) && json_string_length(delim) == 0)
        return cv__fn_fail(errstr, errstr_size, "str_split: empty separator");
    const char *s = json_string_value(str), *d = json_string_value(delim);
    size_t len = json_string_length(str), dlen = d ? json_string_length(delim) : 0;
    piece_t piece;
    size_t n = split_scan(s, len, d, dlen, SIZE_MAX, &piece);

    if (json_array_size(args) > 2) {
        long long index;
        bool overflow;
        if (!py_int(json_array_get(args, 2), &index, &overflow))
            return cv__fn_fail(errstr, errstr_size, CV__SPLIT_INDEX);
        if (!overflow && index < 0)
            index += (long long)n;
        if (overflow || index < 0 || (unsigned long long)index >= n)
            return cv__fn_fail(errstr, errstr_size, CV__SPLIT_RANGE, (long long)n - 1);
        split_scan(s, len, d, dlen, (size_t)index, &piece);
        if (CV__NODE_BYTES + piece.len > budget->left)
            return cv__fn_too_large(budget, errstr, errstr_size, "str_split");
        budget->left -= CV__NODE_BYTES + piece.len;
        json_t *out = json_stringn(piece.s, piece.len);
        return out ? out : cv__fn_fail(errstr, errstr_size, "out of memory");
    }

    /* Every piece is at most the whole string: an upper bound on the cost
     * checked before anything is built. */
    size_t cost = len + (n + 1) * CV__NODE_BYTES;
    if (n > budget->left / CV__NODE_BYTES || cost > budget->left)
        return cv__fn_too_large(budget, errstr, errstr_size, "str_split");
    json_t *out = json_array();
    for (size_t i = 0; out && i < n; i++) {
        split_scan(s, len, d, dlen, i, &piece);
        if (json_array_append_new(out, json_stringn(piece.s, piece.len))) {
            json_decref(out);
            out = NULL;
        }
    }
    if (!out)
        return cv__fn_fail(errstr, errstr_size, "out of memory");
    budget->left -= cost;
    return out;
}

/* ---------------------------------------------------------------- list_concat */

/* A value as Heat's jsonutils.dumps writes it: keys in their order, ", "
 * and ": " between items (jansson's default), ASCII only. */
static char *json_dump(const json_t *v)
{
    return json_dumps(v, JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
}

static bool contains(const json_t *list, const json_t *item)
{
    for (size_t i = 0; i < json_array_size(list); i++)
        if (cv__py_equal(json_array_get(list, i), item))
            return true;
    return false;
}

json_t *cv__fn_list_concat(const char *fn, const json_t *args, bool unique, cv__budget_t *budget,
                           char *errstr, size_t errstr_size)
{
    if (!json_is_array(args))
        return cv__fn_fail(errstr, errstr_size, CV__CONCAT_USAGE, fn, fn);
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(args); i++) {
        const json_t *list = json_array_get(args, i);
        if (!json_is_null(list) && !json_is_array(list)) {
            char *all = json_dump(args), *item = json_dump(list);
            cv__fn_fail(errstr, errstr_size, CV__CONCAT_ITEM, all ? all : "?", item ? item : "?");
            free(all);
            free(item);
            return NULL;
        }
        n += json_array_size(list);
    }
    /* Items are shared, not copied; each still costs a node. */
    if (n + 1 > budget->left / CV__NODE_BYTES)
        return cv__fn_too_large(budget, errstr, errstr_size, fn);
    json_t *out = json_array();
    for (size_t i = 0; out && i < json_array_size(args); i++) {
        const json_t *list = json_array_get(args, i);
        for (size_t j = 0; out && j < json_array_size(list); j++) {
            json_t *item = json_array_get(list, j);
            if (unique && contains(out, item))
                continue;
            if (json_array_append(out, item)) {
                json_decref(out);
                out = NULL;
            }
        }
    }
    if (!out)
        return cv__fn_fail(errstr, errstr_size, "out of memory");
    budget->left -= (json_array_size(out) + 1) * CV__NODE_BYTES;
    return out;
}

/* ---------------------------------------------------------------- filter */

/* Heat's Filter.result: an empty sequence or no values give the sequence
 * back as it is; otherwise the items of the sequence not among the values. */
json_t *cv__fn_filter(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size)
{
    if (!json_is_array(args))
        return cv__fn_fail(errstr, errstr_size, "Argument to \"filter\" must be a list");
    if (json_array_size(args) != 2)
        return cv__fn_fail(errstr, errstr_size,
                           "\"filter\" expected 2 arguments of the form [values, sequence] but "
                           "got %zu arguments instead",
                           json_array_size(args));
    const json_t *values = json_array_get(args, 0), *seq = json_array_get(args, 1);
    if (!cv__py_truthy(seq))
        return json_incref((json_t *)seq);
    if (!json_is_array(seq))
        return cv__fn_fail(errstr, errstr_size, "\"filter\" only works with lists");
    if (!cv__py_truthy(values))
        return json_incref((json_t *)seq);
    if (!json_is_array(values))
        return cv__fn_fail(errstr, errstr_size, "\"filter\" filters a list of values");
    json_t *out = json_array();
    for (size_t i = 0; out && i < json_array_size(seq); i++) {
        const json_t *item = json_array_get(seq, i);
        if (cv__py_in(item, values))
            continue;
        size_t size = cv__resolved_size(item, budget->left);
        if (size > budget->left) {
            json_decref(out);
            return cv__fn_too_large(budget, errstr, errstr_size, "filter");
        }
        budget->left -= size;
        json_array_append(out, (json_t *)item);
    }
    return out ? out : cv__fn_fail(errstr, errstr_size, "out of memory");
}

/* ---------------------------------------------------------------- contains */

json_t *cv__fn_contains(const json_t *args, char *errstr, size_t errstr_size)
{
    if (!json_is_array(args) || json_array_size(args) == 0)
        return cv__fn_fail(errstr, errstr_size,
                           "Incorrect arguments to \"contains\" should be: \"contains\" : [ "
                           "\"value1\", [ \"value1\", \"value2\"]]");
    if (json_array_size(args) != 2)
        return cv__fn_fail(errstr, errstr_size,
                           "Arguments to \"contains\" must be of the form: [value1, [value1, "
                           "value2]]");
    const json_t *seq = json_array_get(args, 1);
    if (!json_is_array(seq) && !json_is_string(seq))
        return cv__fn_fail(errstr, errstr_size,
                           "Second argument to \"contains\" should be a sequence.");
    return json_boolean(cv__py_in(json_array_get(args, 0), seq));
}
