/*
 * cv_lease — keeping a held lease alive while its holder works.
 *
 * A lease is a Redis string taken with SET NX PX and the holder's token
 * (check_begin.lua takes a resource's). While the holder works, a keeper
 * renews it every third of its time with compare-token-and-PEXPIRE
 * (lease_renew.lua), so leases can be short — a dead holder's lease runs out
 * within seconds — and a slow action still never loses its own. A renewal
 * that finds the lease gone or someone else's stops renewing: the holder's
 * fenced write will then be refused, which is the safe outcome.
 *
 * Keepers never keep the loop alive: a worker stopping with jobs in flight
 * exits, and their leases run out.
 */
#ifndef CV_LEASE_H
#define CV_LEASE_H

#include <stdbool.h>
#include <uv.h>

#include "cv_redis.h"

typedef struct cv_lease_keeper cv_lease_keeper_t;

/* Starts renewing lease `key` held with `token` for `lease_ms` at a time.
 * Once `*hold_off` is true (NULL: never) it renews no more, for good, as if
 * the lease were lost: a worker stepping aside (cv_isolation) writes no
 * lease after it has. NULL when out of memory (the lease then simply
 * expires on time). */
cv_lease_keeper_t *cv_lease_keep(uv_loop_t *loop, cv_redis_t *redis, const char *key,
                                 const char *token, unsigned lease_ms, const bool *hold_off);

/* Whether the last renewal found the lease no longer ours. */
bool cv_lease_lost(const cv_lease_keeper_t *k);

/* Stops renewing (the lease itself is left as it is) and frees the keeper
 * once nothing refers to it any more. NULL is allowed. */
void cv_lease_stop(cv_lease_keeper_t *k);

#endif
