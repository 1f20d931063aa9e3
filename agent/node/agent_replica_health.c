/*
 * A replica's health: its checks (agent_probe) every interval once it runs,
 * the grace period, `retries` consecutive failures making it unhealthy.
 */
#include "agent_replica_internal.h"

#include "agent_env.h"
#include "agent_probe.h"

#include "cv_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern char **environ;

static bool past_grace(const cv_replica_t *r)
{
    return cv_now() - r->running_at >= r->spec.health.grace_period;
}

void cv__replica_become_healthy(cv_replica_t *r)
{
    r->hfails = 0;
    if (r->state == CV_RSTATE_HEALTHY)
        return;
    r->healthy_since = cv_now();
    cv__replica_set_state(r, CV_RSTATE_HEALTHY, "");
}

static void on_probe(void *ud, bool ok, const char *why)
{
    cv_replica_t *r = ud;
    r->probing = false;
    if (r->closing) {
        cv__replica_release(r);
        return;
    }
    if (r->state != CV_RSTATE_RUNNING && r->state != CV_RSTATE_HEALTHY)
        return;
    if (ok) {
        if (past_grace(r))
            cv__replica_become_healthy(r);
        return;
    }
    if (!past_grace(r))
        return;
    if (++r->hfails < r->spec.health.retries) {
        cv_debug("replica %s: health check failed (%d of %d): %s", r->spec.rid, r->hfails,
                 r->spec.health.retries, why);
        return;
    }
    snprintf(r->cause, sizeof(r->cause), "health check failed: %s", why);
    cv_info("replica %s: %s", r->spec.rid, r->cause);
    r->down_failure = true;
    cv__replica_set_state(r, CV_RSTATE_UNHEALTHY, r->cause);
    cv__replica_stop_group(r, DOWN_HEALTH);
}

static void on_health_timer(uv_timer_t *t)
{
    cv_replica_t *r = t->data;
    const cv_rhealth_t *hc = &r->spec.health;
    if (hc->kind == CV_HEALTH_NONE) {
        if (r->state == CV_RSTATE_RUNNING)
            cv__replica_become_healthy(r);
        return;
    }
    if (r->probing || (r->state != CV_RSTATE_RUNNING && r->state != CV_RSTATE_HEALTHY))
        return;
    cv_probe_req_t req = {.kind = hc->kind,
                          .address = r->h->address,
                          .path = hc->path,
                          .argv = hc->argv,
                          .timeout = hc->timeout > 0 ? hc->timeout : 1};
    const json_t *port = hc->port ? json_object_get(r->ports, hc->port) : NULL;
    req.port = port ? (int)json_integer_value(port) : 0;
    char **env = NULL, **argv = NULL, **wrapped = NULL;
    char *wd = NULL, why[512] = "";
    if (hc->kind == CV_HEALTH_COMMAND) {
        cv_env_where_t w = {r->h->node, r->h->address, r->ports, r->volumes, r->load_file};
        json_t *vars = cv_env_vars(&r->spec, &r->spec.tasks[0], &w);
        env = cv_env_build(&r->spec, &r->spec.tasks[0], vars, environ);
        argv = cv_env_argv(hc->argv, &r->spec, &r->spec.tasks[0], vars);
        wd = cv__replica_workdir(r, &r->spec.tasks[0], vars);
        json_decref(vars);
        /* The check's command is the submitter's too: confined as the replica. */
        if (!env || !argv || !wd)
            snprintf(why, sizeof(why), "out of memory");
        else if (r->h->sb && r->uid < 0)
            cv__replica_confine_user(r, why, sizeof(why));
        if (!why[0] && r->h->sb)
            cv__replica_confine_task(r, SIZE_MAX, env, argv, wd, &wrapped, why, sizeof(why));
        req.argv = (const char *const *)(wrapped ? wrapped : argv);
        req.label = argv ? argv[0] : NULL;
        req.env = env;
        req.cwd = wd;
    }
    r->probing = true;
    if (why[0])
        on_probe(r, false, why);
    else
        cv_probe_start(r->h->loop, &req, on_probe, r);
    cv_env_free(env);
    cv_env_free(argv);
    cv_env_free(wrapped);
    free(wd);
}

void cv__replica_start_health(cv_replica_t *r)
{
    const cv_rhealth_t *hc = &r->spec.health;
    r->hfails = 0;
    if (hc->kind == CV_HEALTH_NONE) {
        if (hc->grace_period <= 0)
            cv__replica_become_healthy(r);
        else
            uv_timer_start(&r->htimer, on_health_timer, (uint64_t)(hc->grace_period * 1000), 0);
        return;
    }
    uint64_t every = (uint64_t)(hc->interval * 1000);
    uv_timer_start(&r->htimer, on_health_timer, every < 100 ? every : 100, every);
}
