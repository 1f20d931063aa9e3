/*
 * Test helpers shared by the tests of the functions that build values
 * (str_split, list_concat, map_merge...): resolving an expression written
 * as JSON with given parameters, and validating a template whose output
 * "o" holds an expression, at a chosen heat_template_version.
 */
#ifndef CV_TEST_INTRINSIC_FIXTURE_H
#define CV_TEST_INTRINSIC_FIXTURE_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cv_template.h"
#include "test_util.h"

/* Include after <cmocka.h>: the helpers fail through it. */

static char err[1024];

static inline json_t *resolve_with(const char *expr_json, json_t *params)
{
    json_error_t jerr;
    json_t *expr = json_loads(expr_json, JSON_DECODE_ANY, &jerr);
    if (!expr)
        fail_msg("bad test expression %s: %s", expr_json, jerr.text);
    cv_resolve_ctx_t ctx = {.parameters = params};
    err[0] = '\0';
    json_t *out = cv_intrinsic_resolve(expr, &ctx, "outputs.o.value", err, sizeof(err));
    json_decref(expr);
    return out;
}

static inline void assert_resolves(const char *expr_json, const char *expected_json)
{
    json_t *params = json_object();
    json_t *got = resolve_with(expr_json, params);
    json_decref(params);
    if (!got)
        fail_msg("%s failed: %s", expr_json, err);
    json_t *want = json_loads(expected_json, JSON_DECODE_ANY, NULL);
    if (!json_equal(got, want)) {
        char *s = json_dumps(got, JSON_ENCODE_ANY);
        fail_msg("%s gave %s, expected %s", expr_json, s, expected_json);
    }
    json_decref(got);
    json_decref(want);
}

static inline void assert_fails(const char *expr_json, const char *fragment)
{
    json_t *params = json_object();
    json_t *got = resolve_with(expr_json, params);
    json_decref(params);
    if (got)
        fail_msg("%s resolved", expr_json);
    assert_contains(err, "outputs.o.value: ");
    assert_contains(err, fragment);
}

/* Fails with exactly `message` (Heat's text) after the location. */
static inline void assert_fails_with(const char *expr_json, const char *message)
{
    char want[1024];
    json_t *params = json_object();
    json_t *got = resolve_with(expr_json, params);
    json_decref(params);
    if (got)
        fail_msg("%s resolved", expr_json);
    snprintf(want, sizeof(want), "outputs.o.value: %s", message);
    size_t n = strlen(err), m = strlen(want);
    if (n < m || strcmp(err + n - m, want) != 0)
        fail_msg("error \"%s\" does not end with \"%s\"", err, want);
}

/* Parses a template (parameters p: 'a,b' and m: {a: b}, resource r) whose output "o" has the value
 * `value` (YAML). */
static inline int parse_output(const char *version, const char *value)
{
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "heat_template_version: %s\nparameters:\n  p: {type: string, default: 'a,b'}\n"
             "  m: {type: json, default: {a: b}}\n"
             "resources:\n  r: {type: OS::Heat::None}\noutputs:\n  o:\n    value: %s\n",
             version, value);
    cv_template_t *tpl = NULL;
    err[0] = '\0';
    int rc = cv_template_parse(doc, strlen(doc), "stack.yaml", NULL, &tpl, err, sizeof(err));
    cv_template_free(tpl);
    return rc;
}

static inline void accept_output(const char *version, const char *value)
{
    if (parse_output(version, value) != 0)
        fail_msg("%s rejected: %s", value, err);
}

static inline void reject_output(const char *version, const char *value, const char *fragment)
{
    if (parse_output(version, value) == 0)
        fail_msg("%s accepted", value);
    assert_contains(err, "stack.yaml: outputs.o.value: ");
    assert_contains(err, fragment);
}

/* Rejected with exactly `message` (Heat's text) after the location. */
static inline void reject_output_with(const char *version, const char *value, const char *message)
{
    char want[1024];
    if (parse_output(version, value) == 0)
        fail_msg("%s accepted", value);
    snprintf(want, sizeof(want), "stack.yaml: outputs.o.value: %s", message);
    assert_string_equal(err, want);
}

/* Parses the template of parse_output and resolves its output "o" as the
 * engine does; fails unless the value equals `expected_json`. For a
 * function the version's table lacks: Heat passes the one-key map through
 * as plain data. */
static inline void assert_output_is(const char *version, const char *value,
                                    const char *expected_json)
{
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "heat_template_version: %s\nparameters:\n  p: {type: string, default: 'a,b'}\n"
             "  m: {type: json, default: {a: b}}\n"
             "resources:\n  r: {type: OS::Heat::None}\noutputs:\n  o:\n    value: %s\n",
             version, value);
    cv_template_t *tpl = NULL;
    err[0] = '\0';
    if (cv_template_parse(doc, strlen(doc), "stack.yaml", NULL, &tpl, err, sizeof(err)) != 0)
        fail_msg("%s in %s rejected: %s", value, version, err);
    cv_resolve_ctx_t ctx = {.parameters = tpl->parameters};
    json_t *got = cv_intrinsic_resolve(json_object_get(json_object_get(tpl->outputs, "o"), "value"),
                                       &ctx, "outputs.o.value", err, sizeof(err));
    cv_template_free(tpl);
    if (!got)
        fail_msg("%s in %s failed: %s", value, version, err);
    json_t *want = tu_json(expected_json);
    if (!json_equal(got, want)) {
        char *s = json_dumps(got, JSON_ENCODE_ANY | JSON_SORT_KEYS);
        fail_msg("%s in %s gave %s, expected %s", value, version, s, expected_json);
    }
    json_decref(got);
    json_decref(want);
}

#endif
