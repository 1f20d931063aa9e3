/*
 * live_status — {cluster}:crm:status as the holder keeps it (docs/crm.md
 * "Status"): the phases set what they did, and only the fields whose text
 * changed since they were last written go out, in one HSET with the next
 * lease renewal (crm_lease.lua writes them only while the lease is the
 * writer's, so a former holder never overwrites its successor's status).
 */
#include "live_internal.h"

#include <stdlib.h>
#include <string.h>

void cv__crm_status_init(cv__crm_status_t *st)
{
    st->written = json_object();
    st->pending = json_object();
}

void cv__crm_status_free(cv__crm_status_t *st)
{
    json_decref(st->written);
    json_decref(st->pending);
    st->written = st->pending = NULL;
}

void cv__crm_status_set(cv__crm_status_t *st, const char *field, const json_t *value)
{
    json_t *text;
    if (json_is_string(value)) {
        text = json_copy((json_t *)value);
    } else {
        char *dumped = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(13));
        text = json_string(dumped ? dumped : "null");
        free(dumped);
    }
    if (json_equal(json_object_get(st->written, field), text))
        json_object_del(st->pending, field);
    else
        json_object_set(st->pending, field, text);
    json_decref(text);
}

void cv__crm_status_phase(cv__crm_status_t *st, const char *phase, double at, double ms, int moves)
{
    json_t *v = json_pack("{s:f, s:f, s:i}", "at", (double)(long long)(at * 1000) / 1000, "ms",
                          (double)(long long)(ms * 10) / 10, "moves", moves);
    cv__crm_status_set(st, phase, v);
    json_decref(v);
}

char *cv__crm_status_take(cv__crm_status_t *st)
{
    if (json_object_size(st->pending) == 0)
        return NULL;
    char *text = json_dumps(st->pending, JSON_COMPACT);
    json_object_update(st->written, st->pending);
    json_object_clear(st->pending);
    return text;
}

void cv__crm_status_forget(cv__crm_status_t *st)
{
    /* What was written stays to be written again: the pending set becomes
     * everything known, so a new holder's first renewal writes it whole. */
    json_object_update_missing(st->pending, st->written);
    json_object_clear(st->written);
}
