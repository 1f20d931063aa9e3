/*
 * Node-level health reports of the live cluster (cv_reconcile.h): a node
 * whose measured load of a metric exceeds its capacity. The planner places
 * on declared loads; what the replicas really use is the agents' report,
 * and an overrun there is what an operator must see. Pure.
 */
#include "cv_reconcile.h"

#include <stdio.h>
#include <stdlib.h>

/* Redis holds JSON as strings: a tree either way (a new reference). */
static json_t *tree(const json_t *v)
{
    if (json_is_string(v))
        return json_loads(json_string_value(v), 0, NULL);
    return v ? json_incref((json_t *)v) : NULL;
}

static void overruns(json_t *out, const char *node, const json_t *caps, const json_t *load,
                     double now)
{
    const char *metric;
    json_t *cap;
    json_object_foreach((json_t *)caps, metric, cap)
    {
        const json_t *used = json_object_get(load, metric);
        if (!json_is_number(cap) || !json_is_number(used) || json_number_value(cap) < 0 ||
            json_number_value(used) <= json_number_value(cap))
            continue;
        char source[300], property[128], desc[512];
        snprintf(source, sizeof(source), "System.PLB:%s", node);
        snprintf(property, sizeof(property), "NodeCapacity_%s", metric);
        snprintf(desc, sizeof(desc),
                 "Node %s uses %.0f of its capacity %.0f of %s (measured by its agent)", node,
                 json_number_value(used), json_number_value(cap), metric);
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:f}", "source",
                                             source, "property", property, "state", "Warning",
                                             "description", desc, "timeToLive", "Infinite",
                                             "removeWhenExpired", 0, "time", now));
    }
}

json_t *cv_reconcile_node_reports(const json_t *model)
{
    json_t *out = json_array();
    double now = json_number_value(json_object_get(model, "now"));
    const char *node;
    json_t *n;
    json_object_foreach(json_object_get(model, "nodes"), node, n)
    {
        if (!json_is_true(json_object_get(n, "alive")))
            continue;
        json_t *desc = tree(json_object_get(n, "description"));
        json_t *load = tree(json_object_get(n, "load"));
        overruns(out, node, json_object_get(desc, "capacities"), load, now);
        json_decref(desc);
        json_decref(load);
    }
    return out;
}
