/*
 * Building nodes from a manifest's node list, in either format. A node
 * starts from its node type's properties and capacities and overrides them
 * with its own; the built-in properties NodeName and NodeType are added last
 * and may not be set by hand. A metric a node declares no capacity for is
 * unlimited (-1). A node without a fault domain is its own ("fd:/NAME"), and
 * one without an upgrade domain has its own (named after it): Service
 * Fabric's "one machine is a fault domain" and its most used UD layout.
 */
#include "cluster_internal.h"

#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv__cluster_node_free(cv_node_t *n)
{
    free(n->name);
    free(n->type);
    free(n->fault_domain);
    for (size_t i = 0; i < n->fd_depth; i++)
        free(n->fd_path[i]);
    free(n->fd_path);
    free(n->upgrade_domain);
    json_decref(n->props);
}

static bool is_builtin(const char *prop)
{
    return strcmp(prop, "NodeName") == 0 || strcmp(prop, "NodeType") == 0;
}

/* Adds the typed properties of `props` (an object, or NULL) to `into`. */
static int props_merge(const cv__cluster_ld_t *ld, json_t *into, const json_t *props,
                       const char *base)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)props, key, v)
    {
        char path[CV__CLUSTER_PATH_MAX];
        json_t *typed;
        cv__cluster_path_key(path, sizeof(path), base, key);
        if (is_builtin(key))
            return cv__cluster_err(ld, CV_EVALIDATE, path,
                                   "%s is a built-in property (the node's %s); it cannot be set",
                                   key, strcmp(key, "NodeName") == 0 ? "name" : "type");
        int rc = cv__cluster_prop_value(ld, v, path, &typed);
        if (rc)
            return rc;
        if (json_object_set_new(into, key, typed) != 0)
            return cv__cluster_err(ld, CV_ENOMEM, path, "out of memory");
    }
    return 0;
}

/* Reads the quantities of `obj` (metric -> load or capacity, or NULL),
 * registering new metrics, into `dst` indexed by cluster metric or, when dst
 * is NULL, into the object `into` (metric -> integer). */
static int qty_merge(const cv__cluster_ld_t *ld, const json_t *obj, const char *base, int64_t *dst,
                     json_t *into)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        char path[CV__CLUSTER_PATH_MAX];
        int64_t qty;
        cv__cluster_path_key(path, sizeof(path), base, key);
        int m = cv__cluster_metric_add(ld, ld->c, key, path);
        if (m < 0)
            return m;
        int rc = cv__cluster_qty_value(ld, v, path, &qty);
        if (rc)
            return rc;
        if (dst)
            dst[m] = qty;
        else if (json_object_set_new(into, key, json_integer(qty)) != 0)
            return cv__cluster_err(ld, CV_ENOMEM, path, "out of memory");
    }
    return 0;
}

int cv__cluster_type_add(cv__cluster_ld_t *ld, const char *name, const char *path,
                         const json_t *props, const char *props_path, const json_t *caps,
                         const char *caps_path)
{
    if (!name[0])
        return cv__cluster_err(ld, CV_EVALIDATE, path, "empty node type name");
    json_t *tprops = json_object(), *tcaps = json_object();
    json_t *t = json_pack("{s:o, s:o}", "properties", tprops, "capacities", tcaps);
    if (!t || json_object_set_new(ld->types, name, t) != 0)
        return cv__cluster_err(ld, CV_ENOMEM, path, "out of memory");
    int rc = props_merge(ld, tprops, props, props_path);
    return rc ? rc : qty_merge(ld, caps, caps_path, NULL, tcaps);
}

/* ------------------------------------------------------------------------ */
/* One node                                                                 */
/* ------------------------------------------------------------------------ */

static int dup_into(const cv__cluster_ld_t *ld, char **dst, const char *s)
{
    *dst = strdup(s);
    return *dst ? 0 : cv__cluster_err(ld, CV_ENOMEM, "", "out of memory");
}

static int node_status(const cv__cluster_ld_t *ld, const json_t *node, const char *base,
                       cv_node_t *n)
{
    static const char *const names[] = {"up", "down", "disabled"};
    char path[CV__CLUSTER_PATH_MAX];
    const char *status;
    int rc = cv__cluster_get_string(ld, node, base, "status", false, &status);
    if (rc || !status)
        return rc;
    for (int s = 0; s < 3; s++) {
        if (strcmp(status, names[s]) == 0) {
            n->status = (cv_node_status_t)s;
            return 0;
        }
    }
    return cv__cluster_err(ld, CV_EVALIDATE,
                           cv__cluster_path_key(path, sizeof(path), base, "status"),
                           "expected up, down or disabled, not '%s'", status);
}

/* The node's fault domain as written, or its own one-level domain. */
static int node_domains(const cv__cluster_ld_t *ld, const json_t *node, const char *base,
                        cv_node_t *n)
{
    char path[CV__CLUSTER_PATH_MAX];
    const char *fd, *ud;
    int rc = cv__cluster_get_string(ld, node, base, "faultDomain", false, &fd);
    if (!rc)
        rc = cv__cluster_get_string(ld, node, base, "upgradeDomain", false, &ud);
    if (!rc)
        rc = dup_into(ld, &n->upgrade_domain, ud ? ud : n->name);
    if (rc)
        return rc;
    if (fd) {
        cv__cluster_path_key(path, sizeof(path), base, "faultDomain");
        rc = cv__cluster_fd_parse(ld, fd, path, &n->fd_path, &n->fd_depth);
        return rc ? rc : dup_into(ld, &n->fault_domain, fd);
    }
    n->fd_path = calloc(1, sizeof(char *));
    if (!n->fd_path || asprintf(&n->fault_domain, "fd:/%s", n->name) < 0)
        return cv__cluster_err(ld, CV_ENOMEM, base, "out of memory");
    n->fd_depth = 1;
    return dup_into(ld, &n->fd_path[0], n->name);
}

