/*
 * Specification of OS::Heat::RandomString: the length, classes, sequences
 * and minimums are honoured, invalid combinations are refused when the
 * template is validated, and the string is a pure function of the uuid and
 * the salt, so a retried create makes the same one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_rtype.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHERE "resources.r.properties"
#define UUID "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define UPPER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGITS "0123456789"

static const cv_rtype_t *rs_type(void)
{
    return cv_rtype_find("OS::Heat::RandomString");
}

static json_t *schema(const char *props_json, bool literal_only, char *errstr, size_t errstr_size)
{
    json_t *raw = tu_json(props_json);
    errstr[0] = '\0';
    json_t *out = cv_rtype_apply_schema(rs_type(), raw, WHERE, literal_only, errstr, errstr_size);
    json_decref(raw);
    return out;
}

/* The state create is handed: resource "r" of stack "stk", `props` as they
 * are, empty data and attributes (released with release_state). */
static cv_rstate_t state_of(json_t *props, const char *uuid, double now)
{
    return (cv_rstate_t){.stack_name = "stk",
                         .resource_name = "r",
                         .uuid = uuid,
                         .props = props,
                         .now = now,
                         .data = json_object(),
                         .attrs = json_object()};
}

/* Releases the state's data and attributes. */
static void release_state(cv_rstate_t *st)
{
    json_decref(st->data);
    json_decref(st->attrs);
}

/* Creates a RandomString and returns its value (malloc'd). */
static char *generate(const char *props_json, const char *uuid)
{
    char err[256];
    json_t *props = schema(props_json, false, err, sizeof(err));
    if (!props)
        fail_msg("%s refused: %s", props_json, err);
    cv_rstate_t st = state_of(props, uuid, 1);
    if (rs_type()->create(&st) != 0)
        fail_msg("create failed: %s", st.reason);
    char physical_id[CV_PHYSID_MAX];
    snprintf(physical_id, sizeof(physical_id), "stk-r-%.12s", uuid);
    assert_string_equal(st.physical_id, physical_id);
    assert_int_equal(rs_type()->observe(&st, CV_ACTION_CREATE), CV_OBSERVED_COMPLETE);
    char *value = strdup(json_string_value(json_object_get(st.attrs, "value")));
    release_state(&st);
    json_decref(props);
    return value;
}

static size_t count_in(const char *s, const char *set)
{
    size_t n = 0;
    for (; *s; s++)
        n += strchr(set, *s) != NULL;
    return n;
}

static void expect_invalid(const char *props_json, const char *message)
{
    char err[512];
    json_t *out = schema(props_json, true, err, sizeof(err));
    if (out) {
        json_decref(out);
        fail_msg("%s accepted", props_json);
    }
    assert_string_equal(err, message);
}

static void test_default_is_32_letters_and_digits(void **state)
{
    (void)state;
    char *s = generate("{}", UUID);
    assert_int_equal(strlen(s), 32);
    assert_int_equal(count_in(s, LOWER UPPER DIGITS), 32);
    free(s);
}

static void test_the_length_is_honoured(void **state)
{
    (void)state;
    const int lengths[] = {1, 2, 7, 100, 512};
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        char props[64];
        snprintf(props, sizeof(props), "{\"length\": %d}", lengths[i]);
        char *s = generate(props, UUID);
        assert_int_equal(strlen(s), lengths[i]);
        free(s);
    }
}

static void test_the_deprecated_sequence_picks_one_class(void **state)
{
    (void)state;
    char *s = generate("{\"sequence\": \"digits\", \"length\": 40}", UUID);
    assert_int_equal(count_in(s, DIGITS), 40);
    free(s);
    s = generate("{\"sequence\": \"hexdigits\", \"length\": 40}", UUID);
    assert_int_equal(count_in(s, "0123456789ABCDEF"), 40);
    free(s);
    s = generate("{\"sequence\": \"octdigits\", \"length\": 40}", UUID);
    assert_int_equal(count_in(s, "01234567"), 40);
    free(s);
}

static void test_class_minimums_fill_the_string_exactly(void **state)
{
    (void)state;
    char *s =
        generate("{\"length\": 8, \"character_classes\": [{\"class\": \"uppercase\", \"min\": "
                 "5}, {\"class\": \"digits\", \"min\": 3}]}",
                 UUID);
    assert_int_equal(strlen(s), 8);
    assert_int_equal(count_in(s, UPPER), 5);
    assert_int_equal(count_in(s, DIGITS), 3);
    free(s);
}

static void test_minimums_hold_for_many_uuids_and_the_rest_comes_from_the_union(void **state)
{
    (void)state;
    const char *props = "{\"length\": 12, \"character_classes\": [{\"class\": \"lowercase\", "
                        "\"min\": 2}, {\"class\": \"digits\", \"min\": \"3\"}], "
                        "\"character_sequences\": [{\"sequence\": \"!@#\", \"min\": 4}]}";
    for (int i = 0; i < 300; i++) {
        char uuid[64];
        snprintf(uuid, sizeof(uuid), "uuid-%d", i);
        char *s = generate(props, uuid);
        assert_int_equal(strlen(s), 12);
        assert_true(count_in(s, LOWER) >= 2);
        assert_true(count_in(s, DIGITS) >= 3);
        assert_true(count_in(s, "!@#") >= 4);
        assert_int_equal(count_in(s, LOWER DIGITS "!@#"), 12);
        free(s);
    }
}

