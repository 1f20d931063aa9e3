/*
 * OS::Heat::WaitConditionHandle — receives signals and keeps them, as Heat's
 * HeatWaitConditionHandle keeps them in its metadata: one entry per signal
 * id, a later signal with the same id replacing the earlier one in place.
 * An OS::Heat::WaitCondition counts them (rtype_wait_condition.c).
 *
 * Signals reach the handle through `convergectl signal STACK RESOURCE`,
 * which the attributes name where Heat names a Keystone-authenticated URL:
 * `curl_cli` is the command prefix ("... --data-binary '{"status":
 * "SUCCESS"}'" appended works as it does with Heat's curl line), `endpoint`
 * is "<stack>/<resource>", `token` is empty (Converge authenticates nobody),
 * and `signal` is a JSON map of the three.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cv_prop_schema_t handle_props[] = {
    {"signal_transport", CV_PROP_STRING, false, "\"TOKEN_SIGNAL\"", false},
};

static const char *const handle_attrs[] = {"token", "endpoint", "curl_cli", "signal", NULL};

static const char *const transports[] = {"CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL",
                                         "NO_SIGNAL",  "ZAQAR_SIGNAL",    "TOKEN_SIGNAL"};

#define NTRANSPORTS (sizeof(transports) / sizeof(transports[0]))

static int handle_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    const json_t *t = json_object_get(props, "signal_transport");
    if (!json_is_string(t))
        return 0;
    for (size_t i = 0; i < NTRANSPORTS; i++)
        if (strcmp(json_string_value(t), transports[i]) == 0)
            return 0;
    return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                     "%s.signal_transport: \"%s\" is not an allowed value [CFN_SIGNAL, "
                     "TEMP_URL_SIGNAL, HEAT_SIGNAL, NO_SIGNAL, ZAQAR_SIGNAL, TOKEN_SIGNAL]",
                     where, json_string_value(t));
}

/* The attributes: how to signal this handle with convergectl. */
static int publish(cv_rstate_t *st)
{
    char endpoint[512], cli[600];
    snprintf(endpoint, sizeof(endpoint), "%s/%s", st->stack_name, st->resource_name);
    snprintf(cli, sizeof(cli), "convergectl signal %s %s", st->stack_name, st->resource_name);
    json_t *signal =
        json_pack("{s:s, s:s, s:s}", "endpoint", endpoint, "token", "", "curl_cli", cli);
    char *text = signal ? json_dumps(signal, JSON_PRESERVE_ORDER) : NULL;
    json_decref(signal);
    if (!text)
        return CV_ENOMEM;
    int rc = json_object_set_new(st->attrs, "token", json_string("")) ||
             json_object_set_new(st->attrs, "endpoint", json_string(endpoint)) ||
             json_object_set_new(st->attrs, "curl_cli", json_string(cli)) ||
             json_object_set_new(st->attrs, "signal", json_string(text));
    free(text);
    return rc ? CV_ENOMEM : 0;
}

static int handle_create(cv_rstate_t *st)
{
    cv__rtype_set_physical_id(st);
    if (json_object_set_new(st->data, "signals", json_array()))
        return CV_ENOMEM;
    return publish(st);
}

static int handle_update(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        cv__rtype_set_physical_id(st);
    if (!json_is_array(json_object_get(st->data, "signals")) &&
        json_object_set_new(st->data, "signals", json_array()))
        return CV_ENOMEM;
    return publish(st);
}

static int handle_remove(cv_rstate_t *st)
{
    (void)st;
    return 0;
}

static cv_observed_t handle_observe(cv_rstate_t *st, cv_action_t action)
{
    (void)st;
    (void)action;
    return CV_OBSERVED_COMPLETE;
}

/* ---------------------------------------------------------------- signals */

/* A value as Python's str() writes it, which is how Heat turns a signal's
 * id and reason into text: strings as they are, numbers as Python prints
 * them, True / False / None, anything else as JSON. A new string; NULL when
 * out of memory. */
