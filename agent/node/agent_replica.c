/*
 * A replica's life cycle: created, started, its health checks' verdicts,
 * the restart policy when its group goes down, stopped, re-adopted from a
 * previous agent's state file, and its periodic measures. The top of
 * agent_replica: it drives the processes (agent_replica_proc.c) and the
 * health probes (agent_replica_health.c), handing them the callbacks it
 * hears back on, and records through agent_replica_record.c.
 */
#include "agent_replica_internal.h"

#include "agent_loadfile.h"
#include "agent_logcap.h"
#include "agent_proc.h"
#include "agent_state.h"

#include "cv_io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The handlers of the life cycle lead to one another (a start that fails
 * goes down, going down restarts): declared here, defined in their
 * sections. */
static void stop_group(cv_replica_t *r, down_t why);
static void on_task_exit(uv_process_t *p, int64_t status, int sig);
static void on_down(cv_replica_t *r);

/* ------------------------------------------------------------------------ */
/* Creating and freeing                                                     */
/* ------------------------------------------------------------------------ */

/* CONVERGE_LOAD_FILE, absolute: the replica runs in a working directory of
 * its own, and the agent's --dir may be relative. */
static void set_load_file(cv_replica_t *r)
{
    char dir[4096];
    if (r->h->dir[0] == '/' || !getcwd(dir, sizeof(dir))) {
        snprintf(dir, sizeof(dir), "%s", r->h->dir);
    } else {
        size_t n = strlen(dir);
        snprintf(dir + n, sizeof(dir) - n, "/%s", r->h->dir);
    }
    cv_loadfile_path(r->load_file, sizeof(r->load_file), dir, r->spec.rid);
}

cv_replica_t *cv_replica_new(cv_rhost_t *h, cv_rspec_t *spec)
{
    cv_replica_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->tasks = calloc(spec->ntasks, sizeof(*r->tasks));
    if (!r->tasks) {
        free(r);
        return NULL;
    }
    r->h = h;
    r->spec = *spec;
    memset(spec, 0, sizeof(*spec));
    for (size_t i = 0; i < r->spec.ntasks; i++)
        r->tasks[i].r = r;
    r->ports = json_object();
    r->volumes = json_object();
    r->state = CV_RSTATE_STARTING;
    r->uid = r->gid = -1;
    r->since = cv_now();
    uv_timer_init(h->loop, &r->timer);
    uv_timer_init(h->loop, &r->htimer);
    r->timer.data = r->htimer.data = r;
    if (!h->simulate)
        set_load_file(r);
    return r;
}

static void on_handle_closed(uv_handle_t *handle)
{
    cv__replica_release(handle->data);
}

/* The load file's folder and what the replica left in it (its temporary
 * file, say): the replica's own folder, gone with the replica. */
static void remove_load_dir(const char *load_file)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", load_file);
    char *slash = strrchr(dir, '/');
    if (!load_file[0] || !slash)
        return;
    *slash = '\0';
    DIR *d = opendir(dir);
    const struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    rmdir(dir);
}

void cv_replica_free(cv_replica_t *r, bool forget)
{
    if (forget && !r->h->simulate) {
        cv_state_remove(r->h->dir, r->spec.rid);
        remove_load_dir(r->load_file);
    }
    cv_ports_release(r->h->ports, r->spec.rid);
    for (size_t i = 0; i < r->spec.ntasks; i++) {
        if (r->tasks[i].proc) {
            r->tasks[i].proc->data = NULL;
            cv_proc_close(r->tasks[i].proc);
        }
    }
    r->closing = true;
    r->open_handles = 2 + (r->probing ? 1 : 0);
    uv_close((uv_handle_t *)&r->timer, on_handle_closed);
    uv_close((uv_handle_t *)&r->htimer, on_handle_closed);
}

/* ------------------------------------------------------------------------ */
/* Health                                                                   */
/* ------------------------------------------------------------------------ */

static bool past_grace(const cv_replica_t *r)
{
    return cv_now() - r->running_at >= r->spec.health.grace_period;
}

static void become_healthy(cv_replica_t *r)
{
    r->hfails = 0;
    if (r->state == CV_RSTATE_HEALTHY)
        return;
    r->healthy_since = cv_now();
    cv__replica_set_state(r, CV_RSTATE_HEALTHY, "");
}

