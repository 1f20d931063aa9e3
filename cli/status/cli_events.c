#include "cli_events.h"

#include "cli_output.h"

#include <stdlib.h>
#include <string.h>

bool cli_event_entry_ok(const redisReply *e)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_ARRAY)
        return false;
    const redisReply *f = e->element[1];
    bool ok = f->elements % 2 == 0;
    for (size_t i = 0; ok && i < f->elements; i++)
        ok = f->element[i]->type == REDIS_REPLY_STRING;
    return ok;
}

/* The event the entry's fields say; *begun the `begun` field when present. */
static json_t *event_of(const redisReply *e, bool with_id, const redisReply **begun)
{
    json_t *ev = json_pack("{s:f, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s}", "time", 0.0, "resource",
                           "", "type", "", "physical_id", "", "action", "", "status", "", "reason",
                           "", "traversal", (json_int_t)0, "worker", "");
    if (with_id)
        json_object_set_new(ev, "id", json_string(e->element[0]->str));
    const redisReply *f = e->element[1];
    *begun = NULL;
    for (size_t i = 0; i + 1 < f->elements; i += 2) {
        const char *name = f->element[i]->str;
        const redisReply *v = f->element[i + 1];
        if (strcmp(name, "time") == 0)
            json_object_set_new(ev, name, json_real(strtod(v->str, NULL)));
        else if (strcmp(name, "traversal") == 0)
            json_object_set_new(ev, name, json_integer(strtoll(v->str, NULL, 10)));
        else if (strcmp(name, "begun") == 0)
            *begun = v;
        else if (strcmp(name, "id") != 0 && json_object_get(ev, name))
            json_object_set_new(ev, name, cli_json_strn(v->str, v->len));
    }
    return ev;
}

int cli_event_expand(const redisReply *entry, bool with_id, json_t *out)
{
    const redisReply *begun;
    json_t *ev = event_of(entry, with_id, &begun);
    if (begun) {
        json_t *first = json_copy(ev);
        json_object_set_new(first, "status", json_string("IN_PROGRESS"));
        json_object_set_new(first, "reason", cli_json_strn(begun->str, begun->len));
        json_array_append_new(out, first);
    }
    json_array_append_new(out, ev);
    return begun ? 2 : 1;
}
