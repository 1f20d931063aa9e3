/*
 * Specification of what `convergectl nodes` decides without Redis
 * (cli/status/cli_nodemap.h): node status from the heartbeat and the admin state,
 * capacities inherited from the node type, measured load over declared
 * load, load bars, the table and the FD x UD map.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_nodemap.h"
#include "test_util.h"

/* Two nodes of type Small (MemoryMB 1024, cpu 4) in fd:/r0, UD0 and UD1;
 * n1 runs two replicas (one reported healthy), n2 is draining and its agent
 * measured its load; n3 has no heartbeat and its own capacity. */
static json_t *model(void)
{
    return tu_json(
        "{\"now\": 1000,"
        " \"settings\": {\"nodeTypes\": {\"Small\": {\"capacities\": {\"MemoryMB\": 1024, \"cpu\": "
        "4}}}},"
        " \"nodes\": {"
        "  \"n1\": {\"name\": \"n1\", \"type\": \"Small\", \"faultDomain\": \"fd:/r0\", "
        "\"upgradeDomain\": \"UD0\","
        "          \"properties\": {\"zone\": \"a\"}},"
        "  \"n2\": {\"name\": \"n2\", \"type\": \"Small\", \"faultDomain\": \"fd:/r0\", "
        "\"upgradeDomain\": \"UD1\"},"
        "  \"n3\": {\"name\": \"n3\", \"faultDomain\": \"fd:/r1\", \"upgradeDomain\": \"UD0\","
        "          \"capacities\": {\"MemoryMB\": 2048}}},"
        " \"node\": {\"n2\": {\"admin\": \"draining\", \"load\": {\"MemoryMB\": 900}}},"
        " \"alive\": {\"n1\": 2500, \"n2\": 1200, \"n3\": 0},"
        " \"assign\": {\"n1\": {"
        "   \"s/0/1\": {\"rid\": \"s/0/1\", \"name\": \"web-0.demo\", \"role\": \"instance\","
        "              \"load\": {\"MemoryMB\": 256, \"cpu\": 1}},"
        "   \"d/0/1\": {\"rid\": \"d/0/1\", \"name\": \"db-0.demo\", \"role\": \"primary\","
        "              \"load\": {\"MemoryMB\": 512}}}},"
        " \"report\": {\"n1\": {\"s/0/1\": {\"rid\": \"s/0/1\", \"state\": \"healthy\"}}},"
        " \"services\": {}}");
}

static const json_t *row_named(const json_t *rows, const char *name)
{
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0)
            return r;
    }
    fail_msg("no row %s", name);
    return NULL;
}

static json_int_t num(const json_t *row, const char *part, const char *metric)
{
    return json_integer_value(json_object_get(json_object_get(row, part), metric));
}

static void test_status_is_the_heartbeat_and_admin_is_the_operators_word(void **state)
{
    (void)state;
    json_t *m = model(), *rows = cli_nodes_rows(m);
    char buf[64];
    assert_int_equal(json_array_size(rows), 3);
    cli_node_status_text(row_named(rows, "n1"), buf, sizeof(buf));
    assert_string_equal(buf, "up");
    cli_node_status_text(row_named(rows, "n2"), buf, sizeof(buf));
    assert_string_equal(buf, "up/draining");
    cli_node_status_text(row_named(rows, "n3"), buf, sizeof(buf));
    assert_string_equal(buf, "down");
    json_decref(rows);
    json_decref(m);
}

static void test_capacities_come_from_the_node_type_and_the_node_overrides(void **state)
{
    (void)state;
    json_t *m = model(), *rows = cli_nodes_rows(m);
    assert_int_equal(num(row_named(rows, "n1"), "capacities", "MemoryMB"), 1024);
    assert_int_equal(num(row_named(rows, "n1"), "capacities", "cpu"), 4);
    assert_int_equal(num(row_named(rows, "n3"), "capacities", "MemoryMB"), 2048);
    assert_null(json_object_get(json_object_get(row_named(rows, "n3"), "capacities"), "cpu"));
    json_decref(rows);
    json_decref(m);
}

