/*
 * Durations as convergectl prints and reads them.
 */
#include "cli_duration.h"

#include <math.h>
#include <stdio.h>

void cli_format_duration(double seconds, char *buf, size_t size)
{
    if (!isfinite(seconds) || seconds < 0) {
        snprintf(buf, size, "-");
        return;
    }
    if (seconds < 10) {
        /* Truncated (9.99 is not yet 10 s), past float noise (3 - 1.2). */
        snprintf(buf, size, "%.1fs", floor(seconds * 10 + 1e-6) / 10);
        return;
    }
    long long s = (long long)floor(seconds);
    if (s < 60)
        snprintf(buf, size, "%llds", s);
    else if (s < 3600)
        snprintf(buf, size, "%lldm%02llds", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, size, "%lldh%02lldm", s / 3600, s % 3600 / 60);
    else
        snprintf(buf, size, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
}

/* 100 years: past it a retention means "never", and sums cannot overflow. */
#define DURATION_MAX (100LL * 365 * 86400)

static long long unit_seconds(char unit)
{
    switch (unit) {
    case 's':
        return 1;
    case 'm':
        return 60;
    case 'h':
        return 3600;
    case 'd':
        return 86400;
    default:
        return 0;
    }
}

int cli_parse_duration(const char *text, long long *seconds)
{
    long long total = 0;
    const char *p = text;
    if (!p || !*p)
        return -1;
    while (*p) {
        long long n = 0;
        const char *digits = p;
        for (; *p >= '0' && *p <= '9'; p++) {
            n = n * 10 + (*p - '0');
            if (n > DURATION_MAX)
                return -1;
        }
        if (p == digits)
            return -1;
        long long unit = 1;
        if (*p) {
            unit = unit_seconds(*p);
            if (!unit)
                return -1;
            p++;
        } else if (digits != text) {
            return -1; /* "1h30": the last number needs its unit too */
        }
        total += n * unit;
        if (total > DURATION_MAX)
            return -1;
    }
    *seconds = total;
    return 0;
}
