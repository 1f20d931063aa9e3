/*
 * template_facade — what resource_facade may ask for. The function lets a
 * template resource's template read its parent resource's metadata,
 * deletion_policy and update_policy (Heat's ResourceFacade); the engine
 * puts the parent's values into the child's template when it plans the
 * child stack (engine/hot/rtype_nested.c), so here it is only checked.
 */
#include "cv__template_internal.h"

#include <string.h>

static const char *const facade_keys[] = {"metadata", "deletion_policy", "update_policy"};

bool cv__facade_key(const json_t *arg)
{
    for (size_t i = 0; json_is_string(arg) && i < sizeof(facade_keys) / sizeof(facade_keys[0]); i++)
        if (strcmp(json_string_value(arg), facade_keys[i]) == 0)
            return true;
    return false;
}
