/*
 * rtype_service_observe — what a Converge::Service version's state is,
 * from the cluster snapshot the observer puts in data.cluster (its shape:
 * cv_service.h).
 *
 * Create / update: COMPLETE when every index 0..replicas-1 is placed on a
 * node that is up and its replica reports `healthy` running the spec's
 * digest, no higher index is still placed (a scale-down finished) and the
 * rolling update of that digest, if any, is complete; FAILED when the
 * service was rejected (it cannot fit: the live engine says why), is gone
 * from the cluster, every eligible node is blocklisted for it while a
 * replica waits (the live engine says which until when, and the start
 * error), or its rolling update failed or was rolled back;
 * IN_PROGRESS otherwise —
 * an unplaced replica waits for capacity, with its elimination sequence
 * in the reason and the `replicas` attribute.
 * Delete: COMPLETE when no replica is placed or still runs (reported
 * other than stopped or failed); the replicas of a node that is down
 * count as gone.
 * The attributes are rebuilt at every look.
 */
#include "cv_rtype.h"
#include "cv_service.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct view {
    const cv_rstate_t *st;
    const json_t *cluster;
    const json_t *placement; /* the entry per index, or NULL */
    const char *digest;
} view_t;

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static bool node_up(const json_t *cluster, const char *node)
{
    return json_is_true(
        json_object_get(json_object_get(json_object_get(cluster, "nodes"), node), "up"));
}

/* The placement entry of `index` (the last one listed wins). */
static const json_t *placed(const json_t *cluster, json_int_t index)
{
    const json_t *found = NULL, *e;
    size_t i;
    json_array_foreach(json_object_get(cluster, "placement"), i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) == index)
            found = e;
    }
    return found;
}

static const json_t *unplaced(const json_t *cluster, json_int_t index)
{
    const json_t *e;
    size_t i;
    json_array_foreach(json_object_get(cluster, "unplaced"), i, e)
    {
        if (json_integer_value(json_object_get(e, "index")) == index)
            return e;
    }
    return NULL;
}

/* The replica's status: its report's state, or what keeps it from one. */
static const char *status_of(const view_t *v, const json_t *entry, const json_t *report)
{
    if (!entry)
        return "unplaced";
    if (!node_up(v->cluster, str(entry, "node")))
        return "node_down";
    if (!report)
        return "assigned";
    const char *digest = str(report, "digest");
    if (digest[0] && v->digest[0] && strcmp(digest, v->digest) != 0)
        return "outdated";
    return str(report, "state")[0] ? str(report, "state") : "assigned";
}

static void add_endpoint(json_t *attrs, json_t *replica, const char *address, const json_t *ports,
                         const json_t *port_names)
{
    size_t i;
    const json_t *name;
    json_array_foreach(port_names, i, name)
    {
        const json_t *port = json_object_get(ports, json_string_value(name));
        if (!json_is_integer(port) || !address[0])
            continue;
        char ep[320];
        snprintf(ep, sizeof(ep), "%s:%lld", address, (long long)json_integer_value(port));
        if (i == 0) {
            json_object_set_new(replica, "endpoint", json_string(ep));
            json_array_append_new(json_object_get(attrs, "endpoints"), json_string(ep));
        }
        json_t *by_port = json_object_get(attrs, "port_endpoints");
        json_t *list = json_object_get(by_port, json_string_value(name));
        if (!list) {
            list = json_array();
            json_object_set_new(by_port, json_string_value(name), list);
        }
        json_array_append_new(list, json_string(ep));
    }
}

/* An elimination sequence as text: as given, or from the placement
 * library's list [{"constraint", "eliminated": [nodes]}] the steps that
 * eliminated nodes ("ReplicaExclusion eliminated n1, n2; ..."). */
static void elimination_text(const json_t *seq, char *out, size_t size)
{
    size_t i, j, len = 0;
    const json_t *step, *node;
    if (json_is_string(seq)) {
        snprintf(out, size, "%s", json_string_value(seq));
        return;
    }
    json_array_foreach(seq, i, step)
    {
        const json_t *gone = json_object_get(step, "eliminated");
        if (json_array_size(gone) == 0 || len >= size)
            continue;
        len += (size_t)snprintf(out + len, size - len, "%s%s eliminated", len ? "; " : "",
                                str(step, "constraint"));
        json_array_foreach(gone, j, node)
        {
            if (len < size)
                len += (size_t)snprintf(out + len, size - len, "%s %s", j ? "," : "",
                                        json_string_value(node) ? json_string_value(node) : "?");
        }
    }
}

