/*
 * The worked examples of Service Fabric's Cluster Resource Manager docs
 * (describing a cluster) end to end: the manifests in tests/data/placement
 * read by the real loaders, placed and checked. Each test names the figure
 * it reproduces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_place_fixture.h"

static json_t *read_json(const char *name)
{
    char path[512];
    json_error_t e;
    snprintf(path, sizeof(path), "%s/placement/%s", CV_TEST_DATA, name);
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fail_msg("%s: %s", path, e.text);
    return j;
}

static cv_cluster_t *cluster(const char *name)
{
    char err[512];
    cv_cluster_t *c = NULL;
    json_t *j = read_json(name);
    if (cv_cluster_load(j, name, &c, err, sizeof(err)))
        fail_msg("%s", err);
    json_decref(j);
    return c;
}

static cv_service_t *service_json(json_t *j, const char *name)
{
    char err[512];
    cv_service_t *s = NULL;
    if (cv_service_load(j, name, &s, err, sizeof(err)))
        fail_msg("%s", err);
    json_decref(j);
    return s;
}

static cv_service_t *service(const char *name)
{
    return service_json(read_json(name), name);
}

static cv_layout_t *layout_json(cv_cluster_t *c, json_t *j, const char *name)
{
    char err[512];
    cv_layout_t *l = NULL;
    if (cv_layout_load(j, name, c, &l, err, sizeof(err)))
        fail_msg("%s", err);
    json_decref(j);
    return l;
}

static const char *placed_on(const char *cluster_file, const char *service_file,
                             cv_distribution_t d)
{
    static char nodes[256];
    cv_cluster_t *c = cluster(cluster_file);
    cv_service_t *s = service(service_file);
    s->distribution = d;
    json_t *r = cv_place(c, s, NULL, CV_PLACE_NEW);
    snprintf(nodes, sizeof(nodes), "%s", fx_nodes(r));
    json_decref(r);
    cv_service_free(s);
    cv_cluster_free(c);
    return nodes;
}

/* ---------------------------------------------------------------- FD and UD */

static void test_seed_six_nodes_five_replicas_go_to_n1_to_n5(void **state)
{
    (void)state;
    assert_string_equal(
        placed_on("cluster_5x5_6nodes.json", "svc_stateful5.json", CV_DIST_MAX_DIFFERENCE),
        "N1,N2,N3,N4,N5");
}

static void test_seed_ten_nodes_five_replicas_still_go_to_n1_to_n5(void **state)
{
    (void)state;
    assert_string_equal(
        placed_on("cluster_5x5_10nodes.json", "svc_stateful5.json", CV_DIST_MAX_DIFFERENCE),
        "N1,N2,N3,N4,N5");
}

static void test_seed_eight_nodes_adaptive_uses_quorum_safe(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_5x5_8nodes.json");
    cv_service_t *s = service("svc_stateful5.json");
    assert_int_equal(cv_place_policy(c, s), CV_DIST_QUORUM_SAFE);
    cv_service_free(s);
    s = service("svc_stateful4.json");
    assert_int_equal(cv_place_policy(c, s), CV_DIST_MAX_DIFFERENCE);
    cv_service_free(s);
    cv_cluster_free(c);
}

static void test_seed_eight_nodes_four_replicas_spread_over_n1_to_n4(void **state)
{
    (void)state;
    assert_string_equal(
        placed_on("cluster_5x5_8nodes.json", "svc_stateful4.json", CV_DIST_ADAPTIVE),
        "N1,N2,N3,N4");
}

