/*
 * Specification of cv_progress as steps: what a node done or failed
 * publishes, how the last node ends its traversal (outputs resolved from
 * the records, the re-run a script began, the reaper left to end it), and
 * a traversal begun by a worker.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_progress.h"
#include "test_flow_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    cv_progress_t p;
    cv_flow_buf_t b;
    cv_msg_t job;
    int rc;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    f->job = (cv_msg_t){.type = CV_MSG_CHECK, .traversal = 5, .phase = CV_PHASE_UPDATE};
    strcpy(f->job.stack, "stk");
    strcpy(f->job.resource, "r");
    f->rc = 12345;
    cv__flow_begin(&f->b);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    cv_progress_clear(&f->p);
    cv__flow_clear(&f->b);
    free(f);
    return 0;
}

/* The next answer given `replies` (taken) and `published`; NULL once over
 * (f->rc its outcome). */
static const cv_flow_t *step(fixture_t *f, cv_resp_t *reply, int published)
{
    const cv_resp_t *replies[] = {reply};
    cv_flow_in_t in = tf_in(replies, reply ? 1 : 0, published);
    cv__flow_begin(&f->b);
    const cv_flow_t *a = cv_progress_step(&f->p, &f->b, &in, &f->rc);
    free(reply);
    return a;
}

static const cv_flow_t *node_done(fixture_t *f, const char *entry)
{
    cv_node_done_t d = {.job = &f->job, .graph_entry = entry, .publishing = true};
    return cv_progress_node_done(&f->p, &f->b, &d, "engine-1");
}

/* A graph entry of n successors u/s0 ... each with one predecessor. */
static char *entry_of(size_t n)
{
    json_t *s = json_array();
    for (size_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "u/s%zu", i);
        json_array_append_new(s, json_pack("[s, i]", name, 1));
    }
    json_t *e = json_pack("{s:o, s:[]}", "s", s, "p");
    char *text = json_dumps(e, JSON_COMPACT);
    json_decref(e);
    return text;
}

/* node_done's OK, done `done` of `total`, each of n successors added now
 * with its set complete. */
static cv_resp_t *done_ok(int added, int done, int total, size_t n)
{
    json_t *r = json_pack("[s, i, i, i]", "OK", added, done, total);
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(r, json_integer(1));
        json_array_append_new(r, json_integer(1));
        json_array_append_new(r, json_integer(0));
    }
    return tf_resp_of(r);
}

/* ---- successors ---- */

static void test_the_jobs_of_many_ready_successors_go_two_to_a_message(void **state)
{
    fixture_t *f = *state;
    char *entry = entry_of(32);
    node_done(f, entry);
    const cv_flow_t *a = step(f, done_ok(1, 1, 40, 32), 0);
    assert_int_equal(a->kind, CV_FLOW_IO);
    assert_int_equal(a->nmsgs, 16); /* 32 spread over CV_MSG_SPREAD messages */
    assert_string_equal(a->msgs[0].resource, "s0");
    assert_int_equal(a->msgs[0].nodes_len, strlen("u/s1"));
    assert_memory_equal(a->msgs[0].nodes, "u/s1", 4);
    assert_null(step(f, NULL, 0));
    assert_int_equal(f->rc, 0);
    assert_true(tf_sends(&f->b.a, "SREM"));
    free(entry);
}

static void test_a_redelivery_publishes_only_the_complete_successors_not_done(void **state)
{
    fixture_t *f = *state;
    node_done(f, "{\"s\": [[\"u/a\", 1], [\"u/b\", 1], [\"u/c\", 2]], \"p\": []}");
    /* added 0: a redelivery; a complete, b complete and done, c incomplete */
    const cv_flow_t *a = step(f, tf_resp("[\"OK\", 0, 2, 9, 0, 1, 0, 0, 1, 1, 0, 1, 0]"), 0);
    assert_int_equal(a->nmsgs, 1);
    assert_string_equal(a->msgs[0].resource, "a");
}

static void test_a_fenced_node_done_publishes_nothing(void **state)
{
    fixture_t *f = *state;
    node_done(f, "{\"s\": [[\"u/a\", 1]], \"p\": []}");
    assert_null(step(f, tf_resp("[\"FENCED\", \"3\"]"), 0));
    assert_int_equal(f->rc, CV_EFENCED);
    assert_int_equal(f->b.a.nmsgs, 0);
    assert_false(tf_sends(&f->b.a, "SREM"));
}

