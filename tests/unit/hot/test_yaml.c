/*
 * cv_yaml_load: YAML text into jansson, typed as Heat's PyYAML loader types
 * it, with errors that name the file, line and column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv_template.h"
#include "test_util.h"

static char err[1024];

static json_t *load(const char *text)
{
    err[0] = '\0';
    return cv_yaml_load(text, strlen(text), "doc.yaml", err, sizeof(err));
}

/* The value of key "v" in the one-line document "v: <scalar>". */
static json_t *scalar(const char *text)
{
    char doc[256];
    snprintf(doc, sizeof(doc), "v: %s\n", text);
    json_t *root = load(doc);
    if (!root)
        fail_msg("%s: %s", text, err);
    json_t *v = json_incref(json_object_get(root, "v"));
    json_decref(root);
    return v;
}

static void assert_string_scalar(const char *text, const char *expected)
{
    json_t *v = scalar(text);
    if (!json_is_string(v) || strcmp(json_string_value(v), expected) != 0)
        fail_msg("%s should be the string \"%s\"", text, expected);
    json_decref(v);
}

static void assert_int_scalar(const char *text, json_int_t expected)
{
    json_t *v = scalar(text);
    if (!json_is_integer(v) || json_integer_value(v) != expected)
        fail_msg("%s should be the integer %lld", text, (long long)expected);
    json_decref(v);
}

static void assert_real_scalar(const char *text, double expected)
{
    json_t *v = scalar(text);
    if (!json_is_real(v) || json_real_value(v) != expected)
        fail_msg("%s should be the real %g", text, expected);
    json_decref(v);
}

static void assert_rejected(const char *text, const char *fragment)
{
    json_t *root = load(text);
    if (root)
        fail_msg("accepted: %s", text);
    assert_contains(err, fragment);
}

/* ---------------------------------------------------------------- typing */

static void test_plain_null_forms_load_as_null(void **state)
{
    (void)state;
    const char *forms[] = {"~", "null", "Null", "NULL", ""};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        json_t *v = scalar(forms[i]);
        if (!json_is_null(v))
            fail_msg("\"%s\" should be null", forms[i]);
        json_decref(v);
    }
}

static void test_yaml11_booleans_in_every_case_load_as_booleans(void **state)
{
    (void)state;
    const char *yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    const char *no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    for (size_t i = 0; i < 9; i++) {
        json_t *t = scalar(yes[i]), *f = scalar(no[i]);
        if (!json_is_true(t) || !json_is_false(f))
            fail_msg("%s / %s should be true / false", yes[i], no[i]);
        json_decref(t);
        json_decref(f);
    }
}

static void test_other_spellings_of_booleans_stay_strings(void **state)
{
    (void)state;
    assert_string_scalar("tRUE", "tRUE");
    assert_string_scalar("y", "y");
    assert_string_scalar("n", "n");
    assert_string_scalar("yEs", "yEs");
}

static void test_decimal_hex_and_octal_integers(void **state)
{
    (void)state;
    assert_int_scalar("42", 42);
    assert_int_scalar("-7", -7);
    assert_int_scalar("+3", 3);
    assert_int_scalar("0", 0);
    assert_int_scalar("0x1F", 31);
    assert_int_scalar("0o17", 15);
    assert_int_scalar("017", 15);
    assert_int_scalar("0b101", 5);
    assert_int_scalar("1_000", 1000);
    assert_int_scalar("-9223372036854775808", INT64_MIN);
}

static void test_integer_past_64_bits_becomes_real(void **state)
{
    (void)state;
    assert_real_scalar("123456789012345678901234", 123456789012345678901234.0);
}

static void test_floats_load_as_reals(void **state)
{
    (void)state;
    assert_real_scalar("1.5", 1.5);
    assert_real_scalar("1e3", 1000.0);
    assert_real_scalar("-.5", -0.5);
    assert_real_scalar("1.0e+3", 1000.0);
    assert_real_scalar("2.", 2.0);
    assert_real_scalar("6.02E23", 6.02e23);
}

