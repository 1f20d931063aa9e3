/*
 * Specification of the HTTP request head parser, query parameters and
 * listen addresses (proto/base/cv_httpreq.h): what a scraper, a browser and
 * curl send is understood, anything else is refused with a reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_error.h"
#include "cv_httpreq.h"

#include <stdlib.h>
#include <string.h>

static int parse(const char *text, cv_http_req_t *req, char *why)
{
    return cv_httpreq_parse(text, strlen(text), req, why, 256);
}

static void test_a_get_with_headers_is_parsed_up_to_its_empty_line(void **state)
{
    (void)state;
    const char *text = "GET /api/stacks?status=COMPLETE&q=a%20b HTTP/1.1\r\n"
                       "Host: x\r\nAuthorization: Bearer t0k\r\naccept:  text/html \r\n\r\nrest";
    cv_http_req_t req;
    char why[256];
    assert_int_equal(parse(text, &req, why), (int)(strlen(text) - 4));
    assert_string_equal(req.method, "GET");
    assert_string_equal(req.path, "/api/stacks");
    assert_string_equal(req.query, "status=COMPLETE&q=a%20b");
    assert_string_equal(req.authorization, "Bearer t0k");
    assert_string_equal(req.accept, "text/html");
    assert_false(req.http10);
}

static void test_an_incomplete_head_asks_for_more(void **state)
{
    (void)state;
    cv_http_req_t req;
    char why[256];
    assert_int_equal(parse("GET / HTTP/1.1\r\nHost: x\r\n", &req, why), 0);
    assert_int_equal(parse("", &req, why), 0);
}

static void test_lines_ending_in_lf_alone_are_accepted(void **state)
{
    (void)state;
    cv_http_req_t req;
    char why[256];
    const char *text = "HEAD /metrics HTTP/1.0\nLast-Event-ID: 42\n\n";
    assert_int_equal(parse(text, &req, why), (int)strlen(text));
    assert_string_equal(req.method, "HEAD");
    assert_string_equal(req.query, "");
    assert_string_equal(req.last_event_id, "42");
    assert_true(req.http10);
}

static void test_malformed_request_lines_are_refused_with_the_reason(void **state)
{
    (void)state;
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"GET\r\n\r\n", "bad method"},
        {"GET metrics HTTP/1.1\r\n\r\n", "starting with '/'"},
        {"GET / HTTP/2.0\r\n\r\n", "not HTTP/1.0 or 1.1"},
        {"GET /\r\n\r\n", "starting with '/'"},
        {"G(T / HTTP/1.1\r\n\r\n", "bad method"},
        {"GET / HTTP/1.1\r\nno colon here\r\n\r\n", "malformed header line"},
        {"GET / HTTP/1.1\r\n: empty name\r\n\r\n", "malformed header line"},
        {"\r\n\r\n", "empty request"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cv_http_req_t req;
        char why[256] = "";
        assert_int_equal(parse(bad[i].text, &req, why), CV_EPROTO);
        assert_non_null(strstr(why, bad[i].why));
    }
}

static void test_a_head_without_end_within_the_limit_is_too_big(void **state)
{
    (void)state;
    size_t n = CV_HTTP_HEAD_MAX + 10;
    char *text = malloc(n + 1);
    memcpy(text, "GET / HTTP/1.1\r\nX: ", 19);
    memset(text + 19, 'a', n - 19);
    text[n] = '\0';
    cv_http_req_t req;
    char why[256];
    assert_int_equal(cv_httpreq_parse(text, n, &req, why, sizeof(why)), CV_ETOOBIG);
    assert_int_equal(cv_httpreq_parse(text, 100, &req, why, sizeof(why)), 0);
    free(text);
}

static void test_a_kept_header_too_long_for_its_field_is_refused(void **state)
{
    (void)state;
    char text[2048];
    memset(text, 0, sizeof(text));
    strcpy(text, "GET / HTTP/1.1\r\nAuthorization: ");
    memset(text + strlen(text), 'x', 600);
    strcat(text, "\r\n\r\n");
    cv_http_req_t req;
    char why[256];
    assert_int_equal(parse(text, &req, why), CV_EPROTO);
    assert_non_null(strstr(why, "authorization too long"));
}

static void test_query_parameters_are_found_and_decoded(void **state)
{
    (void)state;
    char v[16];
    const char *q = "a=1&name=web+server%2F2&flag&empty=";
    assert_true(cv_httpreq_param(q, "a", v, sizeof(v)));
    assert_string_equal(v, "1");
    assert_true(cv_httpreq_param(q, "name", v, sizeof(v)));
    assert_string_equal(v, "web server/2");
    assert_true(cv_httpreq_param(q, "flag", v, sizeof(v)));
    assert_string_equal(v, "");
    assert_true(cv_httpreq_param(q, "empty", v, sizeof(v)));
    assert_string_equal(v, "");
    assert_false(cv_httpreq_param(q, "nam", v, sizeof(v)));
    assert_false(cv_httpreq_param("", "a", v, sizeof(v)));
}

static void test_bad_or_oversized_values_are_not_returned(void **state)
{
    (void)state;
    char v[4];
    assert_false(cv_httpreq_param("a=%zz", "a", v, sizeof(v)));
    assert_false(cv_httpreq_param("a=%4", "a", v, sizeof(v)));
    assert_false(cv_httpreq_param("a=%00", "a", v, sizeof(v)));
    assert_false(cv_httpreq_param("a=abcd", "a", v, sizeof(v)));
    assert_true(cv_httpreq_param("a=abc", "a", v, sizeof(v)));
    assert_true(cv_httpreq_unescape("a+%41", 5, v, sizeof(v)));
    assert_string_equal(v, "a+A");
}

static void test_listen_addresses_are_split_or_refused(void **state)
{
    (void)state;
    char host[64], err[256];
    int port;
    assert_int_equal(cv_httpreq_addr("127.0.0.1:9100", host, sizeof(host), &port, err, 256), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 9100);
    assert_int_equal(cv_httpreq_addr("[::1]:0", host, sizeof(host), &port, err, 256), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 0);
    assert_int_equal(cv_httpreq_addr(":8080", host, sizeof(host), &port, err, 256), 0);
    assert_string_equal(host, "0.0.0.0");
    assert_int_equal(cv_httpreq_addr("localhost:1", host, sizeof(host), &port, err, 256), 0);
    assert_string_equal(host, "localhost");
    static const char *bad[] = {"9100", "host:", "host:x", "host:65536", "::1:80", "h:-1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(cv_httpreq_addr(bad[i], host, sizeof(host), &port, err, 256), CV_EINVAL);
        assert_non_null(strstr(err, bad[i]));
    }
}

static void test_a_query_that_does_not_decode_is_malformed(void **state)
{
    (void)state;
    char why[256];
    assert_int_equal(cv_httpreq_query_check("", why, sizeof(why)), 0);
    assert_int_equal(cv_httpreq_query_check("status=COMPLETE&name=a%2Ab+c&flag", why, 256), 0);
    static const char *bad[] = {"status=%ZZ", "after=%", "name=a%00b", "%zz=1", "limit=5&x=%4"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        assert_int_equal(cv_httpreq_query_check(bad[i], why, sizeof(why)), CV_EPROTO);
        assert_non_null(strstr(why, "malformed query"));
    }
    /* the parameter at fault is named */
    cv_httpreq_query_check("limit=5&after=%G1", why, sizeof(why));
    assert_non_null(strstr(why, "after"));
}

