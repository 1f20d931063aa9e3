/*
 * The fence guard (agent_guard.h): the proof of life and the guard process
 * itself (its rules: agent_guard_rules.c).
 */
#include "agent_guard.h"

#include "agent_proc.h"
#include "agent_state.h"

#include "cv_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GUARD_LOOK_MS 200

static void path_of(char *buf, size_t size, const char *dir, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

void cv_guard_touch(const char *dir)
{
    char path[4096];
    path_of(path, sizeof(path), dir, "fence.alive");
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    futimens(fd, NULL);
    close(fd);
}

static double touched_at(const char *dir)
{
    char path[4096];
    struct stat st;
    path_of(path, sizeof(path), dir, "fence.alive");
    if (stat(path, &st) != 0)
        return 0;
    return (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether the guard of `dir` runs: its pid file names a live process. */
static bool guard_runs(const char *dir)
{
    char path[4096];
    path_of(path, sizeof(path), dir, "fence.guard");
    FILE *f = fopen(path, "r");
    long pid = 0;
    unsigned long long start = 0;
    bool ok = f && fscanf(f, "%ld %llu", &pid, &start) == 2;
    if (f)
        fclose(f);
    return ok && pid > 0 && cv_proc_alive((pid_t)pid, start);
}

/* The agent reaps its guard (a zombie would look alive to guard_runs). */
static void on_guard_exit(uv_process_t *p, int64_t status, int term_signal)
{
    (void)status;
    (void)term_signal;
    cv_proc_close(p);
}

void cv_guard_ensure(const char *dir, int fence_ms)
{
    if (guard_runs(dir))
        return;
    /* Absolute: the guard runs in DIR, where a relative DIR (--dir
     * .local/agents/n1) names nothing and the guard could not start. */
    char abs[PATH_MAX], ms[32], log[PATH_MAX + 32], err[256];
    if (!realpath(dir, abs)) {
        cv_warn("the fence guard of %s did not start: %s", dir, strerror(errno));
        return;
    }
    snprintf(ms, sizeof(ms), "%d", fence_ms);
    path_of(log, sizeof(log), abs, "fence-guard.log");
    const char *argv[] = {"/proc/self/exe", "--fence-guard", abs, ms, NULL};
    char *env[] = {NULL};
    cv_spawn_t s = {.argv = argv,
                    .env = env,
                    .cwd = abs,
                    .out_path = log,
                    .err_path = log,
                    .on_exit = on_guard_exit};
    uv_process_t *p = NULL;
    pid_t pid = 0;
    if (cv_proc_spawn(uv_default_loop(), &s, &p, &pid, err, sizeof(err)) != 0) {
        cv_warn("the fence guard of %s did not start: %s", dir, err);
        return;
    }
    /* The guard outlives a stopped agent on purpose: it must not hold the
     * agent's loop open. */
    uv_unref((uv_handle_t *)p);
    cv_info("fence guard of %s started (pid %d)", dir, (int)pid);
}

/* The live targets' processes, killed (a process group each, as spawned). */
static size_t kill_live(const json_t *targets)
{
    size_t i, killed = 0;
    const json_t *t;
    json_array_foreach(targets, i, t)
    {
        pid_t pid = (pid_t)json_integer_value(json_object_get(t, "pid"));
        unsigned long long start =
            (unsigned long long)json_integer_value(json_object_get(t, "start_time"));
        if (!cv_proc_alive(pid, start))
            continue;
        cv_proc_signal(pid, SIGKILL);
        killed++;
    }
    return killed;
}

static size_t count_live(const json_t *targets)
{
    size_t i, n = 0;
    const json_t *t;
    json_array_foreach(targets, i, t)
    {
        n += cv_proc_alive((pid_t)json_integer_value(json_object_get(t, "pid")),
                           (unsigned long long)json_integer_value(json_object_get(t, "start_time")))
                 ? 1
                 : 0;
    }
    return n;
}

static int write_pid_file(const char *dir)
{
    char path[4096], tmp[4200];
    path_of(path, sizeof(path), dir, "fence.guard");
    snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -errno;
    fprintf(f, "%d %llu\n", (int)getpid(), cv_proc_start_time(getpid()));
    fclose(f);
    return rename(tmp, path) == 0 ? 0 : -errno;
}

int cv_guard_main(const char *dir, int fence_ms)
{
    cv_log_init("fence-guard", CV_LOG_INFO);
    if (fence_ms <= 0 || write_pid_file(dir) != 0) {
        cv_error("fence guard: cannot guard %s (fence %d ms)", dir, fence_ms);
        return 2;
    }
    const struct timespec look = {0, GUARD_LOOK_MS * 1000000L};
    for (;;) {
        json_t *states = cv_state_load_all(dir);
        json_t *targets = cv_guard_targets(states);
        json_decref(states);
        size_t live = count_live(targets);
        if (live > 0 && cv_guard_stale(touched_at(dir), now_s(), fence_ms))
            cv_warn("fence guard: the agent of %s showed no life for over %d ms: killed %zu "
                    "stateful replica process(es)",
                    dir, fence_ms, kill_live(targets));
        json_decref(targets);
        if (live == 0)
            return 0; /* nothing to guard: the agent starts a guard again when needed */
        nanosleep(&look, NULL);
    }
}