/* One index's entry of the `replicas` attribute; true when healthy. */
static bool describe_replica(const view_t *v, json_t *attrs, json_int_t index, char *why,
                             size_t whysz)
{
    const json_t *data = v->st->data, *cluster = v->cluster;
    const json_t *entry = placed(cluster, index);
    const char *rid = str(entry, "rid"), *node = str(entry, "node");
    const json_t *report = entry ? json_object_get(json_object_get(cluster, "reports"), rid) : NULL;
    const char *stack = json_string_value(json_object_get(data, "stack_name"));
    char name[CV_PHYSID_MAX];
    snprintf(name, sizeof(name), "%s-%lld.%s", v->st->resource_name, (long long)index,
             stack ? stack : v->st->stack_name);
    const char *status = status_of(v, entry, report);
    const char *address = str(report, "address");
    if (!address[0])
        address = str(json_object_get(json_object_get(cluster, "nodes"), node), "address");
    json_t *ports = json_object_get(report, "ports");
    json_t *shown = json_is_object(ports) ? json_incref(ports) : json_object();
    json_t *replica =
        json_pack("{s:I, s:s, s:s?, s:s?, s:o, s:n, s:s, s:s?}", "index", index, "name", name,
                  "node", entry ? node : NULL, "address", address[0] ? address : NULL, "ports",
                  shown, "endpoint", "status", status, "role", entry ? str(entry, "role") : NULL);
    add_endpoint(attrs, replica, address, ports, json_object_get(data, "ports"));
    json_array_append_new(json_object_get(attrs, "replicas"), replica);
    bool healthy = strcmp(status, "healthy") == 0;
    if (!healthy && !why[0]) {
        const json_t *u = unplaced(cluster, index);
        char seq[256] = "";
        elimination_text(json_object_get(u, "eliminationSequence"), seq, sizeof(seq));
        if (seq[0])
            snprintf(why, whysz, "%s is unplaced: %s", name, seq);
        else if (!entry && u)
            snprintf(why, whysz, "%s is unplaced", name);
        else
            snprintf(why, whysz, "%s is %s%s%s", name, status, entry ? " on " : "",
                     entry ? node : "");
    }
    return healthy;
}

static void reset_attrs(cv_rstate_t *st, const char *svc)
{
    json_object_clear(st->attrs);
    json_object_set_new(st->attrs, "service_id", json_string(svc));
    json_object_set_new(st->attrs, "replicas", json_array());
    json_object_set_new(st->attrs, "endpoints", json_array());
    json_object_set_new(st->attrs, "port_endpoints", json_object());
}

/* The rolling update of this version's digest (docs/crm.md): the version
 * is complete only once its rollout is; a failed or rolled back one fails
 * it with the rollout's reason. A rollout of another digest, or none
 * (an update without update_policy), does not hold it back. */
static cv_observed_t observe_rollout(cv_rstate_t *st, const json_t *rollout, const char *digest)
{
    const char *state = str(rollout, "state"), *reason = str(rollout, "reason");
    if (!json_is_object(rollout) || strcmp(str(rollout, "to"), digest) != 0 ||
        strcmp(state, "complete") == 0)
        return CV_OBSERVED_COMPLETE;
    bool failed = strcmp(state, "failed") == 0 || strcmp(state, "rolled_back") == 0;
    if (failed)
        snprintf(st->reason, sizeof(st->reason), "rolling update %s: %s", state,
                 reason[0] ? reason : "a step failed");
    else
        snprintf(st->reason, sizeof(st->reason), "rolling update %s: step %lld of %lld%s%s%s%s",
                 state, (long long)json_integer_value(json_object_get(rollout, "step")),
                 (long long)json_integer_value(json_object_get(rollout, "steps")),
                 str(rollout, "domain")[0] ? ", upgrade domain " : "", str(rollout, "domain"),
                 reason[0] ? "; " : "", reason);
    return failed ? CV_OBSERVED_FAILED : CV_OBSERVED_IN_PROGRESS;
}

