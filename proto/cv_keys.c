#include "cv_keys.h"

#include "cv_error.h"
#include "cv_msg.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static char key_prefix[64] = "cv:";

/* snprintf's return value is what it wanted to write; callers want what fits. */
static size_t clamp(int n, size_t size)
{
    if (n < 0)
        return 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}

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

size_t cv_key_stack(char *buf, size_t size, const char *stack, const char *what)
{
    return clamp(snprintf(buf, size, "%s{%s}:%s", key_prefix, stack, what), size);
}

size_t cv_key_resource(char *buf, size_t size, const char *stack, const char *what,
                       const char *name)
{
    return clamp(snprintf(buf, size, "%s{%s}:%s:%s", key_prefix, stack, what, name), size);
}

size_t cv_key_trav(char *buf, size_t size, const char *stack, const char *what, uint64_t trav)
{
    return clamp(snprintf(buf, size, "%s{%s}:%s:%" PRIu64, key_prefix, stack, what, trav), size);
}

size_t cv_key_syncpoint(char *buf, size_t size, const char *stack, uint64_t trav, const char *node)
{
    return clamp(snprintf(buf, size, "%s{%s}:sp:%" PRIu64 ":%s", key_prefix, stack, trav, node),
                 size);
}

size_t cv_key_global(char *buf, size_t size, const char *what)
{
    return clamp(snprintf(buf, size, "%s%s", key_prefix, what), size);
}

size_t cv_node_name(char *buf, size_t size, int phase, const char *resource)
{
    return clamp(snprintf(buf, size, "%c/%s", phase == CV_PHASE_CLEANUP ? 'c' : 'u', resource),
                 size);
}