static void on_probe(void *ud, bool ok, const char *why)
{
    cv_replica_t *r = ud;
    r->probing = false;
    if (r->closing) {
        cv__replica_release(r);
        return;
    }
    if (r->state != CV_RSTATE_RUNNING && r->state != CV_RSTATE_HEALTHY)
        return;
    if (ok) {
        if (past_grace(r))
            become_healthy(r);
        return;
    }
    if (!past_grace(r))
        return;
    if (++r->hfails < r->spec.health.retries) {
        cv_debug("replica %s: health check failed (%d of %d): %s", r->spec.rid, r->hfails,
                 r->spec.health.retries, why);
        return;
    }
    snprintf(r->cause, sizeof(r->cause), "health check failed: %s", why);
    cv_info("replica %s: %s", r->spec.rid, r->cause);
    r->down_failure = true;
    cv__replica_set_state(r, CV_RSTATE_UNHEALTHY, r->cause);
    stop_group(r, DOWN_HEALTH);
}

static void on_health_timer(uv_timer_t *t)
{
    cv_replica_t *r = t->data;
    if (r->spec.health.kind == CV_HEALTH_NONE) {
        if (r->state == CV_RSTATE_RUNNING)
            become_healthy(r);
        return;
    }
    if (r->probing || (r->state != CV_RSTATE_RUNNING && r->state != CV_RSTATE_HEALTHY))
        return;
    r->probing = true;
    cv__replica_probe(r, on_probe);
}

static void start_health(cv_replica_t *r)
{
    const cv_rhealth_t *hc = &r->spec.health;
    r->hfails = 0;
    if (hc->kind == CV_HEALTH_NONE) {
        if (hc->grace_period <= 0)
            become_healthy(r);
        else
            uv_timer_start(&r->htimer, on_health_timer, (uint64_t)(hc->grace_period * 1000), 0);
        return;
    }
    uint64_t every = (uint64_t)(hc->interval * 1000);
    uv_timer_start(&r->htimer, on_health_timer, every < 100 ? every : 100, every);
}

/* ------------------------------------------------------------------------ */
/* Starting                                                                 */
/* ------------------------------------------------------------------------ */

static void on_sim_started(uv_timer_t *t)
{
    cv_replica_t *r = t->data;
    r->running_at = cv_now();
    cv__replica_set_state(r, CV_RSTATE_RUNNING, "");
    become_healthy(r);
}

/* One start of the group (the first, or one by the restart policy). */
static void launch(cv_replica_t *r)
{
    char why[512] = "";
    r->down = DOWN_NONE;
    r->down_failure = false;
    r->cause[0] = '\0';
    r->measured = false;
    r->measured_at = 0;
    cv__replica_set_state(r, CV_RSTATE_STARTING, "");
    if (!r->h->simulate && cv__replica_confine_user(r, why, sizeof(why)) != 0) {
        snprintf(r->cause, sizeof(r->cause), "refused by the agent's policy: %s", why);
        cv_info("replica %s: %s", r->spec.rid, r->cause);
        r->down_failure = true;
        r->down = DOWN_REFUSED;
        on_down(r);
        return;
    }
    if (cv__replica_take_ports(r, why, sizeof(why)) != 0 ||
        (!r->h->simulate && cv__replica_prepare_dirs(r, why, sizeof(why)) != 0)) {
        snprintf(r->cause, sizeof(r->cause), "%s", why);
        r->down_failure = true;
        r->down = DOWN_SPAWN;
        on_down(r);
        return;
    }
    r->h->ledger(r->h->ud, r, r->ledger_done ? "restart" : "start");
    r->ledger_done = true;
    r->started = cv_now();
    if (r->h->simulate) {
        uv_timer_start(&r->timer, on_sim_started, 50 + (uint64_t)(rand() % 100), 0);
        return;
    }
    cv__replica_save(r); /* before: a crash in between leaves the ledger mark */
    down_t failed = cv__replica_spawn_all(r, on_task_exit);
    if (failed != DOWN_NONE) {
        stop_group(r, failed);
        return;
    }
    cv__replica_save(r);
    r->running_at = cv_now();
    cv__replica_set_state(r, CV_RSTATE_RUNNING, "");
    start_health(r);
}

void cv_replica_start(cv_replica_t *r)
{
    r->stop_wanted = false;
    r->gave_up = false;
    r->exit[0] = '\0';
    launch(r);
}

/* ------------------------------------------------------------------------ */
/* The restart policy at work                                               */
/* ------------------------------------------------------------------------ */

