#include "agent_subst.h"

#include "cv_base.h"

#include <stdlib.h>
#include <string.h>

char *cv_subst(const char *text, cv_subst_lookup lookup, void *ud)
{
    cv_buf_t b = {0};
    for (const char *p = text; *p;) {
        if (p[0] == '$' && p[1] == '$' && p[2] == '{') {
            cv_buf_add(&b, "${", 2);
            p += 3;
            continue;
        }
        const char *end = p[0] == '$' && p[1] == '{' ? strchr(p + 2, '}') : NULL;
        if (!end) {
            cv_buf_add(&b, p++, 1);
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
            cv_buf_add(&b, value, strlen(value));
        else
            cv_buf_add(&b, p, n + 3);
        p = end + 1;
    }
    return cv_buf_take(&b);
}
