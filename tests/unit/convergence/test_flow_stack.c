/*
 * Specification of the STACK job as a step machine (cv_stackjob.h): the
 * stored definition read, expanded into this expansion's drafts and put in
 * place, the roots' jobs published; a duplicate publishing the roots of the
 * graph that stands; a superseded job ending; a definition beyond the
 * limits or that no longer parses failing the traversal; an empty graph
 * ended at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_stackjob.h"
#include "test_flow_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a, and b after it */
static const char TWO[] =
    "{\"heat_template_version\": \"2018-08-31\", \"resources\": {\"a\": {\"type\": "
    "\"OS::Heat::None\"}, \"b\": {\"type\": \"OS::Heat::None\", \"depends_on\": \"a\"}}}";
static const char EMPTY[] = "{\"heat_template_version\": \"2018-08-31\"}";

typedef struct fixture {
    cv_stackjob_t job;
    cv_limits_t limits;
} fixture_t;

static fixture_t *made(bool express)
{
    fixture_t *f = calloc(1, sizeof(*f));
    cv_limits_init(&f->limits);
    cv_msg_t m = {.type = CV_MSG_STACK, .traversal = 5, .kind = CV_TRAV_CREATE, .express = express};
    strcpy(m.stack, "stk");
    cv_stackjob_conf_t conf = {
        .worker = "engine-1", .expansion = "engine-1:7", .limits = &f->limits};
    cv_stackjob_init(&f->job, &m, &conf);
    return f;
}

static int setup(void **state)
{
    *state = made(true);
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    cv_stackjob_reset(&f->job);
    free(f);
    return 0;
}

static const cv_flow_t *replied(cv_stackjob_t *x, cv_resp_t *reply)
{
    const cv_resp_t *replies[] = {reply};
    cv_flow_in_t in = tf_in(replies, 1, 0);
    const cv_flow_t *a = cv_stackjob_step(x, &in);
    free(reply);
    return a;
}

static const cv_flow_t *delivered(cv_stackjob_t *x, int published)
{
    cv_flow_in_t in = tf_in(NULL, 0, published);
    return cv_stackjob_step(x, &in);
}

/* stack_definition's reply: traversal `traversal` of CREATE, template `tpl`
 * (JSON text), environment `env`. */
static cv_resp_t *definition(const char *traversal, const char *tpl, const char *env)
{
    return tf_resp_of(json_pack("[s, s, s, s, s, [], s, s, s]", "CREATE", "web", traversal, tpl,
                                "{}", "", "0", env));
}

/* The answer's commands that write `draft` (HSET), the fields they set. */
static size_t fields_written(const cv_flow_t *a, const char *draft)
{
    size_t n = 0;
    for (size_t i = 0; i < a->ncmds; i++)
        if (!a->cmds[i].call && strcmp(a->cmds[i].argv[0], "HSET") == 0 &&
            strstr(a->cmds[i].argv[1], draft))
            n += (size_t)(a->cmds[i].argc - 2) / 2;
    return n;
}

static void test_a_stack_job_starts_by_reading_the_definition(void **state)
{
    fixture_t *f = *state;
    const cv_flow_t *a = cv_stackjob_start(&f->job);
    assert_int_equal(tf_call(a, 0)->script, CV_SCRIPT_STACK_DEFINITION);
}

static void test_a_definition_is_drafted_then_put_in_place(void **state)
{
    fixture_t *f = *state;
    cv_stackjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, definition("5", TWO, "{}"));
    assert_int_equal(a->kind, CV_FLOW_IO);
    assert_string_equal(a->cmds[0].argv[0], "DEL"); /* a retry writes its drafts from scratch */
    assert_int_equal(fields_written(a, "rdef:5:draft:engine-1:7"), 2);
    assert_int_equal(fields_written(a, "graph:5:draft:engine-1:7"), 2);
    assert_true(tf_sends(a, "EXPIRE"));
    const cv_flow_cmd_t *last = &a->cmds[a->ncmds - 1];
    assert_true(last->reply); /* only stack_expanded's reply is awaited */
    assert_int_equal(last->call->script, CV_SCRIPT_STACK_EXPANDED);
    assert_string_equal(tf_arg(last->call, "nodes"), "2");
    for (size_t i = 0; i + 1 < a->ncmds; i++)
        assert_false(a->cmds[i].reply);
}

static void test_the_roots_of_the_graph_put_in_place_get_their_jobs(void **state)
{
    fixture_t *f = *state;
    cv_stackjob_start(&f->job);
    replied(&f->job, definition("5", TWO, "{}"));
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"OK\"]"));
    assert_int_equal(a->nmsgs, 1);
    assert_int_equal(a->msgs[0].type, CV_MSG_CHECK);
    assert_string_equal(a->msgs[0].resource, "a");
    assert_int_equal(a->msgs[0].traversal, 5);
    assert_true(a->msgs[0].express); /* a small stack stays in the express lane */
    assert_true(tf_sends(a, "SADD"));
    assert_int_equal(delivered(&f->job, 0)->kind, CV_FLOW_DONE);
}

