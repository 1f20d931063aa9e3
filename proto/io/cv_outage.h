/*
 * cv_outage — bookkeeping of a service's outages (Redis, Kafka), so that a
 * worker reports each outage once when it starts and once when it ends, with
 * its duration, however many failed attempts it saw in between, and can put
 * the figures in its liveness record; and what an outage means for a job
 * that failed (cv_retry_t). Pure: the caller says what happened and when.
 */
#ifndef CV_OUTAGE_H
#define CV_OUTAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cv_outage {
    const char *service; /* "redis", "kafka" */
    bool down;
    uint64_t count; /* outages so far, the current one included */
    double since;   /* start of the current or last outage (Unix seconds) */
    double ended;   /* end of the last outage; 0 while none has ended */
    char why[160];  /* what the current or last outage began with */
} cv_outage_t;

void cv_outage_init(cv_outage_t *o, const char *service);

/* The service was found unreachable at `now`. True when this starts an
 * outage (the caller logs it); false while one is already under way. */
bool cv_outage_down(cv_outage_t *o, double now, const char *why);

/* The service answered at `now`. True when this ends an outage, with its
 * length in *duration (the caller logs it). */
bool cv_outage_up(cv_outage_t *o, double now, double *duration);

/* The most recent outage of two services (either may be NULL), as the
 * liveness record's last_outage: "redis 1712345670.100-1712345673.300
 * (3.2 s): connection refused", or "kafka since 1712345670.100 (ongoing):
 * ..."; "" when neither had one. */
void cv_outage_describe_last(const cv_outage_t *a, const cv_outage_t *b, char *buf, size_t size);

/* A job's transient failures: every one grows the backoff; only those
 * while Redis and Kafka were reachable count towards the attempt limit. */
typedef struct cv_retry {
    unsigned attempt;  /* failures so far: the backoff grows with them */
    unsigned failures; /* the counted ones */
} cv_retry_t;

/* Counts one more failure (counted when `services_up`); true when the job
 * has now failed `max_failures` counted times and should be given up. */
bool cv_retry_exhausted(cv_retry_t *r, bool services_up, unsigned max_failures);

#endif
