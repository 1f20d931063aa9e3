/*
 * Specification of `convergectl graph`'s drawing (cli/status/cli_graph.h): one
 * node per resource labelled name, type, status and filled by status, one
 * edge from a resource to each resource it depends on, and dot strings
 * escaped so that any name makes a graph that parses, distinct names
 * staying distinct nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_graph.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_a_chain_draws_each_resource_and_each_dependency(void **state)
{
    (void)state;
    static const char *const on_a[] = {"a"}, *const on_b[] = {"b"};
    const cli_graph_node_t nodes[] = {
        {"a", "OS::Heat::TestResource", "CREATE_COMPLETE", NULL, 0},
        {"b", "OS::Heat::TestResource", "CREATE_IN_PROGRESS", on_a, 1},
        {"c", "OS::Heat::Value", "INIT_COMPLETE", on_b, 1},
    };
    char *dot = cli_graph_dot("chain", nodes, 3);
    assert_non_null(dot);
    assert_true(strncmp(dot, "digraph \"chain\" {\n", 18) == 0);
    assert_contains(dot, "  \"a\" [label=\"a\\nOS::Heat::TestResource\\nCREATE_COMPLETE\", "
                         "fillcolor=\"palegreen\"];\n");
    assert_contains(dot, "  \"b\" [label=\"b\\nOS::Heat::TestResource\\nCREATE_IN_PROGRESS\", "
                         "fillcolor=\"yellow\"];\n");
    assert_contains(dot, "  \"c\" [label=\"c\\nOS::Heat::Value\\nINIT_COMPLETE\", "
                         "fillcolor=\"lightgrey\"];\n");
    assert_contains(dot, "  \"b\" -> \"a\";\n");
    assert_contains(dot, "  \"c\" -> \"b\";\n");
    assert_int_equal(count(dot, "\" -> \""), 2);
    assert_int_equal(count(dot, "[label="), 3);
    assert_string_equal(dot + strlen(dot) - 2, "}\n");
    free(dot);
}

static void test_a_dependency_on_no_node_draws_no_edge(void **state)
{
    (void)state;
    static const char *const deps[] = {"gone", "a"};
    const cli_graph_node_t nodes[] = {
        {"a", "T", "CREATE_COMPLETE", NULL, 0},
        {"b", "T", "CREATE_COMPLETE", deps, 2},
    };
    char *dot = cli_graph_dot("s", nodes, 2);
    assert_int_equal(count(dot, "\" -> \""), 1);
    assert_contains(dot, "\"b\" -> \"a\"");
    assert_null(strstr(dot, "gone"));
    free(dot);
}

static void test_a_stack_without_resources_is_an_empty_graph(void **state)
{
    (void)state;
    char *dot = cli_graph_dot("empty", NULL, 0);
    assert_int_equal(count(dot, "\" -> \""), 0);
    assert_int_equal(count(dot, "[label="), 0);
    assert_string_equal(dot + strlen(dot) - 2, "}\n");
    free(dot);
}

static void test_nodes_are_filled_by_status(void **state)
{
    (void)state;
    assert_string_equal(cli_graph_colour("CREATE_COMPLETE"), "palegreen");
    assert_string_equal(cli_graph_colour("UPDATE_COMPLETE"), "palegreen");
    assert_string_equal(cli_graph_colour("DELETE_IN_PROGRESS"), "yellow");
    assert_string_equal(cli_graph_colour("CREATE_FAILED"), "salmon");
    assert_string_equal(cli_graph_colour("CHECK_FAILED"), "salmon");
    assert_string_equal(cli_graph_colour("INIT_COMPLETE"), "lightgrey");
    assert_string_equal(cli_graph_colour(""), "lightgrey");
    assert_string_equal(cli_graph_colour("_FAILED"), "lightgrey");
}

static void test_quotes_and_backslashes_are_escaped(void **state)
{
    (void)state;
    static const char *const deps[] = {"a\"b"};
    const cli_graph_node_t nodes[] = {
        {"a\"b", "My::\"T\"", "CREATE_COMPLETE", NULL, 0},
        {"c\\", "T\\x", "CREATE_COMPLETE", deps, 1},
    };
    char *dot = cli_graph_dot("s\"", nodes, 2);
    assert_contains(dot, "digraph \"s\\\"\" {");
    assert_contains(dot, "  \"a\\\"b\" [label=\"a\\\"b\\nMy::\\\"T\\\"\\n");
    assert_contains(dot, "  \"c\\\\\" [label=\"c\\\\\\nT\\\\x\\n");
    assert_contains(dot, "  \"c\\\\\" -> \"a\\\"b\";\n");
    free(dot);
}

/* A control character cannot be written raw (SVG is XML, which refuses
 * most of them); its escape keeps it apart from a name spelling it out. */
static void test_control_characters_are_escaped_and_names_stay_distinct(void **state)
{
    (void)state;
    const cli_graph_node_t nodes[] = {
        {"x\x01", "T", "CREATE_COMPLETE", NULL, 0},
        {"x\\u0001", "T", "CREATE_COMPLETE", NULL, 0},
        {"new\nline", "T", "CREATE_COMPLETE", NULL, 0},
    };
    char *dot = cli_graph_dot("s", nodes, 3);
    assert_contains(dot, "  \"x\\u0001\" [label=\"x\\\\u0001\\n");
    assert_contains(dot, "  \"x\\\\u0001\" [label=\"x\\\\u0001\\n");
    assert_contains(dot, "  \"new\\u000aline\" [label=\"new\\\\u000aline\\n");
    for (const char *p = dot; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\n')
            fail_msg("a raw control character in: %s", dot);
    free(dot);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_chain_draws_each_resource_and_each_dependency),
        cmocka_unit_test(test_a_dependency_on_no_node_draws_no_edge),
        cmocka_unit_test(test_a_stack_without_resources_is_an_empty_graph),
        cmocka_unit_test(test_nodes_are_filled_by_status),
        cmocka_unit_test(test_quotes_and_backslashes_are_escaped),
        cmocka_unit_test(test_control_characters_are_escaped_and_names_stay_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
