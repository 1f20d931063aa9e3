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
 * AllowedValues, the property conflicts).
 */
#include "cv_error.h"
#include "cv_mesos.h"
#include "cv_pcexpr.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define REPLICAS_MAX 100000
#define PATH_MAX_LEN 256

typedef struct reader {
    const char *where; /* "resources.web.properties" */
    char *err;
    size_t errsz;
} reader_t;

static int bad(const reader_t *r, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cv_seterr(r->err, r->errsz, CV_EVALIDATE, "%s.%s: %s", r->where, path, msg);
}

static int bad_type(const reader_t *r, const char *path, const char *expected, const json_t *v)
{
    char got[128];
    cv__rtype_describe(v, got, sizeof(got));
    return bad(r, path, "expected %s, got %s", expected, got);
}

/* ---- scalars ---- */

/* A string, or a number or boolean spelled as one (Heat's String). */
static json_t *read_string(const reader_t *r, const char *path, const json_t *v)
{
    json_t *s = cv__rtype_coerce(CV_PROP_STRING, v);
    if (!s)
        bad_type(r, path, "string", v);
    return s;
}

/* A number in [min, max] (max < 0: none), as an integer when `integer`. */
static json_t *read_number(const reader_t *r, const char *path, const json_t *v, bool integer,
                           double min, double max)
{
    json_t *n = cv__rtype_coerce(integer ? CV_PROP_INTEGER : CV_PROP_NUMBER, v);
    if (!n) {
        bad_type(r, path, integer ? "integer" : "number", v);
        return NULL;
    }
    double x = json_number_value(n);
    if (x < min || (max >= 0 && x > max)) {
        char shown[64], maxs[32] = "None";
        cv_format_number(n, shown, sizeof(shown));
        if (max >= 0)
            snprintf(maxs, sizeof(maxs), "%g", max);
        bad(r, path, "%s is out of range (min: %g, max: %s)", shown, min, maxs);
        json_decref(n);
        return NULL;
    }
    return n;
}

/* `v` among `allowed` (NULL-terminated; matched ignoring case), as the
 * allowed spelling; Heat's AllowedValues message otherwise. */
static json_t *read_choice(const reader_t *r, const char *path, const json_t *v,
                           const char *const *allowed)
{
    if (!json_is_string(v)) {
        bad_type(r, path, "string", v);
        return NULL;
    }
    char list[256] = "";
    for (const char *const *a = allowed; *a; a++) {
        if (strcasecmp(json_string_value(v), *a) == 0)
            return json_string(*a);
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", a == allowed ? "" : ", ",
                 *a);
    }
    bad(r, path, "\"%s\" is not an allowed value [%s]", json_string_value(v), list);
    return NULL;
}

/* A name that becomes part of an environment variable or a file name. */
static bool is_name(const char *s, const char *extra)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && !strchr(extra, *s))
            return false;
    return true;
}

static json_t *read_name(const reader_t *r, const char *path, const json_t *v, const char *extra)
{
    json_t *s = read_string(r, path, v);
    if (s && !is_name(json_string_value(s), extra)) {
        bad(r, path, "\"%s\" is not a valid name (a letter or _, then letters, digits, _%s)",
            json_string_value(s), extra);
        json_decref(s);
        return NULL;
    }
    return s;
}

/* ---- maps of known keys ---- */

typedef json_t *(*field_fn)(const reader_t *r, const char *path, const json_t *v);

typedef struct field {
    const char *key;
    field_fn read;
} field_t;

/* Reads the map `v` field by field into a new object; an unknown key is
 * an error. Defaults are the caller's. */
static json_t *read_fields(const reader_t *r, const char *path, const json_t *v,
                           const field_t *fields)
{
    char at[PATH_MAX_LEN];
    if (!json_is_object(v)) {
        bad_type(r, path, "map", v);
        return NULL;
    }
    json_t *out = json_object();
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        const field_t *f = fields;
        while (f->key && strcmp(f->key, key) != 0)
            f++;
        snprintf(at, sizeof(at), "%s.%s", path, key);
        if (!f->key) {
            bad(r, at, "unknown property");
            json_decref(out);
            return NULL;
        }
        if (json_is_null(val))
            continue;
        json_t *x = f->read(r, at, val);
        if (!x) {
            json_decref(out);
            return NULL;
        }
        json_object_set_new(out, key, x);
    }
    return out;
}

