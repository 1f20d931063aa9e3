/*
 * place_spread — fault- and upgrade-domain spreading.
 *
 * A service spreads over the domains of its node inventory: every node that
 * its hard placement constraint admits, down and disabled ones included, so
 * a failed domain still counts as a domain (which is what makes packing a
 * visible, reported event rather than a silent one). The domain check asks
 * one question per candidate: with this replica here, can the replicas
 * still to come be placed so that every domain at every FD level and every
 * UD ends within the policy's bounds? That is answered exactly by a bounded
 * flow over domains and (leaf FD, UD) cells (place_flow.c).
 */
#include "place_internal.h"

#include "cv_base.h"

#include <stdlib.h>
#include <string.h>

enum { SRC = 0, SINK = 1, FIRST_VERTEX = 2 };

int cv__place_spread_init(pl_spread_t *sp, const pl_index_t *ix)
{
    memset(sp, 0, sizeof(*sp));
    sp->fd_in = calloc(ix->nfd + 1, 1);
    sp->ud_in = calloc(ix->nud + 1, 1);
    sp->fd_list = malloc((ix->nfd + 1) * sizeof(uint32_t));
    sp->ud_list = malloc((ix->nud + 1) * sizeof(uint32_t));
    sp->fd_vx = malloc((ix->nfd + 1) * sizeof(uint32_t));
    sp->ud_vx = malloc((ix->nud + 1) * sizeof(uint32_t));
    sp->level_in = calloc(ix->nlevels, sizeof(size_t));
    if (!sp->fd_in || !sp->ud_in || !sp->fd_list || !sp->ud_list || !sp->fd_vx || !sp->ud_vx ||
        !sp->level_in)
        return CV_ENOMEM;
    return 0;
}

void cv__place_spread_free(pl_spread_t *sp)
{
    free(sp->fd_in);
    free(sp->ud_in);
    free(sp->fd_list);
    free(sp->ud_list);
    free(sp->fd_vx);
    free(sp->ud_vx);
    free(sp->level_in);
    memset(sp, 0, sizeof(*sp));
}

void cv__place_spread_add_node(pl_spread_t *sp, const pl_index_t *ix, size_t node)
{
    for (size_t k = 0; k < ix->nlevels; k++)
        sp->fd_in[pl_fd(ix, node, k)] = 1;
    sp->ud_in[ix->ud[node]] = 1;
}

void cv__place_spread_count(pl_spread_t *sp, const pl_index_t *ix)
{
    memset(sp->level_in, 0, ix->nlevels * sizeof(size_t));
    sp->nfd_list = sp->nud_list = 0;
    uint32_t vx = FIRST_VERTEX;
    for (uint32_t d = 0; d < ix->nfd; d++) {
        if (!sp->fd_in[d])
            continue;
        sp->level_in[ix->fd_level[d]]++;
        sp->fd_list[sp->nfd_list++] = d;
        sp->fd_vx[d] = vx++;
    }
    for (uint32_t u = 0; u < ix->nud; u++) {
        if (!sp->ud_in[u])
            continue;
        sp->ud_list[sp->nud_list++] = u;
        sp->ud_vx[u] = vx++;
    }
}

/* ---------------------------------------------------------------- the domain check */

/* Bounds of one call: per FD level (lo[k], hi[k]) and for UDs (lo[nlevels]). */
typedef struct bounds {
    int lo[PL_MAX_LEVELS + 1], hi[PL_MAX_LEVELS + 1];
} bounds_t;

static void compute_bounds(const pl_ctx_t *x, const pl_spread_t *sp, int total, bool use_fd,
                           bool use_ud, bounds_t *b)
{
    size_t nl = x->ix.nlevels;
    for (size_t k = 0; k < nl; k++) {
        b->lo[k] = 0;
        b->hi[k] = PL_INF;
        if (use_fd)
            cv__place_bounds(x->policy, x->target, total, sp->level_in[k], &b->lo[k], &b->hi[k]);
    }
    b->lo[nl] = 0;
    b->hi[nl] = PL_INF;
    if (use_ud)
        cv__place_bounds(x->policy, x->target, total, sp->nud_list, &b->lo[nl], &b->hi[nl]);
}

/* The necessary condition, cheaply: the candidate's own domains stay within
 * their upper bounds. */
