/*
 * OS::Heat::ScalingPolicy — adjusts the OS::Heat::AutoScalingGroup that
 * auto_scaling_group_id names when it is signalled (heat/engine/resources/
 * openstack/heat/scaling_policy.py).
 *
 * Heat's handle_signal calls the group's adjust with the policy's
 * properties; here the policy's signal operation only says so: it leaves
 * in st->data "forward" = {"ref": the group's physical id, "details":
 * {"scaling": {...}}}, which the engine takes out and passes on to the
 * group as a signal of its own (found by physical id among the policy's
 * dependencies, as Heat's resource_by_refid finds it), in Redis before this
 * signal is marked applied. The group's signal operation does Heat's
 * arithmetic and cooldown (rtype_autoscaling_group.c), so the policy keeps
 * no state: as in Heat, the cooldown is the group's, started with the
 * policy's `cooldown` when the policy has one.
 *
 * alarm_url and signal_url name how to signal it in Converge: the
 * `convergectl signal STACK RESOURCE` command line, as the
 * WaitConditionHandle's curl_cli does.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv_scaling.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

static const cv_prop_schema_t policy_props[] = {
    {"auto_scaling_group_id", CV_PROP_STRING, true, NULL, false},
    {"scaling_adjustment", CV_PROP_NUMBER, true, NULL, true},
    {"adjustment_type", CV_PROP_STRING, true, NULL, true},
    {"cooldown", CV_PROP_NUMBER, false, NULL, true},
    {"min_adjustment_step", CV_PROP_INTEGER, false, NULL, true},
};

static const char *const policy_attrs[] = {"alarm_url", "signal_url", NULL};

static int policy_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    const json_t *type = json_object_get(props, "adjustment_type");
    if (json_is_string(type) && strcmp(json_string_value(type), CV_SCALING_CHANGE) &&
        strcmp(json_string_value(type), CV_SCALING_EXACT) &&
        strcmp(json_string_value(type), CV_SCALING_PERCENT))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.adjustment_type: \"%s\" is not an allowed value "
                         "[change_in_capacity, exact_capacity, percent_change_in_capacity]",
                         where, json_string_value(type));
    const json_t *step = json_object_get(props, "min_adjustment_step");
    if (json_is_integer(step) && json_integer_value(step) < 0)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.min_adjustment_step: %lld is out of range (min: 0, max: None)", where,
                         (long long)json_integer_value(step));
    /* Heat's _validate_min_adjustment_step (ResourcePropertyValueDependency). */
    if (step && !json_is_null(step) && json_is_string(type) &&
        strcmp(json_string_value(type), CV_SCALING_PERCENT))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s: min_adjustment_step property should only be specified for "
                         "adjustment_type with value percent_change_in_capacity.",
                         where);
    return 0;
}

static int publish(cv_rstate_t *st)
{
    char cli[600];
    snprintf(cli, sizeof(cli), "convergectl signal %s %s", st->stack_name, st->resource_name);
    int rc = json_object_set_new(st->attrs, "alarm_url", json_string(cli)) ||
             json_object_set_new(st->attrs, "signal_url", json_string(cli));
    return rc ? CV_ENOMEM : 0;
}

static int policy_create(cv_rstate_t *st)
{
    cv__rtype_set_physical_id(st);
    return publish(st);
}

static int policy_update(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        cv__rtype_set_physical_id(st);
    return publish(st);
}

static int policy_remove(cv_rstate_t *st)
{
    (void)st;
    return 0;
}

static cv_observed_t policy_observe(cv_rstate_t *st, cv_action_t action)
{
    (void)st;
    (void)action;
    return CV_OBSERVED_COMPLETE;
}

/* Heat's get_string_details: the text of the policy's SIGNAL event. */
static void signal_text(const json_t *details, char *out, size_t size)
{
    const json_t *prev = json_object_get(details, "previous");
    const json_t *cur = json_object_get(details, "current");
    const json_t *why = json_object_get(details, "reason");
    if (json_is_null(details))
        snprintf(out, size, "No signal details provided");
    else if (json_is_string(details))
        snprintf(out, size, "%s", json_string_value(details));
    else if (json_is_string(prev) && json_is_string(cur) && json_is_string(why))
        snprintf(out, size, "alarm state changed from %s to %s (%s)", json_string_value(prev),
                 json_string_value(cur), json_string_value(why));
    else
        snprintf(out, size, "Unknown");
}

/* Without properties (convergectl's check before sending, which has only
 * the record's data) any data is accepted: what a policy signal needs is
 * its properties and its group, which the engine has. */
static int policy_signal(cv_rstate_t *st, const json_t *details, char *errstr, size_t errstr_size)
{
    const json_t *p = st->props;
    if (!p) {
        signal_text(details, st->reason, sizeof(st->reason));
        return 0;
    }
    json_t *scaling = json_pack("{s:O, s:O, s:O?, s:O?, s:s}", "adjustment",
                                json_object_get(p, "scaling_adjustment"), "adjustment_type",
                                json_object_get(p, "adjustment_type"), "min_adjustment_step",
                                json_object_get(p, "min_adjustment_step"), "cooldown",
                                json_object_get(p, "cooldown"), "policy", st->resource_name);
    const char *ref = json_string_value(json_object_get(p, "auto_scaling_group_id"));
    if (!scaling || !ref) {
        json_decref(scaling);
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "Alarm %s could not find scaling group named \"%s\"", st->resource_name,
                         ref ? ref : "");
    }
    json_object_set_new(st->data, "forward",
                        json_pack("{s:s, s:{s:o}}", "ref", ref, "details", "scaling", scaling));
    signal_text(details, st->reason, sizeof(st->reason));
    return 0;
}

const cv_rtype_t cv__rtype_scaling_policy = {
    .name = "OS::Heat::ScalingPolicy",
    .props = policy_props,
    .nprops = sizeof(policy_props) / sizeof(policy_props[0]),
    .attrs = policy_attrs,
    .validate = policy_validate,
    .create = policy_create,
    .update = policy_update,
    .remove = policy_remove,
    .observe = policy_observe,
    .signal = policy_signal,
};
