/*
 * Specification of a ResourceGroup's update_policy rolling_update: Heat's
 * batch arithmetic with the scenarios of Heat's own
 * heat/tests/openstack/heat/test_resource_group.py (TestGetBatches,
 * ReplaceTest, RollingUpdateTest's _update_timeout cases), the members each
 * batch changes, and the child template that rolls a changed resource_def
 * out batch by batch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv__rtype_internal.h"
#include "test_group_walk.h"
#include "test_json_fixture.h"
#include "test_rtype_config.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#define GROUP "OS::Heat::ResourceGroup"

typedef struct {
    const char *name;
    long long targ, init, size, min;
    const char *batches_sq; /* Heat's [(size after, members updated, names)] */
} heat_batches_t;

/* TestGetBatches' scenarios verbatim: the group's members are "1".."init"
 * ("0" is skipped), the new count is targ. */
static const heat_batches_t heat_cases[] = {
    {"4_4_1_0", 4, 4, 1, 0, "[[4, 1, ['4']], [4, 1, ['3']], [4, 1, ['2']], [4, 1, ['1']]]"},
    {"4_4_1_4", 4, 4, 1, 4,
     "[[5, 1, ['5']], [5, 1, ['4']], [5, 1, ['3']], [5, 1, ['2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_4_1_5", 4, 4, 1, 5,
     "[[5, 1, ['5']], [5, 1, ['4']], [5, 1, ['3']], [5, 1, ['2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_4_2_0", 4, 4, 2, 0, "[[4, 2, ['4', '3']], [4, 2, ['2', '1']]]"},
    {"4_4_2_4", 4, 4, 2, 4,
     "[[6, 2, ['6', '5']], [6, 2, ['4', '3']], [6, 2, ['2', '1']], [4, 0, []]]"},
    {"5_5_2_0", 5, 5, 2, 0, "[[5, 2, ['5', '4']], [5, 2, ['3', '2']], [5, 1, ['1']]]"},
    {"5_5_2_4", 5, 5, 2, 4,
     "[[6, 2, ['6', '5']], [6, 2, ['4', '3']], [6, 2, ['2', '1']], [5, 0, []]]"},
    {"3_3_2_0", 3, 3, 2, 0, "[[3, 2, ['3', '2']], [3, 1, ['1']]]"},
    {"3_3_2_4", 3, 3, 2, 4, "[[5, 2, ['5', '4']], [5, 2, ['3', '2']], [4, 1, ['1']], [3, 0, []]]"},
    {"4_4_4_0", 4, 4, 4, 0, "[[4, 4, ['4', '3', '2', '1']]]"},
    {"4_4_5_0", 4, 4, 5, 0, "[[4, 4, ['4', '3', '2', '1']]]"},
    {"4_4_4_1", 4, 4, 4, 1, "[[5, 4, ['5', '4', '3', '2']], [4, 1, ['1']]]"},
    {"4_4_6_1", 4, 4, 6, 1, "[[5, 4, ['5', '4', '3', '2']], [4, 1, ['1']]]"},
    {"4_4_4_2", 4, 4, 4, 2, "[[6, 4, ['6', '5', '4', '3']], [4, 2, ['2', '1']]]"},
    {"4_4_4_4", 4, 4, 4, 4,
     "[[8, 4, ['8', '7', '6', '5']], [8, 4, ['4', '3', '2', '1']], [4, 0, []]]"},
    {"4_4_5_6", 4, 4, 5, 6,
     "[[8, 4, ['8', '7', '6', '5']], [8, 4, ['4', '3', '2', '1']], [4, 0, []]]"},
    {"4_7_1_0", 4, 7, 1, 0, "[[4, 1, ['4']], [4, 1, ['3']], [4, 1, ['2']], [4, 1, ['1']]]"},
    {"4_7_1_4", 4, 7, 1, 4,
     "[[5, 1, ['4']], [5, 1, ['3']], [5, 1, ['2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_7_1_5", 4, 7, 1, 5,
     "[[5, 1, ['4']], [5, 1, ['3']], [5, 1, ['2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_7_2_0", 4, 7, 2, 0, "[[4, 2, ['4', '3']], [4, 2, ['2', '1']]]"},
    {"4_7_2_4", 4, 7, 2, 4, "[[6, 2, ['4', '3']], [6, 2, ['2', '1']], [4, 0, []]]"},
    {"5_7_2_0", 5, 7, 2, 0, "[[5, 2, ['5', '4']], [5, 2, ['3', '2']], [5, 1, ['1']]]"},
    {"5_7_2_4", 5, 7, 2, 4, "[[6, 2, ['5', '4']], [6, 2, ['3', '2']], [5, 1, ['1']]]"},
    {"4_7_4_4", 4, 7, 4, 4, "[[8, 4, ['8', '4', '3', '2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_7_5_6", 4, 7, 5, 6, "[[8, 4, ['8', '4', '3', '2']], [5, 1, ['1']], [4, 0, []]]"},
    {"6_4_1_0", 6, 4, 1, 0,
     "[[5, 1, ['5']], [6, 1, ['6']], [6, 1, ['4']], [6, 1, ['3']], [6, 1, ['2']], [6, 1, ['1']]]"},
    {"6_4_1_4", 6, 4, 1, 4,
     "[[5, 1, ['5']], [6, 1, ['6']], [6, 1, ['4']], [6, 1, ['3']], [6, 1, ['2']], [6, 1, ['1']]]"},
    {"6_4_1_5", 6, 4, 1, 5,
     "[[5, 1, ['5']], [6, 1, ['6']], [6, 1, ['4']], [6, 1, ['3']], [6, 1, ['2']], [6, 1, ['1']]]"},
    {"6_4_2_0", 6, 4, 2, 0, "[[6, 2, ['5', '6']], [6, 2, ['4', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_2_4", 6, 4, 2, 4, "[[6, 2, ['5', '6']], [6, 2, ['4', '3']], [6, 2, ['2', '1']]]"},
    {"6_5_2_0", 6, 5, 2, 0, "[[6, 2, ['6', '5']], [6, 2, ['4', '3']], [6, 2, ['2', '1']]]"},
    {"6_5_2_4", 6, 5, 2, 4, "[[6, 2, ['6', '5']], [6, 2, ['4', '3']], [6, 2, ['2', '1']]]"},
    {"6_3_2_0", 6, 3, 2, 0, "[[5, 2, ['4', '5']], [6, 2, ['6', '3']], [6, 2, ['2', '1']]]"},
    {"6_3_2_4", 6, 3, 2, 4, "[[5, 2, ['4', '5']], [6, 2, ['6', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_4_0", 6, 4, 4, 0, "[[6, 4, ['5', '6', '4', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_5_0", 6, 4, 5, 0, "[[6, 5, ['5', '6', '4', '3', '2']], [6, 1, ['1']]]"},
    {"6_4_4_1", 6, 4, 4, 1, "[[6, 4, ['5', '6', '4', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_6_1", 6, 4, 6, 1, "[[7, 6, ['5', '6', '7', '4', '3', '2']], [6, 1, ['1']]]"},
    {"6_4_4_2", 6, 4, 4, 2, "[[6, 4, ['5', '6', '4', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_4_4", 6, 4, 4, 4,
     "[[8, 4, ['8', '7', '6', '5']], [8, 4, ['4', '3', '2', '1']], [6, 0, []]]"},
    {"6_4_5_6", 6, 4, 5, 6,
     "[[9, 5, ['9', '8', '7', '6', '5']], [10, 4, ['10', '4', '3', '2']], [7, 1, ['1']], [6, 0, "
     "[]]]"},
};