static void test_a_root_kafka_refused_retries_the_job(void **state)
{
    fixture_t *f = *state;
    cv_stackjob_start(&f->job);
    replied(&f->job, definition("5", TWO, "{}"));
    replied(&f->job, tf_resp("[\"OK\"]"));
    assert_int_equal(delivered(&f->job, CV_EKAFKA)->kind, CV_FLOW_RETRY);
}

static void test_a_duplicate_publishes_the_roots_of_the_graph_that_stands(void **state)
{
    fixture_t *f = *state;
    cv_stackjob_start(&f->job);
    replied(&f->job, definition("5", TWO, "{}"));
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"DUP\", \"u/x\", \"u/y\"]"));
    assert_int_equal(a->counts[CV_FLOW_STALE], 1);
    assert_int_equal(a->nmsgs, 2);
    assert_string_equal(a->msgs[0].resource, "x");
    assert_string_equal(a->msgs[1].resource, "y");
}

static void test_a_superseded_traversal_is_not_expanded(void **state)
{
    fixture_t *f = *state;
    cv_stackjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, definition("6", TWO, "{}"));
    assert_int_equal(a->kind, CV_FLOW_DONE);
    assert_int_equal(a->counts[CV_FLOW_STALE], 1);
    assert_int_equal(a->ncmds, 0);
}

static void test_a_template_beyond_the_workers_limit_fails_the_traversal(void **state)
{
    fixture_t *f = *state;
    f->limits.template_bytes = 16;
    cv_stackjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, definition("5", TWO, "{}"));
    const cv_call_t *c = tf_call(a, 0);
    assert_int_equal(c->script, CV_SCRIPT_STACK_FINISH);
    assert_string_equal(tf_arg(c, "status"), "FAILED");
    assert_contains(tf_arg(c, "reason"), "exceeds the limit of 16");
    assert_true(tf_logged(a, "stack stk:"));
    assert_int_equal(replied(&f->job, tf_resp("[\"OK\"]"))->kind, CV_FLOW_DONE);
}

static void test_a_template_that_no_longer_parses_fails_the_traversal(void **state)
{
    fixture_t *f = *state;
    cv_stackjob_start(&f->job);
    const cv_flow_t *a = replied(&f->job, definition("5", "not json", "{}"));
    assert_string_equal(tf_arg(tf_call(a, 0), "reason"), "stored template is not JSON");
}

static void test_an_empty_graph_ends_the_traversal_at_once(void **state)
{
    fixture_t *f = *state;
    cv_stackjob_start(&f->job);
    replied(&f->job, definition("5", EMPTY, "{}"));
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"OK\"]"));
    assert_int_equal(a->nmsgs, 0);
    assert_int_equal(tf_call(a, a->ncmds - 1)->script, CV_SCRIPT_STACK_DEFINITION);
}

static void test_a_hook_of_the_environment_travels_in_the_graph_entry(void **state)
{
    fixture_t *f = *state;
    cv_stackjob_start(&f->job);
    const cv_flow_t *a =
        replied(&f->job, definition("5", TWO,
                                    "{\"resource_registry\": {\"resources\": {\"b\": {\"hooks\": "
                                    "\"pre-create\"}}}}"));
    bool hooked = false;
    for (size_t i = 0; i < a->ncmds; i++)
        for (int k = 2;
             !a->cmds[i].call && strcmp(a->cmds[i].argv[0], "HSET") == 0 && k + 1 < a->cmds[i].argc;
             k += 2)
            hooked |= strcmp(a->cmds[i].argv[k], "u/b") == 0 &&
                      strstr(a->cmds[i].argv[k + 1], "\"h\":1") != NULL;
    assert_true(hooked);
}

static void test_a_big_stack_publishes_its_roots_in_the_bulk_lane(void **state)
{
    fixture_t *f = *state;
    json_t *tpl = tu_json("{\"heat_template_version\": \"2018-08-31\", \"resources\": {}}");
    for (int i = 0; i < 201; i++) {
        char name[16];
        snprintf(name, sizeof(name), "r%d", i);
        json_object_set_new(json_object_get(tpl, "resources"), name,
                            json_pack("{s:s}", "type", "OS::Heat::None"));
    }
    char *text = json_dumps(tpl, JSON_COMPACT);
    cv_stackjob_start(&f->job);
    replied(&f->job, definition("5", text, "{}"));
    const cv_flow_t *a = replied(&f->job, tf_resp("[\"OK\"]"));
    assert_int_equal(a->nmsgs, 16); /* 201 roots spread over CV_MSG_SPREAD messages */
    assert_false(a->msgs[0].express);
    free(text);
    json_decref(tpl);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_stack_job_starts_by_reading_the_definition),
        T(test_a_definition_is_drafted_then_put_in_place),
        T(test_the_roots_of_the_graph_put_in_place_get_their_jobs),
        T(test_a_root_kafka_refused_retries_the_job),
        T(test_a_duplicate_publishes_the_roots_of_the_graph_that_stands),
        T(test_a_superseded_traversal_is_not_expanded),
        T(test_a_template_beyond_the_workers_limit_fails_the_traversal),
        T(test_a_template_that_no_longer_parses_fails_the_traversal),
        T(test_an_empty_graph_ends_the_traversal_at_once),
        T(test_a_hook_of_the_environment_travels_in_the_graph_entry),
        T(test_a_big_stack_publishes_its_roots_in_the_bulk_lane),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
