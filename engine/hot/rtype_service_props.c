/*
 * rtype_service_props — Converge::Service's properties read into the
 * normalised forms the service spec holds, each with its checks.
 *
 * One reader per property both validates (convergectl validate/submit, on
 * literal values; values still holding intrinsic functions are skipped)
 * and produces what the spec holds (the engine, on resolved values), so
 * what is refused and what is run cannot drift apart. Errors name the
 * property path ("resources.web.properties.health_check.type") and use
 * Heat's constraint messages where Heat has one (Range, Length,
 * AllowedValues, the property conflicts). Here: the processes (command,
 * env, resources, tasks), ports, volumes, the table of every property and
 * the checks across properties; the readers of values and of the
 * placement and policy properties are in rtype_service_read.c and
 * rtype_service_policies.c.
 */
#include "cv__service_read.h"

#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

#define REPLICAS_MAX 100000

/* ---- command, env, resources: a task's parts ---- */

json_t *cv__svc_read_command(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    char at[CV__SVC_PATH_MAX];
    if (!json_is_array(v)) {
        cv__svc_bad_type(r, path, "list", v);
        return NULL;
    }
    if (json_array_size(v) == 0) {
        cv__svc_bad(r, path, "length (0) is out of range (min: 1, max: None)");
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    const json_t *arg;
    json_array_foreach(v, i, arg)
    {
        snprintf(at, sizeof(at), "%s[%zu]", path, i);
        json_t *s = cv__svc_string(r, at, arg);
        if (!s) {
            json_decref(out);
            return NULL;
        }
        json_array_append_new(out, s);
    }
    if (json_string_length(json_array_get(out, 0)) == 0) {
        snprintf(at, sizeof(at), "%s[0]", path);
        cv__svc_bad(r, at, "the program to run must not be empty");
        json_decref(out);
        return NULL;
    }
    return out;
}

static json_t *read_env(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    char at[CV__SVC_PATH_MAX];
    if (!json_is_object(v)) {
        cv__svc_bad_type(r, path, "map", v);
        return NULL;
    }
    json_t *out = json_object();
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        snprintf(at, sizeof(at), "%s.%s", path, key);
        if (!*key || strchr(key, '=')) {
            cv__svc_bad(r, at, "an environment variable's name is not empty and has no '='");
            json_decref(out);
            return NULL;
        }
        json_t *s = json_is_null(val) ? json_string("") : cv__svc_string(r, at, val);
        if (!s) {
            json_decref(out);
            return NULL;
        }
        json_object_set_new(out, key, s);
    }
    return out;
}

static json_t *read_memory(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, true, 1, -1);
}

static json_t *read_cpu(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *n = cv__svc_number(r, path, v, false, 0, -1);
    if (n && json_number_value(n) <= 0) {
        cv__svc_bad(r, path, "must be greater than 0");
        json_decref(n);
        return NULL;
    }
    return n;
}

static json_t *read_resources(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {{"memory_mb", read_memory},
                                             {"cpu", read_cpu},
                                             {"nofile", read_memory},
                                             {"pids", read_memory},
                                             {NULL, NULL}};
    return cv__svc_fields(r, path, v, fields);
}

static json_t *read_workdir(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_string(r, path, v);
}

/* The user the replicas run as: a name or a uid; the node's agent decides
 * whether it allows it (docs/security.md). */
static json_t *read_user(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *s = cv__svc_string(r, path, v);
    if (s && (!json_string_value(s)[0] || strchr(json_string_value(s), ':'))) {
        cv__svc_bad(r, path, "expected a user name or a uid");
        json_decref(s);
        return NULL;
    }
    return s;
}

/* ---- tasks ---- */

static json_t *read_task_name(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_name(r, path, v, "-.");
}

static json_t *read_task(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {
        {"name", read_task_name},  {"command", cv__svc_read_command}, {"env", read_env},
        {"workdir", read_workdir}, {"resources", read_resources},     {NULL, NULL}};
    json_t *t = cv__svc_fields(r, path, v, fields);
    if (t && cv__svc_require(r, path, t, "name") && cv__svc_require(r, path, t, "command")) {
        cv__svc_default(t, "env", json_object());
        cv__svc_default(t, "workdir", json_string(""));
        cv__svc_default(t, "resources", json_object());
        return t;
    }
    json_decref(t);
    return NULL;
}

/* A list of maps (or of names, each a map {"name": name} to `read`), with
 * names unique. */
static json_t *read_tasks(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *tasks = cv__svc_named_list(r, path, v, read_task);
    if (tasks && json_array_size(tasks) == 0) {
        cv__svc_bad(r, path, "length (0) is out of range (min: 1, max: None)");
        json_decref(tasks);
        return NULL;
    }
    return tasks;
}

/* ---- ports and volumes ---- */

json_t *cv__svc_read_port_name(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_name(r, path, v, "");
}

static json_t *read_port_number(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, true, 0, 65535);
}

static json_t *read_port(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {
        {"name", cv__svc_read_port_name}, {"port", read_port_number}, {NULL, NULL}};
    json_t *p = cv__svc_fields(r, path, v, fields);
    if (p && !cv__svc_require(r, path, p, "name")) {
        json_decref(p);
        return NULL;
    }
    if (p)
        cv__svc_default(p, "port", json_integer(0));
    return p;
}

static json_t *read_ports(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_named_list(r, path, v, read_port);
}

