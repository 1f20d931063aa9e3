/*
 * The node rows, table, load bars and FD × UD map of `convergectl nodes`
 * (cli_nodemap.h).
 */
#include "cli_nodemap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_or(const json_t *o, const char *key, const char *fallback)
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
    return strverscmp(str_or(x, "name", ""), str_or(y, "name", ""));
}

/* Sorts a JSON array of objects by their "name" (natural order: web-2
 * before web-10). */
static void sort_by_name(json_t *list)
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
                                              str_or(spec, "name", rid), "role",
                                              str_or(spec, "role", "instance"), "state",
                                              str_or(rep, "state", "assigned")));
    }
    sort_by_name(list);
    return list;
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
        str_or(desc, "type", ""), "fault_domain", str_or(desc, "faultDomain", fd),
        "upgrade_domain", str_or(desc, "upgradeDomain", name), "status", alive > 0 ? "up" : "down",
        "admin", str_or(hash, "admin", "enabled"), "properties",
        json_is_object(props) ? json_incref((json_t *)props) : json_object(), "capacities",
        capacities_of(desc, json_object_get(model, "settings")), "load", load, "load_source",
        has_measured ? "measured" : "declared", "replicas", (int)json_object_size(assign),
        "replica_list", replica_list(assign, report));
    if (json_object_get(desc, "error"))
        json_object_set(row, "error", json_object_get(desc, "error"));
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
    sort_by_name(rows);
    return rows;
}

void cli_node_status_text(const json_t *row, char *buf, size_t size)
{
    const char *admin = str_or(row, "admin", "enabled");
    if (strcmp(admin, "enabled") == 0)
        snprintf(buf, size, "%s", str_or(row, "status", "down"));
    else
        snprintf(buf, size, "%s/%s", str_or(row, "status", "down"), admin);
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
static json_t *row_metrics(const json_t *row)
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
    sort_by_name(list);
    return list;
}

static double capacity_of(const json_t *row, const char *metric)
{
    const json_t *c = json_object_get(json_object_get(row, "capacities"), metric);
    return json_is_number(c) ? json_number_value(c) : -1;
}

static double load_of(const json_t *row, const char *metric)
{
    return json_number_value(json_object_get(json_object_get(row, "load"), metric));
}

/* "MemoryMB 512/1024 cpu 1" (no capacity: the load alone). */
static void load_text(const json_t *row, char *buf, size_t size)
{
    json_t *metrics = row_metrics(row);
    size_t len = 0;
    buf[0] = 0;
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        char l[32], c[32];
        double cap = capacity_of(row, name);
        qty(load_of(row, name), l, sizeof(l));
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
        char *val = json_is_string(v) ? strdup(json_string_value(v)) : json_dumps(v, JSON_ENCODE_ANY);
        if (val && len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", len ? " " : "", k, val);
        free(val);
    }
}

json_t *cli_nodes_table(const json_t *rows)
{
    json_t *table = json_array();
    json_array_append_new(table, json_pack("[ssssssss]", "NAME", "TYPE", "FD", "UD", "STATUS",
                                           "REPLICAS", "LOAD", "PROPERTIES"));
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
                     str_or(r, "error", ""));
        json_array_append_new(
            table, json_pack("[sssssoss]", str_or(r, "name", ""), str_or(r, "type", ""),
                             str_or(r, "fault_domain", ""), str_or(r, "upgrade_domain", ""), status,
                             json_sprintf("%d", (int)json_integer_value(json_object_get(r, "replicas"))),
                             load, props));
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

/* ------------------------------------------------------------------------ */
/* The map                                                                  */
/* ------------------------------------------------------------------------ */

#define WRAP 34      /* replica names wrap at this width */
#define BAR_WIDTH 10 /* cells of a load bar */
#define MAX_NAME_LINES 3

#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define RESET "\033[0m"

/* Appends a line [text, colour] to a cell. */
static void add_line(json_t *cell, const char *colour, const char *text)
{
    json_array_append_new(cell, json_pack("[ss]", text, colour));
}

static const char *status_colour(const json_t *row)
{
    if (strcmp(str_or(row, "status", "down"), "up") != 0)
        return RED;
    return strcmp(str_or(row, "admin", "enabled"), "enabled") == 0 ? GREEN : YELLOW;
}

static const char *load_colour(double load, double capacity)
{
    double pct = capacity > 0 ? 100.0 * load / capacity : 0;
    return capacity < 0 ? "" : pct < 70 ? GREEN : pct < 90 ? YELLOW : RED;
}

