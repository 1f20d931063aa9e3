/*
 * Specification of OS::Heat::WaitConditionHandle and OS::Heat::WaitCondition
 * as Heat defines them (heat/engine/resources/wait_condition.py and
 * openstack/heat/wait_condition*.py): a signal's missing fields take Heat's
 * defaults, a malformed one is refused with Heat's message, a repeated id
 * replaces its entry; the wait condition completes on `count` successes,
 * fails at a FAILURE or on timeout with Heat's reason texts, and its data
 * attribute maps ids to data.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_rtype.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define UUID "fedcba9876543210-aaaa-bbbb-cccc-dddddddddddd"
#define T0 1700000000.0

static const cv_rtype_t *handle_type(void)
{
    return cv_rtype_find("OS::Heat::WaitConditionHandle");
}

static const cv_rtype_t *wait_type(void)
{
    return cv_rtype_find("OS::Heat::WaitCondition");
}

static cv_rstate_t *new_state(const cv_rtype_t *type, const char *name, const char *props_json)
{
    cv_rstate_t *st = calloc(1, sizeof(*st));
    json_t *raw = tu_json(props_json);
    char err[256] = "";
    st->props = cv_rtype_apply_schema(type, raw, "resources.x.properties", false, err, sizeof(err));
    if (!st->props)
        fail_msg("%s refused: %s", props_json, err);
    json_decref(raw);
    st->stack_name = "stk";
    st->resource_name = name;
    st->uuid = UUID;
    st->now = T0;
    st->data = json_object();
    st->attrs = json_object();
    return st;
}

static void free_state(cv_rstate_t *st)
{
    json_decref((json_t *)st->props);
    json_decref(st->data);
    json_decref(st->attrs);
    free(st);
}

static cv_rstate_t *created_handle(void)
{
    cv_rstate_t *h = new_state(handle_type(), "wait_handle", "{}");
    assert_int_equal(handle_type()->create(h), 0);
    return h;
}

/* Sends `details_json` (NULL: no data) to the handle; returns the result. */
static int send(cv_rstate_t *h, const char *details_json, char *errstr, size_t errstr_size)
{
    json_t *details = details_json ? tu_json(details_json) : json_null();
    h->reason[0] = '\0';
    int rc = handle_type()->signal(h, details, errstr, errstr_size);
    json_decref(details);
    return rc;
}

static void send_ok(cv_rstate_t *h, const char *details_json)
{
    char err[256] = "";
    if (send(h, details_json, err, sizeof(err)) != 0)
        fail_msg("signal %s refused: %s", details_json ? details_json : "(none)", err);
}

static const json_t *signal_at(const cv_rstate_t *h, size_t i)
{
    return json_array_get(json_object_get(h->data, "signals"), i);
}

static const char *field(const json_t *entry, const char *key)
{
    return json_string_value(json_object_get(entry, key));
}

/* ---------------------------------------------------------------- the handle */

static void test_the_handle_says_how_to_signal_it_with_convergectl(void **state)
{
    (void)state;
    cv_rstate_t *h = created_handle();
    assert_string_equal(h->physical_id, "stk-wait_handle-fedcba987654");
    assert_string_equal(json_string_value(json_object_get(h->attrs, "curl_cli")),
                        "convergectl signal stk wait_handle");
    assert_string_equal(json_string_value(json_object_get(h->attrs, "endpoint")),
                        "stk/wait_handle");
    assert_string_equal(json_string_value(json_object_get(h->attrs, "token")), "");
    json_t *sig = tu_json(json_string_value(json_object_get(h->attrs, "signal")));
    assert_string_equal(field(sig, "curl_cli"), "convergectl signal stk wait_handle");
    assert_string_equal(field(sig, "endpoint"), "stk/wait_handle");
    json_decref(sig);
    free_state(h);
}

static void test_a_signal_without_data_is_a_success_numbered_by_arrival(void **state)
{
    (void)state;
    cv_rstate_t *h = created_handle();
    send_ok(h, NULL);
    send_ok(h, "{}");
    assert_string_equal(field(signal_at(h, 0), "id"), "1");
    assert_string_equal(field(signal_at(h, 0), "status"), "SUCCESS");
    assert_string_equal(field(signal_at(h, 0), "reason"), "Signal 1 received");
    assert_true(json_is_null(json_object_get(signal_at(h, 0), "data")));
    assert_string_equal(field(signal_at(h, 1), "id"), "2");
    assert_string_equal(field(signal_at(h, 1), "reason"), "Signal 2 received");
    assert_string_equal(h->reason, "Signal: status:SUCCESS reason:Signal 2 received");
    free_state(h);
}