static void test_inf_and_nan_stay_strings(void **state)
{
    (void)state;
    assert_string_scalar(".inf", ".inf");
    assert_string_scalar("-.inf", "-.inf");
    assert_string_scalar(".nan", ".nan");
}

static void test_dates_and_other_number_lookalikes_stay_strings(void **state)
{
    (void)state;
    assert_string_scalar("2013-05-23", "2013-05-23");
    assert_string_scalar("1.2.3", "1.2.3");
    assert_string_scalar("08", "08");
    assert_string_scalar("0x", "0x");
    assert_string_scalar("12:30", "12:30");
    assert_string_scalar("1e", "1e");
}

static void test_quoted_scalars_are_strings(void **state)
{
    (void)state;
    assert_string_scalar("\"true\"", "true");
    assert_string_scalar("'42'", "42");
    assert_string_scalar("\"null\"", "null");
    assert_string_scalar("''", "");
}

static void test_explicit_tags_are_honoured(void **state)
{
    (void)state;
    assert_string_scalar("!!str 42", "42");
    assert_string_scalar("!!str true", "true");
    assert_int_scalar("!!int \"7\"", 7);
    assert_real_scalar("!!float 1", 1.0);
    json_t *b = scalar("!!bool \"yes\"");
    assert_true(json_is_true(b));
    json_decref(b);
    assert_string_scalar("! 42", "42");
}

static void test_tag_that_does_not_fit_the_value_is_an_error(void **state)
{
    (void)state;
    assert_rejected("v: !!int abc\n", "doc.yaml:1:4:");
    assert_contains(err, "!!int");
}

static void test_unknown_tag_is_an_error(void **state)
{
    (void)state;
    assert_rejected("v: !Ref thing\n", "unsupported tag \"!Ref\"");
}

static void test_block_scalars_keep_their_text(void **state)
{
    (void)state;
    json_t *root = load("script: |\n  echo 1\n  echo 2\nfolded: >\n  one\n  two\n");
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "script")), "echo 1\necho 2\n");
    assert_string_equal(json_string_value(json_object_get(root, "folded")), "one two\n");
    json_decref(root);
}

static void test_json_text_loads_as_json(void **state)
{
    (void)state;
    json_t *root = load("{\"a\": [1, 2.5, \"x\", true, null], \"b\": {\"c\": 1e3}}");
    json_t *expected =
        json_loads("{\"a\": [1, 2.5, \"x\", true, null], \"b\": {\"c\": 1000.0}}", 0, NULL);
    assert_non_null(root);
    assert_true(json_equal(root, expected));
    json_decref(root);
    json_decref(expected);
}

static void test_keys_are_strings_whatever_they_look_like(void **state)
{
    (void)state;
    json_t *root = load("1: a\ntrue: b\n~: c\n");
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "1")), "a");
    assert_string_equal(json_string_value(json_object_get(root, "true")), "b");
    assert_string_equal(json_string_value(json_object_get(root, "~")), "c");
    json_decref(root);
}

static void test_mapping_keys_keep_document_order(void **state)
{
    (void)state;
    json_t *root = load("zeta: 1\nalpha: 2\nmid: 3\n");
    const char *expected[] = {"zeta", "alpha", "mid"}, *key;
    json_t *v;
    size_t i = 0;
    json_object_foreach(root, key, v)
    {
        assert_string_equal(key, expected[i++]);
    }
    assert_int_equal(i, 3);
    json_decref(root);
}

/* ---------------------------------------------------------------- errors */

static void test_syntax_error_names_file_line_and_column(void **state)
{
    (void)state;
    assert_rejected("a: 1\nb: [1, 2\nc: 3\n", "doc.yaml:");
    /* The unclosed flow sequence is found on a later line, never line 1. */
    assert_true(strncmp(err, "doc.yaml:1:", 11) != 0);
    json_t *root = load("a:\n  b: 1\n c: 2\n");
    assert_null(root);
    assert_contains(err, "doc.yaml:3:");
}

