/*
 * live_nodes — the refresh of the cluster resource manager (docs/crm.md
 * "Timers and phases"), on every model it reads: a node without a
 * heartbeat is marked down ({cluster}:down:<node> = when first seen so,
 * removed when it is back, with a System.FM health report while down),
 * expired health reports are dropped, and the planner's node reports
 * (capacity overruns of measured loads) are kept. Every node of the model
 * is seen at once, so a whole fault domain going down is one refresh.
 */
#include "live_internal.h"

#include "cv_contract.h"
#include "cv_io.h"
#include "cv_placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A node down is an Error report of System.FM on the node (Service
 * Fabric's failover manager reports a node's state), kept from the first
 * pass that saw it down (HSETNX) until it is back. */
static void node_health(cv_worker_t *w, const char *node, bool down, double since)
{
    char key[CV_KEY_MAX], source[300], field[320];
    cv_key(key, sizeof(key), CV_KEY_HEALTH, NULL, 0, NULL);
    snprintf(source, sizeof(source), "System.FM:%s", node);
    snprintf(field, sizeof(field), "%s|State", source);
    if (!down) {
        const char *argv[] = {"HDEL", key, field};
        cv_redis_argv(w->redis, 3, argv, NULL, NULL, NULL);
        return;
    }
    char desc[512];
    snprintf(desc, sizeof(desc), "Node %s is down: no heartbeat since %.0f (Unix s)", node, since);
    json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:f}", "source", source, "property",
                          "State", "state", "Error", "description", desc, "timeToLive", "Infinite",
                          "removeWhenExpired", 0, "time", since);
    char *text = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    const char *argv[] = {"HSETNX", key, field, text ? text : "{}"};
    cv_redis_argv(w->redis, 4, argv, NULL, NULL, NULL);
    free(text);
}

static void mark_nodes(cv_worker_t *w, const json_t *model)
{
    double now = json_number_value(json_object_get(model, "now"));
    const char *node;
    json_t *n;
    json_object_foreach(json_object_get(model, "nodes"), node, n)
    {
        bool alive = json_is_true(json_object_get(n, "alive"));
        const json_t *since = json_object_get(n, "down_since");
        char key[CV_KEY_MAX], t[32];
        cv_key(key, sizeof(key), CV_KEY_DOWN, NULL, 0, node);
        if (!alive && !since) {
            snprintf(t, sizeof(t), "%.3f", now);
            const char *argv[] = {"SET", key, t, "NX"};
            cv_redis_argv(w->redis, 4, argv, NULL, NULL, NULL);
            cv_info("crm: node %s is down (no heartbeat)", node);
            node_health(w, node, true, now);
        } else if (alive && since) {
            const char *argv[] = {"DEL", key};
            cv_redis_argv(w->redis, 2, argv, NULL, NULL, NULL);
            cv_info("crm: node %s is back", node);
            node_health(w, node, false, 0);
        }
    }
}

/* Seconds of a timeToLive: a number, "hh:mm:ss", or "Infinite" (-1). */
static double ttl_seconds(const json_t *v)
{
    if (json_is_number(v))
        return json_number_value(v);
    const char *s = json_string_value(v);
    int h, m, sec;
    if (s && sscanf(s, "%d:%d:%d", &h, &m, &sec) == 3)
        return h * 3600.0 + m * 60.0 + sec;
    return -1;
}

static void prune_health(cv_worker_t *w, const json_t *model)
{
    double now = json_number_value(json_object_get(model, "now"));
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_HEALTH, NULL, 0, NULL);
    const char *field;
    json_t *v;
    json_object_foreach(json_object_get(model, "health"), field, v)
    {
        if (strncmp(field, "System.FM:", 10) == 0) {
            /* a node down report outlives nothing: not of a node the cluster has */
            char node[300];
            snprintf(node, sizeof(node), "%s", field + 10);
            char *bar = strrchr(node, '|');
            if (bar)
                *bar = '\0';
            if (!json_object_get(json_object_get(model, "nodes"), node)) {
                const char *argv[] = {"HDEL", key, field};
                cv_redis_argv(w->redis, 3, argv, NULL, NULL, NULL);
            }
            continue;
        }
        json_t *r = json_loads(json_string_value(v), 0, NULL);
        double ttl = ttl_seconds(json_object_get(r, "timeToLive"));
        double at = json_number_value(json_object_get(r, "time"));
        bool expired = json_is_true(json_object_get(r, "removeWhenExpired")) && ttl >= 0 &&
                       at > 0 && at + ttl < now;
        json_decref(r);
        if (!expired)
            continue;
        const char *argv[] = {"HDEL", key, field};
        cv_redis_argv(w->redis, 3, argv, NULL, NULL, NULL);
    }
}

/* The planner's node reports (capacity overruns of measured loads): each
 * written once when it appears (its time is when it began), removed when
 * it is over. */
static void node_reports(cv_worker_t *w, const json_t *model)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_HEALTH, NULL, 0, NULL);
    json_t *now = json_object(), *reports = cv_reconcile_node_reports(model);
    size_t i;
    json_t *r;
    json_array_foreach(reports, i, r)
    {
        char field[512];
        snprintf(field, sizeof(field), "%s|%s", json_string_value(json_object_get(r, "source")),
                 json_string_value(json_object_get(r, "property")));
        json_object_set_new(now, field, json_true());
        if (json_object_get(json_object_get(model, "health"), field))
            continue;
        char *text = json_dumps(r, JSON_COMPACT);
        const char *argv[] = {"HSETNX", key, field, text ? text : "{}"};
        cv_redis_argv(w->redis, 4, argv, NULL, NULL, NULL);
        free(text);
    }
    const char *field;
    json_t *v;
    json_object_foreach(json_object_get(model, "health"), field, v)
    {
        const char *bar = strchr(field, '|');
        if (bar && strncmp(bar + 1, "NodeCapacity_", 13) == 0 &&
            strncmp(field, "System.PLB:", 11) == 0 && !json_object_get(now, field)) {
            const char *argv[] = {"HDEL", key, field};
            cv_redis_argv(w->redis, 3, argv, NULL, NULL, NULL);
        }
    }
    json_decref(reports);
    json_decref(now);
}

/* converge_health_reports{state}: the reports of the model by their state
 * ("Ok", "Warning", "Error"; anything else is left out). */
static void count_health(const json_t *model)
{
    uint64_t n[3] = {0, 0, 0};
    const char *field;
    json_t *v;
    json_object_foreach(json_object_get(model, "health"), field, v)
    {
        json_t *r = json_loads(json_string_value(v), 0, NULL);
        const char *state = json_string_value(json_object_get(r, "state"));
        if (state && strcasecmp(state, "ok") == 0)
            n[0]++;
        else if (state && strcasecmp(state, "warning") == 0)
            n[1]++;
        else if (state && strcasecmp(state, "error") == 0)
            n[2]++;
        json_decref(r);
    }
    cv_metrics_health_reports(n[0], n[1], n[2]);
}

void cv__live_refresh_nodes(cv_worker_t *w, const json_t *model)
{
    count_health(model);
    mark_nodes(w, model);
    prune_health(w, model);
    node_reports(w, model);
}
