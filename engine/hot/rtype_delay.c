/*
 * OS::Heat::Delay — pauses for min_wait seconds plus a random jitter of up to
 * max_jitter * jitter_multiplier seconds during the listed actions (CREATE
 * by default; DELETE; SUSPEND and RESUME are accepted as in Heat and never
 * run here), so that dependency order inserts a delay anywhere in a stack.
 *
 * Never blocking: an action records its wait in data ("wait", seconds) and
 * observe() answers IN_PROGRESS until action_started + wait. As in Heat, the
 * resource has no physical resource: its physical id is empty and
 * get_resource of it gives its name (an adopted one's, external_id, gives
 * that id).
 *
 * A changed property replaces the Delay: Heat's Delay has no handle_update,
 * and Resource.handle_update, which it inherits, raises UpdateReplace for
 * any property diff (heat/engine/resource.py) even though the schema marks
 * the properties update_allowed. So the schema keeps Heat's flags (what
 * `validate` and the docs show) and needs_replacement says what the
 * missing handler does.
 *
 * The jitter is drawn from the version's uuid and the action, never from the
 * system's entropy, so an action retried after a crash waits the same time.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cv_prop_schema_t delay_props[] = {
    {"min_wait", CV_PROP_NUMBER, false, "0", true},
    {"max_jitter", CV_PROP_NUMBER, false, "0", true},
    {"jitter_multiplier", CV_PROP_NUMBER, false, "1.0", true},
    {"actions", CV_PROP_LIST, false, "[\"CREATE\"]", true},
};

static const char *const delay_attrs[] = {NULL};

static const char *const allowed_actions[] = {"CREATE", "DELETE", "SUSPEND", "RESUME"};

#define ALLOWED_ACTIONS "[\"CREATE\", \"DELETE\", \"SUSPEND\", \"RESUME\"]"

static bool allowed_action(const json_t *v)
{
    for (size_t i = 0; i < sizeof(allowed_actions) / sizeof(allowed_actions[0]); i++)
        if (json_is_string(v) && strcmp(json_string_value(v), allowed_actions[i]) == 0)
            return true;
    return false;
}

/* Heat's Range(min=0) message: "-1 is out of range (min: 0, max: None)". */
static int check_non_negative(const json_t *props, const char *name, const char *where,
                              char *errstr, size_t errstr_size)
{
    const json_t *v = json_object_get(props, name);
    if (!v || cv_is_intrinsic(v))
        return 0;
    json_t *n = cv__rtype_coerce(CV_PROP_NUMBER, v);
    double d = n ? json_number_value(n) : 0;
    int rc = 0;
    if (n && d < 0) {
        char num[64];
        cv_format_number(n, num, sizeof(num));
        rc = cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                       "%s.%s: %s is out of range (min: 0, max: None)", where, name, num);
    }
    json_decref(n);
    return rc;
}

static int delay_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    static const char *const numbers[] = {"min_wait", "max_jitter", "jitter_multiplier"};
    for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
        int rc = check_non_negative(props, numbers[i], where, errstr, errstr_size);
        if (rc)
            return rc;
    }
    const json_t *actions = json_object_get(props, "actions");
    if (!json_is_array(actions) || cv__rtype_contains_intrinsic(actions))
        return 0;
    size_t i;
    const json_t *a;
    json_array_foreach(actions, i, a)
    {
        if (allowed_action(a))
            continue;
        char *got = json_dumps(actions, JSON_ENCODE_ANY);
        int rc = cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                           "%s.actions: %s is not an allowed value " ALLOWED_ACTIONS, where,
                           got ? got : "?");
        free(got);
        return rc;
    }
    return 0;
}

static double number(const json_t *props, const char *name)
{
    json_t *n = cv__rtype_coerce(CV_PROP_NUMBER, json_object_get(props, name));
    double d = n ? json_number_value(n) : 0;
    json_decref(n);
    return d;
}

static bool delays(const json_t *props, const char *action)
{
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(props, "actions"), i, a)
    {
        if (json_is_string(a) && strcmp(json_string_value(a), action) == 0)
            return true;
    }
    return false;
}

/* A uniform draw in [0, 1) from the version's uuid and the action. */
static double draw(const char *uuid, const char *action)
{
    uint64_t h = cv_hash_more(cv_hash_more(cv_hash_str(uuid ? uuid : ""), "\xff"), action);
    return (double)(h >> 11) / 9007199254740992.0; /* 2^53 */
}

/* Heat's _wait_secs: min_wait + max_jitter * jitter_multiplier * random(). */
double cv__delay_wait_secs(const json_t *props, const char *uuid, const char *action)
{
    if (!delays(props, action))
        return 0;
    double jitter = number(props, "max_jitter") * number(props, "jitter_multiplier");
    return number(props, "min_wait") + jitter * draw(uuid, action);
}

static int record_wait(cv_rstate_t *st, const char *action)
{
    double wait = cv__delay_wait_secs(st->props, st->uuid, action);
    return json_object_set_new(st->data, "wait", json_real(wait)) ? CV_ENOMEM : 0;
}

static int delay_create(cv_rstate_t *st)
{
    return record_wait(st, "CREATE");
}

/* Reached only for a version that needs no new properties (a changed
 * property replaces the Delay): nothing to wait for. */
static int delay_update(cv_rstate_t *st)
{
    return json_object_set_new(st->data, "wait", json_real(0)) ? CV_ENOMEM : 0;
}

/* The delete waits on the properties the version was created with. */
static int delay_remove(cv_rstate_t *st)
{
    return record_wait(st, "DELETE");
}

/* Heat's inherited Resource.handle_update: `if prop_diff: raise
 * UpdateReplace(self.name)`. */
static bool delay_needs_replacement(const json_t *old_props, const json_t *new_props)
{
    return !json_equal((json_t *)old_props, (json_t *)new_props);
}

static cv_observed_t delay_observe(cv_rstate_t *st, cv_action_t action)
{
    (void)action;
    /* Strictly after the wait: the events then show more than it. */
    double wait = cv__rtype_data_number(st->data, "wait", 0);
    double due = st->action_started + wait;
    if (wait > 0 && st->now <= due) {
        st->retry_at = due + 0.002;
        return CV_OBSERVED_IN_PROGRESS;
    }
    return CV_OBSERVED_COMPLETE;
}

/* Heat's default get_reference_id: the resource_id when there is one (an
 * adopted Delay's), else the name. */
static const char *delay_reference_id(const char *resource_name, const char *physical_id,
                                      const json_t *attrs)
{
    (void)attrs;
    return physical_id && physical_id[0] ? physical_id : resource_name;
}

const cv_rtype_t cv__rtype_delay = {
    .name = "OS::Heat::Delay",
    .props = delay_props,
    .nprops = sizeof(delay_props) / sizeof(delay_props[0]),
    .attrs = delay_attrs,
    .validate = delay_validate,
    .create = delay_create,
    .update = delay_update,
    .remove = delay_remove,
    .observe = delay_observe,
    .needs_replacement = delay_needs_replacement,
    .reference_id = delay_reference_id,
};
