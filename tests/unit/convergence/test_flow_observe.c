/*
 * Specification of the OBSERVE job as a step machine (cv_observejob.h):
 * which answer follows which reply, from observe_load to the job's end —
 * the node done at a complete look, looked at again later while in
 * progress, failed, ended as stale, dead-lettered; a watch recording the
 * older action's end and checking its node again; a nested version's child
 * stack read before its look.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_observejob.h"
#include "test_flow_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ONE_SUCCESSOR[] = "{\"p\": [], \"s\": [[\"u/child\", 1]]}";

static cv_observejob_t *job(uint64_t traversal, uint64_t version, bool watch)
{
    cv_msg_t m = {.type = CV_MSG_OBSERVE,
                  .traversal = traversal,
                  .version = version,
                  .watch = watch,
                  .phase = CV_PHASE_UPDATE};
    strcpy(m.stack, "stk");
    strcpy(m.resource, "r");
    cv_observejob_t *o = calloc(1, sizeof(*o));
    cv_observejob_init(o, &m, "observer-1");
    return o;
}

static void done(cv_observejob_t *o)
{
    cv_observejob_reset(o);
    free(o);
}

static const cv_flow_t *replied(cv_observejob_t *o, cv_resp_t *reply)
{
    const cv_resp_t *replies[] = {reply};
    cv_flow_in_t in = tf_in(replies, 1, 0);
    const cv_flow_t *a = cv_observejob_step(o, &in);
    free(reply);
    return a;
}

static const cv_flow_t *delivered(cv_observejob_t *o, int published)
{
    cv_flow_in_t in = tf_in(NULL, 0, published);
    return cv_observejob_step(o, &in);
}

/* A record's fields: `type` created by traversal 5 (version 1), started
 * `started`, with `props` and `data` (JSON texts). */
static json_t *creating(const char *type, const char *props, const char *data, double started)
{
    char when[32];
    snprintf(when, sizeof(when), "%.1f", started);
    return json_pack("[s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s]", "status",
                     "CREATE_IN_PROGRESS", "action", "CREATE", "type", type, "uuid", "u-1",
                     "version", "1", "props", props, "attrs", "{}", "data", data, "old", "[]",
                     "traversal", "5", "started", when);
}

/* observe_load's reply: traversal 5 in progress, the record, the entry. */
static cv_resp_t *load(json_t *record, const char *entry)
{
    return tf_resp_of(json_pack("[s, s, o, s]", "5", "CREATE_IN_PROGRESS", record, entry));
}

static void test_an_observe_job_starts_by_loading_the_record(void **state)
{
    (void)state;
    cv_observejob_t *o = job(5, 1, false);
    const cv_flow_t *a = cv_observejob_start(o);
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_OBSERVE_LOAD);
    assert_string_equal(tf_arg(c, "node"), "u/r");
    assert_string_equal(tf_arg(c, "traversal"), "5");
    done(o);
}

static void test_a_create_seen_complete_marks_the_node_done_and_publishes(void **state)
{
    (void)state;
    cv_observejob_t *o = job(5, 1, false);
    cv_observejob_start(o);
    const cv_flow_t *a =
        replied(o, load(creating("OS::Heat::None", "{}", "{}", TF_NOW - 1), ONE_SUCCESSOR));
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_NODE_DONE);
    assert_string_equal(tf_arg(c, "status"), "CREATE_COMPLETE");
    assert_string_equal(tf_arg(c, "version"), "1");
    assert_string_equal(tf_arg(c, "publishing"), ""); /* its redelivery publishes again */
    a = replied(o, tf_resp("[\"OK\", 1, 1, 2, 1, 1, 0]"));
    assert_int_equal(a->nmsgs, 1);
    assert_string_equal(a->msgs[0].resource, "child");
    a = delivered(o, 0);
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_false(tf_sends(a, "SREM"));
    done(o);
}

static void test_an_action_in_progress_is_looked_at_again_later(void **state)
{
    (void)state;
    cv_observejob_t *o = job(5, 1, false);
    cv_observejob_start(o);
    const cv_flow_t *a = replied(o, load(creating("OS::Heat::TestResource", "{\"wait_secs\": 5}",
                                                  "{\"wait\": 5}", TF_NOW - 1),
                                         ONE_SUCCESSOR));
    assert_int_equal(a->kind, CV_FLOW_LATER);
    assert_true(a->delay_ms >= 1 && a->delay_ms <= CV_MAX_LOOK_INTERVAL_MS);
    /* the stack touched: watched, it is not taken for stalled */
    assert_int_equal(tf_call(a, 0)->script, CV_SCRIPT_STACK_TOUCH);
    assert_false(a->cmds[0].reply);
    done(o);
}

static void test_a_failed_look_fails_the_node(void **state)
{
    (void)state;
    cv_observejob_t *o = job(5, 1, false);
    cv_observejob_start(o);
    const cv_flow_t *a = replied(o, load(creating("OS::Heat::TestResource", "{\"fail\": true}",
                                                  "{\"wait\": 0, \"fail\": true}", TF_NOW - 1),
                                         ONE_SUCCESSOR));
    assert_true(tf_logged(a, "stack stk:"));
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_NODE_FAILED);
    assert_string_equal(tf_arg(c, "status"), "CREATE_FAILED");
    a = replied(o, tf_resp("[\"OK\"]"));
    assert_int_equal(a->kind, CV_FLOW_DONE);
    done(o);
}

