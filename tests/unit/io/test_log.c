/*
 * Specification of the log line encoder (proto/io/cv_log.h): the JSON
 * format's keys and their order, escaping of every byte so that each line
 * is valid JSON, cutting of long messages at character boundaries, the
 * text format as it always was, level filtering and the log options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_log.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1970-01-01T00:00:00.123Z */
#define T0 0.1234

/* Formats `msg` as JSON in a buffer of `size` and parses the line, which
 * must be one line ending in '\n' and valid JSON (jansson refuses invalid
 * UTF-8 and raw control characters in strings). */
static json_t *json_line(size_t size, const char *msg)
{
    char *buf = malloc(size);
    size_t n = cv_log_format(buf, size, CV_LOG_JSON, T0, CV_LOG_INFO, "engine", "engine-h-1", msg);
    assert_true(n < size);
    assert_int_equal(strlen(buf), n);
    assert_true(n > 0 && buf[n - 1] == '\n');
    assert_null(memchr(buf, '\n', n - 1));
    json_error_t err;
    json_t *v = json_loadb(buf, n, 0, &err);
    if (!v)
        fail_msg("not JSON (%s): %s", err.text, buf);
    free(buf);
    return v;
}

static const char *msg_of(const json_t *v)
{
    return json_string_value(json_object_get(v, "msg"));
}

static void test_a_json_line_has_the_five_keys_in_order(void **state)
{
    (void)state;
    char buf[CV_LOG_LINE_MAX];
    cv_log_format(buf, sizeof(buf), CV_LOG_JSON, T0, CV_LOG_WARN, "observer", "obs-1", "hello");
    assert_string_equal(buf, "{\"time\":\"1970-01-01T00:00:00.123Z\",\"level\":\"warn\","
                             "\"process\":\"observer\",\"id\":\"obs-1\",\"msg\":\"hello\"}\n");
}

static void test_the_text_line_is_time_level_id_message(void **state)
{
    (void)state;
    char buf[CV_LOG_LINE_MAX];
    cv_log_format(buf, sizeof(buf), CV_LOG_TEXT, 86400.5, CV_LOG_DEBUG, "engine", "e-1",
                  "hi \"x\"");
    assert_string_equal(buf, "1970-01-02T00:00:00.500Z debug e-1: hi \"x\"\n");
}

static void test_quotes_and_backslashes_are_escaped(void **state)
{
    (void)state;
    char buf[CV_LOG_LINE_MAX];
    cv_log_format(buf, sizeof(buf), CV_LOG_JSON, T0, CV_LOG_INFO, "p\"", "i\\", "a\"b\\c");
    assert_contains(buf, "\"process\":\"p\\\"\"");
    assert_contains(buf, "\"id\":\"i\\\\\"");
    assert_contains(buf, "\"msg\":\"a\\\"b\\\\c\"}");
}

static void test_every_control_character_is_escaped_and_reads_back(void **state)
{
    (void)state;
    char msg[40];
    for (int c = 1; c < 0x20; c++)
        msg[c - 1] = (char)c;
    msg[0x1f] = 0x7f;
    msg[0x20] = '\0';
    json_t *v = json_line(CV_LOG_LINE_MAX, msg);
    assert_string_equal(msg_of(v), msg);
    json_decref(v);
    char buf[CV_LOG_LINE_MAX];
    cv_log_format(buf, sizeof(buf), CV_LOG_JSON, T0, CV_LOG_INFO, "p", "i", "a\nb\tc\x01");
    assert_contains(buf, "\"msg\":\"a\\nb\\tc\\u0001\"");
}

static void test_valid_utf8_is_kept_as_it_is(void **state)
{
    (void)state;
    const char *msg = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf";
    json_t *v = json_line(CV_LOG_LINE_MAX, msg);
    assert_string_equal(msg_of(v), msg);
    json_decref(v);
}

