/*
 * rtype_registry — the table of resource types Converge knows.
 *
 * A static table: types are found by their exact Heat name. Plugin types
 * (dlopen) will be appended here at start-up; built-ins come first.
 */
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <string.h>

static const cv_rtype_t *const builtin_types[] = {
    &cv__rtype_none,
    &cv__rtype_test_resource,
    &cv__rtype_random_string,
    &cv__rtype_value,
    &cv__rtype_resource_group,
    &cv__rtype_resource_chain,
    &cv__rtype_heat_stack,
    &cv__rtype_delay,
    &cv__rtype_software_config,
    &cv__rtype_cloud_config,
    &cv__rtype_multipart_mime,
    &cv__rtype_wait_condition_handle,
    &cv__rtype_wait_condition,
    &cv__rtype_autoscaling_group,
    &cv__rtype_scaling_policy,
    &cv__rtype_service,
};

const cv_rtype_t *cv_rtype_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof(builtin_types) / sizeof(builtin_types[0]); i++)
        if (strcmp(builtin_types[i]->name, name) == 0)
            return builtin_types[i];
    return NULL;
}

const cv_rtype_t *cv_rtype_lookup(const char *name)
{
    const cv_rtype_t *t = cv_rtype_find(name);
    return t || !cv_rtype_is_template_file(name) ? t : &cv__rtype_template;
}

/* "show" (every attribute at once) is Heat's attribute of every resource. */
bool cv_rtype_has_attr(const cv_rtype_t *type, const char *attr)
{
    if (strcmp(attr, "show") == 0)
        return true;
    for (const char *const *a = type->attrs; a && *a; a++)
        if (strcmp(*a, attr) == 0)
            return true;
    return false;
}

const char *cv_rtype_reference_id(const char *type_name, const char *resource_name,
                                  const char *physical_id, const json_t *attrs)
{
    const cv_rtype_t *t = cv_rtype_lookup(type_name);
    const char *ref =
        t && t->reference_id ? t->reference_id(resource_name, physical_id, attrs) : NULL;
    return ref ? ref : physical_id;
}
