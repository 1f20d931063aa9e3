/*
 * cv_service — the pure parts of Converge::Service that the engine and the
 * observer use beyond the type's table (docs/services.md): the service id,
 * the service spec the live placement engine and the agents read, the
 * check of its metrics against the live cluster, and the shape of the
 * cluster snapshot an observer hands to the type's observe().
 *
 * Converge::Service is one resource (not a nested stack): its physical id
 * is its service id, and its create / update / delete write the service's
 * spec into the cluster (the CHECK job's step, engine/convergence/checkjob_service.c)
 * for scheduler/live to place. No I/O here.
 */
#ifndef CV_SERVICE_H
#define CV_SERVICE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CV_SERVICE_TYPE "Converge::Service"

/* How often an observer looks at a service that is not settled yet. */
#define CV_SERVICE_LOOK_SECS 0.3

/* "<stack id>.<resource>.<first 8 characters of uuid>" into `out` (at least
 * CV_PHYSID_MAX bytes): the same version always names the same service. */
void cv_service_id(char *out, size_t size, const char *stack, const char *resource,
                   const char *uuid);

/* Whether `type_name` is Converge::Service. */
bool cv_service_is(const char *type_name);

#define CV_SERVICE_WARNING_MAX 256

/* The properties (as written) that need a node agent's permission: user
 * root or another user, a fixed host port below 1024, an absolute workdir,
 * LD_* variables. Writes up to `max` lines ("ports[0].port: host port 22 is
 * below 1024: runs only on nodes whose agent has --allow low-ports") and
 * returns how many. What `convergectl validate` warns about: the agents
 * decide (docs/security.md). */
size_t cv_service_privileges(const json_t *props, char (*out)[CV_SERVICE_WARNING_MAX], size_t max);

/*
 * The service spec ({cluster}:svc:<svc> field `spec`) of a version with
 * properties `props` (schema applied, resolved): the placement
 * description cv_service_load reads (name = `svc`, serviceType =
 * `resource`, ...) plus "process", the replica spec's process parts with
 * their defaults and "digest". Returns a new object, or NULL with errstr.
 */
json_t *cv_service_spec(const json_t *props, const char *svc, const char *resource, char *errstr,
                        size_t errstr_size);

/* Makes the spec's update go one upgrade domain at a time (`convergectl
 * upgrade`): its `updatePolicy` (the defaults when it has none) gets
 * "byUpgradeDomain": true. */
void cv_service_by_upgrade_domain(json_t *spec);

/* The hex digest of the process parts of `props` (16 characters into
 * `out`, at least 17 bytes): a change replaces the replicas; the replica
 * count, the metrics and the placement rules are not part of it. */
int cv_service_digest(const json_t *props, char *out);

/*
 * The first metric of `spec` that the live cluster does not know, or NULL
 * when all are known: known are the metrics of `settings` (the cluster
 * manifest without nodes: its node types' "capacities", its settings'
 * buffer and overbooking percentages, a "metrics" list), those of the
 * nodes' "capacities" (`nodes`: an array of node descriptions) and Service Fabric's built-in ones
 * (PrimaryCount, ReplicaCount, Count). A cluster with neither settings nor nodes knows nothing yet
 * and accepts every metric (its nodes join later).
 */
const char *cv_service_unknown_metric(const json_t *spec, const json_t *settings,
                                      const json_t *nodes);

/*
 * The snapshot an observer puts into a Converge::Service version's data as
 * "cluster" before observe() (which takes it out again):
 *   {"exists": bool, "state": "active"|"deleting"|"", "gen": int,
 *    "placement": [{"index", "rid", "node", "role", "since"}],
 *    "unplaced": [{"index", "eliminationSequence"}],
 *    "rejected": "" or why,
 *    "blocked": "" or why every eligible node is blocklisted for it (an
 *               index waits for nothing but the blocklist to expire),
 *    "nodes": {node: {"up": bool, "address": "..."}},
 *    "reports": {rid: replica report},
 *    "rollout": the service's rolling update (docs/crm.md) or null}
 * `reports` holds the reports of this service's replica ids on the nodes
 * of its placement (of every node while it is being deleted).
 */

#endif
