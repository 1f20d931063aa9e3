/*
 * Specification of the CHECK job as a step machine (cv_checkjob.h): which
 * answer follows which reply, from check_begin to the job's end — the
 * lease asked for again, the job dead-lettered or ended as stale, the
 * action that settles at once, the write and the hand-off to the
 * observers, fencing, the node done or failed, hooks, child stacks and
 * services. Replies are written as JSON (test_flow_fixture.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_checkjob.h"
#include "test_flow_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char NONE[] = "{\"type\": \"OS::Heat::None\", \"properties\": {}, "
                           "\"deletion_policy\": \"Delete\", \"metadata\": {}, \"depends\": []}";
static const char SLOW[] =
    "{\"type\": \"OS::Heat::TestResource\", \"properties\": {\"wait_secs\": "
    "5}, \"deletion_policy\": \"Delete\", \"metadata\": {}, \"depends\": []}";
static const char HEAT_STACK[] =
    "{\"type\": \"OS::Heat::Stack\", \"properties\": {\"template\": "
    "\"heat_template_version: 2018-08-31\\nresources: {}\\n\"}, \"deletion_policy\": \"Delete\", "
    "\"metadata\": {}, \"depends\": [], \"nested\": true}";
static const char ONE_SUCCESSOR[] = "{\"p\": [], \"s\": [[\"u/child\", 1]]}";
static const char NO_SUCCESSOR[] = "{\"s\":[], \"p\": []}";

typedef struct fixture {
    cv_checkjob_t job;
    cv_limits_t limits;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    cv_limits_init(&f->limits);
    cv_msg_t m = {.type = CV_MSG_CHECK, .traversal = 5, .phase = CV_PHASE_UPDATE};
    strcpy(m.stack, "stk");
    strcpy(m.resource, "r");
    cv_checkjob_conf_t conf = {
        .worker = "engine-1", .token = "engine-1@a:1", .lease_ms = 5000, .limits = &f->limits};
    cv_checkjob_init(&f->job, &m, &conf);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_reset(&f->job);
    free(f);
    return 0;
}

/* The next answer, given one reply (taken). */
static const cv_flow_t *replied(cv_checkjob_t *j, cv_resp_t *reply)
{
    const cv_resp_t *replies[] = {reply};
    cv_flow_in_t in = tf_in(replies, 1, 0);
    const cv_flow_t *a = cv_checkjob_step(j, &in);
    free(reply);
    return a;
}

/* The next answer once the last answer's messages went out (`published`
 * 0) or did not (CV_EKAFKA). */
static const cv_flow_t *delivered(cv_checkjob_t *j, int published)
{
    cv_flow_in_t in = tf_in(NULL, 0, published);
    return cv_checkjob_step(j, &in);
}

/* check_begin's OK for job u/r: definition `rdef`, the record's fields
 * (a JSON array of field, value, ...), graph entry `entry`. */
static cv_resp_t *begin_ok(const char *rdef, const char *record, const char *entry)
{
    return tf_resp_of(json_pack("[s, s, s, o, [], s, s, s, s, s, s]", "OK", rdef, "{}",
                                tu_json(record), entry, "web", "0", "", "CREATE", ""));
}

/* The job started, and check_begin's answer for a resource not yet
 * created (no record, no successor) with the definition `rdef`. */
static const cv_flow_t *begun_new(cv_checkjob_t *j, const char *rdef)
{
    cv_checkjob_start(j);
    return replied(j, begin_ok(rdef, "[\"version\", \"0\"]", NO_SUCCESSOR));
}

static const char COMPLETE_NONE[] =
    "[\"status\", \"CREATE_COMPLETE\", \"action\", \"CREATE\", \"type\", \"OS::Heat::None\", "
    "\"uuid\", \"u-1\", \"version\", \"3\", \"props\", \"{}\", \"attrs\", \"{}\", \"data\", "
    "\"{}\", \"old\", \"[]\", \"traversal\", \"4\", \"started\", \"1699999999\", \"policy\", "
    "\"Delete\", \"physical_id\", \"r-1\"]";

/* ---- check_begin ---- */

static void test_a_job_starts_by_asking_check_begin_for_its_lease(void **state)
{
    fixture_t *f = *state;
    const cv_flow_t *a = cv_checkjob_start(&f->job);
    assert_int_equal(a->kind, CV_FLOW_IO);
    assert_int_equal(a->cmds.n, 1);
    assert_true(a->cmds.v[0].reply);
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_CHECK_BEGIN);
    assert_string_equal(tf_arg(c, "token"), "engine-1@a:1");
    assert_string_equal(tf_arg(c, "lease_ms"), "5000");
    assert_string_equal(tf_arg(c, "node"), "u/r");
    assert_false(cv_checkjob_leased(&f->job));
}

