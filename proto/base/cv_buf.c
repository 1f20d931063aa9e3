#include "cv_buf.h"

#include "cv_error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first allocation: most texts built are a line or two. */
#define MIN_CAP 64

void cv_buf_init(cv_buf_t *b)
{
    *b = (cv_buf_t){0};
}

int cv_buf_reserve(cv_buf_t *b, size_t more)
{
    if (b->failed)
        return CV_ENOMEM;
    if (more < b->cap - b->len) /* room for the bytes and the NUL; cap 0: no room */
        return 0;
    if (more > SIZE_MAX / 2 - b->len - 1) {
        b->failed = true;
        return CV_ENOMEM;
    }
    size_t need = b->len + more + 1, cap = b->cap ? b->cap : MIN_CAP;
    while (cap < need)
        cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return CV_ENOMEM;
    }
    if (!b->data)
        data[0] = '\0';
    b->data = data;
    b->cap = cap;
    return 0;
}

/* cv_buf_add when the bytes do not fit (or the buffer failed). */
int cv__buf_add_grown(cv_buf_t *b, const void *bytes, size_t n)
{
    if (cv_buf_reserve(b, n) != 0)
        return CV_ENOMEM;
    if (n)
        memcpy(b->data + b->len, bytes, n);
    cv_buf_added(b, n);
    return 0;
}

int cv_buf_printf(cv_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cv_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

/* Formats into the room there is, and once more into a buffer grown to the
 * size the first try reported, when that did not fit. */
int cv_buf_vprintf(cv_buf_t *b, const char *fmt, va_list ap)
{
    if (cv_buf_reserve(b, 0) != 0)
        return CV_ENOMEM;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    if (n >= 0 && (size_t)n >= b->cap - b->len) {
        if (cv_buf_reserve(b, (size_t)n) == 0)
            vsnprintf(b->data + b->len, b->cap - b->len, fmt, again);
    }
    va_end(again);
    if (n < 0 || b->failed) {
        b->data[b->len] = '\0';
        b->failed = true;
        return CV_ENOMEM;
    }
    cv_buf_added(b, (size_t)n);
    return 0;
}

void cv_buf_added(cv_buf_t *b, size_t n)
{
    if (!b->data)
        return;
    b->len += n;
    b->data[b->len] = '\0';
}

const char *cv_buf_str(const cv_buf_t *b)
{
    return b->data ? b->data : "";
}

char *cv_buf_take(cv_buf_t *b)
{
    char *text = b->failed ? NULL : b->data ? b->data : strdup("");
    if (b->failed)
        free(b->data);
    cv_buf_init(b);
    return text;
}

void cv_buf_free(cv_buf_t *b)
{
    free(b->data);
    cv_buf_init(b);
}
