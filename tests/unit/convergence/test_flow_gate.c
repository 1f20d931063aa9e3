/*
 * cv_gate: at most `max` admitted, the rest in line first come first
 * served, each admitted through its start as a place frees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_gate.h"

#include <string.h>

typedef struct job {
    cv_gate_waiter_t w;
    int id;
} job_t;

static int started[16], nstarted;

static void on_start(cv_gate_waiter_t *w)
{
    started[nstarted++] = ((job_t *)w)->id;
}

static void jobs_init(job_t *jobs, int n)
{
    memset(jobs, 0, sizeof(*jobs) * (size_t)n);
    for (int i = 0; i < n; i++) {
        jobs[i].w.start = on_start;
        jobs[i].id = i;
    }
    nstarted = 0;
}

static void test_admits_max_then_queues_in_order(void **state)
{
    (void)state;
    cv_gate_t g = CV_GATE_INIT(2);
    job_t j[5];
    jobs_init(j, 5);
    assert_true(cv_gate_enter(&g, &j[0].w));
    assert_true(cv_gate_enter(&g, &j[1].w));
    assert_false(cv_gate_enter(&g, &j[2].w));
    assert_false(cv_gate_enter(&g, &j[3].w));
    assert_false(cv_gate_enter(&g, &j[2].w)); /* asking again keeps its place in line */
    assert_int_equal(g.running, 2);
    cv_gate_leave(&g, &j[1].w);
    assert_int_equal(nstarted, 1);
    assert_int_equal(started[0], 2);
    assert_true(j[2].w.admitted);
    assert_true(cv_gate_enter(&g, &j[2].w)); /* admitted: enter says so */
    cv_gate_leave(&g, &j[0].w);
    assert_int_equal(started[1], 3);
    assert_int_equal(g.running, 2);
    cv_gate_leave(&g, &j[2].w);
    cv_gate_leave(&g, &j[3].w);
    assert_int_equal(g.running, 0);
    assert_null(g.head);
    assert_null(g.tail);
}

static void test_leaving_twice_or_without_a_place_changes_nothing(void **state)
{
    (void)state;
    cv_gate_t g = CV_GATE_INIT(1);
    job_t j[2];
    jobs_init(j, 2);
    cv_gate_leave(&g, &j[0].w); /* never entered */
    assert_int_equal(g.running, 0);
    assert_true(cv_gate_enter(&g, &j[0].w));
    cv_gate_leave(&g, &j[0].w);
    cv_gate_leave(&g, &j[0].w);
    assert_int_equal(g.running, 0);
    assert_true(cv_gate_enter(&g, &j[1].w));
    assert_int_equal(g.running, 1);
}

static void test_a_waiter_that_leaves_the_line_is_never_started(void **state)
{
    (void)state;
    cv_gate_t g = CV_GATE_INIT(1);
    job_t j[4];
    jobs_init(j, 4);
    assert_true(cv_gate_enter(&g, &j[0].w));
    assert_false(cv_gate_enter(&g, &j[1].w));
    assert_false(cv_gate_enter(&g, &j[2].w));
    assert_false(cv_gate_enter(&g, &j[3].w));
    cv_gate_leave(&g, &j[2].w); /* from the middle */
    cv_gate_leave(&g, &j[3].w); /* the tail */
    assert_false(j[2].w.waiting || j[3].w.waiting);
    cv_gate_leave(&g, &j[0].w);
    assert_int_equal(nstarted, 1);
    assert_int_equal(started[0], 1);
    assert_null(g.head);
    assert_null(g.tail);
    assert_false(cv_gate_enter(&g, &j[3].w)); /* the line is usable again */
    assert_ptr_equal(g.head, &j[3].w);
}

static void test_a_newcomer_never_overtakes_the_line(void **state)
{
    (void)state;
    cv_gate_t g = CV_GATE_INIT(1);
    job_t j[3];
    jobs_init(j, 3);
    assert_true(cv_gate_enter(&g, &j[0].w));
    assert_false(cv_gate_enter(&g, &j[1].w));
    /* j[0]'s place goes to j[1] inside leave; a newcomer then waits */
    cv_gate_leave(&g, &j[0].w);
    assert_false(cv_gate_enter(&g, &j[2].w));
    assert_int_equal(started[0], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admits_max_then_queues_in_order),
        cmocka_unit_test(test_leaving_twice_or_without_a_place_changes_nothing),
        cmocka_unit_test(test_a_waiter_that_leaves_the_line_is_never_started),
        cmocka_unit_test(test_a_newcomer_never_overtakes_the_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
