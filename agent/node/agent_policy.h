/*
 * agent_policy — what a replica may ask of its node, and what needs the
 * operator's explicit permission (docs/security.md "Replicas: what a
 * submitter can do on a node"; the pattern of Nomad's exec and raw_exec
 * drivers: isolation by default, privilege only where the agent was started
 * with --allow PERM).
 *
 * Refused unless permitted: the user root (or uid 0) — `--allow root`; any
 * other user than the agent's replica user — `--allow user`; a fixed host
 * port below 1024 — `--allow low-ports`; a working directory outside the
 * replica's own directories — `--allow workdir`; an environment variable
 * that changes how programs are loaded (LD_*, e.g. LD_PRELOAD,
 * LD_LIBRARY_PATH) — `--allow env`. With an allow-list of executables
 * (--allow-exec PATH; a PATH ending in '/' allows everything below it) a
 * task's program must be on it. Each refusal names the rule and the option.
 *
 * And the limits a task's cgroup gets from its `resources`. Pure logic: no
 * I/O (the caller resolves users and programs).
 */
#ifndef AGENT_POLICY_H
#define AGENT_POLICY_H

#include "agent_spec.h"

#include <stdbool.h>
#include <stddef.h>

#define CV_POLICY_MAX_EXEC 64

typedef enum {
    CV_ALLOW_ROOT = 1 << 0,
    CV_ALLOW_USER = 1 << 1,
    CV_ALLOW_LOW_PORTS = 1 << 2,
    CV_ALLOW_WORKDIR = 1 << 3,
    CV_ALLOW_ENV = 1 << 4
} cv_allow_t;

typedef struct cv_policy {
    unsigned allow; /* cv_allow_t bits */
    const char *exec[CV_POLICY_MAX_EXEC];
    size_t nexec; /* 0: any program */
} cv_policy_t;

/* Adds the permissions of "root,low-ports" (names: root, user, low-ports,
 * workdir, env, all). 0, or CV_EINVAL with errstr naming the unknown one. */
int cv_policy_allow(cv_policy_t *p, const char *list, char *errstr, size_t errstr_size);

/* Adds an absolute program path (or a directory ending in '/') to the
 * allow-list. 0, or CV_EINVAL. */
int cv_policy_allow_exec(cv_policy_t *p, const char *path, char *errstr, size_t errstr_size);

/* The permissions as "root,low-ports" ("none" without any). */
void cv_policy_names(unsigned allow, char *buf, size_t size);

/* The parts of a spec that need no lookup: fixed ports and environment
 * variables. 0, or CV_EVALIDATE with errstr ("port ssh: host port 22 is below
 * 1024: the agent needs --allow low-ports"). */
int cv_policy_check_spec(const cv_policy_t *p, const cv_rspec_t *s, char *errstr,
                         size_t errstr_size);

/* The user a replica asks for (`name`, NULL or "" for the agent's replica
 * user), resolved by the caller to `uid` (-1: no such user), against the
 * agent's replica user `default_uid`; `can_switch`: the agent runs as root. */
int cv_policy_check_user(const cv_policy_t *p, const char *name, long uid, long default_uid,
                         bool can_switch, char *errstr, size_t errstr_size);

/* A task's working directory (absolute, substituted) against the replica's
 * own directories `roots`: inside one of them, or --allow workdir. A ".."
 * component is never allowed. */
int cv_policy_check_workdir(const cv_policy_t *p, const char *task, const char *workdir,
                            const char *const *roots, size_t nroots, char *errstr,
                            size_t errstr_size);

/* A task's program as resolved (absolute) against the allow-list. */
int cv_policy_check_exec(const cv_policy_t *p, const char *task, const char *program, char *errstr,
                         size_t errstr_size);

/* Whether an environment variable changes how programs are loaded. */
bool cv_policy_env_dangerous(const char *name);

/* A task's cgroup limits from its resources: 0 means none. */
typedef struct cv_cgroup_limits {
    long long memory_bytes;           /* resources.memory_mb */
    long cpu_quota_us, cpu_period_us; /* resources.cpu × the period */
    long pids_max;                    /* resources.pids, else the agent's default */
} cv_cgroup_limits_t;

#define CV_CPU_PERIOD_US 100000L

void cv_cgroup_limits_of(const cv_rtask_t *t, long pids_default, cv_cgroup_limits_t *out);

/* One file of a cgroup and the value written to it. */
typedef struct cv_cgroup_file {
    const char *controller; /* v1: the hierarchy (memory, cpu, pids); v2: "" */
    const char *file;
    char value[48];
    bool optional; /* absent on some kernels (memsw, swap): skipped */
} cv_cgroup_file_t;

/* The files to write for `l`, in order, under cgroup v1 or v2. Returns how
 * many (at most max). */
size_t cv_limits_files(const cv_cgroup_limits_t *l, bool v2, cv_cgroup_file_t *out, size_t max);

#endif