#define NCASES (sizeof(heat_cases) / sizeof(heat_cases[0]))

static void test_batches_match_heats_get_batches(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        const heat_batches_t *c = &heat_cases[i];
        json_t *want = js(c->batches_sq), *pairs = json_array();
        size_t j;
        const json_t *b;
        json_array_foreach(want, j, b)
        {
            json_array_append_new(pairs,
                                  json_pack("[O, O]", json_array_get(b, 0), json_array_get(b, 1)));
        }
        json_t *got = cv__group_rolling_batches(c->targ, c->init, c->size, c->min);
        if (!json_equal(got, pairs))
            fail_msg("scenario %s: got %s", c->name, json_dumps(got, JSON_COMPACT));
        json_decref(got);
        json_decref(pairs);
        json_decref(want);
    }
}

typedef struct {
    const char *name;
    long long min, count;
    const char *existing, *skipped;
    long long size;
    double pause;
    size_t tasks;
} replace_case_t;

/* ReplaceTest: _replace's tasks are its batches and the pauses between them. */
static const replace_case_t replace_cases[] = {
    {"1", 0, 2, "['0', '1']", "['0']", 1, 0, 2},
    {"2", 3, 2, "['0', '1']", "[]", 2, 0, 3},
    {"3", 3, 2, "['0', '1']", "['0']", 2, 0, 3},
    {"4", 3, 2, "['0', '1', '2', '3']", "['2', '3']", 1, 0, 4},
    {"5", 2, 2, "['0', '1', '2', '3']", "[]", 2, 0, 2},
    {"6", 2, 3, "['0', '1']", "['0', '1']", 2, 0, 2},
    {"7", 0, 5, "['0', '1']", "[]", 1, 0, 5},
    {"8", 0, 5, "['0', '1']", "['0']", 1, 0, 5},
    {"9", 0, 3, "['0', '1', '2', '3', '4', '5']", "['0']", 2, 0, 2},
    {"10", 0, 3, "['0', '1', '2', '3', '4', '5']", "['0']", 2, 10, 3},
};

