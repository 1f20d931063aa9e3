/*
 * Specification of the CHECK decision (cv_check_decide): one test per row
 * of the table in engine/convergence/cv_decide.h, with the real built-in types,
 * including the rows integration tests reach only through timing
 * (redeliveries, an update overtaking a create in progress).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_decide_fixture.h"
#include "cv_contract.h"
#include "cv_hot.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define TEST_RESOURCE "OS::Heat::TestResource"
/* `props_json` with the schema of `type` applied, as a recorded version
 * and a resolved definition hold them. */
static json_t *with_schema(const char *type, const char *props_json)
{
    json_t *raw = tu_json(props_json);
    char err[256] = "";
    json_t *props = cv_rtype_apply_schema(cv_rtype_lookup(type), raw, "resources.r.properties",
                                          false, err, sizeof(err));
    if (!props)
        fail_msg("%s refused: %s", props_json, err);
    json_decref(raw);
    return props;
}

/* A recorded version of an earlier traversal: version 7, "phys-old". */
static void record(fixture_t *f, const char *status, const char *type, const char *props_json)
{
    f->rec.exists = true;
    snprintf(f->rec.status, sizeof(f->rec.status), "%s", status);
    snprintf(f->rec.action, sizeof(f->rec.action), "%.*s", (int)strcspn(status, "_"), status);
    snprintf(f->rec.type, sizeof(f->rec.type), "%s", type);
    strcpy(f->rec.physical_id, "phys-old");
    strcpy(f->rec.uuid, "uuid-old");
    strcpy(f->rec.version, "7");
    strcpy(f->rec.policy, "Delete");
    f->rec.traversal = 4;
    f->rec.started = NOW - 60;
    json_decref(f->rec.props);
    f->rec.props = with_schema(type, props_json);
}

static void define(fixture_t *f, const char *type, const char *props_json)
{
    json_decref(f->rdef);
    f->rdef = json_pack("{s:s, s:o, s:s, s:{}, s:[]}", "type", type, "properties",
                        tu_json(props_json), "deletion_policy", "Delete", "metadata", "depends");
}

/* A replaced version in the record's list. */
static void replaced(fixture_t *f, const char *uuid, const char *type, const char *status,
                     const char *policy)
{
    json_array_append_new(f->rec.old, json_pack("{s:s, s:s, s:s, s:{}, s:{}, s:{}, s:s, s:s, s:f}",
                                                "uuid", uuid, "physical_id", uuid, "type", type,
                                                "props", "attrs", "data", "status", status,
                                                "policy", policy, "started", NOW - 120));
}

static void cleanup_node(fixture_t *f)
{
    f->job.phase = CV_PHASE_CLEANUP;
}

static void assert_json(const json_t *got, const char *want_json)
{
    json_t *want = tu_json(want_json);
    if (!json_equal(got, want)) {
        char *text = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        fail_msg("got %s, want %s", text ? text : "NULL", want_json);
    }
    json_decref(want);
}

/* ---- update nodes: load failures ---- */

static void test_load_error_fails_with_its_reason(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{}");
    f->load_error = "resources.r: malformed check_begin reply";
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->status, "CREATE_FAILED");
    assert_string_equal(o->action, "CREATE");
    assert_string_equal(o->reason, "resources.r: malformed check_begin reply");
}

static void test_parameters_that_are_not_json_fail(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{}");
    json_decref(f->params);
    f->params = NULL;
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->reason, "stored parameters are not JSON");
}

static void test_missing_stored_definition_fails_naming_the_resource(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->status, "UPDATE_FAILED");
    assert_string_equal(o->action, "UPDATE");
    assert_string_equal(o->reason, "resources.r: no stored definition");
}

static void test_unknown_type_fails_naming_the_resource_and_type(void **state)
{
    fixture_t *f = *state;
    define(f, "OS::Nova::Nothing", "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->status, "CREATE_FAILED");
    assert_string_equal(o->reason,
                        "resources.r: The Resource Type (OS::Nova::Nothing) could not be found.");
    assert_null(o->type);
}

/* ---- update nodes: redeliveries ---- */

static void test_action_recorded_this_traversal_is_observed_again(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"b\"}");
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE, "{\"value\": \"a\"}");
    f->rec.traversal = f->job.traversal;
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, OBSERVE_AGAIN);
    assert_string_equal(o->version, "7");
}

static void test_completed_action_recorded_this_traversal_is_observed_again(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{}");
    record(f, "UPDATE_COMPLETE", TEST_RESOURCE, "{}");
    f->rec.traversal = f->job.traversal;
    assert_kind(decide(f), OBSERVE_AGAIN);
}

static void test_failed_action_recorded_this_traversal_ends(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{}");
    record(f, "CREATE_FAILED", TEST_RESOURCE, "{}");
    f->rec.traversal = f->job.traversal;
    assert_kind(decide(f), END);
}

/* ---- update nodes: properties ---- */

static void test_unresolvable_property_fails_naming_resource_and_property(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": {\"get_param\": \"missing_param\"}}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->status, "CREATE_FAILED");
    assert_contains(o->reason, "resources.r.properties");
    assert_contains(o->reason, "missing_param");
}

static void test_property_outside_the_schema_fails_naming_it(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"bogus\": 1}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->status, "UPDATE_FAILED");
    assert_string_equal(o->action, "UPDATE");
    assert_contains(o->reason, "resources.r.properties.bogus");
}

