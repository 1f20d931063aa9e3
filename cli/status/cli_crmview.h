/*
 * cli_crmview — what `convergectl crm` and `convergectl nodes --map` show of
 * the cluster resource manager (docs/crm.md "The role", "Status"), decided
 * from what Redis holds without Redis. Pure.
 *
 * The input (cmd_crm.c reads it):
 *   {"now": Unix s, "lease": the value of {cluster}:crm or null,
 *    "lease_ms": ms the lease still lives (0: none),
 *    "status": {field: text} of {cluster}:crm:status}
 *
 * The document (`crm -o json`):
 *   {"holder": worker id or null, "epoch": n or null (from the lease value
 *    "<worker id>:<epoch>"; a value without ":<digits>" is a worker id),
 *    "lease_ms", "status": false when the hash is empty,
 *    "status_holder", "status_epoch" (the status's `holder` and `epoch`),
 *    "since", "refresh", "placement", "constraint", "balancing",
 *    "imbalance", "window", "why", "state", and every other field of the
 *    hash: each as written (numbers as numbers, JSON fields parsed; a
 *    field that is not what the contract says is null),
 *    "errors": {field: why it could not be read} (only when one could not)}
 * A hash written half, or by a newer writer, shows what it has: nothing in
 * it makes the view fail.
 */
#ifndef CLI_CRMVIEW_H
#define CLI_CRMVIEW_H

#include <jansson.h>

/* The document of `raw` (a new object). */
json_t *cli_crm_doc(const json_t *raw);

/* The text of `convergectl crm` for the document, at Unix time `now`: the
 * holder and epoch (or that no process holds the role), the last run of
 * each phase (how long ago, ms, moves), the imbalance table per metric and
 * node type, the moves made and throttled in the window, and why nothing
 * moved. A malloc'd string. */
char *cli_crm_text(const json_t *doc, double now);

/* The balance lines under `nodes --map`: "Balance (last balancing pass,
 * 3.2s ago):" then one line per metric and node type, "CPU max/min 3.00 →
 * 1.20 (threshold 2, imbalanced)". A malloc'd string, empty when the
 * status has no imbalance. */
char *cli_crm_balance_text(const json_t *doc, double now);

#endif