static void test_replace_tasks_match_heats(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(replace_cases) / sizeof(replace_cases[0]); i++) {
        const replace_case_t *c = &replace_cases[i];
        json_t *existing = js(c->existing), *skipped = js(c->skipped);
        long long curr = 0;
        size_t j;
        const json_t *n;
        json_array_foreach(existing, j, n)
        {
            curr += !cv__group_contains(skipped, json_string_value(n));
        }
        json_t *batches = cv__group_rolling_batches(c->count, curr, c->size, c->min);
        size_t nb = json_array_size(batches);
        size_t tasks = nb + (c->pause > 0 && nb > 1 ? nb - 1 : 0);
        if (tasks != c->tasks)
            fail_msg("scenario %s: %zu tasks, Heat has %zu", c->name, tasks, c->tasks);
        json_decref(batches);
        json_decref(skipped);
        json_decref(existing);
    }
}

/* test_update_time_not_sufficient / test_update_time_sufficient */
static void test_pauses_beyond_the_timeout_are_refused(void **state)
{
    (void)state;
    double left = 0;
    assert_int_equal(cv__group_update_timeout(3, 100, 200, &left), -1);
    assert_int_equal(cv__group_update_timeout(3, 100, 400, &left), 0);
    assert_true(left == 200);
    assert_int_equal(cv__group_update_timeout(1, 5000, 3600, &left), 0);
}

/* ---- the child template ---- */

/* The child template's resources for `count` members of `value` under
 * `policy_sq` (the resolved update_policy, as data.facade holds it). */
static json_t *define(int count, const char *value, const char *policy_sq, json_t *data, int *rc,
                      char *err)
{
    const cv_rtype_t *t = tr_type(GROUP);
    json_t *raw = json_pack("{s:i, s:{s:s, s:{s:s}}}", "count", count, "resource_def", "type",
                            "OS::Heat::Value", "properties", "value", value);
    json_t *props = tr_props(t, raw), *tpl = NULL, *params = NULL;
    json_object_set_new(data, "facade",
                        json_pack("{s:o}", "update_policy", js(policy_sq ? policy_sq : "{}")));
    *rc = t->nested->definition(GROUP, props, NULL, data, &tpl, &params, err, 256);
    json_t *resources = json_incref(json_object_get(tpl, "resources"));
    json_decref(tpl);
    json_decref(params);
    json_decref(props);
    json_decref(raw);
    return resources;
}

#define ROLLING "{'rolling_update': {'max_batch_size': 2, 'pause_time': 1}}"

static const json_t *deps(const json_t *res, const char *name)
{
    return json_object_get(json_object_get(res, name), "depends_on");
}

/* The walk's steps, each member as its name, "+" when it has the new
 * definition. */
static void test_a_changed_definition_walks_the_child_batch_by_batch(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    json_decref(define(4, "a", ROLLING, data, &rc, err));
    assert_int_equal(rc, 0);
    assert_null(json_object_get(data, "walk"));
    json_t *r = define(4, "b", ROLLING, data, &rc, err);
    assert_int_equal(rc, 0);
    /* Heat's two nested updates: the highest two members first. */
    assert_walk_steps(data, true, "[['0', '1', '2+', '3+'], ['0+', '1+', '2+', '3+']]");
    assert_json_sq(json_object_get(json_object_get(data, "walk"), "pause"), "1.0");
    /* The child holds the members only, no pause and no order. */
    assert_int_equal(json_object_size(r), 4);
    assert_null(deps(r, "0"));
    assert_json_sq(json_object_get(json_object_get(r, "3"), "properties"), "{'value': 'b'}");
    assert_json_sq(json_object_get(json_object_get(r, "0"), "properties"), "{'value': 'a'}");
    json_decref(r);
    /* The engine's next step: the same definition, the walk's next child. */
    assert_true(cv_rtype_walk_pending(data));
    assert_int_equal(cv_rtype_walk_next(data), 0);
    assert_false(cv_rtype_walk_pending(data));
    assert_int_equal(cv_rtype_walk_next(data), CV_ENOENT);
    r = define(4, "b", ROLLING, data, &rc, err);
    json_t *plain = json_object();
    json_decref(define(4, "b", NULL, plain, &rc, err));
    json_t *final = define(4, "b", NULL, plain, &rc, err);
    assert_true(json_equal(r, final)); /* the last step is the group without a walk */
    json_decref(final);
    json_decref(plain);
    json_decref(r);
    json_decref(data);
}

