/*
 * A CLUSTER SLOTS entry as the Redis Cluster clients read it
 * (cv__redis_slot_range, proto/io/cv_redis_shared.c), on replies parsed
 * from the protocol text a Redis 7 sends.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv__redis.h"

#include <hiredis/hiredis.h>
#include <string.h>

static redisReply *parse(const char *resp)
{
    redisReader *r = redisReaderCreate();
    assert_non_null(r);
    assert_int_equal(REDIS_OK, redisReaderFeed(r, resp, strlen(resp)));
    void *reply = NULL;
    assert_int_equal(REDIS_OK, redisReaderGetReply(r, &reply));
    redisReaderFree(r);
    assert_non_null(reply);
    return reply;
}

static void test_a_range_gives_its_slots_and_master(void **state)
{
    (void)state;
    /* [0, 5460, [127.0.0.1, 7000, id], [127.0.0.1, 7004, id]] */
    redisReply *e = parse("*4\r\n:0\r\n:5460\r\n"
                          "*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n"
                          "*3\r\n$9\r\n127.0.0.1\r\n:7004\r\n$2\r\nix\r\n");
    long long lo, hi, port;
    const char *host;
    assert_true(cv__redis_slot_range(e, "seed", &lo, &hi, &host, &port));
    assert_int_equal(0, lo);
    assert_int_equal(5460, hi);
    assert_string_equal("127.0.0.1", host);
    assert_int_equal(7000, port);
    freeReplyObject(e);
}

static void test_an_empty_host_is_the_node_that_answered(void **state)
{
    (void)state;
    redisReply *e = parse("*3\r\n:100\r\n:100\r\n*2\r\n$0\r\n\r\n:7001\r\n");
    long long lo, hi, port;
    const char *host;
    assert_true(cv__redis_slot_range(e, "10.0.0.9", &lo, &hi, &host, &port));
    assert_string_equal("10.0.0.9", host);
    assert_int_equal(100, lo);
    assert_int_equal(100, hi);
    freeReplyObject(e);
}

static void test_malformed_entries_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        ":1\r\n",                                         /* not an array */
        "*2\r\n:0\r\n:1\r\n",                             /* no master */
        "*3\r\n:5\r\n:4\r\n*2\r\n$1\r\nh\r\n:1\r\n",      /* start after end */
        "*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\nh\r\n:1\r\n",  /* past the last slot */
        "*3\r\n:0\r\n:1\r\n*2\r\n$1\r\nh\r\n:0\r\n",      /* port 0 */
        "*3\r\n:0\r\n:1\r\n*2\r\n:7\r\n:1\r\n",           /* host not a string */
        "*3\r\n$1\r\n0\r\n:1\r\n*2\r\n$1\r\nh\r\n:1\r\n", /* start not an integer */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        redisReply *e = parse(bad[i]);
        long long lo, hi, port;
        const char *host;
        assert_false(cv__redis_slot_range(e, "seed", &lo, &hi, &host, &port));
        freeReplyObject(e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_range_gives_its_slots_and_master),
        cmocka_unit_test(test_an_empty_host_is_the_node_that_answered),
        cmocka_unit_test(test_malformed_entries_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
