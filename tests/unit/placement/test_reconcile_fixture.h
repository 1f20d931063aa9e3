/*
 * Fixtures for the live planner's tests: a live model built as JSON the way
 * scheduler/live reads it from Redis, a service record the way svc_put.lua
 * writes it, and a commit that applies a plan to the model the way
 * svc_commit.lua applies it to Redis, so a test can run several rounds.
 */
#ifndef TEST_RECONCILE_FIXTURE_H
#define TEST_RECONCILE_FIXTURE_H

#include "cv_reconcile.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RX_FN static __attribute__((unused))
#define RX_NOW 1000000.0
#define RX_SVC "s1.web.abcd1234"

/* An empty model at RX_NOW. */
RX_FN json_t *rx_model(void)
{
    return json_pack("{s:f, s:{}, s:{}, s:{}, s:{}}", "now", RX_NOW, "settings", "nodes",
                     "services", "health");
}

/* A node up and enabled, MemoryMB capacity `mem` (-1: none), in fd:/<fd>
 * and upgrade domain <ud>, with a property zone = <fd>. */
RX_FN json_t *rx_node(json_t *m, const char *name, const char *fd, const char *ud, int mem)
{
    char fdu[64];
    snprintf(fdu, sizeof(fdu), "fd:/%s", fd);
    json_t *desc = json_pack("{s:s, s:s, s:s, s:{s:s}}", "name", name, "faultDomain", fdu,
                             "upgradeDomain", ud, "properties", "zone", fd);
    if (mem >= 0)
        json_object_set_new(desc, "capacities", json_pack("{s:i}", "MemoryMB", mem));
    json_t *n = json_pack("{s:o, s:b, s:s, s:i, s:{}, s:{}}", "description", desc, "alive", 1,
                          "admin", "enabled", "fence_ms", 10000, "assign", "report");
    json_object_set_new(json_object_get(m, "nodes"), name, n);
    return n;
}

/* The 3 x 3 grid: n1..n9 over fd1..fd3 x ud1..ud3 (node i in fd (i-1)/3+1,
 * ud (i-1)%3+1). */
RX_FN json_t *rx_grid(int mem)
{
    json_t *m = rx_model();
    for (int i = 1; i <= 9; i++) {
        char name[16], fd[16], ud[16];
        snprintf(name, sizeof(name), "n%d", i);
        snprintf(fd, sizeof(fd), "fd%d", (i - 1) / 3 + 1);
        snprintf(ud, sizeof(ud), "ud%d", (i - 1) % 3 + 1);
        rx_node(m, name, fd, ud, mem);
    }
    return m;
}

RX_FN json_t *rx_nodeobj(json_t *m, const char *name)
{
    return json_object_get(json_object_get(m, "nodes"), name);
}

/* A service "web" of stack "demo": `replicas` replicas of 64 MemoryMB each. */
RX_FN json_t *rx_service(json_t *m, const char *svc, int replicas, bool stateful)
{
    json_t *spec = json_pack(
        "{s:s, s:s, s:i, s:b, s:[{s:s, s:i, s:i}], s:{s:[{s:s, s:[s, s]}], s:[{s:s, s:i}], "
        "s:{s:s}, s:s}}",
        "name", "web", "serviceType", "web", "replicas", replicas, "stateful", stateful, "metrics",
        "name", "MemoryMB", "primaryLoad", 64, "secondaryLoad", 32, "process", "tasks", "name",
        "main", "command", "sleep", "1000", "ports", "name", "http", "port", 0, "restart_policy",
        "policy", "Always", "digest", "d1");
    json_t *rec =
        json_pack("{s:o, s:s, s:i, s:s, s:s, s:s, s:[]}", "spec", spec, "state", "active", "gen", 0,
                  "stack", "s1", "stack_name", "demo", "resource", "web", "placement");
    json_object_set_new(json_object_get(m, "services"), svc, rec);
    return rec;
}

RX_FN json_t *rx_spec(json_t *m, const char *svc)
{
    return json_object_get(json_object_get(json_object_get(m, "services"), svc), "spec");
}

/* The plan of `svc` on `m` in its JSON form (cv_reconcile_plan_json), which
 * the tests read. */