static void test_without_rolling_update_every_member_changes_at_once(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    json_decref(define(3, "a", NULL, data, &rc, err));
    json_t *r = define(3, "b", "{'batch_create': {'max_batch_size': 1}}", data, &rc, err);
    assert_null(json_object_get(data, "walk"));
    assert_json_sq(r, "{'0': {'type': 'OS::Heat::Value', 'properties': {'value': 'b'}},"
                      " '1': {'type': 'OS::Heat::Value', 'properties': {'value': 'b'}},"
                      " '2': {'type': 'OS::Heat::Value', 'properties': {'value': 'b'}}}");
    json_decref(r);
    json_decref(data);
}

/* A submitter's group of N members rolled out one at a time keeps the plan
 * and one step's members in its record, not N steps of N members. */
static void test_a_walk_of_many_steps_keeps_one_step(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    const char *policy = "{'rolling_update': {'max_batch_size': 1}}";
    json_decref(define(2000, "a", policy, data, &rc, err));
    json_t *r = define(2000, "b", policy, data, &rc, err);
    assert_int_equal(rc, 0);
    const json_t *walk = json_object_get(data, "walk");
    assert_int_equal(json_integer_value(json_object_get(walk, "steps")), 2000);
    char *text = json_dumps(walk, JSON_COMPACT);
    assert_true(strlen(text) < 200 * 1000); /* 2000 x 2000 names would be ~40 MB */
    free(text);
    assert_int_equal(json_object_size(r), 2000);
    json_decref(r);
    json_decref(data);
}

/* batch_create: the child is created with the first batch, each further
 * batch one update of it. */
static void test_batch_create_walks_the_creation(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    const char *policy = "{'batch_create': {'max_batch_size': 2, 'pause_time': 1}}";
    json_t *r = define(5, "a", policy, data, &rc, err);
    assert_int_equal(rc, 0);
    assert_walk_steps(data, true,
                      "[['0+', '1+'], ['0+', '1+', '2+', '3+'], ['0+', '1+', '2+', '3+', '4+']]");
    assert_int_equal(json_object_size(r), 2);
    json_decref(r);
    assert_int_equal(cv_rtype_walk_next(data), 0);
    r = define(5, "a", policy, data, &rc, err);
    assert_int_equal(json_object_size(r), 4);
    json_decref(r);
    json_decref(data);
}

/* Heat's 4_4_4_2: (6, 4) with two temporary members, then (4, 2). */
static void test_min_in_service_creates_temporary_members(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    const char *policy = "{'rolling_update': {'max_batch_size': 4, 'min_in_service': 2}}";
    json_decref(define(4, "a", policy, data, &rc, err));
    json_t *r = define(4, "b", policy, data, &rc, err);
    assert_walk_steps(data, true, "[['0', '1', '2+', '3+', '4+', '5+'], ['0+', '1+', '2+', '3+']]");
    assert_json_sq(json_object_get(json_object_get(r, "5"), "properties"), "{'value': 'b'}");
    json_decref(r);
    json_decref(data);
}

/* The observer's look at a walking group whose child finished a step at
 * `ended`, at `now`. */
static cv_observed_t look(double ended, double now, const char *at, cv_rstate_t *st)
{
    char data[512];
    snprintf(data, sizeof(data),
             "{'names': ['0'], 'attrs': [], 'traversal': 7, 'walk': {'steps': 2, 'at': %s,"
             " 'pause': 2.0}, 'child': {'exists': true, 'status': 'UPDATE_COMPLETE',"
             " 'traversal': 7, 'updated': %.3f, 'outputs': {'refs': ['r0']}}}",
             at, ended);
    memset(st, 0, sizeof(*st));
    st->stack_name = "stk";
    st->resource_name = "group";
    strcpy(st->physical_id, "0123456789abcdef");
    st->data = js(data);
    st->attrs = json_object();
    st->now = now;
    st->action_started = ended - 10;
    return tr_type(GROUP)->observe(st, CV_ACTION_UPDATE);
}

