/*
 * The harness's Redis: one synchronous hiredis connection (a unix socket
 * when given) for the commands that are not scripts, and pipelines for steps
 * that send several independent ones; scripts go through
 * cv_redis_script_on on the same connection (scen_jobs.c). A lost
 * connection ends the run: a schedule cannot be replayed from half a state.
 *
 * Also the PRNG, the only source of choices in a schedule.
 */
#include "scen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- PRNG: splitmix64 ---- */

void scen_rng_seed(scen_rng_t *r, uint64_t seed)
{
    r->s = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
}

uint64_t scen_rng_next(scen_rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

size_t scen_rng_below(scen_rng_t *r, size_t n)
{
    return (size_t)(scen_rng_next(r) % n);
}

bool scen_rng_chance(scen_rng_t *r, unsigned permille)
{
    return permille > 0 && scen_rng_below(r, 1000) < permille;
}

/* ---- Redis ---- */

static redisContext *ctx;
static uint64_t round_trips;

void scen_redis_lost(const char *what)
{
    fprintf(stderr, "scenario_runner: redis: %s: %s\n", what,
            ctx && ctx->err ? ctx->errstr : "no reply");
    exit(3);
}

int scen_redis_open(const char *socket_path, int port, char *errstr, size_t errstr_size)
{
    struct timeval tv = {5, 0};
    ctx = socket_path && socket_path[0] ? redisConnectUnixWithTimeout(socket_path, tv)
                                        : redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!ctx || ctx->err) {
        snprintf(errstr, errstr_size, "cannot connect to redis: %s",
                 ctx ? ctx->errstr : "out of memory");
        return -1;
    }
    return 0;
}

void scen_redis_close(void)
{
    if (ctx)
        redisFree(ctx);
    ctx = NULL;
}

redisContext *scen_redis(void)
{
    return ctx;
}

uint64_t scen_redis_round_trips(void)
{
    return round_trips;
}

void scen_count_round_trip(void)
{
    round_trips++;
}

redisReply *scen_cmd(int argc, const char **argv)
{
    round_trips++;
    redisReply *r = redisCommandArgv(ctx, argc, argv, NULL);
    if (!r)
        scen_redis_lost(argv[0]);
    return r;
}

void scen_pipeline(int n, const int *argc, const char ***argv, redisReply **replies)
{
    round_trips++;
    for (int i = 0; i < n; i++)
        if (redisAppendCommandArgv(ctx, argc[i], argv[i], NULL) != REDIS_OK)
            scen_redis_lost(argv[i][0]);
    for (int i = 0; i < n; i++) {
        void *r = NULL;
        if (redisGetReply(ctx, &r) != REDIS_OK || !r)
            scen_redis_lost(argv[i][0]);
        replies[i] = r;
    }
}
