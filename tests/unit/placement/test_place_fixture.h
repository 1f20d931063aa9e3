/*
 * Fixtures for the placement tests and benchmark: clusters, services and
 * layouts built in C, without the manifest loaders, so that each test shows
 * the whole situation it specifies. Never linked into the library.
 */
#ifndef TEST_PLACE_FIXTURE_H
#define TEST_PLACE_FIXTURE_H

#include "cv_placement.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_FN static __attribute__((unused))

/* ---------------------------------------------------------------- clusters */

/* Default priorities: Placement 0, Capacity 0, Affinity 0,
 * FaultDomain 0, UpgradeDomain 1, PreferredLocation 2. */
FX_FN cv_cluster_t *fx_cluster(const char *metrics)
{
    cv_cluster_t *c = calloc(1, sizeof(*c));
    c->priorities = (cv_priorities_t){0, 0, 0, 0, 1, 2};
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", metrics ? metrics : "");
    for (char *save = NULL, *m = strtok_r(buf, ",", &save); m; m = strtok_r(NULL, ",", &save))
        snprintf(c->metrics[c->nmetrics++].name, CV_METRIC_NAME_MAX, "%s", m);
    return c;
}

FX_FN void fx_split_fd(cv_node_t *n, const char *fd)
{
    n->fault_domain = strdup(fd);
    const char *p = strncmp(fd, "fd:", 3) == 0 ? fd + 3 : fd;
    n->fd_path = calloc(strlen(p) + 1, sizeof(char *));
    char *copy = strdup(p);
    for (char *save = NULL, *part = strtok_r(copy, "/", &save); part;
         part = strtok_r(NULL, "/", &save))
        n->fd_path[n->fd_depth++] = strdup(part);
    free(copy);
}

/* Appends an up node of type "default" with unlimited capacities. Node
 * pointers stay valid until fx_done, which sorts the nodes by name. */
FX_FN cv_node_t *fx_node(cv_cluster_t *c, const char *name, const char *fd, const char *ud)
{
    c->nodes = realloc(c->nodes, (c->nnodes + 1) * sizeof(cv_node_t));
    cv_node_t *n = &c->nodes[c->nnodes++];
    memset(n, 0, sizeof(*n));
    n->name = strdup(name);
    n->type = strdup("default");
    fx_split_fd(n, fd);
    n->upgrade_domain = strdup(ud);
    n->props = json_pack("{s:s, s:s}", "NodeName", name, "NodeType", "default");
    for (size_t m = 0; m < CV_MAX_METRICS; m++)
        n->capacity[m] = -1;
    return n;
}

FX_FN void fx_type(cv_node_t *n, const char *type)
{
    free(n->type);
    n->type = strdup(type);
    json_object_set_new(n->props, "NodeType", json_string(type));
}

FX_FN void fx_cap(cv_cluster_t *c, cv_node_t *n, const char *metric, int64_t cap, int64_t load)
{
    int m = cv_cluster_metric(c, metric);
    n->capacity[m] = cap;
    n->load[m] = load;
}

static int fx_node_cmp(const void *a, const void *b)
{
    return strcmp(((const cv_node_t *)a)->name, ((const cv_node_t *)b)->name);
}

FX_FN void fx_done(cv_cluster_t *c)
{
    qsort(c->nodes, c->nnodes, sizeof(cv_node_t), fx_node_cmp);
}

FX_FN cv_node_t *fx_get(cv_cluster_t *c, const char *name)
{
    long i = cv_cluster_node(c, name);
    return i < 0 ? NULL : &c->nodes[i];
}

FX_FN void fx_cluster_free(cv_cluster_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nnodes; i++) {
        cv_node_t *n = &c->nodes[i];
        free(n->name);
        free(n->type);
        free(n->fault_domain);
        for (size_t k = 0; k < n->fd_depth; k++)
            free(n->fd_path[k]);
        free(n->fd_path);
        free(n->upgrade_domain);
        json_decref(n->props);
    }
    for (size_t i = 0; i < c->warnings.n; i++)
        free(c->warnings.v[i]);
    cv_vec_free(&c->warnings);
    free(c->nodes);
    free(c);
}

/* A cluster from a table of "name fd ud" triples: the FD x UD grids of
 * Service Fabric's cluster description docs. */
FX_FN cv_cluster_t *fx_grid(const char *const *rows, size_t n)
{
    cv_cluster_t *c = fx_cluster(NULL);
    for (size_t i = 0; i < n; i++) {
        char name[64], fd[64], ud[64];
        if (sscanf(rows[i], "%63s %63s %63s", name, fd, ud) == 3)
            fx_node(c, name, fd, ud);
    }
    fx_done(c);
    return c;
}

/* Nodes A, B, C... (n <= 26), node i in its own FD fd:/FD<i> and UD UD<i>,
 * with capacity `cap` of every metric in `metrics`; c->nodes[i] is node i. */
FX_FN cv_cluster_t *fx_lettered(const char *metrics, size_t n, int64_t cap)
{
    cv_cluster_t *c = fx_cluster(metrics);
    for (size_t i = 0; i < n; i++) {
        char name[8], fd[32], ud[32];
        snprintf(name, sizeof(name), "%c", (char)('A' + i));
        snprintf(fd, sizeof(fd), "fd:/FD%zu", i);
        snprintf(ud, sizeof(ud), "UD%zu", i);
        cv_node_t *node = fx_node(c, name, fd, ud);
        for (size_t m = 0; m < c->nmetrics; m++)
            node->capacity[m] = cap;
    }
    fx_done(c);
    return c;
}

