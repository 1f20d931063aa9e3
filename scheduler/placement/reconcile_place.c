/*
 * reconcile_place — placing the missing replicas of a service on the live
 * cluster with cv_place, which keeps the replicas already placed.
 *
 * First the kept replicas are checked against the service's placement
 * constraint and Mesos constraints with the same checkers the placement
 * uses (a changed constraint moves exactly the replicas that now violate
 * it). Then one pass places every missing index as new work (the buffer is
 * reserved); indexes that replace a lost, given-up, drained or violating
 * replica and did not fit get a second pass as availability actions, which
 * may use the buffer (as Service Fabric's Cluster Resource Manager allows).
 * When the cluster's remaining capacity cannot hold all the missing
 * replicas, the service is rejected only if the cluster could not hold it
 * even with every node up and empty; otherwise as many of the lowest
 * missing indexes as fit are placed and the others wait, unplaced, for
 * capacity.
 */
#include "reconcile_internal.h"

#include "cv_base.h"
#include "cv_mesos.h"
#include "cv_pcexpr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct world {
    cv_cluster_t *c;
    cv_layout_t *l;
} world_t;

static void world_free(world_t *w)
{
    cv_layout_free(w->l);
    cv_cluster_free(w->c);
    w->l = NULL;
    w->c = NULL;
}

static const char *layout_role(const rc_ctx_t *x, const json_t *entry, bool *primary_seen)
{
    if (!x->s->stateful)
        return "instance";
    const char *role = json_string_value(json_object_get(entry, "role"));
    if (role && strcmp(role, "primary") == 0 && !*primary_seen) {
        *primary_seen = true;
        return "primary";
    }
    return "secondary";
}

/* The layout entry of this service: its kept replicas and `extra` ones
 * (index key -> entry). */
static json_t *own_layout(const rc_ctx_t *x, const json_t *extra)
{
    json_t *desc = cv_reconcile_service_desc(x->spec, x->s->name, x->target);
    json_t *list = json_array();
    bool primary_seen = false;
    const json_t *sets[] = {x->kept, extra, x->held};
    for (int k = 0; k < 3; k++) {
        const char *key;
        json_t *e;
        json_object_foreach((json_t *)sets[k], key, e)
        {
            int index = atoi(key);
            if (index >= x->target)
                continue;
            json_array_append_new(list, json_pack("{s:i, s:s, s:O}", "replica", index, "role",
                                                  layout_role(x, e, &primary_seen), "node",
                                                  json_object_get(e, "node")));
        }
    }
    json_object_set_new(desc, "placements", list);
    return desc;
}

static int world_load(const rc_ctx_t *x, const json_t *manifest, const json_t *extra, world_t *w,
                      char *errstr, size_t errstr_size)
{
    memset(w, 0, sizeof(*w));
    int rc = cv_cluster_load(manifest, "cluster", &w->c, errstr, errstr_size);
    if (rc)
        return rc;
    json_t *services = json_array();
    json_array_append_new(services, own_layout(x, extra));
    json_t *parent = cv__rc_parent_layout(x, w->c);
    if (parent)
        json_array_append_new(services, parent);
    json_t *layout = json_pack("{s:o}", "services", services);
    rc = cv_layout_load(layout, "placement", w->c, &w->l, errstr, errstr_size);
    json_decref(layout);
    if (rc)
        world_free(w);
    return rc;
}

/* ---------------------------------------------------------------- constraint violations */

/* Kept replicas, lowest index first, each judged against the constraints
 * given the kept replicas below it: of two replicas that together break a
 * constraint (UNIQUE, MAXPER), the higher index moves. */
static void judge_constraints(rc_ctx_t *x, const cv_cluster_t *c)
{
    if (c->priorities.placement < 0 || (!x->s->placement && !x->s->constraints))
        return;
    size_t n = json_object_size(x->kept), np = 0, ne = 0;
    const json_t **placed = calloc(n + 1, sizeof(*placed));
    const json_t **eligible = calloc(c->nnodes + 1, sizeof(*eligible));
    for (size_t i = 0; eligible && i < c->nnodes; i++)
        if (c->nodes[i].status == CV_NODE_UP &&
            (!x->s->placement || cv_pcexpr_match(x->s->placement, c->nodes[i].props)))
            eligible[ne++] = c->nodes[i].props;
    for (int index = 0; placed && eligible && index < x->target; index++) {
        char key[16], why[512];
        snprintf(key, sizeof(key), "%d", index);
        json_t *e = json_object_get(x->kept, key);
        if (!e)
            continue;
        const char *node = json_string_value(json_object_get(e, "node"));
        long at = cv_cluster_node(c, node);
        if (at < 0)
            continue;
        const json_t *props = c->nodes[at].props;
        cv_mesos_ctx_t mctx = {props, placed, np, x->target, eligible, ne};
        why[0] = '\0';
        if (x->s->placement && !cv_pcexpr_match(x->s->placement, props))
            snprintf(why, sizeof(why), "placement constraint '%s' no longer holds on node %s",
                     x->s->placement_text, node);
        else if (x->s->constraints && !cv_mconstraint_allows(x->s->constraints, &mctx))
            snprintf(why, sizeof(why), "constraint '%s' no longer holds on node %s",
                     cv_mconstraint_text(x->s->constraints), node);
        if (!why[0]) {
            placed[np++] = props;
            continue;
        }
        json_object_set_new(x->moved_from, key,
                            json_pack("{s:O, s:O, s:s}", "node", json_object_get(e, "node"), "rid",
                                      json_object_get(e, "rid"), "why", why));
        json_object_set_new(x->replace, key, json_string(why));
        json_object_del(x->kept, key);
    }
    free(placed);
    free(eligible);
}

