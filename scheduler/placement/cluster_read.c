/*
 * Typed readers of manifest values for the placement loaders: every value
 * is checked where it is read, and a wrong one fails with the file, its
 * JSON path and what was expected.
 */
#include "cluster_internal.h"

#include "cv_base.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------ */
/* Messages and paths                                                       */
/* ------------------------------------------------------------------------ */

int cv__cluster_err(const cv__cluster_ld_t *ld, int code, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (path && path[0])
        return cv_seterr(ld->errstr, ld->errstr_size, code, "%s: %s: %s", ld->fname, path, msg);
    return cv_seterr(ld->errstr, ld->errstr_size, code, "%s: %s", ld->fname, msg);
}

const char *cv__cluster_path_key(char *buf, size_t size, const char *base, const char *key)
{
    if (base && base[0])
        snprintf(buf, size, "%s.%s", base, key);
    else
        snprintf(buf, size, "%s", key);
    return buf;
}

const char *cv__cluster_path_idx(char *buf, size_t size, const char *base, size_t i)
{
    snprintf(buf, size, "%s[%zu]", base, i);
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Members                                                                  */
/* ------------------------------------------------------------------------ */

const json_t *cv__cluster_member(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
}

static bool key_allowed(const char *key, const char *const *allowed)
{
    for (; *allowed; allowed++)
        if (strcmp(key, *allowed) == 0)
            return true;
    return false;
}

int cv__cluster_check_keys(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                           const char *const *allowed)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        if (key_allowed(key, allowed))
            continue;
        char path[CV__CLUSTER_PATH_MAX], expected[256] = "";
        size_t n = 0;
        for (const char *const *a = allowed; *a && n < sizeof(expected); a++)
            n += (size_t)snprintf(expected + n, sizeof(expected) - n, "%s%s",
                                  a == allowed ? "" : ", ", *a);
        return cv__cluster_err(ld, CV_EVALIDATE,
                               cv__cluster_path_key(path, sizeof(path), base, key),
                               "unknown member (expected one of %s)", expected);
    }
    return 0;
}

int cv__cluster_get_string(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                           const char *key, bool required, const char **out)
{
    char path[CV__CLUSTER_PATH_MAX];
    const json_t *v = cv__cluster_member(obj, key);
    *out = NULL;
    if (!v && !required)
        return 0;
    cv__cluster_path_key(path, sizeof(path), base, key);
    if (!v)
        return cv__cluster_err(ld, CV_EVALIDATE, path, "required");
    if (!json_is_string(v) || json_string_length(v) == 0)
        return cv__cluster_err(ld, CV_EVALIDATE, path, "expected a non-empty string");
    if (strlen(json_string_value(v)) != json_string_length(v))
        return cv__cluster_err(ld, CV_EVALIDATE, path, "contains a NUL character");
    *out = json_string_value(v);
    return 0;
}

int cv__cluster_get_bool(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                         const char *key, bool *out)
{
    char path[CV__CLUSTER_PATH_MAX];
    const json_t *v = cv__cluster_member(obj, key);
    if (!v)
        return 0;
    if (!json_is_boolean(v))
        return cv__cluster_err(ld, CV_EVALIDATE,
                               cv__cluster_path_key(path, sizeof(path), base, key),
                               "expected true or false");
    *out = json_is_true(v);
    return 0;
}

static int get_typed(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                     const char *key, json_type type, const json_t **out)
{
    char path[CV__CLUSTER_PATH_MAX];
    const json_t *v = cv__cluster_member(obj, key);
    *out = NULL;
    if (!v)
        return 0;
    if (json_typeof(v) != type)
        return cv__cluster_err(ld, CV_EVALIDATE,
                               cv__cluster_path_key(path, sizeof(path), base, key), "expected %s",
                               type == JSON_OBJECT ? "an object" : "an array");
    *out = v;
    return 0;
}

int cv__cluster_get_object(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                           const char *key, const json_t **out)
{
    return get_typed(ld, obj, base, key, JSON_OBJECT, out);
}

