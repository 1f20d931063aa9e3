/*
 * live_internal — the pieces of cv_live: reading the live model from Redis
 * into the JSON the planner reads (live_read.c), one reconcile: plan,
 * commit, events (live_reconcile.c), and the cluster loop (live_loop.c).
 * Internal symbols are cv__live_*. Not a public surface.
 */
#ifndef LIVE_INTERNAL_H
#define LIVE_INTERNAL_H

#include "cv_live.h"

#include <jansson.h>

/* Commits a reconcile tries before it gives up (CV_EBUSY; a later call,
 * such as the cluster loop's next pass, tries again). */
#define CV_LIVE_ATTEMPTS 5

/* model: the model (owned by the callee: decref it), or NULL with rc and err. */
typedef void (*cv__live_model_cb)(void *arg, json_t *model, int rc, const char *err);

/* Reads the whole live model (docs/services.md: every node's description,
 * heartbeat, down mark, admin hash, assignments and reports; the settings;
 * every service's record; the health reports; Redis's clock) with two
 * pipelined rounds of commands, and calls cb once on the loop. */
void cv__live_read(cv_worker_t *w, cv__live_model_cb cb, void *arg);

/* The members of a reply that is an array of field/value pairs, as an
 * object of strings. */
json_t *cv__live_pairs(const redisReply *rep);

#endif