static void test_seed_without_n1_the_rebuilt_r1_lands_on_n4(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_5x5_7nodes_without_n1.json");
    json_t *lj =
        json_loads("{\"services\": [{\"name\": \"svc5\", \"serviceType\": \"StatefulType\","
                   " \"replicas\": 5, \"stateful\": true, \"placements\": ["
                   "{\"replica\": 1, \"role\": \"primary\", \"node\": \"N6\"},"
                   "{\"replica\": 2, \"role\": \"secondary\", \"node\": \"N7\"},"
                   "{\"replica\": 3, \"role\": \"secondary\", \"node\": \"N3\"},"
                   "{\"replica\": 4, \"role\": \"secondary\", \"node\": \"N5\"}]}]}",
                   0, NULL);
    cv_layout_t *l = layout_json(c, lj, "layout");
    cv_service_t *s = service("svc_stateful5.json");
    json_t *r = cv_place(c, s, l, CV_PLACE_REPLACE);
    assert_string_equal(json_string_value(json_object_get(r, "policy")), "maxDifference");
    assert_string_equal(fx_nodes(r), "N4,N6,N7,N3,N5");
    assert_int_equal(json_array_size(json_object_get(r, "health")), 0);
    json_decref(r);
    cv_service_free(s);
    cv_layout_free(l);
    cv_cluster_free(c);
}

/* ---------------------------------------------------------------- capacity */

static json_t *place_file(const char *cluster_file, const char *service_file,
                          cv_place_action_t action)
{
    cv_cluster_t *c = cluster(cluster_file);
    cv_service_t *s = service(service_file);
    json_t *r = cv_place(c, s, NULL, action);
    cv_service_free(s);
    cv_cluster_free(c);
    return r;
}

static size_t nplaced(const json_t *r)
{
    return json_array_size(json_object_get(r, "placements"));
}

static void test_seed_buffer_keeps_new_placements_below_80(void **state)
{
    (void)state;
    json_t *r = place_file("cluster_cpu_buffer.json", "svc_cpu20.json", CV_PLACE_NEW);
    assert_int_equal(nplaced(r), 0); /* 70 + 20 = 90 > 80 */
    assert_string_equal(fx_eliminated(r, "NodeCapacity"), "N1,N2,N3");
    json_decref(r);
    r = place_file("cluster_cpu_buffer.json", "svc_cpu20.json", CV_PLACE_REPLACE);
    assert_int_equal(nplaced(r), 1); /* 90 <= 100 */
    json_decref(r);
}

static void test_seed_overbooking_allows_120_for_availability_actions(void **state)
{
    (void)state;
    json_t *r = place_file("cluster_cpu_overbooking.json", "svc_cpu20.json", CV_PLACE_NEW);
    assert_int_equal(nplaced(r), 0); /* 90 + 20 = 110 > 100 */
    json_decref(r);
    r = place_file("cluster_cpu_overbooking.json", "svc_cpu20.json", CV_PLACE_UPGRADE);
    assert_int_equal(nplaced(r), 1); /* 110 <= 120 */
    json_decref(r);
}

static void test_seed_infinite_overbooking_has_no_limit(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_cpu_overbooking.json");
    cv_service_t *s = service_json(
        json_loads("{\"name\": \"big\", \"serviceType\": \"T\", \"replicas\": 3, \"metrics\": "
                   "[{\"name\": \"MetricWithInfiniteOverbooking\", \"primaryLoad\": 1000000}]}",
                   0, NULL),
        "big");
    json_t *r = cv_place(c, s, NULL, CV_PLACE_FIX);
    assert_int_equal(nplaced(r), 3);
    json_decref(r);
    cv_service_free(s);
    cv_cluster_free(c);
}

static void test_seed_fourteen_units_left_reject_a_service_needing_fifteen(void **state)
{
    (void)state;
    json_t *r = place_file("cluster_disk_full.json", "svc_disk.json", CV_PLACE_NEW);
    json_t *shortfall = json_object_get(json_object_get(r, "rejected"), "shortfall");
    assert_int_equal(json_integer_value(json_object_get(shortfall, "DiskSpaceInMb")), 1);
    json_decref(r);
}