static json_t *read_volume_name(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_name(r, path, v, "-.");
}

/* Relative, inside the replica's working directory. */
static json_t *read_volume_path(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *s = cv__svc_string(r, path, v);
    const char *p = s ? json_string_value(s) : NULL;
    if (p && (!*p || *p == '/' || strcmp(p, "..") == 0 || strncmp(p, "../", 3) == 0 ||
              strstr(p, "/../") || (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0))) {
        cv__svc_bad(r, path, "\"%s\" must be a relative path inside the working directory", p);
        json_decref(s);
        return NULL;
    }
    return s;
}

static json_t *read_volume(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {
        {"name", read_volume_name}, {"path", read_volume_path}, {NULL, NULL}};
    json_t *vol = cv__svc_fields(r, path, v, fields);
    if (vol && !cv__svc_require(r, path, vol, "name")) {
        json_decref(vol);
        return NULL;
    }
    if (vol)
        cv__svc_default(vol, "path", json_deep_copy(json_object_get(vol, "name")));
    return vol;
}

static json_t *read_volumes(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_named_list(r, path, v, read_volume);
}

static json_t *read_replicas(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, true, 0, REPLICAS_MAX);
}

static json_t *read_stateful(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_bool(r, path, v);
}

/* ---- the table ---- */

static const cv__svc_field_t properties[] = {
    {"replicas", read_replicas},
    {"command", cv__svc_read_command},
    {"env", read_env},
    {"workdir", read_workdir},
    {"stateful", read_stateful},
    {"ports", read_ports},
    {"volumes", read_volumes},
    {"resources", read_resources},
    {"metrics", cv__svc_read_metrics},
    {"placement_constraints", cv__svc_read_placement},
    {"constraints", cv__svc_read_constraints},
    {"spread", cv__svc_read_spread},
    {"affinity", cv__svc_read_affinity},
    {"health_check", cv__svc_read_health},
    {"restart_policy", cv__svc_read_restart},
    {"kill_policy", cv__svc_read_kill},
    {"tasks", read_tasks},
    {"update_policy", cv__svc_read_update_policy},
    {"move_cost", cv__svc_read_move_cost},
    {"user", read_user},
    {NULL, NULL},
};

json_t *cv__service_prop(const json_t *props, const char *name, const char *where, char *errstr,
                         size_t errstr_size)
{
    cv__svc_reader_t r = {where, errstr, errstr_size};
    const json_t *v = json_object_get(props, name);
    const cv__svc_field_t *f = properties;
    while (f->key && strcmp(f->key, name) != 0)
        f++;
    if (!f->key || !v || json_is_null(v))
        return NULL;
    /* The reader only borrows r for the call: the value is a new one. */
    /* cppcheck-suppress returnDanglingLifetime */
    return f->read(&r, name, v);
}

/* A tcp or http check needs a port, which must be one of the service's. */
static int check_health_port(const cv__svc_reader_t *r, const json_t *health, const json_t *ports)
{
    const char *type = json_string_value(json_object_get(health, "type"));
    const char *port = json_string_value(json_object_get(health, "port"));
    if (strcmp(type, "command") == 0)
        return 0;
    if (!port && json_array_size(ports) == 0)
        return cv__svc_bad(r, "health_check.port",
                           "a %s check needs a port: the service has no ports", type);
    size_t i;
    const json_t *p;
    json_array_foreach(ports, i, p)
    {
        if (!port || strcmp(json_string_value(json_object_get(p, "name")), port) == 0)
            return 0;
    }
    return cv__svc_bad(r, "health_check.port", "\"%s\" is not one of the service's ports", port);
}

static bool given(const json_t *props, const char *name)
{
    const json_t *v = json_object_get(props, name);
    return v && !json_is_null(v);
}

int cv__service_check_shape(const json_t *props, const char *where, char *errstr,
                            size_t errstr_size)
{
    cv__svc_reader_t r = {where, errstr, errstr_size};
    bool command = given(props, "command"), tasks = given(props, "tasks");
    if (command && tasks)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s: Cannot define the following properties at the same time: command, "
                         "tasks.",
                         where);
    if (!command && !tasks)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s: At least one of the following properties must be specified: "
                         "command, tasks.",
                         where);
    const json_t *hv = json_object_get(props, "health_check");
    const json_t *pv = json_object_get(props, "ports");
    if (!hv || json_is_null(hv) || cv__rtype_contains_intrinsic(hv) ||
        cv__rtype_contains_intrinsic(pv))
        return 0;
    json_t *health = cv__service_prop(props, "health_check", where, errstr, errstr_size);
    json_t *ports =
        pv ? cv__service_prop(props, "ports", where, errstr, errstr_size) : json_array();
    int rc = health && ports ? check_health_port(&r, health, ports) : CV_EVALIDATE;
    json_decref(health);
    json_decref(ports);
    return rc;
}

int cv__service_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    for (const cv__svc_field_t *f = properties; f->key; f++) {
        const json_t *v = json_object_get(props, f->key);
        if (!v || json_is_null(v) || cv__rtype_contains_intrinsic(v))
            continue;
        json_t *x = cv__service_prop(props, f->key, where, errstr, errstr_size);
        if (!x)
            return CV_EVALIDATE;
        json_decref(x);
    }
    return cv__service_check_shape(props, where, errstr, errstr_size);
}
