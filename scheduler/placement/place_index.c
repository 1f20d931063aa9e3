/*
 * place_index — dense ids for the fault domains at every level, the upgrade
 * domains and the (leaf FD, UD) cells of a cluster; the adaptive policy rule
 * and the per-level bounds built on them.
 *
 * Built once per placement call in O(nodes x levels) hash probes: counting
 * replicas per domain is then array indexing, which is what keeps a
 * 10,000-node placement in the sub-millisecond range.
 */
#include "place_internal.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- interning */

/* Key: (a, s, s2). FD domains use (parent, path component, NULL), where a
 * NULL component is the padding below a short path; full FD URIs and UDs
 * use (0, name, NULL); cells use (0, FD URI, UD). */
typedef struct intern_slot {
    uint32_t a;
    uint32_t id; /* PL_NONE: empty */
    const char *s, *s2;
} intern_slot_t;

typedef struct intern {
    intern_slot_t *slots;
    size_t mask;
    uint32_t n;
} intern_t;

/* Tables start small and double: a cluster has far fewer domains than
 * nodes, and a table that fits in cache is what keeps the per-call index
 * cheap. */
static int intern_init(intern_t *t, size_t size)
{
    t->slots = malloc(size * sizeof(*t->slots));
    if (!t->slots)
        return CV_ENOMEM;
    for (size_t i = 0; i < size; i++)
        t->slots[i].id = PL_NONE;
    t->mask = size - 1;
    t->n = 0;
    return 0;
}

/* Eight bytes at a time: domain names are short, and a byte-wise hash
 * was most of the cost of building the index. */
static uint64_t str_hash(uint64_t h, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    uint64_t tail = s ? n + 1 : 0; /* NULL and "" differ */
    if (n)
        memcpy(&tail, s, n);
    h = (h ^ tail) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
}

static uint64_t key_hash(uint32_t a, const char *s, const char *s2)
{
    return str_hash(str_hash(0x9e3779b97f4a7c15ULL ^ a, s), s2);
}

static bool str_equal(const char *x, const char *y)
{
    return x == y || (x && y && strcmp(x, y) == 0);
}

static bool key_equal(const intern_slot_t *e, uint32_t a, const char *s, const char *s2)
{
    return e->a == a && str_equal(e->s, s) && str_equal(e->s2, s2);
}

static int intern_grow(intern_t *t)
{
    intern_t bigger;
    if (intern_init(&bigger, (t->mask + 1) * 2))
        return CV_ENOMEM;
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].id == PL_NONE)
            continue;
        const intern_slot_t *e = &t->slots[i];
        size_t j = key_hash(e->a, e->s, e->s2) & bigger.mask;
        while (bigger.slots[j].id != PL_NONE)
            j = (j + 1) & bigger.mask;
        bigger.slots[j] = *e;
    }
    bigger.n = t->n;
    free(t->slots);
    *t = bigger;
    return 0;
}

/* The id of the key, a new one (and *fresh) when first seen; PL_NONE when
 * out of memory. */
static uint32_t intern(intern_t *t, uint32_t a, const char *s, const char *s2, bool *fresh)
{
    size_t i = key_hash(a, s, s2) & t->mask;
    while (t->slots[i].id != PL_NONE) {
        if (key_equal(&t->slots[i], a, s, s2)) {
            *fresh = false;
            return t->slots[i].id;
        }
        i = (i + 1) & t->mask;
    }
    if ((size_t)(t->n + 1) * 2 > t->mask + 1) {
        if (intern_grow(t))
            return PL_NONE;
        return intern(t, a, s, s2, fresh);
    }
    t->slots[i] = (intern_slot_t){a, t->n, s, s2};
    *fresh = true;
    return t->n++;
}

/* ---------------------------------------------------------------- the index */

/* FD levels considered: the deepest path, at least one level, and at most
 * PL_MAX_LEVELS (deeper components are ignored; no real hierarchy is 64 deep). */
static size_t max_depth(const cv_cluster_t *c)
{
    size_t depth = 1;
    for (size_t i = 0; i < c->nnodes; i++)
        if (c->nodes[i].fd_depth > depth)
            depth = c->nodes[i].fd_depth;
    return depth < PL_MAX_LEVELS ? depth : PL_MAX_LEVELS;
}

