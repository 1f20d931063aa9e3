/*
 * The live glue's one piece of parsing: a HGETALL reply becomes the object
 * of strings the planner's model holds (scheduler/live/live_read.c). The
 * rest of the glue is I/O, tested by tests/integration/test_live.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "live_internal.h"

#include <string.h>

static redisReply *str(const char *s)
{
    static redisReply r[8];
    static int n;
    redisReply *e = &r[n++ % 8];
    memset(e, 0, sizeof(*e));
    e->type = REDIS_REPLY_STRING;
    e->str = (char *)s;
    e->len = strlen(s);
    return e;
}

static void test_field_value_pairs_become_an_object_of_strings(void **state)
{
    (void)state;
    redisReply *elems[] = {str("admin"), str("draining"), str("fence_ms"), str("5000")};
    redisReply arr = {.type = REDIS_REPLY_ARRAY, .elements = 4, .element = elems};
    json_t *o = cv__live_pairs(&arr);
    assert_int_equal(json_object_size(o), 2);
    assert_string_equal(json_string_value(json_object_get(o, "admin")), "draining");
    assert_string_equal(json_string_value(json_object_get(o, "fence_ms")), "5000");
    json_decref(o);
}

static void test_a_missing_key_or_odd_reply_is_an_empty_object(void **state)
{
    (void)state;
    redisReply *elems[] = {str("lonely")};
    redisReply arr = {.type = REDIS_REPLY_ARRAY, .elements = 1, .element = elems};
    redisReply nil = {.type = REDIS_REPLY_NIL};
    json_t *a = cv__live_pairs(&arr), *b = cv__live_pairs(&nil), *c = cv__live_pairs(NULL);
    assert_int_equal(json_object_size(a) + json_object_size(b) + json_object_size(c), 0);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_value_pairs_become_an_object_of_strings),
        cmocka_unit_test(test_a_missing_key_or_odd_reply_is_an_empty_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