static void on_backoff_done(uv_timer_t *t)
{
    cv_replica_t *r = t->data;
    char reason[768];
    r->restarts++;
    cv_metrics_add(CV_METRIC_REPLICA_RESTARTS, 1);
    if (r->spec.restart.max_times > 0)
        snprintf(reason, sizeof(reason), "replica %s restarted (%s), restart %d of %d",
                 r->spec.name, r->cause, r->restarts, r->spec.restart.max_times);
    else
        snprintf(reason, sizeof(reason), "replica %s restarted (%s), restart %d", r->spec.name,
                 r->cause, r->restarts);
    cv_info("%s", reason);
    r->h->restarted(r->h->ud, r, reason);
    launch(r);
}

static void on_down(cv_replica_t *r)
{
    char text[768];
    if (r->stop_wanted || r->down == DOWN_STOP) {
        cv__replica_set_state(r, CV_RSTATE_STOPPED, NULL);
        return;
    }
    if (r->down == DOWN_REFUSED) {
        /* No restart makes the node's policy allow it. */
        cv__replica_set_state(r, CV_RSTATE_FAILED, r->cause);
        return;
    }
    double delay = 0;
    r->restarts = cv_restart_counter(
        r->restarts, r->state == CV_RSTATE_HEALTHY ? r->healthy_since : 0, cv_now(), r->h->reset_s);
    r->healthy_since = 0;
    cv_restart_action_t action =
        r->down == DOWN_UNSTARTABLE
            ? cv_restart_decide_start_error(&r->spec.restart)
            : cv_restart_decide(&r->spec.restart, r->restarts, r->down_failure, &delay);
    switch (action) {
    case CV_RESTART_AFTER:
        snprintf(text, sizeof(text), "%s; restarting in %g s", r->cause, delay);
        cv__replica_set_state(r, CV_RSTATE_BACKOFF, text);
        uv_timer_start(&r->timer, on_backoff_done, (uint64_t)(delay * 1000), 0);
        return;
    case CV_RESTART_DONE:
        cv__replica_set_state(r, CV_RSTATE_STOPPED, r->cause);
        return;
    case CV_RESTART_STAY_FAILED:
        cv__replica_set_state(r, CV_RSTATE_FAILED, r->cause);
        return;
    case CV_RESTART_GIVE_UP:
        r->gave_up = true;
        if (r->down == DOWN_UNSTARTABLE)
            snprintf(text, sizeof(text),
                     "%s; it cannot be executed on this node: the restart policy gave up at once",
                     r->cause);
        else
            snprintf(text, sizeof(text), "%s; the restart policy gave up after %d restarts",
                     r->cause, r->restarts);
        cv__replica_set_state(r, CV_RSTATE_FAILED, text);
        return;
    }
}

/* ------------------------------------------------------------------------ */
/* The group going down                                                     */
/* ------------------------------------------------------------------------ */

static void on_kill_timer(uv_timer_t *t)
{
    cv__replica_kill_now(t->data);
}

/* Every task down: the restart policy (or the stop) decides. */
static void all_down(cv_replica_t *r)
{
    if (cv_replica_has_processes(r))
        return;
    uv_timer_stop(&r->timer);
    uv_timer_stop(&r->htimer);
    cv__replica_save(r);
    on_down(r);
}

/* Stops every task of the group: the kill policy's signal, SIGKILL after
 * its grace period. */
static void stop_group(cv_replica_t *r, down_t why)
{
    if (r->down == DOWN_NONE || why == DOWN_STOP)
        r->down = why;
    uv_timer_stop(&r->htimer);
    if (r->h->simulate) {
        all_down(r);
        return;
    }
    if (!cv__replica_signal_all(r)) {
        all_down(r);
        return;
    }
    uv_timer_start(&r->timer, on_kill_timer, (uint64_t)(r->spec.kill_grace * 1000), 0);
}

static void task_down(task_t *t, const char *exit_text, bool failure)
{
    cv_replica_t *r = t->r;
    size_t i = (size_t)(t - r->tasks);
    char text[160];
    t->up = false;
    /* Said in the cause: an exit by the memory limit is the operator's first question. */
    if (cv__replica_release_task(r, i))
        snprintf(text, sizeof(text), "%s, the kernel killed it at its memory limit of %ld MB",
                 exit_text[0] ? exit_text : "status unknown", r->spec.tasks[i].memory_mb);
    else
        snprintf(text, sizeof(text), "%s", exit_text[0] ? exit_text : "");
    if (r->down == DOWN_NONE) {
        snprintf(r->exit, sizeof(r->exit), "%s", exit_text);
        if (r->spec.ntasks > 1)
            snprintf(r->cause, sizeof(r->cause), "task %s exited (%s)", r->spec.tasks[i].name,
                     text[0] ? text : "status unknown");
        else
            snprintf(r->cause, sizeof(r->cause), "%s", text[0] ? text : "exited, status unknown");
        r->down_failure = failure;
        cv_info("replica %s: %s", r->spec.rid, r->cause);
        stop_group(r, DOWN_EXIT);
        return;
    }
    all_down(r);
}