static void set_default(json_t *obj, const char *key, json_t *v)
{
    if (!json_object_get(obj, key))
        json_object_set_new(obj, key, v);
    else
        json_decref(v);
}

/* ---- command, env, resources: a task's parts ---- */

static json_t *read_command(const reader_t *r, const char *path, const json_t *v)
{
    char at[PATH_MAX_LEN];
    if (!json_is_array(v)) {
        bad_type(r, path, "list", v);
        return NULL;
    }
    if (json_array_size(v) == 0) {
        bad(r, path, "length (0) is out of range (min: 1, max: None)");
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    const json_t *arg;
    json_array_foreach(v, i, arg)
    {
        snprintf(at, sizeof(at), "%s[%zu]", path, i);
        json_t *s = read_string(r, at, arg);
        if (!s) {
            json_decref(out);
            return NULL;
        }
        json_array_append_new(out, s);
    }
    if (json_string_length(json_array_get(out, 0)) == 0) {
        snprintf(at, sizeof(at), "%s[0]", path);
        bad(r, at, "the program to run must not be empty");
        json_decref(out);
        return NULL;
    }
    return out;
}

static json_t *read_env(const reader_t *r, const char *path, const json_t *v)
{
    char at[PATH_MAX_LEN];
    if (!json_is_object(v)) {
        bad_type(r, path, "map", v);
        return NULL;
    }
    json_t *out = json_object();
    const char *key;
    const json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        snprintf(at, sizeof(at), "%s.%s", path, key);
        if (!*key || strchr(key, '=')) {
            bad(r, at, "an environment variable's name is not empty and has no '='");
            json_decref(out);
            return NULL;
        }
        json_t *s = json_is_null(val) ? json_string("") : read_string(r, at, val);
        if (!s) {
            json_decref(out);
            return NULL;
        }
        json_object_set_new(out, key, s);
    }
    return out;
}

static json_t *read_memory(const reader_t *r, const char *path, const json_t *v)
{
    return read_number(r, path, v, true, 1, -1);
}

static json_t *read_cpu(const reader_t *r, const char *path, const json_t *v)
{
    json_t *n = read_number(r, path, v, false, 0, -1);
    if (n && json_number_value(n) <= 0) {
        bad(r, path, "must be greater than 0");
        json_decref(n);
        return NULL;
    }
    return n;
}

static json_t *read_resources(const reader_t *r, const char *path, const json_t *v)
{
    static const field_t fields[] = {
        {"memory_mb", read_memory}, {"cpu", read_cpu}, {"nofile", read_memory}, {NULL, NULL}};
    return read_fields(r, path, v, fields);
}

static json_t *read_workdir(const reader_t *r, const char *path, const json_t *v)
{
    return read_string(r, path, v);
}

/* ---- tasks ---- */

static json_t *read_task_name(const reader_t *r, const char *path, const json_t *v)
{
    return read_name(r, path, v, "-.");
}

static json_t *read_task(const reader_t *r, const char *path, const json_t *v)
{
    static const field_t fields[] = {{"name", read_task_name},   {"command", read_command},
                                     {"env", read_env},          {"workdir", read_workdir},
                                     {"resources", read_resources}, {NULL, NULL}};
    char at[PATH_MAX_LEN];
    json_t *t = read_fields(r, path, v, fields);
    if (t && !json_object_get(t, "name")) {
        snprintf(at, sizeof(at), "%s.name", path);
        bad(r, at, "required property is missing");
    } else if (t && !json_object_get(t, "command")) {
        snprintf(at, sizeof(at), "%s.command", path);
        bad(r, at, "required property is missing");
    } else if (t) {
        set_default(t, "env", json_object());
        set_default(t, "workdir", json_string(""));
        set_default(t, "resources", json_object());
        return t;
    }
    json_decref(t);
    return NULL;
}

/* A list of maps (or of names, each a map {"name": name} to `read`), with
 * names unique. */
