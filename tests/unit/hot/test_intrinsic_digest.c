/*
 * digest: Heat's hash of a string ({digest: [sha256, value]}), resolved
 * and checked as Heat does (cases from heat/tests/test_hot.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_template.h"
#include "test_intrinsic_fixture.h"

static void test_digest_hashes_with_each_algorithm(void **state)
{
    (void)state;
    assert_resolves("{\"digest\": [\"md5\", \"foobar\"]}", "\"3858f62230ac3c915f300c664312c63f\"");
    assert_resolves("{\"digest\": [\"sha1\", \"foobar\"]}",
                    "\"8843d7f92416211de9ebb963ff4ce28125932878\"");
    assert_resolves("{\"digest\": [\"sha224\", \"foobar\"]}",
                    "\"de76c3e567fca9d246f5f8d3b2e704a38c3c5e258988ab525f941db8\"");
    assert_resolves("{\"digest\": [\"sha256\", \"foobar\"]}",
                    "\"c3ab8ff13720e8ad9047dd39466b3c8974e592c2fa383d4a3960714caef0c4f2\"");
    assert_resolves(
        "{\"digest\": [\"sha384\", \"foobar\"]}",
        "\"3c9c30d9f665e74d515c842960d4a451c83a0125fd3de7392d7b37231af10c72ea58aedfcdf89"
        "a5765bf902af93ecf06\"");
    assert_resolves(
        "{\"digest\": [\"sha512\", \"foobar\"]}",
        "\"0a50261ebd1a390fed2bf326f2673c145582a6342d523204973d0219337f81616a8069b012587"
        "cf5635f6925f1b56c360230c19b273500ee013e030601bf2425\"");
}

static void test_digest_names_the_algorithm_in_any_case(void **state)
{
    (void)state;
    assert_resolves("{\"digest\": [\"MD5\", \"foobar\"]}", "\"3858f62230ac3c915f300c664312c63f\"");
}

/* Heat hashes value.encode('latin-1'): é is the one byte 0xe9. */
static void test_digest_hashes_the_latin1_bytes(void **state)
{
    (void)state;
    assert_resolves("{\"digest\": [\"sha256\", \"caf\\u00e9\"]}",
                    "\"dafd66c0b98965e688be1fc12942c09f0350e6be0685017c3f234e97d0adc92e\"");
    assert_fails("{\"digest\": [\"sha256\", \"5\\u20ac\"]}",
                 "digest: 'latin-1' codec can't encode character U+20AC");
}

static void test_digest_with_wrong_arguments_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"digest\": \"invalid\"}",
                      "Argument to function \"digest\" must be a list of strings");
    assert_fails_with("{\"digest\": [\"md5\", 123]}",
                      "Argument to function \"digest\" must be a list of strings");
    assert_fails_with("{\"digest\": [\"md5\", null]}",
                      "Argument to function \"digest\" must be a list of strings");
    assert_fails_with("{\"digest\": []}",
                      "Function \"digest\" usage: [\"<algorithm>\", \"<value>\"]");
    assert_fails_with("{\"digest\": [\"foo\"]}",
                      "Function \"digest\" usage: [\"<algorithm>\", \"<value>\"]");
    assert_fails_with("{\"digest\": [\"md5\", \"foo\", \"bar\"]}",
                      "Function \"digest\" usage: [\"<algorithm>\", \"<value>\"]");
    assert_fails_with("{\"digest\": [\"invalid_algorithm\", \"foobar\"]}",
                      "Algorithm must be one of md5, sha1, sha224, sha256, sha384, sha512");
}

static void test_digest_is_checked_at_validation(void **state)
{
    (void)state;
    accept_output("2015-04-30", "{digest: [sha512, {get_param: p}]}");
    accept_output("2015-04-30", "{digest: [{get_param: p}, x]}");
    reject_output_with("2015-04-30", "{digest: [md5]}",
                       "Function \"digest\" usage: [\"<algorithm>\", \"<value>\"]");
    reject_output_with("2015-04-30", "{digest: [md5, [x]]}",
                       "Argument to function \"digest\" must be a list of strings");
    reject_output_with("2015-04-30", "{digest: abc}",
                       "Argument to function \"digest\" must be a list of strings");
    reject_output_with("2015-04-30", "{digest: [sha3_256, x]}",
                       "Algorithm must be one of md5, sha1, sha224, sha256, sha384, sha512");
}

/* Heat's tables add digest in 2015-04-30: before it the map is data. */
static void test_digest_before_2015_04_30_is_plain_data(void **state)
{
    (void)state;
    assert_output_is("2014-10-16", "{digest: [md5, x]}", "{\"digest\": [\"md5\", \"x\"]}");
    assert_output_is("2015-04-30", "{digest: [md5, x]}", "\"9dd4e461268c8034f5c8564e155c67a6\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digest_hashes_with_each_algorithm),
        cmocka_unit_test(test_digest_names_the_algorithm_in_any_case),
        cmocka_unit_test(test_digest_hashes_the_latin1_bytes),
        cmocka_unit_test(test_digest_with_wrong_arguments_is_an_error),
        cmocka_unit_test(test_digest_is_checked_at_validation),
        cmocka_unit_test(test_digest_before_2015_04_30_is_plain_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
