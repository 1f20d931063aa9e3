/*
 * Specification of Converge::Service's properties and spec: bad input is
 * refused with the property path (Heat's constraint messages); the spec
 * holds the placement description cv_service_load reads plus the process
 * parts with their defaults; the digest follows the process, not the
 * replica count; metrics must be known to the live cluster.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_placement.h"
#include "cv_service.h"
#include "test_rtype_config.h"

static const cv_rtype_t *service(void)
{
    return tr_type(CV_SERVICE_TYPE);
}

/* The message of validating the properties `props_json`, "" when valid. */
static const char *refusal(const char *props_json)
{
    static char err[1024];
    tr_validate(service(), props_json, err, sizeof(err));
    return err;
}

#define assert_refused(props, message) assert_string_equal(refusal(props), message)

static void test_a_minimal_service_is_valid(void **state)
{
    (void)state;
    assert_refused("{\"command\": [\"sleep\", \"100\"]}", "");
    assert_refused("{\"replicas\": 0, \"tasks\": [{\"name\": \"a\", \"command\": [\"x\"]}]}", "");
}

static void test_negative_replicas_are_refused_with_the_path(void **state)
{
    (void)state;
    assert_refused("{\"replicas\": -1, \"command\": [\"x\"]}",
                   "resources.r.properties.replicas: -1 is out of range (min: 0, max: 100000)");
}

static void test_an_empty_command_is_refused(void **state)
{
    (void)state;
    assert_refused("{\"command\": []}",
                   "resources.r.properties.command: length (0) is out of range (min: 1, max: "
                   "None)");
    assert_refused("{\"command\": [\"\"]}",
                   "resources.r.properties.command[0]: the program to run must not be empty");
}

static void test_command_and_tasks_are_exclusive_and_one_is_required(void **state)
{
    (void)state;
    assert_refused("{\"replicas\": 2}", "resources.r.properties: At least one of the following "
                                        "properties must be specified: command, tasks.");
    assert_refused("{\"command\": [\"x\"], \"tasks\": [{\"name\": \"a\", \"command\": [\"y\"]}]}",
                   "resources.r.properties: Cannot define the following properties at the same "
                   "time: command, tasks.");
}

static void test_a_task_needs_a_name_and_a_command(void **state)
{
    (void)state;
    assert_refused("{\"tasks\": [{\"command\": [\"y\"]}]}",
                   "resources.r.properties.tasks[0].name: required property is missing");
    assert_refused("{\"tasks\": [{\"name\": \"a\", \"command\": [\"y\"]}, {\"name\": \"a\", "
                   "\"command\": [\"z\"]}]}",
                   "resources.r.properties.tasks[1]: the name \"a\" is used by [0] already");
}

static void test_a_malformed_placement_constraint_is_refused(void **state)
{
    (void)state;
    assert_contains(refusal("{\"command\": [\"x\"], \"placement_constraints\": \"NodeType == \"}"),
                    "resources.r.properties.placement_constraints: column ");
}

static void test_a_malformed_mesos_constraint_is_refused(void **state)
{
    (void)state;
    assert_contains(refusal("{\"command\": [\"x\"], \"constraints\": [\"hostname\", \"UNIQ\"]}"),
                    "resources.r.properties.constraints[1]: unknown operator 'UNIQ'");
}

static void test_bad_policies_name_the_allowed_values(void **state)
{
    (void)state;
    assert_refused("{\"command\": [\"x\"], \"health_check\": {\"type\": \"udp\"}}",
                   "resources.r.properties.health_check.type: \"udp\" is not an allowed value "
                   "[command, tcp, http]");
    assert_refused("{\"command\": [\"x\"], \"restart_policy\": {\"policy\": \"Sometimes\"}}",
                   "resources.r.properties.restart_policy.policy: \"Sometimes\" is not an allowed "
                   "value [Never, Always, OnFailure]");
    assert_refused("{\"command\": [\"x\"], \"spread\": \"even\"}",
                   "resources.r.properties.spread.policy: \"even\" is not an allowed value "
                   "[adaptive, maxDifference, quorumSafe]");
    assert_refused("{\"command\": [\"x\"], \"kill_policy\": {\"signal\": \"BOOM\"}}",
                   "resources.r.properties.kill_policy.signal: \"BOOM\" is not an allowed value "
                   "[TERM, INT, HUP, QUIT, KILL, USR1, USR2]");
}

