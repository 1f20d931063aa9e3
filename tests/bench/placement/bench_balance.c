/*
 * Balancing benchmark: a live model of 1,000 simulated nodes (3 node types
 * of different capacities, 10 fault domains over two levels x 10 upgrade
 * domains, 3 metrics) and 10,000 replicas (2,000 services of 5 replicas,
 * a third kept to one node type, a tenth of High move cost), placed with a
 * skew so that a few nodes carry most of the load. Prints the time of one
 * balancing pass of cv_balance (model read included), the max/min node
 * load ratio per metric before and after, and the number of moves (without
 * throttles, then with the default ones: 1,000 moves, 50 per service), beside
 * the same cluster balanced by a greedy baseline: move the largest replica
 * that fits from the most loaded to the least loaded node of a metric, as
 * long as that narrows the gap, for as many moves. Figures, not assertions.
 *
 *   bench_balance [--quick] [--nodes N] [--services N] [--seed S]
 */
#include "cv_placement.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define NMETRICS 3
#define REPLICAS 5

static const char *const metric_names[NMETRICS] = {"CPU", "MemoryMB", "DiskGB"};
static const double base_capacity[NMETRICS] = {64, 128000, 4000};
static const char *const types[] = {"small", "medium", "large"};

/* The bench's own view of the cluster, for the baseline and the checks. */
typedef struct world {
    size_t nnodes, nsvcs;
    double (*cap)[NMETRICS];
    double (*load)[NMETRICS];
    int *type;
    double (*svc_load)[NMETRICS];
    int *svc_type; /* the node type a service is kept to, or -1 */
    int (*at)[REPLICAS];
} world_t;

static bool holds(const world_t *w, size_t s, int node)
{
    for (int i = 0; i < REPLICAS; i++)
        if (w->at[s][i] == node)
            return true;
    return false;
}

static bool fits(const world_t *w, size_t s, int node)
{
    if (holds(w, s, node) || (w->svc_type[s] >= 0 && w->type[node] != w->svc_type[s]))
        return false;
    for (int k = 0; k < NMETRICS; k++)
        if (w->load[node][k] + w->svc_load[s][k] > w->cap[node][k])
            return false;
    return true;
}

static void build(world_t *w, size_t nnodes, size_t nsvcs, uint64_t seed)
{
    rng_t g = {seed};
    w->nnodes = nnodes;
    w->nsvcs = nsvcs;
    w->cap = calloc(nnodes, sizeof(*w->cap));
    w->load = calloc(nnodes, sizeof(*w->load));
    w->type = calloc(nnodes, sizeof(int));
    w->svc_load = calloc(nsvcs, sizeof(*w->svc_load));
    w->svc_type = calloc(nsvcs, sizeof(int));
    w->at = calloc(nsvcs, sizeof(*w->at));
    for (size_t i = 0; i < nnodes; i++) {
        w->type[i] = (int)((i / 10) % 3);
        for (int k = 0; k < NMETRICS; k++)
            w->cap[i][k] = base_capacity[k] * (1 << w->type[i]);
    }
    for (size_t s = 0; s < nsvcs; s++) {
        w->svc_load[s][0] = 1 + rnd(&g, 8);
        w->svc_load[s][1] = 256 + rnd(&g, 3840);
        w->svc_load[s][2] = 10 + rnd(&g, 190);
        w->svc_type[s] = s % 3 == 0 ? (int)rnd(&g, 3) : -1;
        for (int i = 0; i < REPLICAS; i++) {
            w->at[s][i] = -1;
            for (int tries = 0; tries < 200 && w->at[s][i] < 0; tries++) {
                double u = (double)rnd(&g, 1000000) / 1e6;
                int node = (int)((double)nnodes * u * u * u); /* most on the first nodes */
                if (fits(w, s, node))
                    w->at[s][i] = node;
            }
            for (int node = 0; w->at[s][i] < 0 && node < (int)nnodes; node++)
                if (fits(w, s, node))
                    w->at[s][i] = node;
            for (int k = 0; w->at[s][i] >= 0 && k < NMETRICS; k++)
                w->load[w->at[s][i]][k] += w->svc_load[s][k];
        }
    }
}

