/* cli_events: a stream entry as the events readers show (one, or a settled
 * action's two). */
#include "cv_status.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#define MAX_FIELDS 24

typedef struct entry {
    redisReply id, fields, values[MAX_FIELDS];
    redisReply *value_ptrs[MAX_FIELDS], *parts[2];
    redisReply whole;
} entry_t;

static void string_reply(redisReply *r, const char *s)
{
    memset(r, 0, sizeof(*r));
    r->type = REDIS_REPLY_STRING;
    r->str = (char *)s;
    r->len = strlen(s);
}

/* An XRANGE entry [id, [field, value, ...]] of the NULL-ended strings. */
static redisReply *entry_of(entry_t *e, const char *id, const char *const *kv)
{
    memset(e, 0, sizeof(*e));
    size_t n = 0;
    for (; kv[n]; n++) {
        string_reply(&e->values[n], kv[n]);
        e->value_ptrs[n] = &e->values[n];
    }
    string_reply(&e->id, id);
    e->fields = (redisReply){.type = REDIS_REPLY_ARRAY, .elements = n, .element = e->value_ptrs};
    e->parts[0] = &e->id;
    e->parts[1] = &e->fields;
    e->whole = (redisReply){.type = REDIS_REPLY_ARRAY, .elements = 2, .element = e->parts};
    return &e->whole;
}

static const char *field(const json_t *ev, const char *name)
{
    return json_string_value(json_object_get(ev, name));
}

static void test_an_entry_without_begun_is_one_event(void **state)
{
    (void)state;
    static const char *const kv[] = {
        "time",        "1712345678.123", "resource",      "web",       "action", "CREATE", "status",
        "IN_PROGRESS", "reason",         "state changed", "traversal", "3",      NULL};
    entry_t e;
    json_t *out = json_array();
    assert_int_equal(cli_event_expand(entry_of(&e, "1-0", kv), false, out), 1);
    assert_int_equal(json_array_size(out), 1);
    const json_t *ev = json_array_get(out, 0);
    assert_string_equal(field(ev, "status"), "IN_PROGRESS");
    assert_string_equal(field(ev, "reason"), "state changed");
    assert_int_equal(json_integer_value(json_object_get(ev, "traversal")), 3);
    assert_null(json_object_get(ev, "id"));
    assert_null(json_object_get(ev, "begun"));
    json_decref(out);
}

static void test_a_settled_action_is_its_in_progress_then_its_complete(void **state)
{
    (void)state;
    static const char *const kv[] = {
        "time",   "1712345678.123", "resource",       "web",    "physical_id",
        "p-1",    "action",         "CREATE",         "status", "COMPLETE",
        "reason", "done here",      "traversal",      "2",      "worker",
        "e1",     "type",           "OS::Heat::None", "begun",  "state changed",
        NULL};
    entry_t e;
    json_t *out = json_array();
    assert_int_equal(cli_event_expand(entry_of(&e, "17-4", kv), true, out), 2);
    assert_int_equal(json_array_size(out), 2);
    const json_t *first = json_array_get(out, 0), *second = json_array_get(out, 1);
    assert_string_equal(field(first, "status"), "IN_PROGRESS");
    assert_string_equal(field(first, "reason"), "state changed");
    assert_string_equal(field(second, "status"), "COMPLETE");
    assert_string_equal(field(second, "reason"), "done here");
    for (size_t i = 0; i < 2; i++) {
        const json_t *ev = json_array_get(out, i);
        assert_string_equal(field(ev, "id"), "17-4");
        assert_string_equal(field(ev, "resource"), "web");
        assert_string_equal(field(ev, "physical_id"), "p-1");
        assert_string_equal(field(ev, "action"), "CREATE");
        assert_string_equal(field(ev, "worker"), "e1");
        assert_string_equal(field(ev, "type"), "OS::Heat::None");
        assert_true(json_real_value(json_object_get(ev, "time")) > 1712345678.12);
        assert_null(json_object_get(ev, "begun"));
    }
    json_decref(out);
}

static void test_an_empty_begun_reason_still_makes_two_events(void **state)
{
    (void)state;
    static const char *const kv[] = {"resource", "a",     "action", "DELETE", "status",
                                     "COMPLETE", "begun", "",       NULL};
    entry_t e;
    json_t *out = json_array();
    assert_int_equal(cli_event_expand(entry_of(&e, "1-0", kv), false, out), 2);
    assert_string_equal(field(json_array_get(out, 0), "reason"), "");
    assert_string_equal(field(json_array_get(out, 0), "status"), "IN_PROGRESS");
    json_decref(out);
}

static void test_malformed_entries_are_refused(void **state)
{
    (void)state;
    static const char *const odd[] = {"resource", "a", "action", NULL};
    entry_t e;
    assert_false(cli_event_entry_ok(entry_of(&e, "1-0", odd)));
    static const char *const even[] = {"resource", "a", NULL};
    redisReply *ok = entry_of(&e, "1-0", even);
    assert_true(cli_event_entry_ok(ok));
    e.values[1].type = REDIS_REPLY_INTEGER;
    assert_false(cli_event_entry_ok(ok));
    redisReply nil = {.type = REDIS_REPLY_NIL};
    assert_false(cli_event_entry_ok(&nil));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_entry_without_begun_is_one_event),
        cmocka_unit_test(test_a_settled_action_is_its_in_progress_then_its_complete),
        cmocka_unit_test(test_an_empty_begun_reason_still_makes_two_events),
        cmocka_unit_test(test_malformed_entries_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
