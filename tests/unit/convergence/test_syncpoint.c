/*
 * Specification of sync points: satisfying is a set operation, the job is
 * published once by whoever completes the set, and a redelivery publishes
 * again for a complete set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_syncpoint.h"

#include <stdio.h>
#include <string.h>

/* Satisfies `pred` and returns whether this caller must publish. */
static bool deliver(cv_syncpoint_t *sp, const char *pred, const char *data, bool redelivery)
{
    cv_sp_answer_t ans;
    assert_int_equal(cv_sp_satisfy(sp, pred, data, &ans), 0);
    return cv_sp_should_publish(&ans, redelivery);
}

static void test_incomplete_set_never_publishes(void **state)
{
    (void)state;
    cv_sp_answer_t ans = {.required = 3, .satisfied = 2, .added = true};
    assert_false(cv_sp_should_publish(&ans, false));
    assert_false(cv_sp_should_publish(&ans, true));
}

static void test_the_add_that_completes_the_set_publishes(void **state)
{
    (void)state;
    cv_sp_answer_t ans = {.required = 3, .satisfied = 3, .added = true};
    assert_true(cv_sp_should_publish(&ans, false));
}

static void test_a_duplicate_on_a_complete_set_does_not_publish(void **state)
{
    (void)state;
    cv_sp_answer_t ans = {.required = 3, .satisfied = 3, .added = false};
    assert_false(cv_sp_should_publish(&ans, false));
}

static void test_a_redelivery_on_a_complete_set_publishes(void **state)
{
    (void)state;
    cv_sp_answer_t ans = {.required = 3, .satisfied = 3, .added = false};
    assert_true(cv_sp_should_publish(&ans, true));
}

static void test_a_done_successor_is_never_published_again(void **state)
{
    (void)state;
    cv_sp_answer_t ans = {.required = 3, .satisfied = 3, .added = false, .node_done = true};
    assert_false(cv_sp_should_publish(&ans, true));
    ans.added = true;
    assert_false(cv_sp_should_publish(&ans, false));
}

static void test_an_add_beyond_the_required_count_does_not_publish_again(void **state)
{
    (void)state;
    cv_sp_answer_t ans = {.required = 2, .satisfied = 3, .added = true};
    assert_false(cv_sp_should_publish(&ans, false));
}

static void test_in_order_satisfaction_publishes_on_the_last(void **state)
{
    (void)state;
    cv_syncpoint_t *sp = cv_sp_new(3);
    assert_false(deliver(sp, "a", "{}", false));
    assert_false(cv_sp_complete(sp));
    assert_false(deliver(sp, "b", "{}", false));
    assert_true(deliver(sp, "c", "{}", false));
    assert_true(cv_sp_complete(sp));
    cv_sp_free(sp);
}

static void test_out_of_order_satisfaction_publishes_on_the_last(void **state)
{
    (void)state;
    cv_syncpoint_t *sp = cv_sp_new(3);
    assert_false(deliver(sp, "c", "{}", false));
    assert_false(deliver(sp, "a", "{}", false));
    assert_true(deliver(sp, "b", "{}", false));
    cv_sp_free(sp);
}

static void test_duplicates_never_double_count(void **state)
{
    (void)state;
    cv_syncpoint_t *sp = cv_sp_new(3);
    cv_sp_answer_t ans;
    assert_int_equal(cv_sp_satisfy(sp, "a", "1", &ans), 0);
    assert_true(ans.added);
    assert_int_equal(ans.satisfied, 1);
    assert_int_equal(ans.required, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(cv_sp_satisfy(sp, "a", "1", &ans), 0);
        assert_false(ans.added);
        assert_int_equal(ans.satisfied, 1);
    }
    assert_int_equal(cv_sp_satisfy(sp, "b", "2", &ans), 0);
    assert_int_equal(ans.satisfied, 2);
    assert_false(cv_sp_complete(sp));
    cv_sp_free(sp);
}

/* Every distinct order of the deliveries a, a, b, b, c, c (duplicates
 * delivered concurrently, so none is flagged a redelivery): exactly one
 * delivery publishes, and it is the first one of the last distinct pred. */
static int orders_checked;

static void check_order(const char *order)
{
    cv_syncpoint_t *sp = cv_sp_new(3);
    int publishers = 0, publisher_at = -1, distinct = 0;
    bool seen[3] = {false, false, false};
    int completes_at = -1;
    for (int i = 0; i < 6; i++) {
        char pred[2] = {order[i], '\0'};
        if (!seen[order[i] - 'a']) {
            seen[order[i] - 'a'] = true;
            if (++distinct == 3)
                completes_at = i;
        }
        if (deliver(sp, pred, pred, false)) {
            publishers++;
            publisher_at = i;
        }
    }
    assert_int_equal(publishers, 1);
    assert_int_equal(publisher_at, completes_at);
    cv_sp_free(sp);
    orders_checked++;
}

