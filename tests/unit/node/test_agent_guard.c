/*
 * Specification of the fence guard's rules (agent/node/agent_guard.h): it
 * guards the processes of stateful replicas that are not stopped, and the
 * agent's proof of life is stale only past the fence time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_guard.h"
#include "test_util.h"

static void test_only_running_stateful_replicas_are_guarded(void **state)
{
    (void)state;
    json_t *states = tu_json(
        "[{\"rid\": \"a\", \"spec\": {\"stateful\": true},"
        "  \"tasks\": [{\"pid\": 11, \"start_time\": 5}, {\"pid\": 12, \"start_time\": 6}]},"
        " {\"rid\": \"b\", \"spec\": {\"stateful\": false}, \"tasks\": [{\"pid\": 21}]},"
        " {\"rid\": \"c\", \"spec\": {\"stateful\": true}, \"stopped\": true,"
        "  \"tasks\": [{\"pid\": 31}]},"
        " {\"rid\": \"d\", \"spec\": {\"stateful\": true}, \"tasks\": [{\"pid\": 0}]}]");
    json_t *t = cv_guard_targets(states);
    assert_int_equal(json_array_size(t), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(t, 0), "pid")), 11);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(t, 1), "start_time")), 6);
    json_decref(t);
    json_decref(states);
}

static void test_the_proof_of_life_is_stale_only_past_the_fence(void **state)
{
    (void)state;
    assert_false(cv_guard_stale(100.0, 104.9, 5000));
    assert_true(cv_guard_stale(100.0, 105.1, 5000));
    assert_false(cv_guard_stale(0, 1e9, 5000)); /* never touched: the agent never reached Redis */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_running_stateful_replicas_are_guarded),
        cmocka_unit_test(test_the_proof_of_life_is_stale_only_past_the_fence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
