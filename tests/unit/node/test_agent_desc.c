/*
 * Specification of what an agent is told: its node description from
 * options or a cluster manifest (agent/node/agent_desc.h), its command line
 * (agent/node/agent_conf.h) and the replica specs it is assigned
 * (agent/node/agent_spec.h). Every error names the field that is wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_conf.h"
#include "agent_desc.h"
#include "agent_spec.h"
#include "cv_base.h"
#include "test_util.h"

#include <signal.h>

static int from_opts(const char *name, const char *fd, const char **caps, size_t ncaps,
                     const char **props, size_t nprops, json_t **desc, char *errstr,
                     size_t errstr_size)
{
    cv_desc_opts_t o = {name, NULL, fd, "UD1", props, nprops, caps, ncaps};
    return cv_desc_from_opts(&o, NULL, desc, errstr, errstr_size);
}

static void test_options_make_a_node_description(void **state)
{
    (void)state;
    char err[512];
    const char *caps[] = {"MemoryMB=1024"}, *props[] = {"ssd=true", "rack=7", "zone=a"};
    json_t *d;
    assert_int_equal(from_opts("n1", "fd:/dc1/r1", caps, 1, props, 3, &d, err, sizeof(err)), 0);
    json_t *want = tu_json("{\"name\": \"n1\", \"faultDomain\": \"fd:/dc1/r1\","
                           " \"upgradeDomain\": \"UD1\", \"capacities\": {\"MemoryMB\": 1024},"
                           " \"properties\": {\"ssd\": true, \"rack\": 7, \"zone\": \"a\"}}");
    assert_true(json_equal(d, want));
    json_decref(d);
    json_decref(want);
}

static void test_a_bad_capacity_is_named(void **state)
{
    (void)state;
    char err[512];
    const char *caps[] = {"MemoryMB=lots"};
    json_t *d;
    assert_int_equal(from_opts("n1", NULL, caps, 1, NULL, 0, &d, err, sizeof(err)), CV_EVALIDATE);
    assert_string_equal(
        err, "the node description: capacities.MemoryMB: expected a non-negative integer");
}

static void test_a_bad_fault_domain_is_named(void **state)
{
    (void)state;
    char err[512];
    json_t *d;
    assert_int_not_equal(from_opts("n1", "fd:/dc1//r1", NULL, 0, NULL, 0, &d, err, sizeof(err)), 0);
    assert_contains(err, "the node description: faultDomain: ");
    assert_contains(err, "has an empty level");
}

static void test_a_node_name_must_be_plain(void **state)
{
    (void)state;
    char err[512];
    json_t *d;
    assert_int_equal(from_opts("n{1}", NULL, NULL, 0, NULL, 0, &d, err, sizeof(err)), CV_EVALIDATE);
    assert_contains(err, "name: 'n{1}': a node name is letters, digits");
    assert_int_equal(from_opts(NULL, NULL, NULL, 0, NULL, 0, &d, err, sizeof(err)), CV_EVALIDATE);
    assert_contains(err, "name: required");
}

static void test_a_property_needs_a_name_and_a_value(void **state)
{
    (void)state;
    char err[512];
    const char *props[] = {"ssd"};
    json_t *d;
    assert_int_equal(from_opts("n1", NULL, NULL, 0, props, 1, &d, err, sizeof(err)), CV_EVALIDATE);
    assert_contains(err, "--property 'ssd': expected NAME=VALUE");
}

static const char *manifest_text =
    "{\"nodeTypes\": {\"W\": {\"capacities\": {\"MemoryMB\": 100, \"cpu\": 4},"
    "                          \"properties\": {\"ssd\": true}}},"
    " \"settings\": {\"nodeBufferPercentage\": {\"MemoryMB\": 0.1}},"
    " \"nodes\": [{\"name\": \"a\", \"type\": \"W\", \"faultDomain\": \"fd:/1\"},"
    "             {\"name\": \"b\", \"type\": \"W\", \"faultDomain\": \"fd:/2\","
    "              \"capacities\": {\"cpu\": 8}}]}";

static void test_a_manifest_gives_the_node_and_the_settings(void **state)
{
    (void)state;
    char err[512];
    json_t *m = tu_json(manifest_text), *d, *s;
    assert_int_equal(cv_desc_from_manifest(m, "c.json", "b", &d, &s, err, sizeof(err)), 0);
    assert_string_equal(json_string_value(json_object_get(d, "name")), "b");
    assert_null(json_object_get(s, "nodes"));
    assert_non_null(json_object_get(s, "nodeTypes"));
    assert_non_null(json_object_get(s, "settings"));
    assert_int_equal(cv_desc_check(d, s, "x", err, sizeof(err)), 0);
    /* the description carries its type's capacities and properties; its own win */
    json_t *caps = json_object_get(d, "capacities");
    assert_int_equal(json_integer_value(json_object_get(caps, "MemoryMB")), 100);
    assert_int_equal(json_integer_value(json_object_get(caps, "cpu")), 8);
    assert_true(json_is_true(json_object_get(json_object_get(d, "properties"), "ssd")));
    json_decref(d);
    json_decref(s);
    json_decref(m);
}