static int index_alloc(pl_index_t *ix, size_t nnodes, size_t nlevels)
{
    size_t nfd_max = nnodes * nlevels + 1;
    ix->nnodes = nnodes;
    ix->nlevels = nlevels;
    ix->fd = malloc(nfd_max * sizeof(uint32_t));
    ix->ud = malloc((nnodes + 1) * sizeof(uint32_t));
    ix->cell = malloc((nnodes + 1) * sizeof(uint32_t));
    ix->fd_parent = malloc(nfd_max * sizeof(uint32_t));
    ix->fd_level = malloc(nfd_max);
    ix->fd_node = malloc(nfd_max * sizeof(uint32_t));
    ix->ud_node = malloc((nnodes + 1) * sizeof(uint32_t));
    ix->cell_leaf = malloc((nnodes + 1) * sizeof(uint32_t));
    ix->cell_ud = malloc((nnodes + 1) * sizeof(uint32_t));
    ix->level_size = calloc(nlevels, sizeof(size_t));
    if (!ix->fd || !ix->ud || !ix->cell || !ix->fd_parent || !ix->fd_level || !ix->fd_node ||
        !ix->ud_node || !ix->cell_leaf || !ix->cell_ud || !ix->level_size)
        return CV_ENOMEM;
    return 0;
}

/* Interns the node's FD prefix at every level. */
static int index_fd(pl_index_t *ix, intern_t *t, const cv_node_t *n, uint32_t node)
{
    uint32_t parent = PL_NONE;
    for (size_t k = 0; k < ix->nlevels; k++) {
        const char *comp = k < n->fd_depth ? n->fd_path[k] : NULL;
        bool fresh;
        uint32_t id = intern(t, parent, comp, NULL, &fresh);
        if (id == PL_NONE)
            return CV_ENOMEM;
        if (fresh) {
            ix->fd_parent[id] = parent;
            ix->fd_level[id] = (uint8_t)k;
            ix->fd_node[id] = node;
            ix->level_size[k]++;
        }
        ix->fd[(size_t)node * ix->nlevels + k] = id;
        parent = id;
    }
    return 0;
}

/* The interning tables of one build. Nodes sharing a full FD URI and a UD
 * (a cell) share every domain id: the common case is one lookup per node,
 * and the levels and the UD are interned once per distinct cell. */
typedef struct builder {
    intern_t fds, uds, cells, paths;
    uint32_t *path_node; /* path id -> first node with that FD URI */
    uint32_t *cell_node; /* cell id -> first node in the cell */
} builder_t;

/* A node in a cell not seen before: its FD levels (shared with nodes of the
 * same URI) and its UD. */
static int index_new_cell(pl_index_t *ix, builder_t *b, const cv_node_t *n, uint32_t node,
                          uint32_t cell)
{
    const char *fd = n->fault_domain ? n->fault_domain : "";
    bool fresh;
    uint32_t path = intern(&b->paths, 0, fd, NULL, &fresh);
    if (path == PL_NONE)
        return CV_ENOMEM;
    if (fresh) {
        b->path_node[path] = node;
        if (index_fd(ix, &b->fds, n, node))
            return CV_ENOMEM;
    } else {
        memcpy(&ix->fd[(size_t)node * ix->nlevels],
               &ix->fd[(size_t)b->path_node[path] * ix->nlevels], ix->nlevels * sizeof(uint32_t));
    }
    uint32_t ud = intern(&b->uds, 0, n->upgrade_domain ? n->upgrade_domain : "", NULL, &fresh);
    if (ud == PL_NONE)
        return CV_ENOMEM;
    if (fresh)
        ix->ud_node[ud] = node;
    ix->ud[node] = ud;
    ix->cell_leaf[cell] = pl_fd(ix, node, ix->nlevels - 1);
    ix->cell_ud[cell] = ud;
    b->cell_node[cell] = node;
    return 0;
}

static int index_node(pl_index_t *ix, builder_t *b, const cv_node_t *n, uint32_t node)
{
    bool fresh;
    uint32_t cell = intern(&b->cells, 0, n->fault_domain ? n->fault_domain : "",
                           n->upgrade_domain ? n->upgrade_domain : "", &fresh);
    if (cell == PL_NONE)
        return CV_ENOMEM;
    ix->cell[node] = cell;
    if (fresh)
        return index_new_cell(ix, b, n, node, cell);
    uint32_t first = b->cell_node[cell];
    memcpy(&ix->fd[(size_t)node * ix->nlevels], &ix->fd[(size_t)first * ix->nlevels],
           ix->nlevels * sizeof(uint32_t));
    ix->ud[node] = ix->ud[first];
    return 0;
}