RX_FN json_t *rx_plan(const json_t *m, const char *svc)
{
    char err[512] = "";
    cv_reconcile_plan_t plan;
    int rc = cv_reconcile(m, svc, &plan, err, sizeof(err));
    if (rc != 0) {
        fprintf(stderr, "cv_reconcile: %s (%d)\n", err, rc);
        abort();
    }
    json_t *p = cv_reconcile_plan_json(&plan);
    cv_reconcile_plan_free(&plan);
    if (!p)
        abort();
    return p;
}

/* What svc_commit.lua does with a plan, on the model. */
RX_FN void rx_commit(json_t *m, const json_t *plan)
{
    const char *svc = json_string_value(json_object_get(plan, "svc"));
    json_t *rec = json_object_get(json_object_get(m, "services"), svc);
    static const char *const fields[] = {"placement", "unplaced", "blocklist", "failures",
                                         "gave_up",   "blocked",  "rejected",  NULL};
    for (size_t i = 0; fields[i]; i++)
        json_object_set(rec, fields[i], json_object_get(plan, fields[i]));
    json_object_set_new(rec, "gen",
                        json_integer(json_integer_value(json_object_get(rec, "gen")) + 1));
    size_t i;
    json_t *op;
    json_array_foreach(json_object_get(plan, "ops"), i, op)
    {
        json_t *assign = json_object_get(
            rx_nodeobj(m, json_string_value(json_object_get(op, "node"))), "assign");
        const char *rid = json_string_value(json_object_get(op, "rid"));
        if (strcmp(json_string_value(json_object_get(op, "op")), "assign") == 0)
            json_object_set(assign, rid, json_object_get(op, "spec"));
        else
            json_object_del(assign, rid);
    }
    json_t *health = json_object_get(m, "health");
    char prefix[256];
    cv_reconcile_health_source(prefix, sizeof(prefix), svc);
    const char *field;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(health, tmp, field, v)
    {
        if (strncmp(field, prefix, strlen(prefix)) == 0)
            json_object_del(health, field);
    }
    json_array_foreach(json_object_get(plan, "health"), i, v)
    {
        char key[512];
        snprintf(key, sizeof(key), "%s|%s", json_string_value(json_object_get(v, "source")),
                 json_string_value(json_object_get(v, "property")));
        json_object_set(health, key, v);
    }
    if (json_is_true(json_object_get(plan, "remove")))
        json_object_del(json_object_get(m, "services"), svc);
}

/* Plans and commits; returns the plan. */
RX_FN json_t *rx_round(json_t *m, const char *svc)
{
    json_t *p = rx_plan(m, svc);
    rx_commit(m, p);
    return p;
}

/* The node of index `index` in the plan's placement, or "". */
RX_FN const char *rx_node_of(const json_t *plan, int index)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(plan, "placement"), i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) == index)
            return json_string_value(json_object_get(e, "node"));
    }
    return "";
}

RX_FN const char *rx_rid_of(const json_t *plan, int index)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(plan, "placement"), i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) == index)
            return json_string_value(json_object_get(e, "rid"));
    }
    return "";
}

/* How many ops of kind `op` ("assign", "unassign") the plan has. */
RX_FN size_t rx_ops(const json_t *plan, const char *op)
{
    size_t i, n = 0;
    json_t *o;
    json_array_foreach(json_object_get(plan, "ops"), i, o)
    {
        n += strcmp(json_string_value(json_object_get(o, "op")), op) == 0;
    }
    return n;
}

/* Whether some event's reason contains `text`. */
RX_FN bool rx_event(const json_t *plan, const char *text)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(plan, "events"), i, e)
    {
        if (strstr(json_string_value(json_object_get(e, "reason")), text))
            return true;
    }
    return false;
}

RX_FN void rx_dump_events(const json_t *plan)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(plan, "events"), i, e)
    {
        fprintf(stderr, "  event: %s\n", json_string_value(json_object_get(e, "reason")));
    }
}

/* The health report of the plan whose property starts with `prefix`. */
RX_FN const json_t *rx_health(const json_t *plan, const char *prefix)
{
    size_t i;
    json_t *h;
    json_array_foreach(json_object_get(plan, "health"), i, h)
    {
        if (strncmp(json_string_value(json_object_get(h, "property")), prefix, strlen(prefix)) == 0)
            return h;
    }
    return NULL;
}

/* Marks a node down since `since`. */
RX_FN void rx_down(json_t *m, const char *node, double since)
{
    json_t *n = rx_nodeobj(m, node);
    json_object_set_new(n, "alive", json_false());
    json_object_set_new(n, "down_since", json_real(since));
}

#endif