static void test_a_busy_lease_is_asked_for_again_within_250_ms(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"BUSY\", 4000]"));
    assert_int_equal(a->kind, CV_FLOW_LATER);
    assert_int_equal(a->delay_ms, 250);
    assert_int_equal(a->counts[CV_FLOW_RETRIES], 1);
    cv_checkjob_start(&f->job);
    assert_int_equal(replied(&f->job, tf_resp("[\"BUSY\", 3]"))->delay_ms, 20);
}

static void test_a_job_of_an_unknown_stack_is_dead_lettered(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    assert_int_equal(replied(&f->job, tf_resp("[\"UNKNOWN\"]"))->kind, CV_FLOW_UNKNOWN_STACK);
    cv_checkjob_start(&f->job);
    assert_int_equal(replied(&f->job, tf_resp("[\"NONODE\"]"))->kind, CV_FLOW_UNKNOWN_NODE);
}

static void test_a_superseded_job_ends_counted_stale(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"STALE\"]"));
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_int_equal(a->counts[CV_FLOW_STALE], 1);
    assert_int_equal(a->cmds.n, 0);
}

static void test_no_reply_from_check_begin_retries_the_job(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    const cv_resp_t *none[] = {NULL};
    cv_flow_in_t in = tf_in(none, 1, 0);
    assert_int_equal(cv_checkjob_step(&f->job, &in)->kind, CV_FLOW_RETRY);
    cv_checkjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, tf_resp("{\"error\": \"NOSCRIPT x\"}"));
    assert_int_equal(a->kind, CV_FLOW_RETRY);
    assert_true(tf_logged(a, "check_begin: NOSCRIPT x"));
}

static void test_a_done_node_redelivered_publishes_its_successors_again(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    cv_resp_t *r = tf_resp_of(json_pack("[s, s]", "DONE", ONE_SUCCESSOR));
    const cv_flow_t *a = replied(&f->job, r);
    assert_int_equal(a->kind, CV_FLOW_IO);
    assert_int_equal(a->counts[CV_FLOW_STALE], 1);
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_NODE_DONE);
    assert_string_equal(tf_arg(c, "publishing"), "1");
    assert_int_equal(c->nextra, 1);
    /* a redelivery: the successor is complete and not done, so published */
    a = replied(&f->job, tf_resp("[\"OK\", 0, 1, 2, 0, 1, 0]"));
    assert_int_equal(a->msgs.n, 1);
    assert_string_equal(a->msgs.v[0].resource, "child");
    a = delivered(&f->job, 0);
    assert_int_equal(a->kind, CV_FLOW_DONE);
}

static void test_a_done_node_whose_successors_went_out_ends_there(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"DONE\"]"));
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_int_equal(a->counts[CV_FLOW_STALE], 1);
}

/* ---- an action that settles at once ---- */

static void test_a_none_resource_is_recorded_and_done_in_one_check_done(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, begin_ok(NONE, "[\"version\", \"0\"]", ONE_SUCCESSOR));
    assert_true(cv_checkjob_leased(&f->job));
    assert_int_equal(cv_checkjob_outcome(&f->job)->kind, CV_CHECK_CREATE);
    assert_int_equal(a->kind, CV_FLOW_IO);
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_CHECK_DONE);
    assert_string_equal(tf_arg(c, "status"), "CREATE_COMPLETE");
    assert_string_equal(tf_arg(c, "token"), "engine-1@a:1");
    /* done, the only successor's set complete: its job goes out */
    a = replied(&f->job, tf_resp("[\"OK\", 1, 1, 2, 1, 1, 0]"));
    assert_int_equal(a->kind, CV_FLOW_IO);
    assert_int_equal(a->msgs.n, 1);
    assert_int_equal(a->msgs.v[0].type, CV_MSG_CHECK);
    assert_string_equal(a->msgs.v[0].resource, "child");
    assert_int_equal(a->msgs.v[0].traversal, 5);
    a = delivered(&f->job, 0);
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_int_equal(a->counts[CV_FLOW_ACTED], 1);
    assert_true(tf_sends(a, "SREM")); /* out of the publishing set */
    assert_false(cv_checkjob_leased(&f->job));
}

static void test_a_successor_still_waiting_for_others_gets_no_job(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    replied(&f->job, begin_ok(NONE, "[\"version\", \"0\"]", "{\"p\": [], \"s\": [[\"u/c\", 2]]}"));
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"OK\", 1, 1, 3, 1, 1, 0]"));
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_int_equal(a->msgs.n, 0);
}

