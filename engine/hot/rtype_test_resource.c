/*
 * OS::Heat::TestResource — a resource that stores a string, with knobs to
 * make it slow (wait_secs, action_wait_secs) or fail (fail), as Heat's
 * functional tests use it.
 *
 * An action never sleeps: create / update / delete record in st->data the
 * wait that applies ({"wait": secs, "fail": bool}); observe() answers
 * IN_PROGRESS until action_started + wait, then COMPLETE or, for a create or
 * update with `fail`, FAILED with Heat's message. A negative wait is Heat's
 * "wait forever", which only an update (or a delete) ends.
 *
 * client_name, entity_name, attr_wait_secs and constraint_prop_secs are
 * accepted for template compatibility and have no effect here.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

/* How far past its end a finite wait is over (see test_resource_observe). */
#define WAIT_MARGIN_SECS 0.001

/* How often an infinite wait is looked at again: often enough that a stack
 * fixed by an update is seen quickly, rarely enough to cost nothing. */
#define INFINITE_WAIT_RECHECK_SECS 30.0

static const cv_prop_schema_t test_resource_props[] = {
    {"value", CV_PROP_STRING, false, "\"test_string\"", true},
    {"update_replace", CV_PROP_BOOLEAN, false, "false", true},
    {"fail", CV_PROP_BOOLEAN, false, "false", true},
    {"client_name", CV_PROP_STRING, false, "\"\"", true},
    {"entity_name", CV_PROP_STRING, false, "\"\"", true},
    {"wait_secs", CV_PROP_NUMBER, false, "0", true},
    {"action_wait_secs", CV_PROP_MAP, false, NULL, true},
    {"attr_wait_secs", CV_PROP_NUMBER, false, "0", true},
    {"constraint_prop_secs", CV_PROP_NUMBER, false, "0", true},
    {"update_replace_value", CV_PROP_STRING, false, NULL, false},
};

static const char *const test_resource_attrs[] = {"output", NULL};

static const char *const action_keys[] = {"create", "update", "delete"};

static int validate_action_wait(const json_t *waits, const char *where, char *errstr,
                                size_t errstr_size)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)waits, key, v)
    {
        if (strcmp(key, "create") && strcmp(key, "update") && strcmp(key, "delete"))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.action_wait_secs.%s: unknown key (expected create, update "
                             "or delete)",
                             where, key);
        if (cv_is_intrinsic(v))
            continue;
        json_t *n = cv__rtype_coerce(CV_PROP_NUMBER, v);
        if (!n) {
            char got[128];
            cv__rtype_describe(v, got, sizeof(got));
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.action_wait_secs.%s: expected number, got %s", where, key, got);
        }
        json_decref(n);
    }
    return 0;
}

static int test_resource_validate(const json_t *props, const char *where, char *errstr,
                                  size_t errstr_size)
{
    const json_t *waits = json_object_get(props, "action_wait_secs");
    if (json_is_object(waits) && !cv_is_intrinsic(waits))
        return validate_action_wait(waits, where, errstr, errstr_size);
    return 0;
}

/* action_wait_secs[action] when given, else wait_secs, as Heat's _wait_secs(). */
static double action_wait(const json_t *props, cv_action_t action)
{
    const json_t *waits = json_object_get(props, "action_wait_secs");
    json_t *n = cv__rtype_coerce(CV_PROP_NUMBER, json_object_get(waits, action_keys[action]));
    if (!n)
        n = cv__rtype_coerce(CV_PROP_NUMBER, json_object_get(props, "wait_secs"));
    double secs = n ? json_number_value(n) : 0;
    json_decref(n);
    return secs;
}

static int record_action(cv_rstate_t *st, cv_action_t action)
{
    const json_t *fail = json_object_get(st->props, "fail");
    if (json_object_set_new(st->data, "wait", json_real(action_wait(st->props, action))) ||
        json_object_set_new(st->data, "fail", json_boolean(json_is_true(fail))))
        return CV_ENOMEM;
    return 0;
}

static int store_output(cv_rstate_t *st)
{
    const json_t *value = json_object_get(st->props, "value");
    json_t *output = json_is_string(value) ? json_deep_copy(value) : json_string("test_string");
    return json_object_set_new(st->attrs, "output", output) ? CV_ENOMEM : 0;
}

static int test_resource_create(cv_rstate_t *st)
{
    cv__rtype_set_physical_id(st);
    int rc = record_action(st, CV_ACTION_CREATE);
    return rc ? rc : store_output(st);
}

static int test_resource_update(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        cv__rtype_set_physical_id(st);
    int rc = record_action(st, CV_ACTION_UPDATE);
    return rc ? rc : store_output(st);
}

static int test_resource_remove(cv_rstate_t *st)
{
    return record_action(st, CV_ACTION_DELETE);
}

/* Heat fails create and update but lets delete succeed, so that a stack
 * made to fail can still be deleted. */
static cv_observed_t test_resource_observe(cv_rstate_t *st, cv_action_t action)
{
    double wait = cv__rtype_data_number(st->data, "wait", 0);
    if (wait < 0) {
        st->retry_at = st->now + INFINITE_WAIT_RECHECK_SECS;
        return CV_OBSERVED_IN_PROGRESS;
    }
    /* A wait of N seconds ends strictly after N: events carry milliseconds,
     * and IN_PROGRESS to COMPLETE must show more than N, never exactly N. */
    double over = wait > 0 ? st->action_started + wait + WAIT_MARGIN_SECS : 0;
    if (st->now <= over) {
        st->retry_at = over + WAIT_MARGIN_SECS;
        return CV_OBSERVED_IN_PROGRESS;
    }
    if (action != CV_ACTION_DELETE && cv__rtype_data_bool(st->data, "fail")) {
        snprintf(st->reason, sizeof(st->reason),
                 "ValueError: resources.%s: Test Resource failed %s", st->resource_name,
                 st->resource_name);
        return CV_OBSERVED_FAILED;
    }
    return CV_OBSERVED_COMPLETE;
}

/* Heat replaces a TestResource whose update_replace is set when anything
 * else changes with it. */
static bool needs_replacement(const json_t *old_props, const json_t *new_props)
{
    if (!json_is_true(json_object_get(new_props, "update_replace")))
        return false;
    return cv__rtype_props_differ(&cv__rtype_test_resource, old_props, new_props, false);
}

const cv_rtype_t cv__rtype_test_resource = {
    .name = "OS::Heat::TestResource",
    .props = test_resource_props,
    .nprops = sizeof(test_resource_props) / sizeof(test_resource_props[0]),
    .attrs = test_resource_attrs,
    .validate = test_resource_validate,
    .create = test_resource_create,
    .update = test_resource_update,
    .remove = test_resource_remove,
    .observe = test_resource_observe,
    .needs_replacement = needs_replacement,
};
