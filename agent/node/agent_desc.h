/*
 * agent_desc — the node an agent runs as: its description in the cluster
 * format `convergectl place` reads ({"name", "type", "faultDomain",
 * "upgradeDomain", "properties", "capacities"}) and the cluster's settings
 * (the manifest without its `nodes`), from a cluster manifest or from
 * options. Checked with the placement library's loader, so an error names
 * the file (or "the node description"), the field and the rule broken.
 * Pure logic: no I/O.
 */
#ifndef AGENT_DESC_H
#define AGENT_DESC_H

#include <jansson.h>
#include <stddef.h>

/* The node of the options: name, type (or NULL), FD and UD (or NULL),
 * properties and capacities as "K=V" lists. */
typedef struct cv_desc_opts {
    const char *name, *type, *fault_domain, *upgrade_domain;
    const char *const *props;
    size_t nprops;
    const char *const *caps;
    size_t ncaps;
} cv_desc_opts_t;

/* Builds and checks the description of the options; `settings` (or NULL)
 * are the cluster settings it is checked with. 0 or CV_EVALIDATE. */
int cv_desc_from_opts(const cv_desc_opts_t *o, const json_t *settings, json_t **desc, char *errstr,
                      size_t errstr_size);

/* Checks `manifest` (read from `fname`), then takes its node `node`:
 * *desc its description, *settings the manifest without `nodes`.
 * 0, CV_EVALIDATE or CV_ENOENT (no such node). */
int cv_desc_from_manifest(const json_t *manifest, const char *fname, const char *node,
                          json_t **desc, json_t **settings, char *errstr, size_t errstr_size);

/* The names of every node of a checked manifest, in its order (a new array). */
json_t *cv_desc_nodes(const json_t *manifest);

/* Checks one description with `settings` (NULL: none) as the placement
 * library would load it. */
int cv_desc_check(const json_t *desc, const json_t *settings, const char *fname, char *errstr,
                  size_t errstr_size);

#endif
