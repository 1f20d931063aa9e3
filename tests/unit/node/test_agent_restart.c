/*
 * Specification of the agent's restart policy (agent/node/agent_restart.h, the
 * restartPolicy of BCS's Mesos scheduling document): interval + n ×
 * backoff, max_times, Never, OnFailure's exit 0, and the counter reset
 * after a healthy period.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_restart.h"
#include "test_util.h"

static cv_restart_policy_t policy(const char *json)
{
    char err[256];
    cv_restart_policy_t p;
    json_t *j = tu_json(json);
    assert_int_equal(cv_restart_parse(j, "restart_policy", &p, err, sizeof(err)), 0);
    json_decref(j);
    return p;
}

static void test_each_restart_waits_interval_plus_n_backoffs(void **state)
{
    (void)state;
    cv_restart_policy_t p = policy("{\"policy\": \"OnFailure\", \"interval\": 5, \"backoff\": 10}");
    double delay;
    /* The BCS document's example: 5 s, then 15 s, then 25 s. */
    assert_int_equal(cv_restart_decide(&p, 0, true, &delay), CV_RESTART_AFTER);
    assert_true(delay == 5);
    assert_int_equal(cv_restart_decide(&p, 1, true, &delay), CV_RESTART_AFTER);
    assert_true(delay == 15);
    assert_int_equal(cv_restart_decide(&p, 2, true, &delay), CV_RESTART_AFTER);
    assert_true(delay == 25);
}

static void test_max_times_restarts_then_gives_up(void **state)
{
    (void)state;
    cv_restart_policy_t p = policy("{\"policy\": \"Always\", \"max_times\": 2}");
    double delay;
    assert_int_equal(cv_restart_decide(&p, 1, true, &delay), CV_RESTART_AFTER);
    assert_int_equal(cv_restart_decide(&p, 2, true, &delay), CV_RESTART_GIVE_UP);
}

static void test_max_times_zero_never_gives_up(void **state)
{
    (void)state;
    cv_restart_policy_t p = policy("{\"policy\": \"Always\", \"max_times\": 0}");
    double delay;
    assert_int_equal(cv_restart_decide(&p, 100000, true, &delay), CV_RESTART_AFTER);
}

/* A program that cannot be executed on the node is not retried there,
 * even without a limit: the agent gives up and the replica moves. */
static void test_a_program_that_cannot_be_executed_gives_up_at_once(void **state)
{
    (void)state;
    cv_restart_policy_t p = policy("{\"policy\": \"Always\", \"max_times\": 0}");
    assert_int_equal(cv_restart_decide_start_error(&p), CV_RESTART_GIVE_UP);
    p = policy("{\"policy\": \"OnFailure\", \"max_times\": 5}");
    assert_int_equal(cv_restart_decide_start_error(&p), CV_RESTART_GIVE_UP);
    p = policy("{\"policy\": \"Never\"}");
    assert_int_equal(cv_restart_decide_start_error(&p), CV_RESTART_STAY_FAILED);
}

static void test_on_failure_takes_exit_0_as_done(void **state)
{
    (void)state;
    cv_restart_policy_t p = policy("{\"policy\": \"OnFailure\"}");
    double delay;
    assert_int_equal(cv_restart_decide(&p, 0, false, &delay), CV_RESTART_DONE);
    assert_int_equal(cv_restart_decide(&p, 0, true, &delay), CV_RESTART_AFTER);
}

static void test_always_restarts_after_exit_0_too(void **state)
{
    (void)state;
    cv_restart_policy_t p = policy("{\"policy\": \"Always\"}");
    double delay;
    assert_int_equal(cv_restart_decide(&p, 0, false, &delay), CV_RESTART_AFTER);
}

static void test_never_restarts_and_a_failure_stays_failed(void **state)
{
    (void)state;
    cv_restart_policy_t p = policy("{\"policy\": \"Never\"}");
    double delay;
    assert_int_equal(cv_restart_decide(&p, 0, true, &delay), CV_RESTART_STAY_FAILED);
    assert_int_equal(cv_restart_decide(&p, 0, false, &delay), CV_RESTART_DONE);
}

static void test_no_policy_is_always_with_one_second_steps(void **state)
{
    (void)state;
    char err[256];
    cv_restart_policy_t p;
    assert_int_equal(cv_restart_parse(NULL, "restart_policy", &p, err, sizeof(err)), 0);
    assert_int_equal(p.kind, CV_RESTART_ALWAYS);
    assert_true(p.interval == 1 && p.backoff == 1 && p.max_times == 0);
}

static void test_the_counter_resets_after_the_healthy_period(void **state)
{
    (void)state;
    assert_int_equal(cv_restart_counter(4, 1000, 1000 + 1799, 1800), 4);
    assert_int_equal(cv_restart_counter(4, 1000, 1000 + 1800, 1800), 0);
    assert_int_equal(cv_restart_counter(4, 0, 99999, 1800), 4); /* never healthy */
}

static void test_a_bad_policy_names_its_member(void **state)
{
    (void)state;
    char err[256];
    cv_restart_policy_t p;
    json_t *j = tu_json("{\"policy\": \"Sometimes\"}");
    assert_int_not_equal(cv_restart_parse(j, "restart_policy", &p, err, sizeof(err)), 0);
    assert_contains(err, "restart_policy.policy: expected Never, Always or OnFailure");
    json_decref(j);
    j = tu_json("{\"max_times\": -1}");
    assert_int_not_equal(cv_restart_parse(j, "restart_policy", &p, err, sizeof(err)), 0);
    assert_contains(err, "restart_policy.max_times");
    json_decref(j);
    j = tu_json("{\"backoff\": \"soon\"}");
    assert_int_not_equal(cv_restart_parse(j, "restart_policy", &p, err, sizeof(err)), 0);
    assert_contains(err, "restart_policy.backoff");
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_restart_waits_interval_plus_n_backoffs),
        cmocka_unit_test(test_max_times_restarts_then_gives_up),
        cmocka_unit_test(test_max_times_zero_never_gives_up),
        cmocka_unit_test(test_a_program_that_cannot_be_executed_gives_up_at_once),
        cmocka_unit_test(test_on_failure_takes_exit_0_as_done),
        cmocka_unit_test(test_always_restarts_after_exit_0_too),
        cmocka_unit_test(test_never_restarts_and_a_failure_stays_failed),
        cmocka_unit_test(test_no_policy_is_always_with_one_second_steps),
        cmocka_unit_test(test_the_counter_resets_after_the_healthy_period),
        cmocka_unit_test(test_a_bad_policy_names_its_member),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
