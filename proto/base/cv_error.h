/*
 * cv_error — the one error table of Converge.
 *
 * Every call that can fail returns 0 or a negative CV_E* code. The codes and
 * their strings come from CV_ERRNO_MAP so that the enum and cv_strerror()
 * can never disagree. User-facing failures additionally fill a caller-owned
 * `char *errstr, size_t errstr_size` with a sentence naming what is wrong and
 * where.
 */
#ifndef CV_ERROR_H
#define CV_ERROR_H

#include <stddef.h>

#define CV_ERRNO_MAP(XX)                                                                           \
    XX(EINVAL, "invalid argument")                                                                 \
    XX(ENOMEM, "out of memory")                                                                    \
    XX(EPARSE, "syntax error")                                                                     \
    XX(EVALIDATE, "validation failed")                                                             \
    XX(ECYCLE, "dependency cycle")                                                                 \
    XX(ENOENT, "not found")                                                                        \
    XX(EEXIST, "already exists")                                                                   \
    XX(EPROTO, "malformed message")                                                                \
    XX(EVERSION, "unsupported message version")                                                    \
    XX(ETOOBIG, "value exceeds a limit")                                                           \
    XX(EREDIS, "redis error")                                                                      \
    XX(EKAFKA, "kafka error")                                                                      \
    XX(ESTALE, "traversal superseded")                                                             \
    XX(EBUSY, "resource leased by another worker")                                                 \
    XX(EFENCED, "write refused by fencing version")                                                \
    XX(EFAILED, "action failed")                                                                   \
    XX(ETIMEDOUT, "timed out")                                                                     \
    XX(EIO, "input/output error")                                                                  \
    XX(EAUTH, "credentials refused")

enum {
    CV_OK = 0,
    CV__EBASE = -1000,
#define XX(code, _) CV_##code,
    CV_ERRNO_MAP(XX)
#undef XX
};

/* Returns a static string for any CV_E* code, "unknown error" otherwise. */
const char *cv_strerror(int err);

/* Returns the symbolic name ("EPARSE") of a CV_E* code. */
const char *cv_err_name(int err);

/* snprintf into errstr, tolerating errstr == NULL; always returns err. */
int cv_seterr(char *errstr, size_t errstr_size, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