static void test_properties_take_parameters(void **state)
{
    fixture_t *f = *state;
    json_object_set_new(f->params, "p", json_string("from-param"));
    define(f, "OS::Heat::Value", "{\"value\": {\"get_param\": \"p\"}}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, CREATE);
    assert_string_equal(json_string_value(json_object_get(o->props, "value")), "from-param");
}

static void test_properties_take_parents_attributes_from_the_sync_point(void **state)
{
    fixture_t *f = *state;
    json_object_set_new(f->sp, "u/parent",
                        tu_json("{\"id\": \"parent-id\", \"attrs\": {\"output\": \"x\"}}"));
    define(f, TEST_RESOURCE,
           "{\"value\": {\"get_attr\": [\"parent\", \"output\"]}, \"client_name\": "
           "{\"get_resource\": \"parent\"}}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, CREATE);
    assert_string_equal(json_string_value(json_object_get(o->props, "value")), "x");
    assert_string_equal(json_string_value(json_object_get(o->props, "client_name")), "parent-id");
}

/* ---- update nodes: create, adopt, done, update, replace ---- */

static void test_no_record_is_created_with_a_deterministic_uuid(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"a\"}");
    const cv_check_outcome_t *o = decide(f);
    char uuid[37];
    cv_record_uuid(uuid, "stk", "r", 5);
    assert_kind(o, CREATE);
    assert_string_equal(o->status, "CREATE_IN_PROGRESS");
    assert_string_equal(o->action, "CREATE");
    assert_string_equal(o->reason, "state changed");
    assert_string_equal(o->uuid, uuid);
    assert_string_equal(o->type_name, TEST_RESOURCE);
    assert_ptr_equal(o->type, cv_rtype_find(TEST_RESOURCE));
    assert_false(o->nested);
    assert_null(o->old);
    json_t *want = with_schema(TEST_RESOURCE, "{\"value\": \"a\"}");
    assert_true(json_equal(o->props, want));
    json_decref(want);
}

static void test_unchanged_in_progress_of_an_older_traversal_is_waited_for(void **state)
{
    fixture_t *f = *state;
    /* Heat's retrigger: an update overtaking a create still in progress
     * watches it end and checks again, whatever the definition says. */
    define(f, TEST_RESOURCE, "{\"value\": \"a\"}");
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE, "{\"value\": \"a\"}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, WAIT);
    assert_string_equal(o->version, "7");
    assert_null(o->props);
}

static void test_changed_while_in_progress_is_not_cut_short(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"b\"}");
    record(f, "UPDATE_IN_PROGRESS", TEST_RESOURCE, "{\"value\": \"a\"}");
    assert_kind(decide(f), WAIT);
    /* Replacement, another type, properties that no longer resolve: the
     * running action still finishes first. */
    define(f, TEST_RESOURCE, "{\"update_replace_value\": \"b\"}");
    assert_kind(decide(f), WAIT);
    define(f, "OS::Heat::Value", "{\"value\": 1}");
    assert_kind(decide(f), WAIT);
    define(f, TEST_RESOURCE, "{\"value\": {\"get_param\": \"nosuch\"}}");
    assert_kind(decide(f), WAIT);
}

static void test_an_adoption_in_flight_is_waited_for_too(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"b\"}");
    record(f, "ADOPT_IN_PROGRESS", TEST_RESOURCE, "{\"value\": \"a\"}");
    assert_kind(decide(f), WAIT);
}

static void test_rollback_waits_for_an_action_in_flight_too(void **state)
{
    fixture_t *f = *state;
    f->stack_action = "ROLLBACK";
    define(f, TEST_RESOURCE, "{\"value\": \"b\"}");
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE, "{\"value\": \"a\"}");
    assert_kind(decide(f), WAIT);
}

static void test_after_the_older_action_completes_the_change_is_made(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"b\"}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"value\": \"a\"}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, UPDATE);
    assert_string_equal(o->uuid, "uuid-old");
}

static void test_after_the_older_action_failed_it_is_replaced(void **state)
{
    fixture_t *f = *state;
    /* A failure in a superseded traversal: the resource is replaced, not
     * updated, and the stack goes on. */
    define(f, TEST_RESOURCE, "{\"value\": \"a\"}");
    record(f, "CREATE_FAILED", TEST_RESOURCE, "{\"value\": \"a\"}");
    assert_kind(decide(f), REPLACE);
}

static void test_resource_marked_unhealthy_is_replaced(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"a\"}");
    record(f, "CHECK_FAILED", TEST_RESOURCE, "{\"value\": \"a\"}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, REPLACE);
    assert_string_equal(o->reason, "state changed");
    assert_null(o->events); /* no update began: Heat replaces a failed one at once */
}

static void test_unchanged_complete_is_done_passing_id_and_attributes(void **state)
{
    fixture_t *f = *state;
    define(f, "OS::Heat::Value", "{\"value\": 3}");
    record(f, "UPDATE_COMPLETE", "OS::Heat::Value", "{\"value\": 3}");
    json_object_set_new(f->rec.attrs, "value", json_integer(3));
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, DONE);
    assert_string_equal(o->status, "");
    assert_string_equal(o->action, "UPDATE");
    json_t *pass = tu_json(o->pass);
    assert_json(pass, "{\"id\": \"phys-old\", \"attrs\": {\"value\": 3}}");
    json_decref(pass);
}

static void test_none_with_changed_properties_is_done_untouched(void **state)
{
    fixture_t *f = *state;
    /* OS::Heat::None never needs an update (Heat's _needs_update is False):
     * no action, no event, its status stays CREATE_COMPLETE. */
    define(f, "OS::Heat::None", "{\"x\": 2}");
    record(f, "CREATE_COMPLETE", "OS::Heat::None", "{\"x\": 1}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, DONE);
    assert_string_equal(o->status, "");
    assert_string_equal(o->action, "CREATE");
}

static void test_none_in_progress_is_waited_for(void **state)
{
    fixture_t *f = *state;
    define(f, "OS::Heat::None", "{\"x\": 2}");
    record(f, "CREATE_IN_PROGRESS", "OS::Heat::None", "{\"x\": 1}");
    assert_kind(decide(f), WAIT);
}

/* ---- rollback reuses the replaced version ---- */

static void test_rollback_restores_the_replaced_version_of_the_old_definition(void **state)
{
    fixture_t *f = *state;
    f->stack_action = "ROLLBACK";
    define(f, TEST_RESOURCE, "{\"update_replace_value\": \"a\"}");
    record(f, "CREATE_FAILED", TEST_RESOURCE, "{\"update_replace_value\": \"b\"}");
    json_t *orig = json_pack(
        "{s:s, s:s, s:s, s:o, s:{s:i}, s:{s:i}, s:s, s:s, s:f}", "uuid", "uuid-orig", "physical_id",
        "phys-orig", "type", TEST_RESOURCE, "props",
        with_schema(TEST_RESOURCE, "{\"update_replace_value\": \"a\"}"), "attrs", "n", 1, "data",
        "d", 2, "status", "CREATE_COMPLETE", "policy", "Delete", "started", NOW - 300);
    replaced(f, "older", TEST_RESOURCE, "DELETE_IN_PROGRESS", "Delete");
    json_array_append_new(f->rec.old, orig);
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, RESTORE);
    assert_string_equal(o->status, "CREATE_COMPLETE");
    assert_string_equal(o->action, "CREATE");
    assert_string_equal(o->uuid, "uuid-orig");
    assert_string_equal(json_string_value(json_object_get(o->restored, "physical_id")),
                        "phys-orig");
    /* The failed replacement is left to the cleanup node; the rest stay. */
    assert_int_equal(json_array_size(o->old), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 0), "uuid")),
                        "older");
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 1), "uuid")),
                        "uuid-old");
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 1), "status")),
                        "CREATE_FAILED");
}

