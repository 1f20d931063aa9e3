/*
 * Specification of the bounded flow behind the domain check: a circulation
 * exists exactly when every lower bound can be met within the upper bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "place_internal.h"

enum { S = 0, T = 1, A = 2, B = 3 };

/* s -> a [lo_a, hi_a], s -> b [lo_b, hi_b], a -> t and b -> t up to cap_a /
 * cap_b, and exactly `total` units from t back to s. */
static bool two_domains(int lo_a, int hi_a, int lo_b, int hi_b, int cap_a, int cap_b, int total)
{
    pl_flow_t *f = cv__place_flow_new(4, 8);
    cv__place_flow_edge(f, S, A, lo_a, hi_a);
    cv__place_flow_edge(f, S, B, lo_b, hi_b);
    cv__place_flow_edge(f, A, T, 0, cap_a);
    cv__place_flow_edge(f, B, T, 0, cap_b);
    cv__place_flow_edge(f, T, S, total, total);
    bool ok = cv__place_flow_feasible(f);
    cv__place_flow_free(f);
    return ok;
}

static void test_a_total_within_every_bound_is_feasible(void **state)
{
    (void)state;
    assert_true(two_domains(1, 2, 1, 2, 5, 5, 3));
}

static void test_a_lower_bound_without_room_is_infeasible(void **state)
{
    (void)state;
    assert_false(two_domains(1, 2, 1, 2, 5, 0, 3)); /* b needs one, has no node */
}

static void test_a_total_above_the_upper_bounds_is_infeasible(void **state)
{
    (void)state;
    assert_false(two_domains(0, 1, 0, 1, 5, 5, 3));
}

static void test_a_total_below_the_lower_bounds_is_infeasible(void **state)
{
    (void)state;
    assert_false(two_domains(2, 3, 2, 3, 5, 5, 3));
}

static void test_an_upper_bound_below_the_lower_one_is_infeasible(void **state)
{
    (void)state;
    assert_false(two_domains(1, 0, 0, 5, 5, 5, 1));
}

static void test_zero_more_replicas_are_always_feasible_without_lower_bounds(void **state)
{
    (void)state;
    assert_true(two_domains(0, 1, 0, 1, 0, 0, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_total_within_every_bound_is_feasible),
        cmocka_unit_test(test_a_lower_bound_without_room_is_infeasible),
        cmocka_unit_test(test_a_total_above_the_upper_bounds_is_infeasible),
        cmocka_unit_test(test_a_total_below_the_lower_bounds_is_infeasible),
        cmocka_unit_test(test_an_upper_bound_below_the_lower_one_is_infeasible),
        cmocka_unit_test(test_zero_more_replicas_are_always_feasible_without_lower_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
