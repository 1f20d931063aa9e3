/*
 * Specification of the OBSERVE decision (cv_observe_decide): whether a job
 * has anything to look at, and what the looks mean, with the real built-in
 * types observed on states cv_record_state builds, as the observer does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_decide.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define TEST_RESOURCE "OS::Heat::TestResource"
#define T0 1700000000.0
#define MAX_OLD 4

typedef struct fixture {
    cv_msg_t job;
    cv_record_t rec;
    /* the states the looks point into */
    cv_rstate_t st[MAX_OLD + 1];
    json_t *props[MAX_OLD + 1];
    int nst;
    cv_look_t old_looks[MAX_OLD];
    cv_observe_looks_t looks;
    cv_observe_outcome_t out;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    f->job.type = CV_MSG_OBSERVE;
    snprintf(f->job.stack, sizeof(f->job.stack), "%s", "stk");
    snprintf(f->job.resource, sizeof(f->job.resource), "%s", "r");
    f->job.phase = CV_PHASE_UPDATE;
    f->job.traversal = 5;
    f->job.version = 7;
    strcpy(f->rec.version, "0");
    f->rec.props = json_object();
    f->rec.attrs = json_object();
    f->rec.data = json_object();
    f->rec.old = json_array();
    f->looks.old = f->old_looks;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    for (int i = 0; i < f->nst; i++) {
        cv_record_state_clear(&f->st[i]);
        json_decref(f->props[i]);
    }
    cv_observe_outcome_clear(&f->out);
    cv_record_clear(&f->rec);
    free(f);
    return 0;
}

/* The record the engine wrote: version 7, "phys", action started at T0. */
static void record(fixture_t *f, const char *status, const char *type)
{
    f->rec.exists = true;
    snprintf(f->rec.status, sizeof(f->rec.status), "%s", status);
    snprintf(f->rec.action, sizeof(f->rec.action), "%.*s", (int)strcspn(status, "_"), status);
    snprintf(f->rec.type, sizeof(f->rec.type), "%s", type);
    strcpy(f->rec.physical_id, "phys");
    strcpy(f->rec.uuid, "uuid");
    strcpy(f->rec.version, "7");
    f->rec.traversal = 5;
    f->rec.started = T0;
}

static void cleanup_node(fixture_t *f)
{
    f->job.phase = CV_PHASE_CLEANUP;
}

/* A replaced version being deleted (or not, by its status). */
static void replaced(fixture_t *f, const char *pid, const char *status)
{
    json_array_append_new(f->rec.old,
                          json_pack("{s:s, s:s, s:s, s:{}, s:{}, s:{}, s:s, s:s, s:f}", "uuid", pid,
                                    "physical_id", pid, "type", TEST_RESOURCE, "props", "attrs",
                                    "data", "status", status, "policy", "Delete", "started", T0));
}

/*
 * What TestResource answers, at `now`, for `action` of a version with
 * `props_json` that started at T0: the action is run first (it records
 * its wait in data), then observed, as the engine and observer do.
 */
static cv_look_t test_resource_look(fixture_t *f, const char *props_json, cv_action_t action,
                                    double now)
{
    const cv_rtype_t *type = cv_rtype_find(TEST_RESOURCE);
    json_t *raw = tu_json(props_json);
    char err[256];
    json_t *props =
        cv_rtype_apply_schema(type, raw, "resources.r.properties", false, err, sizeof(err));
    json_decref(raw);
    cv_rstate_t *st = &f->st[f->nst];
    f->props[f->nst++] = props;
    cv_version_t v = {.stack = "stk",
                      .resource = "r",
                      .uuid = "uuid",
                      .physical_id = "phys",
                      .props = props,
                      .started = T0};
    cv_record_state(st, &v, T0);
    int rc = action == CV_ACTION_CREATE   ? type->create(st)
             : action == CV_ACTION_UPDATE ? type->update(st)
                                          : type->remove(st);
    assert_int_equal(rc, 0);
    st->now = now;
    cv_observed_t observed = type->observe(st, action);
    return (cv_look_t){observed, st->retry_at, st->reason, st->attrs, st->data};
}