static void test_rollback_does_not_restore_a_failed_or_different_version(void **state)
{
    fixture_t *f = *state;
    f->stack_action = "ROLLBACK";
    define(f, TEST_RESOURCE, "{\"update_replace_value\": \"a\"}");
    record(f, "CREATE_FAILED", TEST_RESOURCE, "{\"update_replace_value\": \"b\"}");
    replaced(f, "failed", TEST_RESOURCE, "CREATE_FAILED", "Delete");
    json_object_set_new(json_array_get(f->rec.old, 0), "props",
                        with_schema(TEST_RESOURCE, "{\"update_replace_value\": \"a\"}"));
    replaced(f, "other", TEST_RESOURCE, "CREATE_COMPLETE", "Delete"); /* other properties */
    assert_kind(decide(f), REPLACE);
}

static void test_update_never_restores(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"update_replace_value\": \"a\"}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"update_replace_value\": \"b\"}");
    replaced(f, "orig", TEST_RESOURCE, "CREATE_COMPLETE", "Delete");
    json_object_set_new(json_array_get(f->rec.old, 0), "props",
                        with_schema(TEST_RESOURCE, "{\"update_replace_value\": \"a\"}"));
    assert_kind(decide(f), REPLACE);
}

/* Heat's manual rollback (test_create_update.py
 * test_stack_update_replace_manual_rollback): after a failed replacement,
 * an update giving the old template back keeps the original resource. */
static void test_update_over_a_failed_replacement_restores_the_original(void **state)
{
    fixture_t *f = *state;
    f->stack_action = "UPDATE";
    define(f, TEST_RESOURCE, "{\"update_replace_value\": \"a\"}");
    record(f, "CREATE_FAILED", TEST_RESOURCE, "{\"update_replace_value\": \"b\"}");
    replaced(f, "orig", TEST_RESOURCE, "CREATE_COMPLETE", "Delete");
    json_object_set_new(json_array_get(f->rec.old, 0), "props",
                        with_schema(TEST_RESOURCE, "{\"update_replace_value\": \"a\"}"));
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, RESTORE);
    assert_string_equal(o->uuid, "orig");
    assert_string_equal(o->reason, "restored: the failed replacement is dropped");
    assert_int_equal(json_array_size(o->old), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 0), "status")),
                        "CREATE_FAILED");
    /* An original of other properties: the failed version is replaced. */
    json_object_set_new(json_array_get(f->rec.old, 0), "props",
                        with_schema(TEST_RESOURCE, "{\"update_replace_value\": \"c\"}"));
    assert_kind(decide(f), REPLACE);
}

static void test_changed_updatable_property_is_updated_in_place(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"b\"}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"value\": \"a\"}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, UPDATE);
    assert_string_equal(o->action, "UPDATE");
    assert_string_equal(o->reason, "state changed");
    assert_string_equal(o->uuid, "uuid-old");
    assert_null(o->old);
}

static void test_property_without_update_allowed_is_replaced(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"update_replace_value\": \"b\"}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"update_replace_value\": \"a\"}");
    const cv_check_outcome_t *o = decide(f);
    char uuid[37];
    cv_record_uuid(uuid, "stk", "r", 5);
    assert_kind(o, REPLACE);
    assert_string_equal(o->status, "CREATE_IN_PROGRESS");
    assert_string_equal(o->action, "CREATE");
    assert_string_equal(o->reason, "state changed");
    assert_string_equal(o->uuid, uuid);
    assert_int_equal(json_array_size(o->old), 1);
    const json_t *entry = json_array_get(o->old, 0);
    assert_string_equal(json_string_value(json_object_get(entry, "uuid")), "uuid-old");
    assert_string_equal(json_string_value(json_object_get(entry, "physical_id")), "phys-old");
    assert_string_equal(json_string_value(json_object_get(entry, "status")), "CREATE_COMPLETE");
    assert_string_equal(json_string_value(json_object_get(entry, "policy")), "Delete");
    assert_true(json_equal(json_object_get(entry, "props"), f->rec.props));
    /* Heat's action recorder on UpdateReplace, before the new version's events. */
    assert_json(o->events, "[{\"physical_id\": \"phys-old\", \"action\": \"UPDATE\", \"status\": "
                           "\"IN_PROGRESS\", \"reason\": \"state changed\", \"first\": true},"
                           " {\"physical_id\": \"phys-old\", \"action\": \"UPDATE\", \"status\": "
                           "\"COMPLETE\", \"reason\": \"The Resource r requires replacement.\","
                           " \"first\": true}]");
}

static void test_random_string_length_change_is_replaced(void **state)
{
    fixture_t *f = *state;
    define(f, "OS::Heat::RandomString", "{\"length\": 16}");
    record(f, "CREATE_COMPLETE", "OS::Heat::RandomString", "{\"length\": 8}");
    assert_kind(decide(f), REPLACE);
}

