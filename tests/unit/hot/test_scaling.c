/*
 * Heat's scaling arithmetic (cv_scaling.h): calculate_new_capacity with the
 * scenarios of Heat's own heat/tests/autoscaling/test_new_capacity.py, the
 * cooldown check of heat/scaling/cooldown.py, and the rolling update's
 * batches with the scenarios of heat/tests/autoscaling/test_rolling_update.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_scaling.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    const char *name;
    long long current;
    double adjustment;
    const char *type;
    long long min_step, minimum, maximum, expected;
} capacity_case_t;

#define N CV_SCALING_CHANGE
#define E CV_SCALING_EXACT
#define P CV_SCALING_PERCENT

/* name, current, adjustment, type, min_adjustment_step, minimum, maximum, expected */
static const capacity_case_t heat_cases[] = {
    {"+n", 2, 3, N, 0, 0, 10, 5},      {"-n", 6, -2, N, 0, 0, 5, 4},
    {"+nb", 2, 8, N, 0, 0, 5, 5},      {"-nb", 2, -10, N, 0, 1, 5, 1},
    {"e", 2, 4, E, 0, 0, 5, 4},        {"+eb", 2, 11, E, 0, 0, 5, 5},
    {"-eb", 4, 1, E, 0, 3, 5, 3},      {"+p", 4, 50, P, 0, 1, 10, 6},
    {"-p", 4, -25, P, 0, 1, 10, 3},    {"+pb", 4, 100, P, 0, 1, 6, 6},
    {"-pb", 6, -50, P, 0, 4, 10, 4},   {"-p+r", 2, -33, P, 0, 0, 10, 1},
    {"+p+r", 1, 33, P, 0, 0, 10, 2},   {"-p-r", 2, -66, P, 0, 0, 10, 1},
    {"+p-r", 1, 225, P, 0, 0, 10, 3},  {"+ps", 1, 100, P, 3, 0, 10, 4},
    {"+p+rs", 1, 33, P, 2, 0, 10, 3},  {"+p-rs", 1, 325, P, 2, 0, 10, 4},
    {"-p-rs", 3, -25, P, 2, 0, 10, 1},
};

static void test_new_capacity_matches_heats_scenarios(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(heat_cases) / sizeof(heat_cases[0]); i++) {
        const capacity_case_t *c = &heat_cases[i];
        long long got = cv_scaling_new_capacity(c->current, c->adjustment, c->type, c->min_step,
                                                c->minimum, c->maximum);
        if (got != c->expected)
            fail_msg("scenario %s: got %lld, expected %lld", c->name, got, c->expected);
    }
}

static void test_cfn_spellings_are_the_same_adjustments(void **state)
{
    (void)state;
    assert_int_equal(cv_scaling_new_capacity(2, 3, "ChangeInCapacity", 0, 0, 10), 5);
    assert_int_equal(cv_scaling_new_capacity(2, 4, "ExactCapacity", 0, 0, 10), 4);
    assert_int_equal(cv_scaling_new_capacity(4, 50, "PercentChangeInCapacity", 0, 1, 10), 6);
    assert_true(cv_scaling_type_known("percent_change_in_capacity"));
    assert_false(cv_scaling_type_known("percent"));
    assert_false(cv_scaling_type_known(NULL));
}

static void test_scaling_is_allowed_without_a_cooldown_on(void **state)
{
    (void)state;
    char why[128] = "";
    json_t *data = tu_json("{\"cooldown_end\": 99.5}");
    assert_int_equal(cv_scaling_allowed(data, 100.0, 60, why, sizeof(why)), 0);
    json_decref(data);
    data = tu_json("{}");
    assert_int_equal(cv_scaling_allowed(data, 100.0, 60, why, sizeof(why)), 0);
    json_decref(data);
}