static void test_a_class_without_min_needs_one(void **state)
{
    (void)state;
    for (int i = 0; i < 100; i++) {
        char uuid[32];
        snprintf(uuid, sizeof(uuid), "u%d", i);
        char *s = generate("{\"length\": 2, \"character_classes\": [{\"class\": \"uppercase\"}, "
                           "{\"class\": \"digits\"}]}",
                           uuid);
        assert_int_equal(count_in(s, UPPER), 1);
        assert_int_equal(count_in(s, DIGITS), 1);
        free(s);
    }
}

static void test_a_class_without_a_name_is_letters_and_digits(void **state)
{
    (void)state;
    char *s = generate("{\"length\": 30, \"character_classes\": [{\"min\": 2}]}", UUID);
    assert_int_equal(count_in(s, LOWER UPPER DIGITS), 30);
    free(s);
}

static void test_sequences_may_hold_any_unicode_text(void **state)
{
    (void)state;
    char *s = generate("{\"length\": 5, \"character_sequences\": [{\"sequence\": "
                       "\"\\u00e4\\u00f6\\u00fc\\u20ac\", \"min\": 5}]}",
                       UUID);
    /* Five characters of two or three bytes each, all from the sequence. */
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        chars += (*p & 0xc0) != 0x80;
    assert_int_equal(chars, 5);
    json_t *check = json_string(s); /* jansson refuses invalid UTF-8 */
    assert_non_null(check);
    json_decref(check);
    free(s);
}

static void test_every_character_of_the_class_can_appear(void **state)
{
    (void)state;
    char *s = generate("{\"length\": 512}", UUID);
    assert_int_equal(count_in(LOWER UPPER DIGITS, s), 62);
    free(s);
}

