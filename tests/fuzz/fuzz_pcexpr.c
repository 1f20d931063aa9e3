/*
 * fuzz_pcexpr — the placement-constraint expression parser and evaluator
 * (scheduler/placement/cv_pcexpr.h) on arbitrary text.
 *
 * Besides never crashing, leaking or recursing without bound, an expression
 * that parses must obey the three-valued logic the header promises, on
 * nodes with and without its properties: E and !(E) never both match
 * (a missing property is "unknown", never true), and (E) && (E) and
 * (E) || (E) match exactly when E does.
 */
#include "cv_base.h"
#include "cv_placement.h"
#include "fuzz_util.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NNODES 4

static json_t *nodes[NNODES]; /* node properties; nodes[0] has none at all */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init(argc, argv);
    nodes[1] = json_pack("{s:b,s:s,s:i,s:s,s:f,s:s,s:s,s:s,s:n}", "HasSSD", 1, "NodeType", "Front",
                         "SomeProperty", 5, "NodeName", "n1", "Weight", 2.5, "Zone", "fd:/dc1",
                         "Count", "12", "Flag", "TRUE", "Null");
    nodes[2] =
        json_pack("{s:b,s:s,s:I,s:s,s:s,s:i}", "HasSSD", 0, "NodeType", "Back", "SomeProperty",
                  (json_int_t)INT64_MIN, "NodeName", "n2", "Count", "x", "Flag", 1);
    nodes[3] = json_pack("{s:s,s:s,s:i}", "HasSSD", "false", "SomeProperty", "4", "Weight", 3);
    return 0;
}

static void fail(const char *what, const char *text)
{
    fprintf(stderr, "fuzz_pcexpr: %s: \"%s\"\n", what, text);
    abort();
}

static bool matches(const cv_pcexpr_t *e, int node)
{
    return cv_pcexpr_match(e, nodes[node]);
}

/* Parses `fmt` with `text` in it; NULL when the result is nested too deep
 * (the only reason a valid expression stops parsing when wrapped). */
static cv_pcexpr_t *parse_wrapped(const char *fmt, const char *text)
{
    size_t size = strlen(fmt) + 2 * strlen(text) + 1;
    char *buf = malloc(size), err[256] = "";
    cv_pcexpr_t *e = NULL;
    if (!buf)
        return NULL;
    snprintf(buf, size, fmt, text, text);
    int rc = cv_pcexpr_parse(buf, &e, err, sizeof(err));
    if (rc != 0 && rc != CV_ETOOBIG)
        fail("a valid expression stops parsing when wrapped", buf);
    free(buf);
    return e;
}

static void check_logic(const cv_pcexpr_t *e, const char *text)
{
    cv_pcexpr_t *neg = parse_wrapped("!(%s)%.0s", text);
    cv_pcexpr_t *both = parse_wrapped("(%s) && (%s)", text);
    cv_pcexpr_t *either = parse_wrapped("(%s) || (%s)", text);
    for (int n = 0; n < NNODES; n++) {
        bool m = matches(e, n);
        if (neg && m && matches(neg, n))
            fail("E and !(E) both match", text);
        if (both && matches(both, n) != m)
            fail("(E) && (E) differs from E", text);
        if (either && matches(either, n) != m)
            fail("(E) || (E) differs from E", text);
    }
    cv_pcexpr_free(neg);
    cv_pcexpr_free(both);
    cv_pcexpr_free(either);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), err[256] = "";
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cv_pcexpr_t *e = NULL;
    int rc = cv_pcexpr_parse(text, &e, err, sizeof(err));
    if (rc != 0) {
        if ((rc != CV_EPARSE && rc != CV_ETOOBIG) || e || strncmp(err, "column ", 7) != 0)
            fail("refused without CV_EPARSE/CV_ETOOBIG and a column", text);
        free(text);
        return 0;
    }
    json_t *names = json_array();
    cv_pcexpr_properties(e, names);
    for (size_t i = 0; i < json_array_size(names); i++)
        if (!json_is_string(json_array_get(names, i)))
            fail("a property name that is not a string", text);
    json_decref(names);
    /* The empty expression matches everything but cannot be wrapped. */
    if (text[strspn(text, " \t\n\r")] != '\0')
        check_logic(e, text);
    cv_pcexpr_free(e);
    free(text);
    return 0;
}
