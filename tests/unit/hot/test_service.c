/*
 * Specification of service descriptions: every member is read with its
 * default, the placement expression and the Mesos constraints are parsed by
 * their modules, and every bad member names the file, its path and the
 * problem (the expression's error also its column).
 * Inline descriptions are written with single quotes for readability.
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

static cv_service_t *load_doc(json_t *doc, const char *fname)
{
    char err[512] = "";
    cv_service_t *s = NULL;
    if (cv_service_load(doc, fname, &s, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    json_decref(doc);
    return s;
}

static cv_service_t *load_fixture(const char *name)
{
    return load_doc(read_fixture(name), name);
}

/* Loading fails with `code` and a message starting with `prefix`. */
static void assert_load_fails(const char *desc, int code, const char *prefix)
{
    char err[512] = "";
    cv_service_t *s = (cv_service_t *)&err;
    json_t *doc = js(desc);
    assert_int_equal(cv_service_load(doc, "s.json", &s, err, sizeof(err)), code);
    assert_null(s);
    if (strncmp(err, prefix, strlen(prefix)) != 0)
        fail_msg("expected '%s...', got '%s'", prefix, err);
    json_decref(doc);
}

static void test_the_issues_example_loads_every_member(void **state)
{
    (void)state;
    cv_service_t *s = load_fixture("svc_full.json");
    assert_string_equal(s->name, "svc");
    assert_string_equal(s->service_type, "T");
    assert_int_equal(s->replicas, 5);
    assert_true(s->stateful);
    assert_string_equal(s->placement_text, "(HasSSD == true && SomeProperty >= 4)");
    assert_non_null(s->placement);
    assert_int_equal(s->nmetrics, 1);
    assert_string_equal(s->metrics[0].name, "ClientConnections");
    assert_int_equal(s->metrics[0].primary_load, 1024);
    assert_int_equal(s->metrics[0].secondary_load, 0);
    assert_true(s->metrics[0].weight == 1.0);
    assert_int_equal(s->distribution, CV_DIST_ADAPTIVE);
    assert_false(s->require_domain_distribution);
    assert_non_null(s->constraints);
    assert_string_equal(s->affinity_service, "other");
    cv_service_free(s);
}

static void test_a_name_alone_gives_the_defaults(void **state)
{
    (void)state;
    cv_service_t *s = load_doc(js("{'name': 'web'}"), "s.json");
    assert_string_equal(s->service_type, "");
    assert_int_equal(s->replicas, 1);
    assert_false(s->stateful);
    assert_null(s->placement_text);
    assert_null(s->placement);
    assert_int_equal(s->nmetrics, 0);
    assert_int_equal(s->distribution, CV_DIST_ADAPTIVE);
    assert_false(s->require_domain_distribution);
    assert_null(s->constraints);
    assert_null(s->affinity_service);
    cv_service_free(s);
}

static void test_weights_by_name_in_any_case_or_by_number(void **state)
{
    (void)state;
    cv_service_t *s =
        load_doc(js("{'name': 'w', 'metrics': [{'name': 'a', 'weight': 'zero'},"
                    " {'name': 'b', 'weight': 'Low'}, {'name': 'c', 'weight': 'medium'},"
                    " {'name': 'd', 'weight': 'HIGH'}, {'name': 'e', 'weight': 2.5},"
                    " {'name': 'f'}]}"),
                 "s.json");
    static const double weights[] = {0, 0.1, 0.3, 1, 2.5, 0.1};
    assert_int_equal(s->nmetrics, 6);
    for (size_t i = 0; i < 6; i++)
        assert_true(s->metrics[i].weight == weights[i]);
    cv_service_free(s);
}

static void test_secondary_load_defaults_to_the_primary_load(void **state)
{
    (void)state;
    cv_service_t *s = load_fixture("svc_disk.json");
    assert_false(s->stateful);
    assert_int_equal(s->metrics[0].primary_load, 5);
    assert_int_equal(s->metrics[0].secondary_load, 5);
    cv_service_free(s);
}

static void test_distribution_policies_and_domain_distribution(void **state)
{
    (void)state;
    static const char *const names[] = {"adaptive", "maxDifference", "quorumSafe"};
    for (int i = 0; i < 3; i++) {
        char desc[256];
        snprintf(desc, sizeof(desc),
                 "{\"name\": \"d\", \"distribution\": \"%s\", \"requireDomainDistribution\": true}",
                 names[i]);
        cv_service_t *s = load_doc(json_loads(desc, 0, NULL), "s.json");
        assert_int_equal(s->distribution, (cv_distribution_t)i);
        assert_true(s->require_domain_distribution);
        cv_service_free(s);
    }
}

static void test_a_blank_placement_expression_is_none(void **state)
{
    (void)state;
    cv_service_t *s = load_doc(js("{'name': 'b', 'placementConstraints': '  '}"), "s.json");
    assert_null(s->placement);
    assert_null(s->placement_text);
    cv_service_free(s);
}

static void test_a_placement_expression_error_names_the_member_and_column(void **state)
{
    (void)state;
    assert_load_fails(
        "{'name': 'p', 'placementConstraints': '(HasSSD == true && SomeProperty >= 4'}", CV_EPARSE,
        "s.json: placementConstraints: column ");
    assert_load_fails("{'name': 'p', 'placementConstraints': 5}", CV_EVALIDATE,
                      "s.json: placementConstraints: expected a string (an expression)");
}