static cv_observed_t observe_running(cv_rstate_t *st, const json_t *cluster, const char *svc)
{
    /* The engine notes the live engine's answer to its reconcile; an
     * observer reads what the live engine stored since. */
    const char *noted = str(st->data, "rejected"), *stored = str(cluster, "rejected");
    if (noted[0] || stored[0]) {
        if (noted[0])
            snprintf(st->reason, sizeof(st->reason), "%s", noted);
        else
            snprintf(st->reason, sizeof(st->reason), "service %s rejected: %s", st->resource_name,
                     stored);
        return CV_OBSERVED_FAILED;
    }
    if (!json_is_true(json_object_get(cluster, "exists")) ||
        strcmp(str(cluster, "state"), "active") != 0) {
        snprintf(st->reason, sizeof(st->reason), "service %s is %s in the cluster", svc,
                 json_is_true(json_object_get(cluster, "exists")) ? "being deleted" : "missing");
        return CV_OBSERVED_FAILED;
    }
    view_t v = {.st = st, .cluster = cluster, .digest = str(st->data, "digest")};
    json_int_t n = json_integer_value(json_object_get(st->data, "replicas"));
    char why[384] = "";
    json_int_t healthy = 0, extra = 0;
    reset_attrs(st, svc);
    for (json_int_t i = 0; i < n; i++)
        healthy += describe_replica(&v, st->attrs, i, why, sizeof(why));
    /* A replica that waits for nothing but the blocklist to expire would
     * wait minutes for the same failure: the live engine said so. */
    const char *blocked = str(cluster, "blocked");
    if (blocked[0]) {
        snprintf(st->reason, sizeof(st->reason), "service %s: %s", st->resource_name, blocked);
        return CV_OBSERVED_FAILED;
    }
    cv_observed_t rolling = observe_rollout(st, json_object_get(cluster, "rollout"), v.digest);
    if (rolling != CV_OBSERVED_COMPLETE)
        return rolling;
    const json_t *e;
    size_t k;
    json_array_foreach(json_object_get(cluster, "placement"), k, e)
    {
        extra += json_integer_value(json_object_get(e, "index")) >= n;
    }
    if (healthy == n && extra == 0)
        return CV_OBSERVED_COMPLETE;
    if (healthy == n)
        snprintf(why, sizeof(why), "%lld replicas above %lld still to stop", (long long)extra,
                 (long long)n);
    snprintf(st->reason, sizeof(st->reason), "%lld of %lld replicas healthy; %s",
             (long long)healthy, (long long)n, why);
    return CV_OBSERVED_IN_PROGRESS;
}

/* Reports other than these are of a process that still runs. */
static bool stopped(const char *state)
{
    return strcmp(state, "stopped") == 0 || strcmp(state, "failed") == 0;
}

/* Deleted once the live engine committed the unassignment of every replica
 * (also those of a node down: its agent stops them when it is back, and
 * their capacity is free only then) and no node up still runs one. */
static cv_observed_t observe_delete(cv_rstate_t *st, const json_t *cluster, const char *svc)
{
    size_t assigned = json_array_size(json_object_get(cluster, "placement")), running = 0;
    const json_t *e;
    const char *rid;
    json_object_foreach((json_t *)json_object_get(cluster, "reports"), rid, e)
    {
        running += node_up(cluster, str(e, "node")) && !stopped(str(e, "state"));
    }
    if (assigned == 0 && running == 0)
        return CV_OBSERVED_COMPLETE;
    snprintf(st->reason, sizeof(st->reason),
             "service %s: %zu replicas still assigned, %zu processes still running", svc, assigned,
             running);
    return CV_OBSERVED_IN_PROGRESS;
}

cv_observed_t cv__service_observe(cv_rstate_t *st, cv_action_t action)
{
    json_t *cluster = json_incref(json_object_get(st->data, "cluster"));
    json_object_del(st->data, "cluster");
    const char *svc = json_string_value(json_object_get(st->data, "svc"));
    if (!svc)
        svc = st->physical_id;
    st->retry_at = st->now + CV_SERVICE_LOOK_SECS;
    cv_observed_t observed;
    if (!cluster) {
        snprintf(st->reason, sizeof(st->reason), "service %s: the cluster's state is not read yet",
                 svc);
        observed = CV_OBSERVED_IN_PROGRESS;
    } else if (action == CV_ACTION_DELETE) {
        observed = observe_delete(st, cluster, svc);
    } else {
        observed = observe_running(st, cluster, svc);
    }
    json_decref(cluster);
    return observed;
}
