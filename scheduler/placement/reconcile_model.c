/*
 * reconcile_model — reading the live model for one plan: the "live"
 * settings, what each node's heartbeat and admin state say, and the cluster
 * manifest and service description the placement library loads.
 *
 * Node loads are the declared `load` of the replica specs assigned to the
 * node (every service's but the one planned, whose own replicas count
 * through the layout): exactly what svc_commit.lua sums when it re-checks
 * capacity, so the planner and the committer agree on what fits.
 */
#include "reconcile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *cv__rc_json(const json_t *v)
{
    if (!json_is_string(v))
        return v ? json_incref((json_t *)v) : NULL;
    return json_loads(json_string_value(v), JSON_DECODE_ANY, NULL);
}

static double number(const json_t *obj, const char *key, double dflt)
{
    const json_t *v = json_object_get(obj, key);
    if (json_is_number(v))
        return json_number_value(v);
    if (json_is_string(v)) {
        char *end;
        double d = strtod(json_string_value(v), &end);
        if (end != json_string_value(v) && !*end)
            return d;
    }
    return dflt;
}

void cv__rc_settings(const json_t *settings, rc_settings_t *out)
{
    const json_t *live = json_object_get(settings, "live");
    out->grace_s = number(live, "downGraceSeconds", CV_RECONCILE_GRACE_S);
    out->fence_margin_ms = (int64_t)number(live, "fenceMarginMs", CV_RECONCILE_FENCE_MARGIN_MS);
    out->blocklist_n = (int)number(live, "blocklistAfterFailures", CV_RECONCILE_BLOCKLIST_N);
    out->blocklist_min = number(live, "blocklistMinutes", CV_RECONCILE_BLOCKLIST_MIN);
    out->handover_s = number(live, "moveHandoverSeconds", CV_RECONCILE_HANDOVER_S);
    if (out->blocklist_n < 1)
        out->blocklist_n = 1;
}

rc_node_state_t cv__rc_node(const rc_ctx_t *x, const char *node)
{
    const json_t *n = json_object_get(x->nodes, node);
    rc_node_state_t st = {.known = n && json_object_get(n, "description"),
                          .alive = json_is_true(json_object_get(n, "alive")),
                          .admin = json_string_value(json_object_get(n, "admin")),
                          .fence_ms = (int64_t)number(n, "fence_ms", CV_RECONCILE_FENCE_MS)};
    if (!st.admin || !st.admin[0])
        st.admin = "enabled";
    if (!st.alive) {
        double since = number(n, "down_since", x->now);
        st.down_for = x->now > since ? x->now - since : 0;
    }
    if (!st.known)
        st.down_for = 1e18; /* gone from the cluster: lost for good */
    return st;
}

void cv__rc_rid(char *buf, size_t size, const char *svc, int index, int64_t gen)
{
    snprintf(buf, size, "%s/%d/%lld", svc, index, (long long)gen);
}

int cv__rc_rid_index(const char *svc, const char *rid)
{
    size_t n = strlen(svc);
    if (strncmp(rid, svc, n) != 0 || rid[n] != '/')
        return -1;
    char *end;
    long index = strtol(rid + n + 1, &end, 10);
    return *end == '/' && end != rid + n + 1 && index >= 0 ? (int)index : -1;
}

void cv__rc_replica_name(const rc_ctx_t *x, int index, char *buf, size_t size)
{
    snprintf(buf, size, "%s-%d.%s", x->resource, index, x->stack_name);
}

/* ---------------------------------------------------------------- the service */

json_t *cv_reconcile_service_desc(const json_t *spec, const char *name, int replicas)
{
    static const char *const keys[] = {"serviceType", "stateful",     "placementConstraints",
                                       "metrics",     "distribution", "requireDomainDistribution",
                                       "constraints", "affinity",     NULL};
    json_t *desc = json_object();
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(spec, keys[i]);
        if (v && !json_is_null(v))
            json_object_set(desc, keys[i], v);
    }
    json_object_set_new(desc, "name", json_string(name));
    json_object_set_new(desc, "replicas", json_integer(replicas < 1 ? 1 : replicas));
    return desc;
}

/* ---------------------------------------------------------------- the process */

const json_t *cv__rc_process(const rc_ctx_t *x)
{
    const json_t *from = json_object_get(x->rollout, "from_process");
    const char *to = json_string_value(json_object_get(x->rollout, "to"));
    const char *state = json_string_value(json_object_get(x->rollout, "state"));
    bool back = state && (strcmp(state, "rolling_back") == 0 || strcmp(state, "rolled_back") == 0);
    if (x->rollout && strcmp(to ? to : "", x->digest) == 0 && json_is_object(from) && back)
        return from;
    return x->process;
}

/* ---------------------------------------------------------------- the cluster */

/* Sums the declared loads of the replicas assigned to a node, but for
 * this service's own. */
static json_t *assigned_load(const rc_ctx_t *x, const json_t *assign)
{
    json_t *load = json_object();
    const char *rid;
    json_t *spec;
    json_object_foreach((json_t *)assign, rid, spec)
    {
        if (cv__rc_rid_index(x->svc, rid) >= 0)
            continue;
        json_t *parsed = cv__rc_json(spec);
        const char *metric;
        json_t *v;
        json_object_foreach(json_object_get(parsed, "load"), metric, v)
        {
            if (!json_is_integer(v) || json_integer_value(v) < 0)
                continue;
            json_int_t have = json_integer_value(json_object_get(load, metric));
            json_object_set_new(load, metric, json_integer(have + json_integer_value(v)));
        }
        json_decref(parsed);
    }
    return load;
}

