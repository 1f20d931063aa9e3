/*
 * Specification of cluster manifests (after Service Fabric's Cluster
 * Resource Manager docs): our format and Service Fabric's
 * ClusterConfig.json describe the same nodes; node types give properties
 * and capacities that nodes override; property strings are typed; every bad
 * input names the file, the JSON path and the problem; unbalanced
 * fault-domain trees and partial properties are warned.
 * Inline manifests are written with single quotes for readability.
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

/* ---- Helpers ---- */

/* Loads a cluster from `doc` (taking it) named `fname`; a fixture when doc is NULL. */
static cv_cluster_t *load(json_t *doc, const char *fname)
{
    char err[512] = "";
    cv_cluster_t *c = NULL;
    if (!doc)
        doc = read_fixture(fname);
    if (cv_cluster_load(doc, fname, &c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    json_decref(doc);
    return c;
}

#define load_fixture(name) load(NULL, name)
#define load_inline(manifest) load(js(manifest), "c.json")

static void assert_load_fails(const char *manifest, int code, const char *message)
{
    char err[512] = "";
    cv_cluster_t *c = (cv_cluster_t *)&err;
    json_t *doc = js(manifest);
    assert_int_equal(cv_cluster_load(doc, "c.json", &c, err, sizeof(err)), code);
    assert_null(c);
    assert_string_equal(err, message);
    json_decref(doc);
}

static const cv_node_t *node(const cv_cluster_t *c, const char *name)
{
    long i = cv_cluster_node(c, name);
    if (i < 0)
        fail_msg("no node %s", name);
    return &c->nodes[i];
}

static int64_t capacity(const cv_cluster_t *c, const char *n, const char *metric)
{
    int m = cv_cluster_metric(c, metric);
    assert_true(m >= 0);
    return node(c, n)->capacity[m];
}

static const json_t *prop(const cv_cluster_t *c, const char *n, const char *name)
{
    return json_object_get(node(c, n)->props, name);
}

static void assert_priorities(const cv_priorities_t *p, int placement, int capacity, int affinity,
                              int fault_domain, int upgrade_domain, int preferred_location)
{
    assert_int_equal(p->placement, placement);
    assert_int_equal(p->capacity, capacity);
    assert_int_equal(p->affinity, affinity);
    assert_int_equal(p->fault_domain, fault_domain);
    assert_int_equal(p->upgrade_domain, upgrade_domain);
    assert_int_equal(p->preferred_location, preferred_location);
}

static void assert_warnings(const cv_cluster_t *c, const char *const *expected, size_t n)
{
    for (size_t i = 0; i < c->warnings.n && i < n; i++)
        assert_string_equal(c->warnings.v[i], expected[i]);
    assert_int_equal(c->warnings.n, n);
}

/* ---- Our format ---- */

static void test_nodes_are_sorted_by_name_with_their_domains(void **state)
{
    (void)state;
    cv_cluster_t *c = load_fixture("cluster_5x5_10nodes.json");
    static const char *const names[] = {"N1", "N10", "N2", "N3", "N4",
                                        "N5", "N6",  "N7", "N8", "N9"};
    assert_int_equal(c->nnodes, 10);
    for (size_t i = 0; i < 10; i++)
        assert_string_equal(c->nodes[i].name, names[i]);
    const cv_node_t *n6 = node(c, "N6");
    assert_string_equal(n6->fault_domain, "fd:/FD0");
    assert_int_equal(n6->fd_depth, 1);
    assert_string_equal(n6->fd_path[0], "FD0");
    assert_string_equal(n6->upgrade_domain, "UD1");
    assert_int_equal(n6->status, CV_NODE_UP);
    assert_int_equal(cv_cluster_node(c, "N11"), -1);
    cv_cluster_free(c);
}

static void test_default_constraint_priorities_are_service_fabrics(void **state)
{
    (void)state;
    cv_cluster_t *c = load_fixture("cluster_5x5_6nodes.json");
    assert_priorities(&c->priorities, 0, 0, 0, 0, 1, 2);
    assert_int_equal(c->nmetrics, 0);
    cv_cluster_free(c);
}

static void test_node_type_is_inherited_and_overridden_per_node(void **state)
{
    (void)state;
    cv_cluster_t *c = load_fixture("cluster_small.yaml");
    assert_true(json_is_true(prop(c, "B1", "HasSSD")));
    assert_string_equal(json_string_value(prop(c, "B1", "Tier")), "back");
    assert_int_equal(json_integer_value(prop(c, "B1", "Generation")), 5);
    assert_int_equal(json_integer_value(prop(c, "B2", "Generation")), 4);
    assert_int_equal(capacity(c, "B1", "CPU"), 400);
    assert_int_equal(capacity(c, "B2", "CPU"), 200);
    assert_int_equal(capacity(c, "B1", "MemoryInMb"), 16384);
    assert_int_equal(capacity(c, "F1", "CPU"), 100);
    assert_int_equal(node(c, "B1")->load[cv_cluster_metric(c, "CPU")], 50);
    assert_int_equal(node(c, "F1")->load[cv_cluster_metric(c, "CPU")], 0);
    cv_cluster_free(c);
}

static void test_status_and_settings_are_read(void **state)
{
    (void)state;
    cv_cluster_t *c = load_fixture("cluster_small.yaml");
    assert_int_equal(node(c, "F1")->status, CV_NODE_UP);
    assert_int_equal(node(c, "F2")->status, CV_NODE_DOWN);
    assert_int_equal(node(c, "B2")->status, CV_NODE_DISABLED);
    assert_true(c->metrics[cv_cluster_metric(c, "CPU")].buffer == 0.1);
    assert_true(c->metrics[cv_cluster_metric(c, "CPU")].overbook == 0);
    assert_priorities(&c->priorities, 0, 0, 0, 0, 0, 2);
    cv_cluster_free(c);
}

static void test_a_metric_a_node_does_not_declare_is_unlimited(void **state)
{
    (void)state;
    cv_cluster_t *c = load_inline("{'nodeTypes': {'Small': {'capacities': {'CPU': 4}}},"
                                  " 'nodes': [{'name': 'A', 'type': 'Small'},"
                                  "           {'name': 'B', 'capacities': {'Disk': 100}}]}");
    assert_int_equal(c->nmetrics, 2);
    assert_int_equal(capacity(c, "A", "CPU"), 4);
    assert_int_equal(capacity(c, "A", "Disk"), -1);
    assert_int_equal(capacity(c, "B", "CPU"), -1);
    assert_int_equal(capacity(c, "B", "Disk"), 100);
    for (size_t m = c->nmetrics; m < CV_MAX_METRICS; m++)
        assert_int_equal(node(c, "A")->capacity[m], -1);
    cv_cluster_free(c);
}

static void test_property_strings_are_read_as_typed_values(void **state)
{
    (void)state;
    cv_cluster_t *c = load_inline(
        "{'nodes': [{'name': 'A', 'properties': {'t': 'true', 'f': 'FALSE', 'five': '5',"
        " 'neg': '-12', 'color': 'green', 'mixed': '5x', 'b': true, 'i': 7, 'ip': '127.0.0.1',"
        " 'huge': '9223372036854775808', 'blank': ''}}]}");
    assert_true(json_is_true(prop(c, "A", "t")));
    assert_true(json_is_false(prop(c, "A", "f")));
    assert_int_equal(json_integer_value(prop(c, "A", "five")), 5);
    assert_int_equal(json_integer_value(prop(c, "A", "neg")), -12);
    assert_string_equal(json_string_value(prop(c, "A", "color")), "green");
    assert_string_equal(json_string_value(prop(c, "A", "mixed")), "5x");
    assert_true(json_is_true(prop(c, "A", "b")));
    assert_int_equal(json_integer_value(prop(c, "A", "i")), 7);
    assert_string_equal(json_string_value(prop(c, "A", "ip")), "127.0.0.1");
    assert_string_equal(json_string_value(prop(c, "A", "huge")), "9223372036854775808");
    assert_string_equal(json_string_value(prop(c, "A", "blank")), "");
    cv_cluster_free(c);
}

static void test_node_name_and_node_type_are_built_in_properties(void **state)
{
    (void)state;
    cv_cluster_t *c = load_inline("{'nodeTypes': {'Front': {}},"
                                  " 'nodes': [{'name': 'A', 'type': 'Front'}, {'name': 'B'}]}");
    assert_string_equal(json_string_value(prop(c, "A", "NodeName")), "A");
    assert_string_equal(json_string_value(prop(c, "A", "NodeType")), "Front");
    assert_string_equal(node(c, "A")->type, "Front");
    assert_string_equal(json_string_value(prop(c, "B", "NodeName")), "B");
    assert_null(prop(c, "B", "NodeType"));
    assert_string_equal(node(c, "B")->type, "");
    cv_cluster_free(c);
}

static void test_fault_domain_levels_with_or_without_the_fd_prefix(void **state)
{
    (void)state;
    cv_cluster_t *c = load_inline("{'nodes': [{'name': 'A', 'faultDomain': 'fd:/dc1/rack1'},"
                                  " {'name': 'B', 'faultDomain': '/dc1/rack2'},"
                                  " {'name': 'C', 'faultDomain': 'dc2/rack1'},"
                                  " {'name': 'D', 'faultDomain': 'fd:dc2/rack2'}]}");
    static const char *const levels[][2] = {
        {"dc1", "rack1"}, {"dc1", "rack2"}, {"dc2", "rack1"}, {"dc2", "rack2"}};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(c->nodes[i].fd_depth, 2);
        assert_string_equal(c->nodes[i].fd_path[0], levels[i][0]);
        assert_string_equal(c->nodes[i].fd_path[1], levels[i][1]);
    }
    assert_string_equal(node(c, "B")->fault_domain, "/dc1/rack2");
    assert_int_equal(c->warnings.n, 0);
    cv_cluster_free(c);
}

static void test_a_node_without_domains_is_its_own_fault_and_upgrade_domain(void **state)
{
    (void)state;
    cv_cluster_t *c = load_inline("{'nodes': [{'name': 'A'}]}");
    assert_string_equal(node(c, "A")->fault_domain, "fd:/A");
    assert_int_equal(node(c, "A")->fd_depth, 1);
    assert_string_equal(node(c, "A")->fd_path[0], "A");
    assert_string_equal(node(c, "A")->upgrade_domain, "A");
    cv_cluster_free(c);
}

/* ---- Service Fabric's ClusterConfig.json ---- */

static void test_cluster_config_json_nodes_and_node_types(void **state)
{
    (void)state;
    cv_cluster_t *c = load_fixture("clusterconfig_sf.json");
    assert_int_equal(c->nnodes, 9);
    const cv_node_t *vm5 = node(c, "vm5");
    assert_string_equal(vm5->type, "NodeType01");
    assert_string_equal(vm5->fault_domain, "fd:/dc2/r0");
    assert_int_equal(vm5->fd_depth, 2);
    assert_string_equal(vm5->fd_path[0], "dc2");
    assert_string_equal(vm5->fd_path[1], "r0");
    assert_string_equal(vm5->upgrade_domain, "UD2");
    assert_true(json_is_true(prop(c, "vm5", "HasSSD")));
    assert_int_equal(json_integer_value(prop(c, "vm5", "SomeProperty")), 5);
    assert_string_equal(json_string_value(prop(c, "vm5", "NodeColor")), "green");
    assert_string_equal(json_string_value(prop(c, "vm5", "NodeType")), "NodeType01");
    assert_null(prop(c, "vm8", "HasSSD"));
    assert_int_equal(capacity(c, "vm5", "ClientConnections"), 32768);
    assert_int_equal(capacity(c, "vm8", "ClientConnections"), 65536);
    cv_cluster_free(c);
}

static void test_cluster_config_json_fabric_settings(void **state)
{
    (void)state;
    cv_cluster_t *c = load_fixture("clusterconfig_sf.json");
    assert_true(c->metrics[cv_cluster_metric(c, "SomeMetric")].buffer == 0.15);
    assert_true(c->metrics[cv_cluster_metric(c, "SomeOtherMetric")].overbook == 0.2);
    assert_true(c->metrics[cv_cluster_metric(c, "MetricWithInfiniteOverbooking")].overbook == -1);
    assert_int_equal(capacity(c, "vm1", "SomeMetric"), -1);
    assert_priorities(&c->priorities, 0, 0, 0, 0, 1, 2);
    assert_int_equal(cv_cluster_metric(c, "MetricName1"), -1);
    cv_cluster_free(c);
}

static void test_cluster_config_json_constraint_priorities_are_read(void **state)
{
    (void)state;
    cv_cluster_t *c = load_inline(
        "{'nodes': [{'nodeName': 'vm1', 'nodeTypeRef': 'T', 'faultDomain': 'fd:/dc1/r0',"
        " 'upgradeDomain': 'UD1'}],"
        " 'properties': {'nodeTypes': [{'name': 'T'}], 'fabricSettings': [{'name':"
        " 'PlacementAndLoadBalancing', 'parameters': [{'name': 'AffinityConstraintPriority',"
        " 'value': '1'}, {'name': 'FaultDomainConstraintPriority', 'value': '-1'},"
        " {'name': 'MinPlacementInterval', 'value': '1.0'}]}]}}");
    assert_priorities(&c->priorities, 0, 0, 1, -1, 1, 2);
    cv_cluster_free(c);
}

static void test_documentation_fragments_with_top_level_sections_load(void **state)
{
    (void)state;
    cv_cluster_t *c = load_inline(
        "{'nodeTypes': [{'name': 'NodeType01', 'placementProperties': {'HasSSD': 'true'}}],"
        " 'fabricSettings': [{'name': 'NodeBufferPercentage', 'parameters':"
        " [{'name': 'SomeMetric', 'value': '0.15'}]}],"
        " 'nodes': [{'nodeName': 'vm1', 'nodeTypeRef': 'NodeType01', 'faultDomain': 'fd:/dc1/r0',"
        " 'upgradeDomain': 'UD1'}]}");
    assert_true(json_is_true(prop(c, "vm1", "HasSSD")));
    assert_true(c->metrics[cv_cluster_metric(c, "SomeMetric")].buffer == 0.15);
    cv_cluster_free(c);
}

/* ---- Errors ---- */

static void test_negative_capacity_names_file_path_and_problem(void **state)
{
    (void)state;
    assert_load_fails("{'nodes': [{'name': 'A'}, {'name': 'B'}, {'name': 'C'},"
                      " {'name': 'D', 'capacities': {'CPU': -1}}]}",
                      CV_EVALIDATE,
                      "c.json: nodes[3].capacities.CPU: expected a non-negative integer");
    assert_load_fails("{'nodes': [{'name': 'A', 'capacities': {'CPU': 1.5}}]}", CV_EVALIDATE,
                      "c.json: nodes[0].capacities.CPU: expected a non-negative integer");
    assert_load_fails(
        "{'nodeTypes': {'T': {'capacities': {'CPU': 'lots'}}}, 'nodes': [{'name': 'A'}]}",
        CV_EVALIDATE, "c.json: nodeTypes.T.capacities.CPU: expected a non-negative integer");
    assert_load_fails("{'nodes': [{'name': 'A', 'load': {'CPU': 1000000000000001}}]}", CV_ETOOBIG,
                      "c.json: nodes[0].load.CPU: too large (at most 10^15)");
}

static void test_duplicate_node_name_names_both_entries(void **state)
{
    (void)state;
    assert_load_fails("{'nodes': [{'name': 'N1'}, {'name': 'N2'}, {'name': 'N1'}]}", CV_EEXIST,
                      "c.json: nodes[2].name: duplicate node name 'N1' (also nodes[0])");
}

static void test_unknown_node_type_is_an_error_in_both_formats(void **state)
{
    (void)state;
    assert_load_fails("{'nodeTypes': {'Cpu': {}}, 'nodes': [{'name': 'A', 'type': 'Gpu'}]}",
                      CV_ENOENT, "c.json: nodes[0].type: unknown node type 'Gpu'");
    assert_load_fails("{'nodes': [{'nodeName': 'vm1', 'nodeTypeRef': 'NodeType9'}],"
                      " 'properties': {'nodeTypes': [{'name': 'NodeType0'}]}}",
                      CV_ENOENT, "c.json: nodes[0].nodeTypeRef: unknown node type 'NodeType9'");
    assert_load_fails("{'nodes': [{'nodeName': 'vm1'}], 'properties': {'nodeTypes':"
                      " [{'name': 'T'}, {'name': 'T'}]}}",
                      CV_EEXIST, "c.json: properties.nodeTypes[1].name: duplicate node type 'T'");
}

static void test_wrong_types_and_values_are_reported_with_their_path(void **state)
{
    (void)state;
    assert_load_fails("[]", CV_EVALIDATE, "c.json: expected an object (a cluster manifest)");
    assert_load_fails("{'nodes': {}}", CV_EVALIDATE, "c.json: nodes: expected an array");
    assert_load_fails("{'nodes': []}", CV_EVALIDATE,
                      "c.json: nodes: required: a cluster needs at least one node");
    assert_load_fails("{'nodes': [{'name': 'A'}, 'B']}", CV_EVALIDATE,
                      "c.json: nodes[1]: expected an object");
    assert_load_fails("{'nodes': [{'name': 'A'}, {'type': 'T'}]}", CV_EVALIDATE,
                      "c.json: nodes[1].name: required");
    assert_load_fails("{'nodes': [{'name': 7}]}", CV_EVALIDATE,
                      "c.json: nodes[0].name: expected a non-empty string");
    assert_load_fails("{'nodeTypes': [], 'nodes': [{'name': 'A'}]}", CV_EVALIDATE,
                      "c.json: nodeTypes: expected an object");
    assert_load_fails("{'nodes': [{'name': 'A', 'properties': []}]}", CV_EVALIDATE,
                      "c.json: nodes[0].properties: expected an object");
    assert_load_fails(
        "{'nodes': [{'name': 'A', 'properties': {'Speed': 1.5}}]}", CV_EVALIDATE,
        "c.json: nodes[0].properties.Speed: expected a string, a boolean or an integer");
    assert_load_fails("{'nodes': [{'name': 'A', 'status': 'broken'}]}", CV_EVALIDATE,
                      "c.json: nodes[0].status: expected up, down or disabled, not 'broken'");
}

static void test_unknown_members_are_errors_in_our_format(void **state)
{
    (void)state;
    assert_load_fails("{'nodes': [{'name': 'A', 'faultdomain': 'fd:/dc1'}]}", CV_EVALIDATE,
                      "c.json: nodes[0].faultdomain: unknown member (expected one of name, type, "
                      "faultDomain, upgradeDomain, properties, capacities, load, status)");
    assert_load_fails("{'nodes': [{'name': 'A'}], 'setting': {}}", CV_EVALIDATE,
                      "c.json: setting: unknown member (expected one of nodeTypes, nodes, "
                      "settings, description)");
}

static void test_empty_fault_domains_are_rejected(void **state)
{
    (void)state;
    assert_load_fails("{'nodes': [{'name': 'A', 'faultDomain': ''}]}", CV_EVALIDATE,
                      "c.json: nodes[0].faultDomain: expected a non-empty string");
    assert_load_fails("{'nodes': [{'name': 'A', 'faultDomain': 'fd:/'}]}", CV_EVALIDATE,
                      "c.json: nodes[0].faultDomain: empty fault domain 'fd:/'");
    assert_load_fails("{'nodes': [{'name': 'A', 'faultDomain': 'fd:/dc1//r1'}]}", CV_EVALIDATE,
                      "c.json: nodes[0].faultDomain: 'fd:/dc1//r1' has an empty level "
                      "(expected fd:/level1/level2...)");
}

static void test_built_in_properties_cannot_be_set(void **state)
{
    (void)state;
    assert_load_fails("{'nodes': [{'name': 'A', 'properties': {'NodeName': 'B'}}]}", CV_EVALIDATE,
                      "c.json: nodes[0].properties.NodeName: NodeName is a built-in property "
                      "(the node's name); it cannot be set");
    assert_load_fails("{'nodes': [{'nodeName': 'vm1', 'nodeTypeRef': 'T'}], 'properties':"
                      " {'nodeTypes': [{'name': 'T', 'placementProperties': {'NodeType': 'X'}}]}}",
                      CV_EVALIDATE,
                      "c.json: properties.nodeTypes[0].placementProperties.NodeType: NodeType is a "
                      "built-in property (the node's type); it cannot be set");
}

static void test_a_metric_with_both_buffer_and_overbooking_is_a_manifest_error(void **state)
{
    (void)state;
    assert_load_fails(
        "{'nodes': [{'name': 'A'}], 'settings': {"
        " 'nodeBufferPercentage': {'CPU': 0.1},"
        " 'nodeOverbookingPercentage': {'Disk': 0.2, 'CPU': 0.2}}}",
        CV_EVALIDATE,
        "c.json: settings.nodeOverbookingPercentage.CPU: metric 'CPU' has both a node "
        "buffer and a node overbooking percentage (a metric may have one or the other)");
    assert_load_fails(
        "{'nodes': [{'nodeName': 'vm1'}], 'properties': {'fabricSettings': ["
        " {'name': 'NodeOverbookingPercentage', 'parameters': [{'name': 'M', 'value': '-1.0'}]},"
        " {'name': 'NodeBufferPercentage', 'parameters': [{'name': 'M', 'value': '0.15'}]}]}}",
        CV_EVALIDATE,
        "c.json: properties.fabricSettings[1].parameters[0].value: metric 'M' has both "
        "a node buffer and a node overbooking percentage (a metric may have one or the "
        "other)");
}

static void test_percentages_must_be_fractions(void **state)
{
    (void)state;
    assert_load_fails(
        "{'nodes': [{'name': 'A'}], 'settings': {'nodeBufferPercentage': {'CPU': 15}}}",
        CV_EVALIDATE,
        "c.json: settings.nodeBufferPercentage.CPU: expected a fraction from 0 to 1 "
        "(0.15 is 15%)");
    assert_load_fails(
        "{'nodes': [{'name': 'A'}], 'settings': {'nodeOverbookingPercentage':"
        " {'CPU': -0.5}}}",
        CV_EVALIDATE,
        "c.json: settings.nodeOverbookingPercentage.CPU: expected a fraction from 0 to "
        "1 (0.2 is 20%), or -1 for infinite");
    assert_load_fails(
        "{'nodes': [{'nodeName': 'vm1'}], 'properties': {'fabricSettings': ["
        " {'name': 'NodeBufferPercentage', 'parameters': [{'name': 'M', 'value': 'x'}]}]}}",
        CV_EVALIDATE,
        "c.json: properties.fabricSettings[0].parameters[0].value: expected a number");
}

static void test_constraint_priorities_are_checked(void **state)
{
    (void)state;
    assert_load_fails(
        "{'nodes': [{'name': 'A'}], 'settings': {'constraintPriorities':"
        " {'faultDomain': 3}}}",
        CV_EVALIDATE,
        "c.json: settings.constraintPriorities.faultDomain: expected an integer from -1 "
        "to 2");
    assert_load_fails(
        "{'nodes': [{'name': 'A'}], 'settings': {'constraintPriorities':"
        " {'faultdomain': 1}}}",
        CV_EVALIDATE,
        "c.json: settings.constraintPriorities.faultdomain: unknown constraint (expected "
        "placement, capacity, affinity, faultDomain, upgradeDomain or "
        "preferredLocation)");
    assert_load_fails(
        "{'nodes': [{'nodeName': 'vm1'}], 'properties': {'fabricSettings': ["
        " {'name': 'PlacementAndLoadBalancing', 'parameters':"
        " [{'name': 'CapacityConstraintPriority', 'value': 'hard'}]}]}}",
        CV_EVALIDATE,
        "c.json: properties.fabricSettings[0].parameters[0].value: expected an integer "
        "from -1 to 2");
}

static void test_more_than_32_metrics_is_an_error(void **state)
{
    (void)state;
    char manifest[2048];
    size_t n =
        (size_t)snprintf(manifest, sizeof(manifest), "{'nodes': [{'name': 'A', 'capacities': {");
    for (int m = 0; m <= CV_MAX_METRICS; m++)
        n += (size_t)snprintf(manifest + n, sizeof(manifest) - n, "%s'M%d': 1", m ? ", " : "", m);
    snprintf(manifest + n, sizeof(manifest) - n, "}}]}");
    assert_load_fails(manifest, CV_ETOOBIG,
                      "c.json: nodes[0].capacities.M32: more than 32 metrics");
}

/* ---- Warnings ---- */

static void test_six_nodes_over_five_fault_domains_are_warned(void **state)
{
    (void)state;
    cv_cluster_t *c = load_fixture("cluster_5x5_6nodes.json");
    static const char *const expected[] = {
        "unbalanced fault domain tree: the top-level domains hold different numbers of nodes "
        "(fd:/FD0: 2, fd:/FD1: 1, fd:/FD2: 1, fd:/FD3: 1, fd:/FD4: 1)",
        "6 nodes are not a multiple of the 5 top-level fault domains: some domains hold more "
        "nodes than others",
    };
    assert_warnings(c, expected, 2);
    cv_cluster_free(c);
}

static void test_a_balanced_cluster_has_no_warnings(void **state)
{
    (void)state;
    cv_cluster_t *c = load_fixture("cluster_5x5_10nodes.json");
    assert_warnings(c, NULL, 0);
    cv_cluster_free(c);
}

static void test_an_unbalanced_lower_level_names_its_parent(void **state)
{
    (void)state;
    cv_cluster_t *c = load_inline(
        "{'nodes': [{'name': 'A', 'faultDomain': 'fd:/dc1/r1'}, {'name': 'B', 'faultDomain':"
        " 'fd:/dc1/r1'}, {'name': 'C', 'faultDomain': 'fd:/dc1/r2'}, {'name': 'D', 'faultDomain':"
        " 'fd:/dc2/r1'}, {'name': 'E', 'faultDomain': 'fd:/dc2/r2'}, {'name': 'F', 'faultDomain':"
        " 'fd:/dc2/r2'}]}");
    static const char *const expected[] = {
        "unbalanced fault domain tree: the domains under fd:/dc1 hold different numbers of nodes "
        "(fd:/dc1/r1: 2, fd:/dc1/r2: 1)",
        "unbalanced fault domain tree: the domains under fd:/dc2 hold different numbers of nodes "
        "(fd:/dc2/r1: 1, fd:/dc2/r2: 2)",
    };
    assert_warnings(c, expected, 2);
    cv_cluster_free(c);
}

static void test_fault_domains_of_different_depths_are_warned(void **state)
{
    (void)state;
    cv_cluster_t *c = load_inline("{'nodes': [{'name': 'A', 'faultDomain': 'fd:/dc1/r1'},"
                                  " {'name': 'B', 'faultDomain': 'fd:/dc2'}]}");
    assert_true(c->warnings.n >= 1);
    assert_string_equal(c->warnings.v[0],
                        "fault domains have different depths: B is 1 level(s) deep, A 2");
    cv_cluster_free(c);
}

static void test_a_property_on_some_nodes_only_is_noted(void **state)
{
    (void)state;
    cv_cluster_t *c = load_fixture("clusterconfig_sf.json");
    static const char *const expected[] = {
        "property HasSSD is set on 6 of 9 nodes (not on vm7, vm8, vm9): a placement constraint "
        "using it never matches the others",
        "property NodeColor is set on 6 of 9 nodes (not on vm7, vm8, vm9): a placement "
        "constraint using it never matches the others",
        "property SomeProperty is set on 6 of 9 nodes (not on vm7, vm8, vm9): a placement "
        "constraint using it never matches the others",
    };
    assert_warnings(c, expected, 3);
    cv_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_are_sorted_by_name_with_their_domains),
        cmocka_unit_test(test_default_constraint_priorities_are_service_fabrics),
        cmocka_unit_test(test_node_type_is_inherited_and_overridden_per_node),
        cmocka_unit_test(test_status_and_settings_are_read),
        cmocka_unit_test(test_a_metric_a_node_does_not_declare_is_unlimited),
        cmocka_unit_test(test_property_strings_are_read_as_typed_values),
        cmocka_unit_test(test_node_name_and_node_type_are_built_in_properties),
        cmocka_unit_test(test_fault_domain_levels_with_or_without_the_fd_prefix),
        cmocka_unit_test(test_a_node_without_domains_is_its_own_fault_and_upgrade_domain),
        cmocka_unit_test(test_cluster_config_json_nodes_and_node_types),
        cmocka_unit_test(test_cluster_config_json_fabric_settings),
        cmocka_unit_test(test_cluster_config_json_constraint_priorities_are_read),
        cmocka_unit_test(test_documentation_fragments_with_top_level_sections_load),
        cmocka_unit_test(test_negative_capacity_names_file_path_and_problem),
        cmocka_unit_test(test_duplicate_node_name_names_both_entries),
        cmocka_unit_test(test_unknown_node_type_is_an_error_in_both_formats),
        cmocka_unit_test(test_wrong_types_and_values_are_reported_with_their_path),
        cmocka_unit_test(test_unknown_members_are_errors_in_our_format),
        cmocka_unit_test(test_empty_fault_domains_are_rejected),
        cmocka_unit_test(test_built_in_properties_cannot_be_set),
        cmocka_unit_test(test_a_metric_with_both_buffer_and_overbooking_is_a_manifest_error),
        cmocka_unit_test(test_percentages_must_be_fractions),
        cmocka_unit_test(test_constraint_priorities_are_checked),
        cmocka_unit_test(test_more_than_32_metrics_is_an_error),
        cmocka_unit_test(test_six_nodes_over_five_fault_domains_are_warned),
        cmocka_unit_test(test_a_balanced_cluster_has_no_warnings),
        cmocka_unit_test(test_an_unbalanced_lower_level_names_its_parent),
        cmocka_unit_test(test_fault_domains_of_different_depths_are_warned),
        cmocka_unit_test(test_a_property_on_some_nodes_only_is_noted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