static void test_the_same_uuid_and_salt_give_the_same_string(void **state)
{
    (void)state;
    const char *props = "{\"length\": 24, \"salt\": \"pepper\"}";
    char *a = generate(props, UUID), *b = generate(props, UUID);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

static void test_another_uuid_or_salt_gives_another_string(void **state)
{
    (void)state;
    char *a = generate("{\"salt\": \"1\"}", UUID);
    char *b = generate("{\"salt\": \"1\"}", "11111111-2222-3333-4444-555555555555");
    char *c = generate("{\"salt\": \"2\"}", UUID);
    char *d = generate("{}", UUID);
    assert_string_not_equal(a, b);
    assert_string_not_equal(a, c);
    assert_string_not_equal(a, d);
    free(a);
    free(b);
    free(c);
    free(d);
}

static void test_update_derives_the_same_string(void **state)
{
    (void)state;
    char err[256];
    json_t *props = schema("{\"salt\": \"s\"}", false, err, sizeof(err));
    cv_rstate_t st = state_of(props, UUID, 0);
    assert_int_equal(rs_type()->create(&st), 0);
    char *first = strdup(json_string_value(json_object_get(st.attrs, "value")));
    json_object_clear(st.attrs);
    assert_int_equal(rs_type()->update(&st), 0);
    assert_string_equal(json_string_value(json_object_get(st.attrs, "value")), first);
    assert_int_equal(rs_type()->remove(&st), 0);
    free(first);
    release_state(&st);
    json_decref(props);
}

static void test_minimums_longer_than_the_string_are_refused(void **state)
{
    (void)state;
    expect_invalid("{\"length\": 4, \"character_classes\": [{\"class\": \"digits\", \"min\": 3}], "
                   "\"character_sequences\": [{\"sequence\": \"xy\", \"min\": 2}]}",
                   WHERE ".length: length 4 is shorter than the sum of minimums 5");
    expect_invalid("{\"character_classes\": [{\"min\": 20}, {\"min\": 13}]}",
                   WHERE ".length: length 32 is shorter than the sum of minimums 33");
}

static void test_the_length_must_be_between_1_and_512(void **state)
{
    (void)state;
    expect_invalid("{\"length\": 0}", WHERE ".length: must be between 1 and 512, got 0");
    expect_invalid("{\"length\": 513}", WHERE ".length: must be between 1 and 512, got 513");
    expect_invalid("{\"length\": -3}", WHERE ".length: must be between 1 and 512, got -3");
}

static void test_invalid_classes_and_sequences_are_refused(void **state)
{
    (void)state;
    expect_invalid("{\"sequence\": \"symbols\"}",
                   WHERE ".sequence: \"symbols\" is not one of lettersdigits, letters, lowercase, "
                         "uppercase, digits, hexdigits, octdigits");
    expect_invalid("{\"character_classes\": [{\"class\": \"digits\"}, {\"class\": \"Digits\"}]}",
                   WHERE ".character_classes[1].class: \"Digits\" is not one of lettersdigits, "
                         "letters, lowercase, uppercase, digits, hexdigits, octdigits");
    expect_invalid("{\"character_classes\": [{\"class\": \"digits\", \"max\": 3}]}",
                   WHERE ".character_classes[0].max: unknown property");
    expect_invalid("{\"character_classes\": [\"digits\"]}",
                   WHERE ".character_classes[0]: expected map, got \"digits\"");
    expect_invalid("{\"character_classes\": [{\"min\": 0}]}",
                   WHERE ".character_classes[0].min: must be between 1 and 512, got 0");
    expect_invalid("{\"character_classes\": [{\"min\": \"two\"}]}",
                   WHERE ".character_classes[0].min: expected integer, got \"two\"");
    expect_invalid("{\"character_sequences\": [{\"min\": 1}]}",
                   WHERE ".character_sequences[0].sequence: required property is missing");
    expect_invalid("{\"character_sequences\": [{\"sequence\": \"\"}]}",
                   WHERE ".character_sequences[0].sequence: must not be empty");
    expect_invalid("{\"sequence\": \"digits\", \"character_classes\": [{\"class\": \"digits\"}]}",
                   WHERE ".sequence: cannot be used with character_classes or "
                         "character_sequences");
}

static void test_intrinsics_are_checked_once_resolved(void **state)
{
    (void)state;
    char err[256];
    json_t *out = schema("{\"length\": {\"get_param\": \"n\"}, \"character_classes\": [{\"class\": "
                         "\"digits\", \"min\": 40}, {\"class\": {\"get_param\": \"c\"}}]}",
                         true, err, sizeof(err));
    if (!out)
        fail_msg("refused: %s", err);
    cv_rstate_t st = state_of(out, UUID, 0);
    assert_int_equal(rs_type()->create(&st), CV_EFAILED);
    assert_non_null(strstr(st.reason, "unresolved"));
    release_state(&st);
    json_decref(out);
}

static void test_create_refuses_invalid_resolved_properties(void **state)
{
    (void)state;
    /* As if a get_param resolved to a bad length after validation. */
    json_t *props = tu_json("{\"length\": 0}");
    cv_rstate_t st = state_of(props, UUID, 0);
    assert_int_equal(rs_type()->create(&st), CV_EFAILED);
    assert_string_equal(st.reason, WHERE ".length: must be between 1 and 512, got 0");
    release_state(&st);
    json_decref(props);
}

/* Heat's get_reference_id: get_resource of a RandomString is its value;
 * other types keep the physical id. */
static void test_reference_id_is_the_random_string(void **state)
{
    (void)state;
    json_t *attrs = json_pack("{s:s}", "value", "s3cr3t");
    assert_string_equal(cv_rtype_reference_id("OS::Heat::RandomString", "pw", "stk-pw-0123", attrs),
                        "s3cr3t");
    assert_string_equal(cv_rtype_reference_id("OS::Heat::Value", "v", "stk-v-0123", attrs),
                        "stk-v-0123");
    assert_string_equal(cv_rtype_reference_id("No::Such::Type", "x", "stk-x-0123", attrs),
                        "stk-x-0123");
    json_t *none = json_object(); /* not created yet: the physical id */
    assert_string_equal(cv_rtype_reference_id("OS::Heat::RandomString", "pw", "stk-pw-0123", none),
                        "stk-pw-0123");
    json_decref(none);
    json_decref(attrs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_is_32_letters_and_digits),
        cmocka_unit_test(test_the_length_is_honoured),
        cmocka_unit_test(test_the_deprecated_sequence_picks_one_class),
        cmocka_unit_test(test_class_minimums_fill_the_string_exactly),
        cmocka_unit_test(test_minimums_hold_for_many_uuids_and_the_rest_comes_from_the_union),
        cmocka_unit_test(test_a_class_without_min_needs_one),
        cmocka_unit_test(test_a_class_without_a_name_is_letters_and_digits),
        cmocka_unit_test(test_sequences_may_hold_any_unicode_text),
        cmocka_unit_test(test_every_character_of_the_class_can_appear),
        cmocka_unit_test(test_the_same_uuid_and_salt_give_the_same_string),
        cmocka_unit_test(test_another_uuid_or_salt_gives_another_string),
        cmocka_unit_test(test_update_derives_the_same_string),
        cmocka_unit_test(test_minimums_longer_than_the_string_are_refused),
        cmocka_unit_test(test_the_length_must_be_between_1_and_512),
        cmocka_unit_test(test_invalid_classes_and_sequences_are_refused),
        cmocka_unit_test(test_intrinsics_are_checked_once_resolved),
        cmocka_unit_test(test_create_refuses_invalid_resolved_properties),
        cmocka_unit_test(test_reference_id_is_the_random_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
