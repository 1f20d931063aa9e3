/*
 * OS::Heat::SoftwareConfig and OS::Heat::CloudConfig — software
 * configurations kept as data: the resource is the stored config, and its
 * `config` attribute the configuration text.
 *
 * As in Heat, a config is immutable: no property is update_allowed, so any
 * change makes a new config (a replacement) and deletes the old one.
 * get_resource of a config is its text (cv__config_reference_id says why).
 * CloudConfig's text is "#cloud-config\n" followed by its `cloud_config`
 * map written as Heat's yaml.dump writes it (rtype_yaml_dump.c).
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cv_prop_schema_t software_config_props[] = {
    {"group", CV_PROP_STRING, false, "\"Heat::Ungrouped\"", false},
    {"config", CV_PROP_STRING, false, NULL, false},
    {"options", CV_PROP_MAP, false, NULL, false},
    {"inputs", CV_PROP_LIST, false, NULL, false},
    {"outputs", CV_PROP_LIST, false, NULL, false},
};

static const cv_prop_schema_t cloud_config_props[] = {
    {"cloud_config", CV_PROP_MAP, false, NULL, false},
};

static const char *const config_attrs[] = {"config", NULL};

/* ---- inputs and outputs (heat/engine/software_config_io.py) ---- */

static const char *const io_types[] = {"String", "Number",  "CommaDelimitedList",
                                       "Json",   "Boolean", NULL};
static const char *const input_keys[] = {"name",    "description",       "type",
                                         "default", "replace_on_change", NULL};
static const char *const output_keys[] = {"name", "description", "type", "error_output", NULL};

static bool listed(const char *const *names, const char *s)
{
    for (; *names; names++)
        if (strcmp(*names, s) == 0)
            return true;
    return false;
}

/* One input or output schema: a map of the known keys, `name` required,
 * `type` one of the five, the booleans booleans; Heat's messages. */
static int check_io(const json_t *io, const char *const *keys, const char *bool_key,
                    const char *where, char *errstr, size_t errstr_size)
{
    if (cv__rtype_contains_intrinsic(io))
        return 0;
    if (!json_is_object(io))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s: Software Config I/O Schema must be a dict", where);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)io, key, v)
    {
        if (!listed(keys, key))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s: Unknown Property %s", where,
                             key);
    }
    if (!json_object_get(io, "name"))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s: Property name not assigned",
                         where);
    const json_t *type = json_object_get(io, "type");
    if (type && !(json_is_string(type) && listed(io_types, json_string_value(type)))) {
        char *got = json_dumps(type, JSON_ENCODE_ANY);
        int rc = cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                           "%s.type: %s is not an allowed value [\"String\", \"Number\", "
                           "\"CommaDelimitedList\", \"Json\", \"Boolean\"]",
                           where, got ? got : "?");
        free(got);
        return rc;
    }
    const json_t *flag = json_object_get(io, bool_key);
    json_t *b = flag ? cv__rtype_coerce(CV_PROP_BOOLEAN, flag) : NULL;
    json_decref(b);
    if (flag && !b)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s.%s: expected boolean", where,
                         bool_key);
    return 0;
}

static int check_io_list(const json_t *list, const char *name, const char *const *keys,
                         const char *bool_key, const char *where, char *errstr, size_t errstr_size)
{
    size_t i;
    const json_t *io;
    json_array_foreach(list, i, io)
    {
        char at[512];
        snprintf(at, sizeof(at), "%s.%s[%zu]", where, name, i);
        int rc = check_io(io, keys, bool_key, at, errstr, errstr_size);
        if (rc)
            return rc;
    }
    return 0;
}

static int software_config_validate(const json_t *props, const char *where, char *errstr,
                                    size_t errstr_size)
{
    int rc = check_io_list(json_object_get(props, "inputs"), "inputs", input_keys,
                           "replace_on_change", where, errstr, errstr_size);
    return rc ? rc
              : check_io_list(json_object_get(props, "outputs"), "outputs", output_keys,
                              "error_output", where, errstr, errstr_size);
}

/* ---- the operations ---- */

static int publish(cv_rstate_t *st, json_t *config)
{
    if (!st->physical_id[0])
        cv__rtype_set_physical_id(st);
    if (!config)
        return CV_ENOMEM;
    return json_object_set_new(st->attrs, "config", config) ? CV_ENOMEM : 0;
}

/* A config without `config` shows null, as Heat's show_software_config. */
static int software_config_create(cv_rstate_t *st)
{
    const json_t *config = json_object_get(st->props, "config");
    return publish(st, config ? json_deep_copy(config) : json_null());
}

/* yaml.dump of an absent map is "null\n", as Heat writes it. */
static int cloud_config_create(cv_rstate_t *st)
{
    const json_t *map = json_object_get(st->props, "cloud_config");
    json_t *null = json_null();
    char *yaml = cv__yaml_dump(map ? map : null);
    json_decref(null);
    if (!yaml)
        return CV_ENOMEM;
    size_t n = strlen(yaml);
    char *text = malloc(n + 16);
    if (text)
        snprintf(text, n + 16, "#cloud-config\n%s", yaml);
    free(yaml);
    json_t *config = text ? json_string(text) : NULL;
    free(text);
    return publish(st, config);
}

/*
 * What get_resource of a config gives. Heat gives the stored config's id,
 * which config-aware properties (MultipartMime's parts, a server's
 * user_data) look up to get the text. Converge keeps configs as data and has
 * no store to look an id up in, so the reference is the text itself: the
 * Heat idiom `config: {get_resource: cfg}` then gives the consumer the same
 * text. A config without text keeps its physical id.
 */
const char *cv__config_reference_id(const char *resource_name, const char *physical_id,
                                    const json_t *attrs)
{
    (void)resource_name;
    (void)physical_id;
    return json_string_value(json_object_get(attrs, "config"));
}

int cv__config_remove(cv_rstate_t *st)
{
    (void)st;
    return 0;
}

cv_observed_t cv__config_observe(cv_rstate_t *st, cv_action_t action)
{
    (void)st;
    (void)action;
    return CV_OBSERVED_COMPLETE;
}

const cv_rtype_t cv__rtype_software_config = {
    .name = "OS::Heat::SoftwareConfig",
    .props = software_config_props,
    .nprops = sizeof(software_config_props) / sizeof(software_config_props[0]),
    .attrs = config_attrs,
    .validate = software_config_validate,
    .create = software_config_create,
    .update = software_config_create,
    .remove = cv__config_remove,
    .observe = cv__config_observe,
    .reference_id = cv__config_reference_id,
};

const cv_rtype_t cv__rtype_cloud_config = {
    .name = "OS::Heat::CloudConfig",
    .props = cloud_config_props,
    .nprops = sizeof(cloud_config_props) / sizeof(cloud_config_props[0]),
    .attrs = config_attrs,
    .validate = NULL,
    .create = cloud_config_create,
    .update = cloud_config_create,
    .remove = cv__config_remove,
    .observe = cv__config_observe,
    .reference_id = cv__config_reference_id,
};