int cv__place_index_build(pl_index_t *ix, const cv_cluster_t *c)
{
    memset(ix, 0, sizeof(*ix));
    size_t nlevels = max_depth(c);
    builder_t b = {0};
    int rc = index_alloc(ix, c->nnodes, nlevels);
    b.path_node = malloc((c->nnodes + 1) * sizeof(uint32_t));
    b.cell_node = malloc((c->nnodes + 1) * sizeof(uint32_t));
    if (rc == 0 &&
        (!b.path_node || !b.cell_node || intern_init(&b.fds, 64) || intern_init(&b.uds, 64) ||
         intern_init(&b.cells, 64) || intern_init(&b.paths, 64)))
        rc = CV_ENOMEM;
    for (size_t i = 0; rc == 0 && i < c->nnodes; i++)
        rc = index_node(ix, &b, &c->nodes[i], (uint32_t)i);
    ix->nfd = b.fds.n;
    ix->nud = b.uds.n;
    ix->ncells = b.cells.n;
    ix->nleaf = ix->level_size[nlevels - 1];
    free(b.fds.slots);
    free(b.uds.slots);
    free(b.cells.slots);
    free(b.paths.slots);
    free(b.path_node);
    free(b.cell_node);
    if (rc)
        cv__place_index_free(ix);
    return rc;
}

void cv__place_index_free(pl_index_t *ix)
{
    free(ix->fd);
    free(ix->ud);
    free(ix->cell);
    free(ix->fd_parent);
    free(ix->fd_level);
    free(ix->fd_node);
    free(ix->ud_node);
    free(ix->cell_leaf);
    free(ix->cell_ud);
    free(ix->level_size);
    memset(ix, 0, sizeof(*ix));
}

void cv__place_fd_name(const pl_index_t *ix, const cv_cluster_t *c, uint32_t fd, char *buf,
                       size_t size)
{
    const cv_node_t *n = &c->nodes[ix->fd_node[fd]];
    size_t level = ix->fd_level[fd];
    if (level + 1 >= n->fd_depth) {
        snprintf(buf, size, "%s", n->fault_domain ? n->fault_domain : "fd:/");
        return;
    }
    size_t used = (size_t)snprintf(buf, size, "fd:");
    for (size_t k = 0; k <= level && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "/%s", n->fd_path[k]);
}

/* ---------------------------------------------------------------- policy and bounds */

/*
 * Service Fabric's rule (cluster description docs), word for word:
 * quorum-based logic only when the target replica count divides evenly by
 * the number of fault domains and by the number of upgrade domains, and the
 * number of nodes is at most FDs x UDs. "Fault domains" are the distinct
 * full FD URIs; nodes and domains are the cluster's inventory, down nodes
 * included (a removed node no longer counts: the docs' "N1 removed leaves
 * four UDs").
 */
cv_distribution_t cv__place_policy(const pl_index_t *ix, const cv_cluster_t *c,
                                   const cv_service_t *s)
{
    if (s->distribution != CV_DIST_ADAPTIVE)
        return s->distribution;
    if (ix->nleaf == 0 || ix->nud == 0 || s->replicas <= 0)
        return CV_DIST_MAX_DIFFERENCE;
    size_t r = (size_t)s->replicas;
    if (r % ix->nleaf == 0 && r % ix->nud == 0 && c->nnodes <= ix->nleaf * ix->nud)
        return CV_DIST_QUORUM_SAFE;
    return CV_DIST_MAX_DIFFERENCE;
}

void cv__place_bounds(cv_distribution_t policy, int target, int total, size_t ndomains, int *lo,
                      int *hi)
{
    if (ndomains == 0) {
        *lo = 0;
        *hi = PL_INF;
        return;
    }
    int d = (int)ndomains;
    int ceiling = (total + d - 1) / d;
    if (policy != CV_DIST_QUORUM_SAFE) {
        *lo = total / d;
        *hi = ceiling;
        return;
    }
    /* A domain failure must leave a majority of `target`: at most
     * ceil(target/2) - 1 replicas per domain, at least one, and never less
     * than an even spread needs ("quorum safe" is the more flexible rule). */
    int minority = (target + 1) / 2 - 1;
    if (minority < 1)
        minority = 1;
    *lo = 0;
    *hi = minority > ceiling ? minority : ceiling;
}
