/*
 * Test helpers shared by the placement loader and resource-type tests: JSON
 * written inline with ' for ", comparing against it, and fixtures read from
 * tests/data/placement (JSON or YAML).
 */
#ifndef CV_TEST_JSON_FIXTURE_H
#define CV_TEST_JSON_FIXTURE_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cv_template.h"
#include "test_util.h"

/* Parses JSON written with ' for " (any value, scalars included). */
static inline json_t *js(const char *single_quoted)
{
    char *text = strdup(single_quoted);
    for (char *p = text; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t e;
    json_t *doc = json_loads(text, JSON_DECODE_ANY, &e);
    if (!doc)
        fail_msg("bad test JSON: %s: %s", e.text, text);
    free(text);
    return doc;
}

/* Fails the test unless `got` equals the JSON written with ' for ". */
static inline void assert_json_sq(const json_t *got, const char *want_sq)
{
    json_t *want = js(want_sq);
    if (!json_equal((json_t *)got, want)) {
        char *g = got ? json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
        fail_msg("got %s, want %s", g ? g : "(null)", want_sq);
    }
    json_decref(want);
}

/* Reads tests/data/placement/NAME into a new tree; fails the test otherwise. */
static inline json_t *read_fixture(const char *name)
{
    char err[512];
    size_t n;
    char *text = tu_read_data("placement", name, &n);
    json_t *doc = cv_yaml_load(text, n, name, err, sizeof(err));
    free(text);
    if (!doc)
        fail_msg("%s", err);
    return doc;
}

#endif
