#include "cv_lease.h"

#include "cv_contract.h"
#include "cv_log.h"
#include "cv_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cv_lease_keeper {
    uv_timer_t timer;
    cv_redis_t *redis;
    char key[CV_KEY_MAX];
    char token[160];
    char ms[16];
    bool lost;
    bool stopped;      /* cv_lease_stop was called */
    bool timer_closed; /* the timer's close callback ran */
    bool renewing;     /* a renewal's reply is outstanding */
    const bool *hold_off;
};

/* Freed when stopped, its handle closed and no reply outstanding: a reply
 * arriving after cv_lease_stop must still find the keeper. */
static void maybe_free(cv_lease_keeper_t *k)
{
    if (k->stopped && k->timer_closed && !k->renewing)
        free(k);
}

static void on_renewed(cv_redis_t *r, redisReply *rep, void *ud)
{
    cv_lease_keeper_t *k = ud;
    (void)r;
    k->renewing = false;
    bool not_ours = cv_reply_answer(CV_SCRIPT_LEASE_RENEW, rep) == CV_ANSWER_VALUE &&
                    rep->type == REDIS_REPLY_INTEGER && rep->integer == 0;
    if (not_ours && !k->stopped) {
        /* Expired while we could not renew it (a pause, a Redis outage), or
         * released under us: renewing someone else's lease would be wrong. */
        k->lost = true;
        cv_metrics_add(CV_METRIC_LEASES_LOST, 1);
        uv_timer_stop(&k->timer);
        cv_debug("lease %s is no longer held by %s; stopped renewing", k->key, k->token);
    }
    maybe_free(k);
}

static void on_tick(uv_timer_t *t)
{
    cv_lease_keeper_t *k = t->data;
    if (k->hold_off && *k->hold_off) {
        k->lost = true;
        uv_timer_stop(&k->timer);
        cv_debug("lease %s: stopped renewing, the worker stepped aside", k->key);
        return;
    }
    if (k->renewing || !cv_redis_connected(k->redis))
        return; /* the next tick tries again; the lease has two more thirds */
    cv_lease_renew_keys_t keys = {.lease = k->key};
    cv_lease_renew_args_t args = {.token = k->token, .lease_ms = k->ms};
    if (cv_redis_call(k->redis, CV_SCRIPT_LEASE_RENEW, keys.v, args.v, 0, NULL, NULL, on_renewed,
                      k) == 0)
        k->renewing = true;
}

cv_lease_keeper_t *cv_lease_keep(uv_loop_t *loop, cv_redis_t *redis, const char *key,
                                 const char *token, unsigned lease_ms, const bool *hold_off)
{
    cv_lease_keeper_t *k = calloc(1, sizeof(*k));
    if (!k)
        return NULL;
    k->redis = redis;
    k->hold_off = hold_off;
    snprintf(k->key, sizeof(k->key), "%s", key);
    snprintf(k->token, sizeof(k->token), "%s", token);
    snprintf(k->ms, sizeof(k->ms), "%u", lease_ms);
    unsigned every = lease_ms / 3 ? lease_ms / 3 : 1;
    uv_timer_init(loop, &k->timer);
    k->timer.data = k;
    uv_timer_start(&k->timer, on_tick, every, every);
    uv_unref((uv_handle_t *)&k->timer);
    cv_metrics_add(CV_METRIC_LEASES_HELD, 1);
    return k;
}

bool cv_lease_lost(const cv_lease_keeper_t *k)
{
    return k->lost;
}

static void on_closed(uv_handle_t *h)
{
    cv_lease_keeper_t *k = h->data;
    k->timer_closed = true;
    maybe_free(k);
}

void cv_lease_stop(cv_lease_keeper_t *k)
{
    if (!k || k->stopped)
        return;
    k->stopped = true;
    cv_metrics_add(CV_METRIC_LEASES_HELD, (uint64_t)-1);
    uv_timer_stop(&k->timer);
    uv_close((uv_handle_t *)&k->timer, on_closed);
}
