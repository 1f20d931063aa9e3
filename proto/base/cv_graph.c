/*
 * cv_graph — dense-index dependency graph.
 *
 * Nodes are numbered 0..n-1 in insertion order so that every per-node array
 * (colours, in-degrees, the topological order) is a plain int array. Names
 * map to indexes through an open-addressing hash table, and every edge is
 * also kept in a hash set so that re-adding an edge is O(1) even for a node
 * with a huge fan-out (a ResourceGroup of 100k members). Nothing here
 * recurses: templates reach a million resources through nested stacks.
 */
#include "cv_graph.h"

#include "cv_base.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CV_VEC(int) intvec_t;

typedef struct node {
    char *name;
    uint64_t hash; /* of name; kept so that growing the table never rehashes strings */
    intvec_t preds, succs;
} node_t;

typedef CV_VEC(node_t) nodes_t;

struct cv_graph {
    nodes_t nodes;
    int *slots; /* name table: node index, or -1 when empty */
    size_t nslots;
    uint64_t *edges; /* edge set: parent << 32 | child, EDGE_EMPTY when empty */
    size_t nedges, edge_slots;
};

#define EDGE_EMPTY UINT64_MAX
#define MIN_SLOTS 16

/* ---------------------------------------------------------------- hashing */

/* The splitmix64 finaliser: edge keys are sequential integers, which would
 * cluster badly in a linear-probing table without mixing. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* ---------------------------------------------------------------- name table */

