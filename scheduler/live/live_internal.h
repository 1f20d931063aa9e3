/*
 * live_internal — the pieces of cv_live: reading the live model from Redis
 * into the JSON the planner reads (live_read.c), one reconcile: plan,
 * commit, events (live_reconcile.c), and the cluster resource manager
 * (docs/crm.md): its phases on timers (live_crm.c), its lease
 * (live_lease.c), its status hash (live_status.c), the refresh of nodes and
 * health (live_nodes.c), the placement pass over every service
 * (live_place.c) and the moves it writes (live_moves.c). Internal symbols
 * are cv__live_* and cv__crm_*. Not a public surface.
 */
#ifndef LIVE_INTERNAL_H
#define LIVE_INTERNAL_H

#include "cv_contract.h"
#include "cv_live.h"

#include <jansson.h>
#include <stdbool.h>

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

/* A HGETALL of {cluster}:load:<svc> as the model's services.<svc>.loads:
 * {"<index>": {"<metric>": number, .., "time": Unix s}}. Values that are
 * not JSON objects, and members that are not numbers, are left out: a load
 * the planner cannot read is no load. */
json_t *cv__live_loads(const redisReply *rep);

/* ---------------------------------------------------------------- lease */

/* The manager's lease {cluster}:crm (crm_lease.lua): `value` is
 * "<worker id>:<epoch>" while this worker holds it, "" otherwise. */
typedef struct cv__crm_lease {
    cv_worker_t *w;
    char key[CV_KEY_MAX], status_key[CV_KEY_MAX];
    char value[128];
    bool calling; /* a crm_lease.lua call is under way */
} cv__crm_lease_t;

/* held: the lease is ours after the call; taken: it was just taken (state
 * is then the planner's state kept in the status hash, or ""). */
typedef void (*cv__crm_lease_cb)(void *arg, bool held, bool taken, const char *state);

void cv__crm_lease_init(cv__crm_lease_t *ls, cv_worker_t *w);

/* Keeps the lease, or takes it when free, writing `fields` (a JSON object
 * of status fields, or NULL) only if it is ours. Returns 0, or CV_EREDIS
 * (cb is then not called). */
int cv__crm_lease_renew(cv__crm_lease_t *ls, const char *fields, cv__crm_lease_cb cb, void *arg);

/* Forgets the lease at once (a fenced write showed it is no longer ours). */
void cv__crm_lease_drop(cv__crm_lease_t *ls, const char *why);

/* Gives the lease up while it is still ours (the worker stops): a
 * successor takes the role at its next tick instead of after the lease
 * time. */
void cv__crm_lease_release(cv__crm_lease_t *ls);

/* ---------------------------------------------------------------- status */

/* What {cluster}:crm:status should say, and what was last written: only
 * the fields that changed go out, with the next lease renewal. */
typedef struct cv__crm_status {
    json_t *written; /* field -> the string written */
    json_t *pending; /* field -> the string to write */
} cv__crm_status_t;

void cv__crm_status_init(cv__crm_status_t *st);
void cv__crm_status_free(cv__crm_status_t *st);

/* Sets a field to a JSON value (strings as they are, the rest as JSON). */
void cv__crm_status_set(cv__crm_status_t *st, const char *field, const json_t *value);

/* A phase's last run: {"at": Unix s, "ms": duration, "moves": n}. */
void cv__crm_status_phase(cv__crm_status_t *st, const char *phase, double at, double ms, int moves);

/* The fields to write now as a JSON object text (free it), or NULL when
 * nothing changed; they count as written from then on. */
char *cv__crm_status_take(cv__crm_status_t *st);

/* Nothing counts as written any more (the lease changed hands). */
void cv__crm_status_forget(cv__crm_status_t *st);

/* ---------------------------------------------------------------- passes */

/* Whether the pass may go on (the lease is still ours, the worker is not
 * stopping). */
typedef bool (*cv__live_go_on_fn)(void *arg);
typedef void (*cv__live_pass_cb)(void *arg, int count);

/* The refresh: nodes marked down / back with their System.FM reports,
 * expired health reports pruned, the planner's node reports kept. */
void cv__live_refresh_nodes(cv_worker_t *w, const json_t *model);

/* The placement pass: every service of the model reconciled one after
 * another (orphans deleted, services whose stack turned drift off left
 * alone); cb gets how many were reconciled. */
void cv__live_place_all(cv_worker_t *w, const json_t *model, cv__live_go_on_fn go_on,
                        cv__live_pass_cb cb, void *arg);

/* The moves of a cv_balance result written service by service with
 * svc_move.lua under `lease_value`, each service with moves written then
 * reconciled; cb gets how many moves were written, or -1 when a write was
 * fenced (the lease is no longer `lease_value`). */
void cv__live_moves_apply(cv_worker_t *w, const char *lease_value, const json_t *moves,
                          cv__live_go_on_fn go_on, cv__live_pass_cb cb, void *arg);

#endif
