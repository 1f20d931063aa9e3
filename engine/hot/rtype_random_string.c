/*
 * OS::Heat::RandomString — a random string, typically a password.
 *
 * The string has `length` characters, at least `min` from every character
 * class and character sequence, the rest drawn from the union of them all,
 * then shuffled. It is generated from a PRNG seeded with the resource
 * version's uuid and the salt, never from the system's entropy: a create
 * retried after a crash must produce the same string (idempotency), and a
 * new salt (a replacement) a new one. Characters are whole UTF-8 sequences,
 * so a character_sequences entry may hold any Unicode text.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RS_MAX_LENGTH 512

/* Every property forces a replacement, as in Heat: the salt exists only so
 * that a user can ask for a new string by changing it. */
static const cv_prop_schema_t random_string_props[] = {
    {"length", CV_PROP_INTEGER, false, "32", false},
    {"sequence", CV_PROP_STRING, false, NULL, false},
    {"character_classes", CV_PROP_LIST, false, NULL, false},
    {"character_sequences", CV_PROP_LIST, false, NULL, false},
    {"salt", CV_PROP_STRING, false, NULL, false},
};

static const char *const random_string_attrs[] = {"value", NULL};

/* The string is a password: readers mask it, and get_resource gives it. */
static const char *const random_string_secret_attrs[] = {"value", NULL};

static const struct char_class {
    const char *name;
    const char *chars;
} char_classes[] = {
    {"lettersdigits", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"},
    {"letters", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"},
    {"lowercase", "abcdefghijklmnopqrstuvwxyz"},
    {"uppercase", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
    {"digits", "0123456789"},
    {"hexdigits", "0123456789ABCDEF"},
    {"octdigits", "01234567"},
};

#define CLASS_NAMES "lettersdigits, letters, lowercase, uppercase, digits, hexdigits, octdigits"

/* ------------------------------------------------------------ the spec */

typedef struct rs_pool {
    const char *chars; /* UTF-8; into the props, char_classes or rs_spec.keep */
    long long min;
} rs_pool_t;

typedef struct rs_spec {
    long long length;
    rs_pool_t *pools;
    size_t npools;
    bool literal; /* false: some value is still an intrinsic function */
    json_t *keep; /* strings made by conversion, which pools point into */
    const char *where;
    char *errstr;
    size_t errstr_size;
} rs_spec_t;

static const char *class_chars(const char *name)
{
    for (size_t i = 0; i < sizeof(char_classes) / sizeof(char_classes[0]); i++)
        if (strcmp(char_classes[i].name, name) == 0)
            return char_classes[i].chars;
    return NULL;
}

static int type_error(rs_spec_t *sp, const char *path, const char *type, const json_t *v)
{
    char got[128];
    cv__rtype_describe(v, got, sizeof(got));
    return cv_seterr(sp->errstr, sp->errstr_size, CV_EVALIDATE, "%s.%s: expected %s, got %s",
                     sp->where, path, type, got);
}

/* An integer in 1..512, as Heat's Range(1, 512) constraints; absent is `dflt`. */
static int parse_count(rs_spec_t *sp, const json_t *v, const char *path, long long dflt,
                       long long *out)
{
    *out = dflt;
    if (!v || json_is_null(v))
        return 0;
    if (cv_is_intrinsic(v)) {
        sp->literal = false;
        *out = -1;
        return 0;
    }
    json_t *n = cv__rtype_coerce(CV_PROP_INTEGER, v);
    if (!n)
        return type_error(sp, path, "integer", v);
    *out = json_integer_value(n);
    json_decref(n);
    if (*out < 1 || *out > RS_MAX_LENGTH)
        return cv_seterr(sp->errstr, sp->errstr_size, CV_EVALIDATE,
                         "%s.%s: must be between 1 and %d, got %lld", sp->where, path,
                         RS_MAX_LENGTH, *out);
    return 0;
}

/* The characters of a class name or a sequence text; NULL when unresolved. */
static int parse_chars(rs_spec_t *sp, const json_t *v, const char *path, bool is_class,
                       const char **out)
{
    *out = NULL;
    if (cv_is_intrinsic(v)) {
        sp->literal = false;
        return 0;
    }
    json_t *s = cv__rtype_coerce(CV_PROP_STRING, v);
    if (!s)
        return type_error(sp, path, "string", v);
    json_array_append_new(sp->keep, s);
    const char *text = json_string_value(s);
    if (is_class && !(*out = class_chars(text)))
        return cv_seterr(sp->errstr, sp->errstr_size, CV_EVALIDATE,
                         "%s.%s: \"%s\" is not one of " CLASS_NAMES, sp->where, path, text);
    if (!is_class && !*(*out = text))
        return cv_seterr(sp->errstr, sp->errstr_size, CV_EVALIDATE, "%s.%s: must not be empty",
                         sp->where, path);
    return 0;
}

static int check_item_keys(rs_spec_t *sp, const json_t *item, const char *path,
                           const char *chars_key)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)item, key, v)
    {
        if (strcmp(key, chars_key) != 0 && strcmp(key, "min") != 0)
            return cv_seterr(sp->errstr, sp->errstr_size, CV_EVALIDATE,
                             "%s.%s.%s: unknown property", sp->where, path, key);
    }
    return 0;
}

