/*
 * Specification of the batched script calls (cv_calls): check_begin for the
 * jobs one message carries, and check_done_many for the actions that
 * settled together — which keys and arguments go where, and what cannot go
 * together.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_calls.h"
#include "cv_base.h"

#include <stdio.h>
#include <string.h>

static cv_msg_t job(const char *resource)
{
    cv_msg_t m = {.type = CV_MSG_CHECK, .traversal = 3, .phase = CV_PHASE_UPDATE};
    strcpy(m.stack, "0b9d2bbbc67670f2");
    snprintf(m.resource, sizeof(m.resource), "%s", resource);
    return m;
}

static void test_check_begin_of_one_job_has_no_tail(void **state)
{
    (void)state;
    cv_msg_t a = job("a");
    const cv_msg_t *jobs[] = {&a};
    const char *tokens[] = {"e@1:1"};
    cv_call_t call;
    assert_int_equal(cv_call_check_begin_many(&call, jobs, tokens, 1, 5000), 0);
    assert_int_equal(call.script, CV_SCRIPT_CHECK_BEGIN);
    assert_int_equal(call.nextra, 0);
    assert_string_equal(call.a.check_begin.node, "u/a");
    cv_call_free(&call);
}

static void test_check_begin_of_more_jobs_adds_three_keys_and_arguments_each(void **state)
{
    (void)state;
    cv_msg_t a = job("a"), b = job("b"), c = job("c");
    c.phase = CV_PHASE_CLEANUP;
    const cv_msg_t *jobs[] = {&a, &b, &c};
    const char *tokens[] = {"e@1:1", "e@1:2", "e@1:3"};
    cv_call_t call;
    assert_int_equal(cv_call_check_begin_many(&call, jobs, tokens, 3, 5000), 0);
    assert_int_equal(call.nextra, 6);
    /* the first job is the fixed part */
    assert_string_equal(call.a.check_begin.token, "e@1:1");
    /* then per job: res, lease, sync point / node, token, resource */
    assert_string_equal(call.extra_keys[0], "cv:{0b9d2bbbc67670f2}:res:b");
    assert_string_equal(call.extra_keys[1], "cv:{0b9d2bbbc67670f2}:lease:b");
    assert_string_equal(call.extra_keys[2], "cv:{0b9d2bbbc67670f2}:sp:3:u/b");
    assert_string_equal(call.extra_args[0], "u/b");
    assert_string_equal(call.extra_args[1], "e@1:2");
    assert_string_equal(call.extra_args[2], "b");
    assert_string_equal(call.extra_keys[5], "cv:{0b9d2bbbc67670f2}:sp:3:c/c");
    assert_string_equal(call.extra_args[3], "c/c");
    assert_string_equal(call.extra_args[4], "e@1:3");
    cv_call_free(&call);
}

/* A check_done call of resource r with no successors. */
static void done_call(cv_call_t *call, const cv_msg_t *j, const char *reason,
                      const char *graph_entry)
{
    cv_check_finish_t f = {.job = j,
                           .version = "0",
                           .token = "e@1:1",
                           .action = "CREATE",
                           .reason = reason,
                           .uuid = "u-1",
                           .type = "OS::Heat::None"};
    cv_node_done_t d = {.job = j, .graph_entry = graph_entry, .status = "CREATE_COMPLETE"};
    assert_int_equal(cv_call_check_done(call, &f, &d, "engine-1"), 0);
}

static void test_check_done_many_joins_each_nodes_arguments_with_0xff(void **state)
{
    (void)state;
    cv_msg_t a = job("a"), b = job("b");
    cv_call_t ca, cb, many;
    done_call(&ca, &a, "state changed", "{\"s\":[],\"p\":0}");
    done_call(&cb, &b, "created", "{\"s\":[],\"p\":0}");
    const cv_call_t *items[] = {&ca, &cb};
    assert_int_equal(cv_call_check_done_many(&many, items, 2), 0);
    assert_int_equal(many.script, CV_SCRIPT_CHECK_DONE_MANY);
    assert_string_equal(many.keys[0], "cv:{0b9d2bbbc67670f2}:stack");
    assert_string_equal(many.keys[CV_CHECK_DONE_MANY_NKEYS - 1],
                        ca.keys[CV_CHECK_DONE_NKEYS - 1]); /* publishing */
    assert_string_equal(many.args[0], "3");
    assert_int_equal(many.nextra, 4);
    assert_string_equal(many.extra_keys[2], "cv:{0b9d2bbbc67670f2}:res:b");
    assert_string_equal(many.extra_keys[3], "cv:{0b9d2bbbc67670f2}:lease:b");
    assert_string_equal(many.extra_args[2], "u/b");
    /* b's check_done arguments, in their order, joined by 0xff */
    const char *joined = many.extra_args[3];
    size_t fields = 1;
    for (const char *p = joined; *p; p++)
        fields += (unsigned char)*p == 0xff;
    assert_int_equal(fields, CV_CHECK_DONE_NARGS);
    assert_memory_equal(joined,
                        "3\xffu/b\xff"
                        "b\xff"
                        "0\xff",
                        9);
    assert_non_null(strstr(joined, "\xff"
                                   "created\xff"));
    cv_call_free(&many);
    cv_call_free(&ca);
    cv_call_free(&cb);
}

static void test_check_done_many_refuses_successors_and_the_separator(void **state)
{
    (void)state;
    cv_msg_t a = job("a"), b = job("b");
    cv_call_t ca, cb, many;
    done_call(&ca, &a, "state changed", "{\"s\":[],\"p\":0}");
    done_call(&cb, &b, "state changed", "{\"s\":[[\"u/c\",1]],\"p\":0}");
    const cv_call_t *items[] = {&ca, &cb};
    assert_int_equal(cv_call_check_done_many(&many, items, 2), CV_EINVAL); /* b has a successor */
    cv_call_free(&cb);
    done_call(&cb, &b, "odd \xff byte", "{\"s\":[],\"p\":0}");
    assert_int_equal(cv_call_check_done_many(&many, items, 2), CV_EINVAL);
    cv_call_free(&ca);
    cv_call_free(&cb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_begin_of_one_job_has_no_tail),
        cmocka_unit_test(test_check_begin_of_more_jobs_adds_three_keys_and_arguments_each),
        cmocka_unit_test(test_check_done_many_joins_each_nodes_arguments_with_0xff),
        cmocka_unit_test(test_check_done_many_refuses_successors_and_the_separator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