static void permute(char *items, int k, int n)
{
    if (k == n) {
        check_order(items);
        return;
    }
    for (int i = k; i < n; i++) {
        bool repeated = false;
        for (int j = k; j < i; j++)
            repeated |= items[j] == items[i];
        if (repeated)
            continue;
        char t = items[k];
        items[k] = items[i];
        items[i] = t;
        permute(items, k + 1, n);
        items[i] = items[k];
        items[k] = t;
    }
}

static void test_exactly_one_publisher_in_every_interleaving(void **state)
{
    (void)state;
    char items[] = "aabbcc";
    orders_checked = 0;
    permute(items, 0, 6);
    assert_int_equal(orders_checked, 90); /* 6! / (2! 2! 2!) */
}

static void test_redelivery_republishes_a_complete_set(void **state)
{
    (void)state;
    cv_syncpoint_t *sp = cv_sp_new(2);
    assert_false(deliver(sp, "a", "{}", false));
    assert_true(deliver(sp, "b", "{}", false));
    assert_true(deliver(sp, "b", "{}", true));
    assert_true(deliver(sp, "a", "{}", true));
    cv_sp_free(sp);
}

static void test_redelivery_does_not_publish_an_incomplete_set(void **state)
{
    (void)state;
    cv_syncpoint_t *sp = cv_sp_new(2);
    assert_false(deliver(sp, "a", "{}", false));
    assert_false(deliver(sp, "a", "{}", true));
    cv_sp_free(sp);
}

static void test_the_first_data_is_kept(void **state)
{
    (void)state;
    cv_syncpoint_t *sp = cv_sp_new(2);
    char data[16] = "{\"x\":1}";
    deliver(sp, "a", data, false);
    strcpy(data, "changed");
    deliver(sp, "a", "{\"x\":2}", false);
    assert_string_equal(cv_sp_data(sp, "a"), "{\"x\":1}");
    cv_sp_free(sp);
}

static void test_data_of_an_unsatisfied_pred_is_null(void **state)
{
    (void)state;
    cv_syncpoint_t *sp = cv_sp_new(2);
    assert_null(cv_sp_data(sp, "a"));
    deliver(sp, "a", NULL, false);
    assert_string_equal(cv_sp_data(sp, "a"), "");
    assert_null(cv_sp_data(sp, "b"));
    cv_sp_free(sp);
}

static void test_a_node_without_predecessors_is_complete_at_once(void **state)
{
    (void)state;
    cv_syncpoint_t *sp = cv_sp_new(0);
    assert_true(cv_sp_complete(sp));
    cv_sp_free(sp);
    cv_sp_free(NULL);
}

static void test_a_hundred_thousand_predecessors(void **state)
{
    (void)state;
    enum { N = 100000 };
    cv_syncpoint_t *sp = cv_sp_new(N);
    char pred[32];
    int publishers = 0;
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N; i++) {
            snprintf(pred, sizeof(pred), "member-%d", i);
            publishers += deliver(sp, pred, pred, false);
        }
    assert_int_equal(publishers, 1);
    assert_string_equal(cv_sp_data(sp, "member-4242"), "member-4242");
    cv_sp_free(sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incomplete_set_never_publishes),
        cmocka_unit_test(test_the_add_that_completes_the_set_publishes),
        cmocka_unit_test(test_a_duplicate_on_a_complete_set_does_not_publish),
        cmocka_unit_test(test_a_redelivery_on_a_complete_set_publishes),
        cmocka_unit_test(test_a_done_successor_is_never_published_again),
        cmocka_unit_test(test_an_add_beyond_the_required_count_does_not_publish_again),
        cmocka_unit_test(test_in_order_satisfaction_publishes_on_the_last),
        cmocka_unit_test(test_out_of_order_satisfaction_publishes_on_the_last),
        cmocka_unit_test(test_duplicates_never_double_count),
        cmocka_unit_test(test_exactly_one_publisher_in_every_interleaving),
        cmocka_unit_test(test_redelivery_republishes_a_complete_set),
        cmocka_unit_test(test_redelivery_does_not_publish_an_incomplete_set),
        cmocka_unit_test(test_the_first_data_is_kept),
        cmocka_unit_test(test_data_of_an_unsatisfied_pred_is_null),
        cmocka_unit_test(test_a_node_without_predecessors_is_complete_at_once),
        cmocka_unit_test(test_a_hundred_thousand_predecessors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
