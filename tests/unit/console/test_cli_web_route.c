/*
 * Specification of converge-web's routes and bearer token (cli/console/web_route.h):
 * every page and API path is matched with its names decoded, a bad name is
 * a 400 naming it, an unknown path a 404, and the token is required exactly
 * when one is set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "test_util.h"
#include "web_route.h"

static int match(const char *path, web_route_t *r, char *why)
{
    return web_route_match(path, r, why, 256);
}

static void test_stack_routes_decode_the_stack_name(void **state)
{
    (void)state;
    web_route_t r;
    char why[256];
    assert_int_equal(match("/api/stacks/my-stack.1", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_STACK);
    assert_string_equal(r.stack, "my-stack.1");
    assert_int_equal(match("/api/stacks/a%2Db/graph", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_STACK_GRAPH);
    assert_string_equal(r.stack, "a-b");
    assert_int_equal(match("/api/stacks/s/resources", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_STACK_RESOURCES);
    assert_int_equal(match("/api/stacks/s/events", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_STACK_EVENTS);
    assert_int_equal(match("/api/stacks/s/stream", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_STACK_STREAM);
}

static void test_fixed_api_paths_are_matched(void **state)
{
    (void)state;
    web_route_t r;
    char why[256];
    assert_int_equal(match("/api/stacks", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_STACKS);
    assert_int_equal(match("/api/cluster", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_CLUSTER);
    assert_int_equal(match("/api/dead", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_DEAD);
}

static void test_a_service_route_names_its_stack_and_resource(void **state)
{
    (void)state;
    web_route_t r;
    char why[256];
    assert_int_equal(match("/api/services/web/my%20svc", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_SERVICE);
    assert_string_equal(r.stack, "web");
    assert_string_equal(r.service, "my svc");
    assert_int_equal(match("/api/services/web", &r, why), CV_ENOENT);
    assert_int_equal(match("/api/services/web/a/b", &r, why), CV_ENOENT);
}

static void test_a_bad_name_is_refused_with_its_text(void **state)
{
    (void)state;
    web_route_t r;
    char why[256];
    assert_int_equal(match("/api/stacks/a%20b", &r, why), CV_EINVAL);
    assert_contains(why, "bad stack name 'a%20b'");
    assert_int_equal(match("/api/stacks/%zz", &r, why), CV_EINVAL);
    assert_int_equal(match("/api/services/s/a%0Ab", &r, why), CV_EINVAL);
    assert_contains(why, "service");
}

static void test_unknown_paths_are_not_found(void **state)
{
    (void)state;
    web_route_t r;
    char why[256];
    assert_int_equal(match("/api/stacks/s/nope", &r, why), CV_ENOENT);
    assert_int_equal(match("/api/nodes", &r, why), CV_ENOENT);
    assert_int_equal(match("/a/b.js", &r, why), CV_ENOENT);
    assert_int_equal(match("/../etc/passwd", &r, why), CV_ENOENT);
    assert_int_equal(match("/.hidden", &r, why), CV_ENOENT);
}

static void test_the_root_is_the_index_page(void **state)
{
    (void)state;
    web_route_t r;
    char why[256];
    assert_int_equal(match("/", &r, why), 0);
    assert_int_equal(r.kind, WEB_ROUTE_ASSET);
    assert_string_equal(r.asset, "/index.html");
    assert_int_equal(match("/app.js", &r, why), 0);
    assert_string_equal(r.asset, "/app.js");
}

static void test_without_a_token_every_request_is_authorized(void **state)
{
    (void)state;
    assert_true(web_route_authorized("", "", ""));
    assert_true(web_route_authorized("", "Bearer x", "token=y"));
}

static void test_with_a_token_the_header_or_the_query_must_carry_it(void **state)
{
    (void)state;
    assert_true(web_route_authorized("s3cret", "Bearer s3cret", ""));
    assert_true(web_route_authorized("s3cret", "", "a=1&token=s3cret"));
    assert_false(web_route_authorized("s3cret", "", ""));
    assert_false(web_route_authorized("s3cret", "Bearer s3cre", ""));
    assert_false(web_route_authorized("s3cret", "Bearer s3cretx", ""));
    assert_false(web_route_authorized("s3cret", "Basic s3cret", ""));
    assert_false(web_route_authorized("s3cret", "Bearer ", "token="));
}

static void test_an_events_after_outside_redis_ids_is_refused(void **state)
{
    (void)state;
    web_route_t r = {.kind = WEB_ROUTE_STACK_EVENTS};
    char why[256];
    static const char *ok[] = {"", "after=1712345678901-0", "after=0-0",
                               "after=18446744073709551615-18446744073709551614"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        assert_int_equal(web_route_check_query(&r, ok[i], why, sizeof(why)), 0);
    static const char *bad[] = {"after=99999999999999999999-0",
                                "after=1-18446744073709551616",
                                "after=18446744073709551615-18446744073709551615",
                                "after=1",
                                "after=1-2-3",
                                "after=-1-0",
                                "after=x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        assert_int_equal(web_route_check_query(&r, bad[i], why, sizeof(why)), CV_EINVAL);
        assert_non_null(strstr(why, "after"));
    }
    r.kind = WEB_ROUTE_STACKS; /* only the events read `after` */
    assert_int_equal(web_route_check_query(&r, "after=x", why, sizeof(why)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stack_routes_decode_the_stack_name),
        cmocka_unit_test(test_fixed_api_paths_are_matched),
        cmocka_unit_test(test_a_service_route_names_its_stack_and_resource),
        cmocka_unit_test(test_a_bad_name_is_refused_with_its_text),
        cmocka_unit_test(test_unknown_paths_are_not_found),
        cmocka_unit_test(test_the_root_is_the_index_page),
        cmocka_unit_test(test_without_a_token_every_request_is_authorized),
        cmocka_unit_test(test_with_a_token_the_header_or_the_query_must_carry_it),
        cmocka_unit_test(test_an_events_after_outside_redis_ids_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