static json_t *read_named_list(const reader_t *r, const char *path, const json_t *v, field_fn read)
{
    char at[PATH_MAX_LEN];
    if (!json_is_array(v)) {
        bad_type(r, path, "list", v);
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e)
    {
        snprintf(at, sizeof(at), "%s[%zu]", path, i);
        json_t *given = json_is_string(e) ? json_pack("{s:O}", "name", e) : json_incref((json_t *)e);
        json_t *x = read(r, at, given);
        json_decref(given);
        const char *name = json_string_value(json_object_get(x, "name"));
        for (size_t j = 0; x && j < i; j++) {
            const json_t *other = json_object_get(json_array_get(out, j), "name");
            if (strcmp(json_string_value(other), name) == 0) {
                bad(r, at, "the name \"%s\" is used by [%zu] already", name, j);
                json_decref(x);
                x = NULL;
            }
        }
        if (!x) {
            json_decref(out);
            return NULL;
        }
        json_array_append_new(out, x);
    }
    return out;
}

static json_t *read_tasks(const reader_t *r, const char *path, const json_t *v)
{
    json_t *tasks = read_named_list(r, path, v, read_task);
    if (tasks && json_array_size(tasks) == 0) {
        bad(r, path, "length (0) is out of range (min: 1, max: None)");
        json_decref(tasks);
        return NULL;
    }
    return tasks;
}

/* ---- ports and volumes ---- */

static json_t *read_port_name(const reader_t *r, const char *path, const json_t *v)
{
    return read_name(r, path, v, "");
}

static json_t *read_port_number(const reader_t *r, const char *path, const json_t *v)
{
    return read_number(r, path, v, true, 0, 65535);
}

static json_t *read_port(const reader_t *r, const char *path, const json_t *v)
{
    static const field_t fields[] = {
        {"name", read_port_name}, {"port", read_port_number}, {NULL, NULL}};
    char at[PATH_MAX_LEN];
    json_t *p = read_fields(r, path, v, fields);
    if (p && !json_object_get(p, "name")) {
        snprintf(at, sizeof(at), "%s.name", path);
        bad(r, at, "required property is missing");
        json_decref(p);
        return NULL;
    }
    if (p)
        set_default(p, "port", json_integer(0));
    return p;
}

static json_t *read_ports(const reader_t *r, const char *path, const json_t *v)
{
    return read_named_list(r, path, v, read_port);
}

static json_t *read_volume_name(const reader_t *r, const char *path, const json_t *v)
{
    return read_name(r, path, v, "-.");
}

/* Relative, inside the replica's working directory. */
static json_t *read_volume_path(const reader_t *r, const char *path, const json_t *v)
{
    json_t *s = read_string(r, path, v);
    const char *p = s ? json_string_value(s) : NULL;
    if (p && (!*p || *p == '/' || strcmp(p, "..") == 0 || strncmp(p, "../", 3) == 0 ||
              strstr(p, "/../") || (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0))) {
        bad(r, path, "\"%s\" must be a relative path inside the working directory", p);
        json_decref(s);
        return NULL;
    }
    return s;
}

static json_t *read_volume(const reader_t *r, const char *path, const json_t *v)
{
    static const field_t fields[] = {
        {"name", read_volume_name}, {"path", read_volume_path}, {NULL, NULL}};
    char at[PATH_MAX_LEN];
    json_t *vol = read_fields(r, path, v, fields);
    if (vol && !json_object_get(vol, "name")) {
        snprintf(at, sizeof(at), "%s.name", path);
        bad(r, at, "required property is missing");
        json_decref(vol);
        return NULL;
    }
    if (vol)
        set_default(vol, "path", json_deep_copy(json_object_get(vol, "name")));
    return vol;
}

static json_t *read_volumes(const reader_t *r, const char *path, const json_t *v)
{
    return read_named_list(r, path, v, read_volume);
}

/* ---- metrics ---- */

static json_t *read_metric_name(const reader_t *r, const char *path, const json_t *v)
{
    json_t *s = read_string(r, path, v);
    if (s && (json_string_length(s) == 0 || json_string_length(s) >= 64)) {
        bad(r, path, "length (%zu) is out of range (min: 1, max: 63)", json_string_length(s));
        json_decref(s);
        return NULL;
    }
    return s;
}

