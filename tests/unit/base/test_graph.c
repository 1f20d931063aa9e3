/*
 * Specification of cv_graph: dense node indexes, edges without duplicates,
 * cycles named by their path, and a deterministic topological order, all
 * without recursion so that a million-node chain works.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_error.h"
#include "cv_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MILLION 1000000

static cv_graph_t *graph_of(const char *const *names, size_t n)
{
    cv_graph_t *g = cv_graph_new();
    assert_non_null(g);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(cv_graph_add_node(g, names[i]), (int)i);
    return g;
}

static void test_empty_graph_has_no_nodes_no_cycle_and_an_empty_order(void **state)
{
    (void)state;
    cv_graph_t *g = cv_graph_new();
    char err[64] = "untouched";
    assert_int_equal(cv_graph_count(g), 0);
    assert_int_equal(cv_graph_find_cycle(g, err, sizeof(err)), 0);
    assert_int_equal(cv_graph_topo_order(g, NULL), 0);
    assert_int_equal(cv_graph_find(g, "a"), CV_ENOENT);
    cv_graph_free(g);
    cv_graph_free(NULL);
}

static void test_nodes_get_dense_indexes_in_insertion_order(void **state)
{
    (void)state;
    const char *names[] = {"web", "db", "lb"};
    cv_graph_t *g = graph_of(names, 3);
    assert_int_equal(cv_graph_count(g), 3);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(cv_graph_name(g, i), names[i]);
        assert_int_equal(cv_graph_find(g, names[i]), i);
    }
    cv_graph_free(g);
}

static void test_adding_a_node_again_returns_its_index(void **state)
{
    (void)state;
    const char *names[] = {"a", "b"};
    cv_graph_t *g = graph_of(names, 2);
    assert_int_equal(cv_graph_add_node(g, "a"), 0);
    assert_int_equal(cv_graph_add_node(g, "b"), 1);
    assert_int_equal(cv_graph_count(g), 2);
    cv_graph_free(g);
}

static void test_node_names_are_copied(void **state)
{
    (void)state;
    char name[8] = "first";
    cv_graph_t *g = cv_graph_new();
    assert_int_equal(cv_graph_add_node(g, name), 0);
    strcpy(name, "other");
    assert_string_equal(cv_graph_name(g, 0), "first");
    assert_int_equal(cv_graph_find(g, "other"), CV_ENOENT);
    cv_graph_free(g);
}

static void test_unknown_name_is_not_found(void **state)
{
    (void)state;
    const char *names[] = {"a"};
    cv_graph_t *g = graph_of(names, 1);
    assert_int_equal(cv_graph_find(g, "b"), CV_ENOENT);
    assert_int_equal(cv_graph_find(g, ""), CV_ENOENT);
    cv_graph_free(g);
}

static void test_preds_and_succs_keep_edge_order(void **state)
{
    (void)state;
    const char *names[] = {"a", "b", "c", "d"};
    cv_graph_t *g = graph_of(names, 4);
    assert_int_equal(cv_graph_add_edge(g, 0, 3), 0);
    assert_int_equal(cv_graph_add_edge(g, 2, 3), 0);
    assert_int_equal(cv_graph_add_edge(g, 1, 3), 0);
    assert_int_equal(cv_graph_add_edge(g, 0, 1), 0);
    size_t n;
    const int *preds = cv_graph_preds(g, 3, &n);
    assert_int_equal(n, 3);
    assert_int_equal(preds[0], 0);
    assert_int_equal(preds[1], 2);
    assert_int_equal(preds[2], 1);
    const int *succs = cv_graph_succs(g, 0, &n);
    assert_int_equal(n, 2);
    assert_int_equal(succs[0], 3);
    assert_int_equal(succs[1], 1);
    cv_graph_succs(g, 3, &n);
    assert_int_equal(n, 0);
    cv_graph_free(g);
}

static void test_duplicate_edge_is_a_no_op(void **state)
{
    (void)state;
    const char *names[] = {"a", "b"};
    cv_graph_t *g = graph_of(names, 2);
    for (int i = 0; i < 5; i++)
        assert_int_equal(cv_graph_add_edge(g, 0, 1), 0);
    size_t n;
    cv_graph_succs(g, 0, &n);
    assert_int_equal(n, 1);
    cv_graph_preds(g, 1, &n);
    assert_int_equal(n, 1);
    cv_graph_free(g);
}

static void test_duplicate_edges_of_a_huge_fan_out_are_cheap(void **state)
{
    (void)state;
    enum { FAN = 200000 };
    cv_graph_t *g = cv_graph_new();
    char name[32];
    assert_int_equal(cv_graph_add_node(g, "group"), 0);
    for (int i = 1; i <= FAN; i++) {
        snprintf(name, sizeof(name), "member-%d", i);
        assert_int_equal(cv_graph_add_node(g, name), i);
        assert_int_equal(cv_graph_add_edge(g, 0, i), 0);
    }
    for (int i = 1; i <= FAN; i++)
        assert_int_equal(cv_graph_add_edge(g, 0, i), 0);
    size_t n;
    const int *succs = cv_graph_succs(g, 0, &n);
    assert_int_equal(n, FAN);
    assert_int_equal(succs[FAN - 1], FAN);
    cv_graph_free(g);
}

static void test_edge_with_a_bad_index_is_einval(void **state)
{
    (void)state;
    const char *names[] = {"a", "b"};
    cv_graph_t *g = graph_of(names, 2);
    assert_int_equal(cv_graph_add_edge(g, -1, 0), CV_EINVAL);
    assert_int_equal(cv_graph_add_edge(g, 0, -1), CV_EINVAL);
    assert_int_equal(cv_graph_add_edge(g, 0, 2), CV_EINVAL);
    assert_int_equal(cv_graph_add_edge(g, 2, 0), CV_EINVAL);
    assert_int_equal(cv_graph_add_edge(g, 0, CV_ENOENT), CV_EINVAL);
    size_t n;
    cv_graph_succs(g, 0, &n);
    assert_int_equal(n, 0);
    cv_graph_free(g);
}

static void test_queries_on_a_bad_index_return_nothing(void **state)
{
    (void)state;
    const char *names[] = {"a"};
    cv_graph_t *g = graph_of(names, 1);
    size_t n = 99;
    assert_null(cv_graph_name(g, 1));
    assert_null(cv_graph_name(g, -1));
    assert_null(cv_graph_preds(g, 1, &n));
    assert_int_equal(n, 0);
    n = 99;
    assert_null(cv_graph_succs(g, -5, &n));
    assert_int_equal(n, 0);
    cv_graph_free(g);
}

static void test_diamond_is_acyclic_and_ordered_parents_first(void **state)
{
    (void)state;
    const char *names[] = {"top", "left", "right", "bottom"};
    cv_graph_t *g = graph_of(names, 4);
    cv_graph_add_edge(g, 0, 1);
    cv_graph_add_edge(g, 0, 2);
    cv_graph_add_edge(g, 1, 3);
    cv_graph_add_edge(g, 2, 3);
    char err[64];
    assert_int_equal(cv_graph_find_cycle(g, err, sizeof(err)), 0);
    int order[4];
    assert_int_equal(cv_graph_topo_order(g, order), 0);
    assert_int_equal(order[0], 0);
    assert_int_equal(order[1], 1);
    assert_int_equal(order[2], 2);
    assert_int_equal(order[3], 3);
    cv_graph_free(g);
}

static void test_self_loop_is_reported_as_a_to_a(void **state)
{
    (void)state;
    const char *names[] = {"x", "a"};
    cv_graph_t *g = graph_of(names, 2);
    cv_graph_add_edge(g, 0, 1);
    cv_graph_add_edge(g, 1, 1);
    char err[64];
    assert_int_equal(cv_graph_find_cycle(g, err, sizeof(err)), CV_ECYCLE);
    assert_string_equal(err, "a -> a");
    cv_graph_free(g);
}

static void test_cycle_is_reported_with_its_path_in_edge_order(void **state)
{
    (void)state;
    const char *names[] = {"entry", "a", "b", "c", "d"};
    cv_graph_t *g = graph_of(names, 5);
    cv_graph_add_edge(g, 0, 1); /* entry -> a, outside the cycle */
    cv_graph_add_edge(g, 1, 2);
    cv_graph_add_edge(g, 2, 3);
    cv_graph_add_edge(g, 3, 4); /* a dead end first */
    cv_graph_add_edge(g, 3, 1);
    char err[64];
    assert_int_equal(cv_graph_find_cycle(g, err, sizeof(err)), CV_ECYCLE);
    assert_string_equal(err, "a -> b -> c -> a");
    cv_graph_free(g);
}