int cv__cluster_get_array(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                          const char *key, const json_t **out)
{
    return get_typed(ld, obj, base, key, JSON_ARRAY, out);
}

/* ------------------------------------------------------------------------ */
/* Numbers                                                                  */
/* ------------------------------------------------------------------------ */

/* A whole decimal integer ("-12", "5"), nothing around it. */
static bool parse_int64(const char *s, int64_t *out)
{
    if (!isdigit((unsigned char)s[s[0] == '-']))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

/* The integer `v` holds (a JSON integer or a string of one). */
static bool int_of(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    return json_is_string(v) && parse_int64(json_string_value(v), out);
}

int cv__cluster_qty_value(const cv__cluster_ld_t *ld, const json_t *v, const char *path,
                          int64_t *out)
{
    if (!int_of(v, out) || *out < 0)
        return cv__cluster_err(ld, CV_EVALIDATE, path, "expected a non-negative integer");
    if (*out > CV__CLUSTER_QTY_MAX)
        return cv__cluster_err(ld, CV_ETOOBIG, path, "too large (at most 10^15)");
    return 0;
}

int cv__cluster_int_value(const cv__cluster_ld_t *ld, const json_t *v, const char *path,
                          int64_t min, int64_t max, int64_t *out)
{
    if (!int_of(v, out) || *out < min || *out > max)
        return cv__cluster_err(ld, CV_EVALIDATE, path, "expected an integer from %lld to %lld",
                               (long long)min, (long long)max);
    return 0;
}

int cv__cluster_num_value(const cv__cluster_ld_t *ld, const json_t *v, const char *path,
                          double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 0;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        *out = strtod(s, &end);
        if (!errno && end != s && !*end && !isspace((unsigned char)s[0]) && isfinite(*out))
            return 0;
    }
    return cv__cluster_err(ld, CV_EVALIDATE, path, "expected a number");
}

/* ------------------------------------------------------------------------ */
/* Properties and fault domains                                             */
/* ------------------------------------------------------------------------ */

int cv__cluster_prop_value(const cv__cluster_ld_t *ld, const json_t *v, const char *path,
                           json_t **out)
{
    int64_t i;
    if (json_is_boolean(v) || json_is_integer(v)) {
        *out = json_incref((json_t *)v);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0)
            *out = json_boolean(strcasecmp(s, "true") == 0);
        else if (parse_int64(s, &i))
            *out = json_integer(i);
        else
            *out = json_string(s);
    } else {
        return cv__cluster_err(ld, CV_EVALIDATE, path,
                               "expected a string, a boolean or an integer");
    }
    return *out ? 0 : cv__cluster_err(ld, CV_ENOMEM, path, "out of memory");
}

static void free_levels(char **levels, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(levels[i]);
    free(levels);
}

int cv__cluster_fd_parse(const cv__cluster_ld_t *ld, const char *text, const char *path,
                         char ***levels, size_t *depth)
{
    const char *p = strncmp(text, "fd:", 3) == 0 ? text + 3 : text;
    p += *p == '/';
    if (!*p)
        return cv__cluster_err(ld, CV_EVALIDATE, path, "empty fault domain '%s'", text);
    size_t n = 1;
    for (const char *q = p; *q; q++)
        n += *q == '/';
    char **out = calloc(n, sizeof(*out));
    if (!out)
        return cv__cluster_err(ld, CV_ENOMEM, path, "out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t len = strcspn(p, "/");
        if (len == 0) {
            free_levels(out, i);
            return cv__cluster_err(ld, CV_EVALIDATE, path,
                                   "'%s' has an empty level (expected fd:/level1/level2...)", text);
        }
        out[i] = strndup(p, len);
        if (!out[i]) {
            free_levels(out, i);
            return cv__cluster_err(ld, CV_ENOMEM, path, "out of memory");
        }
        p += len + (p[len] == '/');
    }
    *levels = out;
    *depth = n;
    return 0;
}