static void test_a_cooldown_on_refuses_with_heats_reason(void **state)
{
    (void)state;
    char why[128] = "";
    json_t *data = tu_json("{\"cooldown_end\": 160.0}");
    assert_int_not_equal(cv_scaling_allowed(data, 100.0, 60, why, sizeof(why)), 0);
    assert_string_equal(why, "due to cooldown, cooldown 60");
    assert_int_not_equal(cv_scaling_allowed(data, 100.0, 2.5, why, sizeof(why)), 0);
    assert_string_equal(why, "due to cooldown, cooldown 2.5");
    json_decref(data);
}

static void test_a_scaling_in_progress_refuses_first(void **state)
{
    (void)state;
    char why[128] = "";
    json_t *data = tu_json("{\"scaling\": {\"cooldown\": null}, \"cooldown_end\": 160.0}");
    assert_int_not_equal(cv_scaling_allowed(data, 100.0, 60, why, sizeof(why)), 0);
    assert_string_equal(why, "due to scaling activity");
    json_decref(data);
}

/* targ, curr, updated, needs update (TestNeedsUpdate) */
static const long long needs_cases[][4] = {
    {4, 4, 0, 1}, {4, 4, 1, 1}, {4, 4, 3, 1}, {4, 4, 4, 0}, {4, 4, 5, 0},
    {4, 5, 0, 1}, {4, 5, 1, 1}, {4, 5, 3, 1}, {4, 5, 4, 1}, {4, 5, 5, 1},
    {4, 3, 0, 1}, {4, 3, 1, 1}, {4, 3, 2, 1}, {4, 3, 3, 1}, {4, 3, 4, 1},
};

/* targ, curr, updated, bat_size, min_srv, batch size after, batch (TestNextBatch) */
static const long long batch_cases[][7] = {
    {4, 4, 0, 1, 0, 4, 1},  {4, 4, 3, 1, 0, 4, 1}, {4, 4, 0, 1, 4, 5, 1}, {4, 5, 3, 1, 4, 5, 1},
    {4, 5, 4, 1, 4, 4, 0},  {4, 4, 0, 1, 5, 5, 1}, {4, 5, 3, 1, 5, 5, 1}, {4, 5, 0, 1, 4, 5, 1},
    {4, 5, 1, 1, 4, 5, 1},  {4, 5, 4, 1, 5, 4, 0}, {4, 4, 0, 2, 0, 4, 2}, {4, 4, 2, 2, 0, 4, 2},
    {4, 4, 0, 2, 4, 6, 2},  {4, 6, 4, 2, 4, 4, 0}, {5, 5, 0, 2, 0, 5, 2}, {5, 5, 4, 2, 0, 5, 1},
    {5, 5, 0, 2, 4, 6, 2},  {5, 6, 2, 2, 4, 6, 2}, {5, 6, 4, 2, 4, 5, 1}, {5, 7, 2, 2, 4, 6, 2},
    {3, 3, 0, 2, 0, 3, 2},  {3, 3, 2, 2, 0, 3, 1}, {3, 3, 0, 2, 4, 5, 2}, {3, 5, 2, 2, 4, 4, 1},
    {3, 5, 3, 2, 4, 3, 0},  {4, 4, 0, 4, 0, 4, 4}, {4, 4, 0, 5, 0, 4, 4}, {4, 4, 0, 4, 1, 5, 4},
    {4, 4, 4, 4, 1, 4, 0},  {4, 4, 0, 6, 1, 5, 4}, {4, 4, 4, 6, 1, 4, 0}, {4, 4, 0, 4, 2, 6, 4},
    {4, 4, 4, 4, 2, 4, 0},  {4, 4, 0, 4, 4, 8, 4}, {4, 4, 4, 4, 4, 4, 0}, {4, 4, 0, 5, 6, 8, 4},
    {4, 4, 4, 5, 6, 4, 0},  {6, 4, 0, 1, 0, 5, 1}, {6, 5, 1, 1, 0, 6, 1}, {6, 4, 0, 1, 4, 5, 1},
    {6, 5, 1, 1, 4, 6, 1},  {6, 4, 0, 2, 0, 6, 2}, {6, 4, 0, 2, 4, 6, 2}, {6, 5, 0, 2, 0, 6, 2},
    {6, 5, 0, 2, 4, 6, 2},  {6, 3, 0, 2, 0, 5, 2}, {6, 5, 2, 2, 0, 6, 2}, {6, 5, 4, 2, 0, 6, 2},
    {6, 3, 0, 2, 4, 5, 2},  {6, 5, 2, 2, 4, 6, 2}, {6, 5, 4, 2, 4, 6, 2}, {6, 4, 0, 4, 0, 6, 4},
    {6, 4, 4, 4, 0, 6, 2},  {6, 4, 0, 5, 0, 6, 5}, {6, 6, 5, 4, 0, 6, 1}, {6, 4, 0, 4, 1, 6, 4},
    {6, 6, 4, 4, 1, 6, 2},  {6, 4, 0, 6, 1, 7, 6}, {6, 7, 5, 6, 1, 6, 1}, {6, 4, 0, 4, 2, 6, 4},
    {6, 4, 4, 4, 2, 6, 2},  {6, 4, 0, 4, 4, 8, 4}, {6, 4, 4, 4, 4, 6, 2}, {6, 8, 2, 4, 4, 8, 4},
    {6, 8, 6, 4, 4, 6, 0},  {6, 4, 0, 5, 6, 9, 5}, {6, 9, 5, 5, 6, 7, 1}, {6, 9, 2, 5, 6, 10, 4},
    {6, 10, 5, 5, 6, 7, 1}, {6, 7, 6, 5, 6, 6, 0},
};