/* Between two steps the pause runs from the end of the child's traversal;
 * nothing is recorded meanwhile. The last step's end completes the group. */
static void test_the_pause_between_steps_is_a_timer_of_the_look(void **state)
{
    (void)state;
    cv_rstate_t st;
    assert_int_equal(look(1000.0, 1001.5, "0", &st), CV_OBSERVED_IN_PROGRESS);
    assert_true(st.retry_at > 1001.99 && st.retry_at < 1002.01);
    assert_string_equal(st.reason, "step 1 of 2 done; the next begins in 0.5 s (pause_time)");
    json_decref(st.data);
    json_decref(st.attrs);
    assert_int_equal(look(1000.0, 1002.0, "0", &st), CV_OBSERVED_NEXT_STEP);
    json_decref(st.data);
    json_decref(st.attrs);
    assert_int_equal(look(1000.0, 1000.5, "1", &st), CV_OBSERVED_COMPLETE);
    assert_null(json_object_get(st.data, "walk"));
    json_decref(st.data);
    json_decref(st.attrs);
}

/* Heat's tmpl_with_updt_policy: numbers written as strings, as Heat takes
 * them (RollingUpdateTest: _replace(1, 2, 1)). */
static void test_policy_numbers_may_be_strings(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    const char *policy = "{'rolling_update': {'min_in_service': '1', 'max_batch_size': '2',"
                         " 'pause_time': '1'}}";
    json_decref(define(2, "a", policy, data, &rc, err));
    json_t *r = define(2, "b", policy, data, &rc, err);
    assert_int_equal(rc, 0);
    /* Heat's _get_batches(2, 2, 2, 1): (3, 2) with a temporary member, then
     * (2, 1): member 1, then member 0. */
    assert_walk_steps(data, true, "[['0', '1+', '2+'], ['0+', '1+']]");
    json_decref(r);
    json_decref(data);
}

static void test_an_invalid_policy_is_refused_with_heats_messages(void **state)
{
    (void)state;
    json_t *data = json_object();
    int rc;
    char err[256];
    json_decref(define(2, "a", NULL, data, &rc, err));
    json_t *r = define(2, "b", "{'rolling_update': {'max_batch_size': 0}}", data, &rc, err);
    assert_null(r);
    assert_int_equal(rc, CV_EVALIDATE);
    assert_string_equal(err, "update_policy.rolling_update.max_batch_size: 0 is out of range "
                             "(min: 1, max: None)");
    json_decref(define(2, "b", "{'rolling_update': {'min_in_service': -1}}", data, &rc, err));
    assert_string_equal(err, "update_policy.rolling_update.min_in_service: -1 is out of range "
                             "(min: 0, max: None)");
    /* Checked on create too. */
    json_t *fresh = json_object();
    assert_null(define(2, "a", "{'rolling_update': {'max_batch_size': 0}}", fresh, &rc, err));
    assert_int_equal(rc, CV_EVALIDATE);
    json_decref(fresh);
    json_decref(define(2, "b", "{'rolling_update': {'pause_time': 3600}}", data, &rc, err));
    assert_int_equal(rc, CV_EVALIDATE);
    assert_string_equal(err, "The current update policy will result in stack update timeout.");
    /* Refused: nothing recorded, so the next try plans again. */
    assert_null(json_object_get(data, "walk"));
    r = define(2, "b", "{'rolling_update': {'pause_time': 2}}", data, &rc, err);
    assert_int_equal(rc, 0);
    assert_walk_steps(data, true, "[['0', '1+'], ['0+', '1+']]");
    json_decref(r);
    json_decref(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_match_heats_get_batches),
        cmocka_unit_test(test_replace_tasks_match_heats),
        cmocka_unit_test(test_pauses_beyond_the_timeout_are_refused),
        cmocka_unit_test(test_a_changed_definition_walks_the_child_batch_by_batch),
        cmocka_unit_test(test_without_rolling_update_every_member_changes_at_once),
        cmocka_unit_test(test_a_walk_of_many_steps_keeps_one_step),
        cmocka_unit_test(test_batch_create_walks_the_creation),
        cmocka_unit_test(test_the_pause_between_steps_is_a_timer_of_the_look),
        cmocka_unit_test(test_min_in_service_creates_temporary_members),
        cmocka_unit_test(test_policy_numbers_may_be_strings),
        cmocka_unit_test(test_an_invalid_policy_is_refused_with_heats_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
