/*
 * cv_cluster — loading a cluster manifest into the placement data model.
 *
 * Two formats, told apart by their keys: ours ({"nodeTypes": {..},
 * "nodes": [{"name", "type", ..}], "settings": {..}}) and Service Fabric's
 * ClusterConfig.json ({"nodes": [{"nodeName", "nodeTypeRef", ..}],
 * "properties": {"nodeTypes": [..], "fabricSettings": [..]}}, cluster_sf.c).
 * Both feed the same node builder (cluster_node.c), so a node means the same
 * whichever format described it. The loaded cluster has its nodes sorted by
 * name, every metric any node, node type or setting names, the constraint
 * priorities, and the manifest's warnings (cluster_warn.c).
 */
#include "cluster_internal.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Service Fabric's defaults (its "PlacementAndLoadBalancing" settings, in
 * the Cluster Resource Manager docs on management integration). */
static const cv_priorities_t default_priorities = {
    .placement = 0,
    .capacity = 0,
    .affinity = 0,
    .fault_domain = 0,
    .upgrade_domain = 1,
    .preferred_location = 2,
};

/* ------------------------------------------------------------------------ */
/* Lookups                                                                  */
/* ------------------------------------------------------------------------ */

long cv_cluster_node(const cv_cluster_t *c, const char *name)
{
    size_t lo = 0, hi = c->nnodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(c->nodes[mid].name, name);
        if (cmp == 0)
            return (long)mid;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int cv_cluster_metric(const cv_cluster_t *c, const char *name)
{
    for (size_t m = 0; m < c->nmetrics; m++)
        if (strcmp(c->metrics[m].name, name) == 0)
            return (int)m;
    return -1;
}

int cv__cluster_metric_add(const cv__cluster_ld_t *ld, cv_cluster_t *c, const char *name,
                           const char *path)
{
    int m = cv_cluster_metric(c, name);
    if (m >= 0)
        return m;
    if (!name[0])
        return cv__cluster_err(ld, CV_EVALIDATE, path, "empty metric name");
    if (strlen(name) >= CV_METRIC_NAME_MAX)
        return cv__cluster_err(ld, CV_ETOOBIG, path, "metric name longer than %d characters",
                               CV_METRIC_NAME_MAX - 1);
    if (c->nmetrics == CV_MAX_METRICS)
        return cv__cluster_err(ld, CV_ETOOBIG, path, "more than %d metrics", CV_MAX_METRICS);
    cv_metric_t *metric = &c->metrics[c->nmetrics];
    memset(metric, 0, sizeof(*metric));
    snprintf(metric->name, sizeof(metric->name), "%s", name);
    return (int)c->nmetrics++;
}

/* ------------------------------------------------------------------------ */
/* Our format                                                               */
/* ------------------------------------------------------------------------ */

static const char *const manifest_keys[] = {"nodeTypes", "nodes", "settings", "description", NULL};
static const char *const type_keys[] = {"properties", "capacities", NULL};
static const char *const node_keys[] = {"name",          "type",       "faultDomain",
                                        "upgradeDomain", "properties", "capacities",
                                        "load",          "status",     NULL};

static int load_type(cv__cluster_ld_t *ld, const char *name, const json_t *t)
{
    char base[CV__CLUSTER_PATH_MAX], ppath[CV__CLUSTER_PATH_MAX], cpath[CV__CLUSTER_PATH_MAX];
    cv__cluster_path_key(base, sizeof(base), "nodeTypes", name);
    if (!json_is_object(t))
        return cv__cluster_err(ld, CV_EVALIDATE, base, "expected an object");
    const json_t *props, *caps;
    int rc = cv__cluster_check_keys(ld, t, base, type_keys);
    if (!rc)
        rc = cv__cluster_get_object(ld, t, base, "properties", &props);
    if (!rc)
        rc = cv__cluster_get_object(ld, t, base, "capacities", &caps);
    if (rc)
        return rc;
    return cv__cluster_type_add(
        ld, name, base, props, cv__cluster_path_key(ppath, sizeof(ppath), base, "properties"), caps,
        cv__cluster_path_key(cpath, sizeof(cpath), base, "capacities"));
}

static int load_ours(cv__cluster_ld_t *ld, const json_t *manifest)
{
    static const cv__cluster_node_keys_t keys = {"name", "type", "properties", node_keys};
    const json_t *types, *t;
    const char *name;
    /* "live" holds the live placement engine's settings (docs/services.md)
     * and "crm" the cluster resource manager's (docs/crm.md): checked on
     * their own, not among the keys a manifest names. */
    json_t *own = json_copy((json_t *)manifest);
    if (!own)
        return cv__cluster_err(ld, CV_ENOMEM, "", "out of memory");
    json_object_del(own, "live");
    json_object_del(own, "crm");
    int rc = cv__cluster_check_keys(ld, own, "", manifest_keys);
    json_decref(own);
    if (!rc)
        rc = cv__cluster_get_object(ld, manifest, "", "nodeTypes", &types);
    if (rc)
        return rc;
    json_object_foreach((json_t *)types, name, t)
    {
        if ((rc = load_type(ld, name, t)) != 0)
            return rc;
    }
    rc = cv__cluster_nodes_add(ld, manifest, &keys);
    if (!rc)
        rc = cv__cluster_live_check(ld, manifest);
    if (!rc)
        rc = cv__cluster_crm_check(ld, manifest);
    return rc ? rc : cv__cluster_settings_load(ld, manifest);
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */
/* ------------------------------------------------------------------------ */

static int by_name(const void *a, const void *b)
{
    return strcmp(((const cv_node_t *)a)->name, ((const cv_node_t *)b)->name);
}

static int load(cv__cluster_ld_t *ld, const json_t *manifest)
{
    ld->c = calloc(1, sizeof(*ld->c));
    ld->types = json_object();
    ld->seen = json_object();
    if (!ld->c || !ld->types || !ld->seen)
        return cv__cluster_err(ld, CV_ENOMEM, "", "out of memory");
    ld->c->priorities = default_priorities;
    int rc =
        cv__cluster_is_sf(manifest) ? cv__cluster_load_sf(ld, manifest) : load_ours(ld, manifest);
    if (rc)
        return rc;
    qsort(ld->c->nodes, ld->c->nnodes, sizeof(cv_node_t), by_name);
    rc = cv__cluster_warn(ld->c);
    return rc ? cv__cluster_err(ld, rc, "", "out of memory") : 0;
}

int cv_cluster_load(const json_t *manifest, const char *fname, cv_cluster_t **out, char *errstr,
                    size_t errstr_size)
{
    cv__cluster_ld_t ld = {.fname = fname, .errstr = errstr, .errstr_size = errstr_size};
    *out = NULL;
    if (!json_is_object(manifest))
        return cv__cluster_err(&ld, CV_EVALIDATE, "", "expected an object (a cluster manifest)");
    int rc = load(&ld, manifest);
    json_decref(ld.types);
    json_decref(ld.seen);
    if (rc) {
        cv_cluster_free(ld.c);
        return rc;
    }
    *out = ld.c;
    return 0;
}

void cv_cluster_free(cv_cluster_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nnodes; i++)
        cv__cluster_node_free(&c->nodes[i]);
    free(c->nodes);
    for (size_t i = 0; i < c->warnings.n; i++)
        free(c->warnings.v[i]);
    cv_vec_free(&c->warnings);
    free(c);
}