static void test_given_fields_are_kept_and_ids_written_as_python_does(void **state)
{
    (void)state;
    cv_rstate_t *h = created_handle();
    send_ok(h, "{\"status\": \"FAILURE\", \"reason\": \"disk full\", \"data\": {\"a\": 1}, "
               "\"id\": 7}");
    const json_t *e = signal_at(h, 0);
    assert_string_equal(field(e, "id"), "7");
    assert_string_equal(field(e, "status"), "FAILURE");
    assert_string_equal(field(e, "reason"), "disk full");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "data"), "a")), 1);
    assert_string_equal(h->reason, "Signal: status:FAILURE reason:disk full");
    free_state(h);
}

static void test_a_repeated_id_replaces_its_entry_in_place(void **state)
{
    (void)state;
    cv_rstate_t *h = created_handle();
    send_ok(h, "{\"id\": \"a\", \"data\": \"first\"}");
    send_ok(h, "{\"id\": \"b\"}");
    send_ok(h, "{\"id\": \"a\", \"data\": \"again\"}");
    assert_int_equal(json_array_size(json_object_get(h->data, "signals")), 2);
    assert_string_equal(field(signal_at(h, 0), "id"), "a");
    assert_string_equal(field(signal_at(h, 0), "data"), "again");
    /* The default reason counts the entries before it, as Heat's does. */
    assert_string_equal(field(signal_at(h, 0), "reason"), "Signal 3 received");
    free_state(h);
}

static void test_a_long_reason_is_kept_whole(void **state)
{
    (void)state;
    char reason[1200] = "", details[1300];
    for (int i = 0; i < 300; i++)
        strcat(reason, "\u00e9"); /* é, two bytes each in UTF-8 */
    snprintf(details, sizeof(details), "{\"reason\": \"%s\"}", reason);
    cv_rstate_t *h = created_handle();
    send_ok(h, details);
    assert_int_equal(strlen(field(signal_at(h, 0), "reason")), 600);
    assert_int_equal(strncmp(h->reason, "Signal: status:SUCCESS reason:\xc3\xa9", 32), 0);
    free_state(h);
}

static void test_malformed_signals_are_refused_with_heats_message(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"status\": \"success\"}",
        "{\"status\": \"DONE\"}",
        "{\"extra\": 1}",
        "{\"status\": 1}",
        "[\"SUCCESS\"]",
        "\"SUCCESS\"",
        "{\"status\": \"SUCCESS\", \"x\": null}",
    };
    cv_rstate_t *h = created_handle();
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[256] = "";
        assert_int_equal(send(h, bad[i], err, sizeof(err)), CV_EINVAL);
        assert_string_equal(err, "ValueError: resources.wait_handle: Metadata format invalid");
    }
    assert_int_equal(json_array_size(json_object_get(h->data, "signals")), 0);
    free_state(h);
}

static void test_signal_transport_takes_heats_values(void **state)
{
    (void)state;
    char err[256] = "";
    json_t *ok = tu_json("{\"signal_transport\": \"HEAT_SIGNAL\"}");
    json_t *bad = tu_json("{\"signal_transport\": \"PIGEON\"}");
    assert_int_equal(handle_type()->validate(ok, "resources.h.properties", err, sizeof(err)), 0);
    assert_int_equal(handle_type()->validate(bad, "resources.h.properties", err, sizeof(err)),
                     CV_EVALIDATE);
    assert_non_null(strstr(err, "resources.h.properties.signal_transport: \"PIGEON\""));
    json_decref(ok);
    json_decref(bad);
}

static void test_only_the_handle_takes_signals(void **state)
{
    (void)state;
    assert_non_null(handle_type()->signal);
    assert_null(wait_type()->signal);
    assert_null(cv_rtype_find("OS::Heat::None")->signal);
    assert_null(cv_rtype_find("OS::Heat::TestResource")->signal);
    assert_string_equal(wait_type()->watches, "handle");
    assert_null(handle_type()->watches);
}

/* ---------------------------------------------------------------- the wait */

