/*
 * agent_restart — the restart policy of a replica (the restartPolicy of
 * BCS's Mesos scheduling document): what to do when its processes stopped,
 * and when.
 *
 * Never: never restarted. Always: restarted whatever the exit. OnFailure:
 * restarted after a failure (non-zero exit, a signal, a failed health check,
 * a command that cannot be executed); an exit 0 is done. The n-th restart
 * (n from 0) waits interval + n × backoff seconds; after max_times restarts
 * (0: no limit) the policy gives up. The counter is reset once the replica
 * has been healthy for the reset period (30 minutes by default).
 * Pure logic: no I/O.
 */
#ifndef AGENT_RESTART_H
#define AGENT_RESTART_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    CV_RESTART_NEVER = 0,
    CV_RESTART_ALWAYS = 1,
    CV_RESTART_ON_FAILURE = 2
} cv_restart_kind_t;

typedef struct cv_restart_policy {
    cv_restart_kind_t kind;
    double interval; /* seconds before the first restart */
    double backoff;  /* seconds added for each restart already made */
    int max_times;   /* restarts allowed; 0 = no limit */
} cv_restart_policy_t;

typedef enum {
    CV_RESTART_AFTER = 0,       /* restart after *delay_s */
    CV_RESTART_DONE = 1,        /* not restarted: the replica finished (exit 0), report stopped */
    CV_RESTART_STAY_FAILED = 2, /* Never after a failure: failed, not moved either */
    CV_RESTART_GIVE_UP = 3      /* max_times reached: failed, gave_up */
} cv_restart_action_t;

/* Reads a restart_policy object (NULL: Always, interval 1, backoff 1, no
 * limit). Errors name `path` and the member. Returns 0 or CV_EVALIDATE. */
int cv_restart_parse(const json_t *obj, const char *path, cv_restart_policy_t *out, char *errstr,
                     size_t errstr_size);

/* What to do after the replica's processes stopped, `restarts` restarts
 * having been made so far; `failure` is false only for an exit 0. */
cv_restart_action_t cv_restart_decide(const cv_restart_policy_t *p, int restarts, bool failure,
                                      double *delay_s);

/* What to do after a task's program could not be executed on the node
 * (not found, or not executable by the replica's user): retrying cannot
 * make it start here, so every policy but Never gives up at once and the
 * replica moves (Never: failed, not moved, as after any failure). */
cv_restart_action_t cv_restart_decide_start_error(const cv_restart_policy_t *p);

/* The restart counter to keep: 0 once the replica has been healthy since
 * `healthy_since` (0: not healthy) for at least reset_s seconds at `now`. */
int cv_restart_counter(int restarts, double healthy_since, double now, double reset_s);

#endif
