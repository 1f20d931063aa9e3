/*
 * A replica's health check, one probe at a time (agent_probe): the HTTP or
 * TCP request, or the check's command with the replica's environment,
 * working directory and confinement. What the outcome means (the grace
 * period, `retries` consecutive failures making it unhealthy) is the life
 * cycle's (agent_replica.c), which hands its callback in.
 */
#include "agent_replica_internal.h"

#include "agent_env.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern char **environ;

void cv__replica_probe(cv_replica_t *r, cv_probe_cb done)
{
    const cv_rhealth_t *hc = &r->spec.health;
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
    if (why[0])
        done(r, false, why);
    else
        cv_probe_start(r->h->loop, &req, done, r);
    cv_env_free(env);
    cv_env_free(argv);
    cv_env_free(wrapped);
    free(wd);
}
