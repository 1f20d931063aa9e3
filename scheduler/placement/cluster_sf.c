/*
 * Service Fabric's ClusterConfig.json (as its Cluster Resource Manager docs
 * show it): "nodes" with nodeName, nodeTypeRef, faultDomain, upgradeDomain;
 * "properties.nodeTypes" with name, placementProperties and capacities; and
 * "properties.fabricSettings" sections of {"name", "value"} parameters,
 * whose values are strings ("0.15", "-1.0", "1"). The sections read are
 * NodeBufferPercentage, NodeOverbookingPercentage and the constraint
 * priorities of PlacementAndLoadBalancing; the cluster resource manager's
 * timers, throttles and thresholds (PlacementAndLoadBalancing,
 * MetricBalancingThresholds, MetricActivityThresholds,
 * DefragmentationMetrics, a node type's placementAndLoadBalancingOverrides)
 * are checked as cv_balance_settings reads them; every other section and
 * parameter (security, diagnostics) is not placement's business and is
 * ignored, as are the many other members of a node.
 * The documentation's fragments put nodeTypes and fabricSettings at the top
 * level (Template.json style); those are read there when "properties" does
 * not have them. A node may also carry our format's per-node members
 * (placementProperties and capacities overriding its type's, load, status).
 *
 * The format is told by the first node: "nodeName" is Service Fabric's,
 * "name" ours; without either, by ClusterConfig.json's top-level members.
 */
#include "cluster_internal.h"

#include "cv_base.h"

#include <stdio.h>
#include <string.h>

bool cv__cluster_is_sf(const json_t *manifest)
{
    const json_t *first = json_array_get(json_object_get(manifest, "nodes"), 0);
    if (json_object_get(first, "name") || json_object_get(first, "nodeName"))
        return json_object_get(first, "nodeName") != NULL;
    return json_is_object(json_object_get(manifest, "properties")) ||
           json_object_get(manifest, "fabricSettings") ||
           json_is_array(json_object_get(manifest, "nodeTypes"));
}

/* properties.KEY, else KEY at the top level; `base` gets its path. */
static int sf_section(const cv__cluster_ld_t *ld, const json_t *manifest, const char *key,
                      char *base, size_t size, const json_t **out)
{
    const json_t *props = cv__cluster_member(manifest, "properties");
    if (cv__cluster_member(props, key)) {
        cv__cluster_path_key(base, size, "properties", key);
        return cv__cluster_get_array(ld, props, "properties", key, out);
    }
    cv__cluster_path_key(base, size, "", key);
    return cv__cluster_get_array(ld, manifest, "", key, out);
}

/* Calls each(ld, item, its path) for every item of the section's array,
 * stopping at the first error. */
