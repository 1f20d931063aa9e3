/* The converge-observer process (internal). */
#ifndef CV_OBSERVER_H
#define CV_OBSERVER_H

#include "cv_io.h"
#include "cv_contract.h"

#include <jansson.h>

/* Observes the node named by `m` until settled; finishes `job` exactly once. */
void cv__observer_observe_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);

/* Gathering the replies of requests sent in one loop turn (pipelined):
 * each request's reply becomes a snapshot under its name; `cb` gets name ->
 * snapshot once all are in, or NULL when any failed. Sending holds the
 * gather open until cv__gather_sent. */
typedef struct cv__gather cv__gather_t;
typedef struct cv__gather_req cv__gather_req_t;
typedef void (*cv__gather_cb)(void *ud, json_t *snapshots);
cv__gather_t *cv__gather_new(cv__gather_cb cb, void *ud);
/* A request named `name` (the ud of its reply callback); NULL (the gather
 * fails) when out of memory. */
cv__gather_req_t *cv__gather_request(cv__gather_t *g, const char *name);
const char *cv__gather_name(const cv__gather_req_t *req);
/* The request's snapshot (taken), or NULL: it failed (also when it could
 * not be sent). Frees the request. */
void cv__gather_put(cv__gather_req_t *req, json_t *snapshot);
void cv__gather_sent(cv__gather_t *g);

/* Reads the child stacks `ids` (an array of stack ids) and calls `cb` with
 * id -> {"exists", "status", "traversal", "reason", "outputs"}, or NULL when
 * Redis failed. Returns non-zero when nothing could be sent (cb not called). */
typedef cv__gather_cb cv_children_cb;
int cv__observer_read_children(cv_worker_t *w, const json_t *ids, cv_children_cb cb, void *ud);

/* Reads the cluster state of the Converge::Service versions `wants` (svc
 * id -> true to read the reports of every node, as a delete needs; false
 * for the nodes of its placement) and calls `cb` with svc id -> snapshot
 * (its shape: cv_service.h), or NULL when Redis failed. Returns non-zero
 * when nothing could be sent (cb not called). */
typedef cv__gather_cb cv_services_cb;
int cv__observer_read_services(cv_worker_t *w, const json_t *wants, cv_services_cb cb, void *ud);

#endif