/* ---------------------------------------------------------------- capacity */

/* Whether the service fits the cluster with every node up and empty. */
static json_t *rejected_on_empty(const rc_ctx_t *x, cv_cluster_t *c)
{
    size_t n = c->nnodes;
    cv_node_status_t *status = malloc((n + 1) * sizeof(*status));
    int64_t(*load)[CV_MAX_METRICS] = malloc((n + 1) * sizeof(*load));
    json_t *rejected = NULL;
    if (!status || !load) {
        free(status);
        free(load);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        status[i] = c->nodes[i].status;
        memcpy(load[i], c->nodes[i].load, sizeof(load[i]));
        c->nodes[i].status = CV_NODE_UP;
        memset(c->nodes[i].load, 0, sizeof(c->nodes[i].load));
    }
    json_t *r = cv_place(c, x->s, NULL, CV_PLACE_NEW);
    json_t *why = json_object_get(r, "rejected");
    if (why && !json_is_null(why))
        rejected = json_incref(why);
    json_decref(r);
    for (size_t i = 0; i < n; i++) {
        c->nodes[i].status = status[i];
        memcpy(c->nodes[i].load, load[i], sizeof(load[i]));
    }
    free(status);
    free(load);
    return rejected;
}

static bool is_rejected(const json_t *r)
{
    const json_t *why = json_object_get(r, "rejected");
    return why && !json_is_null(why);
}

static json_t *place_upto(rc_ctx_t *x, const world_t *w, int upto, cv_place_action_t action)
{
    int all = x->s->replicas;
    x->s->replicas = upto;
    json_t *r = cv_place(w->c, x->s, w->l, action);
    x->s->replicas = all;
    return r;
}

/* The placement of as many of the lowest missing indexes as the remaining
 * capacity holds; *upto says how many indexes that is. */
static json_t *place_fitting(rc_ctx_t *x, const world_t *w, cv_place_action_t action, int *upto)
{
    int lo = 0, hi = x->target;
    json_t *best = NULL;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        json_t *r = place_upto(x, w, mid, action);
        if (r && !is_rejected(r)) {
            json_decref(best);
            best = r;
            lo = mid;
        } else {
            json_decref(r);
            hi = mid - 1;
        }
    }
    *upto = lo;
    return best ? best : place_upto(x, w, 0, action);
}

/* ---------------------------------------------------------------- one pass */

static void new_entry(rc_ctx_t *x, json_t *into, int index, const char *node, const char *role)
{
    char key[16], rid[512];
    snprintf(key, sizeof(key), "%d", index);
    cv__rc_rid(rid, sizeof(rid), x->svc, index, x->gen + 1);
    json_object_set_new(into, key,
                        json_pack("{s:i, s:s, s:s, s:s, s:f}", "index", index, "rid", rid, "node",
                                  node, "role", role, "since", x->now));
}

/* Records a result: new placements into `added` (only indexes in `only`
 * when given), unplaced indexes with their elimination sequence into
 * `waiting` (index key -> sequence). */
static void take_result(rc_ctx_t *x, const json_t *r, json_t *added, json_t *waiting,
                        const json_t *only)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(r, "placements"), i, p)
    {
        int index = (int)json_integer_value(json_object_get(p, "replica"));
        char key[16];
        snprintf(key, sizeof(key), "%d", index);
        const char *role = json_string_value(json_object_get(p, "role"));
        json_t *kept = json_object_get(x->kept, key);
        if (kept) {
            json_object_set_new(kept, "role", json_string(role));
            continue;
        }
        if ((only && !json_object_get(only, key)) || json_object_get(x->held, key))
            continue;
        new_entry(x, added, index, json_string_value(json_object_get(p, "node")), role);
        json_object_del(waiting, key);
    }
    json_array_foreach(json_object_get(r, "unplaced"), i, p)
    {
        char key[16];
        snprintf(key, sizeof(key), "%d", (int)json_integer_value(json_object_get(p, "replica")));
        if ((!only || json_object_get(only, key)) && !json_object_get(x->held, key))
            json_object_set(waiting, key, json_object_get(p, "eliminationSequence"));
    }
}

