/*
 * agent_spec — a replica spec (the value of {cluster}:assign:<node>,
 * docs/services.md) read into what the executor needs. Errors name the
 * member that is wrong ("tasks[0].command: expected a non-empty list of
 * strings"). Pure logic: no I/O.
 */
#ifndef AGENT_SPEC_H
#define AGENT_SPEC_H

#include "agent_restart.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cv_rtask {
    const char *name;
    const char **argv; /* NULL-terminated, strings owned by the spec's JSON */
    size_t argc;
    const json_t *env;   /* object or NULL */
    const char *workdir; /* or NULL */
    long memory_mb;      /* 0: no limit */
    long nofile;         /* 0: the agent's own */
    double cpu;          /* cores; 0: no limit */
    long pids;           /* processes; 0: the agent's default */
} cv_rtask_t;

typedef struct cv_rport {
    const char *name;
    int port; /* 0: any port of the node's range */
} cv_rport_t;

typedef struct cv_rvolume {
    const char *name;
    const char *path; /* where it appears in the working directory, or NULL */
} cv_rvolume_t;

typedef enum {
    CV_HEALTH_NONE = 0,
    CV_HEALTH_COMMAND,
    CV_HEALTH_TCP,
    CV_HEALTH_HTTP
} cv_health_kind_t;

typedef struct cv_rhealth {
    cv_health_kind_t kind;
    const char *port;  /* tcp/http: a port name of the replica */
    const char *path;  /* http: the path, default "/" */
    const char **argv; /* command: NULL-terminated */
    double interval, timeout, grace_period;
    int retries;
} cv_rhealth_t;

typedef struct cv_rspec {
    json_t *json; /* the spec as assigned (a reference) */
    const char *rid, *svc, *stack, *stack_name, *service, *name, *role, *digest;
    const char *user; /* the `user` property, or NULL: the agent's replica user */
    int index;
    bool stateful;
    const json_t *env; /* the replica's own env (object) or NULL */
    cv_rtask_t *tasks;
    size_t ntasks;
    cv_rport_t *ports;
    size_t nports;
    cv_rvolume_t *volumes;
    size_t nvolumes;
    cv_rhealth_t health;
    cv_restart_policy_t restart;
    double kill_grace; /* seconds between the stop signal and SIGKILL */
    int kill_signal;
    const json_t *load; /* declared load: metric -> number, or NULL */
} cv_rspec_t;

/* Reads `json` (a new reference is taken). Returns 0, or CV_EVALIDATE
 * with errstr; `out` is then freed already. */
int cv_rspec_parse(json_t *json, cv_rspec_t *out, char *errstr, size_t errstr_size);
void cv_rspec_free(cv_rspec_t *s);

/* Signal number of "TERM", "SIGTERM", "15"; -1 when unknown. */
int cv_signal_number(const char *name);

#endif