/* One entry of character_classes ({class, min}) or character_sequences
 * ({sequence, min}); adds a pool when every part of it is literal. */
static int parse_item(rs_spec_t *sp, const json_t *item, const char *list, size_t i, bool is_class)
{
    const char *chars_key = is_class ? "class" : "sequence";
    char path[96], sub[128];
    snprintf(path, sizeof(path), "%s[%zu]", list, i);
    if (cv_is_intrinsic(item)) {
        sp->literal = false;
        return 0;
    }
    if (!json_is_object(item))
        return type_error(sp, path, "map", item);
    int rc = check_item_keys(sp, item, path, chars_key);
    if (rc)
        return rc;
    const json_t *v = json_object_get(item, chars_key);
    snprintf(sub, sizeof(sub), "%s.%s", path, chars_key);
    const char *chars = is_class ? class_chars("lettersdigits") : NULL;
    if (v && !json_is_null(v))
        rc = parse_chars(sp, v, sub, is_class, &chars);
    else if (!is_class)
        return cv_seterr(sp->errstr, sp->errstr_size, CV_EVALIDATE,
                         "%s.%s: required property is missing", sp->where, sub);
    long long min = 1;
    snprintf(sub, sizeof(sub), "%s.min", path);
    if (rc == 0)
        rc = parse_count(sp, json_object_get(item, "min"), sub, 1, &min);
    if (rc == 0 && chars && min > 0)
        sp->pools[sp->npools++] = (rs_pool_t){chars, min};
    return rc;
}

static int parse_list(rs_spec_t *sp, const json_t *props, const char *list, bool is_class)
{
    const json_t *v = json_object_get(props, list);
    if (!v || json_is_null(v))
        return 0;
    if (cv_is_intrinsic(v)) {
        sp->literal = false;
        return 0;
    }
    if (!json_is_array(v))
        return type_error(sp, list, "list", v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        int rc = parse_item(sp, json_array_get(v, i), list, i, is_class);
        if (rc)
            return rc;
    }
    return 0;
}

static size_t list_size(const json_t *props, const char *list)
{
    return json_array_size(json_object_get(props, list));
}

/* The deprecated `sequence` is one class of min 1, and may not be combined
 * with the lists (Heat's rule); with nothing given, lettersdigits. */
static int parse_sequence(rs_spec_t *sp, const json_t *props)
{
    const json_t *v = json_object_get(props, "sequence");
    bool lists = list_size(props, "character_classes") || list_size(props, "character_sequences");
    if (v && !json_is_null(v)) {
        if (lists)
            return cv_seterr(sp->errstr, sp->errstr_size, CV_EVALIDATE,
                             "%s.sequence: cannot be used with character_classes or "
                             "character_sequences",
                             sp->where);
        const char *chars = NULL;
        int rc = parse_chars(sp, v, "sequence", true, &chars);
        if (rc == 0 && chars)
            sp->pools[sp->npools++] = (rs_pool_t){chars, 1};
        return rc;
    }
    if (!lists && sp->literal && sp->npools == 0)
        sp->pools[sp->npools++] = (rs_pool_t){class_chars("lettersdigits"), 1};
    return 0;
}

