/*
 * reconcile_rollout — replacing the processes of a service whose process
 * spec (its digest) changed. Without an update policy every kept replica
 * whose assigned spec runs another digest gets a new replica id on its node
 * at once: the agent stops the old process and starts the new one. A
 * service's `update_policy` makes it a rolling update, and `convergectl
 * upgrade` one by upgrade domain (docs/crm.md "Rolling updates").
 */
#include "reconcile_internal.h"

#include <string.h>

void cv__rc_renew(rc_ctx_t *x)
{
    size_t i;
    json_t *e;
    json_array_foreach(x->placement, i, e)
    {
        const char *node = json_string_value(json_object_get(e, "node"));
        const char *rid = json_string_value(json_object_get(e, "rid"));
        json_t *spec = cv__rc_json(cv__rc_assigned(x, node, rid));
        const char *had = json_string_value(json_object_get(spec, "digest"));
        bool changed = spec && strcmp(had ? had : "", x->digest) != 0;
        json_decref(spec);
        if (!changed)
            continue;
        int index = (int)json_integer_value(json_object_get(e, "index"));
        char fresh[512];
        cv__rc_rid(fresh, sizeof(fresh), x->svc, index, x->gen + 1);
        json_object_set_new(e, "rid", json_string(fresh));
        json_object_set_new(e, "since", json_real(x->now));
        cv__rc_event(x, index, "PLACE", "COMPLETE",
                     "replica %s replaced on %s (process spec changed)", fresh, node);
    }
}
