/*
 * reconcile_fit — whether one replica of the service fits on one given
 * node, as the placement library judges it: capacity, placement and Mesos
 * constraints, affinity, fault and upgrade domains. A move names its
 * target; the planner must not pick another one, so the replica is placed
 * with cv_place on the cluster where the target is the only node up, among
 * the service's other replicas where they are (the moving one left out).
 *
 * cv_place relaxes soft constraints when nothing satisfies them: a move
 * that needs such a relaxation is refused unless the replica where it is
 * now would need it as well (a layout already degraded does not forbid
 * every move).
 */
#include "reconcile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FIT_NO = -1, FIT_RELAXED = 0, FIT_CLEAN = 1 };

/* The service's replicas but `index`, numbered 0..n-1, so that the moving
 * replica is the only one missing (number n). */
static json_t *others_layout(const rc_ctx_t *x, int index, int *n)
{
    json_t *list = json_array();
    bool primary_seen = false;
    const json_t *sets[] = {x->kept, x->held};
    for (int k = 0; k < 2; k++) {
        const char *key;
        json_t *e;
        json_object_foreach((json_t *)sets[k], key, e)
        {
            if (atoi(key) == index || atoi(key) >= x->target)
                continue;
            const char *role = json_string_value(json_object_get(e, "role"));
            bool primary = x->s->stateful && role && strcmp(role, "primary") == 0 && !primary_seen;
            primary_seen = primary_seen || primary;
            json_array_append_new(list, json_pack("{s:i, s:s, s:O}", "replica",
                                                  (int)json_array_size(list), "role",
                                                  !x->s->stateful ? "instance"
                                                  : primary       ? "primary"
                                                                  : "secondary",
                                                  "node", json_object_get(e, "node")));
        }
    }
    *n = (int)json_array_size(list);
    return list;
}

/* The live manifest with `node` the only node up. */
static json_t *alone_manifest(const rc_ctx_t *x, const char *node)
{
    json_t *manifest = cv__rc_manifest(x);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(manifest, "nodes"), i, e)
    {
        bool target = strcmp(json_string_value(json_object_get(e, "name")), node) == 0;
        json_object_set_new(e, "status", json_string(target ? "up" : "disabled"));
    }
    return manifest;
}

static bool names(const json_t *list, const char *node)
{
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), node) == 0)
            return true;
    }
    return false;
}

/* "PlacementConstraint, FaultDomain": the steps of an elimination sequence
 * that eliminated `node`. */
static void eliminated_by(const json_t *seq, const char *node, char *buf, size_t size)
{
    size_t i, len = 0;
    const json_t *step;
    buf[0] = '\0';
    json_array_foreach(seq, i, step)
    {
        if (len < size && names(json_object_get(step, "eliminated"), node))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
                                    json_string_value(json_object_get(step, "constraint")));
    }
    if (!buf[0])
        snprintf(buf, size, "no placement");
}

/* What cv_place did with the one missing replica. */
static int judge_result(const json_t *r, const char *node, char *why, size_t size)
{
    const json_t *rejected = json_object_get(r, "rejected");
    if (rejected && !json_is_null(rejected)) {
        const char *desc = json_string_value(json_object_get(rejected, "description"));
        const char *what = desc && strstr(desc, ": ") ? strstr(desc, ": ") + 2 : desc;
        snprintf(why, size, "node %s is full: %s", node, what ? what : "no room");
        return FIT_NO;
    }
    if (json_array_size(json_object_get(r, "unplaced")) > 0) {
        char by[512];
        eliminated_by(json_object_get(json_array_get(json_object_get(r, "unplaced"), 0),
                                      "eliminationSequence"),
                      node, by, sizeof(by));
        snprintf(why, size, "node %s does not fit: %s", node, by);
        return FIT_NO;
    }
    size_t i;
    const json_t *w;
    json_array_foreach(json_object_get(r, "warnings"), i, w)
    {
        const char *relaxed = strstr(json_string_value(w), " by relaxing: ");
        if (relaxed) {
            /* packing is what a lone node up looks like: the spread breaks */
            bool packing = strstr(relaxed, "packing into the domains") != NULL;
            snprintf(why, size, "node %s would break %s", node,
                     packing ? "the domain spread" : relaxed + 14);
            return FIT_RELAXED;
        }
    }
    return FIT_CLEAN;
}

static int place_alone(rc_ctx_t *x, int index, const char *node, cv_place_action_t action,
                       char *why, size_t size)
{
    char err[512];
    int n = 0;
    cv_cluster_t *c = NULL;
    cv_layout_t *l = NULL;
    json_t *manifest = alone_manifest(x, node);
    json_t *desc = cv_reconcile_service_desc(x->spec, x->s->name, 1);
    json_object_set_new(desc, "placements", others_layout(x, index, &n));
    json_object_set_new(desc, "replicas", json_integer(n + 1));
    json_t *services = json_pack("[o]", desc);
    int fit = FIT_NO;
    if (cv_cluster_load(manifest, "cluster", &c, err, sizeof(err)) == 0) {
        json_t *parent = cv__rc_parent_layout(x, c);
        if (parent)
            json_array_append_new(services, parent);
        json_t *layout = json_pack("{s:O}", "services", services);
        if (cv_layout_load(layout, "placement", c, &l, err, sizeof(err)) == 0) {
            int all = x->s->replicas;
            x->s->replicas = n + 1;
            json_t *r = cv_place(c, x->s, l, action);
            x->s->replicas = all;
            fit = r ? judge_result(r, node, why, size) : FIT_NO;
            if (!r)
                snprintf(why, size, "out of memory");
            json_decref(r);
        } else
            snprintf(why, size, "the layout does not load: %s", err);
        json_decref(layout);
    } else
        snprintf(why, size, "the cluster does not load: %s", err);
    cv_layout_free(l);
    cv_cluster_free(c);
    json_decref(services);
    json_decref(manifest);
    return fit;
}

bool cv__rc_fits(rc_ctx_t *x, int index, const char *node, const char *now_on,
                 cv_place_action_t action, char *why, size_t size)
{
    int fit = place_alone(x, index, node, action, why, size);
    if (fit != FIT_RELAXED)
        return fit == FIT_CLEAN;
    char here[512];
    return !now_on || place_alone(x, index, now_on, action, here, sizeof(here)) != FIT_CLEAN;
}
