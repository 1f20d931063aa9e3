/*
 * cv_reconcile — one plan: read the service's record, judge its placed
 * replicas (reconcile_keep.c), carry out the moves asked for
 * (reconcile_move.c), place the missing ones (reconcile_place.c), say when
 * every eligible node is blocklisted (reconcile_blocked.c), renew the
 * replicas of a changed process (reconcile_rollout.c), write the plan
 * (reconcile_plan.c). A deleting service keeps nothing; a spec that does
 * not load keeps what runs and is rejected with the loader's message.
 *
 * Calls go one way, down this list: this file; the steps; what a step asks
 * of a step below it (a move whether a replica fits, reconcile_fit.c; a
 * move or a placement which indexes are held, reconcile_keep.c; a
 * placement which nodes are eligible, reconcile_blocked.c); and at the
 * bottom the model (reconcile_model.c) and what the plan says
 * (reconcile_events.c). No step calls back up.
 */
#include "reconcile_internal.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_or(const json_t *obj, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s && s[0] ? s : dflt;
}

/* The record with its JSON-holding strings parsed; NULL when absent. */
static json_t *service_record(const json_t *model, const char *svc)
{
    static const char *const fields[] = {"spec",     "placement", "unplaced", "blocklist",
                                         "failures", "gave_up",   "blocked",  "rejected",
                                         "moves",    "rollout",   NULL};
    json_t *rec = cv__rc_json(json_object_get(json_object_get(model, "services"), svc));
    if (!json_is_object(rec)) {
        json_decref(rec);
        return NULL;
    }
    json_t *copy = json_deep_copy(rec);
    json_decref(rec);
    for (size_t i = 0; fields[i]; i++) {
        json_t *v = json_object_get(copy, fields[i]);
        if (json_is_string(v))
            json_object_set_new(copy, fields[i], cv__rc_json(v));
    }
    return copy;
}

static json_t *object_or_new(const json_t *v)
{
    return json_is_object(v) ? json_deep_copy(v) : json_object();
}

static void ctx_init(rc_ctx_t *x, const json_t *model, const char *svc, json_t *rec)
{
    memset(x, 0, sizeof(*x));
    x->model = model;
    x->svc = svc;
    x->rec = rec;
    x->nodes = json_incref(json_object_get(model, "nodes"));
    x->now = json_number_value(json_object_get(model, "now"));
    json_t *settings = cv__rc_json(json_object_get(model, "settings"));
    cv__rc_settings(settings, &x->set);
    json_decref(settings);
    const json_t *gen = json_object_get(rec, "gen");
    x->gen = json_is_integer(gen)  ? json_integer_value(gen)
             : json_is_string(gen) ? strtoll(json_string_value(gen), NULL, 10)
                                   : 0;
    x->spec = json_object_get(rec, "spec");
    x->process = json_object_get(x->spec, "process");
    x->process = json_is_object(x->process) ? json_incref(x->process) : json_object();
    x->stack = str_or(rec, "stack", "");
    x->stack_name = str_or(rec, "stack_name", x->stack);
    x->resource = str_or(rec, "resource", str_or(x->spec, "name", svc));
    x->policy = str_or(json_object_get(x->process, "restart_policy"), "policy", "Always");
    x->digest = str_or(x->process, "digest", "");
    x->deleting = strcmp(str_or(rec, "state", "active"), "deleting") == 0;
    x->kept = json_object();
    x->replace = json_object();
    x->moved_from = json_object();
    x->blocklist = object_or_new(json_object_get(rec, "blocklist"));
    x->failures = object_or_new(json_object_get(rec, "failures"));
    x->gave_up = object_or_new(json_object_get(rec, "gave_up"));
    x->eligible = json_object();
    x->moves = object_or_new(json_object_get(rec, "moves"));
    x->rollout = json_is_object(json_object_get(rec, "rollout"))
                     ? json_deep_copy(json_object_get(rec, "rollout"))
                     : NULL;
    x->avoid = json_object();
    x->held = json_object();
    x->placement = json_array();
    x->unplaced = json_array();
    x->health = json_array();
}

static void ctx_free(rc_ctx_t *x)
{
    json_decref(x->rec);
    json_decref(x->nodes);
    json_decref(x->process);
    cv_service_free(x->s);
    json_decref(x->kept);
    json_decref(x->replace);
    json_decref(x->moved_from);
    json_decref(x->blocklist);
    json_decref(x->failures);
    json_decref(x->gave_up);
    json_decref(x->eligible);
    json_decref(x->blocked);
    json_decref(x->avoid);
    json_decref(x->held);
    json_decref(x->placement);
    json_decref(x->unplaced);
    cv_reconcile_plan_t unused = {.ops = x->ops, .events = x->events}; /* a plan not made */
    cv_reconcile_plan_free(&unused);
    json_decref(x->health);
    json_decref(x->rejected);
    json_decref(x->moves);
    json_decref(x->rollout);
}

/* The spec's service description; a spec that does not load rejects the
 * service (x->rejected), keeping every replica where it is. */
static void load_service(rc_ctx_t *x)
{
    char err[1024];
    const json_t *n = json_object_get(x->spec, "replicas");
    x->target = json_is_integer(n) ? (int)json_integer_value(n) : 1;
    if (x->deleting)
        x->target = 0;
    json_t *desc = cv_reconcile_service_desc(x->spec, x->resource, x->target);
    if (!json_is_object(x->spec))
        snprintf(err, sizeof(err), "the service has no spec");
    else if (x->target < 0)
        snprintf(err, sizeof(err), "replicas: expected a count of 0 or more, not %d", x->target);
    bool loaded = json_is_object(x->spec) && x->target >= 0 &&
                  cv_service_load(desc, "spec", &x->s, err, sizeof(err)) == 0;
    /* a service being deleted goes whatever its spec says */
    if (!loaded && !x->deleting)
        x->rejected = json_pack("{s:s, s:s}", "reason", "InvalidSpec", "description", err);
    json_decref(desc);
    if (x->s)
        x->s->replicas = x->target;
}

/* The steps before the plan, in order; 0 or the placement's error. */
static int steps(rc_ctx_t *x, char *errstr, size_t errstr_size)
{
    if (x->rejected && !x->s) {
        x->target = 0; /* nothing judged: every placed replica stays as it is */
        const json_t *placement = json_object_get(x->rec, "placement");
        if (json_is_array(placement))
            json_array_extend(x->placement, (json_t *)placement);
        return 0;
    }
    cv__rc_judge(x);
    if (x->deleting)
        return 0;
    cv__rc_moves(x);
    int rc = cv__rc_place(x, errstr, errstr_size);
    if (rc)
        return rc;
    cv__rc_handovers(x);
    cv__rc_blocked(x);
    return 0;
}

int cv_reconcile(const json_t *model, const char *svc, cv_reconcile_plan_t *plan, char *errstr,
                 size_t errstr_size)
{
    memset(plan, 0, sizeof(*plan));
    json_t *rec = service_record(model, svc);
    if (!rec)
        return cv_seterr(errstr, errstr_size, CV_ENOENT, "service '%s' is not in the cluster", svc);
    rc_ctx_t x;
    ctx_init(&x, model, svc, rec);
    load_service(&x);
    int rc = steps(&x, errstr, errstr_size);
    if (!rc) {
        cv__rc_renew(&x);
        rc = cv__rc_plan(&x, plan);
        if (rc)
            cv_seterr(errstr, errstr_size, rc, "%s", cv_strerror(rc));
    }
    ctx_free(&x);
    return rc;
}
