#include "cv_keys.h"

#include "cv_base.h"
#include "cv_msg.h"

#include <stdbool.h>
#include <string.h>

static char key_prefix[64] = "cv:";

static const char *const patterns[CV_KEY__COUNT] = {
#define CV_KEY_KIND_PATTERN(kind, pattern) [CV_KEY_##kind] = pattern,
    CV_KEY_KIND_MAP(CV_KEY_KIND_PATTERN)
#undef CV_KEY_KIND_PATTERN
};

int cv_keys_set_prefix(const char *prefix)
{
    if (strlen(prefix) >= sizeof(key_prefix))
        return CV_EINVAL;
    strcpy(key_prefix, prefix);
    return 0;
}

const char *cv_keys_prefix(void)
{
    return key_prefix;
}

const char *cv_key_pattern(cv_key_kind_t kind)
{
    return (unsigned)kind < CV_KEY__COUNT ? patterns[kind] : "";
}

typedef struct out {
    char *buf;
    size_t size, len;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
    if (o->size == 0)
        return;
    size_t room = o->size - 1 - o->len;
    if (n > room)
        n = room;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

/* The pattern with its placeholders in place; with !whole, it stops at
 * the name's placeholder. */
static size_t format(char *buf, size_t size, cv_key_kind_t kind, const char *stack,
                     uint64_t traversal, const char *name, bool whole)
{
    out_t o = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    put(&o, key_prefix, strlen(key_prefix));
    for (const char *p = cv_key_pattern(kind); *p;) {
        const char *end = *p == '<' ? strchr(p, '>') : NULL;
        if (!end) {
            /* the literal text up to the next placeholder, at once */
            const char *next = strchr(p + 1, '<');
            size_t n = next ? (size_t)(next - p) : strlen(p);
            put(&o, p, n);
            p += n;
            continue;
        }
        size_t n = (size_t)(end - p + 1);
        if (n == sizeof("<stack>") - 1 && strncmp(p, "<stack>", n) == 0) {
            put(&o, stack ? stack : "", stack ? strlen(stack) : 0);
        } else if (n == sizeof("<traversal>") - 1 && strncmp(p, "<traversal>", n) == 0) {
            char t[CV_U64_DIGITS + 1];
            put(&o, t, cv_u64_str(t, traversal));
        } else if (!whole) {
            break;
        } else {
            put(&o, name ? name : "", name ? strlen(name) : 0);
        }
        p = end + 1;
    }
    return o.len;
}

size_t cv_key(char *buf, size_t size, cv_key_kind_t kind, const char *stack, uint64_t traversal,
              const char *name)
{
    return format(buf, size, kind, stack, traversal, name, true);
}

size_t cv_key_prefix(char *buf, size_t size, cv_key_kind_t kind, const char *stack,
                     uint64_t traversal)
{
    return format(buf, size, kind, stack, traversal, NULL, false);
}

size_t cv_node_name(char *buf, size_t size, int phase, const char *resource)
{
    out_t o = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    put(&o, phase == CV_PHASE_CLEANUP ? "c/" : "u/", 2);
    put(&o, resource, strlen(resource));
    return o.len;
}
