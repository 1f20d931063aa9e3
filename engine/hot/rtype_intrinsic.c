/*
 * rtype_intrinsic — recognising intrinsic-function calls in property values.
 *
 * Schema checks run before the template is resolved, so a value such as
 * {"get_param": "size"} must be told apart from a literal map. The names are
 * HOT's functions up to 2018-08-31 plus the CloudFormation-style "Fn::*" and
 * "Ref", which HOT templates may still use.
 */
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <string.h>

static const char *const intrinsic_names[] = {
    "get_param",
    "get_resource",
    "get_attr",
    "str_replace",
    "list_join",
    "get_file",
    "repeat",
    "digest",
    "str_split",
    "map_merge",
    "map_replace",
    "yaql",
    "if",
    "equals",
    "not",
    "and",
    "or",
    "contains",
    "filter",
    "make_url",
    "list_concat",
    "list_concat_unique",
    "str_replace_strict",
    "str_replace_vstrict",
    "resource_facade",
    "get_input",
    "Ref",
};

static bool is_intrinsic_name(const char *key)
{
    if (strncmp(key, "Fn::", 4) == 0)
        return true;
    for (size_t i = 0; i < sizeof(intrinsic_names) / sizeof(intrinsic_names[0]); i++)
        if (strcmp(intrinsic_names[i], key) == 0)
            return true;
    return false;
}

bool cv_is_intrinsic(const json_t *v)
{
    if (!json_is_object(v) || json_object_size(v) != 1)
        return false;
    void *it = json_object_iter((json_t *)v);
    return is_intrinsic_name(json_object_iter_key(it));
}

bool cv__rtype_contains_intrinsic(const json_t *v)
{
    if (cv_is_intrinsic(v))
        return true;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (cv__rtype_contains_intrinsic(json_array_get(v, i)))
                return true;
    } else if (json_is_object(v)) {
        const char *key;
        const json_t *item;
        json_object_foreach((json_t *)v, key, item)
        {
            if (cv__rtype_contains_intrinsic(item))
                return true;
        }
    }
    return false;
}