static void test_type_rule_update_replace_replaces(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"update_replace\": true, \"value\": \"b\"}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"update_replace\": true, \"value\": \"a\"}");
    assert_kind(decide(f), REPLACE);
}

static void test_failed_version_is_replaced_even_when_unchanged(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"a\"}");
    record(f, "UPDATE_FAILED", TEST_RESOURCE, "{\"value\": \"a\"}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, REPLACE);
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 0), "status")),
                        "UPDATE_FAILED");
}

static void test_version_being_deleted_is_replaced(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"a\"}");
    record(f, "DELETE_IN_PROGRESS", TEST_RESOURCE, "{\"value\": \"a\"}");
    assert_kind(decide(f), REPLACE);
}

static void test_version_of_another_type_is_replaced(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{}");
    record(f, "CREATE_COMPLETE", "OS::Heat::None", "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, REPLACE);
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 0), "type")),
                        "OS::Heat::None");
}

/* ---- update nodes: types the environment's registry maps ---- */

/* The definition of `declared`, which the registry maps to `type`. */
static void define_mapped(fixture_t *f, const char *declared, const char *type,
                          const char *props_json)
{
    define(f, type, props_json);
    json_object_set_new(f->rdef, "declared_type", json_string(declared));
}

static void record_mapped(fixture_t *f, const char *declared, const char *type)
{
    record(f, "CREATE_COMPLETE", type, "{}");
    snprintf(f->rec.declared_type, sizeof(f->rec.declared_type), "%s", declared);
}

static void test_mapping_to_another_implementation_replaces(void **state)
{
    fixture_t *f = *state;
    define_mapped(f, "My::Thing", TEST_RESOURCE, "{}");
    record_mapped(f, "My::Thing", "OS::Heat::None");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, REPLACE);
    assert_string_equal(o->type_name, TEST_RESOURCE);
    assert_string_equal(o->declared_type, "My::Thing");
    const json_t *old = json_array_get(o->old, 0);
    assert_string_equal(json_string_value(json_object_get(old, "type")), "OS::Heat::None");
    assert_string_equal(json_string_value(json_object_get(old, "declared_type")), "My::Thing");
}

static void test_mapped_type_unchanged_is_done(void **state)
{
    fixture_t *f = *state;
    define_mapped(f, "My::Thing", TEST_RESOURCE, "{}");
    record_mapped(f, "My::Thing", TEST_RESOURCE);
    assert_kind(decide(f), DONE);
}

/* Heat's test_stack_update_alias_type: another alias of the same type is an
 * update in place (the definition changed), never a replacement. */
static void test_type_written_differently_for_the_same_implementation_updates(void **state)
{
    fixture_t *f = *state;
    define_mapped(f, "My::Other", TEST_RESOURCE, "{}");
    record_mapped(f, "My::Thing", TEST_RESOURCE);
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, UPDATE);
    assert_string_equal(o->uuid, "uuid-old");
    assert_string_equal(o->declared_type, "My::Other");
}

static void test_unmapped_definition_declares_its_own_type(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, CREATE);
    assert_string_equal(o->declared_type, TEST_RESOURCE);
}

/* A record written before the declared type was kept has none: its type
 * stands for it, so nothing changes for an unmapped resource. */
static void test_record_without_a_declared_type_is_of_its_type(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    assert_kind(decide(f), DONE);
}

static void test_cleanup_reports_the_recorded_declared_type(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record_mapped(f, "My::Thing", TEST_RESOURCE);
    replaced(f, "v1", "OS::Heat::None", "CREATE_COMPLETE", "Delete");
    json_object_set_new(json_array_get(f->rec.old, 0), "declared_type", json_string("My::Old"));
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, DELETE_CURRENT);
    assert_string_equal(o->declared_type, "My::Thing");
    /* The replaced version's events name its own type as written. */
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->events, 0), "type")),
                        "My::Old");
}

static void test_replacement_keeps_the_versions_replaced_before(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"update_replace_value\": \"c\"}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"update_replace_value\": \"b\"}");
    replaced(f, "uuid-older", TEST_RESOURCE, "DELETE_IN_PROGRESS", "Delete");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, REPLACE);
    assert_int_equal(json_array_size(o->old), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 0), "uuid")),
                        "uuid-older");
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 1), "uuid")),
                        "uuid-old");
}

/* ---- update nodes: nested stacks ---- */

#define SERVER_TPL "{\"heat_template_version\": \"2018-08-31\", \"resources\": {}}"
#define SERVER_TPL_EDITED                                                                          \
    "{\"heat_template_version\": \"2018-08-31\", \"resources\": {\"n\": {\"type\": "               \
    "\"OS::Heat::None\"}}}"

/* A template resource "server.yaml" recorded with the digest of `recorded_tpl`,
 * defined now with the files holding `current_tpl`. */
static void nested_fixture(fixture_t *f, const char *recorded_tpl, const char *current_tpl)
{
    json_t *old_files = json_pack("{s:o}", "server.yaml", tu_json(recorded_tpl));
    char digest[24];
    cv_check_template_digest(json_object_get(old_files, "server.yaml"), old_files, digest);
    json_decref(old_files);
    f->files = json_pack("{s:o}", "server.yaml", tu_json(current_tpl));
    define(f, "server.yaml", "{}");
    record(f, "CREATE_COMPLETE", "server.yaml", "{}");
    json_object_set_new(f->rec.data, "template_digest", json_string(digest));
}

static void test_nested_create_begins_a_child_stack(void **state)
{
    fixture_t *f = *state;
    f->files = json_pack("{s:o}", "server.yaml", tu_json(SERVER_TPL));
    define(f, "server.yaml", "{}");
    const cv_check_outcome_t *o = decide(f);
    char token[96];
    snprintf(token, sizeof(token), "%s:0", o->uuid);
    assert_kind(o, CREATE);
    assert_true(o->nested);
    assert_string_equal(o->child_op, "CREATE");
    assert_string_equal(o->child_token, token);
}

