/*
 * Specification of the node's host ports (agent/node/agent_ports.h): ports of the
 * range for port 0, fixed ports, no port held by two replicas, released
 * ports not handed out again at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_ports.h"
#include "cv_base.h"
#include "test_util.h"

static void test_ports_come_from_the_range_in_order(void **state)
{
    (void)state;
    cv_ports_t p;
    cv_ports_init(&p, 31000, 31002);
    assert_int_equal(cv_ports_alloc(&p, "a", NULL, NULL), 31000);
    assert_int_equal(cv_ports_alloc(&p, "b", NULL, NULL), 31001);
    assert_int_equal(cv_ports_alloc(&p, "b", NULL, NULL), 31002);
    assert_int_equal(cv_ports_alloc(&p, "c", NULL, NULL), CV_ENOENT);
    cv_ports_free(&p);
}

static void test_a_port_is_never_held_twice(void **state)
{
    (void)state;
    cv_ports_t p;
    cv_ports_init(&p, 31000, 31010);
    assert_int_equal(cv_ports_take(&p, 8080, "a"), 0);
    assert_int_equal(cv_ports_take(&p, 8080, "b"), CV_EEXIST);
    assert_string_equal(cv_ports_owner(&p, 8080), "a");
    assert_int_equal(cv_ports_take(&p, 8080, "a"), 0); /* its owner again: fine */
    assert_int_equal(cv_ports_take(&p, 31000, "a"), 0);
    assert_int_equal(cv_ports_alloc(&p, "b", NULL, NULL), 31001); /* skips the taken one */
    cv_ports_free(&p);
}

static void test_released_ports_are_reused_only_after_the_rest(void **state)
{
    (void)state;
    cv_ports_t p;
    cv_ports_init(&p, 31000, 31002);
    assert_int_equal(cv_ports_alloc(&p, "a", NULL, NULL), 31000);
    cv_ports_release(&p, "a");
    assert_null(cv_ports_owner(&p, 31000));
    assert_int_equal(cv_ports_alloc(&p, "b", NULL, NULL), 31001);
    assert_int_equal(cv_ports_alloc(&p, "b", NULL, NULL), 31002);
    assert_int_equal(cv_ports_alloc(&p, "b", NULL, NULL), 31000);
    cv_ports_free(&p);
}

static bool odd_is_busy(void *ud, int port)
{
    (void)ud;
    return port % 2 == 0;
}

static void test_ports_the_host_uses_are_skipped(void **state)
{
    (void)state;
    cv_ports_t p;
    cv_ports_init(&p, 31001, 31004);
    assert_int_equal(cv_ports_alloc(&p, "a", odd_is_busy, NULL), 31002);
    assert_int_equal(cv_ports_alloc(&p, "a", odd_is_busy, NULL), 31004);
    assert_int_equal(cv_ports_alloc(&p, "a", odd_is_busy, NULL), CV_ENOENT);
    cv_ports_free(&p);
}

static void test_a_range_reads_lo_dash_hi(void **state)
{
    (void)state;
    int lo, hi;
    assert_int_equal(cv_ports_parse_range("31000-31999", &lo, &hi), 0);
    assert_int_equal(lo, 31000);
    assert_int_equal(hi, 31999);
    assert_int_equal(cv_ports_parse_range("5-4", &lo, &hi), CV_EINVAL);
    assert_int_equal(cv_ports_parse_range("0-4", &lo, &hi), CV_EINVAL);
    assert_int_equal(cv_ports_parse_range("1-70000", &lo, &hi), CV_EINVAL);
    assert_int_equal(cv_ports_parse_range("31000", &lo, &hi), CV_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ports_come_from_the_range_in_order),
        cmocka_unit_test(test_a_port_is_never_held_twice),
        cmocka_unit_test(test_released_ports_are_reused_only_after_the_rest),
        cmocka_unit_test(test_ports_the_host_uses_are_skipped),
        cmocka_unit_test(test_a_range_reads_lo_dash_hi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
