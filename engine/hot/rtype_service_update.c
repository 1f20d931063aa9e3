/*
 * rtype_service_update — Converge::Service's `update_policy` (how a changed
 * process spec rolls out: docs/crm.md "Rolling updates") and `move_cost`
 * (what moving one of its replicas costs the cluster resource manager's
 * balancing), read with their defaults into the forms the service spec
 * holds (`updatePolicy`, `moveCost`). Neither is part of the process
 * digest: changing them replaces no replica.
 */
#include "cv__service_read.h"

#include <stdio.h>
#include <string.h>

#define UPDATE_STEP_MAX 100000
#define UPDATE_SECONDS_MAX 86400

static json_t *read_order(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const char *const orders[] = {"kill_first", "start_first", NULL};
    return cv__svc_choice(r, path, v, orders);
}

static json_t *read_mode(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const char *const modes[] = {"auto", "manual", NULL};
    return cv__svc_choice(r, path, v, modes);
}

static json_t *read_step(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, true, 1, UPDATE_STEP_MAX);
}

static json_t *read_count(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, true, 0, UPDATE_STEP_MAX);
}

static json_t *read_interval(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, false, 0, UPDATE_SECONDS_MAX);
}

static json_t *read_deadline(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, false, 1, UPDATE_SECONDS_MAX);
}

static json_t *read_flag(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_bool(r, path, v);
}

/* The bound that lets the order make progress: kill_first stops replicas
 * before their successors start, start_first starts the successors first. */
static bool bounds_allow_progress(const cv__svc_reader_t *r, const char *path, const json_t *up)
{
    bool start_first = strcmp(json_string_value(json_object_get(up, "order")), "start_first") == 0;
    const char *bound = start_first ? "max_surge" : "max_unavailable";
    if (json_integer_value(json_object_get(up, bound)) >= 1)
        return true;
    char at[CV__SVC_PATH_MAX];
    snprintf(at, sizeof(at), "%s.%s", path, bound);
    cv__svc_bad(r, at, "must be at least 1 with order %s: no step could begin",
                start_first ? "start_first" : "kill_first");
    return false;
}

json_t *cv__svc_read_update_policy(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {
        {"order", read_order},       {"step", read_step},
        {"interval", read_interval}, {"max_unavailable", read_count},
        {"max_surge", read_count},   {"health_gate", read_flag},
        {"deadline", read_deadline}, {"rollback", read_flag},
        {"mode", read_mode},         {NULL, NULL}};
    json_t *up = cv__svc_fields(r, path, v, fields);
    if (!up)
        return NULL;
    cv__svc_default(up, "order", json_string("kill_first"));
    cv__svc_default(up, "step", json_integer(1));
    cv__svc_default(up, "interval", json_integer(0));
    cv__svc_default(up, "max_unavailable", json_deep_copy(json_object_get(up, "step")));
    cv__svc_default(up, "max_surge", json_deep_copy(json_object_get(up, "step")));
    cv__svc_default(up, "health_gate", json_true());
    cv__svc_default(up, "deadline", json_integer(60));
    cv__svc_default(up, "rollback", json_true());
    cv__svc_default(up, "mode", json_string("auto"));
    if (!bounds_allow_progress(r, path, up)) {
        json_decref(up);
        return NULL;
    }
    return up;
}

json_t *cv__svc_read_move_cost(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const char *const costs[] = {"Zero", "Low", "Medium", "High", NULL};
    return cv__svc_choice(r, path, v, costs);
}
