/*
 * Specification of the Prometheus text writer (proto/base/cv_prom.h): families
 * get their HELP and TYPE lines, label values are escaped, histograms are
 * cumulative up to +Inf with their sum and count, and numbers are written
 * the way Prometheus reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_prom.h"

#include <math.h>
#include <string.h>

static void test_a_counter_family_has_help_type_and_labelled_samples(void **state)
{
    (void)state;
    cv_buf_t b;
    cv_buf_init(&b);
    cv_prom_family(&b, "converge_jobs_total", "counter", "Jobs ended.");
    cv_prom_sample_u64(&b, "converge_jobs_total",
                       (const char *const[]){"kind", "check", "outcome", "done", NULL}, 42);
    cv_prom_sample_u64(&b, "converge_jobs_total", NULL, 18446744073709551615ull);
    assert_false(b.failed);
    assert_string_equal(b.data, "# HELP converge_jobs_total Jobs ended.\n"
                                "# TYPE converge_jobs_total counter\n"
                                "converge_jobs_total{kind=\"check\",outcome=\"done\"} 42\n"
                                "converge_jobs_total 18446744073709551615\n");
    cv_buf_free(&b);
}

static void test_label_values_and_help_are_escaped(void **state)
{
    (void)state;
    cv_buf_t b;
    cv_buf_init(&b);
    cv_prom_family(&b, "x", "gauge", "a \\ b\nc \"q\"");
    cv_prom_sample(&b, "x", (const char *const[]){"id", "w\\1\n\"2\"", NULL}, 1);
    assert_string_equal(b.data, "# HELP x a \\\\ b\\nc \"q\"\n"
                                "# TYPE x gauge\n"
                                "x{id=\"w\\\\1\\n\\\"2\\\"\"} 1\n");
    cv_buf_free(&b);
}

static void test_doubles_are_written_shortest_and_special_values_spelled(void **state)
{
    (void)state;
    cv_buf_t b;
    cv_buf_init(&b);
    cv_prom_sample(&b, "a", NULL, 0.1);
    cv_prom_sample(&b, "b", NULL, 0.1 + 0.2);
    cv_prom_sample(&b, "c", NULL, 1712345678.125);
    cv_prom_sample(&b, "d", NULL, INFINITY);
    cv_prom_sample(&b, "e", NULL, -INFINITY);
    cv_prom_sample(&b, "f", NULL, NAN);
    assert_string_equal(b.data, "a 0.1\nb 0.30000000000000004\nc 1712345678.125\n"
                                "d +Inf\ne -Inf\nf NaN\n");
    cv_buf_free(&b);
}

static const double bounds[] = {0.01, 0.1, 1};

static void test_a_histogram_is_cumulative_up_to_inf_with_sum_and_count(void **state)
{
    (void)state;
    cv_prom_hist_t h;
    cv_prom_hist_init(&h, bounds, 3);
    cv_prom_hist_observe(&h, 0.005);
    cv_prom_hist_observe(&h, 0.01); /* on a bound: in that bucket (le is <=) */
    cv_prom_hist_observe(&h, 0.5);
    cv_prom_hist_observe(&h, 7);
    cv_buf_t b;
    cv_buf_init(&b);
    cv_prom_hist_write(&b, "converge_job_duration_seconds",
                       (const char *const[]){"kind", "check", NULL}, &h);
    assert_string_equal(b.data,
                        "converge_job_duration_seconds_bucket{kind=\"check\",le=\"0.01\"} 2\n"
                        "converge_job_duration_seconds_bucket{kind=\"check\",le=\"0.1\"} 2\n"
                        "converge_job_duration_seconds_bucket{kind=\"check\",le=\"1\"} 3\n"
                        "converge_job_duration_seconds_bucket{kind=\"check\",le=\"+Inf\"} 4\n"
                        "converge_job_duration_seconds_sum{kind=\"check\"} 7.515\n"
                        "converge_job_duration_seconds_count{kind=\"check\"} 4\n");
    cv_buf_free(&b);
}

static void test_an_empty_histogram_without_labels_has_zero_buckets(void **state)
{
    (void)state;
    cv_prom_hist_t h;
    cv_prom_hist_init(&h, bounds, 1);
    cv_buf_t b;
    cv_buf_init(&b);
    cv_prom_hist_write(&b, "h", NULL, &h);
    assert_string_equal(b.data, "h_bucket{le=\"0.01\"} 0\nh_bucket{le=\"+Inf\"} 0\n"
                                "h_sum 0\nh_count 0\n");
    cv_buf_free(&b);
}

static void test_text_longer_than_the_first_allocation_is_kept_whole(void **state)
{
    (void)state;
    cv_buf_t b;
    cv_buf_init(&b);
    for (int i = 0; i < 1000; i++)
        cv_prom_sample_u64(&b, "converge_some_long_metric_name_total", NULL, (uint64_t)i);
    assert_false(b.failed);
    size_t expected = 0;
    for (int i = 0; i < 1000; i++)
        expected += strlen("converge_some_long_metric_name_total ") +
                    (i < 10    ? 1
                     : i < 100 ? 2
                               : 3) +
                    1;
    assert_int_equal(b.len, expected);
    assert_int_equal(strlen(b.data), expected);
    assert_string_equal(b.data + b.len - 41, "converge_some_long_metric_name_total 999\n");
    cv_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_counter_family_has_help_type_and_labelled_samples),
        cmocka_unit_test(test_label_values_and_help_are_escaped),
        cmocka_unit_test(test_doubles_are_written_shortest_and_special_values_spelled),
        cmocka_unit_test(test_a_histogram_is_cumulative_up_to_inf_with_sum_and_count),
        cmocka_unit_test(test_an_empty_histogram_without_labels_has_zero_buckets),
        cmocka_unit_test(test_text_longer_than_the_first_allocation_is_kept_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