static json_t *read_load(const reader_t *r, const char *path, const json_t *v)
{
    return read_number(r, path, v, true, 0, -1);
}

static json_t *read_weight(const reader_t *r, const char *path, const json_t *v)
{
    static const char *const names[] = {"zero", "low", "medium", "high", NULL};
    json_t *n = cv__rtype_coerce(CV_PROP_NUMBER, v);
    if (!n && json_is_string(v))
        return read_choice(r, path, v, names);
    if (!n || json_number_value(n) < 0) {
        json_decref(n);
        char got[128];
        cv__rtype_describe(v, got, sizeof(got));
        bad(r, path, "expected zero, low, medium, high or a number >= 0, got %s", got);
        return NULL;
    }
    return n;
}

/* {"name", "primaryLoad", "secondaryLoad", "weight"}: cv_service_load's
 * names, with its defaults (secondary = primary, weight low). */
static json_t *read_metric(const reader_t *r, const char *path, const json_t *v)
{
    static const field_t fields[] = {{"name", read_metric_name},
                                     {"primary_load", read_load},
                                     {"secondary_load", read_load},
                                     {"weight", read_weight},
                                     {NULL, NULL}};
    char at[PATH_MAX_LEN];
    json_t *m = read_fields(r, path, v, fields);
    if (m && !json_object_get(m, "name")) {
        snprintf(at, sizeof(at), "%s.name", path);
        bad(r, at, "required property is missing");
        json_decref(m);
        return NULL;
    }
    if (!m)
        return NULL;
    json_t *primary = json_object_get(m, "primary_load");
    json_t *secondary = json_object_get(m, "secondary_load");
    json_t *weight = json_object_get(m, "weight");
    json_t *out = json_object();
    json_object_set(out, "name", json_object_get(m, "name"));
    json_object_set_new(out, "primaryLoad", primary ? json_incref(primary) : json_integer(0));
    json_object_set_new(out, "secondaryLoad",
                        json_deep_copy(secondary ? secondary : json_object_get(out, "primaryLoad")));
    json_object_set_new(out, "weight", weight ? json_incref(weight) : json_string("low"));
    json_decref(m);
    return out;
}

static json_t *read_metrics(const reader_t *r, const char *path, const json_t *v)
{
    return read_named_list(r, path, v, read_metric);
}

/* ---- placement ---- */

static json_t *read_placement(const reader_t *r, const char *path, const json_t *v)
{
    json_t *s = read_string(r, path, v);
    const char *text = s ? json_string_value(s) : NULL;
    if (text && text[strspn(text, " \t\r\n")] != '\0') {
        char why[512] = "";
        cv_pcexpr_t *e = NULL;
        if (cv_pcexpr_parse(text, &e, why, sizeof(why)) != 0) {
            bad(r, path, "%s", why);
            json_decref(s);
            return NULL;
        }
        cv_pcexpr_free(e);
    }
    return s;
}

static json_t *read_constraints(const reader_t *r, const char *path, const json_t *v)
{
    char at[PATH_MAX_LEN], why[512] = "";
    cv_mconstraint_t *c = NULL;
    snprintf(at, sizeof(at), "%s.%s", r->where, path);
    if (cv_mconstraint_parse(v, at, &c, why, sizeof(why)) != 0) {
        cv_seterr(r->err, r->errsz, CV_EVALIDATE, "%s", why);
        return NULL;
    }
    cv_mconstraint_free(c);
    return json_deep_copy(v);
}

static const char *const distributions[] = {"adaptive", "maxDifference", "quorumSafe", NULL};

static json_t *read_policy(const reader_t *r, const char *path, const json_t *v)
{
    return read_choice(r, path, v, distributions);
}

static json_t *read_bool(const reader_t *r, const char *path, const json_t *v)
{
    json_t *b = cv__rtype_coerce(CV_PROP_BOOLEAN, v);
    if (!b)
        bad_type(r, path, "boolean", v);
    return b;
}

/* {"distribution", "requireDomainDistribution"}, from a policy name or a
 * map {policy, require_domain_distribution}. */
