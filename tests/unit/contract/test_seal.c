/*
 * Specification of cv_seal (proto/contract/cv_seal.h): key files, sealing, opening
 * inside stored JSON, re-sealing for a rotation, and refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_seal.h"

#include <stdlib.h>
#include <string.h>

/* base64 of 32 bytes each */
#define KEY_A "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
#define KEY_B "HxwdHhscGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA="

static cv_keyring_t *ring_of(const char *text)
{
    char err[256];
    cv_keyring_t *r = cv_keyring_parse(text, err, sizeof(err));
    assert_non_null(r);
    return r;
}

static int teardown(void **state)
{
    (void)state;
    cv_seal_use(NULL);
    return 0;
}

static char *sealed_text_of(const char *json)
{
    json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
    assert_non_null(v);
    char *text = cv_seal_dumps(v);
    json_decref(v);
    assert_non_null(text);
    return text;
}

static void test_key_file_lines_comments_and_first_key(void **state)
{
    (void)state;
    cv_keyring_t *r = ring_of("# rotated 2026-12-02\n\nk2 " KEY_B "\r\nk1\t" KEY_A "\n");
    assert_string_equal(cv_keyring_current(r), "k2");
    cv_keyring_free(r);
}

static void test_bad_key_files_are_refused_naming_the_line(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"", "no key"},
        {"# only a comment\n", "no key"},
        {"k1\n", "line 1"},
        {"k1 c2hvcnQ=\n", "line 1: key k1 is not the base64 of 32 bytes"},
        {"k1 " KEY_A "\nk1 " KEY_B "\n", "line 2: key id k1 given twice"},
        {"bad/id " KEY_A "\n", "line 1"},
        {"k1 !!!notbase64!!!\n", "line 1"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[256] = "";
        assert_null(cv_keyring_parse(bad[i].text, err, sizeof(err)));
        assert_non_null(strstr(err, bad[i].says));
    }
}

static void test_without_a_ring_nothing_is_sealed(void **state)
{
    (void)state;
    cv_seal_use(NULL);
    char *text = sealed_text_of("{\"password\":\"hunter2\"}");
    assert_string_equal(text, "{\"password\":\"hunter2\"}");
    free(text);
}

static void test_a_sealed_value_hides_its_text_and_opens_to_it(void **state)
{
    (void)state;
    cv_seal_use(ring_of("k1 " KEY_A "\n"));
    char *text = sealed_text_of("{\"password\":\"hunter2\",\"n\":[1,2]}");
    assert_null(strstr(text, "hunter2"));
    assert_non_null(strstr(text, "\"" CV_SEAL_PREFIX "k1:"));
    int rc = -1;
    json_t *back = cv_unseal_loads(text, &rc, NULL, 0);
    assert_int_equal(rc, 0);
    json_t *want = json_loads("{\"password\":\"hunter2\",\"n\":[1,2]}", 0, NULL);
    assert_true(json_equal(back, want));
    json_decref(back);
    json_decref(want);
    free(text);
}

static void test_empty_objects_and_arrays_stay_plain_the_rest_is_sealed(void **state)
{
    (void)state;
    cv_seal_use(ring_of("k1 " KEY_A "\n"));
    static const char *const plain[] = {"{}", "[]"};
    for (size_t i = 0; i < 2; i++) {
        char *text = sealed_text_of(plain[i]);
        assert_string_equal(text, plain[i]);
        free(text);
    }
    static const char *const sealed[] = {"\"\"", "0", "null", "[0]", "{\"a\":{}}"};
    for (size_t i = 0; i < sizeof(sealed) / sizeof(sealed[0]); i++) {
        char *text = sealed_text_of(sealed[i]);
        assert_non_null(strstr(text, "\"" CV_SEAL_PREFIX "k1:"));
        free(text);
    }
}

static void test_two_seals_of_one_value_differ(void **state)
{
    (void)state;
    cv_seal_use(ring_of("k1 " KEY_A "\n"));
    char *a = sealed_text_of("\"hunter2\""), *b = sealed_text_of("\"hunter2\"");
    assert_string_not_equal(a, b); /* a fresh nonce each time */
    free(a);
    free(b);
}

static void test_members_named_are_sealed_the_rest_kept(void **state)
{
    (void)state;
    cv_seal_use(ring_of("k1 " KEY_A "\n"));
    json_t *params =
        json_pack("{s:s, s:s, s:i}", "db_password", "hunter2", "flavor", "m1.small", "count", 3);
    json_t *hidden = json_pack("[s]", "db_password");
    char *text = cv_seal_members_dumps(params, hidden);
    assert_null(strstr(text, "hunter2"));
    assert_non_null(strstr(text, "\"flavor\":\"m1.small\""));
    json_t *back = cv_unseal_loads(text, NULL, NULL, 0);
    assert_true(json_equal(back, params));
    free(text);
    text = cv_seal_members_dumps(params, NULL); /* all */
    assert_null(strstr(text, "m1.small"));
    json_decref(back);
    back = cv_unseal_loads(text, NULL, NULL, 0);
    assert_true(json_equal(back, params));
    json_decref(back);
    json_decref(params);
    json_decref(hidden);
    free(text);
}

/* Tokens inside a larger document (a record's replaced versions, a sync
 * point) open where they stand; other strings stay. */
