/*
 * cli_explain — `convergectl place --explain STACK SERVICE`: the live
 * placement of one running service, explained with the placement library on
 * the live model (cli_live.h). Pure: no Redis, no new policy. The inputs of
 * cv_place are built as the live engine builds them (docs/services.md): a
 * node is up while its heartbeat lives and it is enabled and not
 * blocklisted for the service (else down or disabled); its load is the
 * declared load of the replicas of other services assigned to it; the
 * service's own replicas count through the layout.
 */
#ifndef CLI_EXPLAIN_H
#define CLI_EXPLAIN_H

#include <jansson.h>
#include <stddef.h>

/* Explains service `svc` of the model (its "services" entry must exist):
 *   {"svc", "stack_name", "resource", "state", "gen",
 *    "placement": the live placement [{"index", "rid", "node", "role", "since"}],
 *    "unplaced": the live engine's [{"index", "eliminationSequence"}],
 *    "rejected": why the engine rejected the service, or null,
 *    "check": cv_place with every live replica kept: {"placements",
 *             "unplaced" (each with its eliminationSequence), "health",
 *             "warnings", "rejected", "policy"},
 *    "replicas": [{"index", "node" (live, or null), "role", "choice" (where
 *                  cv_place puts this index with the others kept, or null),
 *                  "eliminationSequence" (when it finds no node), "moves":
 *                  choice differs from node}]}
 * NULL with `errstr` when the model cannot be loaded (no such service, a
 * spec or cluster the placement library refuses: its message). */
json_t *cli_explain(const json_t *model, const char *svc, char *errstr, size_t errstr_size);

/* The explanation as text for a person. A malloc'd string. */
char *cli_explain_text(const json_t *doc);

#endif
