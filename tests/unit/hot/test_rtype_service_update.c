/*
 * Converge::Service's update_policy and move_cost (docs/crm.md): bad values
 * are refused naming the property; the spec holds `updatePolicy` with every
 * default applied and `moveCost` (Low by default); neither changes the
 * process digest; an upgrade marks the policy byUpgradeDomain.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_service.h"
#include "test_rtype_config.h"

static const char *refusal(const char *props_json)
{
    static char err[1024];
    tr_validate(tr_type(CV_SERVICE_TYPE), props_json, err, sizeof(err));
    return err;
}

#define assert_refused(props, message) assert_string_equal(refusal(props), message)

static json_t *spec_of(const char *props_json)
{
    json_t *raw = tu_json(props_json), *props = tr_props(tr_type(CV_SERVICE_TYPE), raw);
    char err[512] = "";
    json_t *spec = cv_service_spec(props, "stk.web.fedcba98", "web", err, sizeof(err));
    if (!spec)
        fail_msg("no spec: %s", err);
    json_decref(props);
    json_decref(raw);
    return spec;
}

static void test_bad_update_policies_are_refused_naming_the_key(void **state)
{
    (void)state;
    assert_refused("{\"command\": [\"x\"], \"update_policy\": {\"order\": \"kill_last\"}}",
                   "resources.r.properties.update_policy.order: \"kill_last\" is not an allowed "
                   "value [kill_first, start_first]");
    assert_refused("{\"command\": [\"x\"], \"update_policy\": {\"step\": 0}}",
                   "resources.r.properties.update_policy.step: 0 is out of range (min: 1, max: "
                   "100000)");
    assert_refused("{\"command\": [\"x\"], \"update_policy\": {\"mode\": \"later\"}}",
                   "resources.r.properties.update_policy.mode: \"later\" is not an allowed value "
                   "[auto, manual]");
    assert_refused("{\"command\": [\"x\"], \"update_policy\": {\"batch\": 2}}",
                   "resources.r.properties.update_policy.batch: unknown property");
    assert_refused("{\"command\": [\"x\"], \"update_policy\": {\"max_unavailable\": 0}}",
                   "resources.r.properties.update_policy.max_unavailable: must be at least 1 "
                   "with order kill_first: no step could begin");
    assert_refused("{\"command\": [\"x\"], \"update_policy\": {\"order\": \"start_first\", "
                   "\"max_surge\": 0}}",
                   "resources.r.properties.update_policy.max_surge: must be at least 1 with "
                   "order start_first: no step could begin");
}

static void test_a_bad_move_cost_names_the_allowed_values(void **state)
{
    (void)state;
    assert_refused("{\"command\": [\"x\"], \"move_cost\": \"Huge\"}",
                   "resources.r.properties.move_cost: \"Huge\" is not an allowed value [Zero, "
                   "Low, Medium, High]");
    assert_string_equal(refusal("{\"command\": [\"x\"], \"move_cost\": \"high\"}"), "");
}

static void test_the_spec_holds_the_policy_with_its_defaults(void **state)
{
    (void)state;
    json_t *spec = spec_of("{\"command\": [\"x\"], \"update_policy\": {\"step\": 2, \"order\": "
                           "\"start_first\"}, \"move_cost\": \"medium\"}");
    json_t *want = tu_json("{\"order\": \"start_first\", \"step\": 2, \"interval\": 0, "
                           "\"max_unavailable\": 2, \"max_surge\": 2, \"health_gate\": true, "
                           "\"deadline\": 60, \"rollback\": true, \"mode\": \"auto\"}");
    assert_true(json_equal(json_object_get(spec, "updatePolicy"), want));
    assert_string_equal(json_string_value(json_object_get(spec, "moveCost")), "Medium");
    json_decref(want);
    json_decref(spec);
}

static void test_without_them_there_is_no_policy_and_the_move_cost_is_low(void **state)
{
    (void)state;
    json_t *spec = spec_of("{\"command\": [\"x\"]}");
    assert_null(json_object_get(spec, "updatePolicy"));
    assert_string_equal(json_string_value(json_object_get(spec, "moveCost")), "Low");
    json_decref(spec);
}

static void test_the_policy_and_the_move_cost_are_not_part_of_the_digest(void **state)
{
    (void)state;
    json_t *a = spec_of("{\"command\": [\"x\"]}");
    json_t *b = spec_of("{\"command\": [\"x\"], \"update_policy\": {\"step\": 3}, \"move_cost\": "
                        "\"High\"}");
    assert_true(json_equal(json_object_get(json_object_get(a, "process"), "digest"),
                           json_object_get(json_object_get(b, "process"), "digest")));
    json_decref(a);
    json_decref(b);
}

static void test_an_upgrade_marks_the_policy_by_upgrade_domain(void **state)
{
    (void)state;
    json_t *spec = spec_of("{\"command\": [\"x\"]}");
    cv_service_by_upgrade_domain(spec);
    const json_t *up = json_object_get(spec, "updatePolicy");
    assert_true(json_is_true(json_object_get(up, "byUpgradeDomain")));
    assert_string_equal(json_string_value(json_object_get(up, "order")), "kill_first");
    assert_int_equal(json_integer_value(json_object_get(up, "deadline")), 60);
    json_decref(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_update_policies_are_refused_naming_the_key),
        cmocka_unit_test(test_a_bad_move_cost_names_the_allowed_values),
        cmocka_unit_test(test_the_spec_holds_the_policy_with_its_defaults),
        cmocka_unit_test(test_without_them_there_is_no_policy_and_the_move_cost_is_low),
        cmocka_unit_test(test_the_policy_and_the_move_cost_are_not_part_of_the_digest),
        cmocka_unit_test(test_an_upgrade_marks_the_policy_by_upgrade_domain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
