/*
 * OS::Heat::AutoScalingGroup — a child stack of `resource` members whose
 * number Heat's rules decide (heat/engine/resources/openstack/heat/
 * autoscaling_group.py and the AWS group it extends):
 *
 * - created with desired_capacity, or min_size when it has none;
 * - a stack update that changes any property resizes to desired_capacity,
 *   or keeps the current size, clamped to [min_size, max_size];
 * - a ScalingPolicy's signal, passed on to the group, adjusts the size with
 *   Heat's arithmetic (cv_scaling.h) unless the group is scaling or in its
 *   cooldown.
 *
 * The size lives in the group's private data, which the nested definition
 * reads: data.capacity (the size the child stack should have), data.names
 * (the members, oldest first; a new member takes the name data.next, so
 * names are never reused; scaling down removes the oldest, as Heat's
 * InstanceGroup.resize does), data.applied (the properties the size
 * was last decided on: a difference is a stack update). A signal only
 * writes data.capacity and asks for the stack to be converged; the update
 * traversal then finds the child's template changed (its digest) and
 * updates the child, which is the normal update path.
 *
 * A changed `resource` rolls out in Heat's batches (rolling_updates), kept
 * in data.rollout.
 *
 * data.scaling marks a scaling begun by a signal ({"cooldown", "reason"})
 * until the group's action completes, when data.cooldown_end is set (Heat's
 * _finished_scaling); a signal meanwhile is ignored "due to scaling
 * activity", as in Heat.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv_scaling.h"
#include "cv__rtype_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const cv_prop_schema_t asg_props[] = {
    {"resource", CV_PROP_MAP, true, NULL, true},
    {"max_size", CV_PROP_INTEGER, true, NULL, true},
    {"min_size", CV_PROP_INTEGER, true, NULL, true},
    {"cooldown", CV_PROP_INTEGER, false, NULL, true},
    {"desired_capacity", CV_PROP_INTEGER, false, NULL, true},
    {"rolling_updates", CV_PROP_MAP, false,
     "{\"min_in_service\": 0, \"max_batch_size\": 1, \"pause_time\": 0}", true},
};

static const char *const asg_attrs[] = {"outputs", "outputs_list", "current_size",
                                        "refs",    "refs_map",     NULL};

/* ---- validation ---- */

/* Heat's Range constraint message on an integer property. */
static int out_of_range(const json_t *props, const char *key, long long min, const char *where,
                        char *errstr, size_t errstr_size)
{
    const json_t *v = json_object_get(props, key);
    if (!json_is_integer(v) || json_integer_value(v) >= min)
        return 0;
    return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                     "%s.%s: %lld is out of range (min: %lld, max: None)", where, key,
                     (long long)json_integer_value(v), min);
}

static int check_rolling_updates(const json_t *ru, const char *where, char *errstr,
                                 size_t errstr_size)
{
    static const char *const keys[] = {"min_in_service", "max_batch_size", "pause_time"};
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)ru, key, v)
    {
        size_t i = 0;
        while (i < 3 && strcmp(key, keys[i]))
            i++;
        if (i == 3)
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.rolling_updates: Unknown Property %s", where, key);
        if (!cv_is_intrinsic(v) && !json_is_number(v))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.rolling_updates.%s: Value must be a number", where, key);
        double min = strcmp(key, "max_batch_size") == 0 ? 1 : 0;
        if (json_is_number(v) && json_number_value(v) < min)
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.rolling_updates.%s: %g is out of range (min: %g, max: None)",
                             where, key, json_number_value(v), min);
    }
    return 0;
}

static int asg_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    int rc = out_of_range(props, "min_size", 0, where, errstr, errstr_size);
    rc = rc ? rc : out_of_range(props, "max_size", 0, where, errstr, errstr_size);
    if (rc)
        return rc;
    const json_t *def = json_object_get(props, "resource");
    if (json_is_object(def) && !cv_is_intrinsic(def) && !json_object_get(def, "type"))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.resource.type: a string is required", where);
    const json_t *ru = json_object_get(props, "rolling_updates");
    if (json_is_object(ru) && !cv_is_intrinsic(ru) &&
        (rc = check_rolling_updates(ru, where, errstr, errstr_size)) != 0)
        return rc;
    const json_t *min = json_object_get(props, "min_size"),
                 *max = json_object_get(props, "max_size");
    if (!json_is_integer(min) || !json_is_integer(max))
        return 0; /* computed: checked once resolved */
    if (json_integer_value(max) < json_integer_value(min))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s: MinSize can not be greater than MaxSize", where);
    const json_t *desired = json_object_get(props, "desired_capacity");
    if (json_is_integer(desired) && (json_integer_value(desired) < json_integer_value(min) ||
                                     json_integer_value(desired) > json_integer_value(max)))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s: DesiredCapacity must be between MinSize and MaxSize", where);
    return 0;
}