static void test_tokens_open_inside_a_document(void **state)
{
    (void)state;
    cv_seal_use(ring_of("k1 " KEY_A "\n"));
    json_t *attrs = json_pack("{s:s}", "value", "s3cr3t-value");
    json_t *doc = json_pack("[{s:s, s:o, s:s}]", "uuid", "u-1", "attrs", cv_seal_json(attrs),
                            "status", "DELETE_IN_PROGRESS");
    char *text = json_dumps(doc, JSON_COMPACT);
    assert_null(strstr(text, "s3cr3t"));
    assert_non_null(strstr(text, "\"status\":\"DELETE_IN_PROGRESS\""));
    json_t *back = cv_unseal_loads(text, NULL, NULL, 0);
    assert_true(json_equal(json_object_get(json_array_get(back, 0), "attrs"), attrs));
    json_decref(back);
    json_decref(doc);
    json_decref(attrs);
    free(text);
}

static void test_a_key_the_ring_lacks_is_named(void **state)
{
    (void)state;
    cv_seal_use(ring_of("k1 " KEY_A "\n"));
    char *text = sealed_text_of("\"hunter2\"");
    cv_seal_use(ring_of("k2 " KEY_B "\n"));
    char err[256] = "";
    int rc = 0;
    assert_null(cv_unseal_loads(text, &rc, err, sizeof(err)));
    assert_int_equal(rc, CV_EIO);
    assert_non_null(strstr(err, "key k1"));
    cv_seal_use(NULL);
    assert_null(cv_unseal_loads(text, &rc, err, sizeof(err)));
    assert_int_equal(rc, CV_EIO);
    assert_non_null(strstr(err, "no key file"));
    free(text);
}

static void test_an_altered_token_is_refused(void **state)
{
    (void)state;
    cv_seal_use(ring_of("k1 " KEY_A "\n"));
    char *text = sealed_text_of("\"hunter2\"");
    size_t n = strlen(text);
    text[n - 3] = text[n - 3] == 'A' ? 'B' : 'A'; /* a ciphertext bit */
    int rc = 0;
    char err[256] = "";
    assert_null(cv_unseal_loads(text, &rc, err, sizeof(err)));
    assert_int_equal(rc, CV_EIO);
    assert_non_null(strstr(err, "altered or cut"));
    /* the key id is bound too: the same box under another id fails */
    cv_seal_use(ring_of("k1 " KEY_A "\nk9 " KEY_A "\n"));
    char *other = sealed_text_of("\"hunter2\"");
    char *id = strstr(other, ":k1:");
    assert_non_null(id);
    id[2] = '9';
    assert_null(cv_unseal_loads(other, &rc, err, sizeof(err)));
    assert_int_equal(rc, CV_EIO);
    free(other);
    free(text);
}

/* Rotation: with the new key first, re-sealing moves every token of the old
 * key to the new one; the old key can then go. */
static void test_reseal_moves_old_tokens_to_the_current_key(void **state)
{
    (void)state;
    cv_seal_use(ring_of("k1 " KEY_A "\n"));
    char *old = sealed_text_of("{\"a\":\"x1\"}");
    json_t *wrap =
        json_pack("{s:s, s:o}", "plain", "kept", "v", json_loads(old, JSON_DECODE_ANY, NULL));
    char *doc = json_dumps(wrap, JSON_COMPACT);
    json_decref(wrap);
    cv_seal_use(ring_of("k2 " KEY_B "\nk1 " KEY_A "\n"));
    char *fresh = NULL;
    assert_int_equal(cv_reseal(doc, strlen(doc), &fresh, NULL, 0), 0);
    assert_non_null(fresh);
    assert_null(strstr(fresh, ":k1:"));
    assert_non_null(strstr(fresh, ":k2:"));
    char *again = NULL; /* already of the current key: nothing to do */
    assert_int_equal(cv_reseal(fresh, strlen(fresh), &again, NULL, 0), 0);
    assert_null(again);
    cv_seal_use(ring_of("k2 " KEY_B "\n")); /* the old key removed */
    json_t *back = cv_unseal_loads(fresh, NULL, NULL, 0);
    json_t *want = json_loads("{\"plain\":\"kept\",\"v\":{\"a\":\"x1\"}}", 0, NULL);
    assert_true(json_equal(back, want));
    json_decref(back);
    json_decref(want);
    free(fresh);
    free(doc);
    free(old);
}

static void test_text_without_tokens_is_not_copied(void **state)
{
    (void)state;
    char *out = (char *)1;
    const char *text = "{\"note\":\"cv:sealed:1: in prose is no token\"}";
    assert_int_equal(cv_unseal(text, strlen(text), &out, NULL, 0), 0);
    assert_null(out); /* the prefix in prose is not a whole token: kept */
    const char *plain = "{\"password\":\"hunter2\"}";
    assert_false(cv_sealed_in(plain, strlen(plain)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_key_file_lines_comments_and_first_key, teardown),
        cmocka_unit_test_teardown(test_bad_key_files_are_refused_naming_the_line, teardown),
        cmocka_unit_test_teardown(test_without_a_ring_nothing_is_sealed, teardown),
        cmocka_unit_test_teardown(test_a_sealed_value_hides_its_text_and_opens_to_it, teardown),
        cmocka_unit_test_teardown(test_empty_objects_and_arrays_stay_plain_the_rest_is_sealed,
                                  teardown),
        cmocka_unit_test_teardown(test_two_seals_of_one_value_differ, teardown),
        cmocka_unit_test_teardown(test_members_named_are_sealed_the_rest_kept, teardown),
        cmocka_unit_test_teardown(test_tokens_open_inside_a_document, teardown),
        cmocka_unit_test_teardown(test_a_key_the_ring_lacks_is_named, teardown),
        cmocka_unit_test_teardown(test_an_altered_token_is_refused, teardown),
        cmocka_unit_test_teardown(test_reseal_moves_old_tokens_to_the_current_key, teardown),
        cmocka_unit_test_teardown(test_text_without_tokens_is_not_copied, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
