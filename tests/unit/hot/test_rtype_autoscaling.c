/*
 * OS::Heat::AutoScalingGroup and OS::Heat::ScalingPolicy, pure: Heat's
 * validation messages, the group's size as its nested definition decides
 * it (create, update, a signal's new capacity, the newest removed first),
 * its attributes, a policy's signal passed on and the group's adjustment
 * with Heat's cooldown and its texts (heat/tests/autoscaling/
 * test_heat_scaling_group.py, test_heat_scaling_policy.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_rtype.h"
#include "test_json_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ASG "OS::Heat::AutoScalingGroup"
#define POLICY "OS::Heat::ScalingPolicy"
#define MEMBER "'resource': {'type': 'OS::Heat::Value', 'properties': {'value': 'v'}}"
#define T0 1700000000.0

static const cv_rtype_t *asg(void)
{
    const cv_rtype_t *t = cv_rtype_find(ASG);
    assert_non_null(t);
    assert_non_null(t->nested);
    return t;
}

static const cv_rtype_t *policy(void)
{
    const cv_rtype_t *t = cv_rtype_find(POLICY);
    assert_non_null(t);
    return t;
}

/* The schema applied to `props_sq`; NULL with the message in errstr. */
static json_t *apply(const cv_rtype_t *t, const char *props_sq, char *errstr, size_t errstr_size)
{
    json_t *raw = js(props_sq);
    errstr[0] = '\0';
    json_t *props =
        cv_rtype_apply_schema(t, raw, "resources.g.properties", false, errstr, errstr_size);
    json_decref(raw);
    return props;
}

static void assert_refused(const cv_rtype_t *t, const char *props_sq, const char *message)
{
    char err[512];
    json_t *props = apply(t, props_sq, err, sizeof(err));
    if (props)
        fail_msg("%s was accepted", props_sq);
    if (!strstr(err, message))
        fail_msg("%s refused with \"%s\", not \"%s\"", props_sq, err, message);
}

static json_t *props_of(const cv_rtype_t *t, const char *props_sq)
{
    char err[512];
    json_t *props = apply(t, props_sq, err, sizeof(err));
    if (!props)
        fail_msg("%s refused: %s", props_sq, err);
    return props;
}

/* ---- validation ---- */

static void test_group_bounds_are_checked_with_heats_messages(void **state)
{
    (void)state;
    assert_refused(asg(), "{'min_size': 3, 'max_size': 1, " MEMBER "}",
                   "resources.g.properties: MinSize can not be greater than MaxSize");
    assert_refused(asg(), "{'min_size': 1, 'max_size': 3, 'desired_capacity': 4, " MEMBER "}",
                   "DesiredCapacity must be between MinSize and MaxSize");
    assert_refused(asg(), "{'min_size': 1, 'max_size': 3, 'desired_capacity': 0, " MEMBER "}",
                   "DesiredCapacity must be between MinSize and MaxSize");
    assert_refused(asg(), "{'min_size': -1, 'max_size': 3, " MEMBER "}",
                   "resources.g.properties.min_size: -1 is out of range (min: 0, max: None)");
    assert_refused(asg(), "{'min_size': 1, " MEMBER "}", "max_size");
    assert_refused(
        asg(),
        "{'min_size': 1, 'max_size': 3, 'rolling_updates': {'max_batch_size': 0}, " MEMBER "}",
        "rolling_updates.max_batch_size: 0 is out of range (min: 1, max: None)");
    json_t *ok =
        props_of(asg(), "{'min_size': 1, 'max_size': 3, 'desired_capacity': 3, " MEMBER "}");
    assert_json_sq(json_object_get(ok, "rolling_updates"),
                   "{'min_in_service': 0, 'max_batch_size': 1, 'pause_time': 0}");
    json_decref(ok);
}

static void test_policy_properties_are_checked_with_heats_messages(void **state)
{
    (void)state;
    assert_refused(policy(),
                   "{'auto_scaling_group_id': 'g', 'adjustment_type': 'change_in_capacity', "
                   "'scaling_adjustment': 1, 'min_adjustment_step': 1}",
                   "min_adjustment_step property should only be specified for adjustment_type "
                   "with value percent_change_in_capacity.");
    assert_refused(policy(),
                   "{'auto_scaling_group_id': 'g', 'adjustment_type': 'more', "
                   "'scaling_adjustment': 1}",
                   "\"more\" is not an allowed value");
    assert_refused(policy(),
                   "{'auto_scaling_group_id': 'g', 'adjustment_type': "
                   "'percent_change_in_capacity', 'scaling_adjustment': 1, "
                   "'min_adjustment_step': -1}",
                   "min_adjustment_step: -1 is out of range (min: 0, max: None)");
    json_decref(props_of(policy(), "{'auto_scaling_group_id': 'g', 'adjustment_type': "
                                   "'percent_change_in_capacity', 'scaling_adjustment': 10, "
                                   "'min_adjustment_step': 2}"));
}