static void test_seed_units_scattered_over_nodes_pass_the_check_but_do_not_fit(void **state)
{
    (void)state;
    const char *files[] = {"cluster_disk_1_on_15.json", "cluster_disk_3_on_5.json"};
    for (size_t i = 0; i < 2; i++) {
        json_t *r = place_file(files[i], "svc_disk.json", CV_PLACE_NEW);
        assert_true(json_is_null(json_object_get(r, "rejected")));
        assert_int_equal(json_array_size(json_object_get(r, "unplaced")), 3);
        json_decref(r);
    }
}

static void test_seed_five_units_on_three_nodes_take_one_instance_each(void **state)
{
    (void)state;
    json_t *r = place_file("cluster_disk_5_on_3.json", "svc_disk.json", CV_PLACE_NEW);
    assert_int_equal(nplaced(r), 3);
    json_decref(r);
}

static void test_seed_client_connections_growing_to_2048_overrun_n1(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_clientconnections.json");
    cv_layout_t *l = layout_json(c, read_json("layout_clientconnections_1024.json"), "1024");
    json_t *h = cv_place_check(c, l);
    assert_int_equal(json_array_size(h), 0); /* 32256 of 32768 */
    json_decref(h);
    cv_layout_free(l);
    cv_cluster_free(c);
    c = cluster("cluster_clientconnections.json");
    l = layout_json(c, read_json("layout_clientconnections_2048.json"), "2048");
    h = cv_place_check(c, l);
    assert_int_equal(fx_health(h, "NodeCapacityViolation", "Error"), 1);
    const char *d = json_string_value(json_object_get(json_array_get(h, 0), "description"));
    assert_non_null(strstr(d, "NodeName -- N1 for Metrics -- ClientConnections (load 33280"));
    json_decref(h);
    cv_layout_free(l);
    cv_cluster_free(c);
}

/* ---------------------------------------------------------------- constraints */

static void test_seed_placement_constraint_selects_the_ssd_node_type(void **state)
{
    (void)state;
    json_t *r = place_file("clusterconfig_sf.json", "svc_ssd.json", CV_PLACE_NEW);
    assert_int_equal(nplaced(r), 3);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(r, "placements"), i, p)
    {
        const char *node = json_string_value(json_object_get(p, "node"));
        assert_true(strcmp(node, "vm1") >= 0 && strcmp(node, "vm6") <= 0);
    }
    json_decref(r);
}

static void
test_seed_bcs_or_constraint_and_unique_hostname_pick_hosts_among_host1_to_host4(void **state)
{
    (void)state;
    json_t *r = place_file("cluster_bcs.json", "svc_mesos.json", CV_PLACE_NEW);
    assert_string_equal(fx_nodes(r), "host1,host2,host3");
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_six_nodes_five_replicas_go_to_n1_to_n5),
        cmocka_unit_test(test_seed_ten_nodes_five_replicas_still_go_to_n1_to_n5),
        cmocka_unit_test(test_seed_eight_nodes_adaptive_uses_quorum_safe),
        cmocka_unit_test(test_seed_eight_nodes_four_replicas_spread_over_n1_to_n4),
        cmocka_unit_test(test_seed_without_n1_the_rebuilt_r1_lands_on_n4),
        cmocka_unit_test(test_seed_buffer_keeps_new_placements_below_80),
        cmocka_unit_test(test_seed_overbooking_allows_120_for_availability_actions),
        cmocka_unit_test(test_seed_infinite_overbooking_has_no_limit),
        cmocka_unit_test(test_seed_fourteen_units_left_reject_a_service_needing_fifteen),
        cmocka_unit_test(test_seed_units_scattered_over_nodes_pass_the_check_but_do_not_fit),
        cmocka_unit_test(test_seed_five_units_on_three_nodes_take_one_instance_each),
        cmocka_unit_test(test_seed_client_connections_growing_to_2048_overrun_n1),
        cmocka_unit_test(test_seed_placement_constraint_selects_the_ssd_node_type),
        cmocka_unit_test(
            test_seed_bcs_or_constraint_and_unique_hostname_pick_hosts_among_host1_to_host4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
