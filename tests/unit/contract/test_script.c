/*
 * Specification of the script table (proto/contract/cv_script.def): every row agrees
 * with its script in proto/lua — the KEYS and ARGV it reads, the names its
 * header comment lists, the answers it gives — so that the table and the
 * scripts cannot drift apart; and answers are read per script.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_script.h"
#include "test_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* proto/lua/<name>.lua, NUL-terminated; a missing script fails the test. */
static char *read_script(cv_script_t s)
{
    char name[128];
    size_t len;
    snprintf(name, sizeof(name), "%s.lua", cv_script_name(s));
    return tu_read_data("../../proto/lua", name, &len);
}

/* The highest n of `array[n]` written with a literal index. */
static size_t highest_index(const char *text, const char *array)
{
    size_t highest = 0, len = strlen(array);
    for (const char *p = strstr(text, array); p; p = strstr(p + 1, array)) {
        if (p[len] != '[' || !isdigit((unsigned char)p[len + 1]))
            continue;
        char *end;
        size_t n = strtoul(p + len + 1, &end, 10);
        if (*end == ']' && n > highest)
            highest = n;
    }
    return highest;
}

/* The "N name" items of the header block that starts with `-- TAG:` and
 * goes on over continuation lines ("--" and three or more spaces). */
typedef struct header {
    size_t n;
    char names[32][64];
} header_t;

static void read_header(const char *text, const char *tag, header_t *h, const char *script)
{
    char start[16];
    snprintf(start, sizeof(start), "-- %s:", tag);
    const char *p = strstr(text, start);
    if (!p)
        fail_msg("script %s: no '%s' line in its header", script, start);
    h->n = 0;
    p += strlen(start);
    for (;;) {
        const char *eol = strchr(p, '\n');
        size_t linelen = eol ? (size_t)(eol - p) : strlen(p);
        for (const char *q = p; q < p + linelen;) {
            if (isdigit((unsigned char)*q) && (q == p || !isalnum((unsigned char)q[-1]))) {
                char *end;
                size_t idx = strtoul(q, &end, 10);
                if (*end == ' ' && (islower((unsigned char)end[1]) || end[1] == '_')) {
                    const char *w = end + 1;
                    size_t wl = 0;
                    while (w[wl] == '_' || islower((unsigned char)w[wl]) ||
                           isdigit((unsigned char)w[wl]))
                        wl++;
                    if (idx != h->n + 1)
                        fail_msg("script %s: %s item %zu is numbered %zu", script, tag, h->n + 1,
                                 idx);
                    assert_true(h->n < 32 && wl < 64);
                    memcpy(h->names[h->n], w, wl);
                    h->names[h->n][wl] = '\0';
                    h->n++;
                    q = w + wl;
                    continue;
                }
            }
            q++;
        }
        if (!eol || strncmp(eol + 1, "--   ", 5) != 0)
            return;
        p = eol + 1;
    }
}

static void test_every_row_reads_exactly_its_keys_and_arguments(void **state)
{
    (void)state;
    for (int i = 0; i < CV_SCRIPT__COUNT; i++) {
        cv_script_t s = (cv_script_t)i;
        char *text = read_script(s);
        size_t keys = highest_index(text, "KEYS"), args = highest_index(text, "ARGV");
        if (keys != cv_script_nkeys(s))
            fail_msg("script %s reads KEYS[%zu] at most; its row has %zu keys", cv_script_name(s),
                     keys, cv_script_nkeys(s));
        if (args != cv_script_nargs(s))
            fail_msg("script %s reads ARGV[%zu] at most; its row has %zu arguments",
                     cv_script_name(s), args, cv_script_nargs(s));
        free(text);
    }
}

static void check_header_names(cv_script_t s, const char *text, const char *tag, size_t count,
                               const char *(*name)(cv_script_t, size_t))
{
    header_t h;
    read_header(text, tag, &h, cv_script_name(s));
    if (h.n != count)
        fail_msg("script %s: its header lists %zu %s; its row has %zu", cv_script_name(s), h.n, tag,
                 count);
    for (size_t k = 0; k < count; k++)
        if (strcmp(h.names[k], name(s, k)) != 0)
            fail_msg("script %s: %s %zu is \"%s\" in its header, \"%s\" in its row",
                     cv_script_name(s), tag, k + 1, h.names[k], name(s, k));
}

static void test_every_header_lists_the_row_names_in_order(void **state)
{
    (void)state;
    for (int i = 0; i < CV_SCRIPT__COUNT; i++) {
        cv_script_t s = (cv_script_t)i;
        char *text = read_script(s);
        check_header_names(s, text, "KEYS", cv_script_nkeys(s), cv_script_key_name);
        check_header_names(s, text, "ARGV", cv_script_nargs(s), cv_script_arg_name);
        free(text);
    }
}

static void test_variadic_rows_say_so_in_their_header(void **state)
{
    (void)state;
    for (int i = 0; i < CV_SCRIPT__COUNT; i++) {
        cv_script_t s = (cv_script_t)i;
        char *text = read_script(s);
        bool says = strstr(text, "-- Variadic:") != NULL;
        if (says != cv_script_variadic(s))
            fail_msg("script %s: its row is %svariadic, its header %s", cv_script_name(s),
                     cv_script_variadic(s) ? "" : "not ", says ? "says it is" : "does not say so");
        free(text);
    }
}

/* Every {'WORD' the script writes is an answer of its row, and every answer
 * of the row is written so. */
