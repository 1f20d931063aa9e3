/*
 * The OBSERVE decision (cv_decide.h): whether a job has anything to look
 * at, and what the looks mean — wait, failed, or complete with the fields
 * node_done records.
 */
#include "cv_decide.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_names[] = {
#define CV_OBSERVE_KIND_NAME(name) #name,
    CV_OBSERVE_KIND_MAP(CV_OBSERVE_KIND_NAME)
#undef CV_OBSERVE_KIND_NAME
};

const char *cv_observe_kind_name(cv_observe_kind_t kind)
{
    return (size_t)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "UNKNOWN";
}

void cv_observe_outcome_clear(cv_observe_outcome_t *out)
{
    free(out->attrs);
    free(out->data);
    free(out->pass);
    free(out->old);
    free(out->events);
    out->attrs = out->data = out->pass = out->old = out->events = NULL;
}

static bool cleanup_look(const cv_msg_t *job)
{
    return job->phase == CV_PHASE_CLEANUP && !job->watch;
}

bool cv_observe_wants_look(const cv_msg_t *job, const char *status)
{
    return !cleanup_look(job) || (status && strcmp(status, "DELETE_IN_PROGRESS") == 0);
}

cv_action_t cv_observe_action(const cv_msg_t *job, const cv_record_t *rec)
{
    if (cleanup_look(job) || strcmp(rec->action, "DELETE") == 0)
        return CV_ACTION_DELETE;
    return strcmp(rec->action, "UPDATE") == 0 ? CV_ACTION_UPDATE : CV_ACTION_CREATE;
}

static char *dump(const json_t *v)
{
    return cv_record_json(v);
}

/* node_done's fields; NULL texts count as "". */
static void complete(cv_observe_outcome_t *out, const char *status, const char *action, char *attrs,
                     char *data, char *pass, char *old, char *events)
{
    out->kind = CV_OBSERVE_COMPLETE;
    cv_str_copy(out->status, sizeof(out->status), status);
    cv_str_copy(out->action, sizeof(out->action), action);
    cv_str_copy(out->reason, sizeof(out->reason), "state changed");
    out->attrs = attrs ? attrs : strdup("");
    out->data = data ? data : strdup("");
    out->pass = pass;
    out->old = old ? old : strdup("");
    out->events = events ? events : strdup("");
}

/* A reason must name the resource; types may already have done so. */
static void failed(cv_observe_outcome_t *out, const cv_msg_t *job, const cv_record_t *rec,
                   const char *why)
{
    char mention[CV_NAME_MAX + 16];
    out->kind = CV_OBSERVE_FAILED;
    snprintf(out->status, sizeof(out->status), "%s_FAILED", rec->action);
    snprintf(out->action, sizeof(out->action), "%s", rec->action);
    snprintf(mention, sizeof(mention), "resources.%s", job->resource);
    if (strstr(why, mention))
        snprintf(out->reason, sizeof(out->reason), "%s", why);
    /* A reason longer than the field is cut; gcc -O3 wants the cut seen. */
    else if (snprintf(out->reason, sizeof(out->reason), "%s: %s", mention, why) >=
             (int)sizeof(out->reason))
        out->reason[sizeof(out->reason) - 1] = '\0';
}

/* Looks again at retry_at, but within [1, CV_MAX_LOOK_INTERVAL_MS] ms. */
static void wait_until(cv_observe_outcome_t *out, double retry_at, double now)
{
    double wait_ms = (retry_at - now) * 1000.0;
    out->kind = CV_OBSERVE_WAIT;
    out->delay_ms = wait_ms < 1                         ? 1
                    : wait_ms > CV_MAX_LOOK_INTERVAL_MS ? CV_MAX_LOOK_INTERVAL_MS
                                                        : (unsigned)wait_ms;
}

static void unknown_type(char *why, size_t size, const char *type_name)
{
    snprintf(why, size, "The Resource Type (%s) could not be found.", type_name ? type_name : "");
}

/* ---- before looking ---- */

bool cv_action_in_flight(const cv_record_t *rec)
{
    return rec->exists && (strcmp(rec->status, "CREATE_IN_PROGRESS") == 0 ||
                           strcmp(rec->status, "UPDATE_IN_PROGRESS") == 0 ||
                           strcmp(rec->status, "ADOPT_IN_PROGRESS") == 0);
}

/* A resource marked unhealthy (convergectl mark-unhealthy) while the
 * action of this job's traversal was in flight. */
static bool abandoned(const cv_msg_t *job, const cv_record_t *rec)
{
    return rec->exists && strcmp(rec->status, "CHECK_FAILED") == 0 &&
           rec->traversal == job->traversal;
}