static json_t *python_str(const json_t *v)
{
    char buf[256];
    if (json_is_string(v))
        return json_copy((json_t *)v);
    if (json_is_number(v))
        cv_format_number(v, buf, sizeof(buf));
    else if (json_is_boolean(v))
        snprintf(buf, sizeof(buf), "%s", json_is_true(v) ? "True" : "False");
    else if (json_is_null(v))
        snprintf(buf, sizeof(buf), "None");
    else {
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII);
        json_t *s = text ? json_string(text) : NULL;
        free(text);
        return s;
    }
    return json_string(buf);
}

/* Heat's normalise_signal_data: missing fields take their defaults, the
 * number of signals so far plus one naming the id and the reason. */
static json_t *normalise(const json_t *details, size_t nsignals)
{
    json_t *md = json_is_object(details) ? json_deep_copy(details) : json_object();
    char reason[64];
    snprintf(reason, sizeof(reason), "Signal %zu received", nsignals + 1);
    if (!json_object_get(md, "reason"))
        json_object_set_new(md, "reason", json_string(reason));
    if (!json_object_get(md, "data"))
        json_object_set_new(md, "data", json_null());
    if (!json_object_get(md, "id"))
        json_object_set_new(md, "id", json_integer((json_int_t)(nsignals + 1)));
    if (!json_object_get(md, "status"))
        json_object_set_new(md, "status", json_string("SUCCESS"));
    return md;
}

/* Heat's _metadata_format_ok: exactly the four keys, a known status. */
static bool format_ok(const json_t *md)
{
    const char *status = json_string_value(json_object_get(md, "status"));
    return json_object_size(md) == 4 && json_object_get(md, "data") &&
           json_object_get(md, "reason") && json_object_get(md, "id") && status &&
           (strcmp(status, "SUCCESS") == 0 || strcmp(status, "FAILURE") == 0);
}

/* The signals kept, as a list of {"id", "status", "reason", "data"} in
 * the order their ids first arrived. */
static json_t *signals_of(json_t *data)
{
    json_t *signals = json_object_get(data, "signals");
    if (json_is_array(signals))
        return signals;
    signals = json_array();
    json_object_set_new(data, "signals", signals);
    return signals;
}

static int handle_signal(cv_rstate_t *st, const json_t *details, char *errstr, size_t errstr_size)
{
    json_t *signals = signals_of(st->data);
    bool empty = !details || json_is_null(details) ||
                 (json_is_object(details) && json_object_size(details) == 0);
    json_t *md = normalise(empty ? NULL : details, json_array_size(signals));
    if ((!empty && !json_is_object(details)) || !format_ok(md)) {
        json_decref(md);
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "ValueError: resources.%s: Metadata format invalid", st->resource_name);
    }
    json_t *id = python_str(json_object_get(md, "id"));
    json_t *reason = python_str(json_object_get(md, "reason"));
    json_t *entry = id && reason ? json_pack("{s:O, s:O, s:O, s:O}", "id", id, "status",
                                             json_object_get(md, "status"), "reason", reason,
                                             "data", json_object_get(md, "data"))
                                 : NULL;
    if (entry)
        snprintf(st->reason, sizeof(st->reason), "Signal: status:%s reason:%s",
                 json_string_value(json_object_get(md, "status")), json_string_value(reason));
    json_decref(md);
    json_decref(reason);
    if (!entry) {
        json_decref(id);
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "resources.%s: out of memory",
                         st->resource_name);
    }
    size_t i;
    json_t *e;
    json_array_foreach(signals, i, e)
    {
        if (json_equal(json_object_get(e, "id"), id))
            break;
    }
    json_decref(id);
    int rc = i < json_array_size(signals) ? json_array_set_new(signals, i, entry)
                                          : json_array_append_new(signals, entry);
    return rc ? CV_ENOMEM : 0;
}

const cv_rtype_t cv__rtype_wait_condition_handle = {
    .name = "OS::Heat::WaitConditionHandle",
    .props = handle_props,
    .nprops = sizeof(handle_props) / sizeof(handle_props[0]),
    .attrs = handle_attrs,
    .validate = handle_validate,
    .create = handle_create,
    .update = handle_update,
    .remove = handle_remove,
    .observe = handle_observe,
    .signal = handle_signal,
};