static cv_rstate_t *waiting(const char *props_json)
{
    cv_rstate_t *w = new_state(wait_type(), "wait_condition", props_json);
    assert_int_equal(wait_type()->create(w), 0);
    w->action_started = T0;
    return w;
}

/* Observes `w` at `now` with the handle `h` as the observer hands it over. */
static cv_observed_t look(cv_rstate_t *w, const cv_rstate_t *h, double now)
{
    w->now = now;
    w->reason[0] = '\0';
    json_t *watched = json_pack("{s:s, s:s, s:o}", "name", h ? h->resource_name : "", "type",
                                "OS::Heat::WaitConditionHandle", "data",
                                h ? json_deep_copy(h->data) : json_object());
    json_object_set_new(w->data, "watched", watched);
    cv_observed_t seen = wait_type()->observe(w, CV_ACTION_CREATE);
    assert_null(json_object_get(w->data, "watched")); /* never recorded */
    return seen;
}

static void test_the_wait_completes_on_count_successes_with_heats_data(void **state)
{
    (void)state;
    cv_rstate_t *h = created_handle();
    cv_rstate_t *w = waiting("{\"handle\": \"stk-wait_handle-fedcba987654\", \"timeout\": 60, "
                             "\"count\": 2}");
    assert_int_equal(look(w, h, T0 + 1), CV_OBSERVED_IN_PROGRESS);
    assert_true(w->retry_at > T0 + 60);
    send_ok(h, "{\"id\": \"web1\", \"data\": \"ready\"}");
    assert_int_equal(look(w, h, T0 + 2), CV_OBSERVED_IN_PROGRESS);
    send_ok(h, "{\"id\": \"web1\", \"data\": \"ready again\"}"); /* the same id: still one */
    assert_int_equal(look(w, h, T0 + 3), CV_OBSERVED_IN_PROGRESS);
    send_ok(h, NULL);
    assert_int_equal(look(w, h, T0 + 4), CV_OBSERVED_COMPLETE);
    assert_string_equal(json_string_value(json_object_get(w->attrs, "data")),
                        "{\"web1\": \"ready again\", \"2\": null}");
    free_state(w);
    free_state(h);
}

static void test_the_first_failure_fails_the_wait_with_the_failures_reasons(void **state)
{
    (void)state;
    cv_rstate_t *h = created_handle();
    cv_rstate_t *w = waiting("{\"handle\": \"h\", \"timeout\": 60, \"count\": 3}");
    send_ok(h, "{\"status\": \"SUCCESS\"}");
    send_ok(h, "{\"status\": \"FAILURE\", \"reason\": \"boom\"}");
    send_ok(h, "{\"status\": \"FAILURE\"}");
    assert_int_equal(look(w, h, T0 + 1), CV_OBSERVED_FAILED);
    assert_string_equal(w->reason,
                        "WaitConditionFailure: resources.wait_condition: boom;Signal 3 received");
    free_state(w);
    free_state(h);
}

static void test_a_timeout_fails_the_wait_with_heats_reason(void **state)
{
    (void)state;
    cv_rstate_t *h = created_handle();
    cv_rstate_t *w = waiting("{\"handle\": \"h\", \"timeout\": 5, \"count\": 3}");
    assert_int_equal(look(w, h, T0 + 5), CV_OBSERVED_IN_PROGRESS); /* not older than 5 s yet */
    assert_int_equal(look(w, h, T0 + 5.01), CV_OBSERVED_FAILED);
    assert_string_equal(w->reason,
                        "WaitConditionTimeout: resources.wait_condition: 0 of 3 received");
    send_ok(h, "{\"reason\": \"one\"}");
    send_ok(h, "{\"reason\": \"two\"}");
    assert_int_equal(look(w, h, T0 + 6), CV_OBSERVED_FAILED);
    assert_string_equal(
        w->reason, "WaitConditionTimeout: resources.wait_condition: 2 of 3 received - one;two");
    free_state(w);
    free_state(h);
}

static void test_a_timeout_is_judged_before_failures_as_in_heat(void **state)
{
    (void)state;
    cv_rstate_t *h = created_handle();
    cv_rstate_t *w = waiting("{\"handle\": \"h\", \"timeout\": 1}");
    send_ok(h, "{\"status\": \"FAILURE\", \"reason\": \"late\"}");
    assert_int_equal(look(w, h, T0 + 2), CV_OBSERVED_FAILED);
    assert_string_equal(w->reason,
                        "WaitConditionTimeout: resources.wait_condition: 0 of 1 received");
    free_state(w);
    free_state(h);
}