static void test_every_answer_is_in_its_row_and_back(void **state)
{
    (void)state;
    for (int i = 0; i < CV_SCRIPT__COUNT; i++) {
        cv_script_t s = (cv_script_t)i;
        char *text = read_script(s);
        for (const char *p = strstr(text, "{'"); p; p = strstr(p + 1, "{'")) {
            const char *w = p + 2;
            size_t n = 0;
            while (isupper((unsigned char)w[n]) || w[n] == '_')
                n++;
            if (n == 0 || w[n] != '\'')
                continue;
            char word[32];
            assert_true(n < sizeof(word));
            memcpy(word, w, n);
            word[n] = '\0';
            cv_answer_t a = cv_script_answer(s, word);
            if (a == CV_ANSWER_INVALID)
                fail_msg("script %s answers '%s', which its row does not list", cv_script_name(s),
                         word);
            assert_string_equal(cv_answer_name(a), word);
        }
        for (const cv_answer_t *a = cv_script_answers(s); *a != CV_ANSWER_INVALID; a++) {
            char quoted[40];
            snprintf(quoted, sizeof(quoted), "{'%s'", cv_answer_name(*a));
            if (!strstr(text, quoted))
                fail_msg("the row of %s lists %s, which the script never answers",
                         cv_script_name(s), cv_answer_name(*a));
        }
        free(text);
    }
}

static void test_script_names_are_unique(void **state)
{
    (void)state;
    for (int i = 0; i < CV_SCRIPT__COUNT; i++)
        for (int j = i + 1; j < CV_SCRIPT__COUNT; j++)
            assert_string_not_equal(cv_script_name((cv_script_t)i), cv_script_name((cv_script_t)j));
}

static void test_field_names_are_unique_within_a_row(void **state)
{
    (void)state;
    for (int i = 0; i < CV_SCRIPT__COUNT; i++) {
        cv_script_t s = (cv_script_t)i;
        for (size_t a = 0; a < cv_script_nkeys(s); a++)
            for (size_t b = a + 1; b < cv_script_nkeys(s); b++)
                assert_string_not_equal(cv_script_key_name(s, a), cv_script_key_name(s, b));
        for (size_t a = 0; a < cv_script_nargs(s); a++)
            for (size_t b = a + 1; b < cv_script_nargs(s); b++)
                assert_string_not_equal(cv_script_arg_name(s, a), cv_script_arg_name(s, b));
    }
}

static void test_a_word_of_another_script_is_not_an_answer(void **state)
{
    (void)state;
    assert_int_equal(cv_script_answer(CV_SCRIPT_CHECK_FINISH, "FENCED"), CV_ANSWER_FENCED);
    assert_int_equal(cv_script_answer(CV_SCRIPT_CHECK_FINISH, "BUSY"), CV_ANSWER_INVALID);
    assert_int_equal(cv_script_answer(CV_SCRIPT_STACK_EXPANDED, "FENCED"), CV_ANSWER_INVALID);
    assert_int_equal(cv_script_answer(CV_SCRIPT_NODE_DONE, "ok"), CV_ANSWER_INVALID);
    assert_int_equal(cv_script_answer(CV_SCRIPT_NODE_DONE, ""), CV_ANSWER_INVALID);
    assert_int_equal(cv_script_answer(CV_SCRIPT_NODE_DONE, NULL), CV_ANSWER_INVALID);
    assert_int_equal(cv_script_answer(CV_SCRIPT_LEASE_RENEW, "OK"), CV_ANSWER_INVALID);
}

static void test_keys_and_args_are_filled_by_name(void **state)
{
    (void)state;
    cv_check_begin_keys_t k = {.stack = "s", .publishing = "p"};
    assert_int_equal(CV_CHECK_BEGIN_NKEYS, cv_script_nkeys(CV_SCRIPT_CHECK_BEGIN));
    assert_string_equal(k.v[0], "s");
    assert_string_equal(k.v[CV_CHECK_BEGIN_NKEYS - 1], "p");
    assert_null(k.v[1]);
    assert_null(k.v[CV_CHECK_BEGIN_NKEYS]);
    cv_node_done_args_t a = {.publishing = "1"};
    assert_string_equal(a.v[CV_NODE_DONE_NARGS - 1], "1");
    assert_true(cv_script_variadic(CV_SCRIPT_NODE_DONE));
    assert_false(cv_script_variadic(CV_SCRIPT_NODE_FAILED));
}

static void test_stack_begin_arguments_are_built_once_for_every_caller(void **state)
{
    (void)state;
    cv_stack_begin_t b = {.kind = 2, .stack = "abc", .name = "web", .rollback = "0"};
    cv_stack_begin_args_t a;
    cv_script_stack_begin_args(&a, &b, "convergectl");
    assert_string_equal(a.kind, "DELETE");
    assert_string_equal(a.id, "abc");
    assert_string_equal(a.name, "web");
    assert_string_equal(a.client, "convergectl");
    assert_string_equal(a.rollback, "0");
    assert_string_equal(a.rerun, "");
    for (size_t i = 0; i < CV_STACK_BEGIN_NARGS; i++)
        assert_non_null(a.v[i]); /* nothing left out: "" where b has nothing */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_reads_exactly_its_keys_and_arguments),
        cmocka_unit_test(test_every_header_lists_the_row_names_in_order),
        cmocka_unit_test(test_variadic_rows_say_so_in_their_header),
        cmocka_unit_test(test_every_answer_is_in_its_row_and_back),
        cmocka_unit_test(test_script_names_are_unique),
        cmocka_unit_test(test_field_names_are_unique_within_a_row),
        cmocka_unit_test(test_a_word_of_another_script_is_not_an_answer),
        cmocka_unit_test(test_keys_and_args_are_filled_by_name),
        cmocka_unit_test(test_stack_begin_arguments_are_built_once_for_every_caller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
