/* Traversal graphs: update nodes parents first, cleanup nodes children first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "cv_contract.h"
#include "cv_traversal.h"

/* a <- b <- c, and a <- d: b and d depend on a, c on b. */
static const char *const b_deps[] = {"a"};
static const char *const c_deps[] = {"b"};
static const char *const d_deps[] = {"a", "missing"};
static const cv_trav_resource_t stack[] = {
    {"a", NULL, 0}, {"b", b_deps, 1}, {"c", c_deps, 1}, {"d", d_deps, 2}};

static size_t npreds(const cv_graph_t *g, const char *node)
{
    size_t n;
    cv_graph_preds(g, cv_graph_find(g, node), &n);
    return n;
}

static void test_create_traversal_runs_parents_before_children(void **state)
{
    (void)state;
    cv_graph_t *g = cv_traversal_build(CV_TRAV_CREATE, stack, 4, NULL, 0);
    assert_non_null(g);
    assert_int_equal(cv_graph_count(g), 4);
    assert_int_equal(npreds(g, "u/a"), 0);
    assert_int_equal(npreds(g, "u/b"), 1);
    assert_int_equal(npreds(g, "u/c"), 1);
    assert_int_equal(npreds(g, "u/d"), 1); /* the unknown dependency is ignored */
    size_t n;
    const int *succ = cv_graph_succs(g, cv_graph_find(g, "u/a"), &n);
    assert_int_equal(n, 2);
    assert_string_equal(cv_graph_name(g, succ[0]), "u/b");
    assert_string_equal(cv_graph_name(g, succ[1]), "u/d");
    cv_graph_free(g);
}

static void test_delete_traversal_runs_children_before_parents(void **state)
{
    (void)state;
    cv_graph_t *g = cv_traversal_build(CV_TRAV_DELETE, NULL, 0, stack, 4);
    assert_non_null(g);
    assert_int_equal(npreds(g, "c/c"), 0);
    assert_int_equal(npreds(g, "c/d"), 0);
    assert_int_equal(npreds(g, "c/b"), 1);
    assert_int_equal(npreds(g, "c/a"), 2);
    cv_graph_free(g);
}

static void test_entry_lists_successors_with_their_predecessor_counts_and_its_own(void **state)
{
    (void)state;
    cv_graph_t *g = cv_traversal_build(CV_TRAV_DELETE, NULL, 0, stack, 4);
    char *text = cv_traversal_entry(g, cv_graph_find(g, "c/d"));
    assert_string_equal(text, "{\"s\":[[\"c/a\",2]],\"p\":0}");
    free(text);
    text = cv_traversal_entry(g, cv_graph_find(g, "c/a"));
    assert_string_equal(text, "{\"s\":[],\"p\":2}");
    assert_memory_equal(text, CV_TRAVERSAL_NO_SUCCESSORS, strlen(CV_TRAVERSAL_NO_SUCCESSORS));
    free(text);
    cv_graph_free(g);
}

static bool has_edge(const cv_graph_t *g, const char *from, const char *to)
{
    size_t n;
    const int *succ = cv_graph_succs(g, cv_graph_find(g, from), &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(cv_graph_name(g, succ[i]), to) == 0)
            return true;
    return false;
}

/* Old definition: a <- b <- c. New definition: a <- b, a <- e (c removed, e added). */
static const char *const new_e_deps[] = {"a"};
static const cv_trav_resource_t new_def[] = {
    {"a", NULL, 0}, {"b", b_deps, 1}, {"e", new_e_deps, 1}};
static const cv_trav_resource_t old_recs[] = {{"a", NULL, 0}, {"b", b_deps, 1}, {"c", c_deps, 1}};

static void test_update_has_a_cleanup_node_per_existing_resource(void **state)
{
    (void)state;
    cv_graph_t *g = cv_traversal_build(CV_TRAV_UPDATE, new_def, 3, old_recs, 3);
    assert_non_null(g);
    assert_int_equal(cv_graph_count(g), 6);
    assert_true(cv_graph_find(g, "c/c") >= 0);
    assert_true(cv_graph_find(g, "u/e") >= 0);
    assert_true(cv_graph_find(g, "c/e") < 0); /* e has no record yet */
    cv_graph_free(g);
}

