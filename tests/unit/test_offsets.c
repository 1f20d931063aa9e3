/* The committable offset of a partition advances only over finished prefixes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cv_offsets.h"

static int released;

static void count_release(cv_offset_slot_t *slot, void *ud)
{
    (void)slot;
    (void)ud;
    released++;
}

static void test_nothing_committable_before_any_job_finishes(void **state)
{
    (void)state;
    cv_partition_track_t t;
    cv_offset_slot_t a, b;
    cv_track_init(&t);
    cv_track_push(&t, &a, 10);
    cv_track_push(&t, &b, 11);
    assert_int_equal(t.committable, -1);
}

static void test_out_of_order_finish_waits_for_the_prefix(void **state)
{
    (void)state;
    cv_partition_track_t t;
    cv_offset_slot_t s[3];
    cv_track_init(&t);
    for (int i = 0; i < 3; i++)
        cv_track_push(&t, &s[i], 100 + i);
    released = 0;
    assert_false(cv_track_done(&t, &s[2], count_release, NULL));
    assert_false(cv_track_done(&t, &s[1], count_release, NULL));
    assert_int_equal(t.committable, -1);
    assert_int_equal(released, 0);
    assert_true(cv_track_done(&t, &s[0], count_release, NULL));
    assert_int_equal(t.committable, 103);
    assert_int_equal(released, 3);
    assert_null(t.head);
    assert_null(t.tail);
}

static void test_in_order_finish_advances_each_time(void **state)
{
    (void)state;
    cv_partition_track_t t;
    cv_offset_slot_t s[2];
    cv_track_init(&t);
    cv_track_push(&t, &s[0], 5);
    cv_track_push(&t, &s[1], 9); /* offsets may have gaps (compaction, other consumers) */
    assert_true(cv_track_done(&t, &s[0], count_release, NULL));
    assert_int_equal(t.committable, 6);
    assert_true(cv_track_done(&t, &s[1], count_release, NULL));
    assert_int_equal(t.committable, 10);
}

static void test_push_after_drain_starts_a_new_prefix(void **state)
{
    (void)state;
    cv_partition_track_t t;
    cv_offset_slot_t a, b, c;
    cv_track_init(&t);
    cv_track_push(&t, &a, 1);
    cv_track_done(&t, &a, count_release, NULL);
    cv_track_push(&t, &b, 2);
    cv_track_push(&t, &c, 3);
    assert_false(cv_track_done(&t, &c, count_release, NULL));
    assert_int_equal(t.committable, 2);
    assert_true(cv_track_done(&t, &b, count_release, NULL));
    assert_int_equal(t.committable, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_committable_before_any_job_finishes),
        cmocka_unit_test(test_out_of_order_finish_waits_for_the_prefix),
        cmocka_unit_test(test_in_order_finish_advances_each_time),
        cmocka_unit_test(test_push_after_drain_starts_a_new_prefix),
    };
    return cmocka_run_group_tests_name("offsets", tests, NULL, NULL);
}