static void test_a_missing_node_and_a_bad_manifest_are_named(void **state)
{
    (void)state;
    char err[512];
    json_t *m = tu_json(manifest_text), *d, *s;
    assert_int_equal(cv_desc_from_manifest(m, "c.json", "zz", &d, &s, err, sizeof(err)), CV_ENOENT);
    assert_string_equal(err, "c.json: nodes: no node named 'zz'");
    json_decref(m);
    m = tu_json("{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"b\", \"type\": \"Nope\"}]}");
    assert_int_not_equal(cv_desc_from_manifest(m, "c.json", "a", &d, &s, err, sizeof(err)), 0);
    assert_contains(err, "c.json: nodes[1].type: unknown node type 'Nope'");
    json_decref(m);
}

static int parse(cv_agent_conf_t *c, char *errstr, size_t errstr_size, int argc, char **argv)
{
    return cv_agent_conf_parse(c, argc, argv, errstr, errstr_size);
}

static void test_the_command_line_has_defaults(void **state)
{
    (void)state;
    char err[256];
    cv_agent_conf_t c;
    char *argv[] = {"converge-agent", "--dir", "/tmp/x", "--name", "n1", "--capacity", "M=1", NULL};
    assert_int_equal(parse(&c, err, sizeof(err), 7, argv), 0);
    assert_int_equal(c.port_lo, 31000);
    assert_int_equal(c.port_hi, 31999);
    assert_int_equal(c.heartbeat_ttl_ms, 3000);
    assert_int_equal(c.fence_ms, 5000);
    assert_string_equal(c.address, "127.0.0.1");
    assert_int_equal(c.ncaps, 1);
    cv_opts_free(&c.opts);
}

static void test_bad_command_lines_are_named(void **state)
{
    (void)state;
    char err[256];
    cv_agent_conf_t c;
    char *a1[] = {"converge-agent", "--name", "n1", NULL};
    assert_int_not_equal(parse(&c, err, sizeof(err), 3, a1), 0);
    assert_contains(err, "--dir DIR is required");
    char *a2[] = {"converge-agent", "--dir", "d", "--cluster", "f.json", NULL};
    assert_int_not_equal(parse(&c, err, sizeof(err), 5, a2), 0);
    assert_contains(err, "--cluster FILE needs --node NAME");
    char *a3[] = {"converge-agent", "--dir", "d", "--name", "n", "--ports", "9-3", NULL};
    assert_int_not_equal(parse(&c, err, sizeof(err), 7, a3), 0);
    assert_contains(err, "--ports '9-3'");
    char *a4[] = {"converge-agent", "--dir", "d", "--name", "n", "--fence-ms", "x", NULL};
    assert_int_not_equal(parse(&c, err, sizeof(err), 7, a4), 0);
    assert_contains(err, "--fence-ms 'x'");
    cv_opts_free(&c.opts);
}