static json_t *read_spread(const reader_t *r, const char *path, const json_t *v)
{
    static const field_t fields[] = {
        {"policy", read_policy}, {"require_domain_distribution", read_bool}, {NULL, NULL}};
    json_t *given = json_is_string(v) ? json_pack("{s:O}", "policy", v) : json_incref((json_t *)v);
    json_t *s = read_fields(r, path, given, fields);
    json_decref(given);
    if (!s)
        return NULL;
    json_t *policy = json_object_get(s, "policy");
    json_t *rdd = json_object_get(s, "require_domain_distribution");
    json_t *out = json_pack("{s:O, s:b}", "distribution", policy ? policy : json_string("adaptive"),
                            "requireDomainDistribution", json_is_true(rdd));
    json_decref(s);
    return out;
}

static json_t *read_affinity(const reader_t *r, const char *path, const json_t *v)
{
    json_t *s = read_string(r, path, v);
    if (s && json_string_length(s) == 0) {
        bad(r, path, "length (0) is out of range (min: 1, max: None)");
        json_decref(s);
        return NULL;
    }
    return s;
}

/* ---- health, restart and kill policies ---- */

static json_t *read_check_type(const reader_t *r, const char *path, const json_t *v)
{
    static const char *const types[] = {"command", "tcp", "http", NULL};
    return read_choice(r, path, v, types);
}

static json_t *read_seconds(const reader_t *r, const char *path, const json_t *v)
{
    return read_number(r, path, v, false, 0, -1);
}

static json_t *read_retries(const reader_t *r, const char *path, const json_t *v)
{
    return read_number(r, path, v, true, 1, -1);
}

static json_t *read_http_path(const reader_t *r, const char *path, const json_t *v)
{
    json_t *s = read_string(r, path, v);
    if (s && json_string_value(s)[0] != '/') {
        bad(r, path, "\"%s\" must start with /", json_string_value(s));
        json_decref(s);
        return NULL;
    }
    return s;
}

/* Defaults: interval 1 s, timeout 1 s, retries 3, grace period 0; an
 * http check's path "/"; a tcp or http check's port the first port (the
 * cross-checks against `ports` are cv__service_check_health's). */
static json_t *read_health(const reader_t *r, const char *path, const json_t *v)
{
    static const field_t fields[] = {
        {"type", read_check_type},  {"command", read_command}, {"port", read_port_name},
        {"path", read_http_path},   {"interval", read_seconds}, {"timeout", read_seconds},
        {"retries", read_retries},  {"grace_period", read_seconds}, {NULL, NULL}};
    char at[PATH_MAX_LEN];
    json_t *h = read_fields(r, path, v, fields);
    if (!h)
        return NULL;
    const char *type = json_string_value(json_object_get(h, "type"));
    if (!type) {
        snprintf(at, sizeof(at), "%s.type", path);
        bad(r, at, "required property is missing");
    } else if (strcmp(type, "command") == 0 && !json_object_get(h, "command")) {
        snprintf(at, sizeof(at), "%s.command", path);
        bad(r, at, "required property is missing (a command check runs it)");
    } else {
        set_default(h, "interval", json_integer(1));
        set_default(h, "timeout", json_integer(1));
        set_default(h, "retries", json_integer(3));
        set_default(h, "grace_period", json_integer(0));
        if (strcmp(type, "http") == 0)
            set_default(h, "path", json_string("/"));
        return h;
    }
    json_decref(h);
    return NULL;
}

static json_t *read_restart_name(const reader_t *r, const char *path, const json_t *v)
{
    static const char *const policies[] = {"Never", "Always", "OnFailure", NULL};
    return read_choice(r, path, v, policies);
}

static json_t *read_count(const reader_t *r, const char *path, const json_t *v)
{
    return read_number(r, path, v, true, 0, -1);
}

/* Defaults: Always, interval 1 s, backoff 1 s, max_times 0 (unlimited, as
 * seed 004's maxtimes 0). */
