/*
 * web_api — the JSON documents of converge-web's API (docs/web.md), read
 * from Redis with convergectl's readers (cli_stack.h, cli_live.h,
 * cli_waiting_io.h, ...) and shaped by their pure views and web_view.h.
 * Only reads: no command here writes (the integration test runs the
 * console as a Redis user allowed nothing else).
 *
 * The reads are convergectl's synchronous ones, a few pipelined round
 * trips per document; web_reads.h runs them off the loop.
 */
#ifndef WEB_API_H
#define WEB_API_H

#include <jansson.h>

#include "cv_status.h"
#include "web_route.h"

/* The document for a route other than WEB_ROUTE_ASSET, WEB_ROUTE_DEAD and
 * WEB_ROUTE_STACK_STREAM, with the request's query: *status is 200, 400
 * (a bad parameter), 404 (no such stack or service) or 503 (Redis did not
 * answer as expected); a document {"error": why} unless 200. */
json_t *web_api_get(cli_t *cli, const web_route_t *route, const char *query, int *status);

/* What the stack page's stream sends: the stack's status and progress,
 * "waiting" when in progress, and its graph (web_view_graph) in one
 * document. NULL with *status 404 or 503 (as above). */
json_t *web_api_stack_graph(cli_t *cli, const char *stack, int *status);

/* {"error": why} with the message formatted. */
json_t *web_api_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
