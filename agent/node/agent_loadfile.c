#include "agent_loadfile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv_loadfile_path(char *buf, size_t size, const char *dir, const char *rid)
{
    int n = snprintf(buf, size, "%s/loads/", dir);
    for (const char *p = rid; *p && n >= 0 && (size_t)n + 6 < size; p++)
        buf[n++] = *p == '/' ? '+' : *p;
    if (n >= 0 && (size_t)n + 6 < size)
        snprintf(buf + n, size - (size_t)n, "/load");
}

static void note_bad(cv_loadfile_bad_t *bad, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note_bad(cv_loadfile_bad_t *bad, int line, const char *fmt, ...)
{
    if (bad->count++ > 0)
        return;
    bad->first_line = line;
    int n = snprintf(bad->first, sizeof(bad->first), "line %d: ", line);
    if (n < 0 || (size_t)n >= sizeof(bad->first))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(bad->first + n, sizeof(bad->first) - (size_t)n, fmt, ap);
    va_end(ap);
}

/* [*s, *e) without blanks at either end. */
static void trim(const char **s, const char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

/* A plain decimal number (no hex, inf or nan): a new JSON number, integers
 * as integers, or NULL. */
static json_t *number(const char *s, size_t len)
{
    char buf[64];
    if (len == 0 || len >= sizeof(buf))
        return NULL;
    bool whole = true;
    for (size_t i = 0; i < len; i++) {
        if (!strchr("0123456789.eE+-", s[i]))
            return NULL;
        whole = whole && (isdigit((unsigned char)s[i]) || (i == 0 && s[i] == '+'));
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    if (whole) {
        long long v = strtoll(buf, &end, 10);
        if (errno == 0 && *end == '\0')
            return json_integer(v);
    }
    errno = 0;
    double d = strtod(buf, &end);
    if (*end != '\0' || errno != 0 || !isfinite(d))
        return NULL;
    return json_real(d);
}

/* One line [s, e) into `out`; bad lines are noted. */
static void parse_line(const char *s, const char *e, int line, const json_t *declared, json_t *out,
                       cv_loadfile_bad_t *bad)
{
    trim(&s, &e);
    if (s == e || *s == '#')
        return;
    int shown = e - s > 60 ? 60 : (int)(e - s);
    const char *eq = memchr(s, '=', (size_t)(e - s));
    if (!eq) {
        note_bad(bad, line, "'%.*s': expected METRIC=VALUE", shown, s);
        return;
    }
    const char *ms = s, *me = eq, *vs = eq + 1, *ve = e;
    trim(&ms, &me);
    trim(&vs, &ve);
    char metric[128];
    if (me == ms || (size_t)(me - ms) >= sizeof(metric)) {
        note_bad(bad, line, "'%.*s': no metric name", shown, s);
        return;
    }
    memcpy(metric, ms, (size_t)(me - ms));
    metric[me - ms] = '\0';
    if (!json_object_get(declared, metric)) {
        note_bad(bad, line, "'%.*s': %s is not a metric of the service", shown, s, metric);
        return;
    }
    json_t *v = number(vs, (size_t)(ve - vs));
    if (!v) {
        note_bad(bad, line, "'%.*s': the value is not a number", shown, s);
        return;
    }
    if (json_number_value(v) < 0) {
        json_decref(v);
        note_bad(bad, line, "'%.*s': the value is negative", shown, s);
        return;
    }
    json_object_set_new(out, metric, v);
}

json_t *cv_loadfile_parse(const char *text, size_t len, int truncated, const json_t *declared,
                          cv_loadfile_bad_t *bad)
{
    memset(bad, 0, sizeof(*bad));
    json_t *out = json_object();
    const char *p = text, *end = text + len;
    int line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        line++;
        if (!nl && truncated) {
            /* The cap cut this line: it may be a prefix of a longer value. */
            note_bad(bad, line, "the file is longer than %d bytes: the rest is ignored",
                     CV_LOADFILE_MAX);
            return out;
        }
        parse_line(p, nl ? nl : end, line, declared, out, bad);
        p = nl ? nl + 1 : end;
    }
    if (truncated)
        note_bad(bad, line + 1, "the file is longer than %d bytes: the rest is ignored",
                 CV_LOADFILE_MAX);
    return out;
}