/* ---- the nested definition ---- */

/* Runs the group's definition with `props_sq` on data; returns the member
 * names of the child template, in the group's order. */
static json_t *define(const char *props_sq, json_t *data)
{
    json_t *props = props_of(asg(), props_sq);
    json_t *tpl = NULL, *params = NULL;
    char err[512] = "";
    if (asg()->nested->definition(ASG, props, NULL, data, &tpl, &params, err, sizeof(err)))
        fail_msg("definition failed: %s", err);
    json_decref(props);
    json_decref(params);
    /* Every member of the data is in the template, with the member definition. */
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(data, "names"), i, n)
    {
        const json_t *m = json_object_get(json_object_get(tpl, "resources"), json_string_value(n));
        assert_json_sq(m, "{'type': 'OS::Heat::Value', 'properties': {'value': 'v'}}");
    }
    assert_int_equal(json_object_size(json_object_get(tpl, "resources")),
                     json_array_size(json_object_get(data, "names")));
    json_decref(tpl);
    return json_object_get(data, "names");
}

static void test_created_with_desired_capacity_or_min_size(void **state)
{
    (void)state;
    json_t *data = json_object();
    assert_json_sq(
        define("{'min_size': 1, 'max_size': 5, 'desired_capacity': 3, " MEMBER "}", data),
        "['0', '1', '2']");
    json_decref(data);
    data = json_object();
    assert_json_sq(define("{'min_size': 2, 'max_size': 5, " MEMBER "}", data), "['0', '1']");
    assert_json_sq(json_object_get(data, "capacity"), "2");
    json_decref(data);
}

/* Heat's InstanceGroup.resize: "When shrinking, the oldest instances will be
 * removed" (template.member_definitions keeps old_resources[-num:]). */
static void test_an_update_resizes_to_desired_removing_the_oldest(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{'min_size': 1, 'max_size': 5, 'desired_capacity': 3, " MEMBER "}", data);
    assert_json_sq(
        define("{'min_size': 1, 'max_size': 5, 'desired_capacity': 1, " MEMBER "}", data), "['2']");
    /* New members take names never used before. */
    assert_json_sq(
        define("{'min_size': 1, 'max_size': 5, 'desired_capacity': 3, " MEMBER "}", data),
        "['2', '3', '4']");
    json_decref(data);
}

static void test_an_update_without_desired_keeps_the_size_within_new_bounds(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{'min_size': 1, 'max_size': 5, 'desired_capacity': 4, " MEMBER "}", data);
    assert_json_sq(define("{'min_size': 1, 'max_size': 5, " MEMBER "}", data),
                   "['0', '1', '2', '3']");
    assert_json_sq(define("{'min_size': 1, 'max_size': 2, " MEMBER "}", data), "['2', '3']");
    json_decref(data);
}

static void test_unchanged_properties_keep_the_size_a_signal_set(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{'min_size': 1, 'max_size': 5, 'desired_capacity': 2, " MEMBER "}", data);
    json_object_set_new(data, "capacity", json_integer(4));
    assert_json_sq(
        define("{'min_size': 1, 'max_size': 5, 'desired_capacity': 2, " MEMBER "}", data),
        "['0', '1', '2', '3']");
    /* A stack update that changes a property resets to desired_capacity, as Heat. */
    assert_json_sq(
        define("{'min_size': 1, 'max_size': 6, 'desired_capacity': 2, " MEMBER "}", data),
        "['2', '3']");
    json_decref(data);
}

/* The child template of a definition run, whole. */
static json_t *child_of(const char *props_sq, json_t *data)
{
    json_t *props = props_of(asg(), props_sq);
    json_t *tpl = NULL, *params = NULL;
    char err[512] = "";
    if (asg()->nested->definition(ASG, props, NULL, data, &tpl, &params, err, sizeof(err)))
        fail_msg("definition failed: %s", err);
    json_decref(props);
    json_decref(params);
    return tpl;
}

