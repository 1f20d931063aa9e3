/*
 * The replica and health views (cli_replview.h).
 */
#include "cli_replview.h"
#include "cli_duration.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_or(const json_t *o, const char *key, const char *fallback)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && s[0] ? s : fallback;
}

static const json_t *at(const json_t *model, const char *part, const char *name)
{
    return json_object_get(json_object_get(model, part), name);
}

/* ------------------------------------------------------------------------ */
/* Replicas                                                                 */
/* ------------------------------------------------------------------------ */

static const char *health_of(const char *state)
{
    static const char *const map[][2] = {{"healthy", "ok"},       {"unhealthy", "failing"},
                                         {"backoff", "failing"},  {"failed", "failing"},
                                         {"starting", "pending"}, {"running", "pending"}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(state, map[i][0]) == 0)
            return map[i][1];
    return "";
}

/* {"http": "127.0.0.1:31001"} from the report's address and ports, and
 * the first of them (by name) as the endpoint. */
static json_t *endpoints_of(const json_t *report, json_t **first)
{
    json_t *eps = json_object();
    const char *addr = str_or(report, "address", "127.0.0.1"), *name, *best = NULL;
    json_t *port;
    json_object_foreach(json_object_get(report, "ports"), name, port)
    {
        if (!json_is_integer(port))
            continue;
        json_object_set_new(eps, name,
                            json_sprintf("%s:%lld", addr, (long long)json_integer_value(port)));
        if (!best || strcmp(name, best) < 0)
            best = name;
    }
    *first = best ? json_incref(json_object_get(eps, best)) : json_null();
    return eps;
}

static json_t *placed_row(const json_t *model, const json_t *svc_rec, const char *resource,
                          const char *svc, const json_t *p)
{
    const char *node = str_or(p, "node", ""), *rid = str_or(p, "rid", "");
    const json_t *report = json_object_get(at(model, "report", node), rid);
    const json_t *spec = json_object_get(at(model, "assign", node), rid);
    bool up = json_integer_value(at(model, "alive", node)) > 0;
    int index = (int)json_integer_value(json_object_get(p, "index"));
    const char *digest = str_or(report, "digest", ""), *want = str_or(spec, "digest", "");
    const char *state = !up ? "node_down"
                        : report && digest[0] && want[0] && strcmp(digest, want) != 0
                            ? "outdated"
                            : str_or(report, "state", "assigned");
    const json_t *since = json_object_get(report, "since");
    if (!json_is_number(since))
        since = json_object_get(p, "since");
    json_t *first, *eps = endpoints_of(report, &first);
    const json_t *pid = json_object_get(report, "pid"),
                 *restarts = json_object_get(report, "restarts");
    const char *name = str_or(spec, "name", "");
    return json_pack(
        "{s:s, s:s, s:i, s:o, s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:s}", "service",
        resource, "svc", svc, "index", index, "name",
        name[0] ? json_string(name)
                : json_sprintf("%s-%d.%s", resource, index, str_or(svc_rec, "stack_name", "?")),
        "rid", rid, "node", node, "role", str_or(p, "role", "instance"), "status", state, "pid",
        json_is_integer(pid) ? json_incref((json_t *)pid) : json_null(), "restarts",
        json_is_integer(restarts) ? json_incref((json_t *)restarts) : json_integer(0), "health",
        up ? health_of(state) : "", "since",
        json_is_number(since) ? json_incref((json_t *)since) : json_null(), "endpoint", first,
        "endpoints", eps, "reason",
        !up ? "the node's heartbeat expired" : str_or(report, "reason", ""));
}

/* "NodeCapacity eliminated 3 node(s); FaultDomain eliminated 1 node(s)". */
static void elimination_text(const json_t *seq, char *buf, size_t size)
{
    size_t len = 0, i;
    json_t *step;
    buf[0] = 0;
    json_array_foreach(seq, i, step)
    {
        size_t n = json_array_size(json_object_get(step, "eliminated"));
        if (n && len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s eliminated %zu node(s)",
                                    len ? "; " : "", str_or(step, "constraint", "?"), n);
    }
    if (!buf[0])
        snprintf(buf, size, "no node to place it on");
}

static json_t *unplaced_row(const json_t *svc_rec, const char *resource, const char *svc,
                            const json_t *u)
{
    int index = (int)json_integer_value(json_object_get(u, "index"));
    char why[1024];
    elimination_text(json_object_get(u, "eliminationSequence"), why, sizeof(why));
    return json_pack("{s:s, s:s, s:i, s:o, s:n, s:n, s:n, s:s, s:n, s:i, s:s, s:n, s:n, s:{}, "
                     "s:s}",
                     "service", resource, "svc", svc, "index", index, "name",
                     json_sprintf("%s-%d.%s", resource, index, str_or(svc_rec, "stack_name", "?")),
                     "rid", "node", "role", "status", "unplaced", "pid", "restarts", 0, "health",
                     "", "since", "endpoint", "endpoints", "reason", why);
}

static int by_service_index(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strverscmp(str_or(x, "service", ""), str_or(y, "service", ""));
    if (c)
        return c;
    json_int_t i = json_integer_value(json_object_get(x, "index"));
    json_int_t j = json_integer_value(json_object_get(y, "index"));
    return (i > j) - (i < j);
}

static void sort_rows(json_t *rows, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(rows);
    json_t **items = malloc((n + 1) * sizeof(*items));
    if (!items)
        return;
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(rows, i));
    qsort(items, n, sizeof(*items), cmp);
    json_array_clear(rows);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(rows, items[i]);
    free(items);
}