static void test_cycle_is_found_without_an_errstr(void **state)
{
    (void)state;
    const char *names[] = {"a", "b"};
    cv_graph_t *g = graph_of(names, 2);
    cv_graph_add_edge(g, 0, 1);
    cv_graph_add_edge(g, 1, 0);
    assert_int_equal(cv_graph_find_cycle(g, NULL, 0), CV_ECYCLE);
    cv_graph_free(g);
}

static void test_long_cycle_text_is_truncated_within_errstr(void **state)
{
    (void)state;
    const char *names[] = {"a-very-long-resource-name", "another-very-long-resource-name"};
    cv_graph_t *g = graph_of(names, 2);
    cv_graph_add_edge(g, 0, 1);
    cv_graph_add_edge(g, 1, 0);
    char buf[40];
    memset(buf, '#', sizeof(buf));
    assert_int_equal(cv_graph_find_cycle(g, buf, 20), CV_ECYCLE);
    assert_int_equal(strlen(buf), 19);
    assert_string_equal(buf, "a-very-long-reso...");
    assert_int_equal(buf[20], '#');
    char tiny[2];
    assert_int_equal(cv_graph_find_cycle(g, tiny, sizeof(tiny)), CV_ECYCLE);
    assert_int_equal(strlen(tiny), 1);
    cv_graph_free(g);
}