#define MEMBER2 "'resource': {'type': 'OS::Heat::Value', 'properties': {'value': 'w'}}"
#define ROLLING "'rolling_updates': {'max_batch_size': 2, 'min_in_service': 1, 'pause_time': 5}"

/* Heat's _try_rolling_update: a changed `resource` reaches the members in
 * batches of max_batch_size (Heat's _get_batches), each after the one
 * before and a pause of pause_time. */
static void test_a_changed_member_definition_rolls_out_in_batches(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_decref(child_of(
        "{'min_size': 1, 'max_size': 5, 'desired_capacity': 3, " ROLLING ", " MEMBER "}", data));
    json_t *tpl = child_of(
        "{'min_size': 1, 'max_size': 5, 'desired_capacity': 3, " ROLLING ", " MEMBER2 "}", data);
    json_t *res = json_object_get(tpl, "resources");
    assert_json_sq(json_object_get(data, "rollout"),
                   "{'id': 1, 'batches': [['0', '1'], ['2']], 'pause_time': 5.0}");
    assert_null(json_object_get(json_object_get(res, "0"), "depends_on"));
    assert_json_sq(
        json_object_get(res, "rollout_1_pause_1"),
        "{'type': 'OS::Heat::Delay', 'properties': {'min_wait': 5.0}, 'depends_on': ['0', "
        "'1']}");
    assert_json_sq(json_object_get(json_object_get(res, "2"), "depends_on"),
                   "['rollout_1_pause_1']");
    assert_json_sq(json_object_get(json_object_get(res, "2"), "properties"), "{'value': 'w'}");
    json_decref(tpl);
    /* The same definition again: the same template (nothing to update). */
    json_t *again = child_of(
        "{'min_size': 1, 'max_size': 5, 'desired_capacity': 3, " ROLLING ", " MEMBER2 "}", data);
    json_t *before = child_of(
        "{'min_size': 1, 'max_size': 5, 'desired_capacity': 3, " ROLLING ", " MEMBER2 "}", data);
    assert_true(json_equal(again, before));
    json_decref(again);
    json_decref(before);
    /* A resize drops the plan. */
    json_decref(child_of(
        "{'min_size': 1, 'max_size': 5, 'desired_capacity': 1, " ROLLING ", " MEMBER2 "}", data));
    assert_null(json_object_get(data, "rollout"));
    json_decref(data);
}

/* ---- attributes ---- */

static void test_attributes_are_heats(void **state)
{
    (void)state;
    json_t *data = js("{'names': ['0', '3'], 'attrs': ['value']}");
    json_t *outputs = js("{'refs': ['r0', 'r3'], 'a.value': ['x', 'y']}");
    json_t *attrs = asg()->nested->attributes(outputs, data);
    assert_json_sq(json_object_get(attrs, "refs"), "['r0', 'r3']");
    assert_json_sq(json_object_get(attrs, "refs_map"), "{'0': 'r0', '3': 'r3'}");
    assert_json_sq(json_object_get(attrs, "current_size"), "2");
    assert_json_sq(json_object_get(attrs, "outputs"), "{'value': {'0': 'x', '3': 'y'}}");
    assert_json_sq(json_object_get(attrs, "outputs_list"), "{'value': ['x', 'y']}");
    assert_json_sq(json_object_get(attrs, "resource.1"), "'r3'");
    assert_json_sq(json_object_get(attrs, "resource.1.value"), "'y'");
    json_decref(attrs);
    json_decref(outputs);
    json_decref(data);
}

/* ---- signals ---- */

static cv_rstate_t group_state(const char *props_sq, const char *data_sq)
{
    cv_rstate_t st;
    memset(&st, 0, sizeof(st));
    st.stack_name = "stk";
    st.resource_name = "asg";
    st.props = props_of(asg(), props_sq);
    st.data = js(data_sq);
    st.attrs = json_object();
    st.now = T0;
    return st;
}

static void clear(cv_rstate_t *st)
{
    json_decref((json_t *)st->props);
    json_decref(st->data);
    json_decref(st->attrs);
}

