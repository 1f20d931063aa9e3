/*
 * agent_cgroup — a task's control group: which hierarchy the machine has
 * (cgroup v1 with the memory, cpu and pids controllers mounted under
 * /sys/fs/cgroup/<controller>, or the unified v2 hierarchy at
 * /sys/fs/cgroup), creating a task's group with the limits agent_policy
 * computed, telling whether the kernel killed it for its memory, and
 * removing it (after killing what is left in it). Groups live under
 * converge/<node key>/ of each hierarchy; a task's group is named
 * <rid with '/' as '+'>.<task>, so a restarted agent finds the groups of
 * the processes it re-adopts. Root only: without it (or without the
 * controllers) the node's isolation is rlimits. I/O only: no policy.
 */
#ifndef AGENT_CGROUP_H
#define AGENT_CGROUP_H

#include "agent_policy.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum { CV_ISO_RLIMITS = 0, CV_ISO_CGROUP_V1, CV_ISO_CGROUP_V2 } cv_iso_t;

#define CV_CGROUP_MAX_PATHS 3
#define CV_CGROUP_PATH 512

/* "rlimits", "cgroup-v1", "cgroup-v2": what the node record says. */
const char *cv_iso_name(cv_iso_t iso);

/* What this machine offers a root agent whose node key is `key` (its
 * groups' parent, converge/<key>, is created here); rlimits when not root,
 * no controller is mounted or the parent cannot be created (`errstr` says). */
cv_iso_t cv_cgroup_detect(const char *key, char *errstr, size_t errstr_size);

/* Creates the task's group `name` with the limits; `paths` get the
 * directories the task must join (one per v1 hierarchy, one in v2). 0, or
 * a negative errno with errstr. */
int cv_cgroup_create(cv_iso_t iso, const char *key, const char *name, const cv_cgroup_limits_t *l,
                     char paths[][CV_CGROUP_PATH], size_t *npaths, char *errstr,
                     size_t errstr_size);

/* Whether the kernel's OOM killer killed a process of the group. */
bool cv_cgroup_oom_killed(cv_iso_t iso, const char *key, const char *name);

/* Kills every process left in the group and removes it (quietly: a group
 * still busy is retried by the next call). */
void cv_cgroup_remove(cv_iso_t iso, const char *key, const char *name);

/* Removes (killing what runs in them) the node's groups of replicas other
 * than `rids`: what an earlier run left of replicas it no longer knows. */
void cv_cgroup_sweep(cv_iso_t iso, const char *key, const char *const *rids, size_t n);

/* At the agent's exit: removes the node's parent group if no replica is
 * left in it. */
void cv_cgroup_leave(cv_iso_t iso, const char *key);

/* The group name of a task: "<rid, '/' as '+'>.<task>". */
void cv_cgroup_name(char *buf, size_t size, const char *rid, const char *task);

#endif