static void test_an_unknown_key_inside_a_property_is_refused(void **state)
{
    (void)state;
    assert_refused(
        "{\"command\": [\"x\"], \"health_check\": {\"type\": \"tcp\", \"intervall\": 2}, "
        "\"ports\": [\"http\"]}",
        "resources.r.properties.health_check.intervall: unknown property");
}

static void test_a_tcp_check_needs_one_of_the_ports(void **state)
{
    (void)state;
    assert_refused("{\"command\": [\"x\"], \"health_check\": {\"type\": \"tcp\"}}",
                   "resources.r.properties.health_check.port: a tcp check needs a port: the "
                   "service has no ports");
    assert_refused("{\"command\": [\"x\"], \"ports\": [\"http\"], \"health_check\": {\"type\": "
                   "\"http\", \"port\": \"admin\"}}",
                   "resources.r.properties.health_check.port: \"admin\" is not one of the "
                   "service's ports");
}

static void test_ports_and_metrics_are_checked(void **state)
{
    (void)state;
    assert_refused("{\"command\": [\"x\"], \"ports\": [{\"name\": \"http\", \"port\": 70000}]}",
                   "resources.r.properties.ports[0].port: 70000 is out of range (min: 0, max: "
                   "65535)");
    assert_refused("{\"command\": [\"x\"], \"ports\": [\"a-b\"]}",
                   "resources.r.properties.ports[0].name: \"a-b\" is not a valid name (a letter "
                   "or _, then letters, digits, _)");
    assert_refused("{\"command\": [\"x\"], \"metrics\": [{\"name\": \"M\", \"primary_load\": -2}]}",
                   "resources.r.properties.metrics[0].primary_load: -2 is out of range (min: 0, "
                   "max: None)");
    assert_refused("{\"command\": [\"x\"], \"metrics\": [{\"name\": \"M\", \"weight\": \"huge\"}]}",
                   "resources.r.properties.metrics[0].weight: \"huge\" is not an allowed value "
                   "[zero, low, medium, high]");
}

static void test_intrinsic_values_are_left_for_later(void **state)
{
    (void)state;
    assert_refused("{\"replicas\": {\"get_param\": \"n\"}, \"command\": {\"get_param\": \"c\"}}",
                   "");
}

/* ---- the spec ---- */

static json_t *spec_of(const char *props_json)
{
    json_t *raw = tu_json(props_json), *props = tr_props(service(), raw);
    char err[512] = "";
    json_t *spec = cv_service_spec(props, "stk.web.fedcba98", "web", err, sizeof(err));
    if (!spec)
        fail_msg("no spec: %s", err);
    json_decref(props);
    json_decref(raw);
    return spec;
}

static void assert_json(const json_t *got, const char *want_json)
{
    json_t *want = tu_json(want_json);
    if (!json_equal((json_t *)got, want)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        fail_msg("got %s, want %s", g, want_json);
    }
    json_decref(want);
}

static void test_a_list_of_constraints_must_all_hold(void **state)
{
    (void)state;
    assert_refused("{\"command\": [\"x\"], \"constraints\": [[\"hostname\", \"UNIQUE\"], "
                   "{\"OR\": [[\"rack\", \"MAXPER\", 2], [\"IDC\", \"LIKE\", \"sh.*\"]]}]}",
                   "");
    assert_contains(refusal("{\"command\": [\"x\"], \"constraints\": [[\"hostname\", "
                            "\"UNIQUE\"], [\"rack\", \"MAXPER\"]]}"),
                    "resources.r.properties.constraints[1]");
    json_t *spec = spec_of("{\"command\": [\"x\"], \"constraints\": [[\"hostname\", "
                           "\"UNIQUE\"], [\"rack\", \"MAXPER\", 2]]}");
    assert_json(json_object_get(spec, "constraints"),
                "{\"and\": [[\"hostname\", \"UNIQUE\"], [\"rack\", \"MAXPER\", 2]]}");
    json_decref(spec);
}