static void test_replaced_version_is_cleaned_after_its_successor_is_done(void **state)
{
    (void)state;
    cv_graph_t *g = cv_traversal_build(CV_TRAV_UPDATE, new_def, 3, old_recs, 3);
    assert_true(has_edge(g, "u/a", "c/a"));
    assert_true(has_edge(g, "u/b", "c/b"));
    cv_graph_free(g);
}

static void test_old_parent_is_cleaned_after_children_moved_over(void **state)
{
    (void)state;
    cv_graph_t *g = cv_traversal_build(CV_TRAV_UPDATE, new_def, 3, old_recs, 3);
    assert_true(has_edge(g, "u/b", "c/a"));
    assert_true(has_edge(g, "u/e", "c/a"));
    cv_graph_free(g);
}

static void test_removed_resource_is_cleaned_before_its_old_parent(void **state)
{
    (void)state;
    cv_graph_t *g = cv_traversal_build(CV_TRAV_UPDATE, new_def, 3, old_recs, 3);
    assert_true(has_edge(g, "c/c", "c/b"));
    assert_true(has_edge(g, "c/b", "c/a"));
    assert_int_equal(npreds(g, "c/c"), 0); /* nothing waits: it left the definition */
    assert_int_equal(cv_graph_find_cycle(g, NULL, 0), 0);
    cv_graph_free(g);
}

static void test_delete_ignores_the_definition(void **state)
{
    (void)state;
    cv_graph_t *g = cv_traversal_build(CV_TRAV_DELETE, new_def, 3, old_recs, 3);
    assert_int_equal(cv_graph_count(g), 3);
    assert_true(cv_graph_find(g, "u/a") < 0);
    cv_graph_free(g);
}

static void test_unsupported_kind_builds_nothing(void **state)
{
    (void)state;
    assert_null(cv_traversal_build(99, stack, 4, NULL, 0));
}

static void test_keys_share_the_stack_hash_tag(void **state)
{
    (void)state;
    char k[CV_KEY_MAX];
    cv_keys_set_prefix("cv:");
    cv_key(k, sizeof(k), CV_KEY_STACK, "abc", 0, NULL);
    assert_string_equal(k, "cv:{abc}:stack");
    cv_key(k, sizeof(k), CV_KEY_SP, "abc", 7, "u/web");
    assert_string_equal(k, "cv:{abc}:sp:7:u/web");
    cv_key(k, sizeof(k), CV_KEY_LEASE, "abc", 0, "web");
    assert_string_equal(k, "cv:{abc}:lease:web");
    cv_key(k, sizeof(k), CV_KEY_GRAPH, "abc", 12, NULL);
    assert_string_equal(k, "cv:{abc}:graph:12");
    assert_int_equal(cv_keys_set_prefix("x:"), 0);
    cv_key(k, sizeof(k), CV_KEY_STACKS, NULL, 0, NULL);
    assert_string_equal(k, "x:stacks");
    cv_keys_set_prefix("cv:");
}

static void test_long_keys_are_truncated_not_overflowed(void **state)
{
    (void)state;
    char k[16];
    size_t n = cv_key(k, sizeof(k), CV_KEY_STACK, "0123456789abcdef", 0, NULL);
    assert_int_equal(n, sizeof(k) - 1);
    assert_int_equal(strlen(k), sizeof(k) - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_traversal_runs_parents_before_children),
        cmocka_unit_test(test_delete_traversal_runs_children_before_parents),
        cmocka_unit_test(test_entry_lists_successors_with_their_predecessor_counts_and_its_own),
        cmocka_unit_test(test_update_has_a_cleanup_node_per_existing_resource),
        cmocka_unit_test(test_replaced_version_is_cleaned_after_its_successor_is_done),
        cmocka_unit_test(test_old_parent_is_cleaned_after_children_moved_over),
        cmocka_unit_test(test_removed_resource_is_cleaned_before_its_old_parent),
        cmocka_unit_test(test_delete_ignores_the_definition),
        cmocka_unit_test(test_unsupported_kind_builds_nothing),
        cmocka_unit_test(test_keys_share_the_stack_hash_tag),
        cmocka_unit_test(test_long_keys_are_truncated_not_overflowed),
    };
    return cmocka_run_group_tests_name("traversal", tests, NULL, NULL);
}
