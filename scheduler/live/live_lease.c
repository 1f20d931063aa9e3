/*
 * live_lease — the cluster resource manager's role (docs/crm.md "The role"):
 * the lease {cluster}:crm kept or taken with crm_lease.lua on every tick of
 * the manager. A new holder gets a new epoch, so its value is a fencing
 * token its predecessor cannot present; a holder that finds the lease is no
 * longer its own forgets it at once, and every phase checks it before each
 * step, so a holder paused past its lease stops acting the moment it runs
 * again (and svc_move.lua refuses what it had already sent).
 */
#include "live_internal.h"

#include "cv_base.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lease's time: a successor takes over within it of the holder's death. */
#define CRM_LEASE_MS "3000"

typedef struct lease_call {
    cv__crm_lease_t *ls;
    cv__crm_lease_cb cb;
    void *arg;
} lease_call_t;

void cv__crm_lease_init(cv__crm_lease_t *ls, cv_worker_t *w)
{
    memset(ls, 0, sizeof(*ls));
    ls->w = w;
    cv_key(ls->key, sizeof(ls->key), CV_KEY_CRM, NULL, 0, NULL);
    cv_key(ls->status_key, sizeof(ls->status_key), CV_KEY_CRM_STATUS, NULL, 0, NULL);
}

void cv__crm_lease_drop(cv__crm_lease_t *ls, const char *why)
{
    if (!ls->value[0])
        return;
    cv_info("crm: this worker no longer holds the cluster resource manager's role (%s was %s): "
            "it stops acting",
            why, ls->value);
    ls->value[0] = '\0';
}

static void on_lease(cv_redis_t *redis, redisReply *rep, void *ud)
{
    (void)redis;
    lease_call_t *c = ud;
    cv__crm_lease_t *ls = c->ls;
    ls->calling = false;
    bool taken = false;
    const char *state = "";
    switch (cv_reply_answer(CV_SCRIPT_CRM_LEASE, rep)) {
    case CV_ANSWER_OK:
        taken = strcmp(cv_reply_str(rep, CV_CRM_LEASE_R_TAKEN), "1") == 0;
        snprintf(ls->value, sizeof(ls->value), "%s", cv_reply_str(rep, CV_CRM_LEASE_R_VALUE));
        state = cv_reply_str(rep, CV_CRM_LEASE_R_STATE);
        if (taken)
            cv_info("crm: this worker holds the cluster resource manager's role (lease %s = %s)",
                    ls->key, ls->value);
        break;
    case CV_ANSWER_LOST:
        cv__crm_lease_drop(ls, "the lease expired; its holder is another");
        break;
    case CV_ANSWER_BUSY:
        ls->value[0] = '\0';
        break;
    default:
        /* Redis did not answer: whether the lease is still ours is unknown,
         * so the holder stops acting until a renewal says it is. */
        cv__crm_lease_drop(ls, "Redis did not answer its renewal");
        break;
    }
    c->cb(c->arg, ls->value[0] != '\0', taken, state);
    free(c);
}

int cv__crm_lease_renew(cv__crm_lease_t *ls, const char *fields, cv__crm_lease_cb cb, void *arg)
{
    lease_call_t *c = calloc(1, sizeof(*c));
    if (!c)
        return CV_ENOMEM;
    c->ls = ls;
    c->cb = cb;
    c->arg = arg;
    cv_crm_lease_keys_t keys = {.lease = ls->key, .status = ls->status_key};
    cv_crm_lease_args_t args = {
        .worker = ls->w->id, .held = ls->value, .lease_ms = CRM_LEASE_MS, .fields = fields};
    int err = cv_redis_call(ls->w->redis, CV_SCRIPT_CRM_LEASE, keys.v, args.v, 0, NULL, NULL,
                            on_lease, c);
    if (err) {
        free(c);
        return err;
    }
    ls->calling = true;
    return 0;
}

void cv__crm_lease_release(cv__crm_lease_t *ls)
{
    if (!ls->value[0])
        return;
    cv_lease_release_keys_t keys = {.lease = ls->key};
    cv_lease_release_args_t args = {.token = ls->value};
    cv_redis_call(ls->w->redis, CV_SCRIPT_LEASE_RELEASE, keys.v, args.v, 0, NULL, NULL, NULL, NULL);
    cv_info("crm: this worker stops: it gives the cluster resource manager's role up (%s)",
            ls->value);
    ls->value[0] = '\0';
}
