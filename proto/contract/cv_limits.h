/*
 * cv_limits — how big an input may be: template size, resources per stack,
 * string length, message size, nesting depth, resources in one traversal.
 *
 * One table (CV_LIMITS_MAP) gives every limit its default, its environment
 * variable (CONVERGE_MAX_*) and its option name (--max-*), so that the CLI,
 * the template loader and the workers enforce the same numbers and name
 * them the same way in their errors. Pure: no I/O (reading the environment
 * is the caller's choice, through cv_limits_from_env).
 */
#ifndef CV_LIMITS_H
#define CV_LIMITS_H

#include <stddef.h>

/* XX(ID, field, option, default, what is measured, unit) */
#define CV_LIMITS_MAP(XX)                                                                          \
    XX(TEMPLATE_BYTES, template_bytes, "max-template-bytes", 1048576, "template size", "bytes")    \
    XX(RESOURCES, resources, "max-resources", 100000, "number of resources", "")                   \
    XX(STRING_BYTES, string_bytes, "max-string-bytes", 65536, "string length", "bytes")            \
    XX(MESSAGE_BYTES, message_bytes, "max-message-bytes", 1048576, "message size", "bytes")        \
    XX(NESTING_DEPTH, nesting_depth, "max-nesting-depth", 5, "nesting depth", "levels")            \
    XX(TRAVERSAL_RESOURCES, traversal_resources, "max-traversal-resources", 1500000,               \
       "number of resources in one traversal", "")

typedef enum {
#define XX(id, field, option, def, what, unit) CV_LIMIT_##id,
    CV_LIMITS_MAP(XX)
#undef XX
        CV_LIMIT__COUNT
} cv_limit_t;

typedef struct cv_limits {
#define XX(id, field, option, def, what, unit) size_t field;
    CV_LIMITS_MAP(XX)
#undef XX
} cv_limits_t;

/* The defaults of the table. */
void cv_limits_init(cv_limits_t *l);

/* Overrides from CONVERGE_MAX_TEMPLATE_BYTES, CONVERGE_MAX_RESOURCES, ...
 * (unset or empty: keep). Returns 0 or CV_EINVAL naming the variable. */
int cv_limits_from_env(cv_limits_t *l, char *errstr, size_t errstr_size);

/*
 * The environment's overrides, but only those that lower a limit: a client
 * that the workers' published limits (`l`) bind may be stricter than the
 * workers, never laxer. A value above the limit is ignored, and named in
 * `ignored` (may be NULL) so that the caller can say so. Returns 0 or
 * CV_EINVAL naming the variable.
 */
int cv_limits_lower_from_env(cv_limits_t *l, char *ignored, size_t ignored_size, char *errstr,
                             size_t errstr_size);

/* The Redis hash where the engines publish their limits (field: option
 * name, value: decimal), under the key prefix: "cv:limits". */
void cv_limits_key(char *buf, size_t size);

/* Sets the limit whose option name (without the dashes, e.g.
 * "max-message-bytes") is `option` from a positive decimal `value`.
 * Returns 0, CV_ENOENT for an unknown name, or CV_EINVAL for a bad value. */
int cv_limits_set(cv_limits_t *l, const char *option, const char *value, char *errstr,
                  size_t errstr_size);

size_t cv_limits_get(const cv_limits_t *l, cv_limit_t which);

/* Option name ("max-message-bytes"), environment variable
 * ("CONVERGE_MAX_MESSAGE_BYTES") and what a limit measures ("message size"). */
const char *cv_limit_option(cv_limit_t which);
const char *cv_limit_env(cv_limit_t which);
const char *cv_limit_what(cv_limit_t which);

/* Usage lines for --help: one per limit, "  --max-... N   what (default D)". */
void cv_limits_usage(char *buf, size_t size);

/*
 * Checks `value` against a limit: 0 when within it, else CV_ETOOBIG with
 * errstr naming where, what, both numbers and how to change the limit, e.g.
 * "app.yaml: template size 2097152 bytes exceeds the limit of 1048576
 * (--max-template-bytes, CONVERGE_MAX_TEMPLATE_BYTES)".
 */
int cv_limits_check(const cv_limits_t *l, cv_limit_t which, size_t value, const char *where,
                    char *errstr, size_t errstr_size);

#endif
