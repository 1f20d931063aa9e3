/*
 * Manifest warnings (after Service Fabric's cluster description docs): what
 * makes a cluster hard to place on well without being wrong. A fault-domain
 * tree is unbalanced when, at some level, sibling domains hold different
 * numbers of nodes: the Cluster Resource Manager then has to choose between
 * using the heavy domain and spreading. A node count that is not a multiple
 * of the number of top-level fault domains is the common cause. A property
 * set on some nodes only is noted because a placement constraint using it
 * never matches the others. Messages list domains and nodes in name order, so
 * they are deterministic.
 */
#include "cluster_internal.h"

#include "cv_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many domains or nodes are named in one warning. */
#define LIST_MAX 10

static int warn(cv_cluster_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int warn(cv_cluster_t *c, const char *fmt, ...)
{
    char *text;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return CV_ENOMEM;
    if (cv_vec_push(&c->warnings, text) != 0) {
        free(text);
        return CV_ENOMEM;
    }
    return 0;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of `obj` in byte order (NULL on ENOMEM; an empty object gives a
 * valid, empty array). */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
    const char **keys = malloc((json_object_size(obj) + 1) * sizeof(char *));
    const char *key;
    const json_t *v;
    *n = 0;
    if (!keys)
        return NULL;
    json_object_foreach((json_t *)obj, key, v)
    {
        keys[(*n)++] = key;
    }
    qsort(keys, *n, sizeof(char *), by_string);
    return keys;
}

/* "fd:/dc1/rack1" for the first `levels` levels of a node's domain. */
static void fd_prefix(const cv_node_t *n, size_t levels, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "fd:");
    for (size_t i = 0; i < levels && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "/%s", n->fd_path[i]);
}

/* ------------------------------------------------------------------------ */
/* Fault-domain tree                                                        */
/* ------------------------------------------------------------------------ */

static int warn_depths(cv_cluster_t *c)
{
    size_t lo = 0, hi = 0;
    for (size_t i = 1; i < c->nnodes; i++) {
        lo = c->nodes[i].fd_depth < c->nodes[lo].fd_depth ? i : lo;
        hi = c->nodes[i].fd_depth > c->nodes[hi].fd_depth ? i : hi;
    }
    if (c->nodes[lo].fd_depth == c->nodes[hi].fd_depth)
        return 0;
    return warn(c, "fault domains have different depths: %s is %zu level(s) deep, %s %zu",
                c->nodes[lo].name, c->nodes[lo].fd_depth, c->nodes[hi].name, c->nodes[hi].fd_depth);
}

/* Whether the children of one parent (domain -> node count) differ. */
static bool uneven(const json_t *children)
{
    json_int_t first = -1;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)children, key, v)
    {
        if (first >= 0 && json_integer_value(v) != first)
            return true;
        first = json_integer_value(v);
    }
    return false;
}

static int warn_uneven(cv_cluster_t *c, const char *parent, const json_t *children)
{
    char list[1024];
    size_t n, len = 0;
    const char **keys = sorted_keys(children, &n);
    if (!keys)
        return CV_ENOMEM;
    list[0] = '\0';
    for (size_t i = 0; i < n && i < LIST_MAX && len < sizeof(list); i++)
        len +=
            (size_t)snprintf(list + len, sizeof(list) - len, "%s%s: %lld", i ? ", " : "", keys[i],
                             (long long)json_integer_value(json_object_get(children, keys[i])));
    free(keys);
    const char *more = n > LIST_MAX ? ", ..." : "";
    if (parent[0])
        return warn(c,
                    "unbalanced fault domain tree: the domains under %s hold different numbers of "
                    "nodes (%s%s)",
                    parent, list, more);
    return warn(c,
                "unbalanced fault domain tree: the top-level domains hold different numbers of "
                "nodes (%s%s)",
                list, more);
}

/* Node counts per domain at `level`, grouped by parent domain:
 * {"fd:/dc1": {"fd:/dc1/r1": 3, "fd:/dc1/r2": 2}}; the top level's parent is "". */
