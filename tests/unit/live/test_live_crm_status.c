/*
 * The cluster resource manager's two pieces without I/O
 * (scheduler/live): its status writes only the fields whose text changed
 * (live_status.c), and the loads reported for a service's replicas are
 * read into the model as numbers (live_read.c). The rest is I/O, tested by
 * tests/integration/test_crm.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "live_internal.h"

#include <stdlib.h>
#include <string.h>

static json_t *take(cv__crm_status_t *st)
{
    char *text = cv__crm_status_take(st);
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return v;
}

static void set_str(cv__crm_status_t *st, const char *field, const char *value)
{
    json_t *v = json_string(value);
    cv__crm_status_set(st, field, v);
    json_decref(v);
}

static void test_only_fields_whose_text_changed_are_written(void **state)
{
    (void)state;
    cv__crm_status_t st;
    cv__crm_status_init(&st);
    set_str(&st, "why", "");
    json_t *imb = json_pack("[{s:s, s:f}]", "metric", "CPU", "ratio", 2.5);
    cv__crm_status_set(&st, "imbalance", imb);
    json_t *w = take(&st);
    assert_int_equal(json_object_size(w), 2);
    assert_string_equal(json_string_value(json_object_get(w, "why")), "");
    assert_string_equal(json_string_value(json_object_get(w, "imbalance")),
                        "[{\"metric\":\"CPU\",\"ratio\":2.5}]");
    json_decref(w);
    assert_null(cv__crm_status_take(&st));
    /* the same values again: nothing to write; one changed: only it */
    set_str(&st, "why", "");
    cv__crm_status_set(&st, "imbalance", imb);
    assert_null(cv__crm_status_take(&st));
    set_str(&st, "why", "throttled");
    w = take(&st);
    assert_int_equal(json_object_size(w), 1);
    assert_string_equal(json_string_value(json_object_get(w, "why")), "throttled");
    json_decref(w);
    json_decref(imb);
    cv__crm_status_free(&st);
}

static void test_a_value_set_back_before_it_was_written_is_not_written(void **state)
{
    (void)state;
    cv__crm_status_t st;
    cv__crm_status_init(&st);
    set_str(&st, "why", "a");
    json_decref(take(&st));
    set_str(&st, "why", "b");
    set_str(&st, "why", "a");
    assert_null(cv__crm_status_take(&st));
    cv__crm_status_free(&st);
}

static void test_after_the_lease_changed_hands_everything_is_written_again(void **state)
{
    (void)state;
    cv__crm_status_t st;
    cv__crm_status_init(&st);
    set_str(&st, "why", "old");
    set_str(&st, "state", "{}");
    json_decref(take(&st));
    set_str(&st, "why", "new");
    cv__crm_status_forget(&st);
    json_t *w = take(&st);
    assert_int_equal(json_object_size(w), 2);
    assert_string_equal(json_string_value(json_object_get(w, "why")), "new");
    assert_string_equal(json_string_value(json_object_get(w, "state")), "{}");
    json_decref(w);
    cv__crm_status_free(&st);
}

static void test_a_phase_is_its_time_duration_and_moves(void **state)
{
    (void)state;
    cv__crm_status_t st;
    cv__crm_status_init(&st);
    cv__crm_status_phase(&st, "constraint", 1795509741.6054, 12.345, 3);
    json_t *w = take(&st);
    json_t *p = json_loads(json_string_value(json_object_get(w, "constraint")), 0, NULL);
    assert_non_null(p);
    assert_true(json_number_value(json_object_get(p, "at")) == 1795509741.605);
    assert_true(json_number_value(json_object_get(p, "ms")) == 12.3);
    assert_int_equal(json_integer_value(json_object_get(p, "moves")), 3);
    assert_string_equal(json_string_value(json_object_get(w, "constraint")),
                        "{\"at\":1795509741.605,\"ms\":12.3,\"moves\":3}");
    json_decref(p);
    json_decref(w);
    cv__crm_status_free(&st);
}

static redisReply *str(const char *s)
{
    static redisReply r[8];
    static int n;
    redisReply *e = &r[n++ % 8];
    memset(e, 0, sizeof(*e));
    e->type = REDIS_REPLY_STRING;
    e->str = (char *)s;
    e->len = strlen(s);
    return e;
}

static void test_reported_loads_are_numbers_per_index(void **state)
{
    (void)state;
    redisReply *elems[] = {
        str("0"), str("{\"CPU\": 80, \"MemoryMB\": 512.5, \"time\": 1700000000}"),
        str("1"), str("not json"),
        str("2"), str("{\"CPU\": \"high\"}")};
    redisReply arr = {.type = REDIS_REPLY_ARRAY, .elements = 6, .element = elems};
    json_t *loads = cv__live_loads(&arr);
    assert_int_equal(json_object_size(loads), 1);
    json_t *l0 = json_object_get(loads, "0");
    assert_int_equal(json_integer_value(json_object_get(l0, "CPU")), 80);
    assert_true(json_real_value(json_object_get(l0, "MemoryMB")) == 512.5);
    assert_int_equal(json_integer_value(json_object_get(l0, "time")), 1700000000);
    json_decref(loads);
    loads = cv__live_loads(NULL);
    assert_int_equal(json_object_size(loads), 0);
    json_decref(loads);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_fields_whose_text_changed_are_written),
        cmocka_unit_test(test_a_value_set_back_before_it_was_written_is_not_written),
        cmocka_unit_test(test_after_the_lease_changed_hands_everything_is_written_again),
        cmocka_unit_test(test_a_phase_is_its_time_duration_and_moves),
        cmocka_unit_test(test_reported_loads_are_numbers_per_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