/* "web-0.demo*" (primary), "web-1.demo(starting)" (not healthy yet). */
static void replica_word(const json_t *rep, char *buf, size_t size)
{
    const char *state = str_or(rep, "state", "assigned");
    bool healthy = strcmp(state, "healthy") == 0;
    snprintf(buf, size, "%s%s%s%s%s", str_or(rep, "name", "?"),
             strcmp(str_or(rep, "role", ""), "primary") == 0 ? "*" : "", healthy ? "" : "(",
             healthy ? "" : state, healthy ? "" : ")");
}

/* The replica names, wrapped at WRAP, at most MAX_NAME_LINES lines, the
 * last saying how many more there are. */
static void replica_lines(const json_t *list, json_t *cell)
{
    char line[WRAP + 64] = "";
    size_t nlines = 0, n = json_array_size(list);
    for (size_t i = 0; i < n; i++) {
        char word[256];
        replica_word(json_array_get(list, i), word, sizeof(word));
        if (line[0] && strlen(line) + 1 + strlen(word) > WRAP) {
            if (nlines + 1 == MAX_NAME_LINES) {
                snprintf(line + strlen(line), sizeof(line) - strlen(line), " +%zu more", n - i);
                break;
            }
            add_line(cell, "", line);
            nlines++;
            line[0] = 0;
        }
        size_t len = strlen(line);
        snprintf(line + len, sizeof(line) - len, "%s%s", len ? " " : "  ", word);
    }
    if (line[0])
        add_line(cell, "", line);
}

static void node_lines(const json_t *row, json_t *cell)
{
    char text[512], status[64];
    int n = (int)json_integer_value(json_object_get(row, "replicas"));
    cli_node_status_text(row, status, sizeof(status));
    snprintf(text, sizeof(text), "%s  %s  %d replica%s", str_or(row, "name", "?"), status, n,
             n == 1 ? "" : "s");
    add_line(cell, status_colour(row), text);
    if (json_object_get(row, "error"))
        add_line(cell, RED, "  unreadable description");
    replica_lines(json_object_get(row, "replica_list"), cell);
    json_t *metrics = row_metrics(row);
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i, m)
    {
        const char *metric = json_string_value(json_object_get(m, "name"));
        double load = load_of(row, metric), cap = capacity_of(row, metric);
        char bar[256];
        cli_load_bar(load, cap, BAR_WIDTH, metric, bar, sizeof(bar));
        snprintf(text, sizeof(text), "  %s", bar);
        add_line(cell, load_colour(load, cap), text);
    }
    json_decref(metrics);
}

/* The distinct values of `key` over the rows, in natural order. */
static json_t *domains(const json_t *rows, const char *key)
{
    json_t *seen = json_object(), *list = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *d = str_or(r, key, "");
        if (!json_object_get(seen, d)) {
            json_object_set_new(seen, d, json_true());
            json_array_append_new(list, json_pack("{s:s}", "name", d));
        }
    }
    json_decref(seen);
    sort_by_name(list);
    return list;
}

static size_t index_of(const json_t *list, const char *name)
{
    size_t i;
    json_t *d;
    json_array_foreach(list, i, d)
    {
        if (strcmp(str_or(d, "name", ""), name) == 0)
            return i;
    }
    return 0;
}

typedef struct grid {
    json_t *fds, *uds;
    size_t nfd, nud;
    json_t *cells;  /* nfd * nud arrays of [text, colour] lines */
    size_t *widths; /* column 0: the fault domains; then one per UD */
} grid_t;

