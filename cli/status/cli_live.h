/*
 * cli_live — reading the live cluster model from Redis (docs/services.md)
 * for the cluster verbs of convergectl (nodes, node, replicas, health,
 * place --explain) as one JSON document, in a few pipelined round trips:
 *
 *   {"now": Unix seconds,
 *    "settings": the {cluster}:settings object, or null,
 *    "nodes":    {name: node description (the {cluster}:nodes value)},
 *    "node":     {name: {field: value} of {cluster}:node:<name>; `load` parsed},
 *    "alive":    {name: ms left of {cluster}:alive:<name>, 0 when absent},
 *    "assign":   {name: {rid: replica spec}},
 *    "report":   {name: {rid: replica report}},
 *    "services": {svc: {field: value} of {cluster}:svc:<svc>; `spec`,
 *                 `placement`, `unplaced` and `blocklist` parsed}}
 *
 * "services" is read only when asked. A stored value that is not the JSON
 * it should be becomes {"error": "not JSON: ..."} (an object for nodes,
 * specs, reports), so one bad record never hides the rest; the pure views
 * (cli_nodemap.h, cli_replview.h, cli_explain.h) show it as such. No policy
 * here: I/O only.
 */
#ifndef CLI_LIVE_H
#define CLI_LIVE_H

#include "cli_common.h"

#include <jansson.h>

enum {
    CLI_LIVE_NODES = 1,    /* nodes, settings, node hashes, alive, assign, report */
    CLI_LIVE_SERVICES = 2, /* every service of {cluster}:services */
};

/* Reads the parts `what` of the model into *out (a new reference): CLI_OK
 * or CLI_SERVICE (reported). */
int cli_live_read(cli_t *cli, unsigned what, json_t **out);

/* Reads the hashes {cluster}:svc:<svc> of the ids in `svcs` (an array of
 * strings) into `into` (svc -> record, as in "services"): CLI_OK or
 * CLI_SERVICE. A service whose hash is gone has no entry. */
int cli_live_read_services(cli_t *cli, const json_t *svcs, json_t *into);

/* The Converge::Service resources of the stack `name` (id `id`), or only
 * its resource `only` (NULL: all), that have a service id yet, as
 * [{"resource", "svc"}] in template order: CLI_OK, CLI_USAGE (`only` is
 * no Converge::Service resource of the stack; reported) or CLI_SERVICE. */
int cli_live_stack_services(cli_t *cli, const char *name, const char *id, const char *only,
                            json_t **out);

/* What the cluster resource manager holds, for cli_crmview.h: {"now",
 * "lease": {cluster}:crm's value or null, "lease_ms": its PTTL (0: none),
 * "status": {field: text} of {cluster}:crm:status} into *out: CLI_OK or
 * CLI_SERVICE. */
int cli_live_read_crm(cli_t *cli, json_t **out);

/* The reports of {cluster}:health (field -> parsed report) into *out:
 * CLI_OK or CLI_SERVICE. */
int cli_live_read_health(cli_t *cli, json_t **out);

#endif
