/*
 * Specification of OS::Heat::TestResource: actions record their wait and
 * never block; observe answers IN_PROGRESS until the wait has passed, then
 * COMPLETE, or FAILED with Heat's message when `fail` is set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_rtype.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define WHERE "resources.r.properties"
#define UUID "fedcba9876543210-aaaa-bbbb-cccc-dddddddddddd"
#define T0 1700000000.0

static const cv_rtype_t *test_type(void)
{
    return cv_rtype_find("OS::Heat::TestResource");
}

/* A state as the engine hands it to an action: properties with the schema
 * applied, empty data and attributes. */
static cv_rstate_t *new_state(const char *props_json)
{
    cv_rstate_t *st = calloc(1, sizeof(*st));
    json_t *raw = tu_json(props_json);
    char err[256] = "";
    st->props = cv_rtype_apply_schema(test_type(), raw, WHERE, false, err, sizeof(err));
    if (!st->props)
        fail_msg("%s refused: %s", props_json, err);
    json_decref(raw);
    st->stack_name = "stk";
    st->resource_name = "r";
    st->uuid = UUID;
    st->now = T0;
    st->data = json_object();
    st->attrs = json_object();
    return st;
}

static void free_state(cv_rstate_t *st)
{
    json_decref((json_t *)st->props);
    json_decref((json_t *)st->old_props);
    json_decref(st->data);
    json_decref(st->attrs);
    free(st);
}

/* Observes `action` as started at T0, at time `now`. */
static cv_observed_t observe_at(cv_rstate_t *st, cv_action_t action, double now)
{
    st->action_started = T0;
    st->now = now;
    st->retry_at = 0;
    return test_type()->observe(st, action);
}

static void replace_props(cv_rstate_t *st, const char *props_json)
{
    cv_rstate_t *fresh = new_state(props_json);
    json_decref((json_t *)st->old_props);
    st->old_props = st->props;
    st->props = json_incref((json_t *)fresh->props);
    free_state(fresh);
}

static void test_create_names_the_resource_and_stores_the_output(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{\"value\": \"hello\"}");
    assert_int_equal(test_type()->create(st), 0);
    assert_string_equal(st->physical_id, "stk-r-fedcba987654");
    assert_string_equal(json_string_value(json_object_get(st->attrs, "output")), "hello");
    free_state(st);
}

static void test_output_defaults_to_test_string(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{}");
    assert_int_equal(test_type()->create(st), 0);
    assert_string_equal(json_string_value(json_object_get(st->attrs, "output")), "test_string");
    free_state(st);
}

static void test_without_a_wait_create_is_complete_at_once(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{}");
    assert_int_equal(test_type()->create(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0), CV_OBSERVED_COMPLETE);
    free_state(st);
}

/* A wait of N seconds is over strictly after N (by a millisecond), so that
 * events at millisecond precision never show exactly N. */
#define OVER(t) ((t) + 0.001)
#define assert_time(got, want) assert_true((got) > (want)-1e-6 && (got) < (want) + 1e-6)

static void test_a_wait_is_in_progress_until_it_has_passed(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{\"wait_secs\": 5}");
    assert_int_equal(test_type()->create(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0 + 2), CV_OBSERVED_IN_PROGRESS);
    assert_time(st->retry_at, OVER(OVER(T0 + 5)));
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0 + 4.999), CV_OBSERVED_IN_PROGRESS);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0 + 5), CV_OBSERVED_IN_PROGRESS);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, OVER(T0 + 5)), CV_OBSERVED_IN_PROGRESS);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, OVER(OVER(T0 + 5))), CV_OBSERVED_COMPLETE);
    free_state(st);
}

static void test_action_wait_secs_overrides_wait_secs_per_action(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{\"wait_secs\": 10, \"action_wait_secs\": {\"create\": 2, "
                                "\"delete\": \"3\"}}");
    assert_int_equal(test_type()->create(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0 + 1), CV_OBSERVED_IN_PROGRESS);
    assert_time(st->retry_at, OVER(OVER(T0 + 2)));
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0 + 2.01), CV_OBSERVED_COMPLETE);

    assert_int_equal(test_type()->update(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_UPDATE, T0 + 9), CV_OBSERVED_IN_PROGRESS);
    assert_time(st->retry_at, OVER(OVER(T0 + 10)));

    assert_int_equal(test_type()->remove(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_DELETE, T0 + 1), CV_OBSERVED_IN_PROGRESS);
    assert_time(st->retry_at, OVER(OVER(T0 + 3)));
    assert_int_equal(observe_at(st, CV_ACTION_DELETE, T0 + 3.01), CV_OBSERVED_COMPLETE);
    free_state(st);
}

static void test_a_negative_wait_is_forever(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{\"wait_secs\": -1}");
    assert_int_equal(test_type()->create(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0 + 86400), CV_OBSERVED_IN_PROGRESS);
    assert_true(st->retry_at > T0 + 86400);
    free_state(st);
}

