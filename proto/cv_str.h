/*
 * cv_str — the string tests that statuses need everywhere ("…_IN_PROGRESS",
 * "CREATE_…"), and the value of a hexadecimal digit. Pure.
 */
#ifndef CV_STR_H
#define CV_STR_H

#include <stdbool.h>

/* Whether `s` ends with `suffix` / starts with `prefix`; false for a NULL `s`. */
bool cv_str_ends_with(const char *s, const char *suffix);
bool cv_str_starts_with(const char *s, const char *prefix);

/* The value of `c` as a hexadecimal digit (0-9, a-f, A-F), or -1. */
int cv_hex_digit(char c);

#endif
