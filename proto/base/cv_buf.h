/*
 * cv_buf — the growable string of the whole tree: text built piece by piece
 * (a Prometheus page, a URL, a substituted command line, a JSON rendering)
 * and bytes read in chunks. Pure.
 *
 * The bytes are kept NUL-terminated, so `data` is a C string whenever
 * anything was added. A failed allocation is sticky: the buffer keeps what
 * it held, `failed` is set, and every later addition does nothing — a
 * builder adds without checking each call and asks once at the end
 * (cv_buf_take gives NULL, or it reads `failed`). That is what each of the
 * private buffers it replaced did, each in its own words.
 *
 * Growth doubles the capacity, so n additions cost O(n) copies in all.
 */
#ifndef CV_BUF_H
#define CV_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct cv_buf {
    char *data;  /* NUL-terminated; NULL until something was added */
    size_t len;  /* bytes held, the NUL not counted */
    size_t cap;  /* bytes allocated */
    bool failed; /* an allocation failed: the text is incomplete */
} cv_buf_t;

/* A zeroed buffer ({0}) is empty; cv_buf_init empties one in place. */
void cv_buf_init(cv_buf_t *b);

/* Makes room for `more` bytes past len (and the NUL); 0 or CV_ENOMEM,
 * which also sets `failed`. */
int cv_buf_reserve(cv_buf_t *b, size_t more);

/* Appends: `n` bytes, a C string, one character, printf's text. Each
 * returns 0, or CV_ENOMEM when the buffer failed now or before. The first
 * three are inline when the bytes fit: texts are built a few bytes at a
 * time, often in hot paths (a node class key per node, per placement). */
int cv__buf_add_grown(cv_buf_t *b, const void *bytes, size_t n);
static inline int cv_buf_add(cv_buf_t *b, const void *bytes, size_t n)
{
    if (b->failed || n >= b->cap - b->len) /* no room for the bytes and the NUL */
        return cv__buf_add_grown(b, bytes, n);
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}
static inline int cv_buf_puts(cv_buf_t *b, const char *s)
{
    return cv_buf_add(b, s, strlen(s));
}
static inline int cv_buf_putc(cv_buf_t *b, char c)
{
    return cv_buf_add(b, &c, 1);
}
int cv_buf_printf(cv_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cv_buf_vprintf(cv_buf_t *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Counts `n` bytes the caller wrote at data + len itself, after a
 * cv_buf_reserve of at least `n` (a read straight into the buffer). */
void cv_buf_added(cv_buf_t *b, size_t n);

/* The text held: "" for an empty buffer, never NULL. */
const char *cv_buf_str(const cv_buf_t *b);

/* Hands the text over to the caller (free() it) and leaves the buffer
 * empty: "" allocated for an empty buffer, NULL when an allocation failed
 * (the text is freed then). */
char *cv_buf_take(cv_buf_t *b);

/* Frees the text and leaves the buffer empty and usable again. */
void cv_buf_free(cv_buf_t *b);

#endif