static void world_free(world_t *w)
{
    free(w->cap);
    free(w->load);
    free(w->type);
    free(w->svc_load);
    free(w->svc_type);
    free(w->at);
}

static json_t *model_of(const world_t *w)
{
    json_t *nodes = json_object(), *services = json_object();
    for (size_t i = 0; i < w->nnodes; i++) {
        char name[32], fd[64], ud[16];
        size_t fdi = i % 10, udi = (i / 100) % 10;
        snprintf(name, sizeof(name), "node%04zu", i);
        snprintf(fd, sizeof(fd), "fd:/dc%zu/rack%zu", fdi / 2, fdi % 2);
        snprintf(ud, sizeof(ud), "UD%zu", udi);
        json_t *caps = json_object();
        for (int k = 0; k < NMETRICS; k++)
            json_object_set_new(caps, metric_names[k], json_integer((json_int_t)w->cap[i][k]));
        json_object_set_new(nodes, name,
                            json_pack("{s:{s:s, s:s, s:s, s:s, s:o}, s:b, s:s}", "description",
                                      "name", name, "type", types[w->type[i]], "faultDomain", fd,
                                      "upgradeDomain", ud, "capacities", caps, "alive", 1, "admin",
                                      "enabled"));
    }
    for (size_t s = 0; s < w->nsvcs; s++) {
        char id[32], rid[64], node[32], constraint[64];
        snprintf(id, sizeof(id), "svc%05zu", s);
        json_t *metrics = json_array(), *placement = json_array();
        for (int k = 0; k < NMETRICS; k++)
            json_array_append_new(metrics, json_pack("{s:s, s:i}", "name", metric_names[k],
                                                     "primaryLoad", (int)w->svc_load[s][k]));
        int n = 0;
        for (int i = 0; i < REPLICAS; i++) {
            if (w->at[s][i] < 0)
                continue;
            snprintf(rid, sizeof(rid), "%s/%d/1", id, i);
            snprintf(node, sizeof(node), "node%04d", w->at[s][i]);
            json_array_append_new(placement, json_pack("{s:i, s:s, s:s, s:s}", "index", i, "rid",
                                                       rid, "node", node, "role", "instance"));
            n = i + 1;
        }
        json_t *spec = json_pack("{s:s, s:s, s:i, s:b, s:o, s:s}", "name", id, "serviceType", id,
                                 "replicas", n, "stateful", 0, "metrics", metrics, "moveCost",
                                 s % 10 == 0 ? "High" : "Low");
        if (w->svc_type[s] >= 0) {
            snprintf(constraint, sizeof(constraint), "NodeType == %s", types[w->svc_type[s]]);
            json_object_set_new(spec, "placementConstraints", json_string(constraint));
        }
        json_object_set_new(services, id,
                            json_pack("{s:o, s:s, s:s, s:s, s:o}", "spec", spec, "state", "active",
                                      "stack", "bench", "resource", id, "placement", placement));
    }
    return json_pack("{s:f, s:{s:{s:i, s:i}}, s:o, s:o}", "now", 1e6, "settings", "crm",
                     "GlobalMovementThrottleThreshold", 0, "MovementPerPartitionThrottleThreshold",
                     0, "nodes", nodes, "services", services);
}

static double ratio(const world_t *w, int k)
{
    double max = 0, min = INFINITY;
    for (size_t i = 0; i < w->nnodes; i++) {
        max = w->load[i][k] > max ? w->load[i][k] : max;
        min = w->load[i][k] < min ? w->load[i][k] : min;
    }
    return min > 0 ? max / min : INFINITY;
}

/* ---------------------------------------------------------------- the greedy baseline */

static void move(world_t *w, size_t s, int i, int to)
{
    for (int k = 0; k < NMETRICS; k++) {
        w->load[w->at[s][i]][k] -= w->svc_load[s][k];
        w->load[to][k] += w->svc_load[s][k];
    }
    w->at[s][i] = to;
}

/* One move for metric k: the largest replica on the most loaded node that
 * fits the least loaded one and narrows their gap. */