static void test_the_spec_describes_the_service_for_placement(void **state)
{
    (void)state;
    json_t *spec = spec_of("{\"replicas\": 3, \"command\": [\"x\"], \"stateful\": true, "
                           "\"metrics\": [{\"name\": \"MemoryMB\", \"primary_load\": 64, "
                           "\"weight\": \"high\"}], \"placement_constraints\": \"NodeType == "
                           "web\", \"constraints\": [\"hostname\", \"UNIQUE\"], \"spread\": "
                           "{\"policy\": \"maxDifference\", \"require_domain_distribution\": "
                           "true}, \"affinity\": \"stk.db.12345678\"}");
    json_t *described = json_deep_copy(spec);
    json_object_del(described, "process");
    assert_json(described,
                "{\"name\": \"stk.web.fedcba98\", \"serviceType\": \"web\", \"replicas\": 3, "
                "\"stateful\": true, \"metrics\": [{\"name\": \"MemoryMB\", \"primaryLoad\": 64, "
                "\"secondaryLoad\": 64, \"weight\": \"high\"}], \"placementConstraints\": "
                "\"NodeType == web\", \"constraints\": [\"hostname\", \"UNIQUE\"], "
                "\"distribution\": \"maxDifference\", \"requireDomainDistribution\": true, "
                "\"affinity\": {\"service\": \"db\"}, \"moveCost\": \"Low\"}");
    json_object_del(described, "moveCost"); /* the balancer's, not the placement's */
    /* What the live engine hands to the placement library loads there. */
    cv_service_t *s = NULL;
    char err[512] = "";
    assert_int_equal(cv_service_load(described, "spec", &s, err, sizeof(err)), 0);
    assert_int_equal(s->replicas, 3);
    assert_true(s->stateful);
    cv_service_free(s);
    json_decref(described);
    json_decref(spec);
}

static const char *affinity_of(const char *given)
{
    static char out[128];
    char props[256];
    snprintf(props, sizeof(props), "{\"command\": [\"x\"], \"affinity\": \"%s\"}", given);
    json_t *spec = spec_of(props);
    snprintf(out, sizeof(out), "%s",
             json_string_value(json_object_get(json_object_get(spec, "affinity"), "service")));
    json_decref(spec);
    return out;
}

/* The live engine finds the parent by its resource name in the stack. */
static void test_affinity_names_the_other_resource_of_the_stack(void **state)
{
    (void)state;
    assert_string_equal(affinity_of("db"), "db");
    assert_string_equal(affinity_of("stk.db.12345678"), "db"); /* {get_resource: db} */
    assert_string_equal(affinity_of("stk.my.db.12345678"), "my.db");
    assert_string_equal(affinity_of("other.db.12345678"), "other.db.12345678");
}

static void test_the_process_holds_one_main_task_and_the_defaults(void **state)
{
    (void)state;
    json_t *spec = spec_of("{\"command\": [\"srv\", 8080], \"env\": {\"A\": 1}, \"ports\": "
                           "[\"http\"], \"volumes\": [\"data\"], \"resources\": {\"memory_mb\": "
                           "64}, \"health_check\": {\"type\": \"http\"}}");
    json_t *process = json_deep_copy(json_object_get(spec, "process"));
    assert_int_equal(json_string_length(json_object_get(process, "digest")), 16);
    json_object_del(process, "digest");
    assert_json(process,
                "{\"tasks\": [{\"name\": \"main\", \"command\": [\"srv\", \"8080\"], \"env\": "
                "{\"A\": \"1\"}, \"workdir\": \"\", \"resources\": {\"memory_mb\": 64}}], "
                "\"ports\": [{\"name\": \"http\", \"port\": 0}], \"volumes\": [{\"name\": "
                "\"data\", \"path\": \"data\"}], \"health_check\": {\"type\": \"http\", "
                "\"port\": \"http\", \"interval\": 1, \"timeout\": 1, \"retries\": 3, "
                "\"grace_period\": 0, \"path\": "
                "\"/\"}, \"restart_policy\": {\"policy\": \"Always\", \"interval\": 1, "
                "\"backoff\": 1, \"max_times\": 0}, \"kill_policy\": {\"grace_period\": 5, "
                "\"signal\": \"TERM\"}}");
    json_decref(process);
    json_decref(spec);
}

