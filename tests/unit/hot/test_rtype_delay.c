/*
 * Specification of OS::Heat::Delay: waits min_wait plus a jitter of at most
 * max_jitter * jitter_multiplier seconds during the listed actions, without
 * blocking (observe answers IN_PROGRESS until due); a changed property
 * replaces it (Heat's inherited handle_update), and an update never waits;
 * get_resource of it is its name; Heat's validation messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv__rtype_internal.h"
#include "test_rtype_config.h"

static const cv_rtype_t *delay(void)
{
    return tr_type("OS::Heat::Delay");
}

/* Runs `op` at t=100 and returns how long observe() says it waits. */
static double waits(const char *props_json, cv_action_t action)
{
    json_t *raw = tu_json(props_json), *props = tr_props(delay(), raw);
    cv_rstate_t st = tr_state(props, 100);
    int rc = action == CV_ACTION_CREATE   ? delay()->create(&st)
             : action == CV_ACTION_UPDATE ? delay()->update(&st)
                                          : delay()->remove(&st);
    assert_int_equal(rc, 0);
    assert_string_equal(st.physical_id, ""); /* as Heat: no physical resource */
    double wait = 0;
    if (delay()->observe(&st, action) == CV_OBSERVED_IN_PROGRESS) {
        wait = st.retry_at - 100 - 0.002;
        st.now = 100 + wait; /* exactly the wait: not yet */
        assert_int_equal(delay()->observe(&st, action), CV_OBSERVED_IN_PROGRESS);
        st.now = st.retry_at;
        assert_int_equal(delay()->observe(&st, action), CV_OBSERVED_COMPLETE);
    }
    tr_state_clear(&st);
    json_decref(props);
    json_decref(raw);
    return wait;
}

static bool about(double got, double want)
{
    return got > want - 1e-6 && got < want + 1e-6;
}

static void test_create_waits_min_wait_by_default(void **state)
{
    (void)state;
    assert_true(about(waits("{\"min_wait\": 3}", CV_ACTION_CREATE), 3.0));
    assert_true(waits("{}", CV_ACTION_CREATE) == 0.0);
}

static void test_delete_waits_only_when_listed(void **state)
{
    (void)state;
    assert_true(waits("{\"min_wait\": 2}", CV_ACTION_DELETE) == 0.0);
    assert_true(
        about(waits("{\"min_wait\": 2, \"actions\": [\"DELETE\"]}", CV_ACTION_DELETE), 2.0));
    assert_true(waits("{\"min_wait\": 2, \"actions\": [\"DELETE\"]}", CV_ACTION_CREATE) == 0.0);
}

static void test_update_never_waits(void **state)
{
    (void)state;
    assert_true(
        waits("{\"min_wait\": 5, \"actions\": [\"CREATE\", \"DELETE\"]}", CV_ACTION_UPDATE) == 0.0);
}

static void test_jitter_is_within_max_jitter_times_multiplier(void **state)
{
    (void)state;
    double w =
        waits("{\"min_wait\": 1, \"max_jitter\": 4, \"jitter_multiplier\": 0.5}", CV_ACTION_CREATE);
    assert_true(w >= 1.0 && w < 3.0);
    /* The same version draws the same jitter: a retried create waits the same. */
    assert_true(w == waits("{\"min_wait\": 1, \"max_jitter\": 4, \"jitter_multiplier\": 0.5}",
                           CV_ACTION_CREATE));
    json_t *raw = tu_json("{\"max_jitter\": 10}"), *p = tr_props(delay(), raw);
    double a = cv__delay_wait_secs(p, "uuid-a", "CREATE"),
           b = cv__delay_wait_secs(p, "uuid-b", "CREATE");
    assert_true(a != b && a >= 0 && a < 10 && b >= 0 && b < 10);
    json_decref(p);
    json_decref(raw);
}

/* Heat's Delay inherits Resource.handle_update, which raises UpdateReplace
 * for any property diff: a changed property replaces it. */
static void test_a_changed_property_replaces_it(void **state)
{
    (void)state;
    static const char *const changed[] = {"{\"min_wait\": 2}",
                                          "{\"min_wait\": 1, \"max_jitter\": 1}",
                                          "{\"min_wait\": 1, \"jitter_multiplier\": 2}",
                                          "{\"min_wait\": 1, \"actions\": [\"DELETE\"]}"};
    json_t *raw = tu_json("{\"min_wait\": 1}"), *a = tr_props(delay(), raw);
    for (size_t i = 0; i < sizeof(changed) / sizeof(changed[0]); i++) {
        json_t *braw = tu_json(changed[i]), *b = tr_props(delay(), braw);
        assert_true(cv_rtype_needs_replacement(delay(), a, b));
        json_decref(b);
        json_decref(braw);
    }
    json_t *same = tr_props(delay(), raw);
    assert_false(cv_rtype_needs_replacement(delay(), a, same));
    json_decref(same);
    json_decref(a);
    json_decref(raw);
}

static void test_reference_id_is_the_resource_name(void **state)
{
    (void)state;
    json_t *attrs = json_object();
    assert_string_equal(cv_rtype_reference_id("OS::Heat::Delay", "pause", "", attrs), "pause");
    /* Adopted (external_id): the adopted id, as Heat's resource_id. */
    assert_string_equal(cv_rtype_reference_id("OS::Heat::Delay", "pause", "ext-1", attrs), "ext-1");
    json_decref(attrs);
}

static void test_validation_messages_are_heats(void **state)
{
    (void)state;
    char err[1024];
    tr_validate(delay(), "{\"min_wait\": -1}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.min_wait: -1 is out of range (min: 0, max: "
                             "None)");
    tr_validate(delay(), "{\"jitter_multiplier\": -0.5}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.jitter_multiplier: -0.5 is out of range "
                             "(min: 0, max: None)");
    tr_validate(delay(), "{\"actions\": [\"CREATE\", \"UPDATE\"]}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.actions: [\"CREATE\", \"UPDATE\"] is not an "
                             "allowed value [\"CREATE\", \"DELETE\", \"SUSPEND\", \"RESUME\"]");
    tr_validate(delay(), "{\"min_wait\": 1, \"actions\": [\"SUSPEND\", \"RESUME\"]}", err,
                sizeof(err));
    assert_string_equal(err, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_waits_min_wait_by_default),
        cmocka_unit_test(test_delete_waits_only_when_listed),
        cmocka_unit_test(test_update_never_waits),
        cmocka_unit_test(test_jitter_is_within_max_jitter_times_multiplier),
        cmocka_unit_test(test_a_changed_property_replaces_it),
        cmocka_unit_test(test_reference_id_is_the_resource_name),
        cmocka_unit_test(test_validation_messages_are_heats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
