#include "cli_graph.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cli_graph_colour(const char *status)
{
    static const struct {
        const char *suffix, *colour;
    } by_state[] = {{"_IN_PROGRESS", "yellow"}, {"_FAILED", "salmon"}, {"_COMPLETE", "palegreen"}};
    if (strncmp(status, "INIT_", 5) == 0)
        return "lightgrey";
    size_t len = strlen(status);
    for (size_t i = 0; i < sizeof(by_state) / sizeof(by_state[0]); i++) {
        size_t n = strlen(by_state[i].suffix);
        if (len > n && strcmp(status + len - n, by_state[i].suffix) == 0)
            return by_state[i].colour;
    }
    return "lightgrey";
}

/* `s` inside a dot quoted string. In an ID a control character is "\u00XX"
 * with one backslash, which no other name produces (a name's own backslash
 * is doubled). In a label, where dot reads backslashes as escapes, it is
 * "\\u00XX", shown as \u00XX. */
static void put_escaped(FILE *f, const char *s, bool label)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7F)
            fprintf(f, "%s\\u%04x", label ? "\\" : "", *p);
        else
            fputc(*p, f);
    }
}

static void put_id(FILE *f, const char *name)
{
    fputc('"', f);
    put_escaped(f, name, false);
    fputc('"', f);
}

static void put_node(FILE *f, const cli_graph_node_t *node)
{
    fputs("  ", f);
    put_id(f, node->name);
    fputs(" [label=\"", f);
    put_escaped(f, node->name, true);
    fputs("\\n", f);
    put_escaped(f, node->type, true);
    fputs("\\n", f);
    put_escaped(f, node->status, true);
    fprintf(f, "\", fillcolor=\"%s\"];\n", cli_graph_colour(node->status));
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The edges, skipping names that are no node (looked up in the sorted
 * names, so that a stack of 10,000 resources draws at once). */
static bool put_edges(FILE *f, const cli_graph_node_t *nodes, size_t n)
{
    const char **names = malloc((n ? n : 1) * sizeof(*names));
    if (!names)
        return false;
    for (size_t i = 0; i < n; i++)
        names[i] = nodes[i].name;
    qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++)
        for (size_t d = 0; d < nodes[i].ndepends; d++) {
            const char *to = nodes[i].depends[d];
            if (!bsearch(&to, names, n, sizeof(*names), by_name))
                continue;
            fputs("  ", f);
            put_id(f, nodes[i].name);
            fputs(" -> ", f);
            put_id(f, to);
            fputs(";\n", f);
        }
    free(names);
    return true;
}

char *cli_graph_dot(const char *title, const cli_graph_node_t *nodes, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fputs("digraph ", f);
    put_id(f, title);
    fputs(" {\n"
          "  // an edge A -> B: A depends on B (B is created first, deleted last)\n"
          "  rankdir=BT;\n"
          "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n",
          f);
    for (size_t i = 0; i < n; i++)
        put_node(f, &nodes[i]);
    bool ok = put_edges(f, nodes, n);
    fputs("}\n", f);
    if (fclose(f) != 0 || !ok) {
        free(text);
        return NULL;
    }
    return text;
}
