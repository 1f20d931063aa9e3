/*
 * Specification of how convergectl reads a span of time an operator writes
 * (cli/status/cli_duration.h): `purge --older-than 7d`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_duration.h"

static long long parsed(const char *text)
{
    long long s = -42;
    assert_int_equal(cli_parse_duration(text, &s), 0);
    return s;
}

static void test_each_unit_is_read(void **state)
{
    (void)state;
    assert_int_equal(parsed("30s"), 30);
    assert_int_equal(parsed("15m"), 900);
    assert_int_equal(parsed("2h"), 7200);
    assert_int_equal(parsed("7d"), 604800);
}

static void test_a_bare_number_is_seconds_and_zero_is_now(void **state)
{
    (void)state;
    assert_int_equal(parsed("0s"), 0);
    assert_int_equal(parsed("0"), 0);
    assert_int_equal(parsed("90"), 90);
}

static void test_units_add_up_in_sequence(void **state)
{
    (void)state;
    assert_int_equal(parsed("1h30m"), 5400);
    assert_int_equal(parsed("1d2h3m4s"), 93784);
}

static void test_what_is_not_a_span_is_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"",    "s",  "5x",   "-1s", "+1s", "1.5h",
                                      "1 h", "h1", "3h20", "1hh", " 1s"};
    long long s = -42;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (cli_parse_duration(bad[i], &s) != -1)
            fail_msg("\"%s\" was read as %lld s", bad[i], s);
        assert_int_equal(s, -42);
    }
}

static void test_a_span_past_a_century_is_refused_without_overflow(void **state)
{
    (void)state;
    long long s = -42;
    assert_int_equal(cli_parse_duration("36500d", &s), 0);
    assert_int_equal(cli_parse_duration("36501d", &s), -1);
    assert_int_equal(cli_parse_duration("99999999999999999999999s", &s), -1);
    assert_int_equal(cli_parse_duration("36500d36500d", &s), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_unit_is_read),
        cmocka_unit_test(test_a_bare_number_is_seconds_and_zero_is_now),
        cmocka_unit_test(test_units_add_up_in_sequence),
        cmocka_unit_test(test_what_is_not_a_span_is_refused),
        cmocka_unit_test(test_a_span_past_a_century_is_refused_without_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
