/* The jobs' step machines measured whole (bench_jobs.c). */
#ifndef BENCH_JOBS_H
#define BENCH_JOBS_H

#include <stddef.h>

/* Runs part `part` `count` times: 0, 1 when a round went wrong, -1 for a
 * part that is not one of these. */
int bench_jobs_run(const char *part, size_t count);

#endif