static void test_needs_update_matches_heats_scenarios(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(needs_cases) / sizeof(needs_cases[0]); i++) {
        const long long *c = needs_cases[i];
        if (cv_scaling_needs_update(c[0], c[1], c[2]) != (c[3] != 0))
            fail_msg("needs_update(%lld, %lld, %lld) is not %lld", c[0], c[1], c[2], c[3]);
    }
}

static void test_next_batch_matches_heats_scenarios(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(batch_cases) / sizeof(batch_cases[0]); i++) {
        const long long *c = batch_cases[i];
        long long size, batch;
        cv_scaling_next_batch(c[0], c[1], c[2], c[3], c[4], &size, &batch);
        if (size != c[5] || batch != c[6])
            fail_msg("%lld_%lld_%lld_%lld_%lld: got (%lld, %lld), expected (%lld, %lld)", c[0],
                     c[1], c[2], c[3], c[4], size, batch, c[5], c[6]);
    }
}

/* Heat's _get_batches: 4 members, 2 at a time, 3 kept in service — the
 * group grows to 6, stays there while replacing, and shrinks back. */
static void test_batches_of_a_rolling_update(void **state)
{
    (void)state;
    json_t *b = cv_scaling_batches(4, 4, 2, 3);
    char *text = json_dumps(b, JSON_COMPACT);
    assert_string_equal(text, "[[5,2],[5,2],[4,0]]");
    free(text);
    json_decref(b);
    b = cv_scaling_batches(3, 3, 1, 0);
    text = json_dumps(b, JSON_COMPACT);
    assert_string_equal(text, "[[3,1],[3,1],[3,1]]");
    free(text);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_capacity_matches_heats_scenarios),
        cmocka_unit_test(test_cfn_spellings_are_the_same_adjustments),
        cmocka_unit_test(test_scaling_is_allowed_without_a_cooldown_on),
        cmocka_unit_test(test_a_cooldown_on_refuses_with_heats_reason),
        cmocka_unit_test(test_a_scaling_in_progress_refuses_first),
        cmocka_unit_test(test_needs_update_matches_heats_scenarios),
        cmocka_unit_test(test_next_batch_matches_heats_scenarios),
        cmocka_unit_test(test_batches_of_a_rolling_update),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
