#include "agent_subst.h"

#include <stdlib.h>
#include <string.h>

typedef struct buf {
    char *s;
    size_t len, cap;
    int oom;
} buf_t;

static void put(buf_t *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *s2 = realloc(b->s, cap);
        if (!s2) {
            b->oom = 1;
            return;
        }
        b->s = s2;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

char *cv_subst(const char *text, cv_subst_lookup lookup, void *ud)
{
    buf_t b = {0};
    put(&b, "", 0);
    for (const char *p = text; *p;) {
        if (p[0] == '$' && p[1] == '$' && p[2] == '{') {
            put(&b, "${", 2);
            p += 3;
            continue;
        }
        const char *end = p[0] == '$' && p[1] == '{' ? strchr(p + 2, '}') : NULL;
        if (!end) {
            put(&b, p++, 1);
            continue;
        }
        size_t n = (size_t)(end - p - 2);
        char name[256];
        const char *value = NULL;
        if (n > 0 && n < sizeof(name)) {
            memcpy(name, p + 2, n);
            name[n] = '\0';
            value = lookup(ud, name);
        }
        if (value)
            put(&b, value, strlen(value));
        else
            put(&b, p, n + 3);
        p = end + 1;
    }
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
