/*
 * place_flow — feasibility of a flow with lower and upper bounds per edge.
 *
 * Spreading over fault domains (a tree of levels) and upgrade domains (a
 * flat partition) at once is a bounded flow: source -> FD levels -> (leaf
 * FD, UD) cells -> UDs -> sink, each domain edge carrying between its lower
 * and upper replica bound. Whether the replicas still to place can meet
 * every bound is then exact, where a greedy "fill the emptiest domain" is
 * not (N6 in Service Fabric's cluster description docs looks fine for the
 * first replica and strands FD1). The usual reduction: each lower bound
 * becomes a demand, and a max flow from a super source must saturate them
 * all. Graphs are small (domains and cells, not nodes) and the flow is a
 * handful of units, so plain BFS augmenting paths.
 */
#include "place_internal.h"

#include "cv_base.h"

#include <stdlib.h>

typedef struct arc {
    uint32_t to, next;
    int cap;
} arc_t;

typedef CV_VEC(arc_t) arcs_t;

struct pl_flow {
    size_t nv; /* caller's vertices; two more for the super source and sink */
    uint32_t *head;
    arcs_t arcs; /* an edge and its reverse side by side: arc a's is a ^ 1 */
    long *excess;
    bool broken; /* some edge had hi < lo */
    bool nomem;
};

pl_flow_t *cv__place_flow_new(size_t nvertices, size_t nedges_hint)
{
    pl_flow_t *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->nv = nvertices;
    f->head = malloc((nvertices + 2) * sizeof(uint32_t));
    f->excess = calloc(nvertices + 2, sizeof(long));
    int rc = cv_vec_reserve(&f->arcs, 2 * (nedges_hint + nvertices + 2));
    if (!f->head || !f->excess || rc != 0) {
        cv__place_flow_free(f);
        return NULL;
    }
    for (size_t v = 0; v < nvertices + 2; v++)
        f->head[v] = PL_NONE;
    return f;
}

void cv__place_flow_free(pl_flow_t *f)
{
    if (!f)
        return;
    free(f->head);
    free(f->excess);
    cv_vec_free(&f->arcs);
    free(f);
}

static int add_arc(pl_flow_t *f, uint32_t u, uint32_t v, int cap)
{
    if (cv_vec_reserve(&f->arcs, 2) != 0) {
        f->nomem = true;
        return -1;
    }
    f->arcs.v[f->arcs.n] = (arc_t){v, f->head[u], cap};
    f->head[u] = (uint32_t)f->arcs.n++;
    f->arcs.v[f->arcs.n] = (arc_t){u, f->head[v], 0};
    f->head[v] = (uint32_t)f->arcs.n++;
    return 0;
}

int cv__place_flow_edge(pl_flow_t *f, uint32_t u, uint32_t v, int lo, int hi)
{
    if (lo < 0)
        lo = 0;
    if (hi < lo) {
        f->broken = true;
        return 0;
    }
    f->excess[v] += lo;
    f->excess[u] -= lo;
    return hi > lo ? add_arc(f, u, v, hi - lo) : 0;
}

/* One shortest augmenting path from s to t; returns the units pushed. */
static int augment(pl_flow_t *f, uint32_t s, uint32_t t, uint32_t *queue, uint32_t *via)
{
    size_t nv = f->nv + 2;
    for (size_t v = 0; v < nv; v++)
        via[v] = PL_NONE;
    size_t qh = 0, qt = 0;
    queue[qt++] = s;
    via[s] = (uint32_t)f->arcs.n; /* marks the source as seen */
    while (qh < qt && via[t] == PL_NONE) {
        uint32_t u = queue[qh++];
        for (uint32_t a = f->head[u]; a != PL_NONE; a = f->arcs.v[a].next) {
            uint32_t v = f->arcs.v[a].to;
            if (f->arcs.v[a].cap > 0 && via[v] == PL_NONE) {
                via[v] = a;
                queue[qt++] = v;
            }
        }
    }
    if (via[t] == PL_NONE)
        return 0;
    int push = PL_INF;
    for (uint32_t v = t; v != s; v = f->arcs.v[via[v] ^ 1].to)
        if (f->arcs.v[via[v]].cap < push)
            push = f->arcs.v[via[v]].cap;
    for (uint32_t v = t; v != s; v = f->arcs.v[via[v] ^ 1].to) {
        f->arcs.v[via[v]].cap -= push;
        f->arcs.v[via[v] ^ 1].cap += push;
    }
    return push;
}

bool cv__place_flow_feasible(pl_flow_t *f)
{
    if (f->broken || f->nomem)
        return false;
    uint32_t s = (uint32_t)f->nv, t = (uint32_t)f->nv + 1;
    long need = 0;
    for (uint32_t v = 0; v < f->nv; v++) {
        if (f->excess[v] > 0) {
            need += f->excess[v];
            if (add_arc(f, s, v, (int)f->excess[v]))
                return false;
        } else if (f->excess[v] < 0 && add_arc(f, v, t, (int)-f->excess[v])) {
            return false;
        }
    }
    uint32_t *queue = malloc((f->nv + 2) * sizeof(uint32_t));
    uint32_t *via = malloc((f->nv + 2) * sizeof(uint32_t));
    long got = 0;
    int pushed = 1;
    while (queue && via && got < need && pushed > 0) {
        pushed = augment(f, s, t, queue, via);
        got += pushed;
    }
    free(queue);
    free(via);
    return got == need;
}