static void test_duplicate_key_is_reported_with_the_key_and_its_line(void **state)
{
    (void)state;
    assert_rejected("a: 1\nb: 2\na: 3\n", "doc.yaml:3:1: duplicate key \"a\"");
}

static void test_duplicate_key_in_nested_map_is_reported(void **state)
{
    (void)state;
    assert_rejected("top:\n  x: 1\n  x: 2\n", "doc.yaml:3:3: duplicate key \"x\"");
}

static void test_empty_document_is_an_error(void **state)
{
    (void)state;
    assert_rejected("", "doc.yaml: empty document");
    assert_rejected("# only a comment\n\n", "doc.yaml: empty document");
    assert_rejected("---\n", "doc.yaml: empty document");
}

static void test_explicit_null_document_is_null(void **state)
{
    (void)state;
    json_t *root = load("~\n");
    assert_true(json_is_null(root));
    json_decref(root);
}

static void test_several_documents_are_rejected(void **state)
{
    (void)state;
    assert_rejected("a: 1\n---\nb: 2\n", "single document");
}

static void test_collection_as_key_is_rejected(void **state)
{
    (void)state;
    assert_rejected("? [a, b]\n: c\n", "mapping keys must be scalars");
}

static void test_deep_nesting_is_rejected(void **state)
{
    (void)state;
    char doc[1200];
    memset(doc, '[', 600);
    memset(doc + 600, ']', 600);
    doc[sizeof(doc) - 1] = '\0';
    doc[599] = '1';
    doc[600] = ']';
    json_t *root = cv_yaml_load(doc, 1199, "deep.yaml", err, sizeof(err));
    assert_null(root);
    assert_contains(err, "nesting deeper than 256");
}

static void test_nesting_within_the_limit_loads(void **state)
{
    (void)state;
    char doc[512];
    memset(doc, '[', 200);
    memset(doc + 200, ']', 200);
    doc[400] = '\0';
    json_t *root = load(doc);
    assert_non_null(root);
    json_decref(root);
}

/* ---------------------------------------------------------------- aliases */

static void test_alias_copies_the_anchored_value(void **state)
{
    (void)state;
    json_t *root = load("base: &b {x: 1, y: [2, 3]}\ncopy: *b\nname: &n hello\nagain: *n\n");
    assert_non_null(root);
    assert_true(json_equal(json_object_get(root, "base"), json_object_get(root, "copy")));
    /* A copy, not a shared node: changing one leaves the other alone. */
    assert_ptr_not_equal(json_object_get(root, "base"), json_object_get(root, "copy"));
    assert_string_equal(json_string_value(json_object_get(root, "again")), "hello");
    json_decref(root);
}

static void test_merge_key_merges_and_explicit_keys_win(void **state)
{
    (void)state;
    json_t *root = load("base: &b {x: 1, y: 2}\nchild:\n  y: 20\n  <<: *b\n  z: 3\n");
    assert_non_null(root);
    json_t *child = json_object_get(root, "child");
    assert_int_equal(json_integer_value(json_object_get(child, "x")), 1);
    assert_int_equal(json_integer_value(json_object_get(child, "y")), 20);
    assert_int_equal(json_integer_value(json_object_get(child, "z")), 3);
    assert_null(json_object_get(child, "<<"));
    json_decref(root);
}

static void test_merge_of_a_scalar_is_rejected(void **state)
{
    (void)state;
    assert_rejected("a: &s text\nb:\n  <<: *s\n", "merge key");
}

static void test_unknown_alias_is_an_error(void **state)
{
    (void)state;
    assert_rejected("a: *nowhere\n", "doc.yaml:1:4: unknown anchor \"nowhere\"");
}

static void test_alias_bomb_is_rejected(void **state)
{
    (void)state;
    const char *bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                       "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                       "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                       "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                       "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
    assert_rejected(bomb, "more than 1000000 nodes");
}

/* ---------------------------------------------------------------- garbage */

