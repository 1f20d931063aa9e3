/*
 * The fixture of the step machines' tests (cv_flow.h): replies written as
 * JSON (a string, an integer, an array, null; {"error": "..."} an error
 * reply), fed to a machine as its last answer's result, and readers of an
 * answer's commands and messages. Include after <cmocka.h>.
 */
#ifndef CV_TEST_FLOW_FIXTURE_H
#define CV_TEST_FLOW_FIXTURE_H

#include "cv_flow.h"
#include "cv_resp.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define TF_NOW 1700000000.0

static inline void tf_measure(const json_t *v, size_t *nodes, size_t *text)
{
    (*nodes)++;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            tf_measure(json_array_get(v, i), nodes, text);
    } else if (json_is_string(v)) {
        *text += json_string_length(v) + 1;
    } else if (json_is_object(v)) {
        *text += strlen(json_string_value(json_object_get(v, "error"))) + 1;
    }
}

static inline void tf_fill(cv_resp_t *r, const json_t *v, cv_resp_t **next, char **text)
{
    memset(r, 0, sizeof(*r));
    const char *s = NULL;
    if (json_is_array(v)) {
        r->type = CV_RESP_ARRAY;
        r->elements = json_array_size(v);
        r->element = *next;
        *next += r->elements;
        for (size_t i = 0; i < r->elements; i++)
            tf_fill((cv_resp_t *)&r->element[i], json_array_get(v, i), next, text);
        return;
    }
    if (json_is_integer(v)) {
        r->type = CV_RESP_INTEGER;
        r->integer = json_integer_value(v);
        return;
    }
    if (json_is_null(v))
        return; /* CV_RESP_NIL */
    r->type = json_is_string(v) ? CV_RESP_STRING : CV_RESP_ERROR;
    s = json_is_string(v) ? json_string_value(v) : json_string_value(json_object_get(v, "error"));
    r->len = strlen(s);
    memcpy(*text, s, r->len + 1);
    r->str = *text;
    *text += r->len + 1;
}

/* A reply from a JSON value (taken); free() it. */
static inline cv_resp_t *tf_resp_of(json_t *v)
{
    size_t nodes = 0, text = 0;
    tf_measure(v, &nodes, &text);
    cv_resp_t *r = malloc(nodes * sizeof(*r) + text);
    cv_resp_t *next = r + 1;
    char *strings = (char *)(r + nodes);
    tf_fill(r, v, &next, &strings);
    json_decref(v);
    return r;
}

static inline cv_resp_t *tf_resp(const char *json_text)
{
    return tf_resp_of(tu_json(json_text));
}

/* What an answer returned: replies (each may be NULL), published. */
static inline cv_flow_in_t tf_in(const cv_resp_t *const *replies, size_t n, int published)
{
    return (cv_flow_in_t){.now = TF_NOW, .replies = replies, .nreplies = n, .published = published};
}

/* The script call of an answer's command i (fails the test for none). */
static inline const cv_call_t *tf_call(const cv_flow_t *a, size_t i)
{
    if (i >= a->ncmds || !a->cmds[i].call)
        fail_msg("command %zu of the answer is no script call", i);
    return a->cmds[i].call;
}

/* Argument `name` of call c, by the row's argument names. */
static inline const char *tf_arg(const cv_call_t *c, const char *name)
{
    for (size_t i = 0; i < cv_script_nargs(c->script); i++)
        if (strcmp(cv_script_arg_name(c->script, i), name) == 0)
            return c->args[i] ? c->args[i] : "";
    fail_msg("%s has no argument %s", cv_script_name(c->script), name);
    return NULL;
}

/* Whether the answer sends plain command `verb` (SREM, SADD, ...). */
static inline bool tf_sends(const cv_flow_t *a, const char *verb)
{
    for (size_t i = 0; i < a->ncmds; i++)
        if (!a->cmds[i].call && strcmp(a->cmds[i].argv[0], verb) == 0)
            return true;
    return false;
}

/* Whether one of the answer's lines contains `text`. */
static inline bool tf_logged(const cv_flow_t *a, const char *text)
{
    for (size_t i = 0; i < a->nlogs; i++)
        if (strstr(a->logs[i].text, text))
            return true;
    return false;
}

#endif
