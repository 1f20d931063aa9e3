/*
 * Specification of the CHECK decision for external_id (Heat's adoption) and
 * of the reference id the decision passes to successors: an external
 * resource is adopted (action ADOPT, its physical id the external_id, no
 * type operation); kept as it is while its external_id stays; an
 * external_id added, removed or changed fails the update with Heat's
 * NotSupported message; a RandomString passes its value as its reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_checkjob.h"
#include "test_decide_fixture.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

/* The definition of "r": `type`, properties, and external_id (JSON, NULL none). */
static void define(fixture_t *f, const char *type, const char *props_json, const char *ext_json)
{
    json_decref(f->rdef);
    f->rdef = json_pack("{s:s, s:o, s:s, s:{}, s:[]}", "type", type, "properties",
                        tu_json(props_json), "deletion_policy", "Delete", "metadata", "depends");
    if (ext_json)
        json_object_set_new(f->rdef, "external_id", tu_json(ext_json));
}

/* A complete recorded version of an earlier traversal; adopted with
 * `adopted` unless NULL. */
static void record(fixture_t *f, const char *type, const char *props_json, const char *adopted)
{
    f->rec.exists = true;
    strcpy(f->rec.status, adopted ? "ADOPT_COMPLETE" : "CREATE_COMPLETE");
    strcpy(f->rec.action, adopted ? "ADOPT" : "CREATE");
    snprintf(f->rec.type, sizeof(f->rec.type), "%s", type);
    snprintf(f->rec.physical_id, sizeof(f->rec.physical_id), "%s", adopted ? adopted : "phys-old");
    strcpy(f->rec.uuid, "uuid-old");
    strcpy(f->rec.version, "7");
    strcpy(f->rec.policy, "Delete");
    f->rec.traversal = 4;
    json_t *raw = tu_json(props_json);
    char err[256];
    json_decref(f->rec.props);
    f->rec.props = cv_rtype_apply_schema(cv_rtype_lookup(type), raw, "p", false, err, sizeof(err));
    json_decref(raw);
    if (adopted)
        json_object_set_new(f->rec.data, "external_id", json_string(adopted));
}

static void test_an_external_resource_is_adopted_not_created(void **state)
{
    fixture_t *f = *state;
    define(f, "OS::Heat::TestResource", "{}", "\"vol-123\"");
    const cv_check_outcome_t *out = decide(f);
    assert_kind(out, CREATE);
    assert_string_equal(out->status, "ADOPT_IN_PROGRESS");
    assert_string_equal(out->action, "ADOPT");
    assert_string_equal(out->external_id, "vol-123");
    /* Carried out: the physical id is the external_id, no wait recorded. */
    cv_rstate_t st;
    assert_int_equal(cv_check_act(&f->job, &f->rec, &f->out, NOW, &st, NULL, NULL), 0);
    assert_string_equal(st.physical_id, "vol-123");
    assert_string_equal(cv_rtype_adopted_id(st.data), "vol-123");
    assert_null(json_object_get(st.data, "wait"));
    cv_record_state_clear(&st);
}

static void test_an_external_id_may_come_from_a_parameter(void **state)
{
    fixture_t *f = *state;
    json_object_set_new(f->params, "ext", json_string("from-param"));
    define(f, "OS::Heat::None", "{}", "{\"get_param\": \"ext\"}");
    assert_string_equal(decide(f)->external_id, "from-param");
}

static void test_an_external_id_that_is_not_a_string_fails(void **state)
{
    fixture_t *f = *state;
    json_object_set_new(f->params, "ext", json_integer(3));
    define(f, "OS::Heat::None", "{}", "{\"get_param\": \"ext\"}");
    const cv_check_outcome_t *out = decide(f);
    assert_kind(out, FAIL);
    assert_string_equal(out->reason, "Resource r external_id type must be string");
}

static void test_an_adopted_resource_is_kept_whatever_its_properties(void **state)
{
    fixture_t *f = *state;
    record(f, "OS::Heat::TestResource", "{\"value\": \"a\"}", "vol-123");
    define(f, "OS::Heat::TestResource", "{\"value\": \"b\"}", "\"vol-123\"");
    const cv_check_outcome_t *out = decide(f);
    assert_kind(out, DONE);
    json_t *pass = tu_json(out->pass);
    assert_string_equal(json_string_value(json_object_get(pass, "id")), "vol-123");
    json_decref(pass);
}

static void test_changing_an_external_id_is_not_supported(void **state)
{
    fixture_t *f = *state;
    record(f, "OS::Heat::None", "{}", "vol-123");
    define(f, "OS::Heat::None", "{}", "\"vol-456\"");
    const cv_check_outcome_t *out = decide(f);
    assert_kind(out, FAIL);
    assert_string_equal(out->status, "UPDATE_FAILED");
    assert_string_equal(out->reason, "NotSupported: resources.r: Update to property external_id "
                                     "of r (OS::Heat::None) is not supported.");
}

static void test_adding_or_removing_an_external_id_is_not_supported(void **state)
{
    fixture_t *f = *state;
    record(f, "OS::Heat::None", "{}", NULL);
    define(f, "OS::Heat::None", "{}", "\"vol-123\"");
    assert_kind(decide(f), FAIL);
    json_object_set_new(f->rec.data, "external_id", json_string("vol-123"));
    define(f, "OS::Heat::None", "{}", NULL);
    assert_kind(decide(f), FAIL);
    assert_string_equal(f->out.reason, "NotSupported: resources.r: Update to property "
                                       "external_id of r (OS::Heat::None) is not supported.");
}

static void test_a_nested_resource_cannot_be_adopted(void **state)
{
    fixture_t *f = *state;
    define(f, "OS::Heat::ResourceGroup", "{\"resource_def\": {\"type\": \"OS::Heat::None\"}}",
           "\"abc\"");
    const cv_check_outcome_t *out = decide(f);
    assert_kind(out, FAIL);
    assert_string_equal(out->reason,
                        "resources.r: external_id is not supported for OS::Heat::ResourceGroup");
}

static void test_a_random_string_passes_its_value_as_reference(void **state)
{
    fixture_t *f = *state;
    record(f, "OS::Heat::RandomString", "{\"length\": 8}", NULL);
    json_object_set_new(f->rec.attrs, "value", json_string("abcdefgh"));
    define(f, "OS::Heat::RandomString", "{\"length\": 8}", NULL);
    const cv_check_outcome_t *out = decide(f);
    assert_kind(out, DONE);
    json_t *pass = tu_json(out->pass);
    assert_string_equal(json_string_value(json_object_get(pass, "id")), "abcdefgh");
    json_decref(pass);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_an_external_resource_is_adopted_not_created, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_external_id_may_come_from_a_parameter, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_external_id_that_is_not_a_string_fails, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_adopted_resource_is_kept_whatever_its_properties,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_changing_an_external_id_is_not_supported, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_adding_or_removing_an_external_id_is_not_supported,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_nested_resource_cannot_be_adopted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_random_string_passes_its_value_as_reference, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
