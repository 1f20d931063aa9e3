/*
 * The node rows, table and load bars of `convergectl nodes` (cli_nodemap.h);
 * the map is drawn in cli_nodemap_draw.c.
 */
#include "cli_nodemap.h"
#include "cli_noderow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cli_noderow_str(const json_t *o, const char *key, const char *fallback)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && s[0] ? s : fallback;
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

/* A quantity as JSON: an integer when it is one (1024, not 1024.0). */
static json_t *number(double v)
{
    return v == floor(v) && fabs(v) < 1e15 ? json_integer((json_int_t)v) : json_real(v);
}

/* Adds the numeric members of `from` to `into` (replacing). */
static void set_numbers(json_t *into, const json_t *from)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)from, k, v)
    {
        if (json_is_number(v))
            json_object_set_new(into, k, number(json_number_value(v)));
    }
}

/* The node type's capacities, then the node's own over them (cluster
 * format: a node inherits its type's). A negative capacity is unlimited. */
static json_t *capacities_of(const json_t *desc, const json_t *settings)
{
    json_t *caps = json_object();
    const char *type = json_string_value(json_object_get(desc, "type"));
    const json_t *types = json_object_get(settings, "nodeTypes");
    if (type)
        set_numbers(caps, json_object_get(json_object_get(types, type), "capacities"));
    set_numbers(caps, json_object_get(desc, "capacities"));
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(caps, tmp, k, v)
    {
        if (json_number_value(v) < 0)
            json_object_del(caps, k);
    }
    return caps;
}

/* The declared load of the replicas assigned to the node: the sum of their
 * specs' `load`. */
static json_t *declared_load(const json_t *assign)
{
    json_t *load = json_object();
    const char *rid, *metric;
    json_t *spec, *v;
    json_object_foreach((json_t *)assign, rid, spec)
    {
        json_object_foreach(json_object_get(spec, "load"), metric, v)
        {
            double have = json_number_value(json_object_get(load, metric));
            if (json_is_number(v))
                json_object_set_new(load, metric, number(have + json_number_value(v)));
        }
    }
    return load;
}

static int by_name(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    return strverscmp(cli_noderow_str(x, "name", ""), cli_noderow_str(y, "name", ""));
}

/* Sorts a JSON array of objects by their "name" (natural order: web-2
 * before web-10). */
void cli_noderow_sort(json_t *list)
{
    size_t n = json_array_size(list);
    json_t **items = malloc((n + 1) * sizeof(*items));
    if (!items)
        return;
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(list, i));
    qsort(items, n, sizeof(*items), by_name);
    json_array_clear(list);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, items[i]);
    free(items);
}

/* The replicas assigned to the node, with the state its agent reports. */
static json_t *replica_list(const json_t *assign, const json_t *report)
{
    json_t *list = json_array();
    const char *rid;
    json_t *spec;
    json_object_foreach((json_t *)assign, rid, spec)
    {
        const json_t *rep = json_object_get(report, rid);
        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s}", "rid", rid, "name",
                                              cli_noderow_str(spec, "name", rid), "role",
                                              cli_noderow_str(spec, "role", "instance"), "state",
                                              cli_noderow_str(rep, "state", "assigned")));
    }
    cli_noderow_sort(list);
    return list;
}

/* What the node's agent says of itself (its record's fields as written),
 * and how long its heartbeat still lives. */
static json_t *agent_of(const json_t *hash, json_int_t alive_ms)
{
    static const char *const fields[] = {"agent",    "address",      "ports", "last_seen",
                                         "fence_ms", "replica_user", "allow", NULL};
    json_t *agent = json_object();
    for (size_t i = 0; fields[i]; i++) {
        json_t *v = json_object_get(hash, fields[i]);
        if (json_is_string(v))
            json_object_set(agent, fields[i], v);
    }
    json_object_set_new(agent, "heartbeat_ms", json_integer(alive_ms));
    return agent;
}

static json_t *node_row(const json_t *model, const char *name, const json_t *desc)
{
    const json_t *hash = json_object_get(json_object_get(model, "node"), name);
    const json_t *assign = json_object_get(json_object_get(model, "assign"), name);
    const json_t *report = json_object_get(json_object_get(model, "report"), name);
    json_int_t alive = json_integer_value(json_object_get(json_object_get(model, "alive"), name));
    const json_t *measured = json_object_get(hash, "load");
    bool has_measured = json_is_object(measured) && json_object_size(measured) > 0;
    json_t *load = has_measured ? json_object() : declared_load(assign);
    if (has_measured)
        set_numbers(load, measured);
    char fd[512];
    snprintf(fd, sizeof(fd), "fd:/%s", name);
    const json_t *props = json_object_get(desc, "properties");
    json_t *row = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:s, s:i, s:o}", "name", name, "type",
        cli_noderow_str(desc, "type", ""), "fault_domain", cli_noderow_str(desc, "faultDomain", fd),
        "upgrade_domain", cli_noderow_str(desc, "upgradeDomain", name), "status",
        alive > 0 ? "up" : "down", "admin", cli_noderow_str(hash, "admin", "enabled"), "properties",
        json_is_object(props) ? json_incref((json_t *)props) : json_object(), "capacities",
        capacities_of(desc, json_object_get(model, "settings")), "load", load, "load_source",
        has_measured ? "measured" : "declared", "replicas", (int)json_object_size(assign),
        "replica_list", replica_list(assign, report));
    if (json_object_get(desc, "error"))
        json_object_set(row, "error", json_object_get(desc, "error"));
    json_object_set_new(row, "agent", agent_of(hash, alive));
    /* How the node's agent confines replicas (docs/security.md); "unknown"
     * for an agent older than that field, or no agent yet. */
    json_object_set_new(row, "isolation",
                        json_string(cli_noderow_str(hash, "isolation", "unknown")));
    return row;
}

