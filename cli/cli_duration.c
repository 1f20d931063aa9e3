/*
 * Durations as convergectl prints them.
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
