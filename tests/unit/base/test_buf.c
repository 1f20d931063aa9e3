/*
 * Specification of cv_buf (proto/base/cv_buf.h): the growable string every
 * module builds its text in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_buf.h"
#include "cv_error.h"

#include <stdlib.h>
#include <string.h>

static void test_an_empty_buffer_reads_as_the_empty_string(void **state)
{
    (void)state;
    cv_buf_t b = {0};
    assert_string_equal(cv_buf_str(&b), "");
    assert_int_equal(b.len, 0);
    char *text = cv_buf_take(&b);
    assert_non_null(text);
    assert_string_equal(text, "");
    free(text);
}

static void test_additions_are_kept_in_order_and_terminated(void **state)
{
    (void)state;
    cv_buf_t b;
    cv_buf_init(&b);
    assert_int_equal(cv_buf_add(&b, "ab\0cd", 5), 0);
    assert_int_equal(cv_buf_puts(&b, "ef"), 0);
    assert_int_equal(cv_buf_putc(&b, 'g'), 0);
    assert_int_equal(cv_buf_printf(&b, "-%d-%s", 42, "x"), 0);
    assert_int_equal(b.len, 13);
    assert_memory_equal(b.data, "ab\0cdefg-42-x", 14); /* the NUL after the text too */
    cv_buf_free(&b);
}

static void test_adding_nothing_still_gives_a_string(void **state)
{
    (void)state;
    cv_buf_t b = {0};
    assert_int_equal(cv_buf_add(&b, "", 0), 0);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    cv_buf_free(&b);
}

static void test_printf_grows_past_what_the_buffer_held(void **state)
{
    (void)state;
    char big[5000];
    memset(big, 'y', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cv_buf_t b = {0};
    cv_buf_puts(&b, "<");
    assert_int_equal(cv_buf_printf(&b, "%s>%d", big, 7), 0);
    assert_int_equal(b.len, 1 + 4999 + 2);
    assert_int_equal(b.data[0], '<');
    assert_string_equal(b.data + 5000, ">7");
    assert_int_equal(strspn(b.data + 1, "y"), 4999);
    cv_buf_free(&b);
}

static void test_growth_doubles_so_the_capacity_stays_within_twice_the_text(void **state)
{
    (void)state;
    cv_buf_t b = {0};
    for (int i = 0; i < 100000; i++)
        cv_buf_putc(&b, 'z');
    assert_int_equal(b.len, 100000);
    assert_true(b.cap > b.len);
    assert_true(b.cap <= 2 * (b.len + 1));
    cv_buf_free(&b);
}

static void test_a_failed_allocation_is_sticky_and_keeps_the_text(void **state)
{
    (void)state;
    cv_buf_t b = {0};
    cv_buf_puts(&b, "kept");
    assert_int_equal(cv_buf_reserve(&b, SIZE_MAX - 2), CV_ENOMEM);
    assert_true(b.failed);
    assert_string_equal(cv_buf_str(&b), "kept");
    assert_int_equal(cv_buf_puts(&b, " more"), CV_ENOMEM);
    assert_int_equal(cv_buf_printf(&b, "%d", 1), CV_ENOMEM);
    assert_string_equal(cv_buf_str(&b), "kept");
    assert_null(cv_buf_take(&b)); /* an incomplete text is never handed over */
    assert_false(b.failed);       /* and the buffer is empty and usable again */
    assert_int_equal(cv_buf_puts(&b, "new"), 0);
    assert_string_equal(cv_buf_str(&b), "new");
    cv_buf_free(&b);
}

static void test_bytes_written_in_place_are_counted(void **state)
{
    (void)state;
    cv_buf_t b = {0};
    cv_buf_puts(&b, "head:");
    assert_int_equal(cv_buf_reserve(&b, 300), 0);
    assert_true(b.cap - b.len > 300);
    memset(b.data + b.len, 'r', 300);
    cv_buf_added(&b, 300);
    assert_int_equal(b.len, 305);
    assert_int_equal(strlen(b.data), 305);
    char *text = cv_buf_take(&b);
    assert_int_equal(strspn(text + 5, "r"), 300);
    assert_null(b.data);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_empty_buffer_reads_as_the_empty_string),
        cmocka_unit_test(test_additions_are_kept_in_order_and_terminated),
        cmocka_unit_test(test_adding_nothing_still_gives_a_string),
        cmocka_unit_test(test_printf_grows_past_what_the_buffer_held),
        cmocka_unit_test(test_growth_doubles_so_the_capacity_stays_within_twice_the_text),
        cmocka_unit_test(test_a_failed_allocation_is_sticky_and_keeps_the_text),
        cmocka_unit_test(test_bytes_written_in_place_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
