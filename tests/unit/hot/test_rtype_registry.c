/*
 * Specification of the resource-type registry, intrinsic-function detection
 * and OS::Heat::None.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_rtype.h"
#include "test_util.h"

#include <string.h>

#define UUID "0123456789abcdef-0123-4567-89ab-cdef01234567"

static bool intrinsic(const char *text)
{
    json_t *v = tu_json(text);
    bool yes = cv_is_intrinsic(v);
    json_decref(v);
    return yes;
}

static void test_builtin_types_are_found_by_their_exact_name(void **state)
{
    (void)state;
    const char *names[] = {"OS::Heat::None", "OS::Heat::TestResource", "OS::Heat::RandomString",
                           "OS::Heat::Value"};
    for (size_t i = 0; i < 4; i++) {
        const cv_rtype_t *t = cv_rtype_find(names[i]);
        assert_non_null(t);
        assert_string_equal(t->name, names[i]);
        assert_non_null(t->create);
        assert_non_null(t->update);
        assert_non_null(t->remove);
        assert_non_null(t->observe);
    }
}

static void test_unknown_or_misspelt_types_are_not_found(void **state)
{
    (void)state;
    assert_null(cv_rtype_find("OS::Nova::Server"));
    assert_null(cv_rtype_find("os::heat::none"));
    assert_null(cv_rtype_find("OS::Heat::None "));
    assert_null(cv_rtype_find(""));
    assert_null(cv_rtype_find(NULL));
}

static void test_every_type_has_the_show_attribute(void **state)
{
    (void)state;
    const char *names[] = {"OS::Heat::None", "OS::Heat::TestResource", "OS::Heat::RandomString",
                           "OS::Heat::Value"};
    for (size_t i = 0; i < 4; i++)
        assert_true(cv_rtype_has_attr(cv_rtype_find(names[i]), "show"));
}

static void test_types_have_their_listed_attributes_only(void **state)
{
    (void)state;
    assert_true(cv_rtype_has_attr(cv_rtype_find("OS::Heat::TestResource"), "output"));
    assert_false(cv_rtype_has_attr(cv_rtype_find("OS::Heat::TestResource"), "value"));
    assert_true(cv_rtype_has_attr(cv_rtype_find("OS::Heat::RandomString"), "value"));
    assert_false(cv_rtype_has_attr(cv_rtype_find("OS::Heat::RandomString"), "output"));
    assert_true(cv_rtype_has_attr(cv_rtype_find("OS::Heat::Value"), "value"));
    assert_false(cv_rtype_has_attr(cv_rtype_find("OS::Heat::None"), "anything"));
}

static void test_intrinsic_calls_are_recognised(void **state)
{
    (void)state;
    const char *calls[] = {
        "{\"get_param\": \"x\"}",
        "{\"get_resource\": \"r\"}",
        "{\"get_attr\": [\"r\", \"a\"]}",
        "{\"str_replace\": {}}",
        "{\"list_join\": [\",\", []]}",
        "{\"get_file\": \"f\"}",
        "{\"repeat\": {}}",
        "{\"digest\": []}",
        "{\"str_split\": []}",
        "{\"map_merge\": []}",
        "{\"map_replace\": []}",
        "{\"yaql\": {}}",
        "{\"if\": []}",
        "{\"equals\": []}",
        "{\"not\": true}",
        "{\"and\": []}",
        "{\"or\": []}",
        "{\"contains\": []}",
        "{\"filter\": []}",
        "{\"make_url\": {}}",
        "{\"list_concat\": []}",
        "{\"list_concat_unique\": []}",
        "{\"str_replace_strict\": {}}",
        "{\"str_replace_vstrict\": {}}",
        "{\"resource_facade\": \"metadata\"}",
        "{\"get_input\": \"i\"}",
        "{\"Fn::GetAtt\": [\"r\", \"a\"]}",
        "{\"Fn::Join\": []}",
        "{\"Ref\": \"r\"}",
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
        if (!intrinsic(calls[i]))
            fail_msg("%s is not recognised", calls[i]);
}

static void test_other_values_are_not_intrinsic_calls(void **state)
{
    (void)state;
    assert_false(intrinsic("{\"get_param\": \"x\", \"other\": 1}"));
    assert_false(intrinsic("{\"get_params\": \"x\"}"));
    assert_false(intrinsic("{\"Fn:\": 1}"));
    assert_false(intrinsic("{}"));
    assert_false(intrinsic("[{\"get_param\": \"x\"}]"));
    assert_false(intrinsic("\"get_param\""));
    assert_false(cv_is_intrinsic(NULL));
}

/* ---------------------------------------------------------------- OS::Heat::None */

