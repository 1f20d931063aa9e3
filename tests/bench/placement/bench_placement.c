/*
 * Placement benchmark: a cluster of 10,000 nodes (10 FDs over two levels x
 * 10 UDs, 3 metrics, 3 node types with different capacities, properties
 * for constraints) receives 100,000 services of 3–5 replicas one after
 * another through one placer (cv_placer_place: the cluster's index and
 * constraint memo are built once, the loads change between calls), with
 * placement constraints, Mesos constraints on some, and loads that
 * accumulate. Prints placements per second, peak RSS, and the
 * final max/min node load ratio per metric (raw, as Service Fabric's
 * balancing threshold defines it, and per unit of capacity) beside the same
 * ratios after a naive first-fit placement of the same services. Figures,
 * not assertions.
 *
 *   bench_placement [--quick] [--nodes N] [--services N] [--seed S]
 */
#include "../../unit/placement/test_place_fixture.h"

#include <math.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"

#define NMETRICS 3

static const char *const metric_names[NMETRICS] = {"CPU", "MemoryMB", "DiskGB"};
static const int64_t base_capacity[NMETRICS] = {64, 256000, 4000};
static const double weights[NMETRICS] = {1.0, 0.3, 0.1}; /* high, medium, low */

/* ---------------------------------------------------------------- the cluster */

static cv_cluster_t *build_cluster(size_t nnodes)
{
    cv_cluster_t *c = fx_cluster("CPU,MemoryMB,DiskGB");
    static const char *const types[] = {"small", "medium", "large"};
    c->metrics[0].buffer = 0.1;   /* CPU: 10% kept for availability actions */
    c->metrics[2].overbook = 0.2; /* DiskGB: 20% overbooking */
    for (size_t i = 0; i < nnodes; i++) {
        char name[32], fd[64], ud[16], rack[32];
        size_t fdi = i % 10, udi = (i / 10) % 10, t = (i / 100) % 3;
        snprintf(name, sizeof(name), "node%05zu", i);
        snprintf(fd, sizeof(fd), "fd:/dc%zu/rack%zu", fdi / 2, fdi % 2);
        snprintf(ud, sizeof(ud), "UD%zu", udi);
        snprintf(rack, sizeof(rack), "dc%zu-rack%zu-%zu", fdi / 2, fdi % 2, i / 1000);
        cv_node_t *n = fx_node(c, name, fd, ud);
        fx_type(n, types[t]);
        for (size_t m = 0; m < NMETRICS; m++)
            n->capacity[m] = base_capacity[m] << t; /* medium x2, large x4 */
        json_object_set_new(n->props, "SSD", json_boolean(t > 0));
        json_object_set_new(n->props, "Zone", json_sprintf("z%zu", i % 7));
        json_object_set_new(n->props, "Rack", json_string(rack));
    }
    fx_done(c);
    return c;
}

/* ---------------------------------------------------------------- the services */

static cv_service_t *build_service(rng_t *r, size_t i)
{
    char name[32];
    snprintf(name, sizeof(name), "svc%06zu", i);
    cv_service_t *s = fx_service(name, 3 + (int)rnd(r, 3), rnd(r, 2));
    uint32_t pick = rnd(r, 10);
    if (pick < 2)
        fx_placement(s, "NodeType == large");
    else if (pick < 4)
        fx_placement(s, "SSD == true");
    uint32_t mesos = rnd(r, 20);
    if (mesos == 0)
        fx_mesos(s, "[\"Zone\", \"MAXPER\", 1]");
    else if (mesos == 1)
        fx_mesos(s, "[\"Rack\", \"UNIQUE\"]");
    int64_t cpu = 1 + rnd(r, 2), mem = 200 + rnd(r, 1800), disk = 1 + rnd(r, 20);
    fx_metric(s, "CPU", cpu, s->stateful ? 1 : cpu, weights[0]);
    fx_metric(s, "MemoryMB", mem, s->stateful ? mem / 2 : mem, weights[1]);
    fx_metric(s, "DiskGB", disk, disk, weights[2]);
    return s;
}

/* The load a placed replica adds, per cluster metric. */
static void add_load(cv_cluster_t *c, const cv_service_t *s, size_t node, bool primary)
{
    for (size_t m = 0; m < s->nmetrics; m++) {
        bool full = primary || !s->stateful;
        c->nodes[node].load[m] += full ? s->metrics[m].primary_load : s->metrics[m].secondary_load;
    }
}

/* ---------------------------------------------------------------- naive first fit */

static bool first_fit_ok(const cv_cluster_t *c, const cv_service_t *s, size_t n, bool primary)
{
    const cv_node_t *node = &c->nodes[n];
    if (node->status != CV_NODE_UP || (s->placement && !cv_pcexpr_match(s->placement, node->props)))
        return false;
    for (size_t m = 0; m < s->nmetrics; m++) {
        int64_t l =
            primary || !s->stateful ? s->metrics[m].primary_load : s->metrics[m].secondary_load;
        double limit = (double)node->capacity[m] * (1 - c->metrics[m].buffer);
        if ((double)(node->load[m] + l) > limit)
            return false;
    }
    return true;
}

