/*
 * cv_prom — the Prometheus text exposition format (version 0.0.4), written
 * into a cv_buf (whose `failed` says the text is incomplete and must not be
 * served), and the histogram a metric observes into. Pure: no
 * I/O, no clock, no global state, so the exact text is unit-tested
 * (tests/unit/base/test_prom.c).
 *
 * A histogram has fixed buckets chosen when it is set up and counts into a
 * preallocated array: observing a value is a short scan and two adds, no
 * allocation and no lock (a registry lives on one loop). Only writing the
 * text allocates, and that happens once per scrape.
 */
#ifndef CV_PROM_H
#define CV_PROM_H

#include "cv_buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The Content-Type of the text this module writes. */
#define CV_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The "# HELP" and "# TYPE" lines of a family; type is "counter", "gauge"
 * or "histogram". Newlines and backslashes in help are escaped. */
void cv_prom_family(cv_buf_t *b, const char *name, const char *type, const char *help);

/* One sample line. labels: name, value, name, value, ..., NULL (NULL
 * itself for none); values are escaped (\\, \", \n). */
void cv_prom_sample(cv_buf_t *b, const char *name, const char *const *labels, double value);
void cv_prom_sample_u64(cv_buf_t *b, const char *name, const char *const *labels, uint64_t value);

/* Buckets a histogram may have, besides +Inf. */
#define CV_PROM_BUCKETS_MAX 16

typedef struct cv_prom_hist {
    const double *bounds; /* upper bounds, increasing; not copied */
    int nbounds;
    uint64_t counts[CV_PROM_BUCKETS_MAX + 1]; /* per bucket, not cumulative; last: +Inf */
    uint64_t count;
    double sum;
} cv_prom_hist_t;

/* nbounds is at most CV_PROM_BUCKETS_MAX; bounds must outlive h. */
void cv_prom_hist_init(cv_prom_hist_t *h, const double *bounds, int nbounds);
void cv_prom_hist_observe(cv_prom_hist_t *h, double value);

/* The histogram's samples: name_bucket{...,le="..."} cumulative up to
 * le="+Inf", then name_sum and name_count, each with `labels` (as
 * cv_prom_sample's) first. */
void cv_prom_hist_write(cv_buf_t *b, const char *name, const char *const *labels,
                        const cv_prom_hist_t *h);

#endif