json_t *cli_nodes_rows(const json_t *model)
{
    json_t *rows = json_array();
    const char *name;
    json_t *desc;
    json_object_foreach(json_object_get(model, "nodes"), name, desc)
    {
        json_array_append_new(rows, node_row(model, name, desc));
    }
    cli_noderow_sort(rows);
    return rows;
}

void cli_node_status_text(const json_t *row, char *buf, size_t size)
{
    const char *admin = cli_noderow_str(row, "admin", "enabled");
    if (strcmp(admin, "enabled") == 0)
        snprintf(buf, size, "%s", cli_noderow_str(row, "status", "down"));
    else
        snprintf(buf, size, "%s/%s", cli_noderow_str(row, "status", "down"), admin);
}

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

/* A quantity as written by a person: 512, 0.5. */
static void qty(double v, char *buf, size_t size)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.2g", v);
}

/* The metrics of a row: those with a capacity or a load, sorted. */
json_t *cli_noderow_metrics(const json_t *row)
{
    json_t *names = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(row, "capacities"), k, v)
    {
        json_object_set_new(names, k, json_true());
    }
    json_object_foreach(json_object_get(row, "load"), k, v)
    {
        json_object_set_new(names, k, json_true());
    }
    json_t *list = json_array();
    json_object_foreach(names, k, v)
    {
        json_array_append_new(list, json_pack("{s:s}", "name", k));
    }
    json_decref(names);
    cli_noderow_sort(list);
    return list;
}

double cli_noderow_capacity(const json_t *row, const char *metric)
{
    const json_t *c = json_object_get(json_object_get(row, "capacities"), metric);
    return json_is_number(c) ? json_number_value(c) : -1;
}

double cli_noderow_load(const json_t *row, const char *metric)
{
    return json_number_value(json_object_get(json_object_get(row, "load"), metric));
}

/* "MemoryMB 512/1024 cpu 1" (no capacity: the load alone). */
static void load_text(const json_t *row, char *buf, size_t size)
{
    json_t *metrics = cli_noderow_metrics(row);
    size_t len = 0;
    buf[0] = 0;
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        char l[32], c[32];
        double cap = cli_noderow_capacity(row, name);
        qty(cli_noderow_load(row, name), l, sizeof(l));
        qty(cap, c, sizeof(c));
        if (len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s %s%s%s", len ? " " : "", name, l,
                                    cap >= 0 ? "/" : "", cap >= 0 ? c : "");
    }
    json_decref(metrics);
}

/* "k=v k=v", the properties as written in a placement constraint. */
static void props_text(const json_t *props, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)props, k, v)
    {
        char *val =
            json_is_string(v) ? strdup(json_string_value(v)) : json_dumps(v, JSON_ENCODE_ANY);
        if (val && len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", len ? " " : "", k, val);
        free(val);
    }
}

json_t *cli_nodes_table(const json_t *rows)
{
    json_t *table = json_array();
    json_array_append_new(table, json_pack("[sssssssss]", "NAME", "TYPE", "FD", "UD", "STATUS",
                                           "REPLICAS", "LOAD", "PROPERTIES", "ISOLATION"));
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        char status[64], load[1024], props[1024];
        cli_node_status_text(r, status, sizeof(status));
        load_text(r, load, sizeof(load));
        props_text(json_object_get(r, "properties"), props, sizeof(props));
        if (json_object_get(r, "error"))
            snprintf(props, sizeof(props), "unreadable description: %s",
                     cli_noderow_str(r, "error", ""));
        json_array_append_new(
            table,
            json_pack("[sssssosss]", cli_noderow_str(r, "name", ""), cli_noderow_str(r, "type", ""),
                      cli_noderow_str(r, "fault_domain", ""),
                      cli_noderow_str(r, "upgrade_domain", ""), status,
                      json_sprintf("%d", (int)json_integer_value(json_object_get(r, "replicas"))),
                      load, props[0] ? props : "-", cli_noderow_str(r, "isolation", "unknown")));
    }
    return table;
}

void cli_load_bar(double load, double capacity, int width, const char *metric, char *buf,
                  size_t size)
{
    char l[32], c[32];
    qty(load, l, sizeof(l));
    if (capacity < 0) {
        snprintf(buf, size, "%s %s (no capacity)", metric, l);
        return;
    }
    qty(capacity, c, sizeof(c));
    double pct = capacity > 0 ? 100.0 * load / capacity : (load > 0 ? 100.0 + load : 0);
    int fill = (int)floor(pct * width / 100.0 + 0.5);
    fill = fill < 0 ? 0 : fill > width ? width : fill;
    if (load > 0 && fill == 0)
        fill = 1; /* some load is never drawn as none */
    char bar[256];
    int w = width < (int)sizeof(bar) - 3 ? width : (int)sizeof(bar) - 3;
    bar[0] = '[';
    for (int i = 0; i < w; i++)
        bar[1 + i] = i < fill ? '#' : '.';
    bar[1 + w] = ']';
    bar[2 + w] = 0;
    snprintf(buf, size, "%s%s%3.0f%% %s %s/%s", bar, pct > 100.0 ? "!" : " ", pct, metric, l, c);
}
