/*
 * rtype_state — helpers every built-in type uses on its cv_rstate_t.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdio.h>

void cv__rtype_set_physical_id(cv_rstate_t *st)
{
    snprintf(st->physical_id, sizeof(st->physical_id), "%s-%s-%.12s", st->stack_name,
             st->resource_name, st->uuid ? st->uuid : "");
}

double cv__rtype_data_number(const json_t *data, const char *key, double dflt)
{
    const json_t *v = json_object_get(data, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

bool cv__rtype_data_bool(const json_t *data, const char *key)
{
    return json_is_true(json_object_get(data, key));
}

int cv_rtype_adopt(cv_rstate_t *st, const char *external_id)
{
    snprintf(st->physical_id, sizeof(st->physical_id), "%s", external_id);
    return json_object_set_new(st->data, "external_id", json_string(external_id)) ? CV_ENOMEM : 0;
}

const char *cv_rtype_adopted_id(const json_t *data)
{
    return json_string_value(json_object_get(data, "external_id"));
}