/* Each replica on the first node (by name) that fits and holds no replica yet. */
static size_t first_fit(cv_cluster_t *c, const cv_service_t *s)
{
    size_t used[8], placed = 0;
    for (size_t n = 0; n < c->nnodes && placed < (size_t)s->replicas; n++) {
        if (!first_fit_ok(c, s, n, placed == 0))
            continue;
        used[placed++] = n;
    }
    for (size_t i = 0; i < placed; i++)
        add_load(c, s, used[i], i == 0);
    return placed;
}

/* ---------------------------------------------------------------- figures */

static void ratios(const cv_cluster_t *c, size_t m, double *raw, double *util)
{
    double lo = INFINITY, hi = 0, ulo = INFINITY, uhi = 0;
    for (size_t n = 0; n < c->nnodes; n++) {
        double load = (double)c->nodes[n].load[m];
        double u = load / (double)c->nodes[n].capacity[m];
        lo = fmin(lo, load), hi = fmax(hi, load);
        ulo = fmin(ulo, u), uhi = fmax(uhi, u);
    }
    *raw = lo > 0 ? hi / lo : INFINITY;
    *util = ulo > 0 ? uhi / ulo : INFINITY;
}

static void print_ratios(const char *label, const cv_cluster_t *c)
{
    size_t idle = 0;
    for (size_t n = 0; n < c->nnodes; n++)
        idle += c->nodes[n].load[0] == 0;
    printf("  %-10s %zu of %zu nodes carry no load\n", label, idle, c->nnodes);
    for (size_t m = 0; m < NMETRICS; m++) {
        double raw, util;
        ratios(c, m, &raw, &util);
        printf("  %-10s %-9s max/min load %8.3f   max/min utilisation %8.3f\n", label,
               metric_names[m], raw, util);
    }
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ---------------------------------------------------------------- main */

typedef struct totals {
    size_t replicas, unplaced, rejected, warnings;
    double seconds, worst;
} totals_t;

static void place_one(cv_placer_t *placer, cv_cluster_t *c, const cv_service_t *s, totals_t *t)
{
    double t0 = now();
    json_t *r = cv_placer_place(placer, s, NULL, CV_PLACE_NEW);
    double dt = now() - t0;
    t->seconds += dt;
    t->worst = fmax(t->worst, dt);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(r, "placements"), i, p)
    {
        long n = cv_cluster_node(c, json_string_value(json_object_get(p, "node")));
        add_load(c, s, (size_t)n,
                 strcmp(json_string_value(json_object_get(p, "role")), "primary") == 0);
        t->replicas++;
    }
    t->unplaced += json_array_size(json_object_get(r, "unplaced"));
    t->rejected += json_is_object(json_object_get(r, "rejected"));
    t->warnings += json_array_size(json_object_get(r, "warnings"));
    json_decref(r);
}

typedef struct options {
    size_t nodes, services;
    uint64_t seed;
} options_t;

static int parse_args(int argc, char **argv, options_t *o)
{
    *o = (options_t){10000, 100000, 42};
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (strcmp(argv[i], "--quick") == 0)
            o->nodes = 1000, o->services = 5000;
        else if (strcmp(argv[i], "--nodes") == 0 && more)
            o->nodes = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--services") == 0 && more)
            o->services = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && more)
            o->seed = strtoull(argv[++i], NULL, 10);
        else
            return -1;
    }
    return 0;
}

static void report(const options_t *o, const totals_t *t)
{
    printf("placement benchmark: %zu nodes (10 FD x 10 UD, 3 metrics, 3 node types), "
           "%zu services of 3-5 replicas\n",
           o->nodes, o->services);
    printf("  placed %zu replicas, %zu unplaced, %zu services rejected, %zu warnings\n",
           t->replicas, t->unplaced, t->rejected, t->warnings);
    printf("  %.0f replicas/s, %.0f services/s, %.3f ms per service (worst %.3f ms)\n",
           (double)t->replicas / t->seconds, (double)o->services / t->seconds,
           1e3 * t->seconds / (double)o->services, 1e3 * t->worst);
    printf("  peak RSS %ld KiB\n", peak_rss_kb());
}

int main(int argc, char **argv)
{
    json_object_seed(1); /* the same hash tables every run: instruction counts repeat */
    options_t o;
    if (parse_args(argc, argv, &o)) {
        fprintf(stderr, "usage: %s [--quick] [--nodes N] [--services N] [--seed S]\n", argv[0]);
        return 2;
    }
    cv_cluster_t *c = build_cluster(o.nodes), *naive = build_cluster(o.nodes);
    rng_t r = {o.seed * 2654435761u + 1};
    totals_t t = {0};
    size_t naive_placed = 0;
    double t0 = now();
    cv_placer_t *placer = cv_placer_new(c);
    t.seconds += now() - t0; /* the placer's index counts against the placements */
    for (size_t i = 0; i < o.services; i++) {
        cv_service_t *s = build_service(&r, i);
        place_one(placer, c, s, &t);
        naive_placed += first_fit(naive, s);
        fx_service_free(s);
    }
    cv_placer_free(placer);
    report(&o, &t);
    print_ratios("placement", c);
    printf("  first-fit placed %zu replicas\n", naive_placed);
    print_ratios("first-fit", naive);
    fx_cluster_free(c);
    fx_cluster_free(naive);
    return 0;
}
