/*
 * Helpers for the unit tests of the resource types: run a type's operation
 * on properties written in the test, as the engine hands them over (schema
 * applied), and read the result. Include after <cmocka.h>.
 */
#ifndef CV_TEST_RTYPE_CONFIG_H
#define CV_TEST_RTYPE_CONFIG_H

#include "cv_rtype.h"
#include "test_util.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define TR_UUID "fedcba98-7654-5321-8aaa-bbbbccccdddd"

/* The type called `name`; a missing one fails the test. */
static inline const cv_rtype_t *tr_type(const char *name)
{
    const cv_rtype_t *t = cv_rtype_find(name);
    if (!t)
        fail_msg("type %s is not registered", name);
    return t;
}

/* `props` with the type's schema applied; a refusal fails the test. */
static inline json_t *tr_props(const cv_rtype_t *t, const json_t *props)
{
    char err[1024] = "";
    json_t *applied =
        cv_rtype_apply_schema(t, props, "resources.r.properties", false, err, sizeof(err));
    if (!applied)
        fail_msg("%s refused the properties: %s", t->name, err);
    return applied;
}

/* The message of validating `props_json` (schema, then the type's rule), ""
 * when accepted. */
static inline void tr_validate(const cv_rtype_t *t, const char *props_json, char *errstr,
                               size_t errstr_size)
{
    errstr[0] = '\0';
    json_t *props = tu_json(props_json);
    json_t *applied =
        cv_rtype_apply_schema(t, props, "resources.r.properties", true, errstr, errstr_size);
    if (applied && t->validate &&
        t->validate(applied, "resources.r.properties", errstr, errstr_size) == 0)
        errstr[0] = '\0';
    json_decref(applied);
    json_decref(props);
}

/* A fresh state for resource "r" of stack "stk" with `props` (borrowed). */
static inline cv_rstate_t tr_state(const json_t *props, double now)
{
    cv_rstate_t st = {.stack_name = "stk",
                      .resource_name = "r",
                      .uuid = TR_UUID,
                      .props = props,
                      .now = now,
                      .action_started = now,
                      .data = json_object(),
                      .attrs = json_object()};
    return st;
}

static inline void tr_state_clear(cv_rstate_t *st)
{
    json_decref(st->data);
    json_decref(st->attrs);
}

/* Creates a resource of type `t` from `props` and returns its `attr`
 * attribute (a new reference); the create must complete at once. */
static inline json_t *tr_create_attr(const cv_rtype_t *t, const json_t *props, const char *attr)
{
    json_t *applied = tr_props(t, props);
    cv_rstate_t st = tr_state(applied, 100);
    if (t->create(&st) != 0)
        fail_msg("%s create failed: %s", t->name, st.reason);
    assert_int_equal(t->observe(&st, CV_ACTION_CREATE), CV_OBSERVED_COMPLETE);
    assert_string_equal(st.physical_id, "stk-r-fedcba98-765");
    json_t *v = json_incref(json_object_get(st.attrs, attr));
    tr_state_clear(&st);
    json_decref(applied);
    return v;
}

#endif
