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
    char path[512], err[512];
    static char buf[1 << 16];
    snprintf(path, sizeof(path), "%s/placement/%s", CV_TEST_DATA, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    json_t *doc = cv_yaml_load(buf, n, name, err, sizeof(err));
    if (!doc)
        fail_msg("%s", err);
    return doc;
}

#endif