/* A walk (a group's batches): the observer asks for the next step with
 * the record version it saw the step end at. */
static void walking_group(fixture_t *f, const char *status)
{
    nested_fixture(f, SERVER_TPL, SERVER_TPL);
    record(f, status, "server.yaml", "{}");
    json_object_set_new(f->rec.data, "walk", tu_json("{\"steps\": 2, \"at\": 0, \"pause\": 1}"));
}

static void test_a_step_request_begins_the_walks_next_child_update(void **state)
{
    fixture_t *f = *state;
    walking_group(f, "UPDATE_IN_PROGRESS");
    f->rec.traversal = f->job.traversal;
    f->job.version = 7;
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, STEP);
    assert_string_equal(o->status, "UPDATE_IN_PROGRESS");
    assert_string_equal(o->uuid, "uuid-old");
    assert_true(o->nested);
    assert_string_equal(o->child_op, "UPDATE");
    assert_false(o->older);
    /* For a newer traversal waiting on the walk: its step, watched after. */
    f->rec.traversal = f->job.traversal - 1;
    assert_kind(decide(f), STEP);
    assert_true(f->out.older);
}

static void test_a_stale_or_finished_step_request_begins_nothing(void **state)
{
    fixture_t *f = *state;
    walking_group(f, "UPDATE_IN_PROGRESS");
    f->rec.traversal = f->job.traversal;
    f->job.version = 6; /* the record moved on since */
    assert_kind(decide(f), OBSERVE_AGAIN);
    f->job.version = 7;
    json_object_set_new(json_object_get(f->rec.data, "walk"), "at", json_integer(1));
    assert_kind(decide(f), OBSERVE_AGAIN); /* the last step is under way */
    /* A pending walk but no action in flight: as any redelivery. */
    json_object_set_new(json_object_get(f->rec.data, "walk"), "at", json_integer(0));
    snprintf(f->rec.status, sizeof(f->rec.status), "%s", "UPDATE_COMPLETE");
    assert_kind(decide(f), OBSERVE_AGAIN);
}

static void test_nested_stack_whose_template_changed_is_updated(void **state)
{
    fixture_t *f = *state;
    nested_fixture(f, SERVER_TPL, SERVER_TPL_EDITED);
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, UPDATE);
    assert_true(o->nested);
    assert_string_equal(o->child_op, "UPDATE");
    assert_string_equal(o->child_token, "uuid-old:7");
}

/* Heat: every template file is one class (TemplateResource), so a mapping
 * that names another file updates the child stack with it, in place. */
static void test_template_resource_given_another_file_updates_its_child_stack(void **state)
{
    fixture_t *f = *state;
    nested_fixture(f, SERVER_TPL, SERVER_TPL);
    json_object_set_new(f->files, "other.yaml", tu_json(SERVER_TPL_EDITED));
    define_mapped(f, "My::Server", "other.yaml", "{}");
    snprintf(f->rec.declared_type, sizeof(f->rec.declared_type), "%s", "My::Server");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, UPDATE);
    assert_true(o->nested);
    assert_string_equal(o->type_name, "other.yaml");
    assert_string_equal(o->child_op, "UPDATE");
}

static void test_template_resource_mapped_to_a_builtin_type_is_replaced(void **state)
{
    fixture_t *f = *state;
    nested_fixture(f, SERVER_TPL, SERVER_TPL);
    define_mapped(f, "My::Server", "OS::Heat::None", "{}");
    assert_kind(decide(f), REPLACE);
}

static void test_nested_stack_with_the_same_template_is_done(void **state)
{
    fixture_t *f = *state;
    nested_fixture(f, SERVER_TPL, SERVER_TPL);
    assert_kind(decide(f), DONE);
}

#define CHILD_ENV "{\"parameter_defaults\": {\"flavor\": \"small\"}}"
#define CHILD_ENV_EDITED "{\"parameter_defaults\": {\"flavor\": \"large\"}}"

/* The nested fixture with an unchanged template, its child's environment
 * recorded as `recorded_env` (NULL: a version recorded without an env
 * digest) and defined now as `current_env` (NULL: no environment). */
static void nested_env_fixture(fixture_t *f, const char *recorded_env, const char *current_env)
{
    nested_fixture(f, SERVER_TPL, SERVER_TPL);
    if (recorded_env) {
        json_t *env = tu_json(recorded_env);
        char digest[24];
        cv_check_env_digest(json_is_null(env) ? NULL : env, digest);
        json_object_set_new(f->rec.data, "env_digest", json_string(digest));
        json_decref(env);
    }
    if (current_env)
        json_object_set_new(f->rdef, "env", tu_json(current_env));
}

/* Heat's child environment is part of the child's definition: an update
 * that changes only the environment updates the nested stack. */
static void test_nested_stack_whose_environment_changed_is_updated(void **state)
{
    fixture_t *f = *state;
    nested_env_fixture(f, CHILD_ENV, CHILD_ENV_EDITED);
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, UPDATE);
    assert_true(o->nested);
    assert_string_equal(o->child_op, "UPDATE");
}

static void test_nested_stack_whose_environment_was_removed_is_updated(void **state)
{
    fixture_t *f = *state;
    nested_env_fixture(f, CHILD_ENV, NULL);
    assert_kind(decide(f), UPDATE);
}

static void test_nested_stack_with_the_same_environment_is_done(void **state)
{
    fixture_t *f = *state;
    nested_env_fixture(f, CHILD_ENV, CHILD_ENV);
    assert_kind(decide(f), DONE);
}

static void test_nested_stack_without_environment_recorded_and_defined_is_done(void **state)
{
    fixture_t *f = *state;
    nested_env_fixture(f, "null", NULL);
    assert_kind(decide(f), DONE);
}

/* A child recorded before environments were digested is not updated for
 * nothing: its environment is taken as unchanged. */
static void test_nested_stack_recorded_without_an_env_digest_is_done(void **state)
{
    fixture_t *f = *state;
    nested_env_fixture(f, NULL, CHILD_ENV);
    assert_kind(decide(f), DONE);
}