/* ---------------------------------------------------------------- services */

FX_FN cv_service_t *fx_service(const char *name, int replicas, bool stateful)
{
    cv_service_t *s = calloc(1, sizeof(*s));
    s->name = strdup(name);
    s->service_type = strdup("T");
    s->replicas = replicas;
    s->stateful = stateful;
    return s;
}

FX_FN void fx_metric(cv_service_t *s, const char *name, int64_t primary, int64_t secondary,
                     double weight)
{
    cv_service_metric_t *m = &s->metrics[s->nmetrics++];
    snprintf(m->name, sizeof(m->name), "%s", name);
    m->primary_load = primary;
    m->secondary_load = secondary;
    m->weight = weight;
}

FX_FN void fx_placement(cv_service_t *s, const char *text)
{
    char err[256];
    s->placement_text = strdup(text);
    if (cv_pcexpr_parse(text, &s->placement, err, sizeof(err)) != 0) {
        fprintf(stderr, "fixture: bad placement constraint %s: %s\n", text, err);
        abort();
    }
}

FX_FN void fx_mesos(cv_service_t *s, const char *json_text)
{
    char err[256];
    json_t *spec = json_loads(json_text, 0, NULL);
    if (!spec || cv_mconstraint_parse(spec, "constraints", &s->constraints, err, sizeof(err))) {
        fprintf(stderr, "fixture: bad constraint %s: %s\n", json_text, err);
        abort();
    }
    json_decref(spec);
}

/* The library's own release (cv_cluster.h): the fixtures allocate services
 * as its loader does. */
FX_FN void fx_service_free(cv_service_t *s)
{
    cv_service_free(s);
}

/* ---------------------------------------------------------------- layouts */

FX_FN cv_layout_t *fx_layout(void)
{
    return calloc(1, sizeof(cv_layout_t));
}

/* Places `s` on the named nodes (replica i on nodes[i]) and adds its loads
 * to the nodes, as the layout loader does. */
FX_FN void fx_layout_add(cv_layout_t *l, cv_cluster_t *c, cv_service_t *s, const char *const *nodes,
                         size_t n)
{
    l->services = realloc(l->services, (l->nservices + 1) * sizeof(cv_placed_service_t));
    cv_placed_service_t *ps = &l->services[l->nservices++];
    ps->service = s;
    ps->replicas = calloc(n + 1, sizeof(cv_replica_t));
    ps->nreplicas = n;
    for (size_t i = 0; i < n; i++) {
        long node = cv_cluster_node(c, nodes[i]);
        bool primary = s->stateful && i == 0;
        ps->replicas[i] = (cv_replica_t){(int)i,
                                         !s->stateful ? CV_ROLE_INSTANCE
                                         : primary    ? CV_ROLE_PRIMARY
                                                      : CV_ROLE_SECONDARY,
                                         (size_t)node};
        for (size_t m = 0; m < s->nmetrics; m++) {
            int cm = cv_cluster_metric(c, s->metrics[m].name);
            if (cm >= 0)
                c->nodes[node].load[cm] += primary || !s->stateful ? s->metrics[m].primary_load
                                                                   : s->metrics[m].secondary_load;
        }
    }
}

FX_FN void fx_layout_free(cv_layout_t *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nservices; i++)
        free(l->services[i].replicas);
    free(l->services);
    free(l);
}

/* ---------------------------------------------------------------- teardown */

/* Releases what a test built, in this order; any of them may be NULL. */
FX_FN void fx_release(json_t *result, cv_layout_t *l, cv_service_t *s, cv_cluster_t *c)
{
    json_decref(result);
    fx_layout_free(l);
    fx_service_free(s);
    fx_cluster_free(c);
}

/* ---------------------------------------------------------------- reading results */

/* "N1,N2,N3": the placed nodes in replica order. */
FX_FN const char *fx_nodes(const json_t *result)
{
    static char buf[4096];
    size_t len = 0;
    json_t *p;
    size_t i;
    buf[0] = 0;
    json_array_foreach(json_object_get(result, "placements"), i, p)
    {
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "",
                                json_string_value(json_object_get(p, "node")));
    }
    return buf;
}

/* "N1,N2": the nodes a step of the first unplaced replica's sequence eliminated. */
FX_FN const char *fx_eliminated(const json_t *result, const char *constraint)
{
    static char buf[4096];
    size_t len = 0;
    buf[0] = 0;
    json_t *first = json_array_get(json_object_get(result, "unplaced"), 0);
    json_t *step, *name;
    size_t i, j;
    json_array_foreach(json_object_get(first, "eliminationSequence"), i, step)
    {
        if (strcmp(json_string_value(json_object_get(step, "constraint")), constraint) != 0)
            continue;
        json_array_foreach(json_object_get(step, "eliminated"), j, name)
        {
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", j ? "," : "",
                                    json_string_value(name));
        }
        return buf;
    }
    return NULL;
}

/* How many health reports carry `property` (and `state`, unless NULL). */
FX_FN size_t fx_health(const json_t *health, const char *property, const char *state)
{
    size_t n = 0, i;
    json_t *h;
    json_array_foreach(health, i, h)
    {
        if (strcmp(json_string_value(json_object_get(h, "property")), property) == 0 &&
            (!state || strcmp(json_string_value(json_object_get(h, "state")), state) == 0))
            n++;
    }
    return n;
}

#endif
