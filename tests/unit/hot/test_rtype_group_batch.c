/*
 * Specification of a ResourceGroup's update_policy batch_create: the group's
 * create walks its child through batches of max_batch_size (Heat's
 * _get_batches with no member yet), one child traversal each, pause_time
 * apart (the walk's, no resource of the child).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "test_group_walk.h"
#include "test_json_fixture.h"
#include "test_rtype_config.h"

#define GROUP "OS::Heat::ResourceGroup"

/* The child template's resources for `count` members under `policy_sq`
 * (the resolved update_policy, as data.facade holds it); *data kept. */
static json_t *define(int count, const char *policy_sq, json_t *data, int *rc, char *err)
{
    const cv_rtype_t *t = tr_type(GROUP);
    json_t *raw =
        json_pack("{s:i, s:{s:s}}", "count", count, "resource_def", "type", "OS::Heat::None");
    json_t *props = tr_props(t, raw), *tpl = NULL, *params = NULL;
    if (policy_sq && !json_object_get(data, "facade"))
        json_object_set_new(data, "facade", json_pack("{s:o}", "update_policy", js(policy_sq)));
    *rc = t->nested->definition(GROUP, props, NULL, data, &tpl, &params, err, 256);
    json_t *resources = json_incref(json_object_get(tpl, "resources"));
    json_decref(tpl);
    json_decref(params);
    json_decref(props);
    json_decref(raw);
    return resources;
}

/* The child's members at each step of the walk, by name. */
static void test_batches_of_max_batch_size_are_steps_of_the_child(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    json_t *r = define(5, "{'batch_create': {'max_batch_size': 2}}", data, &rc, err);
    assert_int_equal(rc, 0);
    /* The child is created with the first batch alone, with no order. */
    assert_json_sq(r, "{'0': {'type': 'OS::Heat::None'}, '1': {'type': 'OS::Heat::None'}}");
    assert_walk_steps(data, false, "[['0', '1'], ['0', '1', '2', '3'], ['0', '1', '2', '3', '4']]");
    assert_json_sq(json_object_get(json_object_get(data, "walk"), "pause"), "0.0");
    json_decref(r);
    json_decref(data);
}

static void test_the_pause_is_the_walks_not_a_resource(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    json_t *r =
        define(3, "{'batch_create': {'max_batch_size': 2, 'pause_time': 1.5}}", data, &rc, err);
    assert_int_equal(rc, 0);
    assert_json_sq(r, "{'0': {'type': 'OS::Heat::None'}, '1': {'type': 'OS::Heat::None'}}");
    assert_json_sq(json_object_get(json_object_get(data, "walk"), "pause"), "1.5");
    assert_int_equal(cv_rtype_walk_next(data), 0);
    json_decref(r);
    r = define(3, NULL, data, &rc, err);
    assert_json_sq(r, "{'0': {'type': 'OS::Heat::None'}, '1': {'type': 'OS::Heat::None'},"
                      " '2': {'type': 'OS::Heat::None'}}");
    json_decref(r);
    json_decref(data);
}

static void test_one_batch_is_no_walk(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    json_t *r = define(2, "{'batch_create': {'max_batch_size': 5}}", data, &rc, err);
    assert_int_equal(rc, 0);
    assert_null(json_object_get(data, "walk"));
    assert_int_equal(json_object_size(r), 2);
    json_decref(r);
    json_decref(data);
}

static void test_a_policy_added_to_a_created_group_changes_nothing(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    json_decref(define(2, NULL, data, &rc, err));
    json_t *r = define(2, "{'batch_create': {'max_batch_size': 1}}", data, &rc, err);
    assert_json_sq(r, "{'0': {'type': 'OS::Heat::None'}, '1': {'type': 'OS::Heat::None'}}");
    json_decref(r);
    json_decref(data);
}

static void test_without_a_policy_members_are_independent(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    json_t *r = define(2, "{'rolling_update': {'max_batch_size': 1}}", data, &rc, err);
    assert_json_sq(r, "{'0': {'type': 'OS::Heat::None'}, '1': {'type': 'OS::Heat::None'}}");
    assert_null(json_object_get(data, "batches"));
    json_decref(r);
    json_decref(data);
}

static void test_an_invalid_policy_is_refused_with_heats_range_message(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    json_decref(define(2, "{'batch_create': {'max_batch_size': 0}}", data, &rc, err));
    assert_int_equal(rc, CV_EVALIDATE);
    assert_string_equal(err, "update_policy.batch_create.max_batch_size: 0 is out of range "
                             "(min: 1, max: None)");
    json_decref(data);
    data = json_object();
    json_decref(define(2, "{'batch_create': {'pause_time': -1}}", data, &rc, err));
    assert_string_equal(err, "update_policy.batch_create.pause_time: -1 is out of range "
                             "(min: 0, max: None)");
    json_decref(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_of_max_batch_size_are_steps_of_the_child),
        cmocka_unit_test(test_the_pause_is_the_walks_not_a_resource),
        cmocka_unit_test(test_one_batch_is_no_walk),
        cmocka_unit_test(test_a_policy_added_to_a_created_group_changes_nothing),
        cmocka_unit_test(test_without_a_policy_members_are_independent),
        cmocka_unit_test(test_an_invalid_policy_is_refused_with_heats_range_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
