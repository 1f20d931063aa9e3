/*
 * Specification of layouts: the services already placed, read against a
 * cluster. Their replicas' loads are added to their nodes (the primary load
 * for a primary, the secondary load otherwise), metrics the cluster did not
 * know are added to it, and a layout that fails to load leaves the
 * cluster's loads as they were. Every bad placement names the file, its
 * path and the problem.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_json_fixture.h"

#include "cv_placement.h"
#include "cv_base.h"
#include "cv_template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cv_cluster_t *cluster(const char *name)
{
    char err[512] = "";
    cv_cluster_t *c = NULL;
    json_t *doc = read_fixture(name);
    if (cv_cluster_load(doc, name, &c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    json_decref(doc);
    return c;
}

static cv_layout_t *layout(json_t *doc, cv_cluster_t *c)
{
    char err[512] = "";
    cv_layout_t *l = NULL;
    if (cv_layout_load(doc, "l.json", c, &l, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    json_decref(doc);
    return l;
}

static int64_t load_of(const cv_cluster_t *c, const char *node, const char *metric)
{
    long n = cv_cluster_node(c, node);
    int m = cv_cluster_metric(c, metric);
    assert_true(n >= 0 && m >= 0);
    return c->nodes[n].load[m];
}

/* On the 6-node grid, with the ' quoting of js(). */
static void assert_layout_fails(const char *doc, int code, const char *message)
{
    char err[512] = "";
    cv_cluster_t *c = cluster("cluster_5x5_6nodes.json");
    cv_layout_t *l = (cv_layout_t *)&err;
    json_t *j = js(doc);
    assert_int_equal(cv_layout_load(j, "l.json", c, &l, err, sizeof(err)), code);
    assert_null(l);
    assert_string_equal(err, message);
    json_decref(j);
    cv_cluster_free(c);
}

#define SVC "{'name': 's', 'replicas': 3, 'stateful': true, 'placements': "

static void test_a_primary_adds_its_primary_load_and_secondaries_theirs(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_clientconnections.json");
    cv_layout_t *l = layout(read_fixture("layout_clientconnections_1024.json"), c);
    assert_int_equal(load_of(c, "N1", "ClientConnections"), 32256);
    assert_int_equal(load_of(c, "N2", "ClientConnections"), 0);
    assert_int_equal(load_of(c, "N3", "ClientConnections"), 0);
    assert_int_equal(l->nservices, 1);
    assert_int_equal(l->services[0].nreplicas, 3);
    assert_int_equal(l->services[0].replicas[0].role, CV_ROLE_PRIMARY);
    assert_int_equal(l->services[0].replicas[0].node, cv_cluster_node(c, "N1"));
    cv_layout_free(l);
    cv_cluster_free(c);
}

static void test_the_seeds_grown_replica_overruns_its_node(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_clientconnections.json");
    cv_layout_t *l = layout(read_fixture("layout_clientconnections_2048.json"), c);
    int m = cv_cluster_metric(c, "ClientConnections");
    const cv_node_t *n1 = &c->nodes[cv_cluster_node(c, "N1")];
    assert_int_equal(n1->load[m], 33280);
    assert_true(n1->load[m] > n1->capacity[m]);
    cv_layout_free(l);
    cv_cluster_free(c);
}

static void test_new_metrics_are_added_to_the_cluster_unlimited(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_5x5_6nodes.json");
    assert_int_equal(c->nmetrics, 0);
    cv_layout_t *l = layout(read_fixture("layout_5x5_6nodes.json"), c);
    assert_int_equal(c->nmetrics, 1);
    assert_int_equal(load_of(c, "N1", "MemoryInMb"), 512);
    assert_int_equal(load_of(c, "N6", "MemoryInMb"), 512);
    assert_int_equal(load_of(c, "N2", "MemoryInMb"), 0);
    assert_int_equal(c->nodes[0].capacity[cv_cluster_metric(c, "MemoryInMb")], -1);
    cv_layout_free(l);
    cv_cluster_free(c);
}

static void test_the_service_being_placed_may_have_replicas_in_the_layout(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_5x5_6nodes.json");
    cv_layout_t *l = layout(read_fixture("layout_5x5_6nodes.json"), c);
    const cv_placed_service_t *own = &l->services[1];
    assert_string_equal(own->service->name, "svc5");
    assert_int_equal(own->service->replicas, 5);
    assert_int_equal(own->nreplicas, 2);
    assert_int_equal(own->replicas[1].index, 1);
    assert_int_equal(own->replicas[1].role, CV_ROLE_SECONDARY);
    assert_int_equal(own->replicas[1].node, cv_cluster_node(c, "N2"));
    assert_int_equal(l->services[0].replicas[0].role, CV_ROLE_INSTANCE);
    cv_layout_free(l);
    cv_cluster_free(c);
}