static void test_load_is_measured_when_the_agent_reports_it_else_declared(void **state)
{
    (void)state;
    json_t *m = model(), *rows = cli_nodes_rows(m);
    const json_t *n1 = row_named(rows, "n1"), *n2 = row_named(rows, "n2");
    assert_int_equal(num(n1, "load", "MemoryMB"), 768); /* 256 + 512 declared */
    assert_int_equal(num(n1, "load", "cpu"), 1);
    assert_string_equal(json_string_value(json_object_get(n1, "load_source")), "declared");
    assert_int_equal(num(n2, "load", "MemoryMB"), 900);
    assert_string_equal(json_string_value(json_object_get(n2, "load_source")), "measured");
    json_decref(rows);
    json_decref(m);
}

static void test_the_agent_says_where_it_runs_and_how_long_its_heartbeat_lives(void **state)
{
    (void)state;
    json_t *m = model();
    json_object_set_new(json_object_get(m, "node"), "n1",
                        tu_json("{\"agent\": \"vm:42:1000.5\", \"address\": \"127.0.0.1\","
                                " \"ports\": \"31000-31049\", \"admin\": \"enabled\"}"));
    json_t *rows = cli_nodes_rows(m);
    const json_t *agent = json_object_get(row_named(rows, "n1"), "agent");
    assert_string_equal(json_string_value(json_object_get(agent, "agent")), "vm:42:1000.5");
    assert_string_equal(json_string_value(json_object_get(agent, "ports")), "31000-31049");
    assert_int_equal(json_integer_value(json_object_get(agent, "heartbeat_ms")), 2500);
    assert_null(json_object_get(agent, "admin"));
    json_decref(rows);
    json_decref(m);
}

static void test_replicas_are_listed_with_their_reported_state(void **state)
{
    (void)state;
    json_t *m = model(), *rows = cli_nodes_rows(m);
    const json_t *n1 = row_named(rows, "n1");
    json_t *list = json_object_get(n1, "replica_list");
    assert_int_equal(json_integer_value(json_object_get(n1, "replicas")), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "name")),
                        "db-0.demo");
    assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "state")),
                        "assigned"); /* no report yet */
    assert_string_equal(json_string_value(json_object_get(json_array_get(list, 1), "state")),
                        "healthy");
    json_decref(rows);
    json_decref(m);
}

static void test_an_unreadable_description_is_a_row_with_its_error(void **state)
{
    (void)state;
    json_t *m = model();
    json_object_set_new(json_object_get(m, "nodes"), "bad",
                        tu_json("{\"error\": \"not JSON: x\"}"));
    json_t *rows = cli_nodes_rows(m);
    const json_t *bad = row_named(rows, "bad");
    assert_string_equal(json_string_value(json_object_get(bad, "error")), "not JSON: x");
    assert_string_equal(json_string_value(json_object_get(bad, "fault_domain")), "fd:/bad");
    json_decref(rows);
    json_decref(m);
}

static void test_a_load_bar_fills_in_proportion_to_capacity(void **state)
{
    (void)state;
    char buf[128];
    cli_load_bar(512, 1024, 10, "MemoryMB", buf, sizeof(buf));
    assert_string_equal(buf, "[#####.....]  50% MemoryMB 512/1024");
    cli_load_bar(0, 4, 10, "cpu", buf, sizeof(buf));
    assert_string_equal(buf, "[..........]   0% cpu 0/4");
    cli_load_bar(1, 1000, 10, "cpu", buf, sizeof(buf));
    assert_string_equal(buf, "[#.........]   0% cpu 1/1000"); /* some load is never none */
}

static void test_a_load_bar_over_capacity_is_full_and_marked(void **state)
{
    (void)state;
    char buf[128];
    cli_load_bar(1536, 1024, 10, "MemoryMB", buf, sizeof(buf));
    assert_string_equal(buf, "[##########]!150% MemoryMB 1536/1024");
}