static void classify(const cv_msg_t *job, const cv_record_t *rec, cv_observe_outcome_t *out)
{
    bool cleanup = job->phase == CV_PHASE_CLEANUP;
    if (job->watch) {
        /* Whoever settled the older action (its own observer, an operator's
         * mark-unhealthy, a newer write), this traversal checks again. */
        bool watching =
            rec->exists && strcmp(rec->version, out->version) == 0 && cv_action_in_flight(rec);
        out->kind = watching ? CV_OBSERVE_LOOK_WATCH : CV_OBSERVE_RECHECK;
        return;
    }
    if (cleanup && !rec->exists) {
        /* Deleted already (a redelivery): done again, which republishes. */
        complete(out, "", "DELETE", NULL, NULL, strdup("{}"), strdup("[]"), strdup("[]"));
        out->kind = CV_OBSERVE_REDELIVERED_DELETED;
        out->version[0] = '\0';
        return;
    }
    if (cleanup && strcmp(rec->version, out->version) == 0) {
        out->kind = CV_OBSERVE_LOOK_CLEANUP;
        return;
    }
    if (!cleanup && abandoned(job, rec)) {
        /* This traversal's own action, abandoned by mark-unhealthy: the
         * resource counts as failed, and so does its node. */
        failed(out, job, rec, rec->reason[0] ? rec->reason : "marked unhealthy");
        out->version[0] = '\0';
        return;
    }
    /* A newer action owns the resource, or the outcome is recorded failed.
     * A recorded success is looked at again (a redelivery, or a manual
     * `convergectl observe`): looking is idempotent, records what is seen
     * now, and re-satisfies the successors. */
    if (!rec->exists || strcmp(rec->version, out->version) != 0 ||
        cv_str_ends_with(rec->status, "_FAILED"))
        out->kind = CV_OBSERVE_STALE_END;
    else
        out->kind = CV_OBSERVE_LOOK;
}

/* ---- after looking: an update node ---- */

static void settle_current(const cv_msg_t *job, const cv_record_t *rec, const cv_look_t *look,
                           double now, cv_observe_outcome_t *out)
{
    if (!cv_rtype_lookup(rec->type)) {
        char why[CV_NAME_MAX + 32];
        unknown_type(why, sizeof(why), rec->type);
        failed(out, job, rec, why);
        return;
    }
    switch (look->observed) {
    case CV_OBSERVED_IN_PROGRESS:
        wait_until(out, look->retry_at, now);
        return;
    case CV_OBSERVED_FAILED:
        failed(out, job, rec, look->reason && look->reason[0] ? look->reason : "observed failure");
        return;
    case CV_OBSERVED_NEXT_STEP:
        out->kind = CV_OBSERVE_STEP;
        return;
    case CV_OBSERVED_COMPLETE:
        break;
    }
    bool deleted = strcmp(rec->action, "DELETE") == 0;
    char status[48];
    snprintf(status, sizeof(status), "%s_COMPLETE", rec->action);
    const char *ref =
        cv_rtype_reference_id(rec->type, job->resource, rec->physical_id, look->attrs);
    complete(out, deleted ? "DELETED" : status, rec->action, cv_record_json_sealed(look->attrs),
             dump(look->data), deleted ? strdup("{}") : cv_record_pass_json(ref, look->attrs), NULL,
             NULL);
}

/* ---- after looking: a cleanup node ---- */

typedef struct cleanup_look {
    json_t *remaining; /* versions to keep in the record */
    json_t *events;    /* DELETE COMPLETE of each version gone */
    double retry_at;   /* earliest time to look again; 0: nothing in progress */
    char why[512];     /* the last failure, "" when none */
} cleanup_look_t;

/* What one version being deleted answered; unknown types fail. */
static cv_observed_t version_observed(const char *type_name, const cv_look_t *look,
                                      cleanup_look_t *l)
{
    if (!cv_rtype_lookup(type_name)) {
        unknown_type(l->why, sizeof(l->why), type_name);
        return CV_OBSERVED_FAILED;
    }
    if (look->observed == CV_OBSERVED_FAILED)
        snprintf(l->why, sizeof(l->why), "%s",
                 look->reason && look->reason[0] ? look->reason : "delete failed");
    if (look->observed == CV_OBSERVED_IN_PROGRESS &&
        (l->retry_at == 0 || look->retry_at < l->retry_at))
        l->retry_at = look->retry_at;
    return look->observed;
}

static void settle_old(const json_t *entry, const cv_look_t *look, cleanup_look_t *l)
{
    const char *status = json_string_value(json_object_get(entry, "status"));
    if (!status || strcmp(status, "DELETE_IN_PROGRESS") != 0) {
        json_array_append(l->remaining, (json_t *)entry);
        return;
    }
    const char *pid = json_string_value(json_object_get(entry, "physical_id"));
    static const cv_look_t none = {CV_OBSERVED_FAILED, 0, "", NULL, NULL};
    if (version_observed(json_string_value(json_object_get(entry, "type")), look ? look : &none,
                         l) == CV_OBSERVED_COMPLETE) {
        /* Named by the version's own type, as the template wrote it. */
        const char *type = json_string_value(json_object_get(entry, "declared_type"));
        if (!type)
            type = json_string_value(json_object_get(entry, "type"));
        json_array_append_new(l->events,
                              json_pack("{s:s, s:s, s:s, s:s, s:s}", "physical_id", pid ? pid : "",
                                        "action", "DELETE", "status", "COMPLETE", "reason",
                                        "state changed", "type", type ? type : ""));
        return;
    }
    json_array_append(l->remaining, (json_t *)entry);
}

