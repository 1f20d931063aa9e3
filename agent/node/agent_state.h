/*
 * agent_state — what an agent keeps on disk about the replicas it runs, so
 * that a restarted agent re-adopts them: one JSON file per replica,
 * <dir>/replicas/<rid>.json (with '/' of the rid written as '+'), holding
 * {"rid", "spec", "tasks": [{"name", "pid", "start_time"}], "ports",
 * "restarts", "started", "ledger", "state", "reason", "exit", "gave_up",
 * "stopped"}. Written atomically (a temporary file
 * renamed over the old one) before and after every spawn, mode 0600 in a
 * 0700 directory: the spec holds the replica's environment.
 * I/O only: no policy.
 */
#ifndef AGENT_STATE_H
#define AGENT_STATE_H

#include <jansson.h>
#include <stddef.h>

/* mkdir -p, new directories 0700: 0 or a negative errno. */
int cv_mkdirs(const char *path);

/* The state file of rid under dir. */
void cv_state_path(char *buf, size_t size, const char *dir, const char *rid);

/* 0 or a negative errno. */
int cv_state_write(const char *dir, const char *rid, const json_t *state);
void cv_state_remove(const char *dir, const char *rid);

/* Every readable state file's object (a new array); unreadable files are
 * skipped with a warning. */
json_t *cv_state_load_all(const char *dir);

#endif
