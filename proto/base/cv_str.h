/*
 * cv_str — the string tests that statuses need everywhere ("…_IN_PROGRESS",
 * "CREATE_…"), the value of a hexadecimal digit, a number in decimal, and a
 * bounded copy, and a copy fit for a log line with its quoted values masked.
 * Pure.
 */
#ifndef CV_STR_H
#define CV_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether `s` ends with `suffix` / starts with `prefix`; false for a NULL `s`. */
bool cv_str_ends_with(const char *s, const char *suffix);
bool cv_str_starts_with(const char *s, const char *prefix);

/* The value of `c` as a hexadecimal digit (0-9, a-f, A-F), or -1. */
int cv_hex_digit(char c);

/* `v` in decimal into `out` (room for CV_U64_DIGITS + 1), NUL-terminated;
 * returns its length. What a key or an argument needs per job, without
 * snprintf's format parsing. */
#define CV_U64_DIGITS 20
size_t cv_u64_str(char *out, uint64_t v);

/* Copies `src` into `dst` of `size` bytes (size > 0), cut to fit and
 * NUL-terminated, as snprintf(dst, size, "%s", src) without its format
 * parsing; returns the length copied. */
size_t cv_str_copy(char *dst, size_t size, const char *src);

/* Copies `src` into `dst` as cv_str_copy does, with the inside of every
 * quoted span ("..." and '...', a single quote only after a non-word
 * character, as in Python's repr) replaced by "******", and returns the
 * length written. A failure reason quotes the value it refused ("expected
 * integer, got \"...\""), which may be a hidden parameter's: the workers
 * know no secrets, so their logs mask every quoted value, and the readers of
 * the stored reason mask what they know to be secret. An unclosed quote masks
 * to the end. */
size_t cv_str_redact_quoted(char *dst, size_t size, const char *src);

#endif