static int grid_build(grid_t *g, const json_t *rows)
{
    g->fds = domains(rows, "fault_domain");
    g->uds = domains(rows, "upgrade_domain");
    g->nfd = json_array_size(g->fds);
    g->nud = json_array_size(g->uds);
    g->cells = json_array();
    g->widths = calloc(g->nud + 1, sizeof(*g->widths));
    if (!g->widths)
        return -1;
    for (size_t c = 0; c < g->nfd * g->nud; c++)
        json_array_append_new(g->cells, json_array());
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        size_t f = index_of(g->fds, str_or(r, "fault_domain", ""));
        size_t u = index_of(g->uds, str_or(r, "upgrade_domain", ""));
        json_t *cell = json_array_get(g->cells, f * g->nud + u);
        if (json_array_size(cell))
            add_line(cell, "", ""); /* a blank line between two nodes */
        node_lines(r, cell);
    }
    g->widths[0] = strlen("FD \\ UD");
    for (size_t f = 0; f < g->nfd; f++) {
        size_t w = strlen(str_or(json_array_get(g->fds, f), "name", ""));
        g->widths[0] = w > g->widths[0] ? w : g->widths[0];
    }
    for (size_t u = 0; u < g->nud; u++) {
        size_t w = strlen(str_or(json_array_get(g->uds, u), "name", ""));
        for (size_t f = 0; f < g->nfd; f++) {
            json_t *line;
            json_array_foreach(json_array_get(g->cells, f * g->nud + u), i, line)
            {
                size_t lw = strlen(json_string_value(json_array_get(line, 0)));
                w = lw > w ? lw : w;
            }
        }
        g->widths[u + 1] = w;
    }
    return 0;
}

static void grid_free(grid_t *g)
{
    json_decref(g->fds);
    json_decref(g->uds);
    json_decref(g->cells);
    free(g->widths);
}

static void rule(FILE *f, const grid_t *g)
{
    for (size_t c = 0; c <= g->nud; c++) {
        fputc('+', f);
        for (size_t k = 0; k < g->widths[c] + 2; k++)
            fputc('-', f);
    }
    fputs("+\n", f);
}

static void cell_text(FILE *f, const char *text, const char *colour, size_t width, bool use)
{
    bool on = use && colour && colour[0] && text[0];
    fprintf(f, "| %s%s%s%*s ", on ? colour : "", text, on ? RESET : "",
            (int)(width - strlen(text)), "");
}

static void grid_row(FILE *f, const grid_t *g, size_t fd, bool colour)
{
    size_t height = 1;
    for (size_t u = 0; u < g->nud; u++) {
        size_t h = json_array_size(json_array_get(g->cells, fd * g->nud + u));
        height = h > height ? h : height;
    }
    for (size_t line = 0; line < height; line++) {
        cell_text(f, line == 0 ? str_or(json_array_get(g->fds, fd), "name", "") : "", "",
                  g->widths[0], false);
        for (size_t u = 0; u < g->nud; u++) {
            json_t *l = json_array_get(json_array_get(g->cells, fd * g->nud + u), line);
            cell_text(f, l ? json_string_value(json_array_get(l, 0)) : "",
                      l ? json_string_value(json_array_get(l, 1)) : "", g->widths[u + 1], colour);
        }
        fputs("|\n", f);
    }
    rule(f, g);
}

static void summary(FILE *f, const json_t *rows)
{
    size_t up = 0, down = 0, disabled = 0, draining = 0, i;
    long replicas = 0;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *admin = str_or(r, "admin", "enabled");
        up += strcmp(str_or(r, "status", "down"), "up") == 0;
        down += strcmp(str_or(r, "status", "down"), "up") != 0;
        disabled += strcmp(admin, "disabled") == 0;
        draining += strcmp(admin, "draining") == 0;
        replicas += (long)json_integer_value(json_object_get(r, "replicas"));
    }
    fprintf(f, "%zu node%s: %zu up, %zu down", json_array_size(rows),
            json_array_size(rows) == 1 ? "" : "s", up, down);
    if (disabled)
        fprintf(f, ", %zu disabled", disabled);
    if (draining)
        fprintf(f, ", %zu draining", draining);
    fprintf(f, "; %ld replica%s assigned\n", replicas, replicas == 1 ? "" : "s");
}

char *cli_nodes_map(const json_t *rows, bool colour)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    summary(f, rows);
    grid_t g = {0};
    if (json_array_size(rows) > 0 && grid_build(&g, rows) == 0) {
        rule(f, &g);
        cell_text(f, "FD \\ UD", "", g.widths[0], false);
        for (size_t u = 0; u < g.nud; u++)
            cell_text(f, str_or(json_array_get(g.uds, u), "name", ""), "", g.widths[u + 1], false);
        fputs("|\n", f);
        rule(f, &g);
        for (size_t fd = 0; fd < g.nfd; fd++)
            grid_row(f, &g, fd, colour);
        fputs("Replicas: * primary, (state) while not healthy. Bars: load/capacity per metric\n"
              "(measured by the node's agent, else declared by its replicas).\n",
              f);
    }
    grid_free(&g);
    fclose(f);
    return text;
}
