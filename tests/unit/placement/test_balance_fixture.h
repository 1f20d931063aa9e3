/*
 * Fixtures for the cluster resource manager's planner (cv_balance): a live
 * model as scheduler/live reads it, nodes with a type, domains and
 * capacities, services of one or more replicas with declared metrics and a
 * move cost, reported loads, and helpers reading the result.
 */
#ifndef TEST_BALANCE_FIXTURE_H
#define TEST_BALANCE_FIXTURE_H

#include "cv_balance.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BX_FN static __attribute__((unused))
#define BX_NOW 2000000.0

BX_FN json_t *bx_model(void)
{
    return json_pack("{s:f, s:{}, s:{}, s:{}}", "now", BX_NOW, "settings", "nodes", "services");
}

/* The "crm" object of the model's settings. */
BX_FN json_t *bx_crm(json_t *m)
{
    json_t *settings = json_object_get(m, "settings");
    json_t *crm = json_object_get(settings, "crm");
    if (!crm) {
        crm = json_object();
        json_object_set_new(settings, "crm", crm);
    }
    return crm;
}

/* A node up and enabled of `type` in fd:/<fd>, upgrade domain <ud>, with
 * capacities `caps` (JSON text of an object, or NULL: none). */
BX_FN json_t *bx_node(json_t *m, const char *name, const char *type, const char *fd, const char *ud,
                      const char *caps)
{
    char fdu[64];
    snprintf(fdu, sizeof(fdu), "fd:/%s", fd);
    json_t *desc = json_pack("{s:s, s:s, s:s, s:s, s:{s:s}}", "name", name, "type", type,
                             "faultDomain", fdu, "upgradeDomain", ud, "properties", "zone", fd);
    if (caps)
        json_object_set_new(desc, "capacities", json_loads(caps, 0, NULL));
    json_t *n = json_pack("{s:o, s:b, s:s, s:{}, s:{}}", "description", desc, "alive", 1, "admin",
                          "enabled", "assign", "report");
    json_object_set_new(json_object_get(m, "nodes"), name, n);
    return n;
}

/* A service with no replica yet: metrics as JSON text of the spec's
 * "metrics" list, a move cost (NULL: none given) and a placement
 * constraint (NULL: none). */
BX_FN json_t *bx_service(json_t *m, const char *svc, const char *metrics, const char *cost,
                         const char *constraint)
{
    json_t *spec = json_pack("{s:s, s:s, s:i, s:b, s:o, s:{s:s}}", "name", svc, "serviceType", svc,
                             "replicas", 0, "stateful", 0, "metrics", json_loads(metrics, 0, NULL),
                             "process", "digest", "d1");
    if (cost)
        json_object_set_new(spec, "moveCost", json_string(cost));
    if (constraint)
        json_object_set_new(spec, "placementConstraints", json_string(constraint));
    json_t *rec =
        json_pack("{s:o, s:s, s:i, s:s, s:s, s:s, s:[]}", "spec", spec, "state", "active", "gen", 1,
                  "stack", "st", "stack_name", "demo", "resource", svc, "placement");
    json_object_set_new(json_object_get(m, "services"), svc, rec);
    return rec;
}

/* One more replica of the service, on `node`. */
BX_FN void bx_place(json_t *m, const char *svc, const char *node)
{
    json_t *rec = json_object_get(json_object_get(m, "services"), svc);
    json_t *spec = json_object_get(rec, "spec");
    json_t *placement = json_object_get(rec, "placement");
    int index = (int)json_array_size(placement);
    char rid[128];
    snprintf(rid, sizeof(rid), "%s/%d/1", svc, index);
    json_array_append_new(placement, json_pack("{s:i, s:s, s:s, s:s, s:i}", "index", index, "rid",
                                               rid, "node", node, "role", "instance", "since", 1));
    json_object_set_new(spec, "replicas", json_integer(index + 1));
}

/* `count` services named <prefix><node>-<i> of one replica each on `node`,
 * each carrying `load` of `metric`. */
BX_FN void bx_units(json_t *m, const char *prefix, const char *node, int count, const char *metric,
                    int load, const char *cost)
{
    for (int i = 0; i < count; i++) {
        char svc[128], metrics[256];
        snprintf(svc, sizeof(svc), "%s%s-%d", prefix, node, i);
        snprintf(metrics, sizeof(metrics), "[{\"name\": \"%s\", \"primaryLoad\": %d}]", metric,
                 load);
        bx_service(m, svc, metrics, cost, NULL);
        bx_place(m, svc, node);
    }
}

/* A load reported for replica `index` (convergectl report-load). */
BX_FN void bx_report_load(json_t *m, const char *svc, int index, const char *metric, double value)
{
    json_t *rec = json_object_get(json_object_get(m, "services"), svc);
    json_t *loads = json_object_get(rec, "loads");
    if (!loads) {
        loads = json_object();
        json_object_set_new(rec, "loads", loads);
    }
    char key[16];
    snprintf(key, sizeof(key), "%d", index);
    json_t *e = json_object_get(loads, key);
    if (!e) {
        e = json_pack("{s:f}", "time", BX_NOW);
        json_object_set_new(loads, key, e);
    }
    json_object_set_new(e, metric, json_real(value));
}

BX_FN json_t *bx_run(const json_t *m, cv_balance_phase_t phase, const json_t *state)
{
    char err[512] = "";
    json_t *st = state ? json_incref((json_t *)state) : json_object();
    json_t *r = cv_balance(m, phase, st, err, sizeof(err));
    json_decref(st);
    if (!r)
        fprintf(stderr, "cv_balance: %s\n", err);
    return r;
}

BX_FN size_t bx_nmoves(const json_t *r)
{
    return json_array_size(json_object_get(r, "moves"));
}

/* The imbalance entry of `metric` and node type `type` (NULL: the cluster). */
BX_FN const json_t *bx_entry(const json_t *r, const char *metric, const char *type)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(r, "imbalance"), i, e)
    {
        const char *t = json_string_value(json_object_get(e, "nodeType"));
        if (strcmp(json_string_value(json_object_get(e, "metric")), metric) == 0 &&
            ((!t && !type) || (t && type && strcmp(t, type) == 0)))
            return e;
    }
    return NULL;
}

BX_FN bool bx_imbalanced(const json_t *r, const char *metric, const char *type)
{
    return json_is_true(json_object_get(bx_entry(r, metric, type), "imbalanced"));
}

BX_FN const char *bx_why(const json_t *r)
{
    const char *why = json_string_value(json_object_get(r, "why"));
    return why ? why : "";
}

/* Applies the result's moves to the model's placements. */
BX_FN void bx_apply(json_t *m, const json_t *r)
{
    size_t i;
    const json_t *mv;
    json_array_foreach(json_object_get(r, "moves"), i, mv)
    {
        const char *svc = json_string_value(json_object_get(mv, "svc"));
        json_t *placement =
            json_object_get(json_object_get(json_object_get(m, "services"), svc), "placement");
        json_t *e =
            json_array_get(placement, (size_t)json_integer_value(json_object_get(mv, "index")));
        json_object_set(e, "node", json_object_get(mv, "to"));
    }
}

/* The node a replica is placed on in the model. */
BX_FN const char *bx_node_of(const json_t *m, const char *svc, int index)
{
    const json_t *placement =
        json_object_get(json_object_get(json_object_get(m, "services"), svc), "placement");
    return json_string_value(json_object_get(json_array_get(placement, (size_t)index), "node"));
}

#endif