static void test_none_accepts_any_properties(void **state)
{
    (void)state;
    const cv_rtype_t *none = cv_rtype_find("OS::Heat::None");
    json_t *props =
        tu_json("{\"flavor\": \"m1.small\", \"anything\": [1, {\"get_param\": \"x\"}]}");
    char err[256] = "";
    json_t *out =
        cv_rtype_apply_schema(none, props, "resources.r.properties", true, err, sizeof(err));
    assert_non_null(out);
    assert_true(json_equal(out, props));
    json_decref(out);
    out = cv_rtype_apply_schema(none, NULL, "resources.r.properties", false, err, sizeof(err));
    assert_non_null(out);
    assert_int_equal(json_object_size(out), 0);
    json_decref(out);
    json_decref(props);
}

static void test_none_still_wants_a_map_of_properties(void **state)
{
    (void)state;
    json_t *props = tu_json("[1]");
    char err[256] = "";
    assert_null(cv_rtype_apply_schema(cv_rtype_find("OS::Heat::None"), props,
                                      "resources.r.properties", false, err, sizeof(err)));
    assert_string_equal(err, "resources.r.properties: expected map, got [1]");
    json_decref(props);
}

static void test_none_is_complete_at_once_with_the_usual_physical_id(void **state)
{
    (void)state;
    const cv_rtype_t *none = cv_rtype_find("OS::Heat::None");
    json_t *props = json_object();
    cv_rstate_t st = {.stack_name = "stk",
                      .resource_name = "r",
                      .uuid = UUID,
                      .props = props,
                      .now = 100,
                      .data = json_object(),
                      .attrs = json_object()};
    assert_int_equal(none->create(&st), 0);
    assert_string_equal(st.physical_id, "stk-r-0123456789ab");
    assert_int_equal(none->observe(&st, CV_ACTION_CREATE), CV_OBSERVED_COMPLETE);
    assert_int_equal(none->update(&st), 0);
    assert_string_equal(st.physical_id, "stk-r-0123456789ab");
    assert_int_equal(none->observe(&st, CV_ACTION_UPDATE), CV_OBSERVED_COMPLETE);
    assert_int_equal(none->remove(&st), 0);
    assert_int_equal(none->observe(&st, CV_ACTION_DELETE), CV_OBSERVED_COMPLETE);
    json_decref(st.data);
    json_decref(st.attrs);
    json_decref(props);
}

static void test_none_is_never_replaced(void **state)
{
    (void)state;
    json_t *a = tu_json("{\"image\": \"a\"}"), *b = tu_json("{\"image\": \"b\", \"x\": 1}");
    assert_false(cv_rtype_needs_replacement(cv_rtype_find("OS::Heat::None"), a, b));
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_types_are_found_by_their_exact_name),
        cmocka_unit_test(test_unknown_or_misspelt_types_are_not_found),
        cmocka_unit_test(test_every_type_has_the_show_attribute),
        cmocka_unit_test(test_types_have_their_listed_attributes_only),
        cmocka_unit_test(test_intrinsic_calls_are_recognised),
        cmocka_unit_test(test_other_values_are_not_intrinsic_calls),
        cmocka_unit_test(test_none_accepts_any_properties),
        cmocka_unit_test(test_none_still_wants_a_map_of_properties),
        cmocka_unit_test(test_none_is_complete_at_once_with_the_usual_physical_id),
        cmocka_unit_test(test_none_is_never_replaced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
