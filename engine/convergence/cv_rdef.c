#include "cv_rdef.h"

#include <string.h>

static const char *const policy_names[] = {
    [CV_RDEF_DELETE] = "Delete",
    [CV_RDEF_RETAIN] = "Retain",
    [CV_RDEF_SNAPSHOT] = "Snapshot",
};

const char *cv_rdef_policy_name(cv_rdef_policy_t p)
{
    return policy_names[p];
}

/* The template parser writes only the canonical spellings: another one is
 * a definition some other writer made, not one to guess at. */
static int policy_of(const json_t *v, cv_rdef_policy_t *p, char *errstr, size_t errstr_size)
{
    *p = CV_RDEF_DELETE;
    if (!v || json_is_null(v))
        return 0;
    const char *s = json_string_value(v);
    for (size_t i = 0; s && i < sizeof(policy_names) / sizeof(*policy_names); i++) {
        if (strcmp(s, policy_names[i]) == 0) {
            *p = (cv_rdef_policy_t)i;
            return 0;
        }
    }
    return cv_seterr(errstr, errstr_size, CV_EPROTO,
                     "deletion_policy must be Delete, Retain or Snapshot");
}

static int depends_of(const json_t *v, cv_rdef_names_t *names, char *errstr, size_t errstr_size)
{
    if (!v)
        return 0;
    if (!json_is_array(v))
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "depends must be a list of names");
    if (cv_vec_reserve(names, json_array_size(v)) != 0)
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    size_t i;
    const json_t *name;
    json_array_foreach(v, i, name)
    {
        if (!json_is_string(name))
            return cv_seterr(errstr, errstr_size, CV_EPROTO, "depends must be a list of names");
        names->v[names->n++] = json_string_value(name);
    }
    return 0;
}

/* A member of another shape reads as absent (a type that is not a string
 * names no type, and the decision then says it could not be found); only
 * the policy and the depends list, which become C types, are checked. */
static int members_of(cv_rdef_t *d, json_t *o, char *errstr, size_t errstr_size)
{
    const char *type = json_string_value(json_object_get(o, "type"));
    d->type = type ? type : "";
    d->declared_type = json_string_value(json_object_get(o, "declared_type"));
    d->props = json_object_get(o, "properties");
    d->metadata = json_object_get(o, "metadata");
    d->update_policy = json_object_get(o, "update_policy");
    d->external_id = json_object_get(o, "external_id");
    d->env = json_object_get(o, "env");
    d->nested = json_is_true(json_object_get(o, "nested"));
    const json_t *restricted = json_object_get(o, "restricted_actions");
    d->restrict_update = json_is_true(json_object_get(restricted, "update"));
    d->restrict_replace = json_is_true(json_object_get(restricted, "replace"));
    int rc =
        policy_of(json_object_get(o, "deletion_policy"), &d->deletion_policy, errstr, errstr_size);
    return rc ? rc : depends_of(json_object_get(o, "depends"), &d->depends, errstr, errstr_size);
}

int cv_rdef_decode(cv_rdef_t *d, const char *text, char *errstr, size_t errstr_size)
{
    memset(d, 0, sizeof(*d));
    json_error_t jerr;
    json_t *o = json_loads(text, 0, &jerr);
    if (!json_is_object(o)) {
        json_decref(o);
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "definition is not a JSON object%s%s",
                         o ? "" : ": ", o ? "" : jerr.text);
    }
    int rc = members_of(d, o, errstr, errstr_size);
    if (rc) {
        cv_vec_free(&d->depends);
        memset(d, 0, sizeof(*d));
        json_decref(o);
        return rc;
    }
    d->doc = o;
    return 0;
}

void cv_rdef_clear(cv_rdef_t *d)
{
    cv_vec_free(&d->depends);
    json_decref(d->doc);
    memset(d, 0, sizeof(*d));
}

char *cv_rdef_depends_json(const cv_rdef_t *d)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < d->depends.n; i++)
        json_array_append_new(a, json_string(d->depends.v[i]));
    char *s = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return s;
}
