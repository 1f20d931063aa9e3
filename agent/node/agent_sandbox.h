/*
 * agent_sandbox — how a replica's process is confined on a real node
 * (docs/security.md "Replicas: what a submitter can do on a node").
 *
 * The agent never execs a replica's program itself: it spawns itself as
 * `converge-agent --sandbox-exec OPTIONS -- ARGV` (uv_spawn gives no hook
 * between fork and exec, and these steps must come before the program
 * runs), detached as before (its own session and process group). That
 * helper, still root, joins the task's cgroups, enters a mount namespace of
 * its own where /tmp is private and the agent's directory is an empty
 * tmpfs holding only the replica's own working directory, volumes and load
 * file (bound back at their paths), sets the rlimits, closes every inherited
 * descriptor but stdin/out/err (the agent's Redis connection among them),
 * drops the supplementary groups, the group and the user, sets
 * PR_SET_NO_NEW_PRIVS and execs the program, resolved beforehand by the
 * agent: the pid, its start time and its environment stay those of the
 * replica's process. A non-root agent does the same minus the user, the
 * namespace and the cgroups: its replicas run as its own user.
 */
#ifndef AGENT_SANDBOX_H
#define AGENT_SANDBOX_H

#include "agent_cgroup.h"
#include "agent_policy.h"

#include <stdbool.h>
#include <stddef.h>

/* The replica user a root agent uses unless --replica-user says another. */
#define CV_SANDBOX_DEFAULT_USER "converge-replica"

/* The node's confinement, set once at the agent's start. */
typedef struct cv_sandbox {
    bool root;      /* the agent runs as root: users, namespaces, cgroups */
    long uid, gid;  /* the replica user */
    char user[64];  /* its name */
    cv_iso_t iso;   /* cgroups or rlimits */
    char key[160];  /* the node's cgroups: converge/<key> */
    char dir[4096]; /* the agent's --dir, absolute */
    long pids_default;
    cv_policy_t policy;
} cv_sandbox_t;

/* Fills sb for the agent with --dir `dir` running node `node`: the replica
 * user (`user`, or the agent's own when not root), the cgroup hierarchy
 * (unless `rlimits_only`). Makes `dir` 0700. 0, or CV_EINVAL with errstr
 * (no such user, or a user that is root). Logs what it found. */
int cv_sandbox_init(cv_sandbox_t *sb, const char *dir, const char *node, const char *user,
                    bool rlimits_only, char *errstr, size_t errstr_size);

/* The absolute program argv0 names, found in the PATH of `env` (K=V list)
 * as execvp would for uid/gid (-1: the agent's own user): a directory or a
 * program that user may not search or run is passed over. 0, or a negative
 * errno. */
int cv_sandbox_resolve(const char *argv0, char *const *env, long uid, long gid, char *out,
                       size_t size);

/* What the helper does for one task. */
typedef struct cv_sandbox_task {
    const char *program;        /* absolute, resolved */
    const char *const *argv;    /* the task's argv */
    long uid, gid;              /* -1: unchanged */
    const char *const *cgroups; /* directories to join */
    size_t ncgroups;
    const char *const *binds; /* paths to keep visible inside the hidden dir */
    size_t nbinds;
    bool hide;          /* hide sb->dir and make /tmp private */
    long long as_bytes; /* RLIMIT_AS when > 0 */
    long nofile;        /* RLIMIT_NOFILE when > 0 */
} cv_sandbox_task_t;

/* The helper's argv for t (free with cv_env_free), NULL when out of memory. */
char **cv_sandbox_argv(const cv_sandbox_t *sb, const cv_sandbox_task_t *t);

/* The helper (argv[1] is "--sandbox-exec"): execs the program, or exits
 * 126 (a step failed) or 127 (exec failed) with a line on stderr. */
int cv_sandbox_main(int argc, char **argv);

#endif