/* ---- the size and the members ---- */

static long long prop_int(const json_t *props, const char *key)
{
    return (long long)json_integer_value(json_object_get(props, key));
}

static long long clamp(long long n, const json_t *props)
{
    long long min = prop_int(props, "min_size"), max = prop_int(props, "max_size");
    return n > max ? max : n < min ? min : n;
}

/* The size the child should have: Heat's child_template on create, its
 * handle_update when the properties changed, else what a signal set. */
static long long decide_capacity(const json_t *props, const json_t *data, size_t members)
{
    const json_t *desired = json_object_get(props, "desired_capacity");
    const json_t *applied = json_object_get(data, "applied");
    if (!applied)
        return json_integer_value(desired) ? (long long)json_integer_value(desired)
                                           : prop_int(props, "min_size");
    if (!json_equal((json_t *)applied, (json_t *)props))
        return clamp(json_integer_value(desired) ? (long long)json_integer_value(desired)
                                                 : (long long)members,
                     props);
    const json_t *capacity = json_object_get(data, "capacity");
    return json_is_integer(capacity) ? (long long)json_integer_value(capacity) : (long long)members;
}

/* The members for `capacity`: the oldest go first (Heat's member_definitions
 * keeps the last of the members sorted by creation), new ones take fresh
 * names at the end. */
static json_t *resize(const json_t *data, long long capacity, json_int_t *next)
{
    const json_t *old = json_object_get(data, "names");
    json_t *names = json_is_array(old) ? json_deep_copy(old) : json_array();
    *next = (json_int_t)cv__rtype_data_number(data, "next", (double)json_array_size(names));
    while ((long long)json_array_size(names) > capacity)
        json_array_remove(names, 0);
    while ((long long)json_array_size(names) < capacity) {
        char name[24];
        snprintf(name, sizeof(name), "%lld", (long long)(*next)++);
        json_array_append_new(names, json_string(name));
    }
    return names;
}

/* The members of `names` that are also in `old`, in `names`' order. */
static json_t *kept_members(const json_t *names, const json_t *old)
{
    json_t *kept = json_array();
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        if (cv__group_contains(old, json_string_value(n)))
            json_array_append(kept, (json_t *)n);
    }
    return kept;
}

/* A rolling_updates number, Heat's default when absent. */
static long long policy_int(const json_t *ru, const char *key, long long dflt)
{
    const json_t *v = json_object_get(ru, key);
    return json_is_number(v) ? (long long)json_number_value(v) : dflt;
}

/* The members in turns of Heat's batch sizes (_get_batches), oldest first. */
static json_t *batches_of(const json_t *members, const json_t *ru)
{
    long long n = (long long)json_array_size(members);
    long long size = policy_int(ru, "max_batch_size", 1);
    json_t *sizes =
        cv_scaling_batches(n, n, size < 1 ? 1 : size, policy_int(ru, "min_in_service", 0));
    json_t *out = json_array();
    size_t i, next = 0;
    const json_t *b;
    json_array_foreach(sizes, i, b)
    {
        json_int_t num = json_integer_value(json_array_get(b, 1));
        if (num <= 0)
            continue;
        json_t *chunk = json_array();
        for (json_int_t j = 0; j < num && next < json_array_size(members); j++)
            json_array_append(chunk, json_array_get(members, next++));
        json_array_append_new(out, chunk);
    }
    json_decref(sizes);
    return out;
}

/*
 * Heat's _try_rolling_update: a changed `resource` reaches the members the
 * group keeps in batches of rolling_updates, a pause between them
 * (cv__group_order_batches, as ResourceGroup's batch_create orders its
 * creation). The plan stays in data.rollout while its members all exist,
 * so the template does not change again once it is rolled out; a resize
 * that removes one of them drops it.
 */
