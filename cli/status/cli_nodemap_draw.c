/*
 * Drawing the FD × UD map of `convergectl nodes --map` (cli_nodemap.h): a
 * grid of text cells, one row per fault domain and one column per upgrade
 * domain, padded on the text's width so that colours never move a border.
 */
#include "cli_nodemap.h"
#include "cli_noderow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The map                                                                  */
/* ------------------------------------------------------------------------ */

#define WRAP 34      /* replica names wrap at this width */
#define BAR_WIDTH 10 /* cells of a load bar */
#define MAX_NAME_LINES 3
#define COMPACT_ABOVE 4 /* nodes in a cell beyond which each node takes one line */

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
    if (strcmp(cli_noderow_str(row, "status", "down"), "up") != 0)
        return RED;
    return strcmp(cli_noderow_str(row, "admin", "enabled"), "enabled") == 0 ? GREEN : YELLOW;
}

static const char *load_colour(double load, double capacity)
{
    double pct = capacity > 0 ? 100.0 * load / capacity : 0;
    return capacity < 0 ? "" : pct < 70 ? GREEN : pct < 90 ? YELLOW : RED;
}

/* "web-0.demo*" (primary), "web-1.demo(starting)" (not healthy yet). */
static void replica_word(const json_t *rep, char *buf, size_t size)
{
    const char *state = cli_noderow_str(rep, "state", "assigned");
    bool healthy = strcmp(state, "healthy") == 0;
    snprintf(buf, size, "%s%s%s%s%s", cli_noderow_str(rep, "name", "?"),
             strcmp(cli_noderow_str(rep, "role", ""), "primary") == 0 ? "*" : "",
             healthy ? "" : "(", healthy ? "" : state, healthy ? "" : ")");
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
    snprintf(text, sizeof(text), "%s  %s  %d replica%s", cli_noderow_str(row, "name", "?"), status,
             n, n == 1 ? "" : "s");
    add_line(cell, status_colour(row), text);
    if (json_object_get(row, "error"))
        add_line(cell, RED, "  unreadable description");
    replica_lines(json_object_get(row, "replica_list"), cell);
    json_t *metrics = cli_noderow_metrics(row);
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i, m)
    {
        const char *metric = json_string_value(json_object_get(m, "name"));
        double load = cli_noderow_load(row, metric), cap = cli_noderow_capacity(row, metric);
        char bar[256];
        cli_load_bar(load, cap, BAR_WIDTH, metric, bar, sizeof(bar));
        snprintf(text, sizeof(text), "  %s", bar);
        add_line(cell, load_colour(load, cap), text);
    }
    json_decref(metrics);
}

/* One line for a node in a crowded cell: "sim-7 up 12r [####......]  40% MemoryMB",
 * the bar of its most loaded metric (a metric without capacity has none). */
static void compact_line(const json_t *row, json_t *cell)
{
    char text[512], status[64], bar[256] = "";
    cli_node_status_text(row, status, sizeof(status));
    json_t *metrics = cli_noderow_metrics(row);
    double worst = -1;
    const char *colour = status_colour(row);
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i, m)
    {
        const char *metric = json_string_value(json_object_get(m, "name"));
        double load = cli_noderow_load(row, metric), cap = cli_noderow_capacity(row, metric);
        double pct = cap > 0 ? load / cap : cap == 0 && load > 0 ? 2 : 0;
        if (cap < 0 || pct <= worst)
            continue;
        worst = pct;
        cli_load_bar(load, cap, BAR_WIDTH, metric, bar, sizeof(bar));
        char *numbers = strrchr(bar, ' '); /* " load/capacity": the full map has them */
        if (numbers)
            *numbers = 0;
        if (strcmp(colour, GREEN) == 0)
            colour = load_colour(load, cap);
    }
    json_decref(metrics);
    snprintf(text, sizeof(text), "%s %s %dr%s%s", cli_noderow_str(row, "name", "?"), status,
             (int)json_integer_value(json_object_get(row, "replicas")), bar[0] ? " " : "", bar);
    add_line(cell, colour, text);
}

/* The most nodes one FD x UD cell holds. */
static size_t crowd(const json_t *rows, const json_t *fds, const json_t *uds);