json_t *cli_replica_rows(const json_t *model, const json_t *services)
{
    json_t *rows = json_array();
    size_t i, j;
    json_t *s, *p;
    json_array_foreach(services, i, s)
    {
        const char *resource = str_or(s, "resource", "?"), *svc = str_or(s, "svc", "");
        const json_t *rec = at(model, "services", svc);
        json_array_foreach(json_object_get(rec, "placement"), j, p)
        {
            json_array_append_new(rows, placed_row(model, rec, resource, svc, p));
        }
        json_array_foreach(json_object_get(rec, "unplaced"), j, p)
        {
            json_array_append_new(rows, unplaced_row(rec, resource, svc, p));
        }
    }
    sort_rows(rows, by_service_index);
    return rows;
}

static json_t *age_cell(const json_t *since, double now)
{
    if (!json_is_number(since))
        return json_string("");
    char buf[32];
    cli_format_duration(now - json_number_value(since), buf, sizeof(buf));
    return json_string(buf);
}

static json_t *int_cell(const json_t *v)
{
    return json_is_integer(v) ? json_sprintf("%lld", (long long)json_integer_value(v))
                              : json_string("");
}

json_t *cli_replica_table(const json_t *rows, double now)
{
    json_t *table = json_array();
    json_array_append_new(table,
                          json_pack("[sssssssssss]", "SERVICE", "INDEX", "NAME", "NODE", "ROLE",
                                    "STATUS", "PID", "RESTARTS", "HEALTH", "SINCE", "ENDPOINT"));
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *status = str_or(r, "status", "");
        const char *reason = str_or(r, "reason", "");
        json_t *status_cell =
            reason[0] && strcmp(status, "healthy") != 0 && strcmp(status, "running") != 0
                ? json_sprintf("%s (%s)", status, reason)
                : json_string(status);
        json_array_append_new(
            table,
            json_pack("[sssssooosoo]", str_or(r, "service", ""), "", str_or(r, "name", ""),
                      str_or(r, "node", "-"), str_or(r, "role", "-"), status_cell,
                      int_cell(json_object_get(r, "pid")),
                      strcmp(status, "unplaced") == 0 ? json_string("")
                                                      : int_cell(json_object_get(r, "restarts")),
                      str_or(r, "health", ""), age_cell(json_object_get(r, "since"), now),
                      json_is_string(json_object_get(r, "endpoint"))
                          ? json_incref(json_object_get(r, "endpoint"))
                          : json_string("")));
        json_array_set_new(json_array_get(table, i + 1), 1, int_cell(json_object_get(r, "index")));
    }
    return table;
}

/* ------------------------------------------------------------------------ */
/* Health                                                                   */
/* ------------------------------------------------------------------------ */

static int state_rank(const char *state)
{
    return strcmp(state, "Error") == 0 ? 0 : strcmp(state, "Warning") == 0 ? 1 : 2;
}

static int by_state(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = state_rank(str_or(x, "state", "")) - state_rank(str_or(y, "state", ""));
    if (!c)
        c = strcmp(str_or(x, "source", ""), str_or(y, "source", ""));
    return c ? c : strcmp(str_or(x, "property", ""), str_or(y, "property", ""));
}

/* A report as shown: expired ones hidden (NULL) or turned to Error. */
static json_t *health_row(const char *field, const json_t *rep, double now)
{
    if (!json_is_object(rep) || json_object_get(rep, "error"))
        return json_pack("{s:s, s:s, s:s, s:s+, s:b}", "source", field, "property", "", "state",
                         "Error", "description",
                         "unreadable health report: ", str_or(rep, "error", "not an object"),
                         "expired", 0);
    json_t *row = json_deep_copy(rep);
    const json_t *ttl = json_object_get(rep, "timeToLive"), *t = json_object_get(rep, "time");
    bool expired = json_is_number(ttl) && json_number_value(ttl) > 0 && json_is_number(t) &&
                   json_number_value(t) + json_number_value(ttl) < now;
    if (expired && json_is_true(json_object_get(rep, "removeWhenExpired"))) {
        json_decref(row);
        return NULL;
    }
    if (expired)
        json_object_set_new(row, "state", json_string("Error"));
    json_object_set_new(row, "expired", json_boolean(expired));
    return row;
}

json_t *cli_health_rows(const json_t *reports, double now)
{
    json_t *rows = json_array();
    const char *field;
    json_t *rep;
    json_object_foreach((json_t *)reports, field, rep)
    {
        json_t *row = health_row(field, rep, now);
        if (row)
            json_array_append_new(rows, row);
    }
    sort_rows(rows, by_state);
    return rows;
}

json_t *cli_health_table(const json_t *rows, double now)
{
    json_t *table = json_array();
    json_array_append_new(
        table, json_pack("[sssss]", "STATE", "SOURCE", "PROPERTY", "AGE", "DESCRIPTION"));
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        bool expired = json_is_true(json_object_get(r, "expired"));
        json_array_append_new(table, json_pack("[sssoo]", str_or(r, "state", "?"),
                                               str_or(r, "source", ""), str_or(r, "property", ""),
                                               age_cell(json_object_get(r, "time"), now),
                                               json_sprintf("%s%s", expired ? "(expired) " : "",
                                                            str_or(r, "description", ""))));
    }
    return table;
}