static void test_replicas_are_sorted_by_index_and_roles_default(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_5x5_6nodes.json");
    cv_layout_t *l = layout(js("{'services': [" SVC "[{'replica': 2, 'node': 'N3'},"
                               " {'replica': 0, 'node': 'N1', 'role': 'primary'}]},"
                               " {'name': 'web', 'replicas': 2, 'placements': [{'replica': 1,"
                               " 'node': 'N4'}]}, {'name': 'idle'}]}"),
                            c);
    assert_int_equal(l->nservices, 3);
    assert_int_equal(l->services[0].replicas[0].index, 0);
    assert_int_equal(l->services[0].replicas[1].index, 2);
    assert_int_equal(l->services[0].replicas[1].role, CV_ROLE_SECONDARY);
    assert_int_equal(l->services[1].replicas[0].role, CV_ROLE_INSTANCE);
    assert_int_equal(l->services[2].nreplicas, 0);
    cv_layout_free(l);
    cv_cluster_free(c);
}

static void test_a_stateless_instance_adds_its_single_load(void **state)
{
    (void)state;
    cv_cluster_t *c = cluster("cluster_disk_5_on_3.json");
    cv_layout_t *l = layout(js("{'services': [{'name': 'disk', 'replicas': 2, 'metrics':"
                               " [{'name': 'DiskSpaceInMb', 'primaryLoad': 5}], 'placements':"
                               " [{'replica': 0, 'node': 'N1'}, {'replica': 1, 'node': 'N2'}]}]}"),
                            c);
    assert_int_equal(load_of(c, "N1", "DiskSpaceInMb"), 10);
    assert_int_equal(load_of(c, "N2", "DiskSpaceInMb"), 10);
    assert_int_equal(load_of(c, "N3", "DiskSpaceInMb"), 5);
    cv_layout_free(l);
    cv_cluster_free(c);
}

static void test_a_failed_layout_leaves_the_cluster_unchanged(void **state)
{
    (void)state;
    char err[512];
    cv_cluster_t *c = cluster("cluster_clientconnections.json");
    cv_layout_t *l = NULL;
    json_t *doc = js("{'services': [{'name': 'a', 'metrics': [{'name': 'ClientConnections',"
                     " 'primaryLoad': 100}, {'name': 'New', 'primaryLoad': 1}], 'placements':"
                     " [{'replica': 0, 'node': 'N1'}]}, {'name': 'b', 'placements':"
                     " [{'replica': 0, 'node': 'N9'}]}]}");
    assert_int_equal(cv_layout_load(doc, "l.json", c, &l, err, sizeof(err)), CV_ENOENT);
    assert_int_equal(load_of(c, "N1", "ClientConnections"), 31232);
    assert_int_equal(cv_cluster_metric(c, "New"), -1);
    json_decref(doc);
    cv_cluster_free(c);
}

static void test_unknown_nodes_and_duplicate_replicas_are_errors(void **state)
{
    (void)state;
    assert_layout_fails("{'services': [" SVC "[{'replica': 0, 'node': 'N9'}]}]}", CV_ENOENT,
                        "l.json: services[0].placements[0].node: unknown node 'N9' (not in the "
                        "cluster)");
    assert_layout_fails("{'services': [" SVC "[{'replica': 1, 'node': 'N1'},"
                        " {'replica': 2, 'node': 'N2'}, {'replica': 1, 'node': 'N3'}]}]}",
                        CV_EEXIST,
                        "l.json: services[0].placements[2].replica: replica 1 is already placed "
                        "(placements[0])");
    assert_layout_fails(
        "{'services': [" SVC "[{'replica': 3, 'node': 'N1'}]}]}", CV_EVALIDATE,
        "l.json: services[0].placements[0].replica: expected an integer from 0 to 2");
    assert_layout_fails("{'services': [" SVC "[{'node': 'N1'}]}]}", CV_EVALIDATE,
                        "l.json: services[0].placements[0].replica: required");
    assert_layout_fails("{'services': [" SVC "[{'replica': 0}]}]}", CV_EVALIDATE,
                        "l.json: services[0].placements[0].node: required");
}