static void test_a_metric_without_capacity_has_no_bar(void **state)
{
    (void)state;
    char buf[128];
    cli_load_bar(12, -1, 10, "Connections", buf, sizeof(buf));
    assert_string_equal(buf, "Connections 12 (no capacity)");
}

static void test_the_table_has_one_line_per_node_under_its_header(void **state)
{
    (void)state;
    json_t *m = model(), *rows = cli_nodes_rows(m), *table = cli_nodes_table(rows);
    assert_int_equal(json_array_size(table), 4);
    json_t *n1 = json_array_get(table, 1);
    assert_string_equal(json_string_value(json_array_get(json_array_get(table, 0), 0)), "NAME");
    assert_string_equal(json_string_value(json_array_get(n1, 0)), "n1");
    assert_string_equal(json_string_value(json_array_get(n1, 2)), "fd:/r0");
    assert_string_equal(json_string_value(json_array_get(n1, 5)), "2");
    assert_string_equal(json_string_value(json_array_get(n1, 6)), "MemoryMB 768/1024 cpu 1/4");
    assert_string_equal(json_string_value(json_array_get(n1, 7)), "zone=a");
    json_decref(table);
    json_decref(rows);
    json_decref(m);
}

/* The line of the map that holds `needle`. */
static void line_with(const char *map, const char *needle, char *out, size_t size)
{
    const char *at = strstr(map, needle);
    if (!at)
        fail_msg("the map has no \"%s\":\n%s", needle, map);
    const char *start = at, *end = strchr(at, '\n');
    while (start > map && start[-1] != '\n')
        start--;
    snprintf(out, size, "%.*s", (int)(end - start), start);
}

static void test_the_map_is_a_grid_of_fault_domains_by_upgrade_domains(void **state)
{
    (void)state;
    json_t *m = model(), *rows = cli_nodes_rows(m);
    char *map = cli_nodes_map(rows, false);
    char line[512];
    assert_contains(map, "3 nodes: 2 up, 1 down, 1 draining; 2 replicas assigned");
    line_with(map, "FD \\ UD", line, sizeof(line));
    assert_true(strstr(line, "UD0") < strstr(line, "UD1"));
    /* n1 and n2 share the row of fd:/r0, in the columns of UD0 and UD1. */
    line_with(map, "fd:/r0", line, sizeof(line));
    assert_contains(line, "n1  up  2 replicas");
    assert_contains(line, "n2  up/draining  0 replicas");
    assert_true(strstr(line, "n1") < strstr(line, "n2"));
    line_with(map, "fd:/r1", line, sizeof(line));
    assert_contains(line, "n3  down  0 replicas");
    line_with(map, "db-0.demo", line, sizeof(line));
    assert_contains(line, "db-0.demo*(assigned) web-0.demo");
    line_with(map, "MemoryMB 768/1024", line, sizeof(line));
    assert_contains(line, "[########..]  75% MemoryMB 768/1024");
    assert_null(strchr(map, '\033')); /* no colour unless asked */
    free(map);
    json_decref(rows);
    json_decref(m);
}

static void test_every_line_of_the_map_has_the_same_width(void **state)
{
    (void)state;
    json_t *m = model(), *rows = cli_nodes_rows(m);
    char *map = cli_nodes_map(rows, false);
    const char *grid = strchr(map, '\n') + 1; /* after the summary */
    size_t width = (size_t)(strchr(grid, '\n') - grid);
    for (const char *l = grid; *l == '+' || *l == '|'; l = strchr(l, '\n') + 1)
        assert_int_equal((size_t)(strchr(l, '\n') - l), width);
    free(map);
    json_decref(rows);
    json_decref(m);
}

static void test_colours_mark_status_and_load_without_changing_the_layout(void **state)
{
    (void)state;
    json_t *m = model(), *rows = cli_nodes_rows(m);
    char *map = cli_nodes_map(rows, true);
    assert_contains(map, "\033[31mn3  down  0 replicas\033[0m");
    assert_contains(map, "\033[33mn2  up/draining");
    assert_contains(map, "\033[32mn1  up");
    free(map);
    json_decref(rows);
    json_decref(m);
}