static void test_only_loopback_hosts_are_loopback(void **state)
{
    (void)state;
    static const char *loopback[] = {"127.0.0.1", "127.1.2.3", "::1", "localhost"};
    for (size_t i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
        assert_true(cv_httpreq_host_is_loopback(loopback[i]));
    static const char *open[] = {"0.0.0.0",    "::",          "10.0.0.1",    "128.0.0.1",
                                 "127.0.0.1x", "127.0.0.256", "example.com", ""};
    for (size_t i = 0; i < sizeof(open) / sizeof(open[0]); i++)
        assert_false(cv_httpreq_host_is_loopback(open[i]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_get_with_headers_is_parsed_up_to_its_empty_line),
        cmocka_unit_test(test_an_incomplete_head_asks_for_more),
        cmocka_unit_test(test_lines_ending_in_lf_alone_are_accepted),
        cmocka_unit_test(test_malformed_request_lines_are_refused_with_the_reason),
        cmocka_unit_test(test_a_head_without_end_within_the_limit_is_too_big),
        cmocka_unit_test(test_a_kept_header_too_long_for_its_field_is_refused),
        cmocka_unit_test(test_query_parameters_are_found_and_decoded),
        cmocka_unit_test(test_bad_or_oversized_values_are_not_returned),
        cmocka_unit_test(test_listen_addresses_are_split_or_refused),
        cmocka_unit_test(test_a_query_that_does_not_decode_is_malformed),
        cmocka_unit_test(test_only_loopback_hosts_are_loopback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
