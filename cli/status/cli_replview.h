/*
 * cli_replview — what `convergectl replicas` and `convergectl health` show,
 * decided from the live model (cli_live.h) without Redis: one row per
 * replica of a stack's services (where the placement put it, what its
 * agent reports), and the health reports in the order a person reads them
 * (Error first), expired ones handled as Service Fabric does. Pure.
 */
#ifndef CLI_REPLVIEW_H
#define CLI_REPLVIEW_H

#include <jansson.h>

/* The replicas of `services` ([{"resource", "svc"}], the Converge::Service
 * resources of a stack and their service ids) in the model (its
 * "services", "assign", "report", "alive" parts), by service then index:
 * {"service", "svc", "index", "name", "rid", "node", "role", "status",
 *  "pid", "restarts", "health", "since", "endpoint", "endpoints", "reason"}.
 * status is the agent's report (starting, running, healthy, ...),
 * "assigned" before its first report, "node_down" while its node is down,
 * "outdated" while the agent runs another process digest than the spec's,
 * "unplaced" (node null, reason: the elimination sequence in short) when
 * the placement found no node. health: "ok" (healthy), "failing"
 * (unhealthy, backoff, failed), "pending" (starting, running) or "". */
json_t *cli_replica_rows(const json_t *model, const json_t *services);

/* The table of `convergectl replicas` (header first): SERVICE INDEX NAME
 * NODE ROLE STATUS PID RESTARTS HEALTH SINCE ENDPOINT; SINCE as an age at
 * `now`. */
json_t *cli_replica_table(const json_t *rows, double now);

/* The reports of the {cluster}:health hash (field -> report object), as a
 * list sorted by state (Error, Warning, Ok), then source and property. A
 * report whose timeToLive (s, after its "time") has passed is hidden when
 * removeWhenExpired is true, and otherwise shown as Error with "expired":
 * true (Service Fabric's rule); a report without timeToLive never expires.
 * A value that is not a report object is shown as an Error naming it. */
json_t *cli_health_rows(const json_t *reports, double now);

/* The table of `convergectl health` (header first): STATE SOURCE PROPERTY
 * AGE DESCRIPTION. */
json_t *cli_health_table(const json_t *rows, double now);

#endif
