/*
 * Specification of cv_str_redact_quoted (proto/base/cv_str.h): what a worker may
 * write to its log of a reason that quotes a refused value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_str.h"

#include <string.h>

static void assert_redacted(const char *in, const char *want)
{
    char out[256];
    size_t n = cv_str_redact_quoted(out, sizeof(out), in);
    assert_string_equal(out, want);
    assert_int_equal(n, strlen(want));
}

static void test_a_double_quoted_value_is_masked(void **state)
{
    (void)state;
    assert_redacted("resources.r.properties.length: expected integer, got \"hunter2\"",
                    "resources.r.properties.length: expected integer, got \"******\"");
}

static void test_a_python_repr_value_is_masked_but_not_an_apostrophe(void **state)
{
    (void)state;
    assert_redacted("ValueError: the stack's value 'hunter2' is not allowed",
                    "ValueError: the stack's value '******' is not allowed");
    assert_redacted("invalid literal for int() with base 10: 'x y'",
                    "invalid literal for int() with base 10: '******'");
}

static void test_every_span_is_masked(void **state)
{
    (void)state;
    assert_redacted("\"a\" and \"b\"", "\"******\" and \"******\"");
    assert_redacted("\"\"", "\"******\"");
}

static void test_an_unclosed_quote_masks_to_the_end(void **state)
{
    (void)state;
    assert_redacted("got \"hunter2 and more", "got \"******");
}

static void test_text_without_quotes_is_unchanged(void **state)
{
    (void)state;
    assert_redacted("Resource CREATE failed: timed out", "Resource CREATE failed: timed out");
    assert_redacted("", "");
}

static void test_the_copy_is_cut_to_fit_and_terminated(void **state)
{
    (void)state;
    char out[8];
    size_t n = cv_str_redact_quoted(out, sizeof(out), "got \"secret value\"");
    assert_int_equal(n, strlen(out));
    assert_true(n < sizeof(out));
    assert_null(strstr(out, "sec"));
    n = cv_str_redact_quoted(out, sizeof(out), "plain text longer than eight");
    assert_string_equal(out, "plain t");
    assert_int_equal(n, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_double_quoted_value_is_masked),
        cmocka_unit_test(test_a_python_repr_value_is_masked_but_not_an_apostrophe),
        cmocka_unit_test(test_every_span_is_masked),
        cmocka_unit_test(test_an_unclosed_quote_masks_to_the_end),
        cmocka_unit_test(test_text_without_quotes_is_unchanged),
        cmocka_unit_test(test_the_copy_is_cut_to_fit_and_terminated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
