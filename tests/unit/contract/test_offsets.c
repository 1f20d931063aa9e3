/* The committable offset of a partition advances only over finished prefixes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cv_offsets.h"

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
    assert_false(cv_track_done(&t, &s[2]));
    assert_false(cv_track_done(&t, &s[1]));
    assert_int_equal(t.committable, -1);
    assert_ptr_equal(t.head, &s[0]); /* only the job in flight is kept */
    assert_ptr_equal(t.tail, &s[0]);
    assert_true(cv_track_done(&t, &s[0]));
    assert_int_equal(t.committable, 103);
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
    cv_track_push(&t, &s[1], 9); /* offsets may have gaps (compaction, transaction markers) */
    assert_true(cv_track_done(&t, &s[0]));
    assert_int_equal(t.committable, 9); /* 6-8 are no jobs: the oldest in flight is 9 */
    assert_true(cv_track_done(&t, &s[1]));
    assert_int_equal(t.committable, 10);
}

static void test_push_after_drain_starts_a_new_prefix(void **state)
{
    (void)state;
    cv_partition_track_t t;
    cv_offset_slot_t a, b, c;
    cv_track_init(&t);
    cv_track_push(&t, &a, 1);
    cv_track_done(&t, &a);
    cv_track_push(&t, &b, 2);
    cv_track_push(&t, &c, 3);
    assert_false(cv_track_done(&t, &c));
    assert_int_equal(t.committable, 2);
    assert_true(cv_track_done(&t, &b));
    assert_int_equal(t.committable, 4);
}

/* A job waiting long at the head holds the offset back, but the jobs
 * finished behind it leave the tracker: it keeps only the jobs in flight. */
static void test_a_slow_oldest_job_holds_the_offset_not_the_finished_jobs(void **state)
{
    (void)state;
    cv_partition_track_t t;
    cv_offset_slot_t slow, s[4];
    cv_track_init(&t);
    cv_track_push(&t, &slow, 50);
    for (int i = 0; i < 4; i++)
        cv_track_push(&t, &s[i], 51 + i);
    assert_false(cv_track_done(&t, &s[1]));
    assert_false(cv_track_done(&t, &s[3])); /* the tail */
    assert_false(cv_track_done(&t, &s[0]));
    assert_int_equal(t.committable, -1);
    assert_ptr_equal(t.head, &slow);
    assert_ptr_equal(slow.next, &s[2]);
    assert_ptr_equal(t.tail, &s[2]);
    assert_ptr_equal(s[2].prev, &slow);
    assert_true(cv_track_done(&t, &slow));
    assert_int_equal(t.committable, 53); /* s[2] still in flight */
    assert_true(cv_track_done(&t, &s[2]));
    assert_int_equal(t.committable, 55);
    assert_null(t.head);
    assert_null(t.tail);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_committable_before_any_job_finishes),
        cmocka_unit_test(test_out_of_order_finish_waits_for_the_prefix),
        cmocka_unit_test(test_in_order_finish_advances_each_time),
        cmocka_unit_test(test_push_after_drain_starts_a_new_prefix),
        cmocka_unit_test(test_a_slow_oldest_job_holds_the_offset_not_the_finished_jobs),
    };
    return cmocka_run_group_tests_name("offsets", tests, NULL, NULL);
}
