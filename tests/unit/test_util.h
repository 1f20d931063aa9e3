/*
 * Helpers shared by the unit tests: substring assertions, JSON written in
 * the test, and files read from tests/data. Include after <cmocka.h>.
 * Never linked into the library.
 */
#ifndef CV_TEST_UTIL_H
#define CV_TEST_UTIL_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));                           \
    } while (0)

/* Parses JSON text (any value, not only arrays and objects); a text that is
 * not JSON is a mistake in the test and fails it. */
static inline json_t *tu_json(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v)
        fail_msg("bad JSON in test: %s", text);
    return v;
}

/* Reads tests/data/DIR/NAME into a new NUL-terminated buffer of *len bytes
 * (the caller frees it); a missing file fails the test. */
static inline char *tu_read_data(const char *dir, const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s/%s", CV_TEST_DATA, dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    *len = fread(text, 1, (size_t)size, f);
    text[*len] = '\0';
    fclose(f);
    return text;
}

#endif