static void test_a_handle_that_is_not_one_fails_with_heats_message(void **state)
{
    (void)state;
    cv_rstate_t *w = waiting("{\"handle\": \"nothing-here\", \"timeout\": 60}");
    assert_int_equal(look(w, NULL, T0 + 1), CV_OBSERVED_FAILED);
    assert_string_equal(w->reason, "ValueError: resources.wait_condition: nothing-here is not a "
                                   "valid wait condition handle.");
    json_object_set_new(
        w->data, "watched",
        json_pack("{s:s, s:s, s:{}}", "name", "rnd", "type", "OS::Heat::RandomString", "data"));
    assert_int_equal(wait_type()->observe(w, CV_ACTION_CREATE), CV_OBSERVED_FAILED);
    assert_string_equal(w->reason,
                        "ValueError: resources.wait_condition: rnd is not a valid wait condition "
                        "handle.");
    free_state(w);
}

static void test_a_delete_never_waits(void **state)
{
    (void)state;
    cv_rstate_t *w = waiting("{\"handle\": \"h\", \"timeout\": 60}");
    assert_int_equal(wait_type()->observe(w, CV_ACTION_DELETE), CV_OBSERVED_COMPLETE);
    free_state(w);
}

static void test_timeout_and_count_take_heats_ranges(void **state)
{
    (void)state;
    static const struct {
        const char *props;
        int rc;
    } cases[] = {
        {"{\"handle\": \"h\", \"timeout\": 1}", 0},
        {"{\"handle\": \"h\", \"timeout\": 43200, \"count\": 5}", 0},
        {"{\"handle\": \"h\", \"timeout\": 0}", CV_EVALIDATE},
        {"{\"handle\": \"h\", \"timeout\": 43201}", CV_EVALIDATE},
        {"{\"handle\": \"h\", \"timeout\": 10, \"count\": 0}", CV_EVALIDATE},
        {"{\"handle\": \"h\", \"timeout\": {\"get_param\": \"t\"}}", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        json_t *p = tu_json(cases[i].props);
        int rc = wait_type()->validate(p, "resources.w.properties", err, sizeof(err));
        if (rc != cases[i].rc)
            fail_msg("%s: expected %d, got %d (%s)", cases[i].props, cases[i].rc, rc, err);
        json_decref(p);
    }
}

static void test_count_may_change_in_place_but_handle_and_timeout_replace(void **state)
{
    (void)state;
    json_t *a = tu_json("{\"handle\": \"h\", \"timeout\": 10, \"count\": 1}");
    json_t *b = tu_json("{\"handle\": \"h\", \"timeout\": 10, \"count\": 2}");
    json_t *c = tu_json("{\"handle\": \"h2\", \"timeout\": 10, \"count\": 1}");
    assert_false(cv_rtype_needs_replacement(wait_type(), a, b));
    assert_true(cv_rtype_needs_replacement(wait_type(), a, c));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_handle_says_how_to_signal_it_with_convergectl),
        cmocka_unit_test(test_a_signal_without_data_is_a_success_numbered_by_arrival),
        cmocka_unit_test(test_given_fields_are_kept_and_ids_written_as_python_does),
        cmocka_unit_test(test_a_repeated_id_replaces_its_entry_in_place),
        cmocka_unit_test(test_a_long_reason_is_kept_whole),
        cmocka_unit_test(test_malformed_signals_are_refused_with_heats_message),
        cmocka_unit_test(test_signal_transport_takes_heats_values),
        cmocka_unit_test(test_only_the_handle_takes_signals),
        cmocka_unit_test(test_the_wait_completes_on_count_successes_with_heats_data),
        cmocka_unit_test(test_the_first_failure_fails_the_wait_with_the_failures_reasons),
        cmocka_unit_test(test_a_timeout_fails_the_wait_with_heats_reason),
        cmocka_unit_test(test_a_timeout_is_judged_before_failures_as_in_heat),
        cmocka_unit_test(test_a_handle_that_is_not_one_fails_with_heats_message),
        cmocka_unit_test(test_a_delete_never_waits),
        cmocka_unit_test(test_timeout_and_count_take_heats_ranges),
        cmocka_unit_test(test_count_may_change_in_place_but_handle_and_timeout_replace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