/* The policy's signal, and the data it passes on to its group. */
static json_t *policy_forward(const char *props_sq, const char *details_json, char *reason)
{
    cv_rstate_t st;
    memset(&st, 0, sizeof(st));
    st.stack_name = "stk";
    st.resource_name = "up";
    st.props = props_of(policy(), props_sq);
    st.data = json_object();
    st.attrs = json_object();
    json_t *details = details_json ? js(details_json) : json_null();
    char err[256] = "";
    assert_int_equal(policy()->signal(&st, details, err, sizeof(err)), 0);
    strcpy(reason, st.reason);
    json_t *fwd = json_incref(json_object_get(st.data, "forward"));
    json_decref(details);
    clear(&st);
    return fwd;
}

static void test_a_policy_signal_is_passed_on_to_its_group(void **state)
{
    (void)state;
    char reason[512];
    json_t *fwd = policy_forward("{'auto_scaling_group_id': 'g1', 'adjustment_type': "
                                 "'percent_change_in_capacity', 'scaling_adjustment': 50, "
                                 "'min_adjustment_step': 2, 'cooldown': 30}",
                                 NULL, reason);
    assert_json_sq(fwd,
                   "{'ref': 'g1', 'details': {'scaling': {'adjustment': 50, 'adjustment_type': "
                   "'percent_change_in_capacity', 'min_adjustment_step': 2, 'cooldown': 30, "
                   "'policy': 'up'}}}");
    assert_string_equal(reason, "No signal details provided");
    json_decref(fwd);
    fwd = policy_forward("{'auto_scaling_group_id': 'g1', 'adjustment_type': "
                         "'change_in_capacity', 'scaling_adjustment': 1}",
                         "{'previous': 'ok', 'current': 'alarm', 'reason': 'cpu'}", reason);
    assert_string_equal(reason, "alarm state changed from ok to alarm (cpu)");
    json_decref(fwd);
}

static int adjust(cv_rstate_t *st, const char *scaling_sq)
{
    json_t *details = js(scaling_sq);
    char err[256] = "";
    st->reason[0] = '\0';
    int rc = asg()->signal(st, details, err, sizeof(err));
    json_decref(details);
    return rc;
}

static void test_the_group_adjusts_and_asks_for_an_update(void **state)
{
    (void)state;
    cv_rstate_t st = group_state("{'min_size': 1, 'max_size': 5, " MEMBER "}",
                                 "{'names': ['0', '1'], 'capacity': 2}");
    assert_int_equal(adjust(&st, "{'scaling': {'adjustment': 1, 'adjustment_type': "
                                 "'change_in_capacity', 'cooldown': 60, 'policy': 'up'}}"),
                     0);
    assert_json_sq(json_object_get(st.data, "capacity"), "3");
    assert_json_sq(json_object_get(st.data, "converge"), "true");
    assert_json_sq(json_object_get(st.data, "scaling"),
                   "{'cooldown': 60, 'reason': 'change_in_capacity : 1'}");
    assert_string_equal(st.reason,
                        "resizing the group from 2 to 3 (change_in_capacity : 1, by up)");
    /* While that scaling runs, another signal is ignored (Heat's NoActionRequired). */
    json_object_del(st.data, "converge");
    assert_int_equal(adjust(&st, "{'scaling': {'adjustment': 1, 'adjustment_type': "
                                 "'change_in_capacity'}}"),
                     0);
    assert_string_equal(st.reason, "The resource asg could not perform scaling action: due to "
                                   "scaling activity");
    assert_json_sq(json_object_get(st.data, "capacity"), "3");
    assert_null(json_object_get(st.data, "converge"));
    clear(&st);
}

static void test_no_change_in_capacity_is_no_action(void **state)
{
    (void)state;
    cv_rstate_t st = group_state("{'min_size': 1, 'max_size': 2, " MEMBER "}",
                                 "{'names': ['0', '1'], 'capacity': 2}");
    assert_int_equal(adjust(&st, "{'scaling': {'adjustment': 1, 'adjustment_type': "
                                 "'change_in_capacity'}}"),
                     0);
    assert_string_equal(
        st.reason, "asg NOT performing scaling adjustment, as there is no change in capacity.");
    assert_null(json_object_get(st.data, "converge"));
    clear(&st);
}