static int node_identity(cv__cluster_ld_t *ld, const json_t *node, const char *base, size_t i,
                         const cv__cluster_node_keys_t *keys, cv_node_t *n)
{
    char path[CV__CLUSTER_PATH_MAX];
    const char *name, *type;
    int rc = cv__cluster_get_string(ld, node, base, keys->name, true, &name);
    if (!rc)
        rc = cv__cluster_get_string(ld, node, base, keys->type, false, &type);
    if (rc)
        return rc;
    const json_t *other = json_object_get(ld->seen, name);
    if (other)
        return cv__cluster_err(ld, CV_EEXIST,
                               cv__cluster_path_key(path, sizeof(path), base, keys->name),
                               "duplicate node name '%s' (also nodes[%lld])", name,
                               (long long)json_integer_value(other));
    if (type && !json_object_get(ld->types, type))
        return cv__cluster_err(ld, CV_ENOENT,
                               cv__cluster_path_key(path, sizeof(path), base, keys->type),
                               "unknown node type '%s'", type);
    if (json_object_set_new(ld->seen, name, json_integer((json_int_t)i)) != 0)
        return cv__cluster_err(ld, CV_ENOMEM, base, "out of memory");
    rc = dup_into(ld, &n->name, name);
    if (!rc)
        rc = dup_into(ld, &n->type, type ? type : "");
    if (!rc)
        rc = node_domains(ld, node, base, n);
    return rc ? rc : node_status(ld, node, base, n);
}

/* Properties: the type's, then the node's own, then the built-ins. */
static int node_props(const cv__cluster_ld_t *ld, const json_t *node, const char *base,
                      const cv__cluster_node_keys_t *keys, cv_node_t *n)
{
    char path[CV__CLUSTER_PATH_MAX];
    const json_t *type = json_object_get(ld->types, n->type), *own;
    n->props = json_object();
    if (!n->props)
        return cv__cluster_err(ld, CV_ENOMEM, base, "out of memory");
    if (type)
        json_object_update(n->props, json_object_get(type, "properties"));
    int rc = cv__cluster_get_object(ld, node, base, keys->props, &own);
    if (!rc)
        rc = props_merge(ld, n->props, own,
                         cv__cluster_path_key(path, sizeof(path), base, keys->props));
    if (rc)
        return rc;
    if (json_object_set_new(n->props, "NodeName", json_string(n->name)) != 0 ||
        (type && json_object_set_new(n->props, "NodeType", json_string(n->type)) != 0))
        return cv__cluster_err(ld, CV_ENOMEM, base, "out of memory");
    return 0;
}

/* Capacities (the type's, then the node's own) and the reported load. */
static int node_quantities(const cv__cluster_ld_t *ld, const json_t *node, const char *base,
                           cv_node_t *n)
{
    char path[CV__CLUSTER_PATH_MAX];
    const json_t *type = json_object_get(ld->types, n->type), *caps, *load, *v;
    const char *key;
    json_object_foreach(json_object_get(type, "capacities"), key, v)
    {
        n->capacity[cv_cluster_metric(ld->c, key)] = json_integer_value(v);
    }
    int rc = cv__cluster_get_object(ld, node, base, "capacities", &caps);
    if (!rc)
        rc = qty_merge(ld, caps, cv__cluster_path_key(path, sizeof(path), base, "capacities"),
                       n->capacity, NULL);
    if (!rc)
        rc = cv__cluster_get_object(ld, node, base, "load", &load);
    if (!rc)
        rc = qty_merge(ld, load, cv__cluster_path_key(path, sizeof(path), base, "load"), n->load,
                       NULL);
    return rc;
}

static int node_add(cv__cluster_ld_t *ld, const json_t *node, size_t i,
                    const cv__cluster_node_keys_t *keys)
{
    char base[CV__CLUSTER_PATH_MAX];
    cv__cluster_path_idx(base, sizeof(base), "nodes", i);
    if (!json_is_object(node))
        return cv__cluster_err(ld, CV_EVALIDATE, base, "expected an object");
    int rc = keys->allowed ? cv__cluster_check_keys(ld, node, base, keys->allowed) : 0;
    if (rc)
        return rc;
    cv_node_t n;
    memset(&n, 0, sizeof(n));
    for (size_t m = 0; m < CV_MAX_METRICS; m++)
        n.capacity[m] = -1;
    rc = node_identity(ld, node, base, i, keys, &n);
    if (!rc)
        rc = node_props(ld, node, base, keys, &n);
    if (!rc)
        rc = node_quantities(ld, node, base, &n);
    if (rc) {
        cv__cluster_node_free(&n);
        return rc;
    }
    ld->c->nodes[ld->c->nnodes++] = n;
    return 0;
}

int cv__cluster_nodes_add(cv__cluster_ld_t *ld, const json_t *manifest,
                          const cv__cluster_node_keys_t *keys)
{
    const json_t *nodes;
    int rc = cv__cluster_get_array(ld, manifest, "", "nodes", &nodes);
    if (rc)
        return rc;
    if (json_array_size(nodes) == 0)
        return cv__cluster_err(ld, CV_EVALIDATE, "nodes",
                               "required: a cluster needs at least one node");
    ld->c->nodes = calloc(json_array_size(nodes), sizeof(cv_node_t));
    if (!ld->c->nodes)
        return cv__cluster_err(ld, CV_ENOMEM, "nodes", "out of memory");
    for (size_t i = 0; i < json_array_size(nodes); i++)
        if ((rc = node_add(ld, json_array_get(nodes, i), i, keys)) != 0)
            return rc;
    return 0;
}
