/*
 * rtype_service_policies — Converge::Service's placement properties
 * (metrics, placement_constraints, constraints, spread, affinity) and its
 * health, restart and kill policies, read with their defaults into the
 * forms the service spec holds (cv__service_read.h). The placement
 * expression and the Mesos constraints are parsed by the placement
 * library, so what validates is what the planner reads.
 */
#include "cv__service_read.h"

#include "cv_base.h"
#include "cv_placement.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- metrics ---- */

static json_t *read_metric_name(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *s = cv__svc_string(r, path, v);
    if (s && (json_string_length(s) == 0 || json_string_length(s) >= 64)) {
        cv__svc_bad(r, path, "length (%zu) is out of range (min: 1, max: 63)",
                    json_string_length(s));
        json_decref(s);
        return NULL;
    }
    return s;
}

static json_t *read_load(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, true, 0, -1);
}

static json_t *read_weight(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const char *const names[] = {"zero", "low", "medium", "high", NULL};
    json_t *n = cv__rtype_coerce(CV_PROP_NUMBER, v);
    if (!n && json_is_string(v))
        return cv__svc_choice(r, path, v, names);
    if (!n || json_number_value(n) < 0) {
        json_decref(n);
        char got[128];
        cv__rtype_describe(v, got, sizeof(got));
        cv__svc_bad(r, path, "expected zero, low, medium, high or a number >= 0, got %s", got);
        return NULL;
    }
    return n;
}

/* {"name", "primaryLoad", "secondaryLoad", "weight"}: cv_service_load's
 * names, with its defaults (secondary = primary, weight low). */
static json_t *read_metric(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {{"name", read_metric_name},
                                             {"primary_load", read_load},
                                             {"secondary_load", read_load},
                                             {"weight", read_weight},
                                             {NULL, NULL}};
    json_t *m = cv__svc_fields(r, path, v, fields);
    if (m && !cv__svc_require(r, path, m, "name")) {
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
    json_object_set_new(
        out, "secondaryLoad",
        json_deep_copy(secondary ? secondary : json_object_get(out, "primaryLoad")));
    json_object_set_new(out, "weight", weight ? json_incref(weight) : json_string("low"));
    json_decref(m);
    return out;
}

json_t *cv__svc_read_metrics(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_named_list(r, path, v, read_metric);
}

/* ---- placement ---- */

json_t *cv__svc_read_placement(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *s = cv__svc_string(r, path, v);
    const char *text = s ? json_string_value(s) : NULL;
    if (text && text[strspn(text, " \t\r\n")] != '\0') {
        char why[512] = "";
        cv_pcexpr_t *e = NULL;
        if (cv_pcexpr_parse(text, &e, why, sizeof(why)) != 0) {
            cv__svc_bad(r, path, "%s", why);
            json_decref(s);
            return NULL;
        }
        cv_pcexpr_free(e);
    }
    return s;
}

static int parse_constraint(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    char at[CV__SVC_PATH_MAX], why[512] = "";
    cv_mconstraint_t *c = NULL;
    /* A path too long for `at` is cut; gcc -O3 wants the cut seen. */
    if (snprintf(at, sizeof(at), "%s.%s", r->where, path) >= (int)sizeof(at))
        at[sizeof(at) - 1] = '\0';
    if (cv_mconstraint_parse(v, at, &c, why, sizeof(why)) != 0)
        return cv_seterr(r->errstr, r->errstr_size, CV_EVALIDATE, "%s", why);
    cv_mconstraint_free(c);
    return 0;
}

/* The Mesos/BCS form (cv_mesos.h), or a list of such constraints, which
 * must all hold: {"and": list} in the spec. In a template {and: ..} and
 * {or: ..} are HOT's condition functions, refused in properties; the
 * placement library takes the keys in any case, so AND and OR spell them. */
json_t *cv__svc_read_constraints(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    const json_t *first = json_array_get(v, 0);
    if (!json_is_array(first) && !json_is_object(first))
        return parse_constraint(r, path, v) ? NULL : json_deep_copy(v);
    size_t i;
    const json_t *c;
    json_array_foreach(v, i, c)
    {
        char at[CV__SVC_PATH_MAX];
        snprintf(at, sizeof(at), "%s[%zu]", path, i);
        if (parse_constraint(r, at, c) != 0)
            return NULL;
    }
    return json_pack("{s:O}", "and", v);
}

static const char *const distributions[] = {"adaptive", "maxDifference", "quorumSafe", NULL};

static json_t *read_policy(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_choice(r, path, v, distributions);
}

json_t *cv__svc_read_spread(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {
        {"policy", read_policy}, {"require_domain_distribution", cv__svc_bool}, {NULL, NULL}};
    json_t *given = json_is_string(v) ? json_pack("{s:O}", "policy", v) : json_incref((json_t *)v);
    json_t *s = cv__svc_fields(r, path, given, fields);
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

json_t *cv__svc_read_affinity(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *s = cv__svc_string(r, path, v);
    if (s && json_string_length(s) == 0) {
        cv__svc_bad(r, path, "length (0) is out of range (min: 1, max: None)");
        json_decref(s);
        return NULL;
    }
    return s;
}

/* ---- health, restart and kill policies ---- */

static json_t *read_check_type(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const char *const types[] = {"command", "tcp", "http", NULL};
    return cv__svc_choice(r, path, v, types);
}

static json_t *read_seconds(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, false, 0, -1);
}

static json_t *read_retries(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, true, 1, -1);
}

