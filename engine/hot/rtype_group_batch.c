/*
 * A ResourceGroup's update_policy batch_create (Heat's): the members are
 * created max_batch_size at a time, in name order, with pause_time seconds
 * between two batches; a batch begins only once the one before it is
 * complete, so batches never overlap.
 *
 * As in Heat, each batch is one traversal of the child stack (its create,
 * then an update per batch): the group's create is a walk (cv_rtype.h)
 * whose steps are the members after each batch (cv__group_walk_plan with no
 * member yet). The pauses are the walk's; the child holds only members.
 *
 * The policy comes from the engine as the resource's resolved update_policy
 * in data.facade. Its numbers are read and checked here for rolling_update
 * too (cv__group_policy).
 */
#include "cv_base.h"
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

/* Whether `v` is within Heat's Range(min=`min`), and whole for an integer. */
static bool in_range(double v, double min, bool integer)
{
    return v >= min && (!integer || v == (double)(long long)v);
}

int cv__group_policy(const json_t *policy, const char *which, double *size, double *pause,
                     double *min_in_service, char *errstr, size_t errstr_size)
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
    return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                     "update_policy.%s.%s: %s is out of range (min: %d, max: None)", which, bad,
                     got, strcmp(bad, "max_batch_size") ? 0 : 1);
}

/* A group being created under batch_create walks to its members
 * max_batch_size at a time; non-zero with errstr when the policy is invalid
 * (Heat's Range messages). */
int cv__group_batch_create(const json_t *names, json_t *data, char *errstr, size_t errstr_size)
{
    const json_t *policy = json_object_get(
        json_object_get(json_object_get(data, "facade"), "update_policy"), "batch_create");
    json_object_del(data, "batches"); /* the dependencies of an earlier release */
    json_object_del(data, "batch_pause");
    /* Only a group being created (no members named yet) is batched, as in
     * Heat, where batch_create applies to handle_create alone. */
    if (json_object_get(data, "names") || !json_is_object(policy) || !json_array_size(names))
        return 0;
    double size, pause;
    int rc = cv__group_policy(policy, "batch_create", &size, &pause, NULL, errstr, errstr_size);
    if (rc)
        return rc;
    json_t *none = json_array();
    json_t *walk =
        cv__group_walk_plan(none, none, (long long)json_array_size(names), (long long)size, 0);
    json_decref(none);
    if (!walk)
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    if (json_integer_value(json_object_get(walk, "steps")) <= 1) {
        json_decref(walk);
        return 0;
    }
    json_object_set_new(walk, "pause", json_real(pause));
    json_object_set_new(walk, "from", json_null());
    json_object_set_new(data, "walk", walk);
    return 0;
}
