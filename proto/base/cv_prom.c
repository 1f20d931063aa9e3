#include "cv_prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Escapes backslash and newline, and the double quote too inside a label
 * value: the format's only escapes. */
static void put_escaped(cv_buf_t *b, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            cv_buf_add(b, "\\\\", 2);
        else if (*s == '\n')
            cv_buf_add(b, "\\n", 2);
        else if (*s == '"' && quote)
            cv_buf_add(b, "\\\"", 2);
        else
            cv_buf_add(b, s, 1);
    }
}

void cv_prom_family(cv_buf_t *b, const char *name, const char *type, const char *help)
{
    cv_buf_puts(b, "# HELP ");
    cv_buf_puts(b, name);
    cv_buf_puts(b, " ");
    put_escaped(b, help, false);
    cv_buf_puts(b, "\n# TYPE ");
    cv_buf_puts(b, name);
    cv_buf_puts(b, " ");
    cv_buf_puts(b, type);
    cv_buf_puts(b, "\n");
}

/* name{a="x",b="y",extra="v"} — extra (a label appended, such as le) may be NULL. */
static void put_series(cv_buf_t *b, const char *name, const char *const *labels,
                       const char *extra_name, const char *extra_value)
{
    cv_buf_puts(b, name);
    bool any = (labels && labels[0]) || extra_name;
    if (!any)
        return;
    cv_buf_puts(b, "{");
    int n = 0;
    for (int i = 0; labels && labels[i]; i += 2, n++) {
        if (n)
            cv_buf_puts(b, ",");
        cv_buf_puts(b, labels[i]);
        cv_buf_puts(b, "=\"");
        put_escaped(b, labels[i + 1], true);
        cv_buf_puts(b, "\"");
    }
    if (extra_name) {
        if (n)
            cv_buf_puts(b, ",");
        cv_buf_puts(b, extra_name);
        cv_buf_puts(b, "=\"");
        cv_buf_puts(b, extra_value);
        cv_buf_puts(b, "\"");
    }
    cv_buf_puts(b, "}");
}

/* The shortest of %.15g and %.17g that reads back as the same double;
 * the format's spellings of the infinities and NaN. */
static void format_double(char *out, size_t size, double v)
{
    if (isnan(v)) {
        snprintf(out, size, "NaN");
    } else if (isinf(v)) {
        snprintf(out, size, "%sInf", v > 0 ? "+" : "-");
    } else {
        snprintf(out, size, "%.15g", v);
        if (strtod(out, NULL) != v)
            snprintf(out, size, "%.17g", v);
    }
}

void cv_prom_sample(cv_buf_t *b, const char *name, const char *const *labels, double value)
{
    char text[40];
    format_double(text, sizeof(text), value);
    put_series(b, name, labels, NULL, NULL);
    cv_buf_puts(b, " ");
    cv_buf_puts(b, text);
    cv_buf_puts(b, "\n");
}

void cv_prom_sample_u64(cv_buf_t *b, const char *name, const char *const *labels, uint64_t value)
{
    char text[24];
    snprintf(text, sizeof(text), "%llu", (unsigned long long)value);
    put_series(b, name, labels, NULL, NULL);
    cv_buf_puts(b, " ");
    cv_buf_puts(b, text);
    cv_buf_puts(b, "\n");
}

void cv_prom_hist_init(cv_prom_hist_t *h, const double *bounds, int nbounds)
{
    memset(h, 0, sizeof(*h));
    h->bounds = bounds;
    h->nbounds = nbounds < CV_PROM_BUCKETS_MAX ? nbounds : CV_PROM_BUCKETS_MAX;
}

void cv_prom_hist_observe(cv_prom_hist_t *h, double value)
{
    int i = 0;
    while (i < h->nbounds && value > h->bounds[i])
        i++;
    h->counts[i]++;
    h->count++;
    h->sum += value;
}

void cv_prom_hist_write(cv_buf_t *b, const char *name, const char *const *labels,
                        const cv_prom_hist_t *h)
{
    char series[256], le[40], text[24];
    uint64_t cumulative = 0;
    snprintf(series, sizeof(series), "%s_bucket", name);
    for (int i = 0; i <= h->nbounds; i++) {
        cumulative += h->counts[i];
        if (i < h->nbounds)
            format_double(le, sizeof(le), h->bounds[i]);
        else
            snprintf(le, sizeof(le), "+Inf");
        snprintf(text, sizeof(text), " %llu\n", (unsigned long long)cumulative);
        put_series(b, series, labels, "le", le);
        cv_buf_puts(b, text);
    }
    snprintf(series, sizeof(series), "%s_sum", name);
    cv_prom_sample(b, series, labels, h->sum);
    snprintf(series, sizeof(series), "%s_count", name);
    cv_prom_sample_u64(b, series, labels, h->count);
}
