#include "agent_replica.h"

#include "agent_env.h"
#include "agent_logcap.h"
#include "agent_probe.h"
#include "agent_proc.h"
#include "agent_state.h"

#include "cv_log.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

typedef struct task {
    cv_replica_t *r;
    pid_t pid;
    unsigned long long start_time;
    uv_process_t *proc; /* our child; NULL for a re-adopted process */
    bool up;
    double cpu_s; /* CPU seconds at the last measure */
} task_t;

/* Why the processes went down, for the restart policy and the report. */
typedef enum { DOWN_NONE = 0, DOWN_EXIT, DOWN_HEALTH, DOWN_SPAWN, DOWN_STOP } down_t;

struct cv_replica {
    cv_rhost_t *h;
    cv_rspec_t spec;
    task_t *tasks;
    cv_rstate_t state;
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
    uv_timer_t timer;  /* backoff, kill grace, simulated start */
    uv_timer_t htimer; /* health checks; the grace period without one */
    int open_handles;
};

static void on_down(cv_replica_t *r);

/* ------------------------------------------------------------------------ */
/* State and reports                                                        */
/* ------------------------------------------------------------------------ */

static void set_state(cv_replica_t *r, cv_rstate_t s, const char *reason)
{
    if (r->state != s)
        r->since = cv_now();
    r->state = s;
    if (reason)
        snprintf(r->reason, sizeof(r->reason), "%s", reason);
    r->h->changed(r->h->ud, r);
}

json_t *cv_replica_report(const cv_replica_t *r)
{
    cv_report_t rep = {.rid = r->spec.rid,
                       .state = r->state,
                       .pid = r->tasks[0].up ? r->tasks[0].pid : 0,
                       .start_time = r->tasks[0].up ? r->tasks[0].start_time : 0,
                       .started = r->started,
                       .since = r->since,
                       .restarts = r->restarts,
                       .reason = r->reason,
                       .exit = r->exit,
                       .address = r->h->address,
                       .ports = r->ports,
                       .gave_up = r->gave_up,
                       .digest = r->spec.digest,
                       .declared = r->spec.load,
                       .measured = r->measured,
                       .rss_mb = r->rss_mb,
                       .cpu_cores = r->cpu_cores};
    return cv_report_json(&rep);
}

bool cv_replica_has_processes(const cv_replica_t *r)
{
    for (size_t i = 0; i < r->spec.ntasks; i++)
        if (r->tasks[i].up)
            return true;
    return false;
}

void cv_replica_add_load(const cv_replica_t *r, json_t *sum)
{
    if (!cv_replica_has_processes(r) &&
        !(r->h->simulate && (r->state == CV_RSTATE_HEALTHY || r->state == CV_RSTATE_RUNNING)))
        return;
    json_t *rep = cv_replica_report(r);
    cv_report_load_add(sum, json_object_get(rep, "load"));
    json_decref(rep);
}

/* The state file: what a restarted agent needs to re-adopt. */
static void save(cv_replica_t *r)
{
    if (r->h->simulate)
        return;
    json_t *tasks = json_array();
    for (size_t i = 0; i < r->spec.ntasks; i++)
        json_array_append_new(tasks,
                              json_pack("{s:s, s:i, s:I}", "name", r->spec.tasks[i].name, "pid",
                                        r->tasks[i].up ? (int)r->tasks[i].pid : 0, "start_time",
                                        (json_int_t)(r->tasks[i].up ? r->tasks[i].start_time : 0)));
    json_t *st = json_pack("{s:s, s:O, s:o, s:O, s:i, s:f, s:b}", "rid", r->spec.rid, "spec",
                           r->spec.json, "tasks", tasks, "ports", r->ports, "restarts", r->restarts,
                           "started", r->started, "ledger", r->ledger_done);
    int rc = st ? cv_state_write(r->h->dir, r->spec.rid, st) : -ENOMEM;
    if (rc)
        cv_warn("replica %s: writing its state file: %s", r->spec.rid, strerror(-rc));
    json_decref(st);
}

/* ------------------------------------------------------------------------ */
/* Creating and freeing                                                     */
/* ------------------------------------------------------------------------ */

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
    r->since = cv_now();
    uv_timer_init(h->loop, &r->timer);
    uv_timer_init(h->loop, &r->htimer);
    r->timer.data = r->htimer.data = r;
    return r;
}

/* The replica lives until its two timers closed and no probe is out. */
static void release(cv_replica_t *r)
{
    if (--r->open_handles > 0)
        return;
    cv_rspec_free(&r->spec);
    json_decref(r->ports);
    json_decref(r->volumes);
    free(r->tasks);
    free(r);
}

static void on_handle_closed(uv_handle_t *handle)
{
    release(handle->data);
}