static void test_fail_fails_create_with_heats_message(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{\"fail\": true}");
    st->resource_name = "my_res";
    assert_int_equal(test_type()->create(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0), CV_OBSERVED_FAILED);
    assert_string_equal(st->reason, "ValueError: resources.my_res: Test Resource failed my_res");
    free_state(st);
}

static void test_fail_waits_before_failing(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{\"fail\": true, \"wait_secs\": 3}");
    assert_int_equal(test_type()->create(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0 + 1), CV_OBSERVED_IN_PROGRESS);
    assert_time(st->retry_at, OVER(OVER(T0 + 3)));
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0 + 3.01), CV_OBSERVED_FAILED);
    free_state(st);
}

static void test_fail_fails_update_but_not_delete(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{}");
    assert_int_equal(test_type()->create(st), 0);
    replace_props(st, "{\"fail\": true, \"value\": \"v2\"}");
    assert_int_equal(test_type()->update(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_UPDATE, T0), CV_OBSERVED_FAILED);
    assert_string_equal(st->reason, "ValueError: resources.r: Test Resource failed r");
    assert_int_equal(test_type()->remove(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_DELETE, T0), CV_OBSERVED_COMPLETE);
    free_state(st);
}

static void test_an_update_fixes_a_failing_resource(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{\"fail\": true, \"wait_secs\": -1}");
    assert_int_equal(test_type()->create(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0 + 100), CV_OBSERVED_IN_PROGRESS);
    replace_props(st, "{\"value\": \"fixed\"}");
    assert_int_equal(test_type()->update(st), 0);
    assert_int_equal(observe_at(st, CV_ACTION_UPDATE, T0), CV_OBSERVED_COMPLETE);
    assert_string_equal(json_string_value(json_object_get(st->attrs, "output")), "fixed");
    free_state(st);
}

static void test_update_keeps_the_physical_id(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{}");
    strcpy(st->physical_id, "given-by-the-record");
    assert_int_equal(test_type()->update(st), 0);
    assert_string_equal(st->physical_id, "given-by-the-record");
    free_state(st);
}

static void test_observe_tolerates_data_from_an_older_record(void **state)
{
    (void)state;
    cv_rstate_t *st = new_state("{\"fail\": true, \"wait_secs\": 100}");
    /* No create: the record's data holds nothing this version wrote. */
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0), CV_OBSERVED_COMPLETE);
    json_object_set_new(st->data, "wait", json_string("soon"));
    json_object_set_new(st->data, "fail", json_string("yes"));
    assert_int_equal(observe_at(st, CV_ACTION_CREATE, T0), CV_OBSERVED_COMPLETE);
    free_state(st);
}

static void expect_invalid(const char *props_json, const char *message)
{
    json_t *raw = tu_json(props_json);
    char err[256] = "";
    json_t *out = cv_rtype_apply_schema(test_type(), raw, WHERE, true, err, sizeof(err));
    if (out)
        fail_msg("%s accepted", props_json);
    assert_string_equal(err, message);
    json_decref(raw);
}

static void test_action_wait_secs_takes_only_actions_and_numbers(void **state)
{
    (void)state;
    expect_invalid("{\"action_wait_secs\": {\"resume\": 1}}",
                   WHERE ".action_wait_secs.resume: unknown key (expected create, update or "
                         "delete)");
    expect_invalid("{\"action_wait_secs\": {\"create\": \"long\"}}",
                   WHERE ".action_wait_secs.create: expected number, got \"long\"");
    expect_invalid("{\"action_wait_secs\": {\"update\": [1]}}",
                   WHERE ".action_wait_secs.update: expected number, got [1]");
}

static void test_action_wait_secs_may_hold_intrinsics(void **state)
{
    (void)state;
    json_t *raw = tu_json("{\"action_wait_secs\": {\"create\": {\"get_param\": \"w\"}}}");
    char err[256] = "";
    json_t *out = cv_rtype_apply_schema(test_type(), raw, WHERE, true, err, sizeof(err));
    if (!out)
        fail_msg("refused: %s", err);
    json_decref(out);
    json_decref(raw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_names_the_resource_and_stores_the_output),
        cmocka_unit_test(test_output_defaults_to_test_string),
        cmocka_unit_test(test_without_a_wait_create_is_complete_at_once),
        cmocka_unit_test(test_a_wait_is_in_progress_until_it_has_passed),
        cmocka_unit_test(test_action_wait_secs_overrides_wait_secs_per_action),
        cmocka_unit_test(test_a_negative_wait_is_forever),
        cmocka_unit_test(test_fail_fails_create_with_heats_message),
        cmocka_unit_test(test_fail_waits_before_failing),
        cmocka_unit_test(test_fail_fails_update_but_not_delete),
        cmocka_unit_test(test_an_update_fixes_a_failing_resource),
        cmocka_unit_test(test_update_keeps_the_physical_id),
        cmocka_unit_test(test_observe_tolerates_data_from_an_older_record),
        cmocka_unit_test(test_action_wait_secs_takes_only_actions_and_numbers),
        cmocka_unit_test(test_action_wait_secs_may_hold_intrinsics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