static void test_invalid_utf8_becomes_the_replacement_character(void **state)
{
    (void)state;
    static const struct {
        const char *bytes, *want;
    } cases[] = {
        {"a\xff"
         "b",
         "a\xef\xbf\xbd"
         "b"},                                                    /* never a UTF-8 byte */
        {"\x80", "\xef\xbf\xbd"},                                 /* a stray continuation */
        {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},                 /* an overlong '/' */
        {"\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong, 3 bytes */
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* a surrogate */
        {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* > U+10FFFF */
        {"\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd"},   /* cut short at the end */
        {"\xe2\x82x", "\xef\xbf\xbd\xef\xbf\xbdx"}, /* cut short inside */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *v = json_line(CV_LOG_LINE_MAX, cases[i].bytes);
        assert_string_equal(msg_of(v), cases[i].want);
        json_decref(v);
    }
}

/* A message longer than the line: cut, never inside an escape or a
 * multi-byte character, and the line still closes. */
static void test_a_long_message_is_cut_and_the_line_stays_json(void **state)
{
    (void)state;
    static const char *const units[] = {"\xc3\xa9", "\x01", "\"", "\xe2\x82\xac", "\xff"};
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
        for (size_t size = 256; size <= 512; size++) {
            char msg[2000] = "";
            while (strlen(msg) + strlen(units[u]) < sizeof(msg))
                strcat(msg, units[u]);
            json_t *v = json_line(size, msg);
            assert_true(strlen(msg_of(v)) > 0);
            assert_string_equal(json_string_value(json_object_get(v, "id")), "engine-h-1");
            json_decref(v);
        }
}

static void test_a_full_sized_message_fits_one_pipe_write(void **state)
{
    (void)state;
    char msg[CV_LOG_LINE_MAX];
    memset(msg, '\x02', sizeof(msg) - 1);
    msg[sizeof(msg) - 1] = '\0';
    char buf[CV_LOG_LINE_MAX];
    size_t n = cv_log_format(buf, sizeof(buf), CV_LOG_JSON, T0, CV_LOG_ERROR, "agent", "a", msg);
    assert_true(n < CV_LOG_LINE_MAX);
    assert_true(n > CV_LOG_LINE_MAX - 16);
    assert_string_equal(buf + n - 3, "\"}\n");
}

/* Any bytes at all make a valid line: random messages of every length. */
static void test_random_bytes_always_make_a_valid_line(void **state)
{
    (void)state;
    srand(20261125);
    for (int round = 0; round < 2000; round++) {
        char msg[600];
        size_t len = (size_t)(rand() % (int)(sizeof(msg) - 1));
        for (size_t i = 0; i < len; i++)
            msg[i] = (char)(1 + rand() % 255);
        msg[len] = '\0';
        json_t *v = json_line(256 + (size_t)(rand() % 3000), msg);
        assert_non_null(msg_of(v));
        json_decref(v);
    }
}

static void test_a_level_passes_at_or_above_the_threshold(void **state)
{
    (void)state;
    assert_false(cv_log_passes(CV_LOG_INFO, CV_LOG_DEBUG));
    assert_true(cv_log_passes(CV_LOG_INFO, CV_LOG_INFO));
    assert_true(cv_log_passes(CV_LOG_INFO, CV_LOG_ERROR));
    assert_false(cv_log_passes(CV_LOG_ERROR, CV_LOG_WARN));
    assert_true(cv_log_passes(CV_LOG_DEBUG, CV_LOG_DEBUG));
    assert_false(cv_log_passes(CV_LOG_DEBUG, 7));
    assert_string_equal(cv_log_level_name(CV_LOG_WARN), "warn");
    assert_null(cv_log_level_name(4));
}

static void test_log_options_take_their_values(void **state)
{
    (void)state;
    cv_log_opts_t o = {CV_LOG_INFO, CV_LOG_TEXT};
    char err[256];
    assert_int_equal(cv_log_opts_set(&o, "log-format", "json", err, sizeof(err)), 0);
    assert_int_equal(cv_log_opts_set(&o, "log-level", "error", err, sizeof(err)), 0);
    assert_int_equal(o.format, CV_LOG_JSON);
    assert_int_equal(o.level, CV_LOG_ERROR);
}

static void test_a_bad_log_option_names_itself_and_its_values(void **state)
{
    (void)state;
    cv_log_opts_t o = {CV_LOG_INFO, CV_LOG_TEXT};
    char err[256];
    assert_int_equal(cv_log_opts_set(&o, "log-format", "xml", err, sizeof(err)), CV_EINVAL);
    assert_contains(err, "--log-format \"xml\"");
    assert_contains(err, "text or json");
    assert_int_equal(cv_log_opts_set(&o, "log-level", "INFO", err, sizeof(err)), CV_EINVAL);
    assert_contains(err, "--log-level \"INFO\"");
    assert_contains(err, "debug, info, warn or error");
    assert_int_equal(o.format, CV_LOG_TEXT);
    assert_int_equal(o.level, CV_LOG_INFO);
}

static void test_the_environment_sets_the_defaults(void **state)
{
    (void)state;
    cv_log_opts_t o;
    char err[256];
    setenv("CONVERGE_LOG_FORMAT", "json", 1);
    setenv("CONVERGE_LOG_LEVEL", "warn", 1);
    assert_int_equal(cv_log_opts_from_env(&o, err, sizeof(err)), 0);
    assert_int_equal(o.format, CV_LOG_JSON);
    assert_int_equal(o.level, CV_LOG_WARN);
    setenv("CONVERGE_LOG_LEVEL", "loud", 1);
    assert_int_equal(cv_log_opts_from_env(&o, err, sizeof(err)), CV_EINVAL);
    assert_contains(err, "CONVERGE_LOG_LEVEL \"loud\"");
    unsetenv("CONVERGE_LOG_FORMAT");
    unsetenv("CONVERGE_LOG_LEVEL");
    assert_int_equal(cv_log_opts_from_env(&o, err, sizeof(err)), 0);
    assert_int_equal(o.format, CV_LOG_TEXT);
    assert_int_equal(o.level, CV_LOG_INFO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_json_line_has_the_five_keys_in_order),
        cmocka_unit_test(test_the_text_line_is_time_level_id_message),
        cmocka_unit_test(test_quotes_and_backslashes_are_escaped),
        cmocka_unit_test(test_every_control_character_is_escaped_and_reads_back),
        cmocka_unit_test(test_valid_utf8_is_kept_as_it_is),
        cmocka_unit_test(test_invalid_utf8_becomes_the_replacement_character),
        cmocka_unit_test(test_a_long_message_is_cut_and_the_line_stays_json),
        cmocka_unit_test(test_a_full_sized_message_fits_one_pipe_write),
        cmocka_unit_test(test_random_bytes_always_make_a_valid_line),
        cmocka_unit_test(test_a_level_passes_at_or_above_the_threshold),
        cmocka_unit_test(test_log_options_take_their_values),
        cmocka_unit_test(test_a_bad_log_option_names_itself_and_its_values),
        cmocka_unit_test(test_the_environment_sets_the_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