static void test_a_signal_in_cooldown_is_ignored(void **state)
{
    (void)state;
    cv_rstate_t st =
        group_state("{'min_size': 1, 'max_size': 5, 'cooldown': 120, " MEMBER "}",
                    "{'names': ['0', '1'], 'capacity': 2, 'cooldown_end': 1700000060.0}");
    /* No cooldown of the policy: the group's is named, as in Heat. */
    assert_int_equal(adjust(&st, "{'scaling': {'adjustment': -1, 'adjustment_type': "
                                 "'change_in_capacity', 'cooldown': null}}"),
                     0);
    assert_string_equal(st.reason, "The resource asg could not perform scaling action: due to "
                                   "cooldown, cooldown 120");
    assert_json_sq(json_object_get(st.data, "capacity"), "2");
    st.now = T0 + 61;
    assert_int_equal(adjust(&st, "{'scaling': {'adjustment': -1, 'adjustment_type': "
                                 "'change_in_capacity', 'cooldown': null}}"),
                     0);
    assert_json_sq(json_object_get(st.data, "capacity"), "1");
    clear(&st);
}

/* Heat's adjust: a group whose action is not COMPLETE does not scale. */
static void test_a_group_not_complete_takes_no_adjustment(void **state)
{
    (void)state;
    cv_rstate_t st = group_state("{'min_size': 1, 'max_size': 5, " MEMBER "}",
                                 "{'names': ['0', '1'], 'capacity': 2}");
    st.status = "UPDATE_IN_PROGRESS";
    assert_int_equal(adjust(&st, "{'scaling': {'adjustment': 1, 'adjustment_type': "
                                 "'change_in_capacity'}}"),
                     0);
    assert_string_equal(st.reason,
                        "asg NOT performing scaling adjustment, when status is not COMPLETE");
    assert_json_sq(json_object_get(st.data, "capacity"), "2");
    st.status = "UPDATE_COMPLETE";
    assert_int_equal(adjust(&st, "{'scaling': {'adjustment': 1, 'adjustment_type': "
                                 "'change_in_capacity'}}"),
                     0);
    assert_json_sq(json_object_get(st.data, "capacity"), "3");
    clear(&st);
}

static void test_a_signal_of_another_form_is_refused(void **state)
{
    (void)state;
    cv_rstate_t st = group_state("{'min_size': 1, 'max_size': 5, " MEMBER "}", "{}");
    json_t *details = js("{'status': 'SUCCESS'}");
    char err[256] = "";
    assert_int_equal(asg()->signal(&st, details, err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "OS::Heat::ScalingPolicy"));
    json_decref(details);
    clear(&st);
}

/* The end of the group's action ends the scaling and starts the cooldown. */
static void test_the_cooldown_starts_when_the_resize_completes(void **state)
{
    (void)state;
    cv_rstate_t st = group_state(
        "{'min_size': 1, 'max_size': 5, 'cooldown': 10, " MEMBER "}",
        "{'names': ['0'], 'attrs': [], 'traversal': 7, 'scaling': {'cooldown': 60}, "
        "'child': {'exists': true, 'status': 'UPDATE_COMPLETE', 'traversal': 7, 'outputs': "
        "{'refs': ['r0']}}}");
    strcpy(st.physical_id, "0123456789abcdef");
    st.action_started = T0 - 1;
    assert_int_equal(asg()->observe(&st, CV_ACTION_UPDATE), CV_OBSERVED_COMPLETE);
    assert_null(json_object_get(st.data, "scaling"));
    assert_null(json_object_get(st.data, "child"));
    assert_true(json_number_value(json_object_get(st.data, "cooldown_end")) == T0 + 60);
    assert_json_sq(json_object_get(st.attrs, "current_size"), "1");
    clear(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_bounds_are_checked_with_heats_messages),
        cmocka_unit_test(test_policy_properties_are_checked_with_heats_messages),
        cmocka_unit_test(test_created_with_desired_capacity_or_min_size),
        cmocka_unit_test(test_an_update_resizes_to_desired_removing_the_oldest),
        cmocka_unit_test(test_an_update_without_desired_keeps_the_size_within_new_bounds),
        cmocka_unit_test(test_unchanged_properties_keep_the_size_a_signal_set),
        cmocka_unit_test(test_a_changed_member_definition_rolls_out_in_batches),
        cmocka_unit_test(test_attributes_are_heats),
        cmocka_unit_test(test_a_policy_signal_is_passed_on_to_its_group),
        cmocka_unit_test(test_the_group_adjusts_and_asks_for_an_update),
        cmocka_unit_test(test_no_change_in_capacity_is_no_action),
        cmocka_unit_test(test_a_signal_in_cooldown_is_ignored),
        cmocka_unit_test(test_a_group_not_complete_takes_no_adjustment),
        cmocka_unit_test(test_a_signal_of_another_form_is_refused),
        cmocka_unit_test(test_the_cooldown_starts_when_the_resize_completes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
