/*
 * Specification of converge-web's decided documents (cli/console/web_view.h): a
 * stack's graph (nodes in template order with their status and state,
 * edges from dependency to dependent) and the cluster map (domains, node
 * status, load against capacity and buffer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_util.h"
#include "web_view.h"

static const char *sget(const json_t *o, const char *path_key)
{
    const char *s = json_string_value(json_object_get(o, path_key));
    return s ? s : "(none)";
}

static void test_graph_nodes_carry_their_record_status_and_state(void **state)
{
    (void)state;
    json_t *res = tu_json("[{\"name\": \"a\", \"type\": \"T\", \"depends\": []},"
                          " {\"name\": \"b\", \"type\": \"T\", \"depends\": [\"a\"]},"
                          " {\"name\": \"c\", \"type\": \"T\", \"depends\": [\"a\", \"b\"]}]");
    json_t *rec = tu_json("{\"a\": {\"status\": \"CREATE_COMPLETE\", \"physical_id\": \"p1\"},"
                          " \"b\": {\"status\": \"CREATE_IN_PROGRESS\"}}");
    json_t *g = web_view_graph(res, rec);
    json_t *nodes = json_object_get(g, "nodes");
    assert_int_equal(json_array_size(nodes), 3);
    assert_string_equal(sget(json_array_get(nodes, 0), "state"), "complete");
    assert_string_equal(sget(json_array_get(nodes, 0), "physical_id"), "p1");
    assert_string_equal(sget(json_array_get(nodes, 1), "state"), "in_progress");
    assert_string_equal(sget(json_array_get(nodes, 2), "status"), "INIT_COMPLETE");
    assert_string_equal(sget(json_array_get(nodes, 2), "state"), "init");
    json_t *want = tu_json("[{\"from\": \"a\", \"to\": \"b\"}, {\"from\": \"a\", \"to\": \"c\"},"
                           " {\"from\": \"b\", \"to\": \"c\"}]");
    assert_true(json_equal(json_object_get(g, "edges"), want));
    json_decref(want);
    json_decref(g);
    json_decref(rec);
    json_decref(res);
}

/* Heat's resource_type: the type the template wrote, not the one the
 * environment's resource_registry maps it to (cli_reported_type). */
static void test_graph_nodes_show_the_type_the_template_wrote(void **state)
{
    (void)state;
    json_t *res = tu_json(
        "[{\"name\": \"fresh\", \"type\": \"OS::Heat::None\", \"declared_type\": \"My::Thing\"},"
        " {\"name\": \"done\", \"type\": \"thing.yaml\", \"declared_type\": \"My::Thing\"},"
        " {\"name\": \"renamed\", \"type\": \"OS::Heat::None\", \"declared_type\": \"My::New\"},"
        " {\"name\": \"replacing\", \"type\": \"OS::Heat::TestResource\","
        "  \"declared_type\": \"My::Thing\"},"
        " {\"name\": \"old\", \"type\": \"OS::Heat::None\"}]");
    json_t *rec =
        tu_json("{\"done\": {\"type\": \"thing.yaml\", \"declared_type\": \"My::Thing\"},"
                " \"renamed\": {\"type\": \"OS::Heat::None\", \"declared_type\": \"My::Old\"},"
                " \"replacing\": {\"type\": \"OS::Heat::None\", \"declared_type\": \"My::Was\"},"
                " \"old\": {\"type\": \"OS::Heat::None\"}}");
    json_t *g = web_view_graph(res, rec);
    json_t *nodes = json_object_get(g, "nodes");
    assert_string_equal(sget(json_array_get(nodes, 0), "type"), "My::Thing");
    assert_string_equal(sget(json_array_get(nodes, 1), "type"), "My::Thing");
    /* Same implementation: the running definition's (a type that never
     * updates records nothing when only the written type changed). */
    assert_string_equal(sget(json_array_get(nodes, 2), "type"), "My::New");
    /* Another implementation: the recorded version's, until it is replaced. */
    assert_string_equal(sget(json_array_get(nodes, 3), "type"), "My::Was");
    assert_string_equal(sget(json_array_get(nodes, 4), "type"), "OS::Heat::None");
    json_decref(g);
    json_decref(rec);
    json_decref(res);
}

static void test_a_dependency_on_no_resource_draws_no_edge(void **state)
{
    (void)state;
    json_t *res = tu_json("[{\"name\": \"a\", \"type\": \"T\", \"depends\": [\"gone\"]}]");
    json_t *rec = json_object();
    json_t *g = web_view_graph(res, rec);
    assert_int_equal(json_array_size(json_object_get(g, "edges")), 0);
    json_decref(g);
    json_decref(rec);
    json_decref(res);
}