static void test_a_fenced_check_done_is_counted_and_ends(void **state)
{
    fixture_t *f = *state;
    begun_new(&f->job, NONE);
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"FENCED\", \"4\"]"));
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_int_equal(a->counts[CV_FLOW_FENCED], 1);
    assert_true(tf_logged(a, "write refused"));
    assert_false(cv_checkjob_leased(&f->job));
}

/* ---- an action the observers watch ---- */

static void test_a_slow_action_is_written_then_handed_to_the_observers(void **state)
{
    fixture_t *f = *state;
    const cv_flow_t *a = begun_new(&f->job, SLOW);
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_CHECK_FINISH);
    assert_string_equal(tf_arg(c, "status"), "CREATE_IN_PROGRESS");
    assert_string_equal(tf_arg(c, "version"), "0");
    a = replied(&f->job, tf_resp("[\"OK\", \"1\"]"));
    assert_int_equal(a->kind, CV_FLOW_IO);
    assert_int_equal(a->counts[CV_FLOW_ACTED], 1);
    assert_int_equal(a->msgs.n, 1);
    assert_int_equal(a->msgs.v[0].type, CV_MSG_OBSERVE);
    assert_int_equal(a->msgs.v[0].version, 1);
    assert_false(a->msgs.v[0].watch);
    assert_false(cv_checkjob_leased(&f->job)); /* check_finish released it */
    a = delivered(&f->job, 0);
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_int_equal(a->cmds.n, 0); /* no lease left to release */
}

static void test_a_write_refused_by_fencing_ends_without_a_hand_off(void **state)
{
    fixture_t *f = *state;
    begun_new(&f->job, SLOW);
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"FENCED\", \"7\"]"));
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_int_equal(a->msgs.n, 0);
    assert_int_equal(a->counts[CV_FLOW_FENCED], 1);
    assert_true(tf_logged(a, "version moved to 7"));
}

static void test_a_hand_off_kafka_refused_retries_the_job(void **state)
{
    fixture_t *f = *state;
    begun_new(&f->job, SLOW);
    replied(&f->job, tf_resp("[\"OK\", \"1\"]"));
    assert_int_equal(delivered(&f->job, CV_EKAFKA)->kind, CV_FLOW_RETRY);
}

/* ---- done, failed ---- */

static void test_an_unchanged_resource_is_done_and_a_fenced_done_releases_the_lease(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, begin_ok(NONE, COMPLETE_NONE, NO_SUCCESSOR));
    assert_int_equal(cv_checkjob_outcome(&f->job)->kind, CV_CHECK_DONE);
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_NODE_DONE);
    assert_string_equal(tf_arg(c, "lease_token"), "engine-1@a:1");
    /* node_done refuses before it releases the lease: this job releases it */
    a = replied(&f->job, tf_resp("[\"FENCED\", \"4\"]"));
    assert_int_equal(a->kind, CV_FLOW_IO);
    assert_int_equal(tf_call(a, 0)->script, CV_SCRIPT_LEASE_RELEASE);
    a = replied(&f->job, tf_resp("1"));
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_false(cv_checkjob_leased(&f->job));
}

static void test_an_unknown_type_fails_the_node_and_rolls_back(void **state)
{
    fixture_t *f = *state;
    const cv_flow_t *a =
        begun_new(&f->job, "{\"type\": \"My::Nope\", \"properties\": {}, \"depends\": []}");
    assert_true(tf_logged(a, "stack stk resource r:"));
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_NODE_FAILED);
    assert_string_equal(tf_arg(c, "status"), "CREATE_FAILED");
    a = replied(&f->job, tf_resp("[\"ROLLBACK\", 6]"));
    assert_int_equal(a->msgs.n, 1);
    assert_int_equal(a->msgs.v[0].type, CV_MSG_STACK);
    assert_int_equal(a->msgs.v[0].kind, CV_TRAV_ROLLBACK);
    assert_int_equal(a->msgs.v[0].traversal, 6);
    assert_true(tf_sends(a, "SADD")); /* the reaper watches the stack */
    a = delivered(&f->job, 0);
    assert_int_equal(tf_call(a, 0)->script, CV_SCRIPT_LEASE_RELEASE);
}

static void test_a_definition_that_does_not_decode_fails_as_none_stored(void **state)
{
    fixture_t *f = *state;
    const cv_flow_t *a =
        begun_new(&f->job, "{\"type\": \"OS::Heat::None\", \"deletion_policy\": \"Keep\"}");
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_NODE_FAILED);
    assert_string_equal(tf_arg(c, "reason"), "resources.r: no stored definition");
}

/* ---- hooks ---- */

