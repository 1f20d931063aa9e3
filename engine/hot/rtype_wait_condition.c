/*
 * OS::Heat::WaitCondition — in progress until its handle received `count`
 * SUCCESS signals, as Heat's HeatWaitCondition: FAILED at the first FAILURE
 * signal with the failures' reasons, FAILED when `timeout` seconds passed
 * first, both with Heat's reason texts. Its `data` attribute is Heat's: a
 * JSON object of signal id → the signal's data.
 *
 * The handle's signals are not this resource's state: the observer reads
 * the handle's record before every look (cv_rtype_t.watches) and a signal
 * to the handle has the observers look at once, so observe() here only
 * judges what it is handed, like Heat's _wait.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HANDLE_TYPE "OS::Heat::WaitConditionHandle"
#define MAX_TIMEOUT 43200

static const cv_prop_schema_t wait_props[] = {
    {"handle", CV_PROP_STRING, true, NULL, false},
    {"timeout", CV_PROP_NUMBER, true, NULL, false},
    {"count", CV_PROP_INTEGER, false, "1", true},
};

static const char *const wait_attrs[] = {"data", NULL};

/* Heat's Range(1, 43200) on timeout and Range(min=1) on count. */
static int wait_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    const json_t *timeout = json_object_get(props, "timeout");
    const json_t *count = json_object_get(props, "count");
    json_t *t = json_is_number(timeout) || json_is_string(timeout)
                    ? cv__rtype_coerce(CV_PROP_NUMBER, timeout)
                    : NULL;
    double tv = t ? json_number_value(t) : 1;
    json_decref(t);
    if (tv < 1 || tv > MAX_TIMEOUT) {
        char shown[64];
        cv__rtype_describe(timeout, shown, sizeof(shown));
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.timeout: must be between 1 and %d, got %s", where, MAX_TIMEOUT, shown);
    }
    json_t *c = json_is_integer(count) || json_is_string(count)
                    ? cv__rtype_coerce(CV_PROP_INTEGER, count)
                    : NULL;
    json_int_t cv = c ? json_integer_value(c) : 1;
    json_decref(c);
    if (cv < 1)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.count: must be at least 1, got %lld", where, (long long)cv);
    return 0;
}

static int wait_create(cv_rstate_t *st)
{
    cv__rtype_set_physical_id(st);
    return 0;
}

/* Heat's handle_update starts waiting again (a new started_at), for the
 * new count: the engine records when this action started. */
static int wait_update(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        cv__rtype_set_physical_id(st);
    return 0;
}

static int wait_remove(cv_rstate_t *st)
{
    (void)st;
    return 0;
}

/* ---------------------------------------------------------------- judging */

/* The reasons of the signals of `status`, joined by ';' as Heat joins them;
 * returns how many there are. */
static size_t reasons_of(const json_t *signals, const char *status, char *out, size_t size)
{
    size_t n = 0, i, len = 0;
    const json_t *e;
    out[0] = '\0';
    json_array_foreach(signals, i, e)
    {
        const char *s = json_string_value(json_object_get(e, "status"));
        if (!s || strcmp(s, status) != 0)
            continue;
        const char *r = json_string_value(json_object_get(e, "reason"));
        int w = snprintf(out + len, size - len, "%s%s", n ? ";" : "", r ? r : "");
        len = w < 0 || (size_t)w >= size - len ? size - 1 : len + (size_t)w;
        n++;
    }
    return n;
}

/* Heat's data attribute: {id: data} as Python's json.dumps writes it. */
static int set_data_attr(cv_rstate_t *st, const json_t *signals)
{
    json_t *byid = json_object();
    size_t i;
    const json_t *e;
    json_array_foreach(signals, i, e)
    {
        const char *id = json_string_value(json_object_get(e, "id"));
        const json_t *d = json_object_get(e, "data");
        if (id)
            json_object_set(byid, id, d ? (json_t *)d : json_null());
    }
    char *text = json_dumps(byid, JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    json_decref(byid);
    int rc = text ? json_object_set_new(st->attrs, "data", json_string(text)) : CV_ENOMEM;
    free(text);
    return rc ? CV_ENOMEM : 0;
}

static cv_observed_t judge(cv_rstate_t *st, const json_t *watched)
{
    const char *type = json_string_value(json_object_get(watched, "type"));
    const char *name = json_string_value(json_object_get(watched, "name"));
    if (!name || !name[0] || !type || strcmp(type, HANDLE_TYPE) != 0) {
        snprintf(st->reason, sizeof(st->reason),
                 "ValueError: resources.%s: %s is not a valid wait condition handle.",
                 st->resource_name,
                 name && name[0] ? name : json_string_value(json_object_get(st->props, "handle")));
        return CV_OBSERVED_FAILED;
    }
    const json_t *signals = json_object_get(json_object_get(watched, "data"), "signals");
    json_int_t count = json_integer_value(json_object_get(st->props, "count"));
    double timeout = json_number_value(json_object_get(st->props, "timeout"));
    char reasons[360];
    if (st->now - st->action_started > timeout) {
        size_t n = reasons_of(signals, "SUCCESS", reasons, sizeof(reasons));
        snprintf(st->reason, sizeof(st->reason),
                 "WaitConditionTimeout: resources.%.64s: %zu of %lld received%s%s",
                 st->resource_name, n, (long long)count, n ? " - " : "", n ? reasons : "");
        return CV_OBSERVED_FAILED;
    }
    /* Statuses are SUCCESS or FAILURE (the handle refuses others). */
    if (reasons_of(signals, "FAILURE", reasons, sizeof(reasons)) > 0) {
        snprintf(st->reason, sizeof(st->reason), "WaitConditionFailure: resources.%.64s: %s",
                 st->resource_name, reasons);
        return CV_OBSERVED_FAILED;
    }
    if ((json_int_t)json_array_size(signals) >= count)
        return set_data_attr(st, signals) ? CV_OBSERVED_IN_PROGRESS : CV_OBSERVED_COMPLETE;
    /* Signals have the observers look at once; the timer is for the timeout. */
    st->retry_at = st->action_started + timeout + 0.001;
    return CV_OBSERVED_IN_PROGRESS;
}

static cv_observed_t wait_observe(cv_rstate_t *st, cv_action_t action)
{
    json_t *watched = json_incref(json_object_get(st->data, "watched"));
    json_object_del(st->data, "watched");
    cv_observed_t seen = action == CV_ACTION_DELETE ? CV_OBSERVED_COMPLETE : judge(st, watched);
    json_decref(watched);
    return seen;
}

const cv_rtype_t cv__rtype_wait_condition = {
    .name = "OS::Heat::WaitCondition",
    .props = wait_props,
    .nprops = sizeof(wait_props) / sizeof(wait_props[0]),
    .attrs = wait_attrs,
    .validate = wait_validate,
    .create = wait_create,
    .update = wait_update,
    .remove = wait_remove,
    .observe = wait_observe,
    .watches = "handle",
};
