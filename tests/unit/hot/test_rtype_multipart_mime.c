/*
 * Specification of OS::Heat::MultipartMime: the config attribute is the
 * text Python's email package writes for Heat's MIMEMultipart (the expected
 * texts in tests/data/config_types were written by Python with the boundary
 * "BOUNDARY"); the boundary is Python's form, drawn from the version's uuid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_rtype_config.h"

#include <regex.h>
#include <stdlib.h>

/* `text` with every occurrence of `from` replaced by `to`; malloc'ed. */
static char *replace_all(const char *text, const char *from, const char *to)
{
    size_t n = strlen(from), m = strlen(to), count = 0;
    for (const char *p = strstr(text, from); p; p = strstr(p + n, from))
        count++;
    char *out = malloc(strlen(text) + count * m + 1), *w = out;
    for (const char *p = text, *hit; (hit = strstr(p, from)) != NULL || *p; p = hit + n) {
        if (!hit) {
            strcpy(w, p);
            return out;
        }
        memcpy(w, p, (size_t)(hit - p));
        w += hit - p;
        memcpy(w, to, m);
        w += m;
    }
    *w = '\0';
    return out;
}

/* The boundary of a message: Python's "=" * 15, 19 digits, "==". */
static char *boundary_of(const char *message)
{
    regex_t re;
    regmatch_t m[2];
    assert_int_equal(regcomp(&re, "boundary=\"(={15}[0-9]{19}==)\"", REG_EXTENDED), 0);
    if (regexec(&re, message, 2, m, 0) != 0)
        fail_msg("no Python boundary in:\n%s", message);
    regfree(&re);
    return strndup(message + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
}

static void test_config_is_the_message_python_writes(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type("OS::Heat::MultipartMime");
    size_t n;
    char *text = tu_read_data("config_types", "multipart_mime_cases.json", &n);
    json_t *cases = json_loadb(text, n, 0, NULL);
    free(text);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        json_t *props = json_pack("{s:O}", "parts", json_object_get(c, "parts"));
        json_t *got = tr_create_attr(t, props, "config");
        char *boundary = boundary_of(json_string_value(got));
        char *normal = replace_all(json_string_value(got), boundary, "BOUNDARY");
        const char *want = json_string_value(json_object_get(c, "config"));
        if (strcmp(normal, want) != 0)
            fail_msg("case %zu:\n--- want\n%s--- got\n%s", i, want, normal);
        free(normal);
        free(boundary);
        json_decref(got);
        json_decref(props);
    }
    json_decref(cases);
}

static void test_the_same_version_writes_the_same_boundary(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type("OS::Heat::MultipartMime");
    json_t *props = tu_json("{\"parts\": [{\"config\": \"a\"}]}");
    json_t *a = tr_create_attr(t, props, "config"), *b = tr_create_attr(t, props, "config");
    assert_string_equal(json_string_value(a), json_string_value(b));
    json_decref(a);
    json_decref(b);
    json_decref(props);
}

static void test_parts_are_checked_as_heat(void **state)
{
    (void)state;
    const cv_rtype_t *t = tr_type("OS::Heat::MultipartMime");
    char err[1024];
    tr_validate(t, "{\"parts\": [{\"config\": \"a\", \"type\": \"text\", \"subtype\": \"x\"}]}",
                err, sizeof(err));
    assert_string_equal(err, "");
    tr_validate(t, "{\"parts\": [{\"filename\": \"a\"}]}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.parts[0]: Property config not assigned");
    tr_validate(t, "{\"parts\": [{\"config\": \"a\", \"type\": \"html\"}]}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.parts[0].type: \"html\" is not an allowed "
                             "value [\"text\", \"multipart\"]");
    tr_validate(t, "{\"parts\": [{\"config\": \"a\", \"name\": \"b\"}]}", err, sizeof(err));
    assert_string_equal(err, "resources.r.properties.parts[0]: Unknown Property name");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_is_the_message_python_writes),
        cmocka_unit_test(test_the_same_version_writes_the_same_boundary),
        cmocka_unit_test(test_parts_are_checked_as_heat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
