#include "agent_ports.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv_ports_init(cv_ports_t *p, int lo, int hi)
{
    memset(p, 0, sizeof(*p));
    p->lo = lo;
    p->hi = hi;
    p->next = lo;
}

void cv_ports_free(cv_ports_t *p)
{
    cv_vec_free(&p->used);
}

const char *cv_ports_owner(const cv_ports_t *p, int port)
{
    for (size_t i = 0; i < p->used.n; i++)
        if (p->used.v[i].port == port)
            return p->used.v[i].owner;
    return NULL;
}

int cv_ports_take(cv_ports_t *p, int port, const char *owner)
{
    const char *holder = cv_ports_owner(p, port);
    if (holder)
        return strcmp(holder, owner) == 0 ? 0 : CV_EEXIST;
    cv_port_use_t *use = cv_vec_add(&p->used);
    if (!use)
        return CV_ENOMEM;
    use->port = port;
    cv_str_copy(use->owner, sizeof(use->owner), owner);
    return 0;
}

int cv_ports_alloc(cv_ports_t *p, const char *owner, cv_ports_free_fn is_free, void *ud)
{
    int span = p->hi - p->lo + 1;
    for (int i = 0; i < span; i++) {
        int port = p->next;
        p->next = port >= p->hi ? p->lo : port + 1;
        if (cv_ports_owner(p, port) || (is_free && !is_free(ud, port)))
            continue;
        int rc = cv_ports_take(p, port, owner);
        return rc ? rc : port;
    }
    return CV_ENOENT;
}

void cv_ports_release(cv_ports_t *p, const char *owner)
{
    size_t k = 0;
    for (size_t i = 0; i < p->used.n; i++)
        if (strcmp(p->used.v[i].owner, owner) != 0)
            p->used.v[k++] = p->used.v[i];
    p->used.n = k;
}

int cv_ports_parse_range(const char *text, int *lo, int *hi)
{
    char *end;
    long a = strtol(text, &end, 10);
    if (end == text || *end != '-')
        return CV_EINVAL;
    const char *second = end + 1;
    long b = strtol(second, &end, 10);
    if (end == second || *end || a < 1 || b > 65535 || a > b)
        return CV_EINVAL;
    *lo = (int)a;
    *hi = (int)b;
    return 0;
}