static void plan_rollout(const json_t *props, json_t *data, const json_t *old, const json_t *names)
{
    const json_t *applied = json_object_get(data, "applied");
    const json_t *rollout = json_object_get(data, "rollout");
    json_t *kept = kept_members(names, old);
    if (applied && json_array_size(kept) &&
        !json_equal(json_object_get(applied, "resource"), json_object_get(props, "resource"))) {
        const json_t *ru = json_object_get(props, "rolling_updates");
        const json_t *pause = json_object_get(ru, "pause_time");
        json_int_t id = json_integer_value(json_object_get(rollout, "id")) + 1;
        json_object_set_new(data, "rollout",
                            json_pack("{s:I, s:o, s:f}", "id", id, "batches", batches_of(kept, ru),
                                      "pause_time",
                                      json_is_number(pause) ? json_number_value(pause) : 0.0));
    } else if (rollout && !cv__group_rollout_intact(rollout, names)) {
        json_object_del(data, "rollout");
    }
    json_decref(kept);
}

static int asg_definition(const char *type_name, const json_t *props, const json_t *files,
                          json_t *data, json_t **tpl, json_t **params, char *errstr,
                          size_t errstr_size)
{
    (void)type_name;
    const json_t *def = json_object_get(props, "resource");
    const char *mtype = json_string_value(json_object_get(def, "type"));
    if (!mtype)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "resource.type: a string is required");
    long long capacity =
        decide_capacity(props, data, json_array_size(json_object_get(data, "names")));
    json_int_t next;
    json_t *names = resize(data, capacity, &next);
    plan_rollout(props, data, json_object_get(data, "names"), names);
    json_t *attr_names = cv__group_member_attr_names(mtype, files);
    *tpl = cv__group_template(def, NULL, names, attr_names);
    if (*tpl) /* a rollout's pauses are new resources (Delay waits on create) */
        cv__group_apply_rollout(json_object_get(*tpl, "resources"),
                                json_object_get(data, "rollout"));
    *params = json_object();
    json_object_set_new(data, "names", names);
    json_object_set_new(data, "next", json_integer(next));
    json_object_set_new(data, "capacity", json_integer(capacity));
    json_object_set_new(data, "applied", json_deep_copy(props));
    json_object_set_new(data, "attrs", attr_names);
    return *tpl && *params ? 0 : CV_ENOMEM;
}

/* ---- attributes ---- */

/* outputs / outputs_list of one member attribute, and resource.<i>.<attr>. */
static void member_attribute(json_t *attrs, const json_t *outputs, const json_t *names,
                             const char *attr)
{
    const json_t *list = cv__group_member_values(outputs, attr);
    json_t *by_name = json_object(), *values = json_array();
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        const json_t *v = json_array_get(list, i);
        json_t *value = v ? json_incref((json_t *)v) : json_null();
        char key[400];
        snprintf(key, sizeof(key), "resource.%zu.%s", i, attr);
        json_object_set(attrs, key, value);
        json_array_append(values, value);
        json_object_set_new(by_name, json_string_value(n), value);
    }
    json_object_set_new(json_object_get(attrs, "outputs"), attr, by_name);
    json_object_set_new(json_object_get(attrs, "outputs_list"), attr, values);
}

static json_t *asg_attributes(const json_t *outputs, const json_t *data)
{
    const json_t *names = json_object_get(data, "names");
    json_t *attrs = cv__group_refs(outputs, names, true);
    size_t i;
    json_object_set_new(attrs, "current_size", json_integer((json_int_t)json_array_size(names)));
    cv__group_mark(attrs, cv__rtype_autoscaling_group.name, names);
    json_object_set_new(attrs, "outputs", json_object());
    json_object_set_new(attrs, "outputs_list", json_object());
    const json_t *a;
    json_array_foreach(json_object_get(data, "attrs"), i, a)
    {
        member_attribute(attrs, outputs, names, json_string_value(a));
    }
    return attrs;
}

static const cv_nested_ops_t asg_ops = {asg_definition, asg_attributes};

/* ---- observing: the end of a scaling starts its cooldown ---- */

static double sanitized(const json_t *cooldown)
{
    double c = json_is_number(cooldown) ? json_number_value(cooldown) : 0;
    return c > 0 ? c : 0;
}

/* Heat's _finished_scaling: a completed create or update (a scaling
 * included) ends the scaling and starts the cooldown of the policy that
 * scaled, or of the group; a failed one only ends the scaling. */
