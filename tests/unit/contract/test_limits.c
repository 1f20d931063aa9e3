/* Input limits: defaults, overrides from the environment and options, and
 * errors that say what was too big and how to raise the limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_limits.h"

static void test_defaults_are_the_documented_ones(void **state)
{
    (void)state;
    cv_limits_t l;
    cv_limits_init(&l);
    assert_int_equal(l.template_bytes, 1048576);
    assert_int_equal(l.resources, 100000);
    assert_int_equal(l.string_bytes, 65536);
    assert_int_equal(l.message_bytes, 1048576);
    assert_int_equal(l.nesting_depth, 5);
    assert_int_equal(l.traversal_resources, 1500000);
    assert_int_equal(cv_limits_get(&l, CV_LIMIT_MESSAGE_BYTES), 1048576);
}

static void test_every_limit_has_an_option_and_an_environment_variable(void **state)
{
    (void)state;
    assert_string_equal(cv_limit_option(CV_LIMIT_TEMPLATE_BYTES), "max-template-bytes");
    assert_string_equal(cv_limit_env(CV_LIMIT_TEMPLATE_BYTES), "CONVERGE_MAX_TEMPLATE_BYTES");
    assert_string_equal(cv_limit_env(CV_LIMIT_NESTING_DEPTH), "CONVERGE_MAX_NESTING_DEPTH");
    for (int i = 0; i < CV_LIMIT__COUNT; i++) {
        assert_non_null(strstr(cv_limit_option((cv_limit_t)i), "max-"));
        assert_non_null(strstr(cv_limit_env((cv_limit_t)i), "CONVERGE_MAX_"));
        assert_true(strlen(cv_limit_what((cv_limit_t)i)) > 0);
    }
}

static void test_environment_overrides_the_defaults(void **state)
{
    (void)state;
    cv_limits_t l;
    cv_limits_init(&l);
    setenv("CONVERGE_MAX_MESSAGE_BYTES", "4096", 1);
    setenv("CONVERGE_MAX_RESOURCES", "", 1); /* empty: keep the default */
    assert_int_equal(cv_limits_from_env(&l, NULL, 0), 0);
    unsetenv("CONVERGE_MAX_MESSAGE_BYTES");
    unsetenv("CONVERGE_MAX_RESOURCES");
    assert_int_equal(l.message_bytes, 4096);
    assert_int_equal(l.resources, 100000);
}

static void test_a_bad_environment_value_names_the_variable(void **state)
{
    (void)state;
    cv_limits_t l;
    char err[256];
    cv_limits_init(&l);
    setenv("CONVERGE_MAX_STRING_BYTES", "64k", 1);
    assert_int_equal(cv_limits_from_env(&l, err, sizeof(err)), CV_EINVAL);
    unsetenv("CONVERGE_MAX_STRING_BYTES");
    assert_non_null(strstr(err, "CONVERGE_MAX_STRING_BYTES=\"64k\""));
    assert_int_equal(l.string_bytes, 65536);
}

static void test_options_set_a_limit_by_name(void **state)
{
    (void)state;
    cv_limits_t l;
    char err[256];
    cv_limits_init(&l);
    assert_int_equal(cv_limits_set(&l, "max-nesting-depth", "3", err, sizeof(err)), 0);
    assert_int_equal(l.nesting_depth, 3);
    assert_int_equal(cv_limits_set(&l, "max-nesting-depth", "0", err, sizeof(err)), CV_EINVAL);
    assert_int_equal(cv_limits_set(&l, "max-nesting-depth", "-1", err, sizeof(err)), CV_EINVAL);
    assert_int_equal(cv_limits_set(&l, "max-nesting-depth", "2x", err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "--max-nesting-depth \"2x\""));
    assert_int_equal(cv_limits_set(&l, "max-widgets", "3", err, sizeof(err)), CV_ENOENT);
    assert_int_equal(l.nesting_depth, 3);
}

static void test_a_value_at_the_limit_passes_and_one_over_it_is_refused(void **state)
{
    (void)state;
    cv_limits_t l;
    char err[256];
    cv_limits_init(&l);
    assert_int_equal(cv_limits_check(&l, CV_LIMIT_TEMPLATE_BYTES, 1048576, "a.yaml", err, 256), 0);
    assert_int_equal(cv_limits_check(&l, CV_LIMIT_TEMPLATE_BYTES, 1048577, "a.yaml", err, 256),
                     CV_ETOOBIG);
    assert_string_equal(err, "a.yaml: template size 1048577 bytes exceeds the limit of 1048576 "
                             "(--max-template-bytes, CONVERGE_MAX_TEMPLATE_BYTES)");
}

static void test_a_count_without_unit_reads_naturally(void **state)
{
    (void)state;
    cv_limits_t l;
    char err[256];
    cv_limits_init(&l);
    l.resources = 10;
    assert_int_equal(cv_limits_check(&l, CV_LIMIT_RESOURCES, 11, "stack web", err, 256),
                     CV_ETOOBIG);
    assert_string_equal(err, "stack web: number of resources 11 exceeds the limit of 10 "
                             "(--max-resources, CONVERGE_MAX_RESOURCES)");
}

static void test_usage_lists_every_limit_with_its_default(void **state)
{
    (void)state;
    char text[2048];
    cv_limits_usage(text, sizeof(text));
    for (int i = 0; i < CV_LIMIT__COUNT; i++)
        assert_non_null(strstr(text, cv_limit_option((cv_limit_t)i)));
    assert_non_null(strstr(text, "default 1048576"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_the_documented_ones),
        cmocka_unit_test(test_every_limit_has_an_option_and_an_environment_variable),
        cmocka_unit_test(test_environment_overrides_the_defaults),
        cmocka_unit_test(test_a_bad_environment_value_names_the_variable),
        cmocka_unit_test(test_options_set_a_limit_by_name),
        cmocka_unit_test(test_a_value_at_the_limit_passes_and_one_over_it_is_refused),
        cmocka_unit_test(test_a_count_without_unit_reads_naturally),
        cmocka_unit_test(test_usage_lists_every_limit_with_its_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