static void on_task_exit(uv_process_t *p, int64_t status, int sig)
{
    task_t *t = p->data;
    cv_proc_close(p);
    if (!t)
        return;
    t->proc = NULL;
    char text[32];
    cv_proc_exit_text(text, sizeof(text), status, sig);
    task_down(t, text, status != 0 || sig != 0);
}

void cv_replica_stop(cv_replica_t *r, const char *why, bool now)
{
    r->stop_wanted = true;
    uv_timer_stop(&r->timer);
    if (!cv_replica_has_processes(r)) {
        uv_timer_stop(&r->htimer);
        cv__replica_set_state(r, CV_RSTATE_STOPPED, why);
        return;
    }
    cv_info("replica %s: stopping: %s", r->spec.rid, why);
    cv__replica_set_state(r, CV_RSTATE_STOPPING, why);
    stop_group(r, DOWN_STOP);
    if (now)
        cv__replica_kill_now(r);
}

/* ------------------------------------------------------------------------ */
/* Re-adoption                                                              */
/* ------------------------------------------------------------------------ */

/* A replica that was stopped (for good, or by its restart policy) when the
 * previous run ended stays so: nothing to restart, its verdict stands. */
static bool adopt_verdict(cv_replica_t *r, const json_t *state)
{
    const char *was = json_string_value(json_object_get(state, "state"));
    const char *reason = json_string_value(json_object_get(state, "reason"));
    const char *exit_text = json_string_value(json_object_get(state, "exit"));
    snprintf(r->reason, sizeof(r->reason), "%s", reason ? reason : "");
    snprintf(r->exit, sizeof(r->exit), "%s", exit_text ? exit_text : "");
    r->gave_up = json_is_true(json_object_get(state, "gave_up"));
    if (json_is_true(json_object_get(state, "stopped"))) {
        r->stop_wanted = true;
        r->state = CV_RSTATE_STOPPED;
        return true;
    }
    if (was && (strcmp(was, "stopped") == 0 || strcmp(was, "failed") == 0)) {
        r->state = strcmp(was, "failed") == 0 ? CV_RSTATE_FAILED : CV_RSTATE_STOPPED;
        return true;
    }
    r->reason[0] = r->exit[0] = '\0';
    r->gave_up = false;
    return false;
}

void cv_replica_adopt(cv_replica_t *r, const json_t *state)
{
    r->restarts = (int)json_integer_value(json_object_get(state, "restarts"));
    r->started = json_number_value(json_object_get(state, "started"));
    r->ledger_done = json_is_true(json_object_get(state, "ledger"));
    const json_t *ports = json_object_get(state, "ports");
    if (json_is_object(ports))
        json_object_update(r->ports, (json_t *)ports);
    const char *name;
    const json_t *port;
    json_object_foreach(r->ports, name, port)
    {
        if (cv_ports_take(r->h->ports, (int)json_integer_value(port), r->spec.rid) != 0)
            cv_warn("replica %s: its port %lld is also another replica's", r->spec.rid,
                    (long long)json_integer_value(port));
    }
    char why[512];
    cv__replica_prepare_dirs(r, why, sizeof(why));
    const json_t *tasks = json_object_get(state, "tasks");
    int alive = 0;
    for (size_t i = 0; i < r->spec.ntasks; i++) {
        const json_t *t = json_array_get(tasks, i);
        pid_t pid = (pid_t)json_integer_value(json_object_get(t, "pid"));
        unsigned long long st =
            (unsigned long long)json_integer_value(json_object_get(t, "start_time"));
        if (pid > 0 && cv_proc_alive(pid, st)) {
            r->tasks[i] = (task_t){.r = r, .pid = pid, .start_time = st, .up = true};
            alive++;
        }
    }
    if (alive == 0 && adopt_verdict(r, state))
        return;
    if (alive == (int)r->spec.ntasks) {
        cv_info("replica %s: re-adopted %d process(es), pid %d", r->spec.rid, alive,
                (int)r->tasks[0].pid);
        r->running_at = cv_now() - r->spec.health.grace_period;
        cv__replica_set_state(r, CV_RSTATE_RUNNING, "re-adopted");
        start_health(r);
        return;
    }
    /* Some or all died while no agent watched: the restart policy decides. */
    snprintf(r->cause, sizeof(r->cause), "exited while the agent was away, status unknown");
    r->exit[0] = '\0';
    r->down_failure = true;
    r->down = DOWN_EXIT;
    cv_info("replica %s: %s", r->spec.rid, r->cause);
    if (alive == 0 && r->started == 0) {
        /* Never spawned (the agent died before it could): a first start. */
        launch(r);
        return;
    }
    stop_group(r, DOWN_EXIT);
}