static const char *digest_of(const char *props_json)
{
    static char digests[4][17];
    static int next;
    char *out = digests[next++ % 4];
    json_t *spec = spec_of(props_json);
    snprintf(out, 17, "%s",
             json_string_value(json_object_get(json_object_get(spec, "process"), "digest")));
    json_decref(spec);
    return out;
}

static void test_the_digest_follows_the_process_not_the_replica_count(void **state)
{
    (void)state;
    const char *base =
        digest_of("{\"replicas\": 1, \"command\": [\"x\"], \"env\": {\"A\": \"1\"}}");
    assert_string_equal(
        base, digest_of("{\"replicas\": 5, \"command\": [\"x\"], \"env\": {\"A\": \"1\"}, "
                        "\"metrics\": [{\"name\": \"M\"}]}"));
    assert_string_not_equal(base, digest_of("{\"command\": [\"y\"], \"env\": {\"A\": \"1\"}}"));
    assert_string_not_equal(base, digest_of("{\"command\": [\"x\"], \"env\": {\"A\": \"2\"}}"));
}

static void test_the_service_id_names_stack_resource_and_version(void **state)
{
    (void)state;
    char id[256];
    cv_service_id(id, sizeof(id), "s1", "web", TR_UUID);
    assert_string_equal(id, "s1.web.fedcba98");
}

static void test_metrics_must_be_known_to_the_cluster(void **state)
{
    (void)state;
    json_t *spec = spec_of("{\"command\": [\"x\"], \"metrics\": [{\"name\": \"MemoryMB\"}, "
                           "{\"name\": \"Disk\"}]}");
    json_t *nodes = tu_json("[{\"name\": \"n1\", \"capacities\": {\"MemoryMB\": 1024}}]");
    json_t *settings = tu_json("{\"nodeTypes\": {\"big\": {\"capacities\": {\"Disk\": 10}}}}");
    assert_string_equal(cv_service_unknown_metric(spec, NULL, nodes), "Disk");
    assert_null(cv_service_unknown_metric(spec, settings, nodes));
    /* A cluster that knows nothing yet takes every metric: nodes join later. */
    assert_null(cv_service_unknown_metric(spec, NULL, NULL));
    json_decref(settings);
    json_decref(nodes);
    json_decref(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_minimal_service_is_valid),
        cmocka_unit_test(test_negative_replicas_are_refused_with_the_path),
        cmocka_unit_test(test_an_empty_command_is_refused),
        cmocka_unit_test(test_command_and_tasks_are_exclusive_and_one_is_required),
        cmocka_unit_test(test_a_task_needs_a_name_and_a_command),
        cmocka_unit_test(test_a_malformed_placement_constraint_is_refused),
        cmocka_unit_test(test_a_malformed_mesos_constraint_is_refused),
        cmocka_unit_test(test_a_list_of_constraints_must_all_hold),
        cmocka_unit_test(test_bad_policies_name_the_allowed_values),
        cmocka_unit_test(test_an_unknown_key_inside_a_property_is_refused),
        cmocka_unit_test(test_a_tcp_check_needs_one_of_the_ports),
        cmocka_unit_test(test_ports_and_metrics_are_checked),
        cmocka_unit_test(test_intrinsic_values_are_left_for_later),
        cmocka_unit_test(test_the_spec_describes_the_service_for_placement),
        cmocka_unit_test(test_affinity_names_the_other_resource_of_the_stack),
        cmocka_unit_test(test_the_process_holds_one_main_task_and_the_defaults),
        cmocka_unit_test(test_the_digest_follows_the_process_not_the_replica_count),
        cmocka_unit_test(test_the_service_id_names_stack_resource_and_version),
        cmocka_unit_test(test_metrics_must_be_known_to_the_cluster),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
