/*
 * A ResourceGroup's update_policy batch_create (Heat's): the members are
 * created max_batch_size at a time, in name order, with pause_time seconds
 * between two batches; a batch begins only once the one before it is
 * complete, so batches never overlap.
 *
 * Heat runs one nested-stack update per batch. Here the group's child
 * template says the same with dependencies, in the one child traversal:
 * every member of batch k depends on every member of batch k-1 — through an
 * OS::Heat::Delay "batch_pause_<k>" of min_wait pause_time when there is a
 * pause — so the traversal's order is Heat's. The batches are fixed when the
 * group is created (data.batches) and kept, so that the child template, and
 * with it the decision that a no-op update changes nothing, stays the same;
 * members added later by a larger count belong to no batch.
 *
 * The policy comes from the engine as the resource's resolved update_policy
 * in data.facade (Heat's batch arithmetic with no member yet: batches of
 * max_batch_size, the last one smaller). Its numbers are read and checked
 * here for rolling_update too (cv__group_policy).
 */
#include "cv_error.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

/* A number of the policy: `dflt` when absent; -1 when not a number. */
static double policy_number(const json_t *policy, const char *key, double dflt)
{
    const json_t *v = json_object_get(policy, key);
    if (!v || json_is_null(v))
        return dflt;
    json_t *n = cv__rtype_coerce(CV_PROP_NUMBER, v);
    double d = n ? json_number_value(n) : -1;
    json_decref(n);
    return d;
}

/* Heat's _get_batches with no member yet and min_in_service 0: the names
 * in order, max_batch_size at a time. */
static json_t *split(const json_t *names, size_t size)
{
    json_t *batches = json_array(), *batch = NULL;
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        if (i % size == 0) {
            batch = json_array();
            json_array_append_new(batches, batch);
        }
        json_array_append(batch, (json_t *)n);
    }
    return batches;
}

/* Whether `v` is within Heat's Range(min=`min`), and whole for an integer. */
static bool in_range(double v, double min, bool integer)
{
    return v >= min && (!integer || v == (double)(long long)v);
}

int cv__group_policy(const json_t *policy, const char *which, double *size, double *pause,
                     double *min_in_service, char *errstr, size_t errsz)
{
    *size = policy_number(policy, "max_batch_size", 1);
    *pause = policy_number(policy, "pause_time", 0);
    double min = min_in_service ? policy_number(policy, "min_in_service", 0) : 0;
    if (min_in_service)
        *min_in_service = min;
    const char *bad = !in_range(*size, 1, true)     ? "max_batch_size"
                      : !in_range(*pause, 0, false) ? "pause_time"
                      : !in_range(min, 0, true)     ? "min_in_service"
                                                    : NULL;
    if (!bad)
        return 0;
    char got[64];
    cv__rtype_describe(json_object_get(policy, bad), got, sizeof(got));
    return cv_seterr(errstr, errsz, CV_EVALIDATE,
                     "update_policy.%s.%s: %s is out of range (min: %d, max: None)", which, bad,
                     got, strcmp(bad, "max_batch_size") ? 0 : 1);
}

/* Fixes the batches when the group is created; non-zero with errstr when
 * the policy is invalid (Heat's Range messages). */
static int plan_batches(const json_t *names, json_t *data, char *errstr, size_t errsz)
{
    const json_t *policy = json_object_get(
        json_object_get(json_object_get(data, "facade"), "update_policy"), "batch_create");
    /* Only a group being created (no members named yet) is batched, as in
     * Heat, where batch_create applies to handle_create alone. */
    bool creating = !json_object_get(data, "names") && !json_object_get(data, "batches");
    if (!creating || !json_is_object(policy) || !json_array_size(names))
        return 0;
    double size, pause;
    int rc = cv__group_policy(policy, "batch_create", &size, &pause, NULL, errstr, errsz);
    if (rc)
        return rc;
    json_object_set_new(data, "batches", split(names, (size_t)size));
    json_object_set_new(data, "batch_pause", json_real(pause));
    return 0;
}

int cv__group_batch_create(json_t *resources, const json_t *names, json_t *data, char *errstr,
                           size_t errsz)
{
    int rc = plan_batches(names, data, errstr, errsz);
    cv__group_order_batches(resources, json_object_get(data, "batches"),
                            cv__rtype_data_number(data, "batch_pause", 0), "batch_pause_");
    return rc;
}
