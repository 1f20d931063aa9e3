/*
 * What a replica is and says: its state (every change published through
 * its host), the state file a restarted agent re-adopts it from, its
 * report, and the struct's last release. The bottom of agent_replica: the
 * life cycle (agent_replica.c), its processes (agent_replica_proc.c) and
 * its health checks (agent_replica_health.c) all record through it, and it
 * calls none of them.
 */
#include "agent_replica_internal.h"

#include "agent_state.h"

#include "cv_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv__replica_set_state(cv_replica_t *r, cv_replica_state_t s, const char *reason)
{
    if (r->state != s)
        r->since = cv_now();
    r->state = s;
    if (reason)
        snprintf(r->reason, sizeof(r->reason), "%s", reason);
    if (s == CV_RSTATE_STOPPED || s == CV_RSTATE_FAILED)
        cv__replica_save(r); /* a restarted agent keeps the verdict */
    r->h->changed(r->h->ud, r);
}

json_t *cv_replica_report(const cv_replica_t *r)
{
    cv_report_t rep = {.rid = r->spec.rid,
                       .state = r->state,
                       .pid = r->tasks[0].up ? r->tasks[0].pid : 0,
                       .start_time = r->tasks[0].up ? r->tasks[0].start_time : 0,
                       .started = r->started,
                       .since = r->since,
                       .restarts = r->restarts,
                       .reason = r->reason,
                       .exit = r->exit,
                       .address = r->h->address,
                       .ports = r->ports,
                       .gave_up = r->gave_up,
                       .digest = r->spec.digest,
                       .declared = r->spec.load,
                       .measured = r->measured,
                       .rss_mb = r->rss_mb,
                       .cpu_cores = r->cpu_cores,
                       .reported = r->reported};
    return cv_report_json(&rep);
}

bool cv_replica_has_processes(const cv_replica_t *r)
{
    for (size_t i = 0; i < r->spec.ntasks; i++)
        if (r->tasks[i].up)
            return true;
    return false;
}

void cv_replica_add_load(const cv_replica_t *r, json_t *sum)
{
    if (!cv_replica_has_processes(r) &&
        !(r->h->simulate && (r->state == CV_RSTATE_HEALTHY || r->state == CV_RSTATE_RUNNING)))
        return;
    json_t *rep = cv_replica_report(r);
    cv_report_load_add(sum, json_object_get(rep, "load"));
    json_decref(rep);
}

/* The state file: what a restarted agent needs to re-adopt. */
void cv__replica_save(cv_replica_t *r)
{
    if (r->h->simulate)
        return;
    json_t *tasks = json_array();
    for (size_t i = 0; i < r->spec.ntasks; i++)
        json_array_append_new(tasks,
                              json_pack("{s:s, s:i, s:I}", "name", r->spec.tasks[i].name, "pid",
                                        r->tasks[i].up ? (int)r->tasks[i].pid : 0, "start_time",
                                        (json_int_t)(r->tasks[i].up ? r->tasks[i].start_time : 0)));
    json_t *st = json_pack("{s:s, s:O, s:o, s:O, s:i, s:f, s:b, s:s, s:s, s:s, s:b, s:b}", "rid",
                           r->spec.rid, "spec", r->spec.json, "tasks", tasks, "ports", r->ports,
                           "restarts", r->restarts, "started", r->started, "ledger", r->ledger_done,
                           "state", cv_rstate_name(r->state), "reason", r->reason, "exit", r->exit,
                           "gave_up", r->gave_up, "stopped", r->stop_wanted);
    int rc = st ? cv_state_write(r->h->dir, r->spec.rid, st) : -ENOMEM;
    if (rc)
        cv_warn("replica %s: writing its state file: %s", r->spec.rid, strerror(-rc));
    json_decref(st);
}

/* The replica lives until its two timers closed and no probe is out. */
void cv__replica_release(cv_replica_t *r)
{
    if (--r->open_handles > 0)
        return;
    cv_rspec_free(&r->spec);
    json_decref(r->ports);
    json_decref(r->volumes);
    json_decref(r->reported);
    free(r->tasks);
    free(r);
}

const char *cv_replica_rid(const cv_replica_t *r)
{
    return r->spec.rid;
}

const cv_rspec_t *cv_replica_spec(const cv_replica_t *r)
{
    return &r->spec;
}

cv_replica_state_t cv_replica_state(const cv_replica_t *r)
{
    return r->state;
}

bool cv_replica_stopped(const cv_replica_t *r)
{
    return r->stop_wanted && r->state == CV_RSTATE_STOPPED && !cv_replica_has_processes(r);
}