static int check_minimums(rs_spec_t *sp)
{
    long long sum = 0;
    for (size_t i = 0; i < sp->npools; i++)
        sum += sp->pools[i].min;
    if (sp->literal && sp->length > 0 && sum > sp->length)
        return cv_seterr(sp->errstr, sp->errstr_size, CV_EVALIDATE,
                         "%s.length: length %lld is shorter than the sum of minimums %lld",
                         sp->where, sp->length, sum);
    return 0;
}

static void rs_spec_free(rs_spec_t *sp)
{
    free(sp->pools);
    json_decref(sp->keep);
}

/* Reads the properties into *sp; values still holding intrinsic functions
 * clear sp->literal and are left out of the cross-property checks. */
static int rs_parse(rs_spec_t *sp, const json_t *props)
{
    size_t max_pools =
        list_size(props, "character_classes") + list_size(props, "character_sequences") + 1;
    sp->pools = calloc(max_pools, sizeof(*sp->pools));
    sp->keep = json_array();
    sp->literal = true;
    if (!sp->pools || !sp->keep)
        return cv_seterr(sp->errstr, sp->errstr_size, CV_ENOMEM, "%s: out of memory", sp->where);
    int rc = parse_count(sp, json_object_get(props, "length"), "length", 32, &sp->length);
    if (rc == 0)
        rc = parse_list(sp, props, "character_sequences", false);
    if (rc == 0)
        rc = parse_list(sp, props, "character_classes", true);
    if (rc == 0)
        rc = parse_sequence(sp, props);
    if (rc == 0)
        rc = check_minimums(sp);
    return rc;
}

/* ------------------------------------------------------------ generation */

/* One character: a whole UTF-8 sequence, zero-padded so that memcmp orders
 * and compares characters (UTF-8 is prefix-free). */
typedef struct unit {
    char b[4];
} unit_t;

static size_t utf8_len(unsigned char lead)
{
    return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

/* Splits valid UTF-8 (jansson guarantees it) into units; returns the count. */
static size_t split_units(const char *s, unit_t *out)
{
    size_t n = 0;
    while (*s) {
        size_t len = utf8_len((unsigned char)*s);
        if (out) {
            memset(out[n].b, 0, sizeof(out[n].b));
            memcpy(out[n].b, s, len);
        }
        s += len;
        n++;
    }
    return n;
}

static int unit_cmp(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(unit_t));
}

typedef struct rng {
    uint64_t state;
} rng_t;

/* splitmix64: tiny, fast, and statistically fine for picking characters. */
static uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n): rejection sampling removes the modulo bias. */
static size_t rng_below(rng_t *r, size_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= limit);
    return (size_t)(x % n);
}

/* The 0xff byte separates uuid from salt. */
static rng_t seed_rng(const char *uuid, const char *salt)
{
    return (rng_t){cv_hash_more(cv_hash_more(cv_hash_str(uuid), "\xff"), salt)};
}

/* All pools' characters, sorted and without duplicates. */
static unit_t *pool_union(const rs_spec_t *sp, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < sp->npools; i++)
        total += split_units(sp->pools[i].chars, NULL);
    unit_t *all = malloc(total * sizeof(*all));
    if (!all)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < sp->npools; i++)
        k += split_units(sp->pools[i].chars, all + k);
    qsort(all, total, sizeof(*all), unit_cmp);
    *n = 0;
    for (size_t i = 0; i < total; i++)
        if (*n == 0 || unit_cmp(&all[*n - 1], &all[i]) != 0)
            all[(*n)++] = all[i];
    return all;
}

static bool draw_minimums(const rs_spec_t *sp, rng_t *r, unit_t *out, size_t *k)
{
    for (size_t i = 0; i < sp->npools; i++) {
        size_t n = split_units(sp->pools[i].chars, NULL);
        unit_t *chars = malloc(n * sizeof(*chars));
        if (!chars)
            return false;
        split_units(sp->pools[i].chars, chars);
        for (long long m = 0; m < sp->pools[i].min; m++)
            out[(*k)++] = chars[rng_below(r, n)];
        free(chars);
    }
    return true;
}

