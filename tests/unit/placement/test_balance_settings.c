/*
 * The cluster resource manager's settings (cv_balance_settings, docs/crm.md
 * "Settings"): Service Fabric's defaults, our "crm" object, Service
 * Fabric's fabricSettings sections and node type overrides, node types
 * inheriting the global thresholds and interval, errors naming the
 * setting, and the cluster loader refusing a file with a bad setting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_cluster.h"
#include "test_balance_fixture.h"

static json_t *settings_of(const char *text)
{
    char err[512] = "";
    json_t *in = json_loads(text, 0, NULL);
    assert_non_null(in);
    json_t *out = cv_balance_settings(in, err, sizeof(err));
    json_decref(in);
    if (!out)
        fail_msg("unexpected error: %s", err);
    return out;
}

static void settings_error(const char *text, const char *want)
{
    char err[512] = "";
    json_t *in = json_loads(text, 0, NULL);
    assert_non_null(in);
    json_t *out = cv_balance_settings(in, err, sizeof(err));
    json_decref(in);
    if (out)
        fail_msg("expected an error containing '%s'", want);
    if (!strstr(err, want))
        fail_msg("error '%s' does not contain '%s'", err, want);
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        fail_msg("no %s", key);
    return json_number_value(v);
}

static const json_t *metric(const json_t *s, const char *type, const char *name)
{
    const json_t *scope = type ? json_object_get(json_object_get(s, "nodeTypes"), type) : s;
    const json_t *e = json_object_get(json_object_get(scope, "metrics"), name);
    if (!e)
        fail_msg("no metric %s on %s", name, type ? type : "the cluster");
    return e;
}

static void test_empty_settings_have_service_fabrics_defaults(void **state)
{
    (void)state;
    json_t *s = settings_of("{}");
    assert_true(num(s, "PLBRefreshGap") == 0.1);
    assert_true(num(s, "MinPlacementInterval") == 1);
    assert_true(num(s, "MinConstraintCheckInterval") == 1);
    assert_true(num(s, "MinLoadBalancingInterval") == 5);
    assert_true(num(s, "GlobalMovementThrottleThreshold") == 1000);
    assert_true(num(s, "GlobalMovementThrottleCountingInterval") == 600);
    assert_true(num(s, "MovementPerPartitionThrottleThreshold") == 50);
    assert_true(num(s, "MovementPerPartitionThrottleCountingInterval") == 600);
    assert_true(json_is_false(json_object_get(s, "SeparateBalancingStrategyPerNodeType")));
    assert_int_equal(json_object_size(json_object_get(s, "metrics")), 0);
    json_decref(s);
}

static void test_our_crm_object_and_node_types_inherit_the_global_values(void **state)
{
    (void)state;
    json_t *s = settings_of(
        "{\"nodeTypes\": {\"A\": {}, \"B\": {}},"
        " \"crm\": {\"MinLoadBalancingInterval\": 7, \"GlobalMovementThrottleThreshold\": 0,"
        "  \"SeparateBalancingStrategyPerNodeType\": true,"
        "  \"MetricBalancingThresholds\": {\"CPU\": 2}, \"MetricActivityThresholds\": "
        "{\"MemoryMB\": 1536}, \"DefragmentationMetrics\": {\"Disk\": true},"
        "  \"nodeTypes\": {\"A\": {\"MetricBalancingThresholdsPerNodeType\": {\"CPU\": 2.5},"
        "   \"MetricActivityThresholdsPerNodeType\": {\"CPU\": 50},"
        "   \"MinLoadBalancingIntervalPerNodeType\": 100}}}}");
    assert_true(num(s, "MinLoadBalancingInterval") == 7);
    assert_true(num(s, "GlobalMovementThrottleThreshold") == 0);
    assert_true(json_is_true(json_object_get(s, "SeparateBalancingStrategyPerNodeType")));
    assert_true(num(metric(s, NULL, "CPU"), "balancingThreshold") == 2);
    assert_true(num(metric(s, NULL, "CPU"), "activityThreshold") == 0);
    assert_true(num(metric(s, NULL, "MemoryMB"), "activityThreshold") == 1536);
    assert_true(num(metric(s, NULL, "MemoryMB"), "balancingThreshold") == 1);
    assert_true(json_is_true(json_object_get(metric(s, NULL, "Disk"), "defragmentation")));
    /* A overrides CPU, inherits MemoryMB and Disk; B inherits everything */
    assert_true(num(metric(s, "A", "CPU"), "balancingThreshold") == 2.5);
    assert_true(num(metric(s, "A", "CPU"), "activityThreshold") == 50);
    assert_true(num(metric(s, "A", "MemoryMB"), "activityThreshold") == 1536);
    assert_true(json_is_true(json_object_get(metric(s, "A", "Disk"), "defragmentation")));
    assert_true(num(metric(s, "B", "CPU"), "balancingThreshold") == 2);
    const json_t *types = json_object_get(s, "nodeTypes");
    assert_true(num(json_object_get(types, "A"), "MinLoadBalancingInterval") == 100);
    assert_true(num(json_object_get(types, "B"), "MinLoadBalancingInterval") == 7);
    json_decref(s);
}