static void test_a_replica_spec_reads_with_its_defaults(void **state)
{
    (void)state;
    char err[256];
    cv_rspec_t s;
    json_t *j = tu_json("{\"rid\": \"r/0/1\", \"name\": \"w-0.d\", \"stateful\": true,"
                        " \"tasks\": [{\"name\": \"main\", \"command\": [\"sleep\", \"9\"],"
                        " \"resources\": {\"memory_mb\": 64}}],"
                        " \"ports\": [{\"name\": \"http\"}],"
                        " \"health_check\": {\"type\": \"tcp\"},"
                        " \"kill_policy\": {\"grace_period\": 2, \"signal\": \"INT\"}}");
    assert_int_equal(cv_rspec_parse(j, &s, err, sizeof(err)), 0);
    assert_true(s.stateful);
    assert_int_equal(s.ntasks, 1);
    assert_string_equal(s.tasks[0].argv[1], "9");
    assert_int_equal(s.tasks[0].memory_mb, 64);
    assert_int_equal(s.health.kind, CV_HEALTH_TCP);
    assert_string_equal(s.health.port, "http"); /* the first port */
    assert_int_equal(s.health.retries, 3);
    assert_int_equal(s.kill_signal, SIGINT);
    assert_true(s.kill_grace == 2);
    assert_int_equal(s.restart.kind, CV_RESTART_ALWAYS);
    cv_rspec_free(&s);
    json_decref(j);
}

static void expect_spec_error(const char *text, const char *want)
{
    char err[256];
    cv_rspec_t s;
    json_t *j = tu_json(text);
    assert_int_not_equal(cv_rspec_parse(j, &s, err, sizeof(err)), 0);
    assert_contains(err, want);
    json_decref(j);
}

static void test_a_bad_replica_spec_names_the_member(void **state)
{
    (void)state;
    expect_spec_error("{\"rid\": \"r\", \"name\": \"n\", \"tasks\": [{\"name\": \"m\","
                      " \"command\": []}]}",
                      "tasks[0].command: expected a non-empty list of strings");
    expect_spec_error("{\"rid\": \"r\", \"name\": \"n\"}", "tasks: expected a non-empty list");
    expect_spec_error("{\"name\": \"n\"}", "rid: required");
    expect_spec_error("{\"rid\": \"r\", \"name\": \"n\", \"tasks\": [{\"name\": \"m\","
                      " \"command\": [\"x\"]}], \"health_check\": {\"type\": \"http\","
                      " \"port\": \"web\"}}",
                      "health_check.port: expected the name of one of the replica's ports");
    expect_spec_error("{\"rid\": \"r\", \"name\": \"n\", \"tasks\": [{\"name\": \"m\","
                      " \"command\": [\"x\"]}], \"kill_policy\": {\"signal\": \"NOPE\"}}",
                      "kill_policy.signal: unknown signal");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_make_a_node_description),
        cmocka_unit_test(test_a_bad_capacity_is_named),
        cmocka_unit_test(test_a_bad_fault_domain_is_named),
        cmocka_unit_test(test_a_node_name_must_be_plain),
        cmocka_unit_test(test_a_property_needs_a_name_and_a_value),
        cmocka_unit_test(test_a_manifest_gives_the_node_and_the_settings),
        cmocka_unit_test(test_a_missing_node_and_a_bad_manifest_are_named),
        cmocka_unit_test(test_the_command_line_has_defaults),
        cmocka_unit_test(test_bad_command_lines_are_named),
        cmocka_unit_test(test_a_replica_spec_reads_with_its_defaults),
        cmocka_unit_test(test_a_bad_replica_spec_names_the_member),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
