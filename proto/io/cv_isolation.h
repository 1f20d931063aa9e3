/*
 * cv_isolation — when a worker cut off from one of its two services steps
 * aside. A worker that reaches Kafka but not Redis (or Redis but not Kafka)
 * cannot finish jobs, yet would keep its partitions, or the leases of its
 * jobs, from the workers that can: after `bound` seconds of such a one-sided
 * outage it stops consuming and hands its work back, and it comes back when
 * both services answer again. When both are down nobody can work and nothing
 * would move anyway: the worker waits in place, as it did before. Pure: the
 * caller says what it knows and when.
 */
#ifndef CV_ISOLATION_H
#define CV_ISOLATION_H

#include <stdbool.h>

/* What the worker knows of a service: since when it has been unreachable
 * (Unix seconds), 0 while it answers. */
typedef struct cv_isolation_in {
    double redis_down_since;
    double kafka_down_since;
    double now;
    double bound;  /* seconds a one-sided outage lasts before stepping aside */
    bool isolated; /* whether the worker has stepped aside */
} cv_isolation_in_t;

typedef enum {
    CV_ISOLATION_CONSUME,    /* take jobs (again) */
    CV_ISOLATION_STEP_ASIDE, /* stop consuming, hand the work back */
} cv_isolation_t;

/* The decision, and in *why (may be NULL) the service cut off ("redis",
 * "kafka") when stepping aside, "" otherwise. Once aside the worker stays
 * aside until both services answer, even if the other one fails meanwhile. */
cv_isolation_t cv_isolation_decide(const cv_isolation_in_t *in, const char **why);

#endif