static char *join_units(const unit_t *units, size_t n)
{
    char *s = malloc(n * 4 + 1), *p = s;
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t len = utf8_len((unsigned char)units[i].b[0]);
        memcpy(p, units[i].b, len);
        p += len;
    }
    *p = '\0';
    return s;
}

static char *generate(const rs_spec_t *sp, const char *uuid, const char *salt)
{
    rng_t r = seed_rng(uuid, salt);
    size_t len = (size_t)sp->length, k = 0, nunion = 0;
    unit_t *out = malloc(len * sizeof(*out));
    unit_t *all = pool_union(sp, &nunion);
    char *s = NULL;
    if (out && all && nunion > 0 && draw_minimums(sp, &r, out, &k)) {
        while (k < len)
            out[k++] = all[rng_below(&r, nunion)];
        for (size_t i = len; i > 1; i--) { /* Fisher-Yates */
            size_t j = rng_below(&r, i);
            unit_t t = out[i - 1];
            out[i - 1] = out[j];
            out[j] = t;
        }
        s = join_units(out, len);
    }
    free(out);
    free(all);
    return s;
}

/* ------------------------------------------------------------ the type */

static int random_string_validate(const json_t *props, const char *where, char *errstr,
                                  size_t errstr_size)
{
    rs_spec_t sp = {.where = where, .errstr = errstr, .errstr_size = errstr_size};
    int rc = rs_parse(&sp, props);
    rs_spec_free(&sp);
    return rc;
}

static int random_string_generate(cv_rstate_t *st)
{
    char where[CV_PHYSID_MAX + 32];
    snprintf(where, sizeof(where), "resources.%s.properties", st->resource_name);
    rs_spec_t sp = {.where = where, .errstr = st->reason, .errstr_size = sizeof(st->reason)};
    int rc = rs_parse(&sp, st->props);
    if (rc == 0 && !sp.literal)
        rc = cv_seterr(st->reason, sizeof(st->reason), CV_EFAILED,
                       "%s: a property is still an unresolved function", where);
    char *value =
        rc == 0 ? generate(&sp, st->uuid, json_string_value(json_object_get(st->props, "salt")))
                : NULL;
    if (rc == 0 && !value)
        rc = cv_seterr(st->reason, sizeof(st->reason), CV_ENOMEM, "%s: out of memory", where);
    if (rc == 0 && json_object_set_new(st->attrs, "value", json_string(value)) != 0)
        rc = CV_ENOMEM;
    free(value);
    rs_spec_free(&sp);
    return rc == CV_EVALIDATE ? CV_EFAILED : rc;
}

static int random_string_create(cv_rstate_t *st)
{
    cv__rtype_set_physical_id(st);
    return random_string_generate(st);
}

/* Every property forces a replacement, so an update only re-derives the
 * same string (same uuid, same salt). */
static int random_string_update(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        cv__rtype_set_physical_id(st);
    return random_string_generate(st);
}

static int random_string_remove(cv_rstate_t *st)
{
    (void)st;
    return 0;
}

static cv_observed_t random_string_observe(cv_rstate_t *st, cv_action_t action)
{
    (void)st;
    (void)action;
    return CV_OBSERVED_COMPLETE;
}

/* Heat's RandomString.get_reference_id: the string itself, so that
 * get_resource of it (and a group's refs of it) give the password. */
static const char *random_string_reference_id(const char *resource_name, const char *physical_id,
                                              const json_t *attrs)
{
    (void)resource_name;
    (void)physical_id;
    return json_string_value(json_object_get(attrs, "value"));
}

const cv_rtype_t cv__rtype_random_string = {
    .name = "OS::Heat::RandomString",
    .props = random_string_props,
    .nprops = sizeof(random_string_props) / sizeof(random_string_props[0]),
    .attrs = random_string_attrs,
    .validate = random_string_validate,
    .create = random_string_create,
    .update = random_string_update,
    .remove = random_string_remove,
    .observe = random_string_observe,
    .reference_id = random_string_reference_id,
    .sensitive_attrs = random_string_secret_attrs,
    .sensitive_reference = true,
};