static const cv_observe_outcome_t *before_looking(fixture_t *f)
{
    cv_observe_outcome_clear(&f->out);
    cv_observe_decide(&f->job, &f->rec, NULL, T0, &f->out);
    return &f->out;
}

static const cv_observe_outcome_t *after_looking(fixture_t *f, double now)
{
    f->looks.nold = json_array_size(f->rec.old);
    cv_observe_outcome_clear(&f->out);
    cv_observe_decide(&f->job, &f->rec, &f->looks, now, &f->out);
    return &f->out;
}

#define assert_kind(out, k)                                                                        \
    assert_string_equal(cv_observe_kind_name((out)->kind), cv_observe_kind_name(CV_OBSERVE_##k))

static void assert_json_text(const char *got, const char *want_json)
{
    json_t *g = tu_json(got), *w = tu_json(want_json);
    if (!json_equal(g, w))
        fail_msg("got %s, want %s", got, want_json);
    json_decref(g);
    json_decref(w);
}

/* ---- before looking ---- */

static void test_version_moved_on_is_stale(void **state)
{
    fixture_t *f = *state;
    record(f, "UPDATE_IN_PROGRESS", TEST_RESOURCE);
    strcpy(f->rec.version, "8");
    assert_kind(before_looking(f), STALE_END);
}

static void test_no_record_is_stale(void **state)
{
    fixture_t *f = *state;
    assert_kind(before_looking(f), STALE_END);
}

static void test_outcome_recorded_failed_is_stale(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_FAILED", TEST_RESOURCE);
    assert_kind(before_looking(f), STALE_END);
}

static void test_action_in_progress_is_looked_at(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE);
    assert_kind(before_looking(f), LOOK);
}

static void test_outcome_recorded_complete_is_looked_at_again(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_COMPLETE", TEST_RESOURCE);
    assert_kind(before_looking(f), LOOK);
}

static void test_cleanup_of_a_record_deleted_already_is_done_again(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    const cv_observe_outcome_t *o = before_looking(f);
    assert_kind(o, REDELIVERED_DELETED);
    assert_string_equal(o->version, "");
    assert_string_equal(o->status, "");
    assert_string_equal(o->action, "DELETE");
    assert_string_equal(o->reason, "state changed");
    assert_string_equal(o->attrs, "");
    assert_string_equal(o->data, "");
    assert_string_equal(o->pass, "{}");
    assert_string_equal(o->old, "[]");
    assert_string_equal(o->events, "[]");
}

static void test_cleanup_of_the_version_handed_over_looks_at_its_deletes(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE);
    assert_kind(before_looking(f), LOOK_CLEANUP);
}

static void test_cleanup_whose_version_moved_on_is_stale(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "DELETE_IN_PROGRESS", TEST_RESOURCE);
    f->job.version = 6;
    assert_kind(before_looking(f), STALE_END);
}

static void test_looks_wanted_and_actions_observed(void **state)
{
    fixture_t *f = *state;
    record(f, "UPDATE_IN_PROGRESS", TEST_RESOURCE);
    assert_true(cv_observe_wants_look(&f->job, "UPDATE_COMPLETE"));
    assert_int_equal(cv_observe_action(&f->job, &f->rec), CV_ACTION_UPDATE);
    cleanup_node(f);
    assert_true(cv_observe_wants_look(&f->job, "DELETE_IN_PROGRESS"));
    assert_false(cv_observe_wants_look(&f->job, "CREATE_COMPLETE"));
    assert_int_equal(cv_observe_action(&f->job, &f->rec), CV_ACTION_DELETE);
}

/* ---- an update node, after looking ---- */

static void test_in_progress_waits_until_the_types_retry_time(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = test_resource_look(f, "{\"wait_secs\": 5}", CV_ACTION_CREATE, T0 + 2);
    const cv_observe_outcome_t *o = after_looking(f, T0 + 2);
    assert_kind(o, WAIT);
    assert_int_equal(o->delay_ms, 3001); /* a wait is over strictly after it */
}

