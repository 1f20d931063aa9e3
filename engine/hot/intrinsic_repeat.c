/*
 * intrinsic_repeat — Heat's repeat function (heat/engine/hot/functions.py:
 * Repeat, RepeatWithMap, RepeatWithNestedLoop):
 *
 *   repeat:
 *     template: <body>
 *     for_each: {<var>: <list or map>, ...}
 *     permutations: <bool>        # default true
 *
 * gives one copy of <body> per combination of the lists' items (every
 * combination, the first variable varying slowest, or with permutations
 * false the items taken side by side), each <var> replaced in every string
 * of the copy, keys included, by its item (a map contributes its keys).
 *
 * repeat is the function most able to amplify: a few lines can ask for the
 * product of many lists, each a copy of a large body. The number of copies
 * is checked before any is made and every string and node made is counted
 * against the budget, so a result past it fails early rather than after
 * building as much as the budget allows.
 */
#include "cv__fn_messages.h"
#include "cv__template_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Why building a copy failed. */
typedef enum { BUILD_OK = 0, BUILD_TOO_LARGE, BUILD_NO_MEMORY, BUILD_NOT_A_STRING } build_t;

typedef struct repeat {
    const char **vars; /* the for_each keys, in order */
    json_t **items;    /* per variable: a list of its items */
    size_t n;          /* variables */
    size_t *at;        /* per variable: the item of this combination */
    cv__budget_t *budget;
    const json_t *bad; /* with BUILD_NOT_A_STRING: the item that is not a string */
} repeat_t;

/* Python's s.replace(key, value) within `max` bytes: with an empty key,
 * the value goes before every character (code point) and at the end. */
static build_t py_replace(const char *s, size_t len, const char *key, size_t klen, const char *val,
                          size_t vlen, size_t max, char **out, size_t *out_len)
{
    size_t hits = 0;
    if (klen == 0) {
        for (size_t i = 0; i < len; i++)
            hits += ((unsigned char)s[i] & 0xc0) != 0x80;
        hits++;
    } else {
        for (const char *p = s; (p = memmem(p, len - (size_t)(p - s), key, klen)); p += klen)
            hits++;
    }
    size_t grown = len - hits * klen;
    if (grown > max || (vlen && hits > (max - grown) / vlen))
        return BUILD_TOO_LARGE;
    size_t n = grown + hits * vlen, o = 0;
    char *buf = malloc(n + 1);
    if (!buf)
        return BUILD_NO_MEMORY;
    for (size_t i = 0; i < len || (klen == 0 && i == len);) {
        bool hit = klen ? i + klen <= len && memcmp(s + i, key, klen) == 0
                        : i == len || ((unsigned char)s[i] & 0xc0) != 0x80;
        if (hit) {
            memcpy(buf + o, val, vlen);
            o += vlen;
            if (klen) {
                i += klen;
                continue;
            }
            if (i == len)
                break;
        }
        buf[o++] = s[i++];
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    return BUILD_OK;
}

/* The string `s` with every variable replaced, one after the other as
 * Heat does (a later variable also replaces inside an earlier's item). */
static build_t replace_vars(repeat_t *rp, const char *s, size_t len, char **out, size_t *out_len)
{
    char *cur = strndup(s, len);
    if (!cur)
        return BUILD_NO_MEMORY;
    for (size_t v = 0; v < rp->n; v++) {
        const json_t *item = json_array_get(rp->items[v], rp->at[v]);
        if (!json_is_string(item)) {
            free(cur);
            rp->bad = item;
            return BUILD_NOT_A_STRING;
        }
        char *next;
        size_t next_len;
        build_t rc = py_replace(cur, len, rp->vars[v], strlen(rp->vars[v]), json_string_value(item),
                                json_string_length(item), rp->budget->left, &next, &next_len);
        free(cur);
        if (rc)
            return rc;
        cur = next;
        len = next_len;
    }
    if (CV__NODE_BYTES + len > rp->budget->left) {
        free(cur);
        return BUILD_TOO_LARGE;
    }
    rp->budget->left -= CV__NODE_BYTES + len;
    *out = cur;
    *out_len = len;
    return BUILD_OK;
}

/* One copy of `body` for the current combination. */
static build_t build(repeat_t *rp, const json_t *body, json_t **out)
{
    *out = NULL;
    if (json_is_string(body)) {
        char *s;
        size_t len;
        build_t rc = replace_vars(rp, json_string_value(body), json_string_length(body), &s, &len);
        if (rc)
            return rc;
        *out = json_stringn(s, len);
        free(s);
        return *out ? BUILD_OK : BUILD_NO_MEMORY;
    }
    if (CV__NODE_BYTES > rp->budget->left)
        return BUILD_TOO_LARGE;
    rp->budget->left -= CV__NODE_BYTES;
    if (!json_is_array(body) && !json_is_object(body)) {
        *out = json_incref((json_t *)body);
        return BUILD_OK;
    }
    json_t *copy = json_is_array(body) ? json_array() : json_object();
    build_t rc = copy ? BUILD_OK : BUILD_NO_MEMORY;
    for (size_t i = 0; rc == BUILD_OK && json_is_array(body) && i < json_array_size(body); i++) {
        json_t *item;
        rc = build(rp, json_array_get(body, i), &item);
        if (rc == BUILD_OK && json_array_append_new(copy, item))
            rc = BUILD_NO_MEMORY;
    }
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)body, key, value)
    {
        char *new_key = NULL;
        size_t key_len;
        json_t *item = NULL;
        if (rc == BUILD_OK)
            rc = replace_vars(rp, key, strlen(key), &new_key, &key_len);
        if (rc == BUILD_OK)
            rc = build(rp, value, &item);
        /* A key containing NUL after replacement cannot be a map key. */
        if (rc == BUILD_OK && json_object_setn_new(copy, new_key, key_len, item))
            rc = BUILD_NO_MEMORY;
        else if (rc != BUILD_OK)
            json_decref(item);
        free(new_key);
        if (rc)
            break;
    }
    if (rc)
        json_decref(copy);
    else
        *out = copy;
    return rc;
}

