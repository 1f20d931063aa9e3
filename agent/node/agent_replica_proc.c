/*
 * A replica's ports, directories and processes: what a start needs on the
 * host, spawning the group and signalling it. The mechanics only: what a
 * process's exit means is the life cycle's (agent_replica.c), which hands
 * its exit callback to cv__replica_spawn_all.
 */
#include "agent_replica_internal.h"

#include "agent_env.h"
#include "agent_proc.h"
#include "agent_state.h"

#include "cv_base.h"
#include "cv_io.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

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
int cv__replica_take_ports(cv_replica_t *r, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < r->spec.nports; i++) {
        const cv_rport_t *p = &r->spec.ports[i];
        const json_t *have = json_object_get(r->ports, p->name);
        int port = have ? (int)json_integer_value(have) : p->port;
        int rc;
        if (port > 0) {
            rc = cv_ports_take(r->h->ports, port, r->spec.rid);
            if (rc) {
                snprintf(errstr, errstr_size, "port %s: host port %d is taken by replica %s",
                         p->name, port, cv_ports_owner(r->h->ports, port));
                return rc;
            }
        } else if ((port = cv_ports_alloc(r->h->ports, r->spec.rid,
                                          r->h->simulate ? NULL : host_port_free, NULL)) < 0) {
            snprintf(errstr, errstr_size, "port %s: no free host port left in %d-%d", p->name,
                     r->h->ports->lo, r->h->ports->hi);
            return port;
        }
        json_object_set_new(r->ports, p->name, json_integer(port));
    }
    return 0;
}

int cv__replica_prepare_dirs(cv_replica_t *r, char *errstr, size_t errstr_size)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/logs/%s", r->h->dir, r->spec.name);
    int rc = cv_mkdirs(path);
    for (size_t i = 0; !rc && i < r->spec.nvolumes; i++) {
        const cv_rvolume_t *v = &r->spec.volumes[i];
        snprintf(path, sizeof(path), "%s/volumes/%s/%s-%d/%s", r->h->dir,
                 r->spec.stack[0] ? r->spec.stack : "-", r->spec.service, r->spec.index, v->name);
        rc = cv_mkdirs(path);
        if (!rc)
            cv__replica_own(r, path);
        json_object_set_new(r->volumes, v->name, json_string(path));
    }
    if (rc)
        snprintf(errstr, errstr_size, "creating %.300s: %s", path, strerror(-rc));
    return rc;
}

/* The task's working directory: <dir>/work/<name>, or its own
 * (substituted; a relative one below <dir>/work/<name>). The replica's
 * user owns <dir>/work/<name> and what the agent creates below it. */
char *cv__replica_workdir(cv_replica_t *r, const cv_rtask_t *t, const json_t *vars)
{
    char *own, *wd = NULL;
    if (asprintf(&own, "%s/work/%s", r->h->dir, r->spec.name) < 0)
        return NULL;
    char *given = t->workdir && t->workdir[0] ? cv_env_subst(t->workdir, &r->spec, t, vars) : NULL;
    if (!given)
        wd = strdup(own);
    else if (given[0] == '/')
        wd = strdup(given);
    else if (asprintf(&wd, "%s/%s", own, given) < 0)
        wd = NULL;
    free(given);
    if (wd && cv_mkdirs(wd) == 0 && strncmp(wd, own, strlen(own)) == 0) {
        cv__replica_own(r, own);
        cv__replica_own(r, wd);
    }
    free(own);
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
            cv_warn("replica %s: volume %s at %s: %s", r->spec.rid, v->name, link, strerror(errno));
    }
}

/* ------------------------------------------------------------------------ */
/* Processes                                                                */
/* ------------------------------------------------------------------------ */

void cv__replica_kill_now(cv_replica_t *r)
{
    for (size_t i = 0; i < r->spec.ntasks; i++)
        if (r->tasks[i].up) {
            cv_info("replica %s: task %s (pid %d) still runs after the kill grace period: SIGKILL",
                    r->spec.rid, r->spec.tasks[i].name, (int)r->tasks[i].pid);
            cv_proc_signal(r->tasks[i].pid, SIGKILL);
        }
}