static void wait_for_capacity(rc_ctx_t *x, json_t *waiting, int from, const json_t *why)
{
    for (int index = from; index < x->target; index++) {
        char key[16];
        snprintf(key, sizeof(key), "%d", index);
        if (json_object_get(x->kept, key))
            continue;
        json_object_set_new(waiting, key,
                            json_pack("[{s:s, s:[], s:O}]", "constraint", "ClusterCapacity",
                                      "eliminated", "description",
                                      json_object_get(why, "description")));
    }
}

/* The first pass: every missing index as new work. Returns the pass's
 * result, or NULL when the service is rejected (x->rejected set). */
static json_t *first_pass(rc_ctx_t *x, world_t *w, json_t *added, json_t *waiting)
{
    json_t *r = cv_place(w->c, x->s, w->l, CV_PLACE_NEW);
    if (r && is_rejected(r)) {
        json_t *why = json_incref(json_object_get(r, "rejected"));
        json_decref(r);
        x->rejected = rejected_on_empty(x, w->c);
        if (x->rejected) {
            json_decref(why);
            return NULL;
        }
        int upto = 0;
        r = place_fitting(x, w, CV_PLACE_NEW, &upto);
        wait_for_capacity(x, waiting, upto, why);
        json_decref(why);
    }
    if (r)
        take_result(x, r, added, waiting, NULL);
    return r;
}

/* The replacements still waiting, placed again as availability actions. */
static int second_pass(rc_ctx_t *x, const json_t *manifest, json_t *added, json_t *waiting,
                       char *errstr, size_t errstr_size)
{
    json_t *only = json_object();
    const char *key;
    json_t *v;
    json_object_foreach(x->replace, key, v)
    {
        if (json_object_get(waiting, key))
            json_object_set_new(only, key, json_true());
    }
    int rc = 0;
    if (json_object_size(only) > 0) {
        world_t w;
        rc = world_load(x, manifest, added, &w, errstr, errstr_size);
        if (!rc) {
            json_t *r = cv_place(w.c, x->s, w.l, CV_PLACE_REPLACE);
            if (r && !is_rejected(r))
                take_result(x, r, added, waiting, only);
            json_decref(r);
            world_free(&w);
        }
    }
    json_decref(only);
    return rc;
}

/* ---------------------------------------------------------------- the result */

static void collect(rc_ctx_t *x, const json_t *added, const json_t *waiting)
{
    for (int index = 0; index < x->target; index++) {
        char key[16];
        snprintf(key, sizeof(key), "%d", index);
        json_t *e = json_object_get(x->kept, key);
        if (!e)
            e = json_object_get(added, key);
        if (e) {
            json_array_append(x->placement, e);
            continue;
        }
        json_t *seq = json_object_get(waiting, key), *held = json_object_get(x->held, key);
        if (held) {
            char text[768];
            snprintf(text, sizeof(text), "replica %s is still %s on %s",
                     json_string_value(json_object_get(held, "rid")),
                     json_string_value(json_object_get(held, "state")),
                     json_string_value(json_object_get(held, "node")));
            json_array_append_new(x->unplaced,
                                  json_pack("{s:i, s:[{s:s, s:[], s:s}]}", "index", index,
                                            "eliminationSequence", "constraint", "StatefulFence",
                                            "eliminated", "description", text));
            continue;
        }
        json_array_append_new(x->unplaced,
                              json_pack("{s:i, s:o}", "index", index, "eliminationSequence",
                                        seq ? json_incref(seq) : json_array()));
    }
}

static void keep_all(rc_ctx_t *x)
{
    json_t *none = json_object();
    collect(x, none, none);
    json_decref(none);
}

int cv__rc_place(rc_ctx_t *x, char *errstr, size_t errstr_size)
{
    json_t *manifest = cv__rc_manifest(x);
    if (json_array_size(json_object_get(manifest, "nodes")) == 0) {
        keep_all(x); /* no node at all: everything waits for one to join */
        json_decref(manifest);
        return 0;
    }
    json_t *added = json_object(), *waiting = json_object();
    world_t w;
    int rc = world_load(x, manifest, NULL, &w, errstr, errstr_size);
    if (!rc) {
        judge_constraints(x, w.c);
        cv__rc_note_eligible(x, w.c);
        cv__rc_hold(x);
        world_free(&w);
        rc = world_load(x, manifest, NULL, &w, errstr, errstr_size);
    }
    if (!rc) {
        json_t *r = first_pass(x, &w, added, waiting);
        if (r && !x->rejected) {
            json_array_extend(x->health, json_object_get(r, "health"));
        }
        json_decref(r);
        world_free(&w);
    }
    if (!rc && !x->rejected)
        rc = second_pass(x, manifest, added, waiting, errstr, errstr_size);
    if (!rc && x->rejected)
        keep_all(x);
    else if (!rc)
        collect(x, added, waiting);
    json_decref(added);
    json_decref(waiting);
    json_decref(manifest);
    return rc;
}