/* ------------------------------------------------------------------------ */
/* Ticks                                                                    */
/* ------------------------------------------------------------------------ */

/* Resident memory now, and CPU cores used since the previous measure. */
static void measure(cv_replica_t *r)
{
    double now = cv_now(), rss = 0, cpu = 0;
    bool any = false;
    for (size_t i = 0; i < r->spec.ntasks; i++) {
        double m, c;
        if (!r->tasks[i].up || cv_proc_usage(r->tasks[i].pid, &m, &c) != 0)
            continue;
        any = true;
        rss += m;
        if (r->measured_at > 0 && now > r->measured_at && c >= r->tasks[i].cpu_s)
            cpu += (c - r->tasks[i].cpu_s) / (now - r->measured_at);
        r->tasks[i].cpu_s = c;
    }
    /* The first look only sets the CPU baseline. */
    r->measured = any && r->measured_at > 0;
    r->rss_mb = rss;
    r->cpu_cores = cpu;
    r->measured_at = any ? now : 0;
}

/* The loads the replica reports in its load file (agent_loadfile.h). Only
 * a regular file is read, without blocking (a replica could name a FIFO);
 * bad lines are warned about once until the file is clean again. */
static void read_reported(cv_replica_t *r)
{
    char buf[CV_LOADFILE_MAX + 1];
    json_decref(r->reported);
    r->reported = NULL;
    /* O_NOFOLLOW: the folder is the replica's, and a link it put there
     * must not make the agent read (and quote) a file of its choosing. */
    int fd = open(r->load_file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof(buf)) : -1;
    close(fd);
    if (n < 0)
        return;
    bool truncated = (size_t)n > CV_LOADFILE_MAX;
    cv_loadfile_bad_t bad;
    r->reported = cv_loadfile_parse(buf, truncated ? CV_LOADFILE_MAX : (size_t)n, truncated,
                                    r->spec.load, &bad);
    if (bad.count > 0 && !r->load_warned)
        cv_warn("replica %s: %d bad line(s) in its load file %s ignored; %s", r->spec.rid,
                bad.count, r->load_file, bad.first);
    r->load_warned = bad.count > 0;
}

static void cap_logs(cv_replica_t *r)
{
    static const char *const streams[] = {"out", "err"};
    for (size_t i = 0; i < r->spec.ntasks; i++)
        for (int s = 0; s < 2; s++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/logs/%s/%s.%s", r->h->dir, r->spec.name,
                     r->spec.tasks[i].name, streams[s]);
            if (cv_logcap_rotate(path, r->h->log_cap) < 0)
                cv_warn("replica %s: capping %s failed", r->spec.rid, path);
        }
}

void cv_replica_tick(cv_replica_t *r, bool full)
{
    if (r->h->simulate)
        return;
    for (size_t i = 0; i < r->spec.ntasks; i++) {
        task_t *t = &r->tasks[i];
        if (t->up && !t->proc && !cv_proc_alive(t->pid, t->start_time))
            task_down(t, "", true); /* a re-adopted process: its status is its parent's */
    }
    if (!full)
        return;
    measure(r);
    read_reported(r);
    cap_logs(r);
    if (r->state == CV_RSTATE_HEALTHY && r->restarts > 0 &&
        cv_restart_counter(r->restarts, r->healthy_since, cv_now(), r->h->reset_s) == 0) {
        cv_info("replica %s: healthy for %g s: restart counter reset", r->spec.rid, r->h->reset_s);
        r->restarts = 0;
        cv__replica_save(r);
        r->h->changed(r->h->ud, r);
    }
}