static void test_service_fabric_sections_and_node_type_overrides_are_read(void **state)
{
    (void)state;
    json_t *s = settings_of(
        "{\"properties\": {"
        " \"fabricSettings\": ["
        "  {\"name\": \"PlacementAndLoadBalancing\", \"parameters\": ["
        "    {\"name\": \"PLBRefreshGap\", \"value\": \"0.10\"},"
        "    {\"name\": \"MinLoadBalancingInterval\", \"value\": \"3.0\"},"
        "    {\"name\": \"SeparateBalancingStrategyPerNodeType\", \"value\": \"true\"},"
        "    {\"name\": \"SubclusteringEnabled\", \"value\": \"true\"},"
        "    {\"name\": \"MovementPerPartitionThrottleThreshold\", \"value\": \"5\"}]},"
        "  {\"name\": \"MetricBalancingThresholds\", \"parameters\": ["
        "    {\"name\": \"MetricName1\", \"value\": \"2\"}, {\"name\": \"MetricName2\", \"value\": "
        "\"3.5\"}]},"
        "  {\"name\": \"MetricActivityThresholds\", \"parameters\": ["
        "    {\"name\": \"Memory\", \"value\": \"1536\"}]},"
        "  {\"name\": \"DefragmentationMetrics\", \"parameters\": ["
        "    {\"name\": \"Disk\", \"value\": \"true\"}]},"
        "  {\"name\": \"Security\", \"parameters\": [{\"name\": \"x\", \"value\": \"y\"}]}],"
        " \"nodeTypes\": [{\"name\": \"NodeType1\", \"placementAndLoadBalancingOverrides\": {"
        "   \"MetricBalancingThresholdsPerNodeType\": [{\"name\": \"MetricName1\", \"value\": "
        "\"2.5\"}],"
        "   \"MetricActivityThresholdsPerNodeType\": {\"MetricName1\": \"500\"},"
        "   \"MinLoadBalancingIntervalPerNodeType\": \"100\"}},"
        "  {\"name\": \"NodeType2\"}]}}");
    assert_true(num(s, "PLBRefreshGap") == 0.1);
    assert_true(num(s, "MinLoadBalancingInterval") == 3);
    assert_true(num(s, "MovementPerPartitionThrottleThreshold") == 5);
    assert_true(json_is_true(json_object_get(s, "SeparateBalancingStrategyPerNodeType")));
    assert_true(num(metric(s, NULL, "MetricName2"), "balancingThreshold") == 3.5);
    assert_true(num(metric(s, NULL, "Memory"), "activityThreshold") == 1536);
    assert_true(json_is_true(json_object_get(metric(s, NULL, "Disk"), "defragmentation")));
    assert_true(num(metric(s, "NodeType1", "MetricName1"), "balancingThreshold") == 2.5);
    assert_true(num(metric(s, "NodeType1", "MetricName1"), "activityThreshold") == 500);
    assert_true(num(metric(s, "NodeType2", "MetricName1"), "balancingThreshold") == 2);
    const json_t *types = json_object_get(s, "nodeTypes");
    assert_true(num(json_object_get(types, "NodeType1"), "MinLoadBalancingInterval") == 100);
    assert_true(num(json_object_get(types, "NodeType2"), "MinLoadBalancingInterval") == 3);
    json_decref(s);
}