static void test_topo_order_breaks_ties_by_insertion_order(void **state)
{
    (void)state;
    const char *names[] = {"n0", "n1", "n2", "n3", "n4"};
    cv_graph_t *g = graph_of(names, 5);
    cv_graph_add_edge(g, 3, 1);
    cv_graph_add_edge(g, 4, 2);
    int order[5];
    assert_int_equal(cv_graph_topo_order(g, order), 0);
    const int want[] = {0, 3, 1, 4, 2};
    for (int i = 0; i < 5; i++)
        assert_int_equal(order[i], want[i]);
    cv_graph_free(g);
}

static void test_topo_order_of_a_cyclic_graph_is_ecycle(void **state)
{
    (void)state;
    const char *names[] = {"a", "b", "c"};
    cv_graph_t *g = graph_of(names, 3);
    cv_graph_add_edge(g, 0, 1);
    cv_graph_add_edge(g, 1, 2);
    cv_graph_add_edge(g, 2, 1);
    int order[3];
    assert_int_equal(cv_graph_topo_order(g, order), CV_ECYCLE);
    cv_graph_free(g);
}

static cv_graph_t *chain(int n)
{
    cv_graph_t *g = cv_graph_new();
    char name[32];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        assert_int_equal(cv_graph_add_node(g, name), i);
        if (i > 0)
            assert_int_equal(cv_graph_add_edge(g, i - 1, i), 0);
    }
    return g;
}

static void test_million_node_chain_is_handled_without_recursion(void **state)
{
    (void)state;
    cv_graph_t *g = chain(MILLION);
    assert_int_equal(cv_graph_count(g), MILLION);
    assert_int_equal(cv_graph_find(g, "n765432"), 765432);
    char err[128];
    assert_int_equal(cv_graph_find_cycle(g, err, sizeof(err)), 0);
    int *order = malloc(MILLION * sizeof(*order));
    assert_int_equal(cv_graph_topo_order(g, order), 0);
    for (int i = 0; i < MILLION; i++)
        if (order[i] != i)
            fail_msg("order[%d] = %d", i, order[i]);
    free(order);
    cv_graph_free(g);
}

static void test_million_node_cycle_is_found_and_its_text_truncated(void **state)
{
    (void)state;
    cv_graph_t *g = chain(MILLION);
    assert_int_equal(cv_graph_add_edge(g, MILLION - 1, 0), 0);
    char err[64];
    assert_int_equal(cv_graph_find_cycle(g, err, sizeof(err)), CV_ECYCLE);
    assert_int_equal(strncmp(err, "n0 -> n1 -> n2 -> ", 18), 0);
    assert_int_equal(strlen(err), sizeof(err) - 1);
    assert_string_equal(err + strlen(err) - 3, "...");
    cv_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_graph_has_no_nodes_no_cycle_and_an_empty_order),
        cmocka_unit_test(test_nodes_get_dense_indexes_in_insertion_order),
        cmocka_unit_test(test_adding_a_node_again_returns_its_index),
        cmocka_unit_test(test_node_names_are_copied),
        cmocka_unit_test(test_unknown_name_is_not_found),
        cmocka_unit_test(test_preds_and_succs_keep_edge_order),
        cmocka_unit_test(test_duplicate_edge_is_a_no_op),
        cmocka_unit_test(test_duplicate_edges_of_a_huge_fan_out_are_cheap),
        cmocka_unit_test(test_edge_with_a_bad_index_is_einval),
        cmocka_unit_test(test_queries_on_a_bad_index_return_nothing),
        cmocka_unit_test(test_diamond_is_acyclic_and_ordered_parents_first),
        cmocka_unit_test(test_self_loop_is_reported_as_a_to_a),
        cmocka_unit_test(test_cycle_is_reported_with_its_path_in_edge_order),
        cmocka_unit_test(test_cycle_is_found_without_an_errstr),
        cmocka_unit_test(test_long_cycle_text_is_truncated_within_errstr),
        cmocka_unit_test(test_topo_order_breaks_ties_by_insertion_order),
        cmocka_unit_test(test_topo_order_of_a_cyclic_graph_is_ecycle),
        cmocka_unit_test(test_million_node_chain_is_handled_without_recursion),
        cmocka_unit_test(test_million_node_cycle_is_found_and_its_text_truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
