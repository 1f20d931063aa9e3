/* A resource's stored definition, decoded as a CHECK job reads it (cv_rdef). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cv_rdef.h"
#include "test_util.h"

static void test_a_definition_without_optional_members_takes_the_defaults(void **state)
{
    (void)state;
    cv_rdef_t d;
    assert_int_equal(cv_rdef_decode(&d, "{\"type\": \"OS::Heat::None\"}", NULL, 0), 0);
    assert_true(cv_rdef_defined(&d));
    assert_int_equal(d.deletion_policy, CV_RDEF_DELETE);
    assert_int_equal(d.depends.n, 0);
    assert_null(d.props);
    assert_null(d.declared_type);
    assert_false(d.restrict_update);
    assert_false(d.restrict_replace);
    cv_rdef_clear(&d);
    assert_false(cv_rdef_defined(&d));
}

static void test_a_definition_without_a_type_names_the_empty_type(void **state)
{
    (void)state;
    cv_rdef_t d;
    assert_int_equal(cv_rdef_decode(&d, "{\"properties\": {}}", NULL, 0), 0);
    assert_string_equal(d.type, "");
    cv_rdef_clear(&d);
}

static void test_restricted_actions_and_nested_decode_to_flags(void **state)
{
    (void)state;
    cv_rdef_t d;
    const char *text = "{\"type\": \"OS::Heat::Stack\", \"nested\": true, \"env\": {},"
                       " \"restricted_actions\": {\"update\": false, \"replace\": true}}";
    assert_int_equal(cv_rdef_decode(&d, text, NULL, 0), 0);
    assert_true(d.nested);
    assert_false(d.restrict_update);
    assert_true(d.restrict_replace);
    assert_non_null(d.env);
    cv_rdef_clear(&d);
}

static void test_depends_is_recorded_as_a_compact_list_of_names(void **state)
{
    (void)state;
    cv_rdef_t d;
    assert_int_equal(
        cv_rdef_decode(&d, "{\"type\": \"T\", \"depends\": [\"a\", \"b\\\"c\"]}", NULL, 0), 0);
    char *text = cv_rdef_depends_json(&d);
    assert_string_equal(text, "[\"a\",\"b\\\"c\"]");
    free(text);
    cv_rdef_clear(&d);
    cv_rdef_t none = {0};
    text = cv_rdef_depends_json(&none);
    assert_string_equal(text, "[]");
    free(text);
}

static void test_every_policy_spelling_the_parser_writes_decodes(void **state)
{
    (void)state;
    static const char *const names[] = {"Delete", "Retain", "Snapshot"};
    for (int i = 0; i < 3; i++) {
        char text[96];
        cv_rdef_t d;
        snprintf(text, sizeof(text), "{\"type\": \"T\", \"deletion_policy\": \"%s\"}", names[i]);
        assert_int_equal(cv_rdef_decode(&d, text, NULL, 0), 0);
        assert_string_equal(cv_rdef_policy_name(d.deletion_policy), names[i]);
        cv_rdef_clear(&d);
    }
}

static void test_text_that_is_not_an_object_is_malformed(void **state)
{
    (void)state;
    cv_rdef_t d;
    char err[128];
    assert_int_equal(cv_rdef_decode(&d, "{\"type\": ", err, sizeof(err)), CV_EPROTO);
    assert_contains(err, "not a JSON object");
    assert_false(cv_rdef_defined(&d));
    assert_int_equal(cv_rdef_decode(&d, "[]", err, sizeof(err)), CV_EPROTO);
    assert_false(cv_rdef_defined(&d));
}

static void test_an_unknown_deletion_policy_is_malformed(void **state)
{
    (void)state;
    cv_rdef_t d;
    char err[128];
    const char *text = "{\"type\": \"T\", \"deletion_policy\": \"retain\"}";
    assert_int_equal(cv_rdef_decode(&d, text, err, sizeof(err)), CV_EPROTO);
    assert_contains(err, "deletion_policy must be Delete, Retain or Snapshot");
    assert_false(cv_rdef_defined(&d));
}

static void test_depends_that_is_not_a_list_of_names_is_malformed(void **state)
{
    (void)state;
    cv_rdef_t d;
    char err[128];
    assert_int_equal(
        cv_rdef_decode(&d, "{\"type\": \"T\", \"depends\": [\"a\", 1]}", err, sizeof(err)),
        CV_EPROTO);
    assert_contains(err, "depends must be a list of names");
    assert_int_equal(cv_rdef_decode(&d, "{\"type\": \"T\", \"depends\": \"a\"}", err, sizeof(err)),
                     CV_EPROTO);
    assert_false(cv_rdef_defined(&d));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_definition_without_optional_members_takes_the_defaults),
        cmocka_unit_test(test_a_definition_without_a_type_names_the_empty_type),
        cmocka_unit_test(test_restricted_actions_and_nested_decode_to_flags),
        cmocka_unit_test(test_depends_is_recorded_as_a_compact_list_of_names),
        cmocka_unit_test(test_every_policy_spelling_the_parser_writes_decodes),
        cmocka_unit_test(test_text_that_is_not_an_object_is_malformed),
        cmocka_unit_test(test_an_unknown_deletion_policy_is_malformed),
        cmocka_unit_test(test_depends_that_is_not_a_list_of_names_is_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