static json_t *level_counts(const cv_cluster_t *c, size_t level)
{
    json_t *groups = json_object();
    for (size_t i = 0; groups && i < c->nnodes; i++) {
        char parent[CV__CLUSTER_PATH_MAX], child[CV__CLUSTER_PATH_MAX];
        const cv_node_t *n = &c->nodes[i];
        if (n->fd_depth <= level)
            continue;
        fd_prefix(n, level, parent, sizeof(parent));
        fd_prefix(n, level + 1, child, sizeof(child));
        const char *key = level ? parent : "";
        json_t *children = json_object_get(groups, key);
        if (!children && json_object_set_new(groups, key, children = json_object()) != 0)
            break;
        json_int_t count = json_integer_value(json_object_get(children, child));
        if (json_object_set_new(children, child, json_integer(count + 1)) != 0)
            break;
    }
    return groups;
}

static int warn_tree(cv_cluster_t *c, size_t max_depth)
{
    int rc = 0;
    for (size_t level = 0; !rc && level < max_depth; level++) {
        size_t n;
        json_t *groups = level_counts(c, level);
        const char **parents = groups ? sorted_keys(groups, &n) : NULL;
        rc = parents ? 0 : CV_ENOMEM;
        for (size_t i = 0; !rc && i < n; i++) {
            const json_t *children = json_object_get(groups, parents[i]);
            if (uneven(children))
                rc = warn_uneven(c, parents[i], children);
        }
        free(parents);
        json_decref(groups);
    }
    return rc;
}

static int warn_multiple(cv_cluster_t *c)
{
    json_t *top = json_object();
    if (!top)
        return CV_ENOMEM;
    for (size_t i = 0; i < c->nnodes; i++)
        json_object_set_new(top, c->nodes[i].fd_path[0], json_true());
    size_t nfd = json_object_size(top);
    json_decref(top);
    if (nfd == 0 || c->nnodes % nfd == 0)
        return 0;
    return warn(c,
                "%zu nodes are not a multiple of the %zu top-level fault domains: some domains "
                "hold more nodes than others",
                c->nnodes, nfd);
}

/* ------------------------------------------------------------------------ */
/* Properties                                                               */
/* ------------------------------------------------------------------------ */

static int warn_property(cv_cluster_t *c, const char *prop)
{
    char list[1024];
    size_t len = 0, missing = 0;
    list[0] = '\0';
    for (size_t i = 0; i < c->nnodes; i++) {
        if (json_object_get(c->nodes[i].props, prop))
            continue;
        if (missing < LIST_MAX && len < sizeof(list))
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", missing ? ", " : "",
                                    c->nodes[i].name);
        missing++;
    }
    if (missing == 0)
        return 0;
    return warn(c,
                "property %s is set on %zu of %zu nodes (not on %s%s): a placement constraint "
                "using it never matches the others",
                prop, c->nnodes - missing, c->nnodes, list, missing > LIST_MAX ? ", ..." : "");
}

static int warn_properties(cv_cluster_t *c)
{
    json_t *all = json_object();
    if (!all)
        return CV_ENOMEM;
    for (size_t i = 0; i < c->nnodes; i++)
        json_object_update(all, c->nodes[i].props);
    json_object_del(all, "NodeName");
    json_object_del(all, "NodeType");
    size_t n;
    const char **props = sorted_keys(all, &n);
    int rc = props ? 0 : CV_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++)
        rc = warn_property(c, props[i]);
    free(props);
    json_decref(all);
    return rc;
}

int cv__cluster_warn(cv_cluster_t *c)
{
    size_t max_depth = 0;
    for (size_t i = 0; i < c->nnodes; i++)
        max_depth = c->nodes[i].fd_depth > max_depth ? c->nodes[i].fd_depth : max_depth;
    int rc = warn_depths(c);
    if (!rc)
        rc = warn_tree(c, max_depth);
    if (!rc)
        rc = warn_multiple(c);
    return rc ? rc : warn_properties(c);
}
