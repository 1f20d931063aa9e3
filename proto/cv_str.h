/*
 * cv_str — the string tests that statuses need everywhere ("…_IN_PROGRESS",
 * "CREATE_…"). Pure.
 */
#ifndef CV_STR_H
#define CV_STR_H

#include <stdbool.h>

/* Whether `s` ends with `suffix` / starts with `prefix`; false for a NULL `s`. */
bool cv_str_ends_with(const char *s, const char *suffix);
bool cv_str_starts_with(const char *s, const char *prefix);

#endif
