/*
 * Specification of the keyspace (proto/contract/cv_keys.h): every key kind formats
 * as its documented pattern, prefixes name the keys a script completes
 * itself, and docs/keyspace.md — the operator's view — lists every kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_keys.h"
#include "cv_msg.h"
#include "cv_base.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pattern with <stack> = "S", <traversal> = 7 and any other
 * placeholder = "N", as the test expects cv_key to fill it. */
static void expected(char *buf, size_t size, const char *prefix, const char *pattern)
{
    snprintf(buf, size, "%s", prefix);
    for (const char *p = pattern; *p;) {
        const char *end = *p == '<' ? strchr(p, '>') : NULL;
        size_t n = strlen(buf);
        if (!end) {
            snprintf(buf + n, size - n, "%c", *p++);
            continue;
        }
        const char *with = strncmp(p, "<stack>", 7) == 0        ? "S"
                           : strncmp(p, "<traversal>", 11) == 0 ? "7"
                                                                : "N";
        snprintf(buf + n, size - n, "%s", with);
        p = end + 1;
    }
}

static void test_every_kind_formats_as_its_pattern(void **state)
{
    (void)state;
    cv_keys_set_prefix("cv:");
    for (int i = 0; i < CV_KEY__COUNT; i++) {
        char key[CV_KEY_MAX], want[CV_KEY_MAX];
        cv_key(key, sizeof(key), (cv_key_kind_t)i, "S", 7, "N");
        expected(want, sizeof(want), "cv:", cv_key_pattern((cv_key_kind_t)i));
        assert_string_equal(key, want);
    }
}

static void test_known_keys_read_as_documented(void **state)
{
    (void)state;
    char k[CV_KEY_MAX];
    cv_keys_set_prefix("cv:");
    cv_key(k, sizeof(k), CV_KEY_RES, "abc", 0, "web");
    assert_string_equal(k, "cv:{abc}:res:web");
    cv_key(k, sizeof(k), CV_KEY_SP, "abc", 7, "u/web");
    assert_string_equal(k, "cv:{abc}:sp:7:u/web");
    cv_key(k, sizeof(k), CV_KEY_GRAPH_DRAFT, "abc", 3, "engine-1:9");
    assert_string_equal(k, "cv:{abc}:graph:3:draft:engine-1:9");
    cv_key(k, sizeof(k), CV_KEY_WORKER, NULL, 0, "engine-1");
    assert_string_equal(k, "cv:worker:engine-1");
    cv_key(k, sizeof(k), CV_KEY_REAPER, NULL, 0, NULL);
    assert_string_equal(k, "cv:reaper");
}

static void test_the_prefix_applies_to_every_kind(void **state)
{
    (void)state;
    assert_int_equal(cv_keys_set_prefix("x:"), 0);
    for (int i = 0; i < CV_KEY__COUNT; i++) {
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), (cv_key_kind_t)i, "S", 7, "N");
        assert_int_equal(strncmp(key, "x:", 2), 0);
    }
    cv_keys_set_prefix("cv:");
}

static void test_a_key_prefix_and_a_name_make_the_key(void **state)
{
    (void)state;
    cv_keys_set_prefix("cv:");
    static const cv_key_kind_t named[] = {CV_KEY_RES, CV_KEY_LEASE, CV_KEY_SP, CV_KEY_WORKER};
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
        char prefix[CV_KEY_MAX], whole[CV_KEY_MAX + 8], key[CV_KEY_MAX];
        cv_key_prefix(prefix, sizeof(prefix), named[i], "S", 7);
        snprintf(whole, sizeof(whole), "%su/web", prefix);
        cv_key(key, sizeof(key), named[i], "S", 7, "u/web");
        assert_string_equal(whole, key);
    }
    char prefix[CV_KEY_MAX];
    cv_key_prefix(prefix, sizeof(prefix), CV_KEY_SP, "abc", 12);
    assert_string_equal(prefix, "cv:{abc}:sp:12:");
}

static void test_stack_keys_share_the_stack_hash_tag(void **state)
{
    (void)state;
    for (int i = 0; i < CV_KEY__COUNT; i++) {
        const char *pattern = cv_key_pattern((cv_key_kind_t)i);
        if (strstr(pattern, "<stack>"))
            assert_int_equal(strncmp(pattern, "{<stack>}:", 10), 0);
    }
}

static void test_traversals_and_node_names_are_written_in_full(void **state)
{
    (void)state;
    char k[CV_KEY_MAX], n[8], d[CV_U64_DIGITS + 1];
    cv_key(k, sizeof(k), CV_KEY_SP, "s1", UINT64_MAX, "u/a");
    assert_non_null(strstr(k, ":18446744073709551615:"));
    cv_key(k, sizeof(k), CV_KEY_SP, "s1", 0, "u/a");
    assert_non_null(strstr(k, ":0:"));
    assert_int_equal(cv_u64_str(d, 1000), 4);
    assert_string_equal(d, "1000");
    assert_int_equal(cv_node_name(n, sizeof(n), CV_PHASE_CLEANUP, "abc"), 5);
    assert_string_equal(n, "c/abc");
    assert_int_equal(cv_node_name(n, sizeof(n), CV_PHASE_UPDATE, "abcdefgh"), 7);
    assert_string_equal(n, "u/abcde"); /* cut to the buffer, terminated */
}

static void test_long_keys_are_truncated_not_overflowed(void **state)
{
    (void)state;
    char k[16];
    size_t n = cv_key(k, sizeof(k), CV_KEY_SP, "0123456789abcdef", 7, "u/web");
    assert_int_equal(n, sizeof(k) - 1);
    assert_int_equal(strlen(k), sizeof(k) - 1);
    n = cv_key_prefix(k, sizeof(k), CV_KEY_SP, "0123456789abcdef", 7);
    assert_int_equal(n, sizeof(k) - 1);
}

static void test_the_keyspace_document_lists_every_kind(void **state)
{
    (void)state;
    size_t len;
    char *doc = tu_read_data("../../docs", "keyspace.md", &len);
    for (int i = 0; i < CV_KEY__COUNT; i++) {
        char quoted[128];
        snprintf(quoted, sizeof(quoted), "`%s`", cv_key_pattern((cv_key_kind_t)i));
        if (!strstr(doc, quoted))
            fail_msg("docs/keyspace.md does not list the key %s", quoted);
    }
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_formats_as_its_pattern),
        cmocka_unit_test(test_known_keys_read_as_documented),
        cmocka_unit_test(test_the_prefix_applies_to_every_kind),
        cmocka_unit_test(test_a_key_prefix_and_a_name_make_the_key),
        cmocka_unit_test(test_stack_keys_share_the_stack_hash_tag),
        cmocka_unit_test(test_traversals_and_node_names_are_written_in_full),
        cmocka_unit_test(test_long_keys_are_truncated_not_overflowed),
        cmocka_unit_test(test_the_keyspace_document_lists_every_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