static bool greedy_step(world_t *w, int k)
{
    int hi = 0, lo = 0;
    for (size_t i = 1; i < w->nnodes; i++) {
        hi = w->load[i][k] > w->load[hi][k] ? (int)i : hi;
        lo = w->load[i][k] < w->load[lo][k] ? (int)i : lo;
    }
    double gap = w->load[hi][k] - w->load[lo][k];
    size_t best_s = 0;
    int best_i = -1;
    for (size_t s = 0; s < w->nsvcs; s++)
        for (int i = 0; i < REPLICAS; i++)
            if (w->at[s][i] == hi && w->svc_load[s][k] < gap && fits(w, s, lo) &&
                (best_i < 0 || w->svc_load[s][k] > w->svc_load[best_s][k])) {
                best_s = s;
                best_i = i;
            }
    if (best_i < 0)
        return false;
    move(w, best_s, best_i, lo);
    return true;
}

static size_t greedy(world_t *w, size_t budget)
{
    size_t moves = 0;
    bool any = true;
    while (any && moves < budget) {
        any = false;
        for (int k = 0; k < NMETRICS && moves < budget; k++)
            if (greedy_step(w, k)) {
                moves++;
                any = true;
            }
    }
    return moves;
}

/* ---------------------------------------------------------------- main */

static void print_ratio(double r)
{
    if (isinf(r))
        printf(" %8s", "inf");
    else
        printf(" %8.2f", r);
}

/* One pass of cv_balance on `model`, printed as a row; its moves, or -1. */
static long run_cv_balance(const json_t *model, const char *label)
{
    char err[512];
    json_t *state = json_object();
    double t0 = now();
    json_t *r = cv_balance(model, CV_BALANCE_BALANCING, state, err, sizeof(err));
    double t1 = now();
    json_decref(state);
    if (!r) {
        fprintf(stderr, "bench_balance: %s\n", err);
        return -1;
    }
    size_t moves = json_array_size(json_object_get(r, "moves"));
    printf("%-22s %9.1f %7zu  ", label, (t1 - t0) * 1000, moves);
    for (int k = 0; k < NMETRICS; k++) {
        size_t i;
        const json_t *e;
        json_array_foreach(json_object_get(r, "imbalance"), i, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "metric")), metric_names[k]) != 0)
                continue;
            const json_t *b = json_object_get(e, "ratio"), *a = json_object_get(e, "after");
            print_ratio(json_is_number(b) ? json_number_value(b) : INFINITY);
            printf(" ->");
            print_ratio(json_is_number(a) ? json_number_value(a) : INFINITY);
        }
    }
    printf("\n");
    json_decref(r);
    return (long)moves;
}

int main(int argc, char **argv)
{
    size_t nnodes = 1000, nsvcs = 2000;
    uint64_t seed = 42;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            nnodes = 100;
            nsvcs = 200;
        } else if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            nnodes = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--services") == 0 && i + 1 < argc)
            nsvcs = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr,
                    "usage: bench_balance [--quick] [--nodes N] [--services N] [--seed S]\n");
            return 2;
        }
    }
    world_t w;
    build(&w, nnodes, nsvcs, seed ? seed : 1);
    json_t *model = model_of(&w);
    printf("balancing: %zu nodes, %zu replicas\n", nnodes, nsvcs * REPLICAS);
    printf("%-22s %9s %7s   max/min per metric (before -> after):", "planner", "pass ms", "moves");
    for (int k = 0; k < NMETRICS; k++)
        printf(" %s", metric_names[k]);
    printf("\n");
    long moves = run_cv_balance(model, "cv_balance");
    json_object_set_new(model, "settings", json_object()); /* the default throttles */
    if (moves < 0 || run_cv_balance(model, "cv_balance (throttled)") < 0) {
        json_decref(model);
        world_free(&w);
        return 1;
    }
    double before[NMETRICS];
    for (int k = 0; k < NMETRICS; k++)
        before[k] = ratio(&w, k);
    double t0 = now();
    size_t gmoves = greedy(&w, (size_t)moves);
    double t1 = now();
    printf("%-22s %9.1f %7zu  ", "greedy (same moves)", (t1 - t0) * 1000, gmoves);
    for (int k = 0; k < NMETRICS; k++) {
        print_ratio(before[k]);
        printf(" ->");
        print_ratio(ratio(&w, k));
    }
    printf("\n");
    json_decref(model);
    world_free(&w);
    return 0;
}