/* Signals every task up with the kill policy's signal; whether any was. */
bool cv__replica_signal_all(cv_replica_t *r)
{
    bool any = false;
    for (size_t i = 0; i < r->spec.ntasks; i++)
        if (r->tasks[i].up) {
            cv_proc_signal(r->tasks[i].pid, r->spec.kill_signal);
            any = true;
        }
    return any;
}

static void prepare_load_file(cv_replica_t *r);

down_t cv__replica_spawn_all(cv_replica_t *r, uv_exit_cb on_exit)
{
    char why[512] = "";
    bool refused = false, unstartable = false;
    int rc;
    prepare_load_file(r);
    cv_env_where_t w = {r->h->node, r->h->address, r->ports, r->volumes, r->load_file};
    for (size_t i = 0; i < r->spec.ntasks && !why[0]; i++) {
        const cv_rtask_t *t = &r->spec.tasks[i];
        json_t *vars = cv_env_vars(&r->spec, t, &w);
        char **env = cv_env_build(&r->spec, t, vars, environ);
        char **argv = cv_env_argv(t->argv, &r->spec, t, vars);
        char *wd = cv__replica_workdir(r, t, vars);
        char out[4096], err[4096];
        snprintf(out, sizeof(out), "%s/logs/%s/%s.out", r->h->dir, r->spec.name, t->name);
        snprintf(err, sizeof(err), "%s/logs/%s/%s.err", r->h->dir, r->spec.name, t->name);
        char **wrapped = NULL;
        if (wd)
            link_volumes(r, wd);
        if (!env || !argv || !argv[0] || !wd)
            snprintf(why, sizeof(why), "out of memory");
        else if ((rc = cv__replica_confine_task(r, i, env, argv, wd, &wrapped, why, sizeof(why))) !=
                 0) {
            refused = rc == CV_EVALIDATE;
            unstartable = rc == CV_ENOENT;
        }
        cv_spawn_t s = {.argv = (const char *const *)wrapped,
                        .env = env,
                        .cwd = wd,
                        .out_path = out,
                        .err_path = err,
                        .on_exit = on_exit,
                        .data = &r->tasks[i]};
        if (!why[0] && cv_proc_spawn(r->h->loop, &s, &r->tasks[i].proc, &r->tasks[i].pid, why,
                                     sizeof(why)) == 0) {
            r->tasks[i].up = true;
            r->tasks[i].start_time = cv_proc_start_time(r->tasks[i].pid);
            cv_info("replica %s: task %s started, pid %d", r->spec.rid, t->name,
                    (int)r->tasks[i].pid);
        }
        cv_env_free(env);
        cv_env_free(argv);
        cv_env_free(wrapped);
        free(wd);
        json_decref(vars);
    }
    if (!why[0])
        return DOWN_NONE;
    cv_info("replica %s: %s", r->spec.rid, why);
    if (refused)
        snprintf(r->cause, sizeof(r->cause), "refused by the agent's policy: %s", why);
    else
        snprintf(r->cause, sizeof(r->cause), "%s", why);
    r->exit[0] = '\0';
    r->down_failure = true;
    return refused ? DOWN_REFUSED : unstartable ? DOWN_UNSTARTABLE : DOWN_SPAWN;
}

/* CONVERGE_LOAD_FILE's folder exists before the replica runs, its user's:
 * inside its mount namespace the folder is bound at its path, and the
 * replica writes the file in it through a temporary file and a rename. */
static void prepare_load_file(cv_replica_t *r)
{
    if (!r->load_file[0])
        return;
    char dir[sizeof(r->load_file)];
    snprintf(dir, sizeof(dir), "%s", r->load_file);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';
    char *parent = strrchr(dir, '/');
    if (parent) {
        *parent = '\0';
        mkdir(dir, 0700); /* <dir>/loads, the agent's */
        *parent = '/';
    }
    mkdir(dir, 0700);
    cv__replica_own(r, dir);
}
