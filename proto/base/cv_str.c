#include "cv_str.h"

#include <string.h>

bool cv_str_ends_with(const char *s, const char *suffix)
{
    size_t n = s ? strlen(s) : 0, m = strlen(suffix);
    return s && n >= m && strcmp(s + n - m, suffix) == 0;
}

bool cv_str_starts_with(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

int cv_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

size_t cv_u64_str(char *out, uint64_t v)
{
    char rev[CV_U64_DIGITS];
    size_t n = 0;
    do {
        rev[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    out[n] = '\0';
    return n;
}

size_t cv_str_copy(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
    return n;
}

static bool is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether src[i] opens a quoted span: a double quote always, a single one
 * only where it cannot be an apostrophe ("the stack's"). */
static bool opens_quote(const char *src, size_t i)
{
    return src[i] == '"' || (src[i] == '\'' && (i == 0 || !is_word_char(src[i - 1])));
}

size_t cv_str_redact_quoted(char *dst, size_t size, const char *src)
{
    static const char mask[] = "******";
    size_t n = 0;
    for (size_t i = 0; src[i] && n + 1 < size; i++) {
        dst[n++] = src[i];
        if (!opens_quote(src, i))
            continue;
        char quote = src[i];
        size_t end = i + 1;
        while (src[end] && !(src[end] == quote && (quote == '"' || !is_word_char(src[end + 1]))))
            end++;
        n += cv_str_copy(dst + n, size - n, mask);
        if (!src[end])
            break;
        if (n + 1 < size)
            dst[n++] = quote;
        i = end;
    }
    dst[n] = '\0';
    return n;
}
