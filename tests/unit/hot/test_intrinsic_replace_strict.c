/*
 * str_replace_strict and str_replace_vstrict: str_replace that also wants
 * every param found in the template (and, very strict, none empty), as
 * Heat resolves them (inputs and messages from heat/tests/test_hot.py).
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

static void test_str_replace_strict_replaces_as_str_replace_does(void **state)
{
    (void)state;
    assert_resolves("{\"str_replace_strict\": {\"template\": \"Template var1 var1 s var2 t "
                    "varvarvar3\", \"params\": {\"var1\": \"foo\", \"var2\": \"bar\", \"var3\": "
                    "\"zed\", \"var\": \"tricky \"}}}",
                    "\"Template foo foo s bar t tricky tricky zed\"");
    assert_resolves(
        "{\"str_replace_vstrict\": {\"template\": \"a $x\", \"params\": {\"$x\": [1]}}}",
        "\"a [1]\"");
}

static void test_str_replace_strict_allows_empty_values(void **state)
{
    (void)state;
    assert_resolves("{\"str_replace_strict\": {\"template\": \"Template var1 string var2\","
                    " \"params\": {\"var1\": \"foo\", \"var2\": \"\"}}}",
                    "\"Template foo string \"");
    assert_resolves("{\"str_replace_strict\": {\"template\": \"a var2\","
                    " \"params\": {\"var2\": null}}}",
                    "\"a \"");
}

static void test_str_replace_strict_param_not_in_the_template_is_an_error(void **state)
{
    (void)state;
    assert_fails("{\"str_replace_strict\": {\"template\": \"Template var1 string var2\","
                 " \"params\": {\"var1\": \"foo\", \"var2\": \"bar\", \"var3\": \"zed\"}}}",
                 "The following params were not found in the template: var3");
    assert_fails("{\"str_replace_strict\": {\"template\": \"Template var1 string var2\","
                 " \"params\": {\"var1\": \"foo\", \"var2\": \"bar\", \"var0\": \"zed\"}}}",
                 "not found in the template: var0");
}

static void test_str_replace_vstrict_lists_missing_params_in_replacement_order(void **state)
{
    (void)state;
    assert_fails("{\"str_replace_vstrict\": {\"template\": \"Template var1 string var2\","
                 " \"params\": {\"var1\": \"foo\", \"var2\": \"bar\", \"var0\": \"zed\","
                 " \"var\": \"z\", \"longvarname\": \"q\"}}}",
                 "The following params were not found in the template: "
                 "longvarname,var0,var");
}

static void test_str_replace_vstrict_refuses_empty_values(void **state)
{
    (void)state;
    static const char *const empties[] = {"null", "\"\"", "{}", "[]"};
    for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
        char expr[256];
        snprintf(expr, sizeof(expr),
                 "{\"str_replace_vstrict\": {\"template\": \"Template var1 string var2\","
                 " \"params\": {\"var1\": \"foo\", \"var2\": %s}}}",
                 empties[i]);
        assert_fails(expr, "str_replace_vstrict has an undefined or empty "
                           "value for param var2, must be a defined non-empty value");
    }
}

static void test_str_replace_strict_keeps_str_replace_errors(void **state)
{
    (void)state;
    assert_fails("{\"str_replace_strict\": {\"template\": 12345, \"params\": {}}}",
                 "\"str_replace_strict\" template must be a string");
    assert_fails("{\"str_replace_vstrict\": {\"template\": \"a\", \"params\": [\"a\"]}}",
                 "\"str_replace_vstrict\" params must be a map");
    assert_fails("{\"str_replace_strict\": [\"a\"]}",
                 "Arguments to \"str_replace_strict\" must be a map");
    assert_fails("{\"str_replace_vstrict\": {\"params\": {}}}",
                 "\"str_replace_vstrict\" syntax should be str_replace_vstrict:\n"
                 "              template: This is var1 template var2\n");
    assert_fails("{\"str_replace_strict\": {\"template\": \"a\", \"params\": {\"\": \"x\"}}}",
                 "str_replace_strict: params keys may not be empty");
}

static void test_str_replace_strict_is_checked_at_validation(void **state)
{
    (void)state;
    accept_output("2017-02-24", "{str_replace_strict: {template: 'a $p', params: {$p: "
                                "{get_param: p}}}}");
    accept_output("pike",
                  "{str_replace_vstrict: {template: {get_param: p}, params: {get_param: m}}}");
    reject_output("2017-02-24", "{str_replace_strict: {t: a, params: {}}}",
                  "\"str_replace_strict\" syntax should be str_replace_strict:\n");
    reject_output("pike", "{str_replace_vstrict: {template: a, param: {}}}",
                  "\"str_replace_vstrict\" syntax should be str_replace_vstrict:\n");
    reject_output("pike", "{str_replace_vstrict: {template: a, params: {}, x: 1}}",
                  "str_replace_vstrict: expected a map of exactly \"template\" and \"params\"");
    reject_output("pike", "{str_replace_vstrict: {template: a, params: [a]}}",
                  "\"str_replace_vstrict\" parameters must be a mapping");
    reject_output("pike", "{str_replace_strict: {template: a, params: {x: {get_resource: nope}}}}",
                  "The specified reference \"nope\" (in unknown) is incorrect.");
}

/* Heat's tables add str_replace_strict in 2017-02-24 and
 * str_replace_vstrict in 2017-09-01: before them the map is data. */
static void
test_str_replace_strict_before_2017_02_24_and_vstrict_before_2017_09_01_are_plain_data(void **state)
{
    (void)state;
    assert_output_is("2016-10-14", "{str_replace_strict: {template: a, params: {a: b}}}",
                     "{\"str_replace_strict\": {\"template\": \"a\", \"params\": {\"a\": "
                     "\"b\"}}}");
    assert_output_is("2017-02-24", "{str_replace_strict: {template: a, params: {a: b}}}", "\"b\"");
    assert_output_is("2017-02-24", "{str_replace_vstrict: {template: a, params: {a: b}}}",
                     "{\"str_replace_vstrict\": {\"template\": \"a\", \"params\": {\"a\": "
                     "\"b\"}}}");
    assert_output_is("2017-09-01", "{str_replace_vstrict: {template: a, params: {a: b}}}", "\"b\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_str_replace_strict_replaces_as_str_replace_does),
        cmocka_unit_test(test_str_replace_strict_allows_empty_values),
        cmocka_unit_test(test_str_replace_strict_param_not_in_the_template_is_an_error),
        cmocka_unit_test(test_str_replace_vstrict_lists_missing_params_in_replacement_order),
        cmocka_unit_test(test_str_replace_vstrict_refuses_empty_values),
        cmocka_unit_test(test_str_replace_strict_keeps_str_replace_errors),
        cmocka_unit_test(test_str_replace_strict_is_checked_at_validation),
        cmocka_unit_test(
            test_str_replace_strict_before_2017_02_24_and_vstrict_before_2017_09_01_are_plain_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
