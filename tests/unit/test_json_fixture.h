/*
 * Test helpers shared by the placement loader tests: JSON written inline with
 * ' for ", and fixtures read from tests/data/placement (JSON or YAML).
 */
#ifndef CV_TEST_JSON_FIXTURE_H
#define CV_TEST_JSON_FIXTURE_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cv_template.h"
#include "test_util.h"

/* Parses JSON written with ' for ". */
static inline json_t *js(const char *single_quoted)
{
    char *text = strdup(single_quoted);
    for (char *p = text; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t e;
    json_t *doc = json_loads(text, 0, &e);
    if (!doc)
        fail_msg("bad test JSON: %s: %s", e.text, text);
    free(text);
    return doc;
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