static size_t name_slot(const cv_graph_t *g, const char *name, uint64_t h)
{
    size_t mask = g->nslots - 1;
    size_t i = (size_t)h & mask;
    while (g->slots[i] >= 0) {
        const node_t *nd = &g->nodes.v[g->slots[i]];
        if (nd->hash == h && strcmp(nd->name, name) == 0)
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

/* Keeps the load factor at or below 1/2. */
static int names_grow(cv_graph_t *g)
{
    size_t nslots = g->nslots ? g->nslots * 2 : MIN_SLOTS;
    int *slots = malloc(nslots * sizeof(*slots));
    if (!slots)
        return CV_ENOMEM;
    memset(slots, 0xff, nslots * sizeof(*slots)); /* all -1 */
    for (size_t k = 0; k < g->nodes.n; k++) {
        size_t i = (size_t)g->nodes.v[k].hash & (nslots - 1);
        while (slots[i] >= 0)
            i = (i + 1) & (nslots - 1);
        slots[i] = (int)k;
    }
    free(g->slots);
    g->slots = slots;
    g->nslots = nslots;
    return 0;
}

/* ---------------------------------------------------------------- edge set */

static uint64_t edge_key(int parent, int child)
{
    return (uint64_t)(uint32_t)parent << 32 | (uint32_t)child;
}

static size_t edge_slot(const uint64_t *edges, size_t nslots, uint64_t key)
{
    size_t i = (size_t)mix64(key) & (nslots - 1);
    while (edges[i] != EDGE_EMPTY && edges[i] != key)
        i = (i + 1) & (nslots - 1);
    return i;
}

static int edges_grow(cv_graph_t *g)
{
    size_t nslots = g->edge_slots ? g->edge_slots * 2 : MIN_SLOTS;
    uint64_t *edges = malloc(nslots * sizeof(*edges));
    if (!edges)
        return CV_ENOMEM;
    memset(edges, 0xff, nslots * sizeof(*edges)); /* all EDGE_EMPTY */
    for (size_t k = 0; k < g->edge_slots; k++)
        if (g->edges[k] != EDGE_EMPTY)
            edges[edge_slot(edges, nslots, g->edges[k])] = g->edges[k];
    free(g->edges);
    g->edges = edges;
    g->edge_slots = nslots;
    return 0;
}

/* ---------------------------------------------------------------- building */

cv_graph_t *cv_graph_new(void)
{
    return calloc(1, sizeof(cv_graph_t));
}

void cv_graph_free(cv_graph_t *g)
{
    if (!g)
        return;
    for (size_t k = 0; k < g->nodes.n; k++) {
        free(g->nodes.v[k].name);
        free(g->nodes.v[k].preds.v);
        free(g->nodes.v[k].succs.v);
    }
    free(g->nodes.v);
    free(g->slots);
    free(g->edges);
    free(g);
}

int cv_graph_add_node(cv_graph_t *g, const char *name)
{
    if (!name)
        return CV_EINVAL;
    if (2 * (g->nodes.n + 1) > g->nslots && names_grow(g) != 0)
        return CV_ENOMEM;
    uint64_t h = cv_hash_str(name);
    size_t slot = name_slot(g, name, h);
    if (g->slots[slot] >= 0)
        return g->slots[slot];
    char *copy = g->nodes.n < INT_MAX ? strdup(name) : NULL;
    if (!copy || cv_vec_push(&g->nodes, (node_t){.name = copy, .hash = h}) != 0) {
        free(copy);
        return CV_ENOMEM;
    }
    g->slots[slot] = (int)g->nodes.n - 1;
    return g->slots[slot];
}

int cv_graph_find(const cv_graph_t *g, const char *name)
{
    if (!name || g->nslots == 0)
        return CV_ENOENT;
    size_t slot = name_slot(g, name, cv_hash_str(name));
    return g->slots[slot] >= 0 ? g->slots[slot] : CV_ENOENT;
}

static bool valid_node(const cv_graph_t *g, int node)
{
    return node >= 0 && (size_t)node < g->nodes.n;
}

int cv_graph_add_edge(cv_graph_t *g, int parent, int child)
{
    if (!valid_node(g, parent) || !valid_node(g, child))
        return CV_EINVAL;
    if (2 * (g->nedges + 1) > g->edge_slots && edges_grow(g) != 0)
        return CV_ENOMEM;
    uint64_t key = edge_key(parent, child);
    size_t slot = edge_slot(g->edges, g->edge_slots, key);
    if (g->edges[slot] == key)
        return 0;
    node_t *p = &g->nodes.v[parent], *c = &g->nodes.v[child];
    if (cv_vec_push(&p->succs, child) != 0)
        return CV_ENOMEM;
    if (cv_vec_push(&c->preds, parent) != 0) {
        p->succs.n--; /* keep both directions in step */
        return CV_ENOMEM;
    }
    g->edges[slot] = key;
    g->nedges++;
    return 0;
}

/* ---------------------------------------------------------------- queries */

size_t cv_graph_count(const cv_graph_t *g)
{
    return g->nodes.n;
}

const char *cv_graph_name(const cv_graph_t *g, int node)
{
    return valid_node(g, node) ? g->nodes.v[node].name : NULL;
}

static const int *adjacent(const intvec_t *iv, size_t *n)
{
    *n = iv->n;
    return iv->v;
}

const int *cv_graph_preds(const cv_graph_t *g, int node, size_t *n)
{
    if (!valid_node(g, node)) {
        *n = 0;
        return NULL;
    }
    return adjacent(&g->nodes.v[node].preds, n);
}

const int *cv_graph_succs(const cv_graph_t *g, int node, size_t *n)
{
    if (!valid_node(g, node)) {
        *n = 0;
        return NULL;
    }
    return adjacent(&g->nodes.v[node].succs, n);
}

/* ---------------------------------------------------------------- cycles */

enum { WHITE = 0, GREY = 1, BLACK = 2 };

/* Appends to a bounded buffer; once full, the text ends in "..." so that a
 * truncated cycle never reads as a complete one. */
typedef struct sbuf {
    char *s;
    size_t size, len;
    bool full;
} sbuf_t;

static void sbuf_add(sbuf_t *b, const char *text)
{
    if (b->full || b->size == 0)
        return;
    size_t n = strlen(text);
    if (b->len + n < b->size) {
        memcpy(b->s + b->len, text, n + 1);
        b->len += n;
        return;
    }
    b->full = true;
    size_t keep = b->size - 1;
    memcpy(b->s + b->len, text, keep - b->len);
    b->s[keep] = '\0';
    for (size_t i = keep >= 3 ? keep - 3 : 0; i < keep; i++)
        b->s[i] = '.';
}

/* Writes the cycle made by the DFS path stack[from..depth-1] back to its
 * first node. */
static void write_cycle(const cv_graph_t *g, const int *stack, size_t from, size_t depth,
                        char *errstr, size_t errstr_size)
{
    sbuf_t b = {errstr, errstr ? errstr_size : 0, 0, false};
    if (b.size)
        errstr[0] = '\0';
    for (size_t i = from; i < depth; i++) {
        sbuf_add(&b, g->nodes.v[stack[i]].name);
        sbuf_add(&b, " -> ");
    }
    sbuf_add(&b, g->nodes.v[stack[from]].name);
}

/*
 * Depth-first search from `root` with an explicit stack of (node, next
 * successor to look at). A successor found GREY is on the current path, so
 * the path from it to the top of the stack is a cycle.
 */
static int dfs_from(const cv_graph_t *g, int root, unsigned char *colour, int *stack,
                    unsigned *next, char *errstr, size_t errstr_size)
{
    size_t depth = 0;
    stack[depth] = root;
    next[depth++] = 0;
    colour[root] = GREY;
    while (depth > 0) {
        int u = stack[depth - 1];
        const intvec_t *succs = &g->nodes.v[u].succs;
        if (next[depth - 1] == succs->n) {
            colour[u] = BLACK;
            depth--;
            continue;
        }
        int v = succs->v[next[depth - 1]++];
        if (colour[v] == GREY) {
            size_t from = depth - 1;
            while (stack[from] != v)
                from--;
            write_cycle(g, stack, from, depth, errstr, errstr_size);
            return CV_ECYCLE;
        }
        if (colour[v] == WHITE) {
            colour[v] = GREY;
            stack[depth] = v;
            next[depth++] = 0;
        }
    }
    return 0;
}

int cv_graph_find_cycle(const cv_graph_t *g, char *errstr, size_t errstr_size)
{
    if (g->nodes.n == 0)
        return 0;
    unsigned char *colour = calloc(g->nodes.n, 1);
    int *stack = malloc(g->nodes.n * sizeof(*stack));
    unsigned *next = malloc(g->nodes.n * sizeof(*next));
    int rc = 0;
    if (!colour || !stack || !next)
        rc = cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory looking for cycles");
    for (size_t k = 0; rc == 0 && k < g->nodes.n; k++)
        if (colour[k] == WHITE)
            rc = dfs_from(g, (int)k, colour, stack, next, errstr, errstr_size);
    free(colour);
    free(stack);
    free(next);
    return rc;
}

/* ---------------------------------------------------------------- topological order */

/* A binary min-heap of node indexes: Kahn's algorithm takes the smallest
 * ready index, so ties come out in insertion order. */
typedef struct heap {
    int *v;
    size_t n;
} heap_t;

static void heap_push(heap_t *h, int x)
{
    size_t i = h->n++;
    while (i > 0 && h->v[(i - 1) / 2] > x) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = x;
}

static int heap_pop(heap_t *h)
{
    int top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1] < h->v[c])
            c++;
        if (h->v[c] >= last)
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n > 0)
        h->v[i] = last;
    return top;
}

int cv_graph_topo_order(const cv_graph_t *g, int *order)
{
    if (g->nodes.n == 0)
        return 0;
    unsigned *indegree = malloc(g->nodes.n * sizeof(*indegree));
    heap_t ready = {malloc(g->nodes.n * sizeof(int)), 0};
    if (!indegree || !ready.v) {
        free(indegree);
        free(ready.v);
        return CV_ENOMEM;
    }
    for (size_t k = 0; k < g->nodes.n; k++) {
        indegree[k] = g->nodes.v[k].preds.n;
        if (indegree[k] == 0)
            heap_push(&ready, (int)k);
    }
    size_t done = 0;
    while (ready.n > 0) {
        int u = heap_pop(&ready);
        order[done++] = u;
        const intvec_t *succs = &g->nodes.v[u].succs;
        for (unsigned i = 0; i < succs->n; i++)
            if (--indegree[succs->v[i]] == 0)
                heap_push(&ready, succs->v[i]);
    }
    free(indegree);
    free(ready.v);
    return done == g->nodes.n ? 0 : CV_ECYCLE;
}
