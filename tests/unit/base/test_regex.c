/*
 * Specification of cv_regex: user-written patterns are compiled only when
 * glibc can compile and run them in bounded time and memory. The refused
 * patterns are the inputs the fuzzers found (tests/fuzz/corpus/mesos/
 * regress_regex_*) and their smallest forms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_error.h"
#include "cv_regex.h"

#include <string.h>

static char err[256];

static int compile(const char *pattern)
{
    regex_t re;
    err[0] = '\0';
    int rc = cv_regex_compile(&re, pattern, REG_EXTENDED, err, sizeof(err));
    if (rc == 0)
        regfree(&re);
    return rc;
}

static void assert_refused(const char *pattern, int code, const char *reason)
{
    if (compile(pattern) != code)
        fail_msg("\"%s\" gave \"%s\", expected %s", pattern, err, cv_err_name(code));
    if (!strstr(err, reason))
        fail_msg("\"%s\" refused with \"%s\", expected \"%s\"", pattern, err, reason);
}

static void test_ordinary_patterns_compile(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "sh.*",
        "(cd|sz)",
        "^(([a-z0-9-]{1,63}\\.){1,10}[a-z]{2,63})$",
        "[[:alpha:]_]+@[^]x]*",
        "(v[0-9]+)*-rc[0-9]?",
        "a{,3}b",
        "[a-z]{0,1000}",
        "x+?",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (compile(ok[i]) != 0)
            fail_msg("\"%s\" refused: %s", ok[i], err);
}

static void test_a_chain_of_plus_is_too_complex(void **state)
{
    (void)state;
    /* glibc copies the operand of each "+": 2^28 copies. */
    assert_refused("s[hZ].++++++++++++++++++++++++++++*", CV_ETOOBIG, "too complex");
    assert_refused("(((((((((((d+)+)+)+)+)+)+)+)+)+)+)+", CV_ETOOBIG, "too complex");
}

static void test_intervals_count_their_copies(void **state)
{
    (void)state;
    assert_int_equal(compile("x{0,1400}"), 0);
    assert_refused("x{0,2000}", CV_ETOOBIG, "more than 3000 elements");
    assert_refused("((ab){100}c){100}", CV_ETOOBIG, "too complex");
}

static void test_repeating_what_can_match_the_empty_string_is_refused(void **state)
{
    (void)state;
    static const char *const loops[] = {"(a*)+", "((d*|e*){10})+", "(a|b?){3}", "a**",
                                        "(a|)+", "(^)*",           "(\\b)+",    "((a?)?)?"};
    for (size_t i = 0; i < sizeof(loops) / sizeof(loops[0]); i++)
        assert_refused(loops[i], CV_EPARSE, "can match the empty string");
}

static void test_back_references_are_refused(void **state)
{
    (void)state;
    /* glibc's regexec recurses without bound on "(a*)*\1b" and a few dozen "a". */
    assert_refused("(a)x\\1", CV_EPARSE, "back-references (\\1)");
}

static void test_groups_nest_at_most_32_deep(void **state)
{
    (void)state;
    char pattern[80] = "";
    for (int i = 0; i < 32; i++)
        strcat(pattern, "(");
    strcat(pattern, "a");
    for (int i = 0; i < 32; i++)
        strcat(pattern, ")");
    assert_int_equal(compile(pattern), 0);
    memmove(pattern + 1, pattern, strlen(pattern) + 1);
    strcat(pattern, ")");
    assert_refused(pattern, CV_ETOOBIG, "nested deeper than 32");
}

static void test_escaped_and_bracketed_metacharacters_are_literals(void **state)
{
    (void)state;
    assert_int_equal(compile("\\(a*\\)+"), 0);
    assert_int_equal(compile("[(*]+"), 0);
    assert_int_equal(compile("[]*]+[*]+"), 0);
}

static void test_what_regcomp_refuses_comes_with_its_reason(void **state)
{
    (void)state;
    assert_int_equal(compile("a{3,2}"), CV_EPARSE);
    assert_true(err[0] != '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ordinary_patterns_compile),
        cmocka_unit_test(test_a_chain_of_plus_is_too_complex),
        cmocka_unit_test(test_intervals_count_their_copies),
        cmocka_unit_test(test_repeating_what_can_match_the_empty_string_is_refused),
        cmocka_unit_test(test_back_references_are_refused),
        cmocka_unit_test(test_groups_nest_at_most_32_deep),
        cmocka_unit_test(test_escaped_and_bracketed_metacharacters_are_literals),
        cmocka_unit_test(test_what_regcomp_refuses_comes_with_its_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
