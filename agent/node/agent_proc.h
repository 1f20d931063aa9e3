/*
 * agent_proc — the processes of replicas, as the operating system sees
 * them: spawning one detached (its own session and process group, stdout
 * and stderr into files, no pipe to the agent: it outlives the agent;
 * argv is agent_sandbox's helper, which confines it and execs the program),
 * signalling its process group, and reading /proc for its start time
 * (field 22 of /proc/<pid>/stat: what tells a re-adopted pid from a reused
 * one), its resident memory and its CPU time. I/O only: no policy.
 */
#ifndef AGENT_PROC_H
#define AGENT_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

typedef struct cv_spawn {
    const char *const *argv; /* NULL-terminated */
    char **env;              /* NULL-terminated "K=V" */
    const char *cwd;
    const char *out_path, *err_path; /* opened O_APPEND (created 0600) */
    uv_exit_cb on_exit;              /* the process handle's exit callback */
    void *data;                      /* the handle's data */
} cv_spawn_t;

/* Starts the process. Returns 0 with *out (free it with cv_proc_close) and
 * *pid, or a negative errno with errstr ("exec /no/such: No such file or
 * directory"). */
int cv_proc_spawn(uv_loop_t *loop, const cv_spawn_t *s, uv_process_t **out, pid_t *pid,
                  char *errstr, size_t errstr_size);

/* Forgets the handle (the process keeps running if it does). */
void cv_proc_close(uv_process_t *p);

/* Sends sig to the process group of pid (the pid itself if it has none). */
void cv_proc_signal(pid_t pid, int sig);

/* The start time of pid (clock ticks after boot), 0 when it is gone or a zombie. */
unsigned long long cv_proc_start_time(pid_t pid);

/* Whether pid runs and is the process that started at start_time. */
bool cv_proc_alive(pid_t pid, unsigned long long start_time);

/* Resident memory (MiB) and CPU time used (seconds) of pid: 0, or -1. */
int cv_proc_usage(pid_t pid, double *rss_mb, double *cpu_s);

/* "exit 1", "signal 9". */
void cv_proc_exit_text(char *buf, size_t size, int64_t status, int term_signal);

#endif
