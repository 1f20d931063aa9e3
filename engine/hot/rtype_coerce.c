/*
 * rtype_coerce — converting property values to their schema type.
 *
 * Templates are YAML and parameters arrive as strings, so Heat accepts a
 * value that spells the right type: "5" for a number, "True" for a boolean,
 * 42 for a string. These conversions are shared by the property schema and
 * by OS::Heat::Value's `type`.
 */
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *cv__rtype_type_name(cv_prop_type_t type)
{
    switch (type) {
    case CV_PROP_STRING:
        return "string";
    case CV_PROP_NUMBER:
        return "number";
    case CV_PROP_INTEGER:
        return "integer";
    case CV_PROP_BOOLEAN:
        return "boolean";
    case CV_PROP_LIST:
        return "list";
    case CV_PROP_MAP:
        return "map";
    case CV_PROP_ANY:
        break;
    }
    return "any";
}

void cv__rtype_describe(const json_t *v, char *out, size_t size)
{
    char *text = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    snprintf(out, size, "%s", text ? text : "null");
    if (text && strlen(text) >= size && size > 4)
        memcpy(out + size - 4, "...", 4);
    free(text);
}

/* Only plain decimal spellings count: strtod alone would also take hex,
 * "inf", "nan" and leading blanks, which no template means as a number. */
static bool looks_decimal(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr("0123456789.eE+-", *s))
            return false;
    return true;
}

static json_t *number_from_string(const char *s)
{
    if (!looks_decimal(s))
        return NULL;
    char *end;
    errno = 0;
    long long i = strtoll(s, &end, 10);
    if (*end == '\0' && errno == 0)
        return json_integer(i);
    errno = 0;
    double d = strtod(s, &end);
    if (*end != '\0' || errno != 0 || !isfinite(d))
        return NULL;
    return json_real(d);
}

static json_t *to_number(const json_t *v)
{
    if (json_is_number(v))
        return json_deep_copy(v);
    if (json_is_string(v))
        return number_from_string(json_string_value(v));
    return NULL;
}

/* Integral reals (5.0, or "5.0") are integers; 5.5 is not. */
static json_t *to_integer(const json_t *v)
{
    json_t *n = to_number(v);
    if (!n || json_is_integer(n))
        return n;
    double d = json_real_value(n);
    json_decref(n);
    if (d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return NULL;
    return json_integer((json_int_t)d);
}

static json_t *to_boolean(const json_t *v)
{
    if (json_is_boolean(v))
        return json_deep_copy(v);
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strcasecmp(s, "true") == 0)
            return json_true();
        if (strcasecmp(s, "false") == 0)
            return json_false();
    }
    return NULL;
}

/*
 * Python's repr of a float: the shortest digits that read back as the same
 * double, in fixed notation for exponents -4..15 (always with a fraction,
 * "100.0") and in exponent notation otherwise ("1e+16", "1.5e-05").
 */
static void format_real(double d, char *out, size_t size)
{
    char digits[40];
    int precision = 1;
    for (; precision < 17; precision++) {
        snprintf(digits, sizeof(digits), "%.*e", precision - 1, d);
        if (strtod(digits, NULL) == d)
            break;
    }
    snprintf(digits, sizeof(digits), "%.*e", precision - 1, d);
    int exp = atoi(strchr(digits, 'e') + 1);
    if (exp < -4 || exp >= 16) {
        snprintf(out, size, "%s", digits);
        return;
    }
    int decimals = precision - 1 - exp;
    snprintf(out, size, "%.*f", decimals > 0 ? decimals : 0, d);
    if (!strchr(out, '.') && strlen(out) + 2 < size)
        strcat(out, ".0");
}

void cv_format_number(const json_t *num, char *out, size_t size)
{
    if (json_is_integer(num))
        snprintf(out, size, "%" JSON_INTEGER_FORMAT, json_integer_value(num));
    else
        format_real(json_real_value(num), out, size);
}

static json_t *to_string(const json_t *v)
{
    char buf[64];
    if (json_is_string(v))
        return json_deep_copy(v);
    if (json_is_number(v)) {
        cv_format_number(v, buf, sizeof(buf));
        return json_string(buf);
    }
    if (json_is_boolean(v))
        return json_string(json_is_true(v) ? "true" : "false");
    return NULL;
}

json_t *cv__rtype_coerce(cv_prop_type_t type, const json_t *v)
{
    switch (type) {
    case CV_PROP_STRING:
        return to_string(v);
    case CV_PROP_NUMBER:
        return to_number(v);
    case CV_PROP_INTEGER:
        return to_integer(v);
    case CV_PROP_BOOLEAN:
        return to_boolean(v);
    case CV_PROP_LIST:
        return json_is_array(v) ? json_deep_copy(v) : NULL;
    case CV_PROP_MAP:
        return json_is_object(v) ? json_deep_copy(v) : NULL;
    case CV_PROP_ANY:
        break;
    }
    return json_deep_copy(v);
}
