/*
 * cli_duration — how convergectl writes a span of time for a human: a
 * stack's age in `list`, how long an action has been running in `status`.
 * Pure.
 */
#ifndef CLI_DURATION_H
#define CLI_DURATION_H

#include <stddef.h>

/* "0.4s" and "7.2s" under 10 s (a wait of a few seconds reads better with
 * its tenth), then "42s", "5m12s", "3h05m", "2d04h"; a negative or unknown
 * span is "-". */
void cli_format_duration(double seconds, char *buf, size_t size);

/* Reads a span of time as an operator writes one: a whole number followed
 * by s, m, h or d ("30s", "2h", "7d"; a bare number is seconds), or a
 * sequence of such ("1h30m"). 0 and *seconds set, or -1 for anything else
 * (empty, a sign, a fraction, an unknown unit, a span past 100 years). */
int cli_parse_duration(const char *text, long long *seconds);

#endif
