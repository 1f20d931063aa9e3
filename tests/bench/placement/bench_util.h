/*
 * bench_util — what the placement benchmarks share: a seeded xorshift
 * generator (the same cluster for the same seed) and a monotonic clock.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

typedef struct rng {
    uint64_t s;
} rng_t;

static inline uint32_t rnd(rng_t *r, uint32_t n)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (uint32_t)(r->s % n);
}

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