static void test_a_constraint_error_names_the_file_and_path(void **state)
{
    (void)state;
    assert_load_fails("{'name': 'm', 'constraints': 5}", CV_EVALIDATE, "s.json: constraints: ");
    assert_load_fails("{'name': 'm', 'constraints': {'and': [['IDC', 'NEAR', 'sh']]}}",
                      CV_EVALIDATE, "s.json: constraints");
}

static void test_identity_errors(void **state)
{
    (void)state;
    assert_load_fails("[]", CV_EVALIDATE, "s.json: expected an object (a service description)");
    assert_load_fails("{'replicas': 3}", CV_EVALIDATE, "s.json: name: required");
    assert_load_fails("{'name': ''}", CV_EVALIDATE, "s.json: name: expected a non-empty string");
    assert_load_fails("{'name': 's', 'replicas': 0}", CV_EVALIDATE,
                      "s.json: replicas: expected an integer from 1 to 100000");
    assert_load_fails("{'name': 's', 'replicas': 'three'}", CV_EVALIDATE,
                      "s.json: replicas: expected an integer from 1 to 100000");
    assert_load_fails("{'name': 's', 'stateful': 'yes'}", CV_EVALIDATE,
                      "s.json: stateful: expected true or false");
    assert_load_fails("{'name': 's', 'distribution': 'spread'}", CV_EVALIDATE,
                      "s.json: distribution: expected adaptive, maxDifference or quorumSafe, not "
                      "'spread'");
}

static void test_unknown_members_and_placements_are_errors(void **state)
{
    (void)state;
    assert_load_fails("{'name': 's', 'replica': 3}", CV_EVALIDATE,
                      "s.json: replica: unknown member (expected one of name, serviceType, "
                      "replicas, stateful, placementConstraints, metrics, distribution, "
                      "requireDomainDistribution, constraints, affinity, placements)");
    assert_load_fails("{'name': 's', 'placements': []}", CV_EVALIDATE,
                      "s.json: placements: a service description places no replicas (a layout "
                      "does)");
}

static void test_metric_errors(void **state)
{
    (void)state;
    assert_load_fails("{'name': 's', 'metrics': {}}", CV_EVALIDATE,
                      "s.json: metrics: expected an array");
    assert_load_fails("{'name': 's', 'metrics': ['CPU']}", CV_EVALIDATE,
                      "s.json: metrics[0]: expected an object");
    assert_load_fails("{'name': 's', 'metrics': [{'primaryLoad': 1}]}", CV_EVALIDATE,
                      "s.json: metrics[0].name: required");
    assert_load_fails("{'name': 's', 'metrics': [{'name': 'CPU', 'primaryLoad': -1}]}",
                      CV_EVALIDATE,
                      "s.json: metrics[0].primaryLoad: expected a non-negative integer");
    assert_load_fails("{'name': 's', 'metrics': [{'name': 'CPU', 'secondaryLoad': 0.5}]}",
                      CV_EVALIDATE,
                      "s.json: metrics[0].secondaryLoad: expected a non-negative integer");
    assert_load_fails("{'name': 's', 'metrics': [{'name': 'CPU', 'weight': 'huge'}]}", CV_EVALIDATE,
                      "s.json: metrics[0].weight: expected zero, low, medium, high or a "
                      "non-negative number");
    assert_load_fails("{'name': 's', 'metrics': [{'name': 'CPU'}, {'name': 'CPU'}]}", CV_EEXIST,
                      "s.json: metrics[1]: metric 'CPU' is already listed ([0])");
    assert_load_fails("{'name': 's', 'metrics': [{'name': 'CPU', 'load': 1}]}", CV_EVALIDATE,
                      "s.json: metrics[0].load: unknown member (expected one of name, "
                      "primaryLoad, secondaryLoad, weight)");
}

static void test_affinity_errors(void **state)
{
    (void)state;
    assert_load_fails("{'name': 's', 'affinity': 'db'}", CV_EVALIDATE,
                      "s.json: affinity: expected an object");
    assert_load_fails("{'name': 's', 'affinity': {}}", CV_EVALIDATE,
                      "s.json: affinity.service: required");
    assert_load_fails("{'name': 's', 'affinity': {'service': 'db', 'kind': 'x'}}", CV_EVALIDATE,
                      "s.json: affinity.kind: unknown member (expected one of service)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_issues_example_loads_every_member),
        cmocka_unit_test(test_a_name_alone_gives_the_defaults),
        cmocka_unit_test(test_weights_by_name_in_any_case_or_by_number),
        cmocka_unit_test(test_secondary_load_defaults_to_the_primary_load),
        cmocka_unit_test(test_distribution_policies_and_domain_distribution),
        cmocka_unit_test(test_a_blank_placement_expression_is_none),
        cmocka_unit_test(test_a_placement_expression_error_names_the_member_and_column),
        cmocka_unit_test(test_a_constraint_error_names_the_file_and_path),
        cmocka_unit_test(test_identity_errors),
        cmocka_unit_test(test_unknown_members_and_placements_are_errors),
        cmocka_unit_test(test_metric_errors),
        cmocka_unit_test(test_affinity_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
