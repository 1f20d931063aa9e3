/*
 * cv_gate — at most `max` of a kind of work at once; the rest wait in line,
 * first come first served. Memory-heavy steps of a worker (a stack's
 * expansion, a nested resource's child definition) pass one, so that a
 * thousand of them arriving together cost `max` times one, not a thousand.
 * Pure: no I/O, no clock; the owner's `start` runs the admitted work.
 *
 *     static cv_gate_t gate = CV_GATE_INIT(2);
 *     if (!cv_gate_enter(&gate, &job->waiter))   // queued: start() admits it later
 *         return;
 *     ... work ...
 *     cv_gate_leave(&gate, &job->waiter);         // and the next one starts
 */
#ifndef CV_GATE_H
#define CV_GATE_H

#include <stdbool.h>

typedef struct cv_gate_waiter cv_gate_waiter_t;
struct cv_gate_waiter {
    void (*start)(cv_gate_waiter_t *w); /* runs the work once admitted from the line */
    cv_gate_waiter_t *next;
    bool admitted; /* holds one of the places */
    bool waiting;  /* in the line */
};

typedef struct cv_gate {
    int max, running;
    cv_gate_waiter_t *head, *tail;
} cv_gate_t;

#define CV_GATE_INIT(n)                                                                            \
    {                                                                                              \
        .max = (n)                                                                                 \
    }

/* True when w holds a place (now, or already); false when it joined the
 * line: start(w) runs once a place frees (inside cv_gate_leave). */
bool cv_gate_enter(cv_gate_t *g, cv_gate_waiter_t *w);

/* Gives w's place up (nothing when it holds none; a waiting w leaves the
 * line) and admits the first in line, calling its start. */
void cv_gate_leave(cv_gate_t *g, cv_gate_waiter_t *w);

#endif