static void test_a_version_moved_on_ends_the_job_as_stale(void **state)
{
    (void)state;
    cv_observejob_t *o = job(5, 9, false); /* the engine wrote version 9; the record is at 1 */
    cv_observejob_start(o);
    const cv_flow_t *a =
        replied(o, load(creating("OS::Heat::None", "{}", "{}", TF_NOW - 1), ONE_SUCCESSOR));
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_int_equal(a->counts[CV_FLOW_STALE], 1);
    assert_int_equal(a->ncmds, 0);
    done(o);
}

static void test_a_job_of_no_node_or_no_stack_is_dead_lettered(void **state)
{
    (void)state;
    cv_observejob_t *o = job(5, 1, false);
    cv_observejob_start(o);
    assert_int_equal(replied(o, tf_resp("[\"NONODE\"]"))->kind, CV_FLOW_UNKNOWN_NODE);
    cv_observejob_start(o);
    assert_int_equal(replied(o, tf_resp("[\"\", \"\", [], \"\"]"))->kind, CV_FLOW_UNKNOWN_STACK);
    cv_observejob_start(o);
    assert_int_equal(replied(o, tf_resp("{\"error\": \"LOADING\"}"))->kind, CV_FLOW_RETRY);
    done(o);
}

static void test_a_watch_records_the_older_actions_end_then_checks_its_node_again(void **state)
{
    (void)state;
    cv_observejob_t *o = job(6, 1, true); /* traversal 6 waits for traversal 5's create */
    cv_observejob_start(o);
    const cv_flow_t *a =
        replied(o, load(creating("OS::Heat::None", "{}", "{}", TF_NOW - 1), ONE_SUCCESSOR));
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_NODE_DONE);
    assert_string_equal(tf_arg(c, "traversal"), "5"); /* the older traversal's own outcome */
    assert_int_equal(c->nextra, 0);                   /* which moves nothing else */
    a = replied(o, tf_resp("[\"STALE\"]"));
    assert_int_equal(a->nmsgs, 1);
    assert_int_equal(a->msgs[0].type, CV_MSG_CHECK);
    assert_int_equal(a->msgs[0].traversal, 6);
    assert_string_equal(a->msgs[0].resource, "r");
    assert_int_equal(delivered(o, 0)->kind, CV_FLOW_DONE);
    done(o);
}

static void test_a_nested_version_has_its_child_read_before_the_look(void **state)
{
    (void)state;
    cv_observejob_t *o = job(5, 1, false);
    cv_observejob_start(o);
    json_t *rec = creating("OS::Heat::Stack", "{}", "{\"traversal\": 1}", TF_NOW - 1);
    json_array_append_new(rec, json_string("physical_id"));
    json_array_append_new(rec, json_string("child-1"));
    const cv_flow_t *a = replied(o, load(rec, ONE_SUCCESSOR));
    assert_int_equal(a->kind, CV_FLOW_IO);
    assert_null(a->cmds[0].call);
    assert_string_equal(a->cmds[0].argv[0], "HMGET");
    assert_contains(a->cmds[0].argv[1], "child-1");
    a = replied(o, tf_resp("[\"CREATE_COMPLETE\", \"1\", \"\", \"{}\", \"0\", \"0\"]"));
    assert_int_equal(tf_call(a, 0)->script, CV_SCRIPT_NODE_DONE);
    done(o);
}

static void test_a_child_that_cannot_be_read_retries_the_job(void **state)
{
    (void)state;
    cv_observejob_t *o = job(5, 1, false);
    cv_observejob_start(o);
    json_t *rec = creating("OS::Heat::Stack", "{}", "{\"traversal\": 1}", TF_NOW - 1);
    json_array_append_new(rec, json_string("physical_id"));
    json_array_append_new(rec, json_string("child-1"));
    replied(o, load(rec, ONE_SUCCESSOR));
    const cv_resp_t *none[] = {NULL};
    cv_flow_in_t in = tf_in(none, 1, 0);
    assert_int_equal(cv_observejob_step(o, &in)->kind, CV_FLOW_RETRY);
    done(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_observe_job_starts_by_loading_the_record),
        cmocka_unit_test(test_a_create_seen_complete_marks_the_node_done_and_publishes),
        cmocka_unit_test(test_an_action_in_progress_is_looked_at_again_later),
        cmocka_unit_test(test_a_failed_look_fails_the_node),
        cmocka_unit_test(test_a_version_moved_on_ends_the_job_as_stale),
        cmocka_unit_test(test_a_job_of_no_node_or_no_stack_is_dead_lettered),
        cmocka_unit_test(test_a_watch_records_the_older_actions_end_then_checks_its_node_again),
        cmocka_unit_test(test_a_nested_version_has_its_child_read_before_the_look),
        cmocka_unit_test(test_a_child_that_cannot_be_read_retries_the_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