static bool blocklisted(const rc_ctx_t *x, const char *node)
{
    return number(x->blocklist, node, 0) > x->now || json_object_get(x->avoid, node);
}

static const char *node_status(const rc_ctx_t *x, const char *node)
{
    rc_node_state_t st = cv__rc_node(x, node);
    if (!st.alive)
        return "down";
    return strcmp(st.admin, "enabled") == 0 && !blocklisted(x, node) ? "up" : "disabled";
}

static json_t *node_entry(const rc_ctx_t *x, const char *name, const json_t *n, json_t *types)
{
    static const char *const keys[] = {"type",       "faultDomain", "upgradeDomain",
                                       "properties", "capacities",  NULL};
    json_t *desc = cv__rc_json(json_object_get(n, "description"));
    if (!json_is_object(desc)) {
        json_decref(desc);
        return NULL;
    }
    json_t *entry = json_object();
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(desc, keys[i]);
        if (v && !json_is_null(v))
            json_object_set(entry, keys[i], v);
    }
    json_decref(desc);
    const char *type = json_string_value(json_object_get(entry, "type"));
    if (type && !json_object_get(types, type)) /* a type the settings do not define: no defaults */
        json_object_set_new(types, type, json_object());
    json_object_set_new(entry, "name", json_string(name));
    json_object_set_new(entry, "status", json_string(node_status(x, name)));
    json_object_set_new(entry, "load", assigned_load(x, json_object_get(n, "assign")));
    return entry;
}

/* Adds to the manifest's node loads the old replicas of the handovers in
 * progress (reconcile_move.c), still assigned and running beside their
 * successors. */
static void add_handover_load(const rc_ctx_t *x, json_t *manifest)
{
    const char *key;
    json_t *entry;
    json_object_foreach(x->kept, key, entry)
    {
        const json_t *old = json_object_get(entry, "from");
        const char *node = json_string_value(json_object_get(old, "node"));
        const char *rid = json_string_value(json_object_get(old, "rid"));
        if (!node)
            continue;
        json_t *spec = cv__rc_json(cv__rc_assigned(x, node, rid ? rid : ""));
        size_t i;
        json_t *n;
        json_array_foreach(json_object_get(manifest, "nodes"), i, n)
        {
            if (strcmp(json_string_value(json_object_get(n, "name")), node) != 0)
                continue;
            json_t *load = json_object_get(n, "load");
            const char *metric;
            json_t *v;
            json_object_foreach(json_object_get(spec, "load"), metric, v)
            {
                json_int_t have = json_integer_value(json_object_get(load, metric));
                if (json_is_integer(v) && json_integer_value(v) > 0)
                    json_object_set_new(load, metric, json_integer(have + json_integer_value(v)));
            }
        }
        json_decref(spec);
    }
}

json_t *cv__rc_manifest(const rc_ctx_t *x)
{
    json_t *settings = cv__rc_json(json_object_get(x->model, "settings"));
    json_t *manifest = json_object();
    static const char *const keys[] = {"settings", "description", NULL};
    for (size_t i = 0; keys[i] && json_is_object(settings); i++) {
        json_t *v = json_object_get(settings, keys[i]);
        if (v)
            json_object_set(manifest, keys[i], v);
    }
    json_t *types = json_object_get(settings, "nodeTypes");
    types = json_is_object(types) ? json_deep_copy(types) : json_object();
    json_t *list = json_array();
    const char *name;
    json_t *n;
    json_object_foreach(x->nodes, name, n)
    {
        json_t *entry = node_entry(x, name, n, types);
        if (entry)
            json_array_append_new(list, entry);
    }
    json_object_set_new(manifest, "nodeTypes", types);
    json_object_set_new(manifest, "nodes", list);
    json_decref(settings);
    add_handover_load(x, manifest);
    return manifest;
}

const json_t *cv__rc_assigned(const rc_ctx_t *x, const char *node, const char *rid)
{
    return json_object_get(json_object_get(json_object_get(x->nodes, node), "assign"), rid);
}

/* The affinity parent (another service of the same stack named by
 * affinity.service): its replicas' nodes, without its loads (they are in
 * the nodes' assigned loads already). NULL when it has none. */
json_t *cv__rc_parent_layout(const rc_ctx_t *x, const cv_cluster_t *c)
{
    const char *want = x->s->affinity_service, *svc;
    json_t *rec;
    if (!want || strcmp(want, x->s->name) == 0)
        return NULL;
    json_object_foreach(json_object_get(x->model, "services"), svc, rec)
    {
        json_t *r = cv__rc_json(rec);
        const char *stack = json_string_value(json_object_get(r, "stack"));
        const char *res = json_string_value(json_object_get(r, "resource"));
        if (strcmp(svc, x->svc) == 0 || !stack || !res || strcmp(stack, x->stack) != 0 ||
            strcmp(res, want) != 0) {
            json_decref(r);
            continue;
        }
        json_t *placement = cv__rc_json(json_object_get(r, "placement"));
        json_t *list = json_array();
        size_t i;
        json_t *e;
        int top = 0;
        json_array_foreach(placement, i, e)
        {
            const char *node = json_string_value(json_object_get(e, "node"));
            int index = (int)json_integer_value(json_object_get(e, "index"));
            if (!node || cv_cluster_node(c, node) < 0 || index < 0)
                continue;
            top = index + 1 > top ? index + 1 : top;
            json_array_append_new(list, json_pack("{s:i, s:s}", "replica", index, "node", node));
        }
        json_t *desc = json_pack("{s:s, s:i, s:o}", "name", want, "replicas", top ? top : 1,
                                 "placements", list);
        json_decref(placement);
        json_decref(r);
        return desc;
    }
    return NULL;
}