static void test_wait_is_at_least_one_millisecond(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = test_resource_look(f, "{\"wait_secs\": 5}", CV_ACTION_CREATE, T0 + 2);
    const cv_observe_outcome_t *o = after_looking(f, T0 + 10); /* retry time passed meanwhile */
    assert_kind(o, WAIT);
    assert_int_equal(o->delay_ms, 1);
}

static void test_wait_is_at_most_the_longest_look_interval(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = test_resource_look(f, "{\"wait_secs\": 60}", CV_ACTION_CREATE, T0);
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, WAIT);
    assert_int_equal(o->delay_ms, CV_MAX_LOOK_INTERVAL_MS);
}

static void test_failure_named_by_the_type_keeps_its_reason(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = test_resource_look(f, "{\"fail\": true}", CV_ACTION_CREATE, T0);
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, FAILED);
    assert_string_equal(o->status, "CREATE_FAILED");
    assert_string_equal(o->action, "CREATE");
    assert_string_equal(o->version, "7");
    assert_string_equal(o->reason, "ValueError: resources.r: Test Resource failed r");
}

static void test_failure_not_naming_the_resource_gets_its_name(void **state)
{
    fixture_t *f = *state;
    record(f, "UPDATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = (cv_look_t){.observed = CV_OBSERVED_FAILED, .reason = "disk full"};
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, FAILED);
    assert_string_equal(o->status, "UPDATE_FAILED");
    assert_string_equal(o->reason, "resources.r: disk full");
}

static void test_failure_without_a_reason_is_an_observed_failure(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = (cv_look_t){.observed = CV_OBSERVED_FAILED, .reason = ""};
    assert_string_equal(after_looking(f, T0)->reason, "resources.r: observed failure");
}

/* A walk's step ended and its pause passed: the node's CHECK job asks for
 * the next step, in a watch too (the older traversal's jobs are stale). */
static void test_a_next_step_asks_the_engine_for_it(void **state)
{
    fixture_t *f = *state;
    record(f, "UPDATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = (cv_look_t){.observed = CV_OBSERVED_NEXT_STEP};
    assert_kind(after_looking(f, T0), STEP);
    cv_msg_t m = cv_observe_step_job(&f->job, &f->rec);
    assert_int_equal(m.type, CV_MSG_CHECK);
    assert_int_equal(m.version, strtoull(f->rec.version, NULL, 10));
    assert_int_equal(m.traversal, f->job.traversal);
    f->job.watch = 1;
    assert_kind(after_looking(f, T0), STEP);
}

static void test_unknown_type_fails_the_look(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", "OS::Gone::Type");
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, FAILED);
    assert_string_equal(o->reason,
                        "resources.r: The Resource Type (OS::Gone::Type) could not be found.");
}

static void test_complete_create_records_attributes_and_passes_them_on(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = test_resource_look(f, "{\"value\": \"v\"}", CV_ACTION_CREATE, T0);
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, COMPLETE);
    assert_string_equal(o->status, "CREATE_COMPLETE");
    assert_string_equal(o->action, "CREATE");
    assert_string_equal(o->reason, "state changed");
    assert_string_equal(o->version, "7");
    assert_json_text(o->attrs, "{\"output\": \"v\"}");
    assert_json_text(o->pass, "{\"id\": \"phys\", \"attrs\": {\"output\": \"v\"}}");
    assert_json_text(o->data, "{\"wait\": 0.0, \"fail\": false}");
    assert_string_equal(o->old, "");
    assert_string_equal(o->events, "");
}

static void test_a_complete_outcome_settles_the_node_without_publishing_set(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = test_resource_look(f, "{\"value\": \"v\"}", CV_ACTION_CREATE, T0);
    const cv_observe_outcome_t *o = after_looking(f, T0);
    cv_node_done_t d = cv_observe_done_of(&f->job, o, "{\"s\":[]}", "phys");
    assert_ptr_equal(d.job, &f->job);
    assert_string_equal(d.graph_entry, "{\"s\":[]}");
    assert_string_equal(d.version, "7");
    assert_string_equal(d.status, "CREATE_COMPLETE");
    assert_string_equal(d.physical_id, "phys");
    assert_ptr_equal(d.pass, o->pass);
    assert_false(d.publishing); /* a redelivered OBSERVE job publishes again */
}