/* Advances rp->at to the next combination: the last variable fastest, as
 * itertools.product does. False when there is none. */
static bool next_combination(repeat_t *rp)
{
    for (size_t v = rp->n; v-- > 0;) {
        if (++rp->at[v] < json_array_size(rp->items[v]))
            return true;
        rp->at[v] = 0;
    }
    return false;
}

/* The items of one for_each value: a list as is, a map's keys, null none. */
static json_t *items_of(const json_t *v)
{
    if (json_is_array(v))
        return json_incref((json_t *)v);
    json_t *items = json_array();
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)v, key, value)
    {
        if (items && json_array_append_new(items, json_string(key))) {
            json_decref(items);
            items = NULL;
        }
    }
    return items;
}

static json_t *run(repeat_t *rp, const json_t *body, size_t count, bool permutations, char *errstr,
                   size_t errstr_size)
{
    json_t *out = json_array();
    if (!out)
        return cv__fn_fail(errstr, errstr_size, "out of memory");
    for (size_t i = 0; i < count; i++) {
        if (!permutations)
            for (size_t v = 0; v < rp->n; v++)
                rp->at[v] = i;
        json_t *copy;
        build_t rc = build(rp, body, &copy);
        if (rc == BUILD_OK && json_array_append_new(out, copy))
            rc = BUILD_NO_MEMORY;
        if (rc) {
            json_decref(out);
            if (rc == BUILD_TOO_LARGE)
                return cv__fn_too_large(rp->budget, errstr, errstr_size, "repeat");
            if (rc == BUILD_NOT_A_STRING)
                return cv__fn_fail_got(errstr, errstr_size, "repeat",
                                       "the items of for_each must be strings to replace in the "
                                       "template",
                                       rp->bad);
            return cv__fn_fail(errstr, errstr_size, "out of memory");
        }
        if (permutations && !next_combination(rp))
            break;
    }
    return out;
}

json_t *cv__fn_repeat(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size)
{
    if (!json_is_object(args))
        return cv__fn_fail(errstr, errstr_size, CV__REPEAT_NOT_MAP);
    const json_t *for_each = json_object_get(args, "for_each");
    const json_t *body = json_object_get(args, "template");
    const json_t *perm = json_object_get(args, "permutations");
    if (!for_each || !body)
        return cv__fn_fail(errstr, errstr_size, "%s", CV__REPEAT_SYNTAX);
    if (perm && !json_is_boolean(perm))
        return cv__fn_fail(errstr, errstr_size, CV__REPEAT_PERMUTATIONS);
    bool permutations = !perm || json_is_true(perm);
    if (!json_is_object(for_each))
        return cv__fn_fail(errstr, errstr_size, CV__REPEAT_FOR_EACH);
    size_t n = json_object_size(for_each);
    if (n == 0)
        return cv__fn_fail(errstr, errstr_size, "repeat: the \"for_each\" map is empty");

    const char *key;
    const json_t *value;
    size_t count = 1, common = 0, sized = 0;
    bool unequal = false;
    json_object_foreach((json_t *)for_each, key, value)
    {
        bool ok =
            json_is_null(value) || json_is_array(value) || (permutations && json_is_object(value));
        if (!ok)
            return cv__fn_fail(errstr, errstr_size,
                               permutations ? CV__REPEAT_LISTS_OR_MAPS : CV__REPEAT_LISTS);
        size_t len = json_array_size(value) + json_object_size(value);
        if (!json_is_null(value)) {
            unequal = unequal || (sized && len != common);
            common = len;
            sized++;
        }
        if (permutations)
            count = len == 0 || json_is_null(value) ? 0
                    : count > SIZE_MAX / len        ? SIZE_MAX
                                                    : count * len;
    }
    if (!permutations && unequal)
        return cv__fn_fail(errstr, errstr_size, CV__REPEAT_LENGTHS);
    if (!permutations)
        count = sized < n ? 0 : common; /* a null contributes no items */
    if (count > budget->left / CV__NODE_BYTES)
        return cv__fn_too_large(budget, errstr, errstr_size, "repeat");

    repeat_t rp = {.n = n, .budget = budget};
    rp.vars = calloc(n, sizeof(*rp.vars));
    rp.items = calloc(n, sizeof(*rp.items));
    rp.at = calloc(n, sizeof(*rp.at));
    bool ok = rp.vars && rp.items && rp.at;
    size_t v = 0;
    json_object_foreach((json_t *)for_each, key, value)
    {
        if (!ok)
            break;
        rp.vars[v] = key;
        rp.items[v] = items_of(value);
        ok = rp.items[v++] != NULL;
    }
    json_t *out = ok ? run(&rp, body, count, permutations, errstr, errstr_size)
                     : cv__fn_fail(errstr, errstr_size, "out of memory");
    for (size_t i = 0; rp.items && i < n; i++)
        json_decref(rp.items[i]);
    free(rp.vars);
    free(rp.items);
    free(rp.at);
    return out;
}