static void test_roles_must_fit_the_service(void **state)
{
    (void)state;
    assert_layout_fails("{'services': [" SVC "[{'replica': 0, 'node': 'N1', 'role': 'primary'},"
                        " {'replica': 1, 'node': 'N2', 'role': 'primary'}]}]}",
                        CV_EEXIST,
                        "l.json: services[0].placements[1].role: a second primary (placements[0] "
                        "is the primary)");
    assert_layout_fails(
        "{'services': [" SVC "[{'replica': 0, 'node': 'N1', 'role': 'instance'}]}]}", CV_EVALIDATE,
        "l.json: services[0].placements[0].role: service 's' is stateful: its "
        "replicas are primary or secondary");
    assert_layout_fails("{'services': [{'name': 'w', 'placements': [{'replica': 0, 'node': 'N1',"
                        " 'role': 'primary'}]}]}",
                        CV_EVALIDATE,
                        "l.json: services[0].placements[0].role: service 'w' is stateless: its "
                        "replicas are instances");
    assert_layout_fails("{'services': [" SVC "[{'replica': 0, 'node': 'N1', 'role': 'leader'}]}]}",
                        CV_EVALIDATE,
                        "l.json: services[0].placements[0].role: expected primary, secondary or "
                        "instance, not 'leader'");
}

static void test_layout_shape_errors(void **state)
{
    (void)state;
    assert_layout_fails("[]", CV_EVALIDATE, "l.json: expected an object (a layout)");
    assert_layout_fails("{}", CV_EVALIDATE, "l.json: services: required (an empty list for none)");
    assert_layout_fails("{'services': [], 'nodes': []}", CV_EVALIDATE,
                        "l.json: nodes: unknown member (expected one of services)");
    assert_layout_fails("{'services': [{'name': 'a'}, {'name': 'a'}]}", CV_EEXIST,
                        "l.json: services[1].name: service 'a' appears twice (also services[0])");
    assert_layout_fails("{'services': [{'name': 'a', 'replicas': 0}]}", CV_EVALIDATE,
                        "l.json: services[0].replicas: expected an integer from 1 to 100000");
    assert_layout_fails("{'services': [{'name': 'a', 'placements': {}}]}", CV_EVALIDATE,
                        "l.json: services[0].placements: expected an array");
    assert_layout_fails("{'services': [{'name': 'a', 'placements': ['N1']}]}", CV_EVALIDATE,
                        "l.json: services[0].placements[0]: expected an object {\"replica\", "
                        "\"role\", \"node\"}");
    assert_layout_fails("{'services': [{'name': 'a', 'placements': [{'replica': 0, 'node': 'N1',"
                        " 'host': 'x'}]}]}",
                        CV_EVALIDATE,
                        "l.json: services[0].placements[0].host: unknown member (expected one of "
                        "replica, role, node)");
}

static void test_a_layout_may_not_take_the_cluster_past_32_metrics(void **state)
{
    (void)state;
    char doc[4096];
    size_t n = (size_t)snprintf(doc, sizeof(doc), "{'services': [{'name': 'a', 'metrics': [");
    for (int m = 0; m < CV_MAX_METRICS; m++)
        n += (size_t)snprintf(doc + n, sizeof(doc) - n, "%s{'name': 'A%d'}", m ? ", " : "", m);
    n += (size_t)snprintf(doc + n, sizeof(doc) - n, "]}, {'name': 'b', 'metrics': [");
    snprintf(doc + n, sizeof(doc) - n, "{'name': 'A0'}, {'name': 'B'}]}]}");
    assert_layout_fails(doc, CV_ETOOBIG,
                        "l.json: services[1].metrics[1].name: metric 'B' makes the cluster's "
                        "metrics more than 32");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_primary_adds_its_primary_load_and_secondaries_theirs),
        cmocka_unit_test(test_the_seeds_grown_replica_overruns_its_node),
        cmocka_unit_test(test_new_metrics_are_added_to_the_cluster_unlimited),
        cmocka_unit_test(test_the_service_being_placed_may_have_replicas_in_the_layout),
        cmocka_unit_test(test_replicas_are_sorted_by_index_and_roles_default),
        cmocka_unit_test(test_a_stateless_instance_adds_its_single_load),
        cmocka_unit_test(test_a_failed_layout_leaves_the_cluster_unchanged),
        cmocka_unit_test(test_unknown_nodes_and_duplicate_replicas_are_errors),
        cmocka_unit_test(test_roles_must_fit_the_service),
        cmocka_unit_test(test_layout_shape_errors),
        cmocka_unit_test(test_a_layout_may_not_take_the_cluster_past_32_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