static void test_a_failed_outcome_fails_the_node_with_its_reason(void **state)
{
    fixture_t *f = *state;
    record(f, "CREATE_IN_PROGRESS", "OS::Gone::Type");
    const cv_observe_outcome_t *o = after_looking(f, T0);
    cv_node_failed_t nf = cv_observe_failed_of(&f->job, o, "phys");
    assert_string_equal(nf.status, o->status);
    assert_string_equal(nf.reason,
                        "resources.r: The Resource Type (OS::Gone::Type) could not be found.");
    assert_string_equal(nf.version, "7");
    assert_string_equal(nf.physical_id, "phys");
}

static void test_complete_update_is_update_complete(void **state)
{
    fixture_t *f = *state;
    record(f, "UPDATE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = test_resource_look(f, "{}", CV_ACTION_UPDATE, T0);
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, COMPLETE);
    assert_string_equal(o->status, "UPDATE_COMPLETE");
    assert_string_equal(o->action, "UPDATE");
}

static void test_complete_delete_removes_the_record_and_passes_nothing(void **state)
{
    fixture_t *f = *state;
    record(f, "DELETE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = test_resource_look(f, "{}", CV_ACTION_DELETE, T0);
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, COMPLETE);
    assert_string_equal(o->status, "DELETED");
    assert_string_equal(o->action, "DELETE");
    assert_string_equal(o->pass, "{}");
}

/* ---- a cleanup node, after looking ---- */

static void test_cleanup_current_deleted_is_deleted(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "DELETE_IN_PROGRESS", TEST_RESOURCE);
    f->looks.current = test_resource_look(f, "{}", CV_ACTION_DELETE, T0);
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, COMPLETE);
    assert_string_equal(o->status, "DELETED");
    assert_string_equal(o->action, "DELETE");
    assert_string_equal(o->version, "7");
    assert_string_equal(o->pass, "{}");
    assert_string_equal(o->attrs, "");
    assert_string_equal(o->old, "[]");
    assert_string_equal(o->events, "[]");
}

static void test_cleanup_waits_while_some_replaced_versions_still_go(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE);
    replaced(f, "gone", "DELETE_IN_PROGRESS");
    replaced(f, "going", "DELETE_IN_PROGRESS");
    replaced(f, "kept", "UPDATE_COMPLETE");
    f->old_looks[0] = test_resource_look(f, "{}", CV_ACTION_DELETE, T0 + 1);
    f->old_looks[1] = test_resource_look(f, "{\"wait_secs\": 3}", CV_ACTION_DELETE, T0 + 1);
    const cv_observe_outcome_t *o = after_looking(f, T0 + 1);
    assert_kind(o, WAIT);
    assert_int_equal(o->delay_ms, 2001);
}

static void test_cleanup_looks_again_at_the_earliest_retry_time(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "DELETE_IN_PROGRESS", TEST_RESOURCE);
    replaced(f, "slow", "DELETE_IN_PROGRESS");
    f->old_looks[0] = test_resource_look(f, "{\"wait_secs\": 4}", CV_ACTION_DELETE, T0);
    f->looks.current = test_resource_look(f, "{\"wait_secs\": 2}", CV_ACTION_DELETE, T0);
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, WAIT);
    assert_int_equal(o->delay_ms, 2001);
}

