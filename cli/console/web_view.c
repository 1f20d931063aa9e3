/*
 * The graph and cluster documents of converge-web (web_view.h).
 */
#include "web_view.h"

#include "cv_status.h"

#include <stdbool.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char *web_view_state(const char *status)
{
    if (ends_with(status, "_IN_PROGRESS"))
        return "in_progress";
    if (ends_with(status, "_FAILED"))
        return "failed";
    if (ends_with(status, "_COMPLETE") && strncmp(status, "INIT_", 5) != 0)
        return "complete";
    return "init";
}

static const char *field(const json_t *o, const char *key, const char *fallback)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && s[0] ? s : fallback;
}

static json_t *graph_node(const json_t *res, const json_t *rec)
{
    const char *status = field(rec, "status", "INIT_COMPLETE");
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "name", field(res, "name", ""), "type",
                     cli_reported_type(res, rec), "status", status, "state", web_view_state(status),
                     "reason", field(rec, "reason", ""), "physical_id",
                     field(rec, "physical_id", ""));
}

json_t *web_view_graph(const json_t *resources, const json_t *records)
{
    json_t *names = json_object(), *nodes = json_array(), *edges = json_array();
    size_t i, j;
    json_t *res, *dep;
    json_array_foreach(resources, i, res)
    {
        json_object_set_new(names, field(res, "name", ""), json_true());
    }
    json_array_foreach(resources, i, res)
    {
        const char *name = field(res, "name", "");
        json_array_append_new(nodes, graph_node(res, json_object_get(records, name)));
        json_array_foreach(json_object_get(res, "depends"), j, dep)
        {
            const char *from = json_string_value(dep);
            if (from && json_object_get(names, from))
                json_array_append_new(edges, json_pack("{s:s, s:s}", "from", from, "to", name));
        }
    }
    json_decref(names);
    return json_pack("{s:o, s:o}", "nodes", nodes, "edges", edges);
}

/* ------------------------------------------------------------------------ */
/* The cluster map                                                          */
/* ------------------------------------------------------------------------ */

/* Adds s to the sorted set `list` (an array of strings) unless there. */
static void add_sorted(json_t *list, const char *s)
{
    size_t i, at = json_array_size(list);
    json_t *v;
    json_array_foreach(list, i, v)
    {
        int c = strcmp(json_string_value(v), s);
        if (c == 0)
            return;
        if (c > 0 && at == json_array_size(list))
            at = i;
    }
    json_array_insert_new(list, at, json_string(s));
}

static json_t *metrics_of(const json_t *row, const json_t *buffers)
{
    json_t *out = json_array(), *names = cli_noderow_metrics(row), *m;
    size_t i;
    json_array_foreach(names, i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        double cap = cli_noderow_capacity(row, name);
        double buffer = json_number_value(json_object_get(buffers, name));
        json_t *e = json_pack("{s:s, s:f, s:f}", "name", name, "load", cli_noderow_load(row, name),
                              "buffer", buffer);
        json_object_set_new(e, "capacity", cap < 0 ? json_null() : json_real(cap));
        json_object_set_new(e, "usable", cap < 0 ? json_null() : json_real(cap * (1 - buffer)));
        json_array_append_new(out, e);
    }
    json_decref(names);
    return out;
}

static const char *map_status(const json_t *row)
{
    if (strcmp(cli_noderow_str(row, "status", "down"), "up") != 0)
        return "down";
    return strcmp(cli_noderow_str(row, "admin", "enabled"), "enabled") == 0 ? "up" : "disabled";
}

static json_t *map_node(const json_t *row, const json_t *buffers)
{
    json_t *list = json_object_get(row, "replica_list");
    json_t *n =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "name",
                  cli_noderow_str(row, "name", ""), "type", cli_noderow_str(row, "type", ""),
                  "fault_domain", cli_noderow_str(row, "fault_domain", ""), "upgrade_domain",
                  cli_noderow_str(row, "upgrade_domain", ""), "status", map_status(row), "admin",
                  cli_noderow_str(row, "admin", "enabled"), "load_source",
                  cli_noderow_str(row, "load_source", ""), "replicas",
                  list ? json_incref(list) : json_array(), "metrics", metrics_of(row, buffers));
    if (json_object_get(row, "error"))
        json_object_set(n, "error", json_object_get(row, "error"));
    return n;
}

json_t *web_view_cluster(const json_t *rows, const json_t *settings, const json_t *health)
{
    const json_t *buffers =
        json_object_get(json_object_get(settings, "settings"), "nodeBufferPercentage");
    json_t *fds = json_array(), *uds = json_array(), *nodes = json_array();
    long long up = 0, down = 0, disabled = 0, replicas = 0;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        json_t *n = map_node(row, buffers);
        const char *st = json_string_value(json_object_get(n, "status"));
        up += strcmp(st, "up") == 0;
        down += strcmp(st, "down") == 0;
        disabled += strcmp(st, "disabled") == 0;
        replicas += (long long)json_array_size(json_object_get(n, "replicas"));
        add_sorted(fds, json_string_value(json_object_get(n, "fault_domain")));
        add_sorted(uds, json_string_value(json_object_get(n, "upgrade_domain")));
        json_array_append_new(nodes, n);
    }
    json_t *summary =
        json_pack("{s:I, s:I, s:I, s:I, s:I}", "nodes", (json_int_t)json_array_size(rows), "up",
                  (json_int_t)up, "down", (json_int_t)down, "disabled", (json_int_t)disabled,
                  "replicas", (json_int_t)replicas);
    return json_pack("{s:o, s:o, s:o, s:o, s:o}", "fault_domains", fds, "upgrade_domains", uds,
                     "summary", summary, "nodes", nodes, "health",
                     health ? json_incref((json_t *)health) : json_array());
}