static void test_a_successor_job_kafka_refused_is_a_transient_failure(void **state)
{
    fixture_t *f = *state;
    node_done(f, "{\"s\": [[\"u/a\", 1]], \"p\": []}");
    step(f, done_ok(1, 1, 3, 1), 0);
    assert_null(step(f, NULL, CV_EKAFKA));
    assert_int_equal(f->rc, CV_EKAFKA);
    assert_false(tf_sends(&f->b.a, "SREM")); /* still publishing: a redelivery publishes */
}

/* ---- the traversal's end ---- */

static const char TEMPLATE[] =
    "{\"heat_template_version\": \"2018-08-31\", \"resources\": {\"a\": {\"type\": "
    "\"OS::Heat::Value\", \"properties\": {\"value\": \"x\"}}}, \"outputs\": {\"o\": "
    "{\"value\": {\"get_attr\": [\"a\", \"value\"]}}}}";

/* stack_definition's reply for traversal `traversal` of `action`. */
static cv_resp_t *definition(const char *action, const char *traversal)
{
    return tf_resp_of(json_pack("[s, s, s, s, s, [], s, s, s]", action, "web", traversal, TEMPLATE,
                                "{}", "", "0", "{}"));
}

/* The last node done: the end's first read goes with the (no) jobs. */
static void last_node_done(fixture_t *f)
{
    node_done(f, "{\"s\":[], \"p\": []}");
    const cv_flow_t *a = step(f, done_ok(1, 4, 4, 0), 0);
    assert_int_equal(a->kind, CV_FLOW_IO);
    assert_int_equal(tf_call(a, 0)->script, CV_SCRIPT_STACK_DEFINITION);
}

static void test_the_last_node_resolves_the_outputs_from_the_records_and_ends(void **state)
{
    fixture_t *f = *state;
    last_node_done(f);
    const cv_flow_t *a = step(f, definition("CREATE", "5"), 0);
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_RESOURCE_REF);
    assert_string_equal(tf_arg(c, "resource"), "a");
    a = step(f, tf_resp("[\"a\", \"a-1\", \"{\\\"value\\\": \\\"x\\\"}\", \"OS::Heat::Value\"]"),
             0);
    c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_STACK_FINISH);
    assert_string_equal(tf_arg(c, "status"), "COMPLETE");
    assert_string_equal(tf_arg(c, "outputs"), "{\"o\":\"x\"}");
    assert_string_equal(tf_arg(c, "reason"), "Stack CREATE completed successfully");
    assert_null(step(f, tf_resp("[\"OK\", \"CREATE\"]"), 0));
    assert_int_equal(f->rc, 0);
    assert_string_equal(f->b.a.sweep, "stk");
    assert_true(tf_logged(&f->b.a, "stack web (stk) CREATE_COMPLETE, traversal 5"));
}

static void test_a_delete_that_ends_frees_the_name_and_notes_the_stack_deleted(void **state)
{
    fixture_t *f = *state;
    last_node_done(f);
    const cv_flow_t *a = step(f, definition("DELETE", "5"), 0);
    assert_string_equal(tf_arg(tf_call(a, 0), "outputs"), "{}");
    assert_null(step(f, tf_resp("[\"OK\", \"DELETE\"]"), 0));
    assert_true(tf_sends(&f->b.a, "ZADD"));
    bool unnamed = false;
    for (size_t i = 0; i < f->b.a.ncmds; i++)
        unnamed |= f->b.a.cmds[i].call && f->b.a.cmds[i].call->script == CV_SCRIPT_STACK_UNNAME &&
                   !f->b.a.cmds[i].reply;
    assert_true(unnamed);
}

static void test_records_made_behind_a_traversals_back_publish_its_rerun(void **state)
{
    fixture_t *f = *state;
    last_node_done(f);
    step(f, definition("UPDATE", "5"), 0);
    step(f, tf_resp("[\"a\", \"a-1\", \"{}\", \"OS::Heat::Value\"]"), 0);
    const cv_flow_t *a = step(f, tf_resp("[\"AGAIN\", 8]"), 0);
    assert_int_equal(a->nmsgs, 1);
    assert_int_equal(a->msgs[0].type, CV_MSG_STACK);
    assert_int_equal(a->msgs[0].kind, CV_TRAV_UPDATE);
    assert_int_equal(a->msgs[0].traversal, 8);
    assert_false(a->msgs[0].express); /* the reaper's lane */
    assert_true(tf_sends(a, "SADD"));
    assert_null(step(f, NULL, 0));
    assert_int_equal(f->rc, 0);
    assert_string_equal(f->b.a.sweep, "stk");
}

