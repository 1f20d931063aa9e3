#include "agent_desc.h"

#include "cv_placement.h"
#include "cv_base.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Node names are parts of Redis keys and of file names: keep them plain. */
static int check_name(const char *name, const char *fname, const char *path, char *errstr,
                      size_t errstr_size)
{
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s: %s: '%s': a node name is letters, digits, '.', '_' and '-'",
                             fname, path, name);
    return 0;
}

int cv_desc_check(const json_t *desc, const json_t *settings, const char *fname, char *errstr,
                  size_t errstr_size)
{
    json_t *m = settings ? json_deep_copy(settings) : json_object();
    if (!m || json_object_set_new(m, "nodes", json_pack("[O]", desc)) != 0) {
        json_decref(m);
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    }
    cv_cluster_t *c = NULL;
    int rc = cv_cluster_load(m, fname, &c, errstr, errstr_size);
    cv_cluster_free(c);
    json_decref(m);
    if (rc)
        return rc;
    const char *name = json_string_value(json_object_get(desc, "name"));
    return check_name(name ? name : "", fname, "nodes[0].name", errstr, errstr_size);
}

/* "true"/"false" are booleans, a whole number an integer, the rest a string. */
static json_t *typed(const char *v)
{
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
        return json_boolean(v[0] == 't');
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (*v && !*end && !errno && (isdigit((unsigned char)v[0]) || v[0] == '-'))
        return json_integer(n);
    return json_string(v);
}

/* "K=V" pairs into an object; integers only when `quantities`. */
static int pairs(const char *const *kv, size_t n, const char *opt, bool quantities, json_t *into,
                 char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(kv[i], '=');
        if (!eq || eq == kv[i])
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "the node description: %s '%s': expected NAME=VALUE", opt, kv[i]);
        char key[128];
        snprintf(key, sizeof(key), "%.*s", (int)(eq - kv[i]), kv[i]);
        /* A capacity that is no integer stays a string: the loader names it. */
        json_t *v = typed(eq + 1);
        if (quantities && json_is_boolean(v)) {
            json_decref(v);
            v = json_string(eq + 1);
        }
        json_object_set_new(into, key, v);
    }
    return 0;
}

int cv_desc_from_opts(const cv_desc_opts_t *o, const json_t *settings, json_t **desc, char *errstr,
                      size_t errstr_size)
{
    *desc = NULL;
    if (!o->name || !o->name[0])
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "the node description: name: required (--name, or --cluster and --node)");
    json_t *d = json_pack("{s:s}", "name", o->name);
    json_t *props = json_object(), *caps = json_object();
    if (o->type)
        json_object_set_new(d, "type", json_string(o->type));
    if (o->fault_domain)
        json_object_set_new(d, "faultDomain", json_string(o->fault_domain));
    if (o->upgrade_domain)
        json_object_set_new(d, "upgradeDomain", json_string(o->upgrade_domain));
    int rc = pairs(o->props, o->nprops, "--property", false, props, errstr, errstr_size);
    if (!rc)
        rc = pairs(o->caps, o->ncaps, "--capacity", true, caps, errstr, errstr_size);
    json_object_set_new(d, "properties", props);
    json_object_set_new(d, "capacities", caps);
    if (!rc)
        rc = cv_desc_check(d, settings, "the node description", errstr, errstr_size);
    /* There is one node: "nodes[0]." says nothing to the user of options. */
    char *at = rc && errstr ? strstr(errstr, ": nodes[0].") : NULL;
    if (at)
        memmove(at + 2, at + 11, strlen(at + 11) + 1);
    if (rc)
        json_decref(d);
    else
        *desc = d;
    return rc;
}

json_t *cv_desc_nodes(const json_t *manifest)
{
    json_t *names = json_array();
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(manifest, "nodes"), i, n)
    {
        const json_t *name = json_object_get(n, "name");
        if (!name)
            name = json_object_get(n, "nodeName");
        if (json_is_string(name))
            json_array_append(names, (json_t *)name);
    }
    return names;
}

/* `into`[key] with the entries of `from` it lacks (the node's own win). */
static void merge_under(json_t *desc, const char *key, const json_t *from)
{
    if (!json_is_object(from))
        return;
    json_t *into = json_object_get(desc, key);
    if (!json_is_object(into)) {
        into = json_object();
        json_object_set_new(desc, key, into);
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)from, k, v)
    {
        if (!json_object_get(into, k))
            json_object_set(into, k, v);
    }
}

/* The description carries its node type's properties and capacities, so
 * it says the whole node on its own: {cluster}:settings is one key that
 * agents started from other manifests may rewrite without their types. */
static void resolve_type(json_t *desc, const json_t *manifest)
{
    const char *type = json_string_value(json_object_get(desc, "type"));
    const json_t *t = type ? json_object_get(json_object_get(manifest, "nodeTypes"), type) : NULL;
    merge_under(desc, "properties", json_object_get(t, "properties"));
    merge_under(desc, "capacities", json_object_get(t, "capacities"));
}

int cv_desc_from_manifest(const json_t *manifest, const char *fname, const char *node,
                          json_t **desc, json_t **settings, char *errstr, size_t errstr_size)
{
    *desc = *settings = NULL;
    cv_cluster_t *c = NULL;
    int rc = cv_cluster_load(manifest, fname, &c, errstr, errstr_size);
    cv_cluster_free(c);
    if (rc)
        return rc;
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(manifest, "nodes"), i, n)
    {
        const char *name = json_string_value(json_object_get(n, "name"));
        if (!name || strcmp(name, node) != 0)
            continue;
        char path[64];
        snprintf(path, sizeof(path), "nodes[%zu].name", i);
        if ((rc = check_name(name, fname, path, errstr, errstr_size)) != 0)
            return rc;
        *desc = json_deep_copy(n);
        *settings = json_deep_copy(manifest);
        json_object_del(*settings, "nodes");
        json_object_del(*settings, "description");
        json_object_del(*desc, "load");
        json_object_del(*desc, "status");
        resolve_type(*desc, manifest);
        return 0;
    }
    return cv_seterr(errstr, errstr_size, CV_ENOENT, "%s: nodes: no node named '%s'", fname, node);
}
