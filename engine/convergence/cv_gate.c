#include "cv_gate.h"

#include <stddef.h>

bool cv_gate_enter(cv_gate_t *g, cv_gate_waiter_t *w)
{
    if (w->admitted)
        return true;
    if (g->running < g->max && !g->head) {
        g->running++;
        w->admitted = true;
        return true;
    }
    if (!w->waiting) {
        w->next = NULL;
        if (g->tail)
            g->tail->next = w;
        else
            g->head = w;
        g->tail = w;
        w->waiting = true;
    }
    return false;
}

static void unlink_waiter(cv_gate_t *g, cv_gate_waiter_t *w)
{
    cv_gate_waiter_t **p = &g->head, *prev = NULL;
    while (*p && *p != w) {
        prev = *p;
        p = &(*p)->next;
    }
    if (!*p)
        return;
    *p = w->next;
    if (g->tail == w)
        g->tail = prev;
    w->next = NULL;
    w->waiting = false;
}

void cv_gate_leave(cv_gate_t *g, cv_gate_waiter_t *w)
{
    if (w->waiting) {
        unlink_waiter(g, w);
        return;
    }
    if (!w->admitted)
        return;
    w->admitted = false;
    g->running--;
    cv_gate_waiter_t *next = g->head;
    if (!next || g->running >= g->max)
        return;
    g->head = next->next;
    if (!g->head)
        g->tail = NULL;
    next->next = NULL;
    next->waiting = false;
    next->admitted = true;
    g->running++;
    next->start(next);
}