static json_t *read_restart(const reader_t *r, const char *path, const json_t *v)
{
    static const field_t fields[] = {{"policy", read_restart_name},
                                     {"interval", read_seconds},
                                     {"backoff", read_seconds},
                                     {"max_times", read_count},
                                     {NULL, NULL}};
    json_t *p = read_fields(r, path, v, fields);
    if (p) {
        set_default(p, "policy", json_string("Always"));
        set_default(p, "interval", json_integer(1));
        set_default(p, "backoff", json_integer(1));
        set_default(p, "max_times", json_integer(0));
    }
    return p;
}

static json_t *read_signal(const reader_t *r, const char *path, const json_t *v)
{
    static const char *const signals[] = {"TERM", "INT", "HUP", "QUIT", "KILL", "USR1", "USR2",
                                          NULL};
    json_t *s = read_string(r, path, v);
    if (!s)
        return NULL;
    const char *name = json_string_value(s);
    json_t *bare = json_string(strncasecmp(name, "SIG", 3) == 0 ? name + 3 : name);
    json_decref(s);
    json_t *out = read_choice(r, path, bare, signals);
    json_decref(bare);
    return out;
}

/* Defaults: grace period 5 s, signal TERM. */
static json_t *read_kill(const reader_t *r, const char *path, const json_t *v)
{
    static const field_t fields[] = {
        {"grace_period", read_seconds}, {"signal", read_signal}, {NULL, NULL}};
    json_t *p = read_fields(r, path, v, fields);
    if (p) {
        set_default(p, "grace_period", json_integer(5));
        set_default(p, "signal", json_string("TERM"));
    }
    return p;
}

static json_t *read_replicas(const reader_t *r, const char *path, const json_t *v)
{
    return read_number(r, path, v, true, 0, REPLICAS_MAX);
}

static json_t *read_stateful(const reader_t *r, const char *path, const json_t *v)
{
    return read_bool(r, path, v);
}

/* ---- the table ---- */

static const field_t properties[] = {
    {"replicas", read_replicas},
    {"command", read_command},
    {"env", read_env},
    {"workdir", read_workdir},
    {"stateful", read_stateful},
    {"ports", read_ports},
    {"volumes", read_volumes},
    {"resources", read_resources},
    {"metrics", read_metrics},
    {"placement_constraints", read_placement},
    {"constraints", read_constraints},
    {"spread", read_spread},
    {"affinity", read_affinity},
    {"health_check", read_health},
    {"restart_policy", read_restart},
    {"kill_policy", read_kill},
    {"tasks", read_tasks},
    {NULL, NULL},
};

json_t *cv__service_prop(const json_t *props, const char *name, const char *where, char *errstr,
                         size_t errstr_size)
{
    reader_t r = {where, errstr, errstr_size};
    const json_t *v = json_object_get(props, name);
    const field_t *f = properties;
    while (f->key && strcmp(f->key, name) != 0)
        f++;
    if (!f->key || !v || json_is_null(v))
        return NULL;
    return f->read(&r, name, v);
}

/* A tcp or http check needs a port, which must be one of the service's. */
static int check_health_port(const reader_t *r, const json_t *health, const json_t *ports)
{
    const char *type = json_string_value(json_object_get(health, "type"));
    const char *port = json_string_value(json_object_get(health, "port"));
    if (strcmp(type, "command") == 0)
        return 0;
    if (!port && json_array_size(ports) == 0)
        return bad(r, "health_check.port", "a %s check needs a port: the service has no ports",
                   type);
    size_t i;
    const json_t *p;
    json_array_foreach(ports, i, p)
    {
        if (!port || strcmp(json_string_value(json_object_get(p, "name")), port) == 0)
            return 0;
    }
    return bad(r, "health_check.port", "\"%s\" is not one of the service's ports", port);
}

static bool given(const json_t *props, const char *name)
{
    const json_t *v = json_object_get(props, name);
    return v && !json_is_null(v);
}

int cv__service_check_shape(const json_t *props, const char *where, char *errstr,
                            size_t errstr_size)
{
    reader_t r = {where, errstr, errstr_size};
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
    json_t *ports = pv ? cv__service_prop(props, "ports", where, errstr, errstr_size) : json_array();
    int rc = health && ports ? check_health_port(&r, health, ports) : CV_EVALIDATE;
    json_decref(health);
    json_decref(ports);
    return rc;
}

int cv__service_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    for (const field_t *f = properties; f->key; f++) {
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