static void settle_cleanup(const cv_msg_t *job, const cv_record_t *rec,
                           const cv_observe_looks_t *looks, double now, cv_observe_outcome_t *out)
{
    cleanup_look_t l = {json_array(), json_array(), 0, ""};
    size_t i;
    const json_t *entry;
    json_array_foreach(rec->old, i, entry)
    {
        settle_old(entry, i < looks->nold ? &looks->old[i] : NULL, &l);
    }
    bool current_gone = false;
    if (strcmp(rec->status, "DELETE_IN_PROGRESS") == 0 && !l.why[0])
        current_gone = version_observed(rec->type, &looks->current, &l) == CV_OBSERVED_COMPLETE;
    if (l.why[0])
        failed(out, job, rec, l.why);
    else if (l.retry_at > 0)
        wait_until(out, l.retry_at, now);
    else
        complete(out, current_gone ? "DELETED" : "", "DELETE", NULL, NULL, strdup("{}"),
                 cv_record_old_json(l.remaining), dump(l.events));
    json_decref(l.remaining);
    json_decref(l.events);
}

/* ---- after looking: a watch ---- */

/* The older action's end is recorded as its own traversal's (complete or
 * failed); that traversal is superseded, so nothing else follows from it. */
static void settle_watch(const cv_msg_t *job, const cv_record_t *rec, const cv_look_t *look,
                         double now, cv_observe_outcome_t *out)
{
    settle_current(job, rec, look, now, out);
    if (out->kind == CV_OBSERVE_STEP)
        return; /* the walk goes on in this traversal's job: the older one's are stale */
    if (out->kind == CV_OBSERVE_WAIT) {
        /* Look at least every second: an operator's mark-unhealthy ends
         * the wait, and this traversal should not sit out a long one. */
        if (out->delay_ms > CV_WATCH_LOOK_INTERVAL_MS)
            out->delay_ms = CV_WATCH_LOOK_INTERVAL_MS;
        return;
    }
    if (out->kind == CV_OBSERVE_FAILED) {
        out->attrs = strdup("");
        out->data = strdup("");
        out->pass = strdup("{}");
        out->old = strdup("");
        out->events = strdup("");
    }
    out->kind = CV_OBSERVE_SETTLED_OLDER;
}

void cv_observe_decide(const cv_msg_t *job, const cv_record_t *rec, const cv_observe_looks_t *looks,
                       double now, cv_observe_outcome_t *out)
{
    memset(out, 0, sizeof(*out));
    cv_u64_str(out->version, job->version);
    if (!looks)
        classify(job, rec, out);
    else if (job->watch)
        settle_watch(job, rec, &looks->current, now, out);
    else if (job->phase == CV_PHASE_CLEANUP)
        settle_cleanup(job, rec, looks, now, out);
    else
        settle_current(job, rec, &looks->current, now, out);
}

cv_node_done_t cv_observe_done_of(const cv_msg_t *job, const cv_observe_outcome_t *out,
                                  const char *graph_entry, const char *physical_id)
{
    return (cv_node_done_t){.job = job,
                            .graph_entry = graph_entry,
                            .version = out->version,
                            .status = out->status,
                            .attrs = out->attrs,
                            .data = out->data,
                            .reason = out->reason,
                            .pass = out->pass,
                            .physical_id = physical_id,
                            .action = out->action,
                            .old = out->old,
                            .events = out->events,
                            .publishing = false};
}

cv_node_failed_t cv_observe_failed_of(const cv_msg_t *job, const cv_observe_outcome_t *out,
                                      const char *physical_id)
{
    return (cv_node_failed_t){.job = job,
                              .version = out->version,
                              .status = out->status,
                              .reason = out->reason,
                              .physical_id = physical_id,
                              .action = out->action};
}

cv_msg_t cv_observe_older_job(const cv_msg_t *job, const cv_record_t *rec)
{
    cv_msg_t m = *job;
    m.traversal = rec->traversal;
    m.phase = CV_PHASE_UPDATE;
    m.watch = 0;
    return m;
}

cv_msg_t cv_observe_step_job(const cv_msg_t *job, const cv_record_t *rec)
{
    cv_msg_t m = cv_observe_recheck_job(job);
    m.phase = CV_PHASE_UPDATE;
    m.version = strtoull(rec->version, NULL, 10);
    return m;
}

cv_msg_t cv_observe_recheck_job(const cv_msg_t *job)
{
    cv_msg_t m = *job;
    m.type = CV_MSG_CHECK;
    m.version = 0;
    m.watch = 0;
    m.attempt = 0;
    return m;
}
