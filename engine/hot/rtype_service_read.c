/*
 * rtype_service_read — the readers of Converge::Service property values of
 * any kind (cv__service_read.h): strings, numbers in a range, choices,
 * names, maps of known keys, lists of named entries. Heat's constraint
 * messages where Heat has one (Range, AllowedValues).
 */
#include "cv__service_read.h"

#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int cv__svc_bad(const cv__svc_reader_t *r, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cv_seterr(r->errstr, r->errstr_size, CV_EVALIDATE, "%s.%s: %s", r->where, path, msg);
}

int cv__svc_bad_type(const cv__svc_reader_t *r, const char *path, const char *expected,
                     const json_t *v)
{
    char got[128];
    cv__rtype_describe(v, got, sizeof(got));
    return cv__svc_bad(r, path, "expected %s, got %s", expected, got);
}

/* ---- scalars ---- */

/* A string, or a number or boolean spelled as one (Heat's String). */
json_t *cv__svc_string(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *s = cv__rtype_coerce(CV_PROP_STRING, v);
    if (!s)
        cv__svc_bad_type(r, path, "string", v);
    return s;
}

/* A number in [min, max] (max < 0: none), as an integer when `integer`. */
json_t *cv__svc_number(const cv__svc_reader_t *r, const char *path, const json_t *v, bool integer,
                       double min, double max)
{
    json_t *n = cv__rtype_coerce(integer ? CV_PROP_INTEGER : CV_PROP_NUMBER, v);
    if (!n) {
        cv__svc_bad_type(r, path, integer ? "integer" : "number", v);
        return NULL;
    }
    double x = json_number_value(n);
    if (x < min || (max >= 0 && x > max)) {
        char shown[64], maxs[32] = "None";
        cv_format_number(n, shown, sizeof(shown));
        if (max >= 0)
            snprintf(maxs, sizeof(maxs), "%g", max);
        cv__svc_bad(r, path, "%s is out of range (min: %g, max: %s)", shown, min, maxs);
        json_decref(n);
        return NULL;
    }
    return n;
}

/* `v` among `allowed` (NULL-terminated; matched ignoring case), as the
 * allowed spelling; Heat's AllowedValues message otherwise. */
json_t *cv__svc_choice(const cv__svc_reader_t *r, const char *path, const json_t *v,
                       const char *const *allowed)
{
    if (!json_is_string(v)) {
        cv__svc_bad_type(r, path, "string", v);
        return NULL;
    }
    char list[256] = "";
    for (const char *const *a = allowed; *a; a++) {
        if (strcasecmp(json_string_value(v), *a) == 0)
            return json_string(*a);
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", a == allowed ? "" : ", ",
                 *a);
    }
    cv__svc_bad(r, path, "\"%s\" is not an allowed value [%s]", json_string_value(v), list);
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

json_t *cv__svc_name(const cv__svc_reader_t *r, const char *path, const json_t *v,
                     const char *extra)
{
    json_t *s = cv__svc_string(r, path, v);
    if (s && !is_name(json_string_value(s), extra)) {
        cv__svc_bad(r, path,
                    "\"%s\" is not a valid name (a letter or _, then letters, digits, _%s)",
                    json_string_value(s), extra);
        json_decref(s);
        return NULL;
    }
    return s;
}

/* ---- maps of known keys ---- */

/* Reads the map `v` field by field into a new object; an unknown key is
 * an error. Defaults are the caller's. */
bool cv__svc_require(const cv__svc_reader_t *r, const char *path, const json_t *obj,
                     const char *key)
{
    if (json_object_get(obj, key))
        return true;
    char at[CV__SVC_PATH_MAX];
    snprintf(at, sizeof(at), "%s.%s", path, key);
    cv__svc_bad(r, at, "required property is missing");
    return false;
}

json_t *cv__svc_fields(const cv__svc_reader_t *r, const char *path, const json_t *v,
                       const cv__svc_field_t *fields)
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
        const cv__svc_field_t *f = fields;
        while (f->key && strcmp(f->key, key) != 0)
            f++;
        snprintf(at, sizeof(at), "%s.%s", path, key);
        if (!f->key) {
            cv__svc_bad(r, at, "unknown property");
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

void cv__svc_default(json_t *obj, const char *key, json_t *v)
{
    if (!json_object_get(obj, key))
        json_object_set_new(obj, key, v);
    else
        json_decref(v);
}

json_t *cv__svc_named_list(const cv__svc_reader_t *r, const char *path, const json_t *v,
                           cv__svc_field_fn read)
{
    char at[CV__SVC_PATH_MAX];
    if (!json_is_array(v)) {
        cv__svc_bad_type(r, path, "list", v);
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e)
    {
        snprintf(at, sizeof(at), "%s[%zu]", path, i);
        json_t *given =
            json_is_string(e) ? json_pack("{s:O}", "name", e) : json_incref((json_t *)e);
        json_t *x = read(r, at, given);
        json_decref(given);
        const char *name = json_string_value(json_object_get(x, "name"));
        for (size_t j = 0; x && j < i; j++) {
            const json_t *other = json_object_get(json_array_get(out, j), "name");
            if (strcmp(json_string_value(other), name) == 0) {
                cv__svc_bad(r, at, "the name \"%s\" is used by [%zu] already", name, j);
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

json_t *cv__svc_bool(const cv__svc_reader_t *r, const char *path, const json_t *v)
{
    json_t *b = cv__rtype_coerce(CV_PROP_BOOLEAN, v);
    if (!b)
        cv__svc_bad_type(r, path, "boolean", v);
    return b;
}

/* {"distribution", "requireDomainDistribution"}, from a policy name or a
 * map {policy, require_domain_distribution}. */