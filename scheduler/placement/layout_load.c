/*
 * Loading a layout: the services already in a cluster with their replicas,
 *   {"services": [{<service description>,
 *                  "placements": [{"replica": 0, "role": "primary", "node": "N1"}]}]}
 * checked against the cluster (every node exists, a replica index is placed
 * once and lies within the service's replica count, a stateful service has
 * at most one primary, a stateless one only instances). Only when all of it
 * is valid are the replicas' loads added to their nodes (the primary load
 * for a primary, the secondary load otherwise) and metrics the cluster did
 * not know added to it, so a failed load leaves the cluster as it was.
 * Two replicas of a service on one node are accepted here: that is a
 * violation for `place --check` to report, not unreadable input.
 */
#include "cluster_internal.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const layout_keys[] = {"services", NULL};
static const char *const placement_keys[] = {"replica", "role", "node", NULL};

void cv_layout_free(cv_layout_t *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nservices; i++) {
        cv_service_free(l->services[i].service);
        free(l->services[i].replicas);
    }
    free(l->services);
    free(l);
}

/* ------------------------------------------------------------------------ */
/* Placements                                                               */
/* ------------------------------------------------------------------------ */

static int load_role(const cv__cluster_ld_t *ld, const json_t *p, const char *base,
                     const cv_service_t *s, cv_role_t *role)
{
    static const char *const names[] = {"primary", "secondary", "instance"};
    char path[CV__CLUSTER_PATH_MAX];
    const char *r;
    int rc = cv__cluster_get_string(ld, p, base, "role", false, &r);
    *role = s->stateful ? CV_ROLE_SECONDARY : CV_ROLE_INSTANCE;
    if (rc || !r)
        return rc;
    cv__cluster_path_key(path, sizeof(path), base, "role");
    int i = 0;
    while (i < 3 && strcmp(r, names[i]) != 0)
        i++;
    if (i == 3)
        return cv__cluster_err(ld, CV_EVALIDATE, path,
                               "expected primary, secondary or instance, not '%s'", r);
    *role = (cv_role_t)i;
    if (s->stateful && *role == CV_ROLE_INSTANCE)
        return cv__cluster_err(ld, CV_EVALIDATE, path,
                               "service '%s' is stateful: its replicas are primary or secondary",
                               s->name);
    if (!s->stateful && *role != CV_ROLE_INSTANCE)
        return cv__cluster_err(ld, CV_EVALIDATE, path,
                               "service '%s' is stateless: its replicas are instances", s->name);
    return 0;
}

/* Where each replica index and the primary were placed (placements[j] + 1;
 * 0 for not yet). */
typedef struct seen {
    size_t *replica;
    size_t primary;
} seen_t;

/* The replica index: required, within the service, not placed before. */
static int load_index(const cv__cluster_ld_t *ld, const json_t *p, const char *base,
                      const cv_service_t *s, const seen_t *seen, int64_t *index)
{
    char path[CV__CLUSTER_PATH_MAX];
    const json_t *v = cv__cluster_member(p, "replica");
    cv__cluster_path_key(path, sizeof(path), base, "replica");
    if (!v)
        return cv__cluster_err(ld, CV_EVALIDATE, path, "required");
    int rc = cv__cluster_int_value(ld, v, path, 0, s->replicas - 1, index);
    if (!rc && seen->replica[*index])
        rc = cv__cluster_err(ld, CV_EEXIST, path, "replica %d is already placed (placements[%zu])",
                             (int)*index, seen->replica[*index] - 1);
    return rc;
}

static int load_node(const cv__cluster_ld_t *ld, const json_t *p, const char *base, size_t *out)
{
    char path[CV__CLUSTER_PATH_MAX];
    const char *node;
    int rc = cv__cluster_get_string(ld, p, base, "node", true, &node);
    if (rc)
        return rc;
    long at = cv_cluster_node(ld->c, node);
    if (at < 0)
        return cv__cluster_err(ld, CV_ENOENT,
                               cv__cluster_path_key(path, sizeof(path), base, "node"),
                               "unknown node '%s' (not in the cluster)", node);
    *out = (size_t)at;
    return 0;
}

