/*
 * Specification of the replica report (agent/node/agent_report.h,
 * docs/services.md): its fields, and which metrics are measured.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_report.h"
#include "test_util.h"

static void test_the_report_has_every_contract_field(void **state)
{
    (void)state;
    json_t *ports = tu_json("{\"http\": 31001}"), *declared = tu_json("{\"MemoryMB\": 64}");
    cv_report_t r = {.rid = "s.web.1/0/1",
                     .state = CV_RSTATE_HEALTHY,
                     .pid = 1234,
                     .start_time = 987654,
                     .started = 1712345670.1,
                     .since = 1712345670.3,
                     .restarts = 2,
                     .reason = "",
                     .exit = "exit 1",
                     .address = "127.0.0.1",
                     .ports = ports,
                     .digest = "abc",
                     .declared = declared};
    json_t *j = cv_report_json(&r);
    static const char *const fields[] = {"rid",   "state",    "pid",     "start_time", "started",
                                         "since", "restarts", "reason",  "exit",       "address",
                                         "ports", "load",     "gave_up", "digest"};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (!json_object_get(j, fields[i]))
            fail_msg("the report has no %s", fields[i]);
    assert_string_equal(json_string_value(json_object_get(j, "state")), "healthy");
    assert_int_equal(json_integer_value(json_object_get(j, "pid")), 1234);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "ports"), "http")),
                     31001);
    assert_string_equal(json_string_value(json_object_get(j, "exit")), "exit 1");
    assert_true(json_is_false(json_object_get(j, "gave_up")));
    json_decref(j);
    json_decref(ports);
    json_decref(declared);
}

static void test_declared_load_until_measured(void **state)
{
    (void)state;
    json_t *declared = tu_json("{\"MemoryMB\": 64, \"cpu\": 2, \"Disk\": 5}");
    cv_report_t r = {.rid = "r", .declared = declared};
    json_t *load = cv_report_load(&r);
    assert_int_equal(json_integer_value(json_object_get(load, "MemoryMB")), 64);
    assert_int_equal(json_integer_value(json_object_get(load, "cpu")), 2);
    json_decref(load);
    r.measured = true;
    r.rss_mb = 11.2;
    r.cpu_cores = 0.256;
    load = cv_report_load(&r);
    assert_int_equal(json_integer_value(json_object_get(load, "MemoryMB")), 12); /* rounded up */
    assert_true(json_real_value(json_object_get(load, "cpu")) == 0.26);
    assert_int_equal(json_integer_value(json_object_get(load, "Disk")), 5); /* not measured */
    json_decref(load);
    json_decref(declared);
}

static void test_metric_names_say_what_is_measured(void **state)
{
    (void)state;
    assert_int_equal(cv_metric_kind("MemoryMB"), CV_METRIC_MEMORY);
    assert_int_equal(cv_metric_kind("memory"), CV_METRIC_MEMORY);
    assert_int_equal(cv_metric_kind("HeapMB"), CV_METRIC_MEMORY);
    assert_int_equal(cv_metric_kind("cpu"), CV_METRIC_CPU);
    assert_int_equal(cv_metric_kind("CpuUtilization"), CV_METRIC_CPU);
    assert_int_equal(cv_metric_kind("ClientConnections"), CV_METRIC_DECLARED);
    assert_int_equal(cv_metric_kind("DiskGB"), CV_METRIC_DECLARED);
}

static void test_node_load_is_the_sum(void **state)
{
    (void)state;
    json_t *sum = json_object(), *a = tu_json("{\"MemoryMB\": 10, \"cpu\": 0.5}"),
           *b = tu_json("{\"MemoryMB\": 5, \"cpu\": 0.25}");
    cv_report_load_add(sum, a);
    cv_report_load_add(sum, b);
    assert_int_equal(json_integer_value(json_object_get(sum, "MemoryMB")), 15);
    assert_true(json_real_value(json_object_get(sum, "cpu")) == 0.75);
    json_decref(sum);
    json_decref(a);
    json_decref(b);
}

static void test_every_state_has_its_contract_name(void **state)
{
    (void)state;
    static const char *const names[] = {"starting", "running", "healthy",  "unhealthy",
                                        "backoff",  "failed",  "stopping", "stopped"};
    for (int s = 0; s < CV_RSTATE__COUNT; s++)
        assert_string_equal(cv_rstate_name((cv_replica_state_t)s), names[s]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_report_has_every_contract_field),
        cmocka_unit_test(test_declared_load_until_measured),
        cmocka_unit_test(test_metric_names_say_what_is_measured),
        cmocka_unit_test(test_node_load_is_the_sum),
        cmocka_unit_test(test_every_state_has_its_contract_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
