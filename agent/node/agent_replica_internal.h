/*
 * Internal to agent_replica: the replica's struct and the functions its
 * files share, in the order calls go — agent_replica.c (the life cycle:
 * starts, health verdicts, the restart policy, stops, re-adoption, ticks),
 * agent_replica_health.c (one health probe), agent_replica_proc.c (ports,
 * directories, processes), agent_replica_confine.c (its user, the agent's
 * policy, each task's program, workdir, cgroup and sandbox) and
 * agent_replica_record.c (its state, state file and report).
 */
#ifndef AGENT_REPLICA_INTERNAL_H
#define AGENT_REPLICA_INTERNAL_H

#include "agent_probe.h"
#include "agent_replica.h"

#include <sys/types.h>

typedef struct task {
    cv_replica_t *r;
    pid_t pid;
    unsigned long long start_time;
    uv_process_t *proc; /* our child; NULL for a re-adopted process */
    bool up;
    double cpu_s; /* CPU seconds at the last measure */
} task_t;

/* Why the processes went down, for the restart policy and the report. */
/* DOWN_REFUSED: the agent's policy refused the spec (a verdict: failed,
 * never restarted here). DOWN_UNSTARTABLE: a task's program cannot be
 * executed on this node (cv_restart_decide_start_error). */
typedef enum {
    DOWN_NONE = 0,
    DOWN_EXIT,
    DOWN_HEALTH,
    DOWN_SPAWN,
    DOWN_STOP,
    DOWN_REFUSED,
    DOWN_UNSTARTABLE
} down_t;

struct cv_replica {
    cv_rhost_t *h;
    cv_rspec_t spec;
    task_t *tasks;
    cv_replica_state_t state;
    int restarts;
    bool gave_up, stop_wanted, ledger_done, probing, closing;
    char reason[1024], exit[32], cause[512];
    double started, since, running_at, healthy_since, measured_at;
    json_t *ports;   /* name -> host port */
    json_t *volumes; /* name -> directory */
    down_t down;
    bool down_failure;
    int hfails;
    bool measured;
    double rss_mb, cpu_cores;
    char load_file[4096]; /* CONVERGE_LOAD_FILE; "" on a simulated node */
    json_t *reported;     /* the load file's values at the last read, or NULL */
    bool load_warned;     /* its bad lines were warned about */
    uv_timer_t timer;     /* backoff, kill grace, simulated start */
    uv_timer_t htimer;    /* health checks; the grace period without one */
    int open_handles;
    long uid, gid; /* the user its processes run as (-1: the agent's own) */
};

/* Below the life cycle (agent_replica.c), which alone calls these files;
 * none of them calls it back but through the callbacks it hands in. */

/* agent_replica_record.c: what the replica is and says */
void cv__replica_set_state(cv_replica_t *r, cv_replica_state_t s, const char *reason);
void cv__replica_save(cv_replica_t *r);
/* Drops one hold on the struct (a timer, a probe); frees it at the last. */
void cv__replica_release(cv_replica_t *r);

/* agent_replica_proc.c: ports, directories, processes */
int cv__replica_take_ports(cv_replica_t *r, char *errstr, size_t errstr_size);
int cv__replica_prepare_dirs(cv_replica_t *r, char *errstr, size_t errstr_size);
char *cv__replica_workdir(cv_replica_t *r, const cv_rtask_t *t, const json_t *vars);
/* Spawns every task, each process's exit to `on_exit` (its handle's data is
 * the task); DOWN_NONE, or why the first that could not start did not,
 * with r->cause said (the group is then to go down: a failure for the
 * restart policy). */
down_t cv__replica_spawn_all(cv_replica_t *r, uv_exit_cb on_exit);
/* Signals every task up with the kill policy's signal; whether any was. */
bool cv__replica_signal_all(cv_replica_t *r);
void cv__replica_kill_now(cv_replica_t *r);

/* agent_replica_health.c: one probe of the health check, its outcome to
 * `done` (with r as its ud) */
void cv__replica_probe(cv_replica_t *r, cv_probe_cb done);

/* agent_replica_confine.c */
/* The user the replica runs as (r->uid, r->gid) and the policy's verdict on
 * its spec: 0, or CV_EVALIDATE (refused) / another error with errstr. */
int cv__replica_confine_user(cv_replica_t *r, char *errstr, size_t errstr_size);
/* Task i's helper argv (free with cv_env_free) to spawn instead of argv:
 * the program resolved and checked, the workdir checked, the cgroup made.
 * i == SIZE_MAX: the health check's command, confined as the first task. */
int cv__replica_confine_task(cv_replica_t *r, size_t i, char *const *env, char *const *argv,
                             const char *wd, char ***wrapped, char *errstr, size_t errstr_size);
/* The task's cgroup once its process is gone; says whether the kernel
 * killed it for its memory. */
bool cv__replica_release_task(cv_replica_t *r, size_t i);
/* Makes a directory of the replica its user's. */
void cv__replica_own(const cv_replica_t *r, const char *path);

#endif