static bool under_ceilings(const pl_ctx_t *x, const pl_spread_t *sp, size_t node, const int *hi)
{
    const pl_index_t *ix = &x->ix;
    for (size_t k = 0; k < ix->nlevels; k++) {
        uint32_t d = pl_fd(ix, node, k);
        if (sp->fd_in[d] && x->fd_count[d] + 1 > hi[k])
            return false;
    }
    uint32_t u = ix->ud[node];
    return !sp->ud_in[u] || x->ud_count[u] + 1 <= hi[ix->nlevels];
}

void cv__place_ceilings(const pl_ctx_t *x, const pl_mode_t *mode, int more, int *hi)
{
    bounds_t b;
    compute_bounds(x, &x->inv, (int)x->nreps + 1 + more, mode->enforce & PL_BIT(PL_FAULT_DOMAIN),
                   mode->enforce & PL_BIT(PL_UPGRADE_DOMAIN), &b);
    memcpy(hi, b.hi, (x->ix.nlevels + 1) * sizeof(int));
}

bool cv__place_under_ceilings(const pl_ctx_t *x, size_t node, const int *hi)
{
    return under_ceilings(x, &x->inv, node, hi);
}

static void add_domain_edges(pl_flow_t *f, const pl_ctx_t *x, const pl_spread_t *sp, size_t node,
                             const bounds_t *b)
{
    const pl_index_t *ix = &x->ix;
    for (size_t i = 0; i < sp->nfd_list; i++) {
        uint32_t d = sp->fd_list[i];
        size_t level = ix->fd_level[d];
        int have = x->fd_count[d] + (pl_fd(ix, node, level) == d);
        uint32_t from = level == 0 ? SRC : sp->fd_vx[ix->fd_parent[d]];
        cv__place_flow_edge(f, from, sp->fd_vx[d], b->lo[level] - have, b->hi[level] - have);
    }
    for (size_t i = 0; i < sp->nud_list; i++) {
        uint32_t u = sp->ud_list[i];
        int have = x->ud_count[u] + (ix->ud[node] == u);
        cv__place_flow_edge(f, sp->ud_vx[u], SINK, b->lo[ix->nlevels] - have,
                            b->hi[ix->nlevels] - have);
    }
}

/* Cells hold the nodes still free for later replicas. A cell outside the
 * spread set (a node the inventory did not include, usable once a soft
 * placement constraint was relaxed) is not bound by the domains. */
static void add_cell_edges(pl_flow_t *f, const pl_ctx_t *x, const pl_spread_t *sp, size_t node,
                           bool cand_secondary)
{
    const pl_index_t *ix = &x->ix;
    uint32_t vx = (uint32_t)(FIRST_VERTEX + sp->nfd_list + sp->nud_list);
    for (size_t i = 0; i < x->ncells_used; i++, vx++) {
        uint32_t cell = x->cells[i];
        int avail = (int)x->avail[cell] - (cand_secondary && ix->cell[node] == cell);
        if (avail <= 0)
            continue;
        uint32_t leaf = ix->cell_leaf[cell], ud = ix->cell_ud[cell];
        cv__place_flow_edge(f, sp->fd_in[leaf] ? sp->fd_vx[leaf] : SRC, vx, 0, avail);
        cv__place_flow_edge(f, vx, sp->ud_in[ud] ? sp->ud_vx[ud] : SINK, 0, PL_INF);
    }
}

/* ---------------------------------------------------------------- a greedy witness */

/* Adds `by` replicas to every domain of a (leaf FD, UD) pair. */
static void bump(pl_ctx_t *x, uint32_t leaf, uint32_t ud, int by)
{
    for (uint32_t d = leaf; d != PL_NONE; d = x->ix.fd_parent[d])
        x->fd_count[d] += by;
    x->ud_count[ud] += by;
}

/* How much the cell helps (domains under their lower bound it would add
 * to), or -1 when one more replica would take one of its domains over
 * its upper bound. The flow counts a cell for its FD levels only when its
 * leaf is in the spread set, and for its UD only when that is. */
static int cell_gain(const pl_ctx_t *x, const pl_spread_t *sp, uint32_t cell, const bounds_t *b)
{
    const pl_index_t *ix = &x->ix;
    uint32_t leaf = ix->cell_leaf[cell], ud = ix->cell_ud[cell];
    int gain = 0;
    for (uint32_t d = leaf; sp->fd_in[leaf] && d != PL_NONE; d = ix->fd_parent[d]) {
        size_t level = ix->fd_level[d];
        if (x->fd_count[d] + 1 > b->hi[level])
            return -1;
        gain += x->fd_count[d] < b->lo[level];
    }
    if (sp->ud_in[ud]) {
        if (x->ud_count[ud] + 1 > b->hi[ix->nlevels])
            return -1;
        gain += x->ud_count[ud] < b->lo[ix->nlevels];
    }
    return gain;
}

