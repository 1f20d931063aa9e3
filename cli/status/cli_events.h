/*
 * cli_events — the entries of a stack's events stream as the events users
 * see. An entry is one event, or two: an action that settled at once is
 * stored as its COMPLETE event with a `begun` field, the reason of its
 * IN_PROGRESS event at the same time (docs/keyspace.md). Readers expand
 * it here, so each shows Heat's two events.
 */
#ifndef CLI_EVENTS_H
#define CLI_EVENTS_H

#include <hiredis/hiredis.h>
#include <jansson.h>
#include <stdbool.h>

/* An XRANGE entry: [id, [field, value, ...]], strings everywhere. */
bool cli_event_entry_ok(const redisReply *entry);

/* Appends the events of a well-formed entry to `out`, oldest first, each
 * {"time", "resource", "type", "physical_id", "action", "status", "reason",
 * "traversal", "worker"} (and "id", the entry's, when with_id). Returns how
 * many: 1, or 2 for a settled action. */
int cli_event_expand(const redisReply *entry, bool with_id, json_t *out);

#endif