/* The template digest does not depend on the environment: the digests of
 * children recorded before are the same. */
static void test_env_digest_is_apart_from_the_template_digest(void **state)
{
    (void)state;
    json_t *tpl = tu_json(SERVER_TPL), *files = json_pack("{s:O}", "server.yaml", tpl);
    json_t *a = tu_json(CHILD_ENV), *b = tu_json(CHILD_ENV_EDITED);
    char t[24], ea[24], eb[24], ea2[24];
    cv_check_template_digest(tpl, files, t);
    assert_string_equal(t, "6573c68565a3b331"); /* as digested before env_digest */
    cv_check_env_digest(a, ea);
    cv_check_env_digest(b, eb);
    json_object_set_new(a, "resource_registry", json_object());
    json_object_del(a, "resource_registry");
    cv_check_env_digest(a, ea2);
    assert_string_not_equal(ea, eb);
    assert_string_equal(ea, ea2);
    /* Which parameters the user named is not inherited: not digested. */
    json_object_set_new(a, CV_ENV_GIVEN, json_pack("[s]", "flavor"));
    cv_check_env_digest(a, ea2);
    assert_string_equal(ea, ea2);
    json_decref(tpl);
    json_decref(files);
    json_decref(a);
    json_decref(b);
}

/* A template resource whose template reads its parent through
 * resource_facade, defined with metadata {role: get_param role}. */
#define FACADE_TPL                                                                                 \
    "{\"heat_template_version\": \"2018-08-31\", \"outputs\": {\"r\": {\"value\": "                \
    "{\"resource_facade\": \"metadata\"}}}}"

static void define_with_facade(fixture_t *f, const char *role)
{
    f->files = f->files ? f->files : json_pack("{s:o}", "server.yaml", tu_json(FACADE_TPL));
    define(f, "server.yaml", "{}");
    json_object_set_new(f->rdef, "metadata", json_pack("{s:{s:s}}", "role", "get_param", "role"));
    json_object_set_new(f->rdef, "deletion_policy", json_string("Retain"));
    json_object_set_new(f->rdef, "update_policy", json_pack("{s:i}", "batch", 2));
    json_object_set_new(f->params, "role", json_string(role));
}

/* The digest a child planned with the facade {metadata: {role: ROLE}} has. */
static void record_facade_digest(fixture_t *f, const char *role)
{
    json_t *data = json_pack("{s:{s:{s:s}, s:s, s:{s:i}}}", "facade", "metadata", "role", role,
                             "deletion_policy", "Retain", "update_policy", "batch", 2);
    json_t *tpl = NULL, *params = NULL;
    char err[256], digest[24];
    assert_int_equal(cv_rtype_lookup("server.yaml")
                         ->nested->definition("server.yaml", f->rec.props, f->files, data, &tpl,
                                              &params, err, sizeof(err)),
                     0);
    assert_json(json_object_get(json_object_get(json_object_get(tpl, "outputs"), "r"), "value"),
                "{\"role\": \"web\"}");
    cv_check_template_digest(tpl, f->files, digest);
    json_object_set_new(f->rec.data, "template_digest", json_string(digest));
    json_decref(data);
    json_decref(tpl);
    json_decref(params);
}

/* Heat's ResourceFacade: metadata and update_policy resolved, the policy. */
static void test_nested_facade_is_the_resolved_parent_definition(void **state)
{
    fixture_t *f = *state;
    define_with_facade(f, "web");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, CREATE);
    assert_json(o->facade, "{\"metadata\": {\"role\": \"web\"}, \"deletion_policy\": \"Retain\", "
                           "\"update_policy\": {\"batch\": 2}}");
}

static void test_nested_child_reading_a_changed_facade_is_updated(void **state)
{
    fixture_t *f = *state;
    define_with_facade(f, "web");
    record(f, "CREATE_COMPLETE", "server.yaml", "{}");
    record_facade_digest(f, "web");
    assert_kind(decide(f), DONE);
    define_with_facade(f, "db");
    assert_kind(decide(f), UPDATE);
}

/* ---- cleanup nodes ---- */

static void test_cleanup_with_nothing_recorded_does_nothing(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, NOTHING);
    assert_string_equal(o->status, "");
    assert_string_equal(o->action, "DELETE");
    assert_string_equal(o->pass, "{}");
    assert_null(o->old);
    assert_null(o->events);
}

static void test_cleanup_of_a_record_of_unknown_type_fails(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    strcpy(f->rec.type, "OS::Gone::Type");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->status, "DELETE_FAILED");
    assert_string_equal(o->reason,
                        "resources.r: The Resource Type (OS::Gone::Type) could not be found.");
}

static void test_resource_that_left_the_definition_is_deleted(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, DELETE_CURRENT);
    assert_string_equal(o->status, "DELETE_IN_PROGRESS");
    assert_string_equal(o->action, "DELETE");
    assert_string_equal(o->reason, "state changed");
    assert_string_equal(o->uuid, "uuid-old");
    assert_false(o->nested);
    assert_json(o->deletes, "[]");
}

static void test_nested_resource_that_left_the_definition_deletes_its_child(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "CREATE_COMPLETE", "server.yaml", "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, DELETE_CURRENT);
    assert_true(o->nested);
    assert_string_equal(o->child_op, "DELETE");
    assert_string_equal(o->child_token, "uuid-old:7:delete");
}

static void test_removal_waits_for_the_create_in_flight(void **state)
{
    fixture_t *f = *state;
    /* An update that drops a resource whose create is still running lets
     * the create finish first (Heat's retrigger). */
    cleanup_node(f);
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE, "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, WAIT);
    assert_string_equal(o->version, "7");
}

static void test_stack_delete_cancels_the_action_in_flight(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    f->stack_action = "DELETE";
    record(f, "UPDATE_IN_PROGRESS", TEST_RESOURCE, "{}");
    assert_kind(decide(f), DELETE_CURRENT);
}

