/*
 * OS::Heat::None — does nothing, instantly.
 *
 * It exists to stub out any other resource through the environment's
 * resource_registry, so it accepts any properties (no schema) and, as in
 * Heat, a change of them never needs an update or a replacement.
 */
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

static const char *const none_attrs[] = {NULL};

static int none_create(cv_rstate_t *st)
{
    cv__rtype_set_physical_id(st);
    return 0;
}

static int none_update(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        cv__rtype_set_physical_id(st);
    return 0;
}

static int none_remove(cv_rstate_t *st)
{
    (void)st;
    return 0;
}

static cv_observed_t none_observe(cv_rstate_t *st, cv_action_t action)
{
    (void)st;
    (void)action;
    return CV_OBSERVED_COMPLETE;
}

const cv_rtype_t cv__rtype_none = {
    .name = "OS::Heat::None",
    .props = NULL,
    .nprops = 0,
    .attrs = none_attrs,
    .validate = NULL,
    .create = none_create,
    .update = none_update,
    .remove = none_remove,
    .observe = none_observe,
    .never_updates = true,
};
