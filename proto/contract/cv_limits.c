#include "cv_limits.h"

#include "cv_base.h"
#include "cv_keys.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct limit_def {
    const char *option;
    const char *env;
    size_t def;
    const char *what;
    const char *unit;
    size_t offset;
} limit_def_t;

static const limit_def_t defs[CV_LIMIT__COUNT] = {
#define XX(id, field, option, dflt, what, unit)                                                    \
    {option, "CONVERGE_MAX_" #id, dflt, what, unit, offsetof(cv_limits_t, field)},
    CV_LIMITS_MAP(XX)
#undef XX
};

static size_t *slot(cv_limits_t *l, cv_limit_t which)
{
    return (size_t *)((char *)l + defs[which].offset);
}

void cv_limits_init(cv_limits_t *l)
{
    for (int i = 0; i < CV_LIMIT__COUNT; i++)
        *slot(l, (cv_limit_t)i) = defs[i].def;
}

size_t cv_limits_get(const cv_limits_t *l, cv_limit_t which)
{
    return *(const size_t *)((const char *)l + defs[which].offset);
}

const char *cv_limit_option(cv_limit_t which)
{
    return defs[which].option;
}

const char *cv_limit_env(cv_limit_t which)
{
    return defs[which].env;
}

const char *cv_limit_what(cv_limit_t which)
{
    return defs[which].what;
}

/* A limit is a positive count: 0 would refuse everything, and a sign or
 * trailing text is a typo worth reporting rather than guessing at. */
static int parse_positive(const char *text, size_t *out)
{
    if (text[0] < '0' || text[0] > '9')
        return CV_EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v == 0 || v > SIZE_MAX)
        return CV_EINVAL;
    *out = (size_t)v;
    return 0;
}

int cv_limits_from_env(cv_limits_t *l, char *errstr, size_t errstr_size)
{
    for (int i = 0; i < CV_LIMIT__COUNT; i++) {
        const char *v = getenv(defs[i].env);
        if (!v || !*v)
            continue;
        if (parse_positive(v, slot(l, (cv_limit_t)i)) != 0)
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             "%s=\"%s\": expected a positive whole number", defs[i].env, v);
    }
    return 0;
}

int cv_limits_lower_from_env(cv_limits_t *l, char *ignored, size_t ignored_size, char *errstr,
                             size_t errstr_size)
{
    size_t n = 0;
    if (ignored && ignored_size)
        ignored[0] = '\0';
    for (int i = 0; i < CV_LIMIT__COUNT; i++) {
        const char *v = getenv(defs[i].env);
        size_t value;
        if (!v || !*v)
            continue;
        if (parse_positive(v, &value) != 0)
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             "%s=\"%s\": expected a positive whole number", defs[i].env, v);
        if (value <= cv_limits_get(l, (cv_limit_t)i))
            *slot(l, (cv_limit_t)i) = value;
        else if (ignored && n < ignored_size) {
            int w = snprintf(ignored + n, ignored_size - n, "%s%s", n ? ", " : "", defs[i].env);
            n += w > 0 ? (size_t)w : 0;
        }
    }
    return 0;
}

void cv_limits_key(char *buf, size_t size)
{
    cv_key(buf, size, CV_KEY_LIMITS, NULL, 0, NULL);
}

int cv_limits_set(cv_limits_t *l, const char *option, const char *value, char *errstr,
                  size_t errstr_size)
{
    for (int i = 0; i < CV_LIMIT__COUNT; i++) {
        if (strcmp(defs[i].option, option) != 0)
            continue;
        if (parse_positive(value, slot(l, (cv_limit_t)i)) != 0)
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             "--%s \"%s\": expected a positive whole number", option, value);
        return 0;
    }
    return cv_seterr(errstr, errstr_size, CV_ENOENT, "no limit is named \"%s\"", option);
}

int cv_limits_check(const cv_limits_t *l, cv_limit_t which, size_t value, const char *where,
                    char *errstr, size_t errstr_size)
{
    size_t max = cv_limits_get(l, which);
    if (value <= max)
        return 0;
    const limit_def_t *d = &defs[which];
    return cv_seterr(errstr, errstr_size, CV_ETOOBIG,
                     "%s: %s %zu%s%s exceeds the limit of %zu (--%s, %s)", where, d->what, value,
                     d->unit[0] ? " " : "", d->unit, max, d->option, d->env);
}

void cv_limits_usage(char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < CV_LIMIT__COUNT && n < size; i++) {
        char opt[48];
        snprintf(opt, sizeof(opt), "--%s N", defs[i].option);
        int w = snprintf(buf + n, size - n, "  %-28s %s%s%s, at most (default %zu; $%s)\n", opt,
                         defs[i].what, defs[i].unit[0] ? " in " : "", defs[i].unit, defs[i].def,
                         defs[i].env);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}