void cv_replica_free(cv_replica_t *r, bool forget)
{
    if (forget && !r->h->simulate)
        cv_state_remove(r->h->dir, r->spec.rid);
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

const char *cv_replica_rid(const cv_replica_t *r)
{
    return r->spec.rid;
}

const cv_rspec_t *cv_replica_spec(const cv_replica_t *r)
{
    return &r->spec;
}

cv_rstate_t cv_replica_state(const cv_replica_t *r)
{
    return r->state;
}

bool cv_replica_stopped(const cv_replica_t *r)
{
    return r->stop_wanted && r->state == CV_RSTATE_STOPPED && !cv_replica_has_processes(r);
}

/* ------------------------------------------------------------------------ */
/* Ports, directories, volumes                                              */
/* ------------------------------------------------------------------------ */

static bool host_port_free(void *ud, int port)
{
    (void)ud;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return true;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* Each port of the spec gets a host port once; restarts and re-adoption
 * keep it. */
static int take_ports(cv_replica_t *r, char *why, size_t why_size)
{
    for (size_t i = 0; i < r->spec.nports; i++) {
        const cv_rport_t *p = &r->spec.ports[i];
        const json_t *have = json_object_get(r->ports, p->name);
        int port = have ? (int)json_integer_value(have) : p->port;
        int rc;
        if (port > 0) {
            rc = cv_ports_take(r->h->ports, port, r->spec.rid);
            if (rc) {
                snprintf(why, why_size, "port %s: host port %d is taken by replica %s", p->name,
                         port, cv_ports_owner(r->h->ports, port));
                return rc;
            }
        } else if ((port = cv_ports_alloc(r->h->ports, r->spec.rid,
                                          r->h->simulate ? NULL : host_port_free, NULL)) < 0) {
            snprintf(why, why_size, "port %s: no free host port left in %d-%d", p->name,
                     r->h->ports->lo, r->h->ports->hi);
            return port;
        }
        json_object_set_new(r->ports, p->name, json_integer(port));
    }
    return 0;
}

static int prepare_dirs(cv_replica_t *r, char *why, size_t why_size)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/logs/%s", r->h->dir, r->spec.name);
    int rc = cv_mkdirs(path);
    for (size_t i = 0; !rc && i < r->spec.nvolumes; i++) {
        const cv_rvolume_t *v = &r->spec.volumes[i];
        snprintf(path, sizeof(path), "%s/volumes/%s/%s-%d/%s", r->h->dir,
                 r->spec.stack[0] ? r->spec.stack : "-", r->spec.service, r->spec.index, v->name);
        rc = cv_mkdirs(path);
        json_object_set_new(r->volumes, v->name, json_string(path));
    }
    if (rc)
        snprintf(why, why_size, "creating %.300s: %s", path, strerror(-rc));
    return rc;
}

/* The task's working directory: its own (substituted), or <dir>/work/<name>. */
static char *workdir_of(cv_replica_t *r, const cv_rtask_t *t, const json_t *vars)
{
    char *wd;
    if (t->workdir && t->workdir[0])
        wd = cv_env_subst(t->workdir, &r->spec, t, vars);
    else if (asprintf(&wd, "%s/work/%s", r->h->dir, r->spec.name) < 0)
        wd = NULL;
    if (wd)
        cv_mkdirs(wd);
    return wd;
}

/* A volume with a relative `path` also appears there in the working directory. */
static void link_volumes(cv_replica_t *r, const char *wd)
{
    for (size_t i = 0; i < r->spec.nvolumes; i++) {
        const cv_rvolume_t *v = &r->spec.volumes[i];
        if (!v->path || !v->path[0] || v->path[0] == '/' || strstr(v->path, ".."))
            continue;
        char link[4096];
        snprintf(link, sizeof(link), "%s/%s", wd, v->path);
        struct stat st;
        if (lstat(link, &st) != 0 &&
            symlink(json_string_value(json_object_get(r->volumes, v->name)), link) != 0)
            cv_warn("replica %s: volume %s at %s: %s", r->spec.rid, v->name, link,
                    strerror(errno));
    }
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
    set_state(r, CV_RSTATE_HEALTHY, "");
}

static void stop_group(cv_replica_t *r, down_t why);

static void on_probe(void *ud, bool ok, const char *why)
{
    cv_replica_t *r = ud;
    r->probing = false;
    if (r->closing) {
        release(r);
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
    set_state(r, CV_RSTATE_UNHEALTHY, r->cause);
    stop_group(r, DOWN_HEALTH);
}

static void on_health_timer(uv_timer_t *t)
{
    cv_replica_t *r = t->data;
    const cv_rhealth_t *hc = &r->spec.health;
    if (hc->kind == CV_HEALTH_NONE) {
        if (r->state == CV_RSTATE_RUNNING)
            become_healthy(r);
        return;
    }
    if (r->probing || (r->state != CV_RSTATE_RUNNING && r->state != CV_RSTATE_HEALTHY))
        return;
    cv_probe_req_t req = {.kind = hc->kind,
                          .address = r->h->address,
                          .path = hc->path,
                          .argv = hc->argv,
                          .timeout = hc->timeout > 0 ? hc->timeout : 1};
    const json_t *port = hc->port ? json_object_get(r->ports, hc->port) : NULL;
    req.port = port ? (int)json_integer_value(port) : 0;
    char **env = NULL, **argv = NULL;
    char *wd = NULL;
    if (hc->kind == CV_HEALTH_COMMAND) {
        cv_env_where_t w = {r->h->node, r->h->address, r->ports, r->volumes};
        json_t *vars = cv_env_vars(&r->spec, &r->spec.tasks[0], &w);
        env = cv_env_build(&r->spec, &r->spec.tasks[0], vars, environ);
        argv = cv_env_argv(hc->argv, &r->spec, &r->spec.tasks[0], vars);
        wd = workdir_of(r, &r->spec.tasks[0], vars);
        req.argv = (const char *const *)argv;
        req.env = env;
        req.cwd = wd;
        json_decref(vars);
    }
    r->probing = true;
    cv_probe_start(r->h->loop, &req, on_probe, r);
    cv_env_free(env);
    cv_env_free(argv);
    free(wd);
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
/* Processes                                                                */
/* ------------------------------------------------------------------------ */

static void on_kill_timer(uv_timer_t *t)
{
    cv_replica_t *r = t->data;
    for (size_t i = 0; i < r->spec.ntasks; i++)
        if (r->tasks[i].up) {
            cv_info("replica %s: task %s (pid %d) still runs after the kill grace period: SIGKILL",
                    r->spec.rid, r->spec.tasks[i].name, (int)r->tasks[i].pid);
            cv_proc_signal(r->tasks[i].pid, SIGKILL);
        }
}

/* Every task down: the restart policy (or the stop) decides. */
static void check_all_down(cv_replica_t *r)
{
    if (cv_replica_has_processes(r))
        return;
    uv_timer_stop(&r->timer);
    uv_timer_stop(&r->htimer);
    save(r);
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
        check_all_down(r);
        return;
    }
    bool any = false;
    for (size_t i = 0; i < r->spec.ntasks; i++)
        if (r->tasks[i].up) {
            cv_proc_signal(r->tasks[i].pid, r->spec.kill_signal);
            any = true;
        }
    if (!any) {
        check_all_down(r);
        return;
    }
    uv_timer_start(&r->timer, on_kill_timer, (uint64_t)(r->spec.kill_grace * 1000), 0);
}

static void task_down(task_t *t, const char *exit_text, bool failure)
{
    cv_replica_t *r = t->r;
    t->up = false;
    if (r->down == DOWN_NONE) {
        size_t i = (size_t)(t - r->tasks);
        snprintf(r->exit, sizeof(r->exit), "%s", exit_text);
        if (r->spec.ntasks > 1)
            snprintf(r->cause, sizeof(r->cause), "task %s exited (%s)", r->spec.tasks[i].name,
                     exit_text[0] ? exit_text : "status unknown");
        else
            snprintf(r->cause, sizeof(r->cause), "%s",
                     exit_text[0] ? exit_text : "exited, status unknown");
        r->down_failure = failure;
        cv_info("replica %s: %s", r->spec.rid, r->cause);
        stop_group(r, DOWN_EXIT);
        return;
    }
    check_all_down(r);
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

/* Spawns every task; on the first that cannot start, the group goes down
 * with that reason (a failure for the restart policy). */
static void spawn_all(cv_replica_t *r)
{
    char why[512] = "";
    cv_env_where_t w = {r->h->node, r->h->address, r->ports, r->volumes};
    for (size_t i = 0; i < r->spec.ntasks && !why[0]; i++) {
        const cv_rtask_t *t = &r->spec.tasks[i];
        json_t *vars = cv_env_vars(&r->spec, t, &w);
        char **env = cv_env_build(&r->spec, t, vars, environ);
        char **argv = cv_env_argv(t->argv, &r->spec, t, vars);
        char *wd = workdir_of(r, t, vars);
        char out[4096], err[4096];
        snprintf(out, sizeof(out), "%s/logs/%s/%s.out", r->h->dir, r->spec.name, t->name);
        snprintf(err, sizeof(err), "%s/logs/%s/%s.err", r->h->dir, r->spec.name, t->name);
        if (wd)
            link_volumes(r, wd);
        cv_spawn_t s = {.argv = (const char *const *)argv,
                        .env = env,
                        .cwd = wd,
                        .out_path = out,
                        .err_path = err,
                        .memory_mb = t->memory_mb,
                        .nofile = t->nofile,
                        .on_exit = on_task_exit,
                        .data = &r->tasks[i]};
        if (!env || !argv || !argv[0] || !wd)
            snprintf(why, sizeof(why), "out of memory");
        else if (cv_proc_spawn(r->h->loop, &s, &r->tasks[i].proc, &r->tasks[i].pid, why,
                               sizeof(why)) == 0) {
            r->tasks[i].up = true;
            r->tasks[i].start_time = cv_proc_start_time(r->tasks[i].pid);
            cv_info("replica %s: task %s started, pid %d", r->spec.rid, t->name,
                    (int)r->tasks[i].pid);
        }
        cv_env_free(env);
        cv_env_free(argv);
        free(wd);
        json_decref(vars);
    }
    if (!why[0])
        return;
    cv_info("replica %s: %s", r->spec.rid, why);
    snprintf(r->cause, sizeof(r->cause), "%s", why);
    r->exit[0] = '\0';
    r->down_failure = true;
    stop_group(r, DOWN_SPAWN);
}

static void on_sim_started(uv_timer_t *t)
{
    cv_replica_t *r = t->data;
    r->running_at = cv_now();
    set_state(r, CV_RSTATE_RUNNING, "");
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
    set_state(r, CV_RSTATE_STARTING, "");
    if (take_ports(r, why, sizeof(why)) != 0 ||
        (!r->h->simulate && prepare_dirs(r, why, sizeof(why)) != 0)) {
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
    save(r); /* before: a crash in between leaves the ledger mark */
    spawn_all(r);
    if (r->down != DOWN_NONE)
        return;
    save(r);
    r->running_at = cv_now();
    set_state(r, CV_RSTATE_RUNNING, "");
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
        set_state(r, CV_RSTATE_STOPPED, NULL);
        return;
    }
    double delay;
    r->restarts =
        cv_restart_counter(r->restarts, r->state == CV_RSTATE_HEALTHY ? r->healthy_since : 0,
                           cv_now(), r->h->reset_s);
    r->healthy_since = 0;
    switch (cv_restart_decide(&r->spec.restart, r->restarts, r->down_failure, &delay)) {
    case CV_RESTART_AFTER:
        snprintf(text, sizeof(text), "%s; restarting in %g s", r->cause, delay);
        set_state(r, CV_RSTATE_BACKOFF, text);
        uv_timer_start(&r->timer, on_backoff_done, (uint64_t)(delay * 1000), 0);
        return;
    case CV_RESTART_DONE:
        set_state(r, CV_RSTATE_STOPPED, r->cause);
        return;
    case CV_RESTART_STAY_FAILED:
        set_state(r, CV_RSTATE_FAILED, r->cause);
        return;
    case CV_RESTART_GIVE_UP:
        r->gave_up = true;
        snprintf(text, sizeof(text), "%s; the restart policy gave up after %d restarts", r->cause,
                 r->restarts);
        set_state(r, CV_RSTATE_FAILED, text);
        return;
    }
}

void cv_replica_stop(cv_replica_t *r, const char *why)
{
    r->stop_wanted = true;
    uv_timer_stop(&r->timer);
    if (!cv_replica_has_processes(r)) {
        uv_timer_stop(&r->htimer);
        set_state(r, CV_RSTATE_STOPPED, why);
        return;
    }
    cv_info("replica %s: stopping: %s", r->spec.rid, why);
    set_state(r, CV_RSTATE_STOPPING, why);
    stop_group(r, DOWN_STOP);
}

/* ------------------------------------------------------------------------ */
/* Re-adoption                                                              */
/* ------------------------------------------------------------------------ */

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
    prepare_dirs(r, why, sizeof(why));
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
    if (alive == (int)r->spec.ntasks) {
        cv_info("replica %s: re-adopted %d process(es), pid %d", r->spec.rid, alive,
                (int)r->tasks[0].pid);
        r->running_at = cv_now() - r->spec.health.grace_period;
        set_state(r, CV_RSTATE_RUNNING, "re-adopted");
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
    cap_logs(r);
    if (r->state == CV_RSTATE_HEALTHY && r->restarts > 0 &&
        cv_restart_counter(r->restarts, r->healthy_since, cv_now(), r->h->reset_s) == 0) {
        cv_info("replica %s: healthy for %g s: restart counter reset", r->spec.rid,
                r->h->reset_s);
        r->restarts = 0;
        save(r);
        r->h->changed(r->h->ud, r);
    }
}