static void test_an_older_action_still_to_be_recorded_leaves_the_end_to_the_reaper(void **state)
{
    fixture_t *f = *state;
    last_node_done(f);
    step(f, definition("CREATE", "5"), 0);
    step(f, tf_resp("[\"a\", \"a-1\", \"{}\", \"OS::Heat::Value\"]"), 0);
    assert_null(step(f, tf_resp("[\"BUSY\", \"b\"]"), 0));
    assert_int_equal(f->rc, 0);
    assert_null(f->b.a.sweep);
    assert_true(tf_logged(&f->b.a, "waits for an older action on b"));
}

static void test_an_end_of_a_superseded_traversal_does_nothing(void **state)
{
    fixture_t *f = *state;
    cv_progress_finish(&f->p, &f->b, "stk", 5, "engine-1");
    assert_null(step(f, definition("CREATE", "6"), 0));
    assert_int_equal(f->rc, CV_ESTALE);
    assert_int_equal(f->b.a.ncmds, 0);
}

/* ---- failed, begun ---- */

static void test_a_failed_node_of_a_stack_with_rollback_publishes_its_stack_job(void **state)
{
    fixture_t *f = *state;
    cv_node_failed_t nf = {.job = &f->job,
                           .version = "2",
                           .status = "CREATE_FAILED",
                           .reason = "boom",
                           .action = "CREATE"};
    const cv_flow_t *a = cv_progress_node_failed(&f->p, &f->b, &nf, "engine-1");
    assert_string_equal(tf_arg(tf_call(a, 0), "stack_reason"), "Resource CREATE failed: boom");
    a = step(f, tf_resp("[\"ROLLBACK\", 6]"), 0);
    assert_int_equal(a->msgs[0].kind, CV_TRAV_ROLLBACK);
    assert_null(step(f, NULL, CV_EKAFKA));
    assert_int_equal(f->rc, CV_EKAFKA);
}

static void test_a_failed_node_answers_as_node_failed_did(void **state)
{
    fixture_t *f = *state;
    cv_node_failed_t nf = {.job = &f->job, .status = "CREATE_FAILED", .action = "CREATE"};
    cv_progress_node_failed(&f->p, &f->b, &nf, "engine-1");
    assert_null(step(f, tf_resp("[\"SETTLED\"]"), 0));
    assert_int_equal(f->rc, CV_ESTALE);
}

static void test_a_begin_of_a_stack_that_is_gone_answers_enoent(void **state)
{
    fixture_t *f = *state;
    cv_stack_begin_t sb = {.kind = CV_TRAV_DELETE, .stack = "child"};
    cv_progress_begin(&f->p, &f->b, &sb, true, "engine-1");
    assert_null(step(f, tf_resp("{\"error\": \"ENOENT no such stack\"}"), 0));
    assert_int_equal(f->rc, CV_ENOENT);
    assert_int_equal(cv_progress_begun(&f->p), 0);
}

static void test_a_begun_traversal_publishes_its_stack_job_in_the_parents_lane(void **state)
{
    fixture_t *f = *state;
    cv_stack_begin_t sb = {.kind = CV_TRAV_UPDATE, .stack = "child"};
    cv_progress_begin(&f->p, &f->b, &sb, true, "engine-1");
    const cv_flow_t *a = step(f, tf_resp("[3]"), 0);
    assert_int_equal(a->msgs[0].type, CV_MSG_STACK);
    assert_string_equal(a->msgs[0].stack, "child");
    assert_true(a->msgs[0].express);
    assert_null(step(f, NULL, 0));
    assert_int_equal(f->rc, 0);
    assert_int_equal(cv_progress_begun(&f->p), 3);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_the_jobs_of_many_ready_successors_go_two_to_a_message),
        T(test_a_redelivery_publishes_only_the_complete_successors_not_done),
        T(test_a_fenced_node_done_publishes_nothing),
        T(test_a_successor_job_kafka_refused_is_a_transient_failure),
        T(test_the_last_node_resolves_the_outputs_from_the_records_and_ends),
        T(test_a_delete_that_ends_frees_the_name_and_notes_the_stack_deleted),
        T(test_records_made_behind_a_traversals_back_publish_its_rerun),
        T(test_an_older_action_still_to_be_recorded_leaves_the_end_to_the_reaper),
        T(test_an_end_of_a_superseded_traversal_does_nothing),
        T(test_a_failed_node_of_a_stack_with_rollback_publishes_its_stack_job),
        T(test_a_failed_node_answers_as_node_failed_did),
        T(test_a_begin_of_a_stack_that_is_gone_answers_enoent),
        T(test_a_begun_traversal_publishes_its_stack_job_in_the_parents_lane),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
