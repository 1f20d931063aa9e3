/*
 * Redis Cluster's key slots (proto/contract/cv_slot.h): the values are what
 * `redis-cli CLUSTER KEYSLOT` answers for the same keys (Redis 7.0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_slot.h"

#include <string.h>

static unsigned slot_of(const char *k)
{
    return cv_slot(k, strlen(k));
}

static void test_slots_match_what_redis_answers(void **state)
{
    (void)state;
    assert_int_equal(12739, slot_of("123456789"));
    assert_int_equal(3443, slot_of("{user1000}.following"));
    assert_int_equal(10765, slot_of("cv:worker:engine-1"));
    assert_int_equal(9440, slot_of("cv:stacks"));
    assert_int_equal(14041, slot_of("cv:{cluster}:crm"));
    assert_int_equal(0, slot_of(""));
}

static void test_only_the_first_non_empty_hash_tag_counts(void **state)
{
    (void)state;
    assert_int_equal(slot_of("user1000"), slot_of("{user1000}.followers"));
    assert_int_equal(slot_of("{user1000}.following"), slot_of("{user1000}.followers"));
    assert_int_equal(8363, slot_of("foo{}{bar}"));    /* empty tag: the whole key */
    assert_int_equal(4015, slot_of("foo{{bar}}zap")); /* the tag is "{bar" */
    assert_int_equal(5061, slot_of("foo{bar}{zap}")); /* the first tag only */
    assert_int_equal(slot_of("cv:{cluster}:crm"), slot_of("x{cluster}"));
    assert_int_equal(slot_of("a{b"), cv_slot("a{b", 3)); /* no closing brace: the whole key */
}

static void test_keys_of_one_stack_share_a_slot_and_others_do_not(void **state)
{
    (void)state;
    const char *one[] = {"cv:{ab12}:stack", NULL, "cv:{ab12}:res:web", "cv:{ab12}:lease:web"};
    assert_int_equal((int)slot_of("ab12"), cv_slot_common(one, 4));
    const char *two[] = {"cv:{ab12}:stack", "cv:stacks"};
    assert_int_equal(-1, cv_slot_common(two, 2));
    assert_int_equal(0, cv_slot_common(NULL, 0));
}

static void test_the_routing_key_of_a_command(void **state)
{
    (void)state;
    const char *hget[] = {"HGET", "cv:{s}:stack", "status"};
    assert_int_equal(1, cv_slot_key_index(3, hget));
    const char *eval[] = {"EVALSHA", "abc", "2", "cv:{s}:stack", "cv:{s}:def", "x"};
    assert_int_equal(3, cv_slot_key_index(6, eval));
    const char *nokeys[] = {"EVALSHA", "abc", "0", "x"};
    assert_int_equal(-1, cv_slot_key_index(4, nokeys));
    const char *ping[] = {"PING"}, *time[] = {"time"}, *load[] = {"SCRIPT", "LOAD", "x"},
               *publish[] = {"PUBLISH", "ch", "m"};
    assert_int_equal(-1, cv_slot_key_index(1, ping));
    assert_int_equal(-1, cv_slot_key_index(1, time));
    assert_int_equal(-1, cv_slot_key_index(3, load));
    assert_int_equal(-1, cv_slot_key_index(3, publish));
}

static void test_moved_and_ask_are_parsed_and_other_errors_are_not(void **state)
{
    (void)state;
    cv_slot_redirect_t r;
    assert_int_equal(0, cv_slot_redirect_parse("MOVED 3999 127.0.0.1:6381", &r));
    assert_int_equal(0, r.ask);
    assert_int_equal(3999, r.slot);
    assert_string_equal("127.0.0.1", r.host);
    assert_int_equal(6381, r.port);
    assert_int_equal(0, cv_slot_redirect_parse("ASK 12 ::1:7000", &r));
    assert_int_equal(1, r.ask);
    assert_string_equal("::1", r.host);
    assert_int_equal(7000, r.port);
    assert_int_equal(-1, cv_slot_redirect_parse("ERR unknown command", &r));
    assert_int_equal(-1, cv_slot_redirect_parse("MOVED 16384 h:1", &r));
    assert_int_equal(-1, cv_slot_redirect_parse("MOVED 1 h", &r));
    assert_int_equal(-1, cv_slot_redirect_parse("MOVED 1 h:0", &r));
    assert_int_equal(-1, cv_slot_redirect_parse("MOVED 1 :5", &r));
    assert_int_equal(-1, cv_slot_redirect_parse(NULL, &r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots_match_what_redis_answers),
        cmocka_unit_test(test_only_the_first_non_empty_hash_tag_counts),
        cmocka_unit_test(test_keys_of_one_stack_share_a_slot_and_others_do_not),
        cmocka_unit_test(test_the_routing_key_of_a_command),
        cmocka_unit_test(test_moved_and_ask_are_parsed_and_other_errors_are_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
