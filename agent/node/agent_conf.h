/*
 * agent_conf — the command line of converge-agent, read into what the
 * agent runs with. Parsing only (no files are read): the node description
 * itself is agent_desc's. Pure logic: no I/O but the usage text.
 */
#ifndef AGENT_CONF_H
#define AGENT_CONF_H

#include "agent_policy.h"

#include "cv_io.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CV_AGENT_MAX_KV 64

typedef struct cv_agent_conf {
    cv_opts_t opts; /* --redis, --prefix (and the CONVERGE_* defaults) */
    const char *dir, *cluster, *node;
    const char *name, *type, *fault_domain, *upgrade_domain;
    const char *props[CV_AGENT_MAX_KV];
    size_t nprops;
    const char *caps[CV_AGENT_MAX_KV];
    size_t ncaps;
    const char *address;
    int port_lo, port_hi;
    int heartbeat_ttl_ms, fence_ms;
    double reset_s;
    long log_cap;
    cv_log_opts_t log; /* --log-format, --log-level, --verbose */
    bool stop_on_exit, help;
    int simulate; /* nodes to simulate; 0: a real node */
    const char *nodes_prefix;
    const char *metrics_addr; /* --metrics-addr: HOST:PORT or "none" (docs/metrics.md) */
    cv_policy_t policy;       /* --allow, --allow-exec (agent_policy) */
    const char *replica_user; /* --replica-user, or NULL: converge-replica (root) */
    bool rlimits_only;        /* --isolation rlimits */
    long pids_max;            /* --pids-max: a task's default pids limit (0: none) */
} cv_agent_conf_t;

/* Reads argv into c (defaults first). 0, or CV_EINVAL with errstr naming
 * the option. --help sets c->help. */
int cv_agent_conf_parse(cv_agent_conf_t *c, int argc, char **argv, char *errstr,
                        size_t errstr_size);

void cv_agent_usage(FILE *out);

#endif
