/*
 * rollout_internal — the pieces of a rolling update (docs/crm.md "Rolling
 * updates", "Upgrades by upgrade domain"): the state machine that decides
 * when a step begins, ends, fails or rolls back (reconcile_rollout.c) and
 * the mechanics of one step's replicas (reconcile_rollout_step.c): which
 * replica is outdated or ready, a replica renewed in place, the old
 * replica kept beside its successor (start_first), a stateful one stopped
 * before it starts again on the same node. Internal symbols cv__ro_*.
 */
#ifndef ROLLOUT_INTERNAL_H
#define ROLLOUT_INTERNAL_H

#include "reconcile_internal.h"

/* The service spec's `updatePolicy`, defaults applied. */
typedef struct ro_policy {
    bool start_first, health_gate, rollback, manual, by_ud;
    int step, max_unavailable, max_surge;
    double interval, deadline;
} ro_policy_t;

void cv__ro_policy(const json_t *update_policy, ro_policy_t *p);

/* The first placement entry of `index` in x->placement (borrowed), or NULL. */
json_t *cv__ro_entry(const rc_ctx_t *x, int index);
/* The digest of the replica spec assigned for `entry` into buf; false when
 * its replica id is assigned nowhere yet (placed by this plan). */
bool cv__ro_assigned_digest(const rc_ctx_t *x, const json_t *entry, char *buf, size_t size);
/* The indexes below the target whose assigned replica runs another digest
 * than `want`, lowest first (a new array of integers). */
json_t *cv__ro_outdated(const rc_ctx_t *x, const char *want);
/* Whether the replica of `entry` reports healthy (or running, without the
 * health gate) on `want` (NULL: any digest); else why not into why. */
bool cv__ro_ready(const rc_ctx_t *x, const json_t *entry, const char *want, bool gate, char *why,
                  size_t whysz);
/* Indexes below the target without a healthy replica. */
int cv__ro_unhealthy(const rc_ctx_t *x);
/* The upgrade domain of a node ("" when it has none). */
void cv__ro_domain(const rc_ctx_t *x, const char *node, char *buf, size_t size);

/* A step's item for `entry`: {index, rid (the old one), node, role,
 * stateful, new (the new replica id)}; a stateless replica gets the new
 * replica id in place at once. A new object. */
json_t *cv__ro_begin(rc_ctx_t *x, json_t *entry);
/* Carries a step's items on in this plan: a stateful replica stays out of
 * the placement until its old replica stopped, then starts again on its
 * node; with `surge`, an old replica stays assigned beside its successor
 * until that one is ready on `want`. */
void cv__ro_carry(rc_ctx_t *x, const json_t *batch, bool surge, const char *want, bool gate);
/* Whether every item of the batch is ready on `want`; the first reason why
 * not into why. */
bool cv__ro_batch_ready(const rc_ctx_t *x, const json_t *batch, const char *want, bool gate,
                        char *why, size_t whysz);

#endif
