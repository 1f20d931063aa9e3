/*
 * cv_cluster — the placement data model: the cluster (nodes, fault and
 * upgrade domains, properties, capacities, loads, settings), a service to
 * place, and a layout of replicas already placed. Loaded from JSON (or YAML)
 * manifests in our own format or Service Fabric's ClusterConfig.json.
 * Pure logic, no I/O: callers hand in parsed trees.
 *
 * Sources: Service Fabric's Cluster Resource Manager documentation ("Describe
 * a cluster", "Integration with cluster management", "Balancing your
 * cluster") and the Mesos scheduling document of BCS, Tencent's BlueKing
 * Container Service (bk-bcs).
 */
#ifndef CV_CLUSTER_H
#define CV_CLUSTER_H

#include "cv_base.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CV_MAX_METRICS 32
#define CV_METRIC_NAME_MAX 64

typedef enum { CV_NODE_UP = 0, CV_NODE_DOWN = 1, CV_NODE_DISABLED = 2 } cv_node_status_t;

/* Constraint priorities: -1 disabled, 0 hard, 1 soft, 2 optimization. */
typedef struct cv_priorities {
    int placement, capacity, affinity, fault_domain, upgrade_domain, preferred_location;
} cv_priorities_t;

typedef struct cv_metric {
    char name[CV_METRIC_NAME_MAX];
    double buffer;   /* nodeBufferPercentage, 0..1 (0 when not set) */
    double overbook; /* nodeOverbookingPercentage, 0..1, or -1 for infinite (0 when not set) */
} cv_metric_t;

typedef struct cv_node {
    char *name;
    char *type;
    char *fault_domain; /* as written: "fd:/dc1/rack1" */
    char **fd_path;     /* ["dc1", "rack1"]: one entry per FD level */
    size_t fd_depth;
    char *upgrade_domain;
    json_t *props; /* typed: string, true/false, integer; includes NodeName and NodeType */
    int64_t capacity[CV_MAX_METRICS]; /* per cluster metric index; -1 = unlimited */
    int64_t load[CV_MAX_METRICS];     /* load reported or from the layout */
    cv_node_status_t status;
} cv_node_t;

typedef struct cv_cluster {
    cv_node_t *nodes; /* sorted by name: every iteration is deterministic */
    size_t nnodes;
    cv_metric_t metrics[CV_MAX_METRICS]; /* every metric named by a node, type or setting */
    size_t nmetrics;
    cv_priorities_t priorities;
    CV_VEC(char *) warnings; /* manifest warnings (unbalanced FD tree, nodes % FDs != 0, ...) */
} cv_cluster_t;

typedef enum {
    CV_DIST_ADAPTIVE = 0,
    CV_DIST_MAX_DIFFERENCE = 1,
    CV_DIST_QUORUM_SAFE = 2
} cv_distribution_t;

typedef struct cv_service_metric {
    char name[CV_METRIC_NAME_MAX];
    int64_t primary_load, secondary_load;
    double weight; /* "zero" 0, "low" 0.1, "medium" 0.3, "high" 1 (Service Fabric's) */
} cv_service_metric_t;

typedef struct cv_pcexpr cv_pcexpr_t;           /* cv_pcexpr.h */
typedef struct cv_mconstraint cv_mconstraint_t; /* cv_mesos.h */

typedef struct cv_service {
    char *name;
    char *service_type;
    int replicas;
    bool stateful;          /* one primary, the rest secondaries */
    char *placement_text;   /* placementConstraints as written, or NULL */
    cv_pcexpr_t *placement; /* parsed, or NULL */
    cv_service_metric_t metrics[CV_MAX_METRICS];
    size_t nmetrics;
    cv_distribution_t distribution;
    bool require_domain_distribution;
    cv_mconstraint_t *constraints; /* Mesos/BCS constraints, or NULL */
    char *affinity_service;        /* affinity.service, or NULL */
} cv_service_t;

typedef enum { CV_ROLE_PRIMARY = 0, CV_ROLE_SECONDARY = 1, CV_ROLE_INSTANCE = 2 } cv_role_t;

typedef struct cv_replica {
    int index; /* 0..replicas-1 */
    cv_role_t role;
    size_t node; /* index into cluster->nodes */
} cv_replica_t;

/* Services already in the cluster (their loads count) and their replicas. */
typedef struct cv_placed_service {
    cv_service_t *service;
    cv_replica_t *replicas;
    size_t nreplicas;
} cv_placed_service_t;

typedef struct cv_layout {
    cv_placed_service_t *services;
    size_t nservices;
} cv_layout_t;

/* Loads a cluster manifest (our format or Service Fabric's ClusterConfig.json,
 * detected by its keys). Errors name `fname`, the JSON path and the problem. */
int cv_cluster_load(const json_t *manifest, const char *fname, cv_cluster_t **out, char *errstr,
                    size_t errstr_size);
void cv_cluster_free(cv_cluster_t *c);

/* Index of a node by name (binary search), or -1. */
long cv_cluster_node(const cv_cluster_t *c, const char *name);
/* Index of a metric by name, or -1. */
int cv_cluster_metric(const cv_cluster_t *c, const char *name);

int cv_service_load(const json_t *desc, const char *fname, cv_service_t **out, char *errstr,
                    size_t errstr_size);
void cv_service_free(cv_service_t *s);

/* Loads a layout ({"services": [{<service description>, "placements":
 * [{"replica", "role", "node"}]}]}) against a cluster; adds the layout's loads
 * to the nodes' loads. */
int cv_layout_load(const json_t *layout, const char *fname, cv_cluster_t *cluster,
                   cv_layout_t **out, char *errstr, size_t errstr_size);
void cv_layout_free(cv_layout_t *l);

#endif