static json_t *read_http_path(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *s = cv__svc_string(r, path, v);
    if (s && json_string_value(s)[0] != '/') {
        cv__svc_bad(r, path, "\"%s\" must start with /", json_string_value(s));
        json_decref(s);
        return NULL;
    }
    return s;
}

/* Defaults: interval 1 s, timeout 1 s, retries 3, grace period 0; an
 * http check's path "/"; a tcp or http check's port the first port (the
 * cross-checks against `ports` are cv__service_check_health's). */
json_t *cv__svc_read_health(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {{"type", read_check_type},
                                             {"command", cv__svc_read_command},
                                             {"port", cv__svc_read_port_name},
                                             {"path", read_http_path},
                                             {"interval", read_seconds},
                                             {"timeout", read_seconds},
                                             {"retries", read_retries},
                                             {"grace_period", read_seconds},
                                             {NULL, NULL}};
    char at[CV__SVC_PATH_MAX];
    json_t *h = cv__svc_fields(r, path, v, fields);
    if (!h)
        return NULL;
    const char *type = json_string_value(json_object_get(h, "type"));
    if (!type) {
        cv__svc_require(r, path, h, "type");
    } else if (strcmp(type, "command") == 0 && !json_object_get(h, "command")) {
        snprintf(at, sizeof(at), "%s.command", path);
        cv__svc_bad(r, at, "required property is missing (a command check runs it)");
    } else {
        cv__svc_default(h, "interval", json_integer(1));
        cv__svc_default(h, "timeout", json_integer(1));
        cv__svc_default(h, "retries", json_integer(3));
        cv__svc_default(h, "grace_period", json_integer(0));
        if (strcmp(type, "http") == 0)
            cv__svc_default(h, "path", json_string("/"));
        return h;
    }
    json_decref(h);
    return NULL;
}

static json_t *read_restart_name(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const char *const policies[] = {"Never", "Always", "OnFailure", NULL};
    return cv__svc_choice(r, path, v, policies);
}

static json_t *read_count(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    return cv__svc_number(r, path, v, true, 0, -1);
}

/* Defaults: Always, interval 1 s, backoff 1 s, max_times 0 (unlimited, as
 * BCS's maxtimes 0). */
json_t *cv__svc_read_restart(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {{"policy", read_restart_name},
                                             {"interval", read_seconds},
                                             {"backoff", read_seconds},
                                             {"max_times", read_count},
                                             {NULL, NULL}};
    json_t *p = cv__svc_fields(r, path, v, fields);
    if (p) {
        cv__svc_default(p, "policy", json_string("Always"));
        cv__svc_default(p, "interval", json_integer(1));
        cv__svc_default(p, "backoff", json_integer(1));
        cv__svc_default(p, "max_times", json_integer(0));
    }
    return p;
}

static json_t *read_signal(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const char *const signals[] = {"TERM", "INT",  "HUP",  "QUIT",
                                          "KILL", "USR1", "USR2", NULL};
    json_t *s = cv__svc_string(r, path, v);
    if (!s)
        return NULL;
    const char *name = json_string_value(s);
    json_t *bare = json_string(strncasecmp(name, "SIG", 3) == 0 ? name + 3 : name);
    json_decref(s);
    json_t *out = cv__svc_choice(r, path, bare, signals);
    json_decref(bare);
    return out;
}

/* Defaults: grace period 5 s, signal TERM. */
json_t *cv__svc_read_kill(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    static const cv__svc_field_t fields[] = {
        {"grace_period", read_seconds}, {"signal", read_signal}, {NULL, NULL}};
    json_t *p = cv__svc_fields(r, path, v, fields);
    if (p) {
        cv__svc_default(p, "grace_period", json_integer(5));
        cv__svc_default(p, "signal", json_string("TERM"));
    }
    return p;
}
