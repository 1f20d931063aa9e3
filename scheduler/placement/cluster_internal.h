/*
 * cluster_internal — what the loaders of the placement data model share
 * (cv_cluster.c, cluster_read.c, cluster_node.c, cluster_settings.c,
 * cluster_sf.c, cluster_warn.c, service_load.c, layout_load.c): one loading
 * context, messages that name the file, the JSON path and the rule broken,
 * typed readers of JSON values, the metric table and the node builder both
 * manifest formats feed. Internal symbols are cv__cluster_*.
 * Not a public surface: only the files above include it.
 */
#ifndef CV_CLUSTER_INTERNAL_H
#define CV_CLUSTER_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cv_cluster.h"

#define CV__CLUSTER_PATH_MAX 512

/* The largest load or capacity accepted: sums of many of them stay far
 * below INT64_MAX, so no addition in the engine can overflow. */
#define CV__CLUSTER_QTY_MAX INT64_C(1000000000000000)

/* One load: the file being read, where to write a failure, and for a
 * cluster manifest the node types, the node names seen so far (name ->
 * index in the file) and which metrics have a buffer or overbooking. */
typedef struct cv__cluster_ld {
    const char *fname;
    char *errstr;
    size_t errstr_size;
    cv_cluster_t *c;
    json_t *types; /* type name -> {"properties": {..}, "capacities": {..}} */
    json_t *seen;
    bool buffer_set[CV_MAX_METRICS];
    bool overbook_set[CV_MAX_METRICS];
} cv__cluster_ld_t;

/* "FNAME: PATH: message" (or "FNAME: message" for an empty path) into
 * ld->errstr; returns `code`. */
int cv__cluster_err(const cv__cluster_ld_t *ld, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "base.key" (or "key" when base is empty) and "base[i]" into buf; returns buf. */
const char *cv__cluster_path_key(char *buf, size_t size, const char *base, const char *key);
const char *cv__cluster_path_idx(char *buf, size_t size, const char *base, size_t i);

/* ---- typed readers (cluster_read.c); a JSON null reads as absent ---- */

/* Member `key` of `obj`: NULL when absent or null. */
const json_t *cv__cluster_member(const json_t *obj, const char *key);

/* Fails on any member of `obj` not in `allowed` (NULL-terminated). */
int cv__cluster_check_keys(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                           const char *const *allowed);

/* A non-empty string member; *out stays NULL when absent and not required. */
int cv__cluster_get_string(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                           const char *key, bool required, const char **out);
int cv__cluster_get_bool(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                         const char *key, bool *out);
/* An object or array member, or NULL when absent. */
int cv__cluster_get_object(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                           const char *key, const json_t **out);
int cv__cluster_get_array(const cv__cluster_ld_t *ld, const json_t *obj, const char *base,
                          const char *key, const json_t **out);

/* A load or capacity: an integer 0..CV__CLUSTER_QTY_MAX, or a string holding one
 * (Service Fabric writes "65536"). */
int cv__cluster_qty_value(const cv__cluster_ld_t *ld, const json_t *v, const char *path,
                          int64_t *out);
/* An integer in [min, max] (or a string holding one). */
int cv__cluster_int_value(const cv__cluster_ld_t *ld, const json_t *v, const char *path,
                          int64_t min, int64_t max, int64_t *out);
/* A number (or a string holding one, as Service Fabric writes "0.15"). */
int cv__cluster_num_value(const cv__cluster_ld_t *ld, const json_t *v, const char *path,
                          double *out);

/* A node property value, typed: a string reading "true"/"false" (any case)
 * becomes a boolean, one reading a decimal signed 64-bit integer becomes
 * that integer, booleans and integers stay; anything else fails. */
int cv__cluster_prop_value(const cv__cluster_ld_t *ld, const json_t *v, const char *path,
                           json_t **out);

/* Splits "fd:/dc1/rack1" (or "/dc1/rack1", "dc1/rack1") into its levels. */
int cv__cluster_fd_parse(const cv__cluster_ld_t *ld, const char *text, const char *path,
                         char ***levels, size_t *depth);

/* ---- the cluster being built (cv_cluster.c, cluster_node.c) ---- */

/* Index of metric `name`, registering it when new. */
int cv__cluster_metric_add(const cv__cluster_ld_t *ld, cv_cluster_t *c, const char *name,
                           const char *path);

/* Parses a node type's properties and capacities (either may be NULL) into
 * {"properties", "capacities"} and records it under `name` in ld->types. */
int cv__cluster_type_add(cv__cluster_ld_t *ld, const char *name, const char *path,
                         const json_t *props, const char *props_path, const json_t *caps,
                         const char *caps_path);

/* The member names a node uses in one manifest format. `allowed` NULL means
 * unknown members are ignored (a ClusterConfig.json node has many). */
typedef struct cv__cluster_node_keys {
    const char *name, *type, *props;
    const char *const *allowed;
} cv__cluster_node_keys_t;

/* Builds the manifest's "nodes" list (at least one node) into ld->c. */
int cv__cluster_nodes_add(cv__cluster_ld_t *ld, const json_t *manifest,
                          const cv__cluster_node_keys_t *keys);
void cv__cluster_node_free(cv_node_t *n);

/* Settings shared by both formats (cluster_settings.c); the path names the
 * value in the file. */
int cv__cluster_set_buffer(cv__cluster_ld_t *ld, const char *metric, const json_t *v,
                           const char *path);
int cv__cluster_set_overbook(cv__cluster_ld_t *ld, const char *metric, const json_t *v,
                             const char *path);
int cv__cluster_set_priority(const cv__cluster_ld_t *ld, int *field, const json_t *v,
                             const char *path);
/* The field of a constraint priority by its name in our format
 * ("faultDomain") or, with `sf`, in Service Fabric's
 * ("FaultDomainConstraintPriority"); NULL when none is called so. */
int *cv__cluster_priority_field(cv_priorities_t *p, const char *name, bool sf);
/* Our format's "settings" (cluster_settings.c). */
int cv__cluster_settings_load(cv__cluster_ld_t *ld, const json_t *manifest);
/* The manifest's "live" object: known keys, non-negative numbers. */
int cv__cluster_live_check(const cv__cluster_ld_t *ld, const json_t *manifest);

/* The cluster resource manager's settings (our "crm" object, Service
 * Fabric's fabricSettings sections and node type overrides), checked as
 * cv_balance_settings checks them; the message names the setting. */
int cv__cluster_crm_check(const cv__cluster_ld_t *ld, const json_t *manifest);

/* Service Fabric's ClusterConfig.json (cluster_sf.c). */
bool cv__cluster_is_sf(const json_t *manifest);
int cv__cluster_load_sf(cv__cluster_ld_t *ld, const json_t *manifest);

/* Adds the manifest warnings of a loaded cluster whose nodes are sorted
 * (cluster_warn.c): 0 or CV_ENOMEM. */
int cv__cluster_warn(cv_cluster_t *c);

/* ---- services (service_load.c) ---- */

/* Loads a service description found at `base` in `fname` ("" at the top of
 * the file); `in_layout` also admits the "placements" member. */
int cv__cluster_service_parse(const json_t *desc, const char *fname, const char *base,
                              bool in_layout, cv_service_t **out, char *errstr, size_t errstr_size);

#endif
