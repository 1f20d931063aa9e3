/*
 * yaml_scalar — the types of YAML scalars.
 *
 * Heat reads templates with PyYAML's SafeLoader, so plain scalars are typed
 * the YAML 1.1 way (yes/no/on/off are booleans, 017 is octal) except that
 * timestamps stay strings, as Heat's loader overrides them. We also accept
 * YAML 1.2 / JSON spellings (0o17, 1e3) so that a JSON template loads with
 * the types JSON gives it. ".inf" and ".nan" stay strings: JSON has no
 * such numbers.
 */
#include "cv__template_internal.h"
#include "cv_base.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool is_one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0)
            return true;
    return false;
}

static const char *const null_words[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const true_words[] = {"true", "True", "TRUE", "yes", "Yes",
                                         "YES",  "on",   "On",   "ON",  NULL};
static const char *const false_words[] = {"false", "False", "FALSE", "no",  "No",
                                          "NO",    "off",   "Off",   "OFF", NULL};

/* Digits in `base` with PyYAML's optional '_' separators; false when `s`
 * holds anything else or no digit. *overflow when it does not fit. */
static bool parse_digits(const char *s, int base, bool negative, json_int_t *out, bool *overflow)
{
    uint64_t acc = 0, limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    bool any = false;
    for (; *s; s++) {
        if (*s == '_' && any)
            continue;
        int d = cv_hex_digit(*s);
        if (d < 0 || d >= base)
            return false;
        any = true;
        if (acc > (limit - (uint64_t)d) / (uint64_t)base)
            *overflow = true;
        else
            acc = acc * (uint64_t)base + (uint64_t)d;
    }
    if (negative)
        *out = acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)acc;
    else
        *out = (json_int_t)acc;
    return any;
}

/* YAML 1.1 integers (0b.., 0x.., 0.. octal, decimal) plus 1.2's 0o.. */
static bool parse_int(const char *s, json_int_t *out, bool *overflow)
{
    bool negative = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return parse_digits(s + 2, 16, negative, out, overflow);
    if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        return parse_digits(s + 2, 8, negative, out, overflow);
    if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        return parse_digits(s + 2, 2, negative, out, overflow);
    if (s[0] == '0' && s[1])
        return parse_digits(s + 1, 8, negative, out, overflow);
    return *s != '_' && parse_digits(s, 10, negative, out, overflow);
}

/* Whether `s` spells a decimal float: digits with an optional fraction and
 * an optional exponent, at least one of the two present. */
static bool looks_like_float(const char *s)
{
    size_t mantissa = 0;
    bool fraction = false, exponent = false;
    if (*s == '-' || *s == '+')
        s++;
    for (; (*s >= '0' && *s <= '9') || (*s == '_' && mantissa); s++)
        mantissa++;
    if (*s == '.') {
        fraction = true;
        for (s++; (*s >= '0' && *s <= '9') || *s == '_'; s++)
            mantissa++;
    }
    if (mantissa == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        exponent = true;
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0' && (fraction || exponent);
}

static bool is_decimal(const char *s)
{
    s += *s == '-' || *s == '+';
    return *s && strspn(s, "0123456789") == strlen(s);
}

static json_t *parse_float(const char *s)
{
    char clean[128];
    size_t n = 0;
    for (; *s && n + 1 < sizeof(clean); s++)
        if (*s != '_')
            clean[n++] = *s;
    if (*s)
        return NULL;
    clean[n] = '\0';
    double d = strtod(clean, NULL);
    return isfinite(d) ? json_real(d) : NULL;
}

/* The typed value of a plain, untagged scalar; NULL only when out of memory. */
json_t *cv__yaml_plain(const char *s, size_t len)
{
    if (is_one_of(s, null_words))
        return json_null();
    if (is_one_of(s, true_words))
        return json_true();
    if (is_one_of(s, false_words))
        return json_false();
    json_int_t i;
    bool overflow = false;
    if (parse_int(s, &i, &overflow)) {
        if (!overflow)
            return json_integer(i);
        /* Past 64 bits a decimal keeps its magnitude as a real, as JSON
         * parsers do; other bases stay text. */
        const char *digits = s + (*s == '-' || *s == '+');
        json_t *r = digits[0] != '0' ? parse_float(s) : NULL;
        return r ? r : json_stringn(s, len);
    }
    if (looks_like_float(s)) {
        json_t *r = parse_float(s);
        if (r)
            return r;
    }
    return json_stringn(s, len);
}

/* A scalar with an explicit core-schema tag; NULL with *bad set when the
 * text does not fit the tag. */
json_t *cv__yaml_tagged(const char *tag, const char *s, size_t len, bool *bad)
{
    const char *t = tag;
    json_int_t i;
    bool overflow = false;
    *bad = false;
    if (strcmp(t, "str") == 0 || strcmp(t, "timestamp") == 0)
        return json_stringn(s, len);
    if (strcmp(t, "null") == 0 && is_one_of(s, null_words))
        return json_null();
    if (strcmp(t, "bool") == 0 && is_one_of(s, true_words))
        return json_true();
    if (strcmp(t, "bool") == 0 && is_one_of(s, false_words))
        return json_false();
    if (strcmp(t, "int") == 0 && parse_int(s, &i, &overflow) && !overflow)
        return json_integer(i);
    if (strcmp(t, "float") == 0 && (looks_like_float(s) || is_decimal(s))) {
        json_t *r = parse_float(s);
        if (r)
            return r;
    }
    *bad = true;
    return NULL;
}