static void test_bad_values_are_errors_naming_the_setting(void **state)
{
    (void)state;
    settings_error(
        "{\"crm\": {\"MetricBalancingThresholds\": {\"CPU\": 0.5}}}",
        "crm.MetricBalancingThresholds.CPU: expected a balancing threshold of 1 or more");
    settings_error("{\"crm\": {\"MetricActivityThresholds\": {\"CPU\": -1}}}",
                   "crm.MetricActivityThresholds.CPU: expected an activity threshold of 0 or more");
    settings_error("{\"crm\": {\"DefragmentationMetrics\": {\"Disk\": \"yes\"}}}",
                   "crm.DefragmentationMetrics.Disk: expected true or false");
    settings_error("{\"crm\": {\"MinLoadBalancingInterval\": -1}}",
                   "crm.MinLoadBalancingInterval: expected a number of seconds of 0 or more");
    settings_error("{\"crm\": {\"GlobalMovementThrottleThreshold\": 2.5}}",
                   "crm.GlobalMovementThrottleThreshold: expected a whole number of moves");
    settings_error("{\"crm\": {\"PLBRefreshGap\": 0}}", "crm.PLBRefreshGap: expected a number");
    settings_error("{\"crm\": {\"MinLoadBalancingIntervall\": 5}}",
                   "crm.MinLoadBalancingIntervall: unknown setting");
    settings_error("{\"crm\": {\"nodeTypes\": {\"A\": {\"MinLoadBalancingInterval\": 5}}}}",
                   "crm.nodeTypes.A.MinLoadBalancingInterval: unknown setting");
    settings_error("{\"fabricSettings\": [{\"name\": \"MetricBalancingThresholds\", "
                   "\"parameters\": [{\"name\": \"CPU\", \"value\": \"x\"}]}]}",
                   "fabricSettings[0].parameters[0].value: expected a number");
    settings_error("{\"properties\": {\"nodeTypes\": [{\"name\": \"T\", "
                   "\"placementAndLoadBalancingOverrides\": "
                   "{\"MinLoadBalancingIntervalPerNodeType\": \"-3\"}}]}}",
                   "properties.nodeTypes[0].placementAndLoadBalancingOverrides."
                   "MinLoadBalancingIntervalPerNodeType: expected a number");
}

static void test_the_cluster_loader_checks_the_crm_settings(void **state)
{
    (void)state;
    char err[768] = "";
    cv_cluster_t *c = NULL;
    json_t *good = json_loads("{\"nodeTypes\": {\"A\": {}}, \"nodes\": [{\"name\": \"n1\", "
                              "\"type\": \"A\"}], \"crm\": {\"MetricBalancingThresholds\": "
                              "{\"CPU\": 2}}}",
                              0, NULL);
    assert_int_equal(cv_cluster_load(good, "c.json", &c, err, sizeof(err)), 0);
    cv_cluster_free(c);
    json_object_set_new(json_object_get(good, "crm"), "MinLoadBalancingInterval",
                        json_string("soon"));
    assert_int_not_equal(cv_cluster_load(good, "c.json", &c, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "c.json: crm.MinLoadBalancingInterval: expected a number"));
    json_decref(good);
    json_t *sf = json_loads(
        "{\"nodes\": [{\"nodeName\": \"n1\", \"nodeTypeRef\": \"T\", \"faultDomain\": "
        "\"fd:/1\", \"upgradeDomain\": \"1\"}], \"properties\": {\"nodeTypes\": [{\"name\": "
        "\"T\"}], \"fabricSettings\": [{\"name\": \"MetricActivityThresholds\", \"parameters\": "
        "[{\"name\": \"Memory\", \"value\": \"-5\"}]}]}}",
        0, NULL);
    assert_int_not_equal(cv_cluster_load(sf, "sf.json", &c, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "sf.json: properties.fabricSettings[0].parameters[0].value: "
                                "expected an activity threshold"));
    json_decref(sf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_settings_have_service_fabrics_defaults),
        cmocka_unit_test(test_our_crm_object_and_node_types_inherit_the_global_values),
        cmocka_unit_test(test_service_fabric_sections_and_node_type_overrides_are_read),
        cmocka_unit_test(test_bad_values_are_errors_naming_the_setting),
        cmocka_unit_test(test_the_cluster_loader_checks_the_crm_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