static int load_placement(const cv__cluster_ld_t *ld, const json_t *p, const char *base,
                          const cv_service_t *s, seen_t *seen, size_t j, cv_replica_t *out)
{
    char path[CV__CLUSTER_PATH_MAX];
    int64_t index = 0;
    if (!json_is_object(p))
        return cv__cluster_err(ld, CV_EVALIDATE, base,
                               "expected an object {\"replica\", \"role\", \"node\"}");
    int rc = cv__cluster_check_keys(ld, p, base, placement_keys);
    if (!rc)
        rc = load_index(ld, p, base, s, seen, &index);
    if (!rc)
        rc = load_node(ld, p, base, &out->node);
    if (!rc)
        rc = load_role(ld, p, base, s, &out->role);
    if (!rc && out->role == CV_ROLE_PRIMARY && seen->primary)
        rc =
            cv__cluster_err(ld, CV_EEXIST, cv__cluster_path_key(path, sizeof(path), base, "role"),
                            "a second primary (placements[%zu] is the primary)", seen->primary - 1);
    if (rc)
        return rc;
    out->index = (int)index;
    seen->replica[index] = j + 1;
    seen->primary = out->role == CV_ROLE_PRIMARY ? j + 1 : seen->primary;
    return 0;
}

static int by_index(const void *a, const void *b)
{
    return ((const cv_replica_t *)a)->index - ((const cv_replica_t *)b)->index;
}