static int sf_each(cv__cluster_ld_t *ld, const json_t *manifest, const char *key,
                   int (*each)(cv__cluster_ld_t *ld, const json_t *item, const char *base))
{
    char base[CV__CLUSTER_PATH_MAX], path[CV__CLUSTER_PATH_MAX];
    const json_t *items;
    int rc = sf_section(ld, manifest, key, base, sizeof(base), &items);
    for (size_t i = 0; !rc && i < json_array_size(items); i++)
        rc = each(ld, json_array_get(items, i), cv__cluster_path_idx(path, sizeof(path), base, i));
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Node types                                                               */
/* ------------------------------------------------------------------------ */

static int sf_type(cv__cluster_ld_t *ld, const json_t *t, const char *base)
{
    char path[CV__CLUSTER_PATH_MAX], ppath[CV__CLUSTER_PATH_MAX], cpath[CV__CLUSTER_PATH_MAX];
    const json_t *props, *caps;
    const char *name;
    if (!json_is_object(t))
        return cv__cluster_err(ld, CV_EVALIDATE, base, "expected an object");
    int rc = cv__cluster_get_string(ld, t, base, "name", true, &name);
    if (!rc)
        rc = cv__cluster_get_object(ld, t, base, "placementProperties", &props);
    if (!rc)
        rc = cv__cluster_get_object(ld, t, base, "capacities", &caps);
    if (rc)
        return rc;
    if (json_object_get(ld->types, name))
        return cv__cluster_err(ld, CV_EEXIST,
                               cv__cluster_path_key(path, sizeof(path), base, "name"),
                               "duplicate node type '%s'", name);
    return cv__cluster_type_add(
        ld, name, base, props,
        cv__cluster_path_key(ppath, sizeof(ppath), base, "placementProperties"), caps,
        cv__cluster_path_key(cpath, sizeof(cpath), base, "capacities"));
}

/* ------------------------------------------------------------------------ */
/* fabricSettings                                                           */
/* ------------------------------------------------------------------------ */

typedef enum { SECTION_OTHER, SECTION_BUFFER, SECTION_OVERBOOK, SECTION_PLB } section_t;

static section_t section_kind(const char *name)
{
    if (strcmp(name, "NodeBufferPercentage") == 0)
        return SECTION_BUFFER;
    if (strcmp(name, "NodeOverbookingPercentage") == 0)
        return SECTION_OVERBOOK;
    if (strcmp(name, "PlacementAndLoadBalancing") == 0)
        return SECTION_PLB;
    return SECTION_OTHER;
}

static int sf_parameter(cv__cluster_ld_t *ld, section_t kind, const json_t *p, const char *base)
{
    char path[CV__CLUSTER_PATH_MAX];
    const char *name;
    if (!json_is_object(p))
        return cv__cluster_err(ld, CV_EVALIDATE, base, "expected an object {\"name\", \"value\"}");
    int rc = cv__cluster_get_string(ld, p, base, "name", true, &name);
    if (rc)
        return rc;
    const json_t *value = cv__cluster_member(p, "value");
    cv__cluster_path_key(path, sizeof(path), base, "value");
    int *field =
        kind == SECTION_PLB ? cv__cluster_priority_field(&ld->c->priorities, name, true) : NULL;
    if (!value && (kind != SECTION_PLB || field))
        return cv__cluster_err(ld, CV_EVALIDATE, path, "required");
    if (kind == SECTION_BUFFER)
        return cv__cluster_set_buffer(ld, name, value, path);
    if (kind == SECTION_OVERBOOK)
        return cv__cluster_set_overbook(ld, name, value, path);
    return field ? cv__cluster_set_priority(ld, field, value, path) : 0;
}

static int sf_setting(cv__cluster_ld_t *ld, const json_t *s, const char *base)
{
    char path[CV__CLUSTER_PATH_MAX], ppath[CV__CLUSTER_PATH_MAX];
    const json_t *params;
    const char *name;
    if (!json_is_object(s))
        return cv__cluster_err(ld, CV_EVALIDATE, base,
                               "expected an object {\"name\", \"parameters\"}");
    int rc = cv__cluster_get_string(ld, s, base, "name", true, &name);
    if (!rc)
        rc = cv__cluster_get_array(ld, s, base, "parameters", &params);
    section_t kind = rc ? SECTION_OTHER : section_kind(name);
    if (rc || kind == SECTION_OTHER)
        return rc;
    cv__cluster_path_key(path, sizeof(path), base, "parameters");
    for (size_t i = 0; !rc && i < json_array_size(params); i++)
        rc = sf_parameter(ld, kind, json_array_get(params, i),
                          cv__cluster_path_idx(ppath, sizeof(ppath), path, i));
    return rc;
}

int cv__cluster_load_sf(cv__cluster_ld_t *ld, const json_t *manifest)
{
    static const cv__cluster_node_keys_t keys = {"nodeName", "nodeTypeRef", "placementProperties",
                                                 NULL};
    int rc = sf_each(ld, manifest, "nodeTypes", sf_type);
    if (!rc)
        rc = cv__cluster_nodes_add(ld, manifest, &keys);
    if (!rc)
        rc = sf_each(ld, manifest, "fabricSettings", sf_setting);
    return rc ? rc : cv__cluster_crm_check(ld, manifest);
}
