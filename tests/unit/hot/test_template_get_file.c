/*
 * get_file as Heat defines it (hot/functions.py GetFile): the text the
 * stack's files hold under the key its argument names, not scanned for
 * functions; Heat's errors for a computed argument and a missing file.
 * Cases are Heat's own (heat/tests/test_hot.py test_get_file*).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cv_template.h"
#include "test_util.h"

static char err[1024];

/* Parses a template whose resource r (OS::Heat::Value) has value `value`
 * and whose output o is `value` too, with `files` (JSON text). */
static int parse(const char *version, const char *value, const char *files, cv_template_t **tpl)
{
    char doc[1024];
    snprintf(doc, sizeof(doc),
             "heat_template_version: %s\n"
             "resources:\n  r: {type: OS::Heat::Value, properties: {value: %s}}\n"
             "outputs:\n  o: {value: %s}\n",
             version, value, value);
    char e[512];
    json_t *root = cv_yaml_load(doc, strlen(doc), "t.yaml", e, sizeof(e));
    assert_non_null(root);
    json_t *f = tu_json(files);
    cv_tpl_opts_t opts = {.files = f};
    err[0] = '\0';
    int rc = cv_template_from_json_opts(root, "t.yaml", NULL, &opts, tpl, err, sizeof(err));
    json_decref(root);
    json_decref(f);
    return rc;
}

static void test_get_file_gives_the_text_of_the_file(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_equal(parse("2013-05-23", "{get_file: foo.yaml}",
                           "{\"foo.yaml\": \"foo contents\", \"bar.yaml\": \"bar\"}", &tpl),
                     0);
    const json_t *props = cv_template_resource(tpl, "r")->properties;
    assert_string_equal(json_string_value(json_object_get(props, "value")), "foo contents");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(tpl->outputs, "o"), "value")),
        "foo contents");
    cv_template_free(tpl);
}

/* Heat's test_get_file_nested_does_not_resolve. */
static void test_the_text_is_not_scanned_for_functions(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_equal(
        parse("2018-08-31", "{get_file: foo.yaml}",
              "{\"foo.yaml\": \"{get_file: bar.yaml}\", \"bar.yaml\": \"bar content\"}", &tpl),
        0);
    const json_t *props = cv_template_resource(tpl, "r")->properties;
    assert_string_equal(json_string_value(json_object_get(props, "value")), "{get_file: bar.yaml}");
    cv_template_free(tpl);
}

/* Heat's test_get_file_not_string. */
static void test_a_non_string_argument_is_refused(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_not_equal(parse("2018-08-31", "{get_file: [foo.yaml]}", "{}", &tpl), 0);
    assert_string_equal(err,
                        "t.yaml: resources.r.properties.value: Argument to \"get_file\" must be "
                        "a string");
}

/* Heat's test_get_file_missing_files; a template file is not text. */
static void test_a_file_not_uploaded_is_refused(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_not_equal(
        parse("2018-08-31", "{get_file: foo.yaml}", "{\"bar.yaml\": \"bar contents\"}", &tpl), 0);
    assert_string_equal(err, "t.yaml: resources.r.properties.value: No content found in the "
                             "\"files\" section for get_file path: foo.yaml");
    assert_int_not_equal(
        parse("2018-08-31", "{get_file: foo.yaml}", "{\"foo.yaml\": {\"a\": 1}}", &tpl), 0);
    assert_contains(err, "No content found in the \"files\" section for get_file path: foo.yaml");
}

/* Inside other functions and only in the branch an `if` takes. */
static void test_get_file_inside_other_functions(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_equal(parse("2018-08-31",
                           "{str_replace: {template: {get_file: s.sh}, params: {$x: 1}}}",
                           "{\"s.sh\": \"echo $x\"}", &tpl),
                     0);
    const json_t *v = json_object_get(cv_template_resource(tpl, "r")->properties, "value");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(v, "str_replace"), "template")),
        "echo $x");
    cv_template_free(tpl);
    assert_int_equal(parse("2018-08-31", "{if: [false, {get_file: missing}, b]}", "{}", &tpl), 0);
    cv_template_free(tpl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_file_gives_the_text_of_the_file),
        cmocka_unit_test(test_the_text_is_not_scanned_for_functions),
        cmocka_unit_test(test_a_non_string_argument_is_refused),
        cmocka_unit_test(test_a_file_not_uploaded_is_refused),
        cmocka_unit_test(test_get_file_inside_other_functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