/* The distinct values of `key` over the rows, in natural order. */
static json_t *domains(const json_t *rows, const char *key)
{
    json_t *seen = json_object(), *list = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *d = cli_noderow_str(r, key, "");
        if (!json_object_get(seen, d)) {
            json_object_set_new(seen, d, json_true());
            json_array_append_new(list, json_pack("{s:s}", "name", d));
        }
    }
    json_decref(seen);
    cli_noderow_sort(list);
    return list;
}

static size_t index_of(const json_t *list, const char *name)
{
    size_t i;
    json_t *d;
    json_array_foreach(list, i, d)
    {
        if (strcmp(cli_noderow_str(d, "name", ""), name) == 0)
            return i;
    }
    return 0;
}

typedef struct grid {
    json_t *fds, *uds;
    size_t nfd, nud;
    json_t *cells;  /* nfd * nud arrays of [text, colour] lines */
    bool compact;   /* one line per node: some cell is crowded */
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
    g->compact = crowd(rows, g->fds, g->uds) > COMPACT_ABOVE;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        size_t f = index_of(g->fds, cli_noderow_str(r, "fault_domain", ""));
        size_t u = index_of(g->uds, cli_noderow_str(r, "upgrade_domain", ""));
        json_t *cell = json_array_get(g->cells, f * g->nud + u);
        if (g->compact) {
            compact_line(r, cell);
            continue;
        }
        if (json_array_size(cell))
            add_line(cell, "", ""); /* a blank line between two nodes */
        node_lines(r, cell);
    }
    g->widths[0] = strlen("FD \\ UD");
    for (size_t f = 0; f < g->nfd; f++) {
        size_t w = strlen(cli_noderow_str(json_array_get(g->fds, f), "name", ""));
        g->widths[0] = w > g->widths[0] ? w : g->widths[0];
    }
    for (size_t u = 0; u < g->nud; u++) {
        size_t w = strlen(cli_noderow_str(json_array_get(g->uds, u), "name", ""));
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

static size_t crowd(const json_t *rows, const json_t *fds, const json_t *uds)
{
    size_t nud = json_array_size(uds), ncells = json_array_size(fds) * nud, most = 0;
    size_t *count = calloc(ncells ? ncells : 1, sizeof(*count));
    if (!count)
        return 0;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        size_t c = index_of(fds, cli_noderow_str(r, "fault_domain", "")) * nud +
                   index_of(uds, cli_noderow_str(r, "upgrade_domain", ""));
        if (++count[c] > most)
            most = count[c];
    }
    free(count);
    return most;
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
    fprintf(f, "| %s%s%s%*s ", on ? colour : "", text, on ? RESET : "", (int)(width - strlen(text)),
            "");
}

static void grid_row(FILE *f, const grid_t *g, size_t fd, bool colour)
{
    size_t height = 1;
    for (size_t u = 0; u < g->nud; u++) {
        size_t h = json_array_size(json_array_get(g->cells, fd * g->nud + u));
        height = h > height ? h : height;
    }
    for (size_t line = 0; line < height; line++) {
        cell_text(f, line == 0 ? cli_noderow_str(json_array_get(g->fds, fd), "name", "") : "", "",
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
        const char *admin = cli_noderow_str(r, "admin", "enabled");
        up += strcmp(cli_noderow_str(r, "status", "down"), "up") == 0;
        down += strcmp(cli_noderow_str(r, "status", "down"), "up") != 0;
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
            cell_text(f, cli_noderow_str(json_array_get(g.uds, u), "name", ""), "", g.widths[u + 1],
                      false);
        fputs("|\n", f);
        rule(f, &g);
        for (size_t fd = 0; fd < g.nfd; fd++)
            grid_row(f, &g, fd, colour);
        fputs(g.compact
                  ? "One line per node: status, replicas (r) and its most loaded metric\n"
                    "(measured by the node's agent, else declared by its replicas).\n"
                  : "Replicas: * primary, (state) while not healthy. Bars: load/capacity per "
                    "metric\n(measured by the node's agent, else declared by its replicas).\n",
              f);
    }
    grid_free(&g);
    fclose(f);
    return text;
}