static void test_binary_garbage_is_rejected_without_crashing(void **state)
{
    (void)state;
    const char nul[] = "a: 1\n\0b: 2\n";
    assert_null(cv_yaml_load(nul, sizeof(nul) - 1, "bin.yaml", err, sizeof(err)));
    assert_contains(err, "bin.yaml:2:1:");
    const char bad_utf8[] = "a: \xff\xfe\n";
    assert_null(cv_yaml_load(bad_utf8, sizeof(bad_utf8) - 1, "bin.yaml", err, sizeof(err)));
    assert_contains(err, "bin.yaml:1:");
}

/* A fixed-seed generator: the same mutations on every run. */
static uint32_t next_random(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void test_mutated_documents_never_crash(void **state)
{
    (void)state;
    const char *seed_doc = "heat_template_version: 2018-08-31\n"
                           "parameters:\n  n: {type: number, default: 3}\n"
                           "resources:\n  r: &r\n    type: OS::Heat::None\n"
                           "    properties: {a: [1, \"two\", {b: *r}], c: 'x'}\n";
    const char alphabet[] = "{}[]:,-&*!|>'\"#\n \t\\\x00\xff\xc3";
    uint32_t s = 0x2545F491;
    size_t len = strlen(seed_doc);
    char *doc = malloc(len + 1);
    for (int round = 0; round < 3000; round++) {
        memcpy(doc, seed_doc, len + 1);
        for (int k = 0; k < 1 + round % 7; k++)
            doc[next_random(&s) % len] = alphabet[next_random(&s) % (sizeof(alphabet) - 1)];
        json_decref(cv_yaml_load(doc, len, "fuzz.yaml", err, sizeof(err)));
    }
    free(doc);
}

static void test_error_buffer_may_be_absent(void **state)
{
    (void)state;
    assert_null(cv_yaml_load("a: [", 4, "x.yaml", NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_null_forms_load_as_null),
        cmocka_unit_test(test_yaml11_booleans_in_every_case_load_as_booleans),
        cmocka_unit_test(test_other_spellings_of_booleans_stay_strings),
        cmocka_unit_test(test_decimal_hex_and_octal_integers),
        cmocka_unit_test(test_integer_past_64_bits_becomes_real),
        cmocka_unit_test(test_floats_load_as_reals),
        cmocka_unit_test(test_inf_and_nan_stay_strings),
        cmocka_unit_test(test_dates_and_other_number_lookalikes_stay_strings),
        cmocka_unit_test(test_quoted_scalars_are_strings),
        cmocka_unit_test(test_explicit_tags_are_honoured),
        cmocka_unit_test(test_tag_that_does_not_fit_the_value_is_an_error),
        cmocka_unit_test(test_unknown_tag_is_an_error),
        cmocka_unit_test(test_block_scalars_keep_their_text),
        cmocka_unit_test(test_json_text_loads_as_json),
        cmocka_unit_test(test_keys_are_strings_whatever_they_look_like),
        cmocka_unit_test(test_mapping_keys_keep_document_order),
        cmocka_unit_test(test_syntax_error_names_file_line_and_column),
        cmocka_unit_test(test_duplicate_key_is_reported_with_the_key_and_its_line),
        cmocka_unit_test(test_duplicate_key_in_nested_map_is_reported),
        cmocka_unit_test(test_empty_document_is_an_error),
        cmocka_unit_test(test_explicit_null_document_is_null),
        cmocka_unit_test(test_several_documents_are_rejected),
        cmocka_unit_test(test_collection_as_key_is_rejected),
        cmocka_unit_test(test_deep_nesting_is_rejected),
        cmocka_unit_test(test_nesting_within_the_limit_loads),
        cmocka_unit_test(test_alias_copies_the_anchored_value),
        cmocka_unit_test(test_merge_key_merges_and_explicit_keys_win),
        cmocka_unit_test(test_merge_of_a_scalar_is_rejected),
        cmocka_unit_test(test_unknown_alias_is_an_error),
        cmocka_unit_test(test_alias_bomb_is_rejected),
        cmocka_unit_test(test_binary_garbage_is_rejected_without_crashing),
        cmocka_unit_test(test_mutated_documents_never_crash),
        cmocka_unit_test(test_error_buffer_may_be_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