static void test_states_follow_the_status_suffix(void **state)
{
    (void)state;
    assert_string_equal(web_view_state("DELETE_IN_PROGRESS"), "in_progress");
    assert_string_equal(web_view_state("CHECK_FAILED"), "failed");
    assert_string_equal(web_view_state("ROLLBACK_COMPLETE"), "complete");
    assert_string_equal(web_view_state("INIT_COMPLETE"), "init");
    assert_string_equal(web_view_state(""), "init");
}

static json_t *rows(void)
{
    return tu_json(
        "[{\"name\": \"n1\", \"type\": \"W\", \"fault_domain\": \"fd:/b\", \"upgrade_domain\": "
        "\"UD1\", \"status\": \"up\", \"admin\": \"enabled\", \"capacities\": {\"MemoryMB\": "
        "1000}, \"load\": {\"MemoryMB\": 250}, \"replica_list\": [{\"name\": \"web-0\"}]},"
        " {\"name\": \"n2\", \"type\": \"W\", \"fault_domain\": \"fd:/a\", \"upgrade_domain\": "
        "\"UD0\", \"status\": \"down\", \"admin\": \"enabled\", \"capacities\": {}, \"load\": "
        "{\"cpu\": 2}},"
        " {\"name\": \"n3\", \"type\": \"W\", \"fault_domain\": \"fd:/a\", \"upgrade_domain\": "
        "\"UD1\", \"status\": \"up\", \"admin\": \"draining\", \"capacities\": {}, \"load\": {}}]");
}

static void test_the_cluster_map_lists_domains_sorted_and_counts_nodes(void **state)
{
    (void)state;
    json_t *r = rows();
    json_t *m = web_view_cluster(r, NULL, NULL);
    json_t *fds = tu_json("[\"fd:/a\", \"fd:/b\"]"), *uds = tu_json("[\"UD0\", \"UD1\"]");
    assert_true(json_equal(json_object_get(m, "fault_domains"), fds));
    assert_true(json_equal(json_object_get(m, "upgrade_domains"), uds));
    json_t *want =
        tu_json("{\"nodes\": 3, \"up\": 1, \"down\": 1, \"disabled\": 1, \"replicas\": 1}");
    assert_true(json_equal(json_object_get(m, "summary"), want));
    json_t *nodes = json_object_get(m, "nodes");
    assert_string_equal(sget(json_array_get(nodes, 2), "status"), "disabled");
    assert_int_equal(json_array_size(json_object_get(json_array_get(nodes, 0), "replicas")), 1);
    json_decref(want);
    json_decref(fds);
    json_decref(uds);
    json_decref(m);
    json_decref(r);
}

static void test_a_metric_shows_load_capacity_and_the_buffer_kept_free(void **state)
{
    (void)state;
    json_t *r = rows();
    json_t *settings = tu_json("{\"settings\": {\"nodeBufferPercentage\": {\"MemoryMB\": 0.2}}}");
    json_t *m = web_view_cluster(r, settings, NULL);
    json_t *n1 = json_array_get(json_object_get(m, "nodes"), 0);
    json_t *mem = json_array_get(json_object_get(n1, "metrics"), 0);
    assert_string_equal(sget(mem, "name"), "MemoryMB");
    assert_float_equal(json_number_value(json_object_get(mem, "load")), 250, 1e-9);
    assert_float_equal(json_number_value(json_object_get(mem, "capacity")), 1000, 1e-9);
    assert_float_equal(json_number_value(json_object_get(mem, "buffer")), 0.2, 1e-9);
    assert_float_equal(json_number_value(json_object_get(mem, "usable")), 800, 1e-9);
    json_t *n2 = json_array_get(json_object_get(m, "nodes"), 1);
    json_t *cpu = json_array_get(json_object_get(n2, "metrics"), 0);
    assert_true(json_is_null(json_object_get(cpu, "capacity")));
    json_decref(m);
    json_decref(settings);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_nodes_carry_their_record_status_and_state),
        cmocka_unit_test(test_graph_nodes_show_the_type_the_template_wrote),
        cmocka_unit_test(test_a_dependency_on_no_resource_draws_no_edge),
        cmocka_unit_test(test_states_follow_the_status_suffix),
        cmocka_unit_test(test_the_cluster_map_lists_domains_sorted_and_counts_nodes),
        cmocka_unit_test(test_a_metric_shows_load_capacity_and_the_buffer_kept_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
