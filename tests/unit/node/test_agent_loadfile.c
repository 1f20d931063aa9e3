/*
 * Specification of the loads a replica reports in its load file
 * (agent/node/agent_loadfile.h, docs/crm.md "Dynamic load"): the lines read, the
 * lines ignored and why, the size cap, the file's path, and how the values
 * enter the report's `load` (agent/node/agent_report.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_loadfile.h"
#include "agent_report.h"
#include "test_util.h"

#define DECLARED "{\"CPU\": 1, \"MemoryMB\": 64, \"Sessions\": 0}"

static json_t *parse(const char *text, cv_loadfile_bad_t *bad)
{
    json_t *declared = tu_json(DECLARED);
    json_t *out = cv_loadfile_parse(text, strlen(text), 0, declared, bad);
    json_decref(declared);
    return out;
}

static void assert_json(const json_t *got, const char *want)
{
    json_t *w = tu_json(want);
    if (!json_equal((json_t *)got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("got %s, want %s", g, want);
    }
    json_decref(w);
}

static void test_lines_of_metric_and_value_are_read_with_blanks_allowed(void **state)
{
    (void)state;
    cv_loadfile_bad_t bad;
    json_t *l = parse("CPU=3\n  Sessions = 12 \r\nMemoryMB=250.5", &bad);
    assert_json(l, "{\"CPU\": 3, \"Sessions\": 12, \"MemoryMB\": 250.5}");
    assert_true(json_is_integer(json_object_get(l, "CPU")));
    assert_true(json_is_real(json_object_get(l, "MemoryMB")));
    assert_int_equal(bad.count, 0);
    assert_int_equal(bad.first_line, 0);
    json_decref(l);
}

static void test_empty_lines_and_comments_are_skipped_and_a_later_line_wins(void **state)
{
    (void)state;
    cv_loadfile_bad_t bad;
    json_t *l = parse("# the load of this replica\n\nCPU=1\n\n   # another\nCPU=7\n", &bad);
    assert_json(l, "{\"CPU\": 7}");
    assert_int_equal(bad.count, 0);
    json_decref(l);
}

static void test_bad_lines_are_ignored_counted_and_the_first_is_described(void **state)
{
    (void)state;
    cv_loadfile_bad_t bad;
    json_t *l = parse("CPU=2\nSessions\nDisk=4\nMemoryMB=lots\n=3\nSessions=-1\nSessions=5", &bad);
    assert_json(l, "{\"CPU\": 2, \"Sessions\": 5}");
    assert_int_equal(bad.count, 5);
    assert_int_equal(bad.first_line, 2);
    assert_string_equal(bad.first, "line 2: 'Sessions': expected METRIC=VALUE");
    json_decref(l);
}

static void test_each_kind_of_bad_line_says_what_is_wrong(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"Disk=4", "line 1: 'Disk=4': Disk is not a metric of the service"},
        {"CPU=lots", "line 1: 'CPU=lots': the value is not a number"},
        {"CPU=", "line 1: 'CPU=': the value is not a number"},
        {"CPU=0x10", "line 1: 'CPU=0x10': the value is not a number"},
        {"CPU=inf", "line 1: 'CPU=inf': the value is not a number"},
        {"CPU=nan", "line 1: 'CPU=nan': the value is not a number"},
        {"CPU=1 2", "line 1: 'CPU=1 2': the value is not a number"},
        {"CPU=-0.5", "line 1: 'CPU=-0.5': the value is negative"},
        {" = 3", "line 1: '= 3': no metric name"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cv_loadfile_bad_t bad;
        json_t *l = parse(cases[i][0], &bad);
        assert_int_equal(json_object_size(l), 0);
        assert_int_equal(bad.count, 1);
        assert_string_equal(bad.first, cases[i][1]);
        json_decref(l);
    }
}

static void test_numbers_in_decimal_and_exponent_form_are_read(void **state)
{
    (void)state;
    cv_loadfile_bad_t bad;
    json_t *l = parse("CPU=+4\nMemoryMB=1e3\nSessions=0", &bad);
    assert_json(l, "{\"CPU\": 4, \"MemoryMB\": 1000.0, \"Sessions\": 0}");
    assert_int_equal(bad.count, 0);
    json_decref(l);
}

static void test_a_file_cut_at_the_cap_drops_its_last_partial_line(void **state)
{
    (void)state;
    /* The cap fell inside "Sessions=12...": "Sessions=1" must not be taken. */
    const char *text = "CPU=3\nSessions=1";
    json_t *declared = tu_json(DECLARED);
    cv_loadfile_bad_t bad;
    json_t *l = cv_loadfile_parse(text, strlen(text), 1, declared, &bad);
    assert_json(l, "{\"CPU\": 3}");
    assert_int_equal(bad.count, 1);
    assert_int_equal(bad.first_line, 2);
    assert_contains(bad.first, "longer than 16384 bytes");
    json_decref(l);
    /* Cut right after a newline: every line read is whole, the rest counted. */
    l = cv_loadfile_parse("CPU=3\n", 6, 1, declared, &bad);
    assert_json(l, "{\"CPU\": 3}");
    assert_int_equal(bad.count, 1);
    json_decref(l);
    json_decref(declared);
}

static void test_nothing_declared_takes_nothing(void **state)
{
    (void)state;
    cv_loadfile_bad_t bad;
    json_t *l = cv_loadfile_parse("CPU=3\n", 6, 0, NULL, &bad);
    assert_json(l, "{}");
    assert_int_equal(bad.count, 1);
    json_decref(l);
}

static void test_the_file_sits_beside_the_state_file_of_its_replica(void **state)
{
    (void)state;
    char path[256];
    cv_loadfile_path(path, sizeof(path), "/var/agent", "s1.web.0a1b2c3d/2/7");
    assert_string_equal(path, "/var/agent/loads/s1.web.0a1b2c3d+2+7/load");
}

static void test_reported_loads_win_over_measured_and_declared_ones(void **state)
{
    (void)state;
    json_t *declared = tu_json(DECLARED),
           *reported = tu_json("{\"MemoryMB\": 500, \"Sessions\": 9}");
    cv_report_t r = {.rid = "s/0/1",
                     .state = CV_RSTATE_HEALTHY,
                     .declared = declared,
                     .measured = true,
                     .rss_mb = 20.2,
                     .cpu_cores = 0.5,
                     .reported = reported};
    json_t *load = cv_report_load(&r);
    assert_json(load, "{\"CPU\": 0.5, \"MemoryMB\": 500, \"Sessions\": 9}");
    json_decref(load);
    r.reported = NULL;
    load = cv_report_load(&r);
    assert_json(load, "{\"CPU\": 0.5, \"MemoryMB\": 21, \"Sessions\": 0}");
    json_decref(load);
    json_decref(declared);
    json_decref(reported);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_of_metric_and_value_are_read_with_blanks_allowed),
        cmocka_unit_test(test_empty_lines_and_comments_are_skipped_and_a_later_line_wins),
        cmocka_unit_test(test_bad_lines_are_ignored_counted_and_the_first_is_described),
        cmocka_unit_test(test_each_kind_of_bad_line_says_what_is_wrong),
        cmocka_unit_test(test_numbers_in_decimal_and_exponent_form_are_read),
        cmocka_unit_test(test_a_file_cut_at_the_cap_drops_its_last_partial_line),
        cmocka_unit_test(test_nothing_declared_takes_nothing),
        cmocka_unit_test(test_the_file_sits_beside_the_state_file_of_its_replica),
        cmocka_unit_test(test_reported_loads_win_over_measured_and_declared_ones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
