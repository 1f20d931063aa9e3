/*
 * Specification of cv_vec (proto/base/cv_vec.h): the growable array every
 * module keeps its lists in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_vec.h"

typedef CV_VEC(int) ints_t;

typedef struct pair {
    const char *name;
    int value;
} pair_t;
typedef CV_VEC(pair_t) pairs_t;

static void test_pushed_values_are_kept_in_order(void **state)
{
    (void)state;
    ints_t a = {0};
    for (int i = 0; i < 10000; i++)
        assert_int_equal(cv_vec_push(&a, i * 3), 0);
    assert_int_equal(a.n, 10000);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(a.v[i], i * 3);
    assert_true(a.cap >= a.n && a.cap <= 2 * a.n); /* doubling, not one at a time */
    cv_vec_free(&a);
    assert_null(a.v);
    assert_int_equal(a.n, 0);
    assert_int_equal(a.cap, 0);
}

static void test_a_compound_literal_is_pushed_whole(void **state)
{
    (void)state;
    pairs_t a = {0};
    assert_int_equal(cv_vec_push(&a, (pair_t){"one", 1}), 0);
    assert_int_equal(cv_vec_push(&a, (pair_t){.value = 2, .name = "two"}), 0);
    assert_int_equal(a.n, 2);
    assert_string_equal(a.v[1].name, "two");
    assert_int_equal(a.v[1].value, 2);
    cv_vec_free(&a);
}

static void test_add_gives_a_zeroed_element_at_the_end(void **state)
{
    (void)state;
    pairs_t a = {0};
    cv_vec_push(&a, (pair_t){"x", 9});
    pair_t *p = cv_vec_add(&a);
    assert_non_null(p);
    assert_ptr_equal(p, &a.v[1]);
    assert_null(p->name);
    assert_int_equal(p->value, 0);
    assert_int_equal(a.n, 2);
    cv_vec_free(&a);
}

static void test_reserve_makes_room_and_adds_nothing(void **state)
{
    (void)state;
    ints_t a = {0};
    assert_int_equal(cv_vec_reserve(&a, 1000), 0);
    assert_int_equal(a.n, 0);
    assert_true(a.cap >= 1000);
    int *at = a.v;
    for (int i = 0; i < 1000; i++)
        cv_vec_push(&a, i);
    assert_ptr_equal(a.v, at); /* no move within the room reserved */
    cv_vec_free(&a);
}

static void test_an_impossible_size_fails_and_leaves_the_vector_as_it_was(void **state)
{
    (void)state;
    ints_t a = {0};
    cv_vec_push(&a, 5);
    int *v = a.v;
    size_t cap = a.cap;
    assert_int_equal(cv_vec_reserve(&a, SIZE_MAX / 2), CV_ENOMEM);
    assert_ptr_equal(a.v, v);
    assert_int_equal(a.cap, cap);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0], 5);
    cv_vec_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pushed_values_are_kept_in_order),
        cmocka_unit_test(test_a_compound_literal_is_pushed_whole),
        cmocka_unit_test(test_add_gives_a_zeroed_element_at_the_end),
        cmocka_unit_test(test_reserve_makes_room_and_adds_nothing),
        cmocka_unit_test(test_an_impossible_size_fails_and_leaves_the_vector_as_it_was),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