static void finished_scaling(cv_rstate_t *st, bool size_changed)
{
    const json_t *scaling = json_object_get(st->data, "scaling");
    if (size_changed) {
        const json_t *c = json_object_get(scaling, "cooldown");
        double cooldown =
            sanitized(c && !json_is_null(c) ? c : json_object_get(st->props, "cooldown"));
        double end = st->now + cooldown, was = cv__rtype_data_number(st->data, "cooldown_end", 0);
        json_object_set_new(st->data, "cooldown_end", json_real(end > was ? end : was));
    }
    json_object_del(st->data, "scaling");
}

static cv_observed_t asg_observe(cv_rstate_t *st, cv_action_t action)
{
    cv_observed_t r = cv__nested_observe_child(st, action, &asg_ops);
    if (action != CV_ACTION_DELETE && st->props && r != CV_OBSERVED_IN_PROGRESS)
        finished_scaling(st, r == CV_OBSERVED_COMPLETE);
    return r;
}

/* ---- signals: a ScalingPolicy's adjustment ---- */

/* Heat's NoActionRequired: the signal is taken and changes nothing. */
static int no_action(cv_rstate_t *st, const char *why)
{
    snprintf(st->reason, sizeof(st->reason), "The resource %s could not perform scaling action: %s",
             st->resource_name, why);
    return 0;
}

/*
 * Heat's AutoScalingGroup.adjust, on the data a policy passed on:
 * {"scaling": {"adjustment", "adjustment_type", "min_adjustment_step",
 * "cooldown", "policy"}}. The new size goes to data.capacity and
 * data.converge asks the engine for an update traversal of the stack.
 */
static int asg_signal(cv_rstate_t *st, const json_t *details, char *errstr, size_t errstr_size)
{
    const json_t *s = json_object_get(details, "scaling");
    const json_t *adjustment = json_object_get(s, "adjustment");
    const char *type = json_string_value(json_object_get(s, "adjustment_type"));
    if (!json_is_number(adjustment) || !cv_scaling_type_known(type))
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "%s takes the adjustments of its OS::Heat::ScalingPolicy resources "
                         "(signal those)",
                         st->resource_name);
    if (!st->props)
        return 0; /* convergectl's check before sending: the form is right */
    if (st->status && !cv_str_ends_with(st->status, "_COMPLETE")) {
        snprintf(st->reason, sizeof(st->reason),
                 "%s NOT performing scaling adjustment, when status is not COMPLETE",
                 st->resource_name);
        return 0;
    }
    const json_t *names = json_object_get(st->data, "names");
    long long current =
        (long long)cv__rtype_data_number(st->data, "capacity", (double)json_array_size(names));
    const json_t *step = json_object_get(s, "min_adjustment_step");
    long long capacity =
        cv_scaling_new_capacity(current, json_number_value(adjustment), type,
                                json_is_integer(step) ? (long long)json_integer_value(step) : 0,
                                prop_int(st->props, "min_size"), prop_int(st->props, "max_size"));
    if (capacity == current) {
        snprintf(st->reason, sizeof(st->reason),
                 "%s NOT performing scaling adjustment, as there is no change in capacity.",
                 st->resource_name);
        return 0;
    }
    const json_t *c = json_object_get(s, "cooldown");
    double cooldown = sanitized(c && !json_is_null(c) ? c : json_object_get(st->props, "cooldown"));
    char why[128];
    if (cv_scaling_allowed(st->data, st->now, cooldown, why, sizeof(why)))
        return no_action(st, why);
    char amount[64], text[160];
    cv_format_number(adjustment, amount, sizeof(amount));
    snprintf(text, sizeof(text), "%s : %s", type, amount);
    json_object_set_new(st->data, "capacity", json_integer((json_int_t)capacity));
    json_object_set_new(st->data, "scaling",
                        json_pack("{s:O?, s:s}", "cooldown", c, "reason", text));
    json_object_set_new(st->data, "converge", json_true());
    const char *policy = json_string_value(json_object_get(s, "policy"));
    snprintf(st->reason, sizeof(st->reason), "resizing the group from %lld to %lld (%s%s%s)",
             current, capacity, text, policy ? ", by " : "", policy ? policy : "");
    return 0;
}

const cv_rtype_t cv__rtype_autoscaling_group = {
    .name = "OS::Heat::AutoScalingGroup",
    .props = asg_props,
    .nprops = sizeof(asg_props) / sizeof(asg_props[0]),
    .attrs = asg_attrs,
    .validate = asg_validate,
    .create = cv__nested_create,
    .update = cv__nested_update,
    .remove = cv__nested_remove,
    .observe = asg_observe,
    .nested = &asg_ops,
    .signal = asg_signal,
};