static void test_a_pre_create_hook_pauses_the_create_and_ends_the_job(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    const cv_flow_t *a =
        replied(&f->job, begin_ok(NONE, "[\"version\", \"0\"]", "{\"s\":[], \"p\": [], \"h\": 1}"));
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_HOOK_WAIT);
    assert_string_equal(tf_arg(c, "hooks"), "pre-create ");
    assert_string_equal(tf_arg(c, "action"), "INIT");
    a = replied(&f->job, tf_resp("[\"PAUSED\", \"pre-create\"]"));
    assert_true(tf_logged(a, "paused until hook pre-create is cleared"));
    assert_int_equal(tf_call(a, 0)->script, CV_SCRIPT_LEASE_RELEASE);
}

static void test_a_cleared_hook_lets_the_action_go_on(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    replied(&f->job, begin_ok(NONE, "[\"version\", \"0\"]", "{\"s\":[], \"p\": [], \"h\": 1}"));
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"OK\"]"));
    assert_int_equal(tf_call(a, 0)->script, CV_SCRIPT_CHECK_DONE);
}

/* ---- a child stack ---- */

static void test_a_nested_resource_begins_its_child_before_recording(void **state)
{
    fixture_t *f = *state;
    const cv_flow_t *a = begun_new(&f->job, HEAT_STACK);
    assert_true(tf_sends(a, "SADD")); /* the parent lists its child */
    const cv_call_t *c = tf_call(a, 1);
    assert_int_equal(c->script, CV_SCRIPT_STACK_BEGIN);
    assert_string_equal(tf_arg(c, "kind"), "CREATE");
    assert_contains(tf_arg(c, "name"), "web-r-");
    a = replied(&f->job, tf_resp("[9]"));
    assert_int_equal(a->msgs.n, 1);
    assert_int_equal(a->msgs.v[0].type, CV_MSG_STACK);
    assert_int_equal(a->msgs.v[0].traversal, 9);
    a = delivered(&f->job, 0);
    assert_true(tf_logged(a, "traversal 9"));
    c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_CHECK_FINISH);
    assert_contains(tf_arg(c, "data"), "\"traversal\":9");
}

static void test_a_child_that_exists_already_fails_the_create(void **state)
{
    fixture_t *f = *state;
    begun_new(&f->job, HEAT_STACK);
    const cv_flow_t *a = replied(&f->job, tf_resp("{\"error\": \"EEXIST stack exists\"}"));
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_NODE_FAILED);
    assert_contains(tf_arg(c, "reason"), "exists already");
}

static void test_only_a_nested_resources_load_wants_a_place(void **state)
{
    fixture_t *f = *state;
    cv_checkjob_start(&f->job);
    cv_resp_t *plain = begin_ok(NONE, "[\"version\", \"0\"]", NO_SUCCESSOR);
    cv_resp_t *nested =
        tf_resp_of(json_pack("[s, s, s, [], [], s, s, s, s, s, s]", "OK", HEAT_STACK, "{}",
                             NO_SUCCESSOR, "web", "0", "{\"a.yaml\": \"x\"}", "CREATE", ""));
    const cv_resp_t *p[] = {plain}, *n[] = {nested};
    cv_flow_in_t in_plain = tf_in(p, 1, 0), in_nested = tf_in(n, 1, 0);
    assert_false(cv_checkjob_wants_place(&f->job, &in_plain));
    assert_true(cv_checkjob_wants_place(&f->job, &in_nested));
    free(plain);
    free(nested);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_job_starts_by_asking_check_begin_for_its_lease,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_busy_lease_is_asked_for_again_within_250_ms, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_job_of_an_unknown_stack_is_dead_lettered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_superseded_job_ends_counted_stale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_reply_from_check_begin_retries_the_job, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_done_node_redelivered_publishes_its_successors_again,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_done_node_whose_successors_went_out_ends_there,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_none_resource_is_recorded_and_done_in_one_check_done,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_successor_still_waiting_for_others_gets_no_job,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_fenced_check_done_is_counted_and_ends, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_slow_action_is_written_then_handed_to_the_observers,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_write_refused_by_fencing_ends_without_a_hand_off,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_hand_off_kafka_refused_retries_the_job, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_an_unchanged_resource_is_done_and_a_fenced_done_releases_the_lease, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_a_definition_that_does_not_decode_fails_as_none_stored,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_an_unknown_type_fails_the_node_and_rolls_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_pre_create_hook_pauses_the_create_and_ends_the_job,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_cleared_hook_lets_the_action_go_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_nested_resource_begins_its_child_before_recording,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_child_that_exists_already_fails_the_create, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_only_a_nested_resources_load_wants_a_place, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