static int load_placements(const cv__cluster_ld_t *ld, const json_t *entry, const char *base,
                           cv_placed_service_t *ps)
{
    char path[CV__CLUSTER_PATH_MAX], ppath[CV__CLUSTER_PATH_MAX];
    const json_t *placements;
    int rc = cv__cluster_get_array(ld, entry, base, "placements", &placements);
    size_t n = json_array_size(placements);
    if (rc || n == 0)
        return rc;
    seen_t seen = {calloc((size_t)ps->service->replicas, sizeof(size_t)), 0};
    ps->replicas = calloc(n, sizeof(cv_replica_t));
    if (!seen.replica || !ps->replicas)
        rc = cv__cluster_err(ld, CV_ENOMEM, base, "out of memory");
    cv__cluster_path_key(path, sizeof(path), base, "placements");
    for (size_t j = 0; !rc && j < n; j++) {
        cv__cluster_path_idx(ppath, sizeof(ppath), path, j);
        rc = load_placement(ld, json_array_get(placements, j), ppath, ps->service, &seen, j,
                            &ps->replicas[j]);
        ps->nreplicas = rc ? j : j + 1;
    }
    free(seen.replica);
    qsort(ps->replicas, ps->nreplicas, sizeof(cv_replica_t), by_index);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Services                                                                 */
/* ------------------------------------------------------------------------ */

static int load_service(const cv__cluster_ld_t *ld, const json_t *entry, size_t i, json_t *names,
                        cv_placed_service_t *ps)
{
    char base[CV__CLUSTER_PATH_MAX], path[CV__CLUSTER_PATH_MAX];
    cv__cluster_path_idx(base, sizeof(base), "services", i);
    int rc = cv__cluster_service_parse(entry, ld->fname, base, true, &ps->service, ld->errstr,
                                       ld->errstr_size);
    if (rc)
        return rc;
    const char *name = ps->service->name;
    const json_t *other = json_object_get(names, name);
    if (other)
        return cv__cluster_err(ld, CV_EEXIST,
                               cv__cluster_path_key(path, sizeof(path), base, "name"),
                               "service '%s' appears twice (also services[%lld])", name,
                               (long long)json_integer_value(other));
    if (json_object_set_new(names, name, json_integer((json_int_t)i)) != 0)
        return cv__cluster_err(ld, CV_ENOMEM, base, "out of memory");
    return load_placements(ld, entry, base, ps);
}

/* Fails, before anything is changed, when the layout's metrics would take
 * the cluster past CV_MAX_METRICS. */
static int check_metrics(const cv__cluster_ld_t *ld, const cv_layout_t *l)
{
    json_t *added = json_object();
    int rc = added ? 0 : cv__cluster_err(ld, CV_ENOMEM, "", "out of memory");
    for (size_t i = 0; !rc && i < l->nservices; i++) {
        const cv_service_t *s = l->services[i].service;
        for (size_t k = 0; !rc && k < s->nmetrics; k++) {
            char path[CV__CLUSTER_PATH_MAX];
            if (cv_cluster_metric(ld->c, s->metrics[k].name) >= 0)
                continue;
            json_object_set_new(added, s->metrics[k].name, json_true());
            if (ld->c->nmetrics + json_object_size(added) <= CV_MAX_METRICS)
                continue;
            snprintf(path, sizeof(path), "services[%zu].metrics[%zu].name", i, k);
            rc = cv__cluster_err(ld, CV_ETOOBIG, path,
                                 "metric '%s' makes the cluster's metrics more than %d",
                                 s->metrics[k].name, CV_MAX_METRICS);
        }
    }
    json_decref(added);
    return rc;
}

static int apply_loads(const cv__cluster_ld_t *ld, const cv_layout_t *l)
{
    for (size_t i = 0; i < l->nservices; i++) {
        const cv_placed_service_t *ps = &l->services[i];
        for (size_t k = 0; k < ps->service->nmetrics; k++) {
            const cv_service_metric_t *sm = &ps->service->metrics[k];
            int m = cv__cluster_metric_add(ld, ld->c, sm->name, "");
            if (m < 0)
                return m;
            for (size_t r = 0; r < ps->nreplicas; r++) {
                const cv_replica_t *rep = &ps->replicas[r];
                ld->c->nodes[rep->node].load[m] +=
                    rep->role == CV_ROLE_PRIMARY ? sm->primary_load : sm->secondary_load;
            }
        }
    }
    return 0;
}

static int load(const cv__cluster_ld_t *ld, const json_t *layout, cv_layout_t *l)
{
    const json_t *services;
    int rc = cv__cluster_check_keys(ld, layout, "", layout_keys);
    if (!rc)
        rc = cv__cluster_get_array(ld, layout, "", "services", &services);
    if (!rc && !services)
        rc = cv__cluster_err(ld, CV_EVALIDATE, "services", "required (an empty list for none)");
    if (rc)
        return rc;
    json_t *names = json_object();
    l->services = calloc(json_array_size(services) + 1, sizeof(cv_placed_service_t));
    if (!names || !l->services)
        rc = cv__cluster_err(ld, CV_ENOMEM, "", "out of memory");
    for (size_t i = 0; !rc && i < json_array_size(services); i++) {
        l->nservices = i + 1;
        rc = load_service(ld, json_array_get(services, i), i, names, &l->services[i]);
    }
    json_decref(names);
    if (!rc)
        rc = check_metrics(ld, l);
    return rc ? rc : apply_loads(ld, l);
}

int cv_layout_load(const json_t *layout, const char *fname, cv_cluster_t *cluster,
                   cv_layout_t **out, char *errstr, size_t errstr_size)
{
    cv__cluster_ld_t ld = {
        .fname = fname, .errstr = errstr, .errstr_size = errstr_size, .c = cluster};
    *out = NULL;
    if (!json_is_object(layout))
        return cv__cluster_err(&ld, CV_EVALIDATE, "", "expected an object (a layout)");
    cv_layout_t *l = calloc(1, sizeof(*l));
    int rc = l ? load(&ld, layout, l) : cv__cluster_err(&ld, CV_ENOMEM, "", "out of memory");
    if (rc) {
        cv_layout_free(l);
        return rc;
    }
    *out = l;
    return 0;
}