static void test_cleanup_completes_keeping_versions_not_being_deleted(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE);
    replaced(f, "gone", "DELETE_IN_PROGRESS");
    replaced(f, "kept", "UPDATE_COMPLETE");
    replaced(f, "also-gone", "DELETE_IN_PROGRESS");
    f->old_looks[0] = test_resource_look(f, "{}", CV_ACTION_DELETE, T0);
    f->old_looks[2] = test_resource_look(f, "{\"wait_secs\": 1}", CV_ACTION_DELETE, T0 + 1.01);
    const cv_observe_outcome_t *o = after_looking(f, T0 + 1.01);
    assert_kind(o, COMPLETE);
    assert_string_equal(o->status, ""); /* the current version stays */
    assert_string_equal(o->action, "DELETE");
    json_t *old = tu_json(o->old);
    assert_int_equal(json_array_size(old), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(old, 0), "uuid")), "kept");
    json_decref(old);
    assert_json_text(o->events, "[{\"physical_id\": \"gone\", \"action\": \"DELETE\", \"status\": "
                                "\"COMPLETE\", \"reason\": \"state changed\", \"type\": "
                                "\"OS::Heat::TestResource\"}, {\"physical_id\": \"also-gone\", "
                                "\"action\": \"DELETE\", \"status\": \"COMPLETE\", \"reason\": "
                                "\"state changed\", \"type\": \"OS::Heat::TestResource\"}]");
}

static void test_cleanup_failure_of_a_replaced_version_fails_the_node(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "DELETE_IN_PROGRESS", TEST_RESOURCE);
    replaced(f, "bad", "DELETE_IN_PROGRESS");
    f->old_looks[0] = (cv_look_t){.observed = CV_OBSERVED_FAILED};
    /* The current one is in progress, but the failure settles the node. */
    f->looks.current = test_resource_look(f, "{\"wait_secs\": 2}", CV_ACTION_DELETE, T0);
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, FAILED);
    assert_string_equal(o->status, "DELETE_FAILED");
    assert_string_equal(o->reason, "resources.r: delete failed");
}

static void test_cleanup_replaced_version_of_unknown_type_fails(void **state)
{
    fixture_t *f = *state;
    cleanup_node(f);
    record(f, "CREATE_COMPLETE", TEST_RESOURCE);
    replaced(f, "odd", "DELETE_IN_PROGRESS");
    json_object_set_new(json_array_get(f->rec.old, 0), "type", json_string("OS::Gone::Type"));
    const cv_observe_outcome_t *o = after_looking(f, T0);
    assert_kind(o, FAILED);
    assert_string_equal(o->status, "CREATE_FAILED"); /* the record's action names it */
    assert_string_equal(o->reason,
                        "resources.r: The Resource Type (OS::Gone::Type) could not be found.");
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_version_moved_on_is_stale),
        T(test_no_record_is_stale),
        T(test_outcome_recorded_failed_is_stale),
        T(test_action_in_progress_is_looked_at),
        T(test_outcome_recorded_complete_is_looked_at_again),
        T(test_cleanup_of_a_record_deleted_already_is_done_again),
        T(test_cleanup_of_the_version_handed_over_looks_at_its_deletes),
        T(test_cleanup_whose_version_moved_on_is_stale),
        T(test_looks_wanted_and_actions_observed),
        T(test_in_progress_waits_until_the_types_retry_time),
        T(test_wait_is_at_least_one_millisecond),
        T(test_wait_is_at_most_the_longest_look_interval),
        T(test_failure_named_by_the_type_keeps_its_reason),
        T(test_failure_not_naming_the_resource_gets_its_name),
        T(test_failure_without_a_reason_is_an_observed_failure),
        T(test_a_next_step_asks_the_engine_for_it),
        T(test_unknown_type_fails_the_look),
        T(test_complete_create_records_attributes_and_passes_them_on),
        T(test_a_complete_outcome_settles_the_node_without_publishing_set),
        T(test_a_failed_outcome_fails_the_node_with_its_reason),
        T(test_complete_update_is_update_complete),
        T(test_complete_delete_removes_the_record_and_passes_nothing),
        T(test_cleanup_current_deleted_is_deleted),
        T(test_cleanup_waits_while_some_replaced_versions_still_go),
        T(test_cleanup_looks_again_at_the_earliest_retry_time),
        T(test_cleanup_completes_keeping_versions_not_being_deleted),
        T(test_cleanup_failure_of_a_replaced_version_fails_the_node),
        T(test_cleanup_replaced_version_of_unknown_type_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
