#include "cv_error.h"

#include <stdarg.h>
#include <stdio.h>

const char *cv_strerror(int err)
{
    switch (err) {
    case CV_OK:
        return "success";
#define XX(code, str)                                                                              \
    case CV_##code:                                                                                \
        return str;
        CV_ERRNO_MAP(XX)
#undef XX
    default:
        return "unknown error";
    }
}

const char *cv_err_name(int err)
{
    switch (err) {
    case CV_OK:
        return "OK";
#define XX(code, _)                                                                                \
    case CV_##code:                                                                                \
        return #code;
        CV_ERRNO_MAP(XX)
#undef XX
    default:
        return "EUNKNOWN";
    }
}

int cv_seterr(char *errstr, size_t errstr_size, int err, const char *fmt, ...)
{
    if (errstr && errstr_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errstr, errstr_size, fmt, ap);
        va_end(ap);
    }
    return err;
}