static void test_cancel_does_not_wait_for_the_cancelled_update(void **state)
{
    fixture_t *f = *state;
    /* Heat's cancel-update stops the update's actions; its rollback then
     * converges back at once (and restores a replaced original). */
    f->stack_action = "CANCEL";
    define(f, TEST_RESOURCE, "{\"value\": \"a\"}");
    record(f, "UPDATE_IN_PROGRESS", TEST_RESOURCE, "{\"value\": \"b\"}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, UPDATE);
    cleanup_node(f);
    assert_kind(decide(f), NOTHING);
}

static void test_retained_resource_that_left_the_definition_is_dropped(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    strcpy(f->rec.policy, "Retain");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, RETAIN_CURRENT);
    assert_string_equal(o->status, "DELETED");
    assert_string_equal(o->action, "DELETE");
    assert_string_equal(o->reason, "retained: deletion_policy is Retain");
    assert_string_equal(o->pass, "{}");
}

static void test_delete_of_current_starts_the_replaced_deletes_too(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    replaced(f, "v1", TEST_RESOURCE, "CREATE_COMPLETE", "Delete");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, DELETE_CURRENT);
    assert_json(o->deletes, "[0]");
    assert_int_equal(json_array_size(o->events), 1);
}

static void test_replaced_versions_are_deleted_while_the_resource_stays(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    define(f, TEST_RESOURCE, "{}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    replaced(f, "v1", TEST_RESOURCE, "CREATE_COMPLETE", "Delete");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, DELETE_REPLACED);
    assert_string_equal(o->status, "");
    assert_string_equal(o->action, "DELETE");
    assert_json(o->deletes, "[0]");
    const json_t *entry = json_array_get(o->old, 0);
    assert_string_equal(json_string_value(json_object_get(entry, "status")), "DELETE_IN_PROGRESS");
    assert_true(json_real_value(json_object_get(entry, "started")) == NOW);
    assert_json(o->events, "[{\"physical_id\": \"v1\", \"action\": \"DELETE\", \"status\": "
                           "\"IN_PROGRESS\", \"reason\": \"state changed\", \"type\": "
                           "\"OS::Heat::TestResource\"}]");
}

static void test_retained_replaced_version_leaves_the_stack(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    define(f, TEST_RESOURCE, "{}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    replaced(f, "v1", TEST_RESOURCE, "CREATE_COMPLETE", "Retain");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, DELETE_REPLACED);
    assert_json(o->old, "[]");
    assert_json(o->deletes, "[]");
    assert_json(o->events, "[{\"physical_id\": \"v1\", \"action\": \"DELETE\", \"status\": "
                           "\"COMPLETE\", \"reason\": \"retained: deletion_policy is Retain\", "
                           "\"type\": \"OS::Heat::TestResource\"}]");
}

static void test_replaced_versions_keep_their_order_and_running_deletes(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    define(f, TEST_RESOURCE, "{}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    replaced(f, "running", TEST_RESOURCE, "DELETE_IN_PROGRESS", "Delete");
    replaced(f, "kept", TEST_RESOURCE, "CREATE_COMPLETE", "Retain");
    replaced(f, "next", "server.yaml", "UPDATE_FAILED", "Delete");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, DELETE_REPLACED);
    assert_int_equal(json_array_size(o->old), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 0), "uuid")),
                        "running");
    assert_true(json_real_value(json_object_get(json_array_get(o->old, 0), "started")) ==
                NOW - 120);
    assert_string_equal(json_string_value(json_object_get(json_array_get(o->old, 1), "uuid")),
                        "next");
    assert_json(o->deletes, "[1]");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(o->events, 0), "physical_id")), "kept");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(o->events, 1), "physical_id")), "next");
}

static void test_replaced_version_of_unknown_type_fails(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    define(f, TEST_RESOURCE, "{}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    replaced(f, "v1", "OS::Gone::Type", "CREATE_COMPLETE", "Delete");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->status, "DELETE_FAILED");
    assert_string_equal(o->action, "DELETE");
    assert_string_equal(o->reason,
                        "resources.r: The Resource Type (OS::Gone::Type) could not be found.");
}

static void test_only_replaced_deletes_running_are_observed(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    define(f, TEST_RESOURCE, "{}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    replaced(f, "v1", TEST_RESOURCE, "DELETE_IN_PROGRESS", "Delete");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, OBSERVE_DELETES);
    assert_string_equal(o->version, "7");
}

static void test_current_delete_running_is_observed(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "DELETE_IN_PROGRESS", TEST_RESOURCE, "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, OBSERVE_DELETES);
    assert_string_equal(o->version, "7");
}

static void test_resource_that_stays_with_nothing_replaced_is_done(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    define(f, TEST_RESOURCE, "{}");
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, NOTHING);
    assert_string_equal(o->pass, "{}");
    assert_json(o->old, "[]");
    assert_json(o->events, "[]");
}

static void test_replaced_token_names_the_version_and_record_version(void **state)
{
    (void)state;
    char token[96];
    cv_check_replaced_token(token, sizeof(token), "uuid-x", "7");
    assert_string_equal(token, "uuid-x:7:old");
}

/* ---- update nodes: actions the environment restricts ---- */

static void restrict_actions(fixture_t *f, bool update, bool replace)
{
    json_object_set_new(f->rdef, "restricted_actions",
                        json_pack("{s:b, s:b}", "update", update, "replace", replace));
}

static void test_restricted_update_fails_leaving_the_record_as_it_is(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"b\"}");
    restrict_actions(f, true, false);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"value\": \"a\"}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->status, "");
    assert_string_equal(o->action, "UPDATE");
    assert_string_equal(
        o->reason, "ResourceActionRestricted: resources.r: update is restricted for resource.");
    assert_null(o->props);
    assert_null(o->old);
}