static bool lower_bounds_met(const pl_ctx_t *x, const pl_spread_t *sp, const bounds_t *b)
{
    for (size_t i = 0; i < sp->nfd_list; i++) {
        uint32_t d = sp->fd_list[i];
        if (x->fd_count[d] < b->lo[x->ix.fd_level[d]])
            return false;
    }
    for (size_t i = 0; i < sp->nud_list; i++)
        if (x->ud_count[sp->ud_list[i]] < b->lo[x->ix.nlevels])
            return false;
    return true;
}

#define PL_WITNESS_CELLS 256

/*
 * Places the `more` replicas to come greedily, one at a time on the free
 * cell that helps most without breaking an upper bound, and checks the
 * lower bounds at the end. Success is a witness: an integral flow the
 * bounded-flow check would find, so the answer is exact when it is yes.
 * A no proves nothing (greedy can strand a domain) and the flow decides.
 * Nearly every candidate on a large cluster is a yes, for a fraction of
 * the flow's cost.
 */
static bool greedy_witness(pl_ctx_t *x, const pl_spread_t *sp, size_t node, bool cand_secondary,
                           const bounds_t *b, int more)
{
    const pl_index_t *ix = &x->ix;
    if (x->ncells_used > PL_WITNESS_CELLS)
        return false;
    int taken[PL_WITNESS_CELLS] = {0};
    uint32_t placed[PL_WITNESS_CELLS];
    int nplaced = 0;
    bump(x, pl_fd(ix, node, ix->nlevels - 1), ix->ud[node], 1);
    for (; nplaced < more; nplaced++) {
        int best = -1, best_gain = -1;
        for (size_t i = 0; i < x->ncells_used; i++) {
            uint32_t cell = x->cells[i];
            int left = (int)x->avail[cell] - taken[i] - (cand_secondary && ix->cell[node] == cell);
            int gain = left > 0 ? cell_gain(x, sp, cell, b) : -1;
            if (gain > best_gain) {
                best = (int)i;
                best_gain = gain;
            }
        }
        if (best < 0)
            break;
        taken[best]++;
        placed[nplaced] = x->cells[best];
        bump(x, ix->cell_leaf[placed[nplaced]], ix->cell_ud[placed[nplaced]], 1);
    }
    bool ok = nplaced == more && lower_bounds_met(x, sp, b);
    for (int i = 0; i < nplaced; i++)
        bump(x, ix->cell_leaf[placed[i]], ix->cell_ud[placed[i]], -1);
    bump(x, pl_fd(ix, node, ix->nlevels - 1), ix->ud[node], -1);
    return ok;
}

bool cv__place_domains_ok(pl_ctx_t *x, const pl_mode_t *mode, size_t node, bool cand_secondary,
                          bool use_fd, bool use_ud, int more)
{
    const pl_spread_t *sp = mode->packing ? &x->pack : &x->inv;
    /* Fewer free nodes than replicas to come is the exclusion constraint's
     * verdict, not the domains': plan the domains for what can be placed. */
    int free_nodes = (int)x->total_avail - cand_secondary;
    if (more > free_nodes)
        more = free_nodes > 0 ? free_nodes : 0;
    bounds_t b;
    int total = (int)x->nreps + 1 + more;
    compute_bounds(x, sp, total, use_fd, use_ud, &b);
    if (!under_ceilings(x, sp, node, b.hi))
        return false;
    if (more <= PL_WITNESS_CELLS && greedy_witness(x, sp, node, cand_secondary, &b, more))
        return true;
    size_t nv = FIRST_VERTEX + sp->nfd_list + sp->nud_list + x->ncells_used;
    pl_flow_t *f = cv__place_flow_new(nv, sp->nfd_list + sp->nud_list + 2 * x->ncells_used + 1);
    if (!f)
        return false;
    add_domain_edges(f, x, sp, node, &b);
    add_cell_edges(f, x, sp, node, cand_secondary);
    cv__place_flow_edge(f, SINK, SRC, more, more);
    bool ok = cv__place_flow_feasible(f);
    cv__place_flow_free(f);
    return ok;
}