static void test_many_replicas_are_wrapped_and_counted(void **state)
{
    (void)state;
    json_t *m = model();
    json_t *assign = json_object_get(json_object_get(m, "assign"), "n1");
    for (int i = 1; i < 40; i++) {
        char rid[32], name[32];
        snprintf(rid, sizeof(rid), "s/%d/1", i);
        snprintf(name, sizeof(name), "web-%d.demo", i);
        json_object_set_new(assign, rid, json_pack("{s:s, s:s}", "rid", rid, "name", name));
    }
    json_t *rows = cli_nodes_rows(m);
    char *map = cli_nodes_map(rows, false);
    assert_contains(map, "more");
    assert_null(strstr(map, "web-39.demo"));
    free(map);
    json_decref(rows);
    json_decref(m);
}

static void test_a_crowded_cell_gives_each_node_one_line_with_its_most_loaded_metric(void **state)
{
    (void)state;
    json_t *m = model();
    json_t *nodes = json_object_get(m, "nodes"), *alive = json_object_get(m, "alive");
    for (int i = 0; i < 5; i++) { /* six nodes in fd:/r0 x UD0 with n1 */
        char name[16];
        snprintf(name, sizeof(name), "c%d", i);
        json_object_set_new(nodes, name,
                            json_pack("{s:s, s:s, s:s, s:s}", "name", name, "type", "Small",
                                      "faultDomain", "fd:/r0", "upgradeDomain", "UD0"));
        json_object_set_new(alive, name, json_integer(1000));
    }
    json_t *rows = cli_nodes_rows(m);
    char *map = cli_nodes_map(rows, false), line[512];
    /* n1: MemoryMB 768/1024 (75%) is more loaded than cpu 1/4 (25%). */
    line_with(map, "n1 up 2r", line, sizeof(line));
    assert_contains(line, "n1 up 2r [########..]  75% MemoryMB ");
    assert_null(strstr(line, "768")); /* the figures are in the full map */
    line_with(map, "c0 up 0r", line, sizeof(line));
    assert_null(strstr(map, "web-0.demo")); /* no replica names */
    assert_contains(map, "One line per node");
    free(map);
    json_decref(rows);
    json_decref(m);
}

static void test_no_nodes_is_a_summary_only(void **state)
{
    (void)state;
    json_t *rows = json_array();
    char *map = cli_nodes_map(rows, false);
    assert_string_equal(map, "0 nodes: 0 up, 0 down; 0 replicas assigned\n");
    free(map);
    json_decref(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_is_the_heartbeat_and_admin_is_the_operators_word),
        cmocka_unit_test(test_capacities_come_from_the_node_type_and_the_node_overrides),
        cmocka_unit_test(test_load_is_measured_when_the_agent_reports_it_else_declared),
        cmocka_unit_test(test_the_agent_says_where_it_runs_and_how_long_its_heartbeat_lives),
        cmocka_unit_test(test_replicas_are_listed_with_their_reported_state),
        cmocka_unit_test(test_an_unreadable_description_is_a_row_with_its_error),
        cmocka_unit_test(test_a_load_bar_fills_in_proportion_to_capacity),
        cmocka_unit_test(test_a_load_bar_over_capacity_is_full_and_marked),
        cmocka_unit_test(test_a_metric_without_capacity_has_no_bar),
        cmocka_unit_test(test_the_table_has_one_line_per_node_under_its_header),
        cmocka_unit_test(test_the_map_is_a_grid_of_fault_domains_by_upgrade_domains),
        cmocka_unit_test(test_every_line_of_the_map_has_the_same_width),
        cmocka_unit_test(test_colours_mark_status_and_load_without_changing_the_layout),
        cmocka_unit_test(test_many_replicas_are_wrapped_and_counted),
        cmocka_unit_test(test_a_crowded_cell_gives_each_node_one_line_with_its_most_loaded_metric),
        cmocka_unit_test(test_no_nodes_is_a_summary_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