static void test_restricted_replace_fails_leaving_the_record_as_it_is(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"update_replace_value\": \"b\"}");
    restrict_actions(f, false, true);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"update_replace_value\": \"a\"}");
    const cv_check_outcome_t *o = decide(f);
    assert_kind(o, FAIL);
    assert_string_equal(o->status, "");
    assert_string_equal(o->reason,
                        "ResourceActionRestricted: resources.r: replace is restricted for "
                        "resource.");
    assert_null(o->old);
    assert_string_equal(o->uuid, "");
}

static void test_restricted_update_does_not_stop_a_replacement(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"update_replace_value\": \"b\"}");
    restrict_actions(f, true, false);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"update_replace_value\": \"a\"}");
    assert_kind(decide(f), REPLACE);
}

static void test_restricted_replace_of_a_failed_version_fails(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"a\"}");
    restrict_actions(f, false, true);
    record(f, "UPDATE_FAILED", TEST_RESOURCE, "{\"value\": \"a\"}");
    assert_kind(decide(f), FAIL);
}

static void test_restrictions_leave_unchanged_and_new_resources_alone(void **state)
{
    fixture_t *f = *state;
    define(f, TEST_RESOURCE, "{\"value\": \"a\"}");
    restrict_actions(f, true, true);
    assert_kind(decide(f), CREATE);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE, "{\"value\": \"a\"}");
    assert_kind(decide(f), DONE);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_load_error_fails_with_its_reason),
        T(test_parameters_that_are_not_json_fail),
        T(test_missing_stored_definition_fails_naming_the_resource),
        T(test_unknown_type_fails_naming_the_resource_and_type),
        T(test_action_recorded_this_traversal_is_observed_again),
        T(test_completed_action_recorded_this_traversal_is_observed_again),
        T(test_failed_action_recorded_this_traversal_ends),
        T(test_unresolvable_property_fails_naming_resource_and_property),
        T(test_property_outside_the_schema_fails_naming_it),
        T(test_properties_take_parameters),
        T(test_properties_take_parents_attributes_from_the_sync_point),
        T(test_no_record_is_created_with_a_deterministic_uuid),
        T(test_unchanged_in_progress_of_an_older_traversal_is_waited_for),
        T(test_changed_while_in_progress_is_not_cut_short),
        T(test_an_adoption_in_flight_is_waited_for_too),
        T(test_rollback_waits_for_an_action_in_flight_too),
        T(test_after_the_older_action_completes_the_change_is_made),
        T(test_after_the_older_action_failed_it_is_replaced),
        T(test_resource_marked_unhealthy_is_replaced),
        T(test_unchanged_complete_is_done_passing_id_and_attributes),
        T(test_none_with_changed_properties_is_done_untouched),
        T(test_none_in_progress_is_waited_for),
        T(test_rollback_restores_the_replaced_version_of_the_old_definition),
        T(test_rollback_does_not_restore_a_failed_or_different_version),
        T(test_update_never_restores),
        T(test_update_over_a_failed_replacement_restores_the_original),
        T(test_changed_updatable_property_is_updated_in_place),
        T(test_property_without_update_allowed_is_replaced),
        T(test_random_string_length_change_is_replaced),
        T(test_type_rule_update_replace_replaces),
        T(test_failed_version_is_replaced_even_when_unchanged),
        T(test_version_being_deleted_is_replaced),
        T(test_version_of_another_type_is_replaced),
        T(test_mapping_to_another_implementation_replaces),
        T(test_mapped_type_unchanged_is_done),
        T(test_type_written_differently_for_the_same_implementation_updates),
        T(test_unmapped_definition_declares_its_own_type),
        T(test_record_without_a_declared_type_is_of_its_type),
        T(test_cleanup_reports_the_recorded_declared_type),
        T(test_replacement_keeps_the_versions_replaced_before),
        T(test_nested_create_begins_a_child_stack),
        T(test_a_step_request_begins_the_walks_next_child_update),
        T(test_a_stale_or_finished_step_request_begins_nothing),
        T(test_nested_stack_whose_template_changed_is_updated),
        T(test_nested_stack_with_the_same_template_is_done),
        T(test_template_resource_given_another_file_updates_its_child_stack),
        T(test_template_resource_mapped_to_a_builtin_type_is_replaced),
        T(test_nested_stack_whose_environment_changed_is_updated),
        T(test_nested_stack_whose_environment_was_removed_is_updated),
        T(test_nested_stack_with_the_same_environment_is_done),
        T(test_nested_stack_without_environment_recorded_and_defined_is_done),
        T(test_nested_stack_recorded_without_an_env_digest_is_done),
        T(test_nested_facade_is_the_resolved_parent_definition),
        T(test_nested_child_reading_a_changed_facade_is_updated),
        T(test_cleanup_with_nothing_recorded_does_nothing),
        T(test_cleanup_of_a_record_of_unknown_type_fails),
        T(test_resource_that_left_the_definition_is_deleted),
        T(test_nested_resource_that_left_the_definition_deletes_its_child),
        T(test_removal_waits_for_the_create_in_flight),
        T(test_stack_delete_cancels_the_action_in_flight),
        T(test_cancel_does_not_wait_for_the_cancelled_update),
        T(test_retained_resource_that_left_the_definition_is_dropped),
        T(test_delete_of_current_starts_the_replaced_deletes_too),
        T(test_replaced_versions_are_deleted_while_the_resource_stays),
        T(test_retained_replaced_version_leaves_the_stack),
        T(test_replaced_versions_keep_their_order_and_running_deletes),
        T(test_replaced_version_of_unknown_type_fails),
        T(test_only_replaced_deletes_running_are_observed),
        T(test_current_delete_running_is_observed),
        T(test_resource_that_stays_with_nothing_replaced_is_done),
        T(test_restricted_update_fails_leaving_the_record_as_it_is),
        T(test_restricted_replace_fails_leaving_the_record_as_it_is),
        T(test_restricted_update_does_not_stop_a_replacement),
        T(test_restricted_replace_of_a_failed_version_fails),
        T(test_restrictions_leave_unchanged_and_new_resources_alone),
        cmocka_unit_test(test_replaced_token_names_the_version_and_record_version),
        cmocka_unit_test(test_env_digest_is_apart_from_the_template_digest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
