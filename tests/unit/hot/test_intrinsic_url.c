/*
 * make_url: a URL from its parts, escaped and assembled as Heat's MakeURL
 * does with Python's urllib.parse (cases from heat/tests/test_hot.py, and
 * results checked against urllib.parse itself).
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

static void test_make_url_joins_the_parts(void **state)
{
    (void)state;
    assert_resolves("{\"make_url\": {\"scheme\": \"http\", \"host\": \"example.com\","
                    " \"path\": \"/foo/bar\"}}",
                    "\"http://example.com/foo/bar\"");
    assert_resolves("{\"make_url\": {\"scheme\": \"http\", \"username\": \"wibble\","
                    " \"password\": \"blarg\", \"host\": \"example.com\", \"path\": \"/foo/bar\"}}",
                    "\"http://wibble:blarg@example.com/foo/bar\"");
    assert_resolves("{\"make_url\": {\"scheme\": \"http\", \"username\": \"wibble\","
                    " \"host\": \"example.com\", \"path\": \"/foo/bar\"}}",
                    "\"http://wibble@example.com/foo/bar\"");
    assert_resolves("{\"make_url\": {\"scheme\": \"http\", \"host\": \"example.com\","
                    " \"path\": \"foo\"}}",
                    "\"http://example.com/foo\"");
}

static void test_make_url_brackets_ipv6_hosts(void **state)
{
    (void)state;
    assert_resolves("{\"make_url\": {\"scheme\": \"http\", \"host\": \"::1\", \"path\": \"/foo\"}}",
                    "\"http://[::1]/foo\"");
    assert_resolves(
        "{\"make_url\": {\"scheme\": \"http\", \"host\": \"[::1]\", \"path\": \"/foo\"}}",
        "\"http://[::1]/foo\"");
}

static void test_make_url_port_may_be_a_number_or_a_numeric_string(void **state)
{
    (void)state;
    assert_resolves("{\"make_url\": {\"scheme\": \"https\", \"host\": \"example.com\","
                    " \"port\": \"80\", \"path\": \"/foo/bar\"}}",
                    "\"https://example.com:80/foo/bar\"");
    assert_resolves("{\"make_url\": {\"scheme\": \"https\", \"host\": \"example.com\","
                    " \"port\": 80, \"path\": \"/foo/bar\"}}",
                    "\"https://example.com:80/foo/bar\"");
}

static void test_make_url_with_a_bad_port_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"make_url\": {\"host\": \"example.com\", \"port\": 100000}}",
                      "Invalid URL port 100000, must be in range 1-65535");
    assert_fails_with("{\"make_url\": {\"host\": \"example.com\", \"port\": \"0\"}}",
                      "Invalid URL port 0, must be in range 1-65535");
    assert_fails_with("{\"make_url\": {\"host\": \"example.com\", \"port\": 70000.5}}",
                      "Invalid URL port 70000, must be in range 1-65535");
    assert_fails_with("{\"make_url\": {\"host\": \"example.com\", \"port\": \"1.1\"}}",
                      "Invalid URL port \"1.1\" for make_url called with {'host': 'example.com', "
                      "'port': '1.1'}");
    assert_fails_with("{\"make_url\": {\"host\": \"example.com\", \"port\": null}}",
                      "Invalid URL port \"None\" for make_url called with {'host': 'example.com', "
                      "'port': None}");
}

static void test_make_url_escapes_each_part_as_urllib_does(void **state)
{
    (void)state;
    assert_resolves(
        "{\"make_url\": {\"scheme\": \"http\", \"username\": \"w@b\", \"password\": \"b:l/a rg\","
        " \"host\": \"ex ample.com\", \"path\": \"a b/c \\u00e9\", \"query\": {\"k 1\": \"v/1 &x\","
        " \"b\": true, \"n\": null, \"f\": 1.5}, \"fragment\": \"frag ment/x\"}}",
        "\"http://w%40b:b%3Al%2Fa%20rg@ex%20ample.com/a%20b/c%20%C3%A9?k+1=v/1+%26x&b=True&n=None&"
        "f=1.5#frag%20ment/x\"");
}

static void test_make_url_assembles_as_urlunsplit_does(void **state)
{
    (void)state;
    assert_resolves("{\"make_url\": {\"scheme\": \"file\", \"path\": \"/etc/x\"}}",
                    "\"file:///etc/x\"");
    assert_resolves("{\"make_url\": {\"scheme\": \"mailto\", \"path\": \"a@b\"}}",
                    "\"mailto:a%40b\"");
    assert_resolves("{\"make_url\": {\"host\": \"h\", \"path\": \"p\"}}", "\"//h/p\"");
    assert_resolves("{\"make_url\": {\"scheme\": \"http\", \"path\": \"//x\"}}", "\"http://x\"");
    assert_resolves("{\"make_url\": {\"scheme\": \"http\", \"password\": \"p\"}}",
                    "\"http://:p@\"");
    assert_resolves("{\"make_url\": {}}", "\"\"");
}

static void test_make_url_with_wrong_arguments_is_an_error(void **state)
{
    (void)state;
    assert_fails_with("{\"make_url\": [\"http\"]}", "The arguments to \"make_url\" must be a map");
    assert_fails_with("{\"make_url\": {\"host\": \"h\", \"hots\": \"h\"}}",
                      "Invalid arguments to \"make_url\": hots");
    assert_fails_with("{\"make_url\": {\"host\": 5}}",
                      "The \"host\" argument to \"make_url\" must be a string");
    assert_fails_with("{\"make_url\": {\"query\": [1]}}",
                      "The \"query\" argument to \"make_url\" must be a map");
    assert_fails_with("{\"make_url\": {\"scheme\": \"ht:tp\"}}",
                      "URL \"scheme\" should not contain ':'");
    assert_fails("{\"make_url\": {\"query\": {\"a\": [1]}}}",
                 "make_url: query values must be strings, numbers, booleans or null, got [1]");
}

static void test_make_url_is_checked_at_validation(void **state)
{
    (void)state;
    accept_output("pike", "{make_url: {scheme: https, host: {get_param: p}, port: {get_param: p},"
                          " query: {get_param: m}}}");
    reject_output_with("pike", "{make_url: {host: h, prot: 80}}",
                       "Invalid arguments to \"make_url\": prot");
    reject_output_with("pike", "{make_url: {host: h, port: 0}}",
                       "Invalid URL port 0, must be in range 1-65535");
    reject_output_with("pike", "{make_url: {host: h, port: {a: 1}}}",
                       "Invalid URL port \"{'a': 1}\" for make_url called with {'host': 'h', "
                       "'port': {'a': 1}}");
    reject_output_with("pike", "{make_url: {host: [h]}}",
                       "The \"host\" argument to \"make_url\" must be a string");
    reject_output_with("pike", "{make_url: {query: abc}}",
                       "The \"query\" argument to \"make_url\" must be a map");
    reject_output_with("pike", "{make_url: {get_param: m}}",
                       "The arguments to \"make_url\" must be a map");
}

/* Heat's tables add make_url in 2017-09-01: before it the map is data. */
static void test_make_url_before_2017_09_01_is_plain_data(void **state)
{
    (void)state;
    assert_output_is("2017-02-24", "{make_url: {host: h, port: 80}}",
                     "{\"make_url\": {\"host\": \"h\", \"port\": 80}}");
    assert_output_is("2017-09-01", "{make_url: {scheme: http, host: h, port: 80}}",
                     "\"http://h:80\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_make_url_joins_the_parts),
        cmocka_unit_test(test_make_url_brackets_ipv6_hosts),
        cmocka_unit_test(test_make_url_port_may_be_a_number_or_a_numeric_string),
        cmocka_unit_test(test_make_url_with_a_bad_port_is_an_error),
        cmocka_unit_test(test_make_url_escapes_each_part_as_urllib_does),
        cmocka_unit_test(test_make_url_assembles_as_urlunsplit_does),
        cmocka_unit_test(test_make_url_with_wrong_arguments_is_an_error),
        cmocka_unit_test(test_make_url_is_checked_at_validation),
        cmocka_unit_test(test_make_url_before_2017_09_01_is_plain_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
