/* The converge-observer process (internal). */
#ifndef CV_OBSERVER_H
#define CV_OBSERVER_H

#include "cv_kafka.h"
#include "cv_msg.h"
#include "cv_worker.h"

#include <jansson.h>

/* Observes the node named by `m` until settled; finishes `job` exactly once. */
void cv__observer_observe_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);

/* Reads the child stacks `ids` (an array of stack ids) and calls `cb` with
 * id -> {"exists", "status", "traversal", "reason", "outputs"}, or NULL when
 * Redis failed. Returns non-zero when nothing could be sent (cb not called). */
typedef void (*cv_children_cb)(void *ud, json_t *snapshots);
int cv__observer_read_children(cv_worker_t *w, const json_t *ids, cv_children_cb cb, void *ud);

/* Reads the cluster state of the Converge::Service versions `wants` (svc
 * id -> true to read the reports of every node, as a delete needs; false
 * for the nodes of its placement) and calls `cb` with svc id -> snapshot
 * (its shape: cv_service.h), or NULL when Redis failed. Returns non-zero
 * when nothing could be sent (cb not called). */
typedef void (*cv_services_cb)(void *ud, json_t *snapshots);
int cv__observer_read_services(cv_worker_t *w, const json_t *wants, cv_services_cb cb, void *ud);

#endif
