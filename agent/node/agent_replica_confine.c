/*
 * A replica's confinement on a real node: the user it runs as, the agent's
 * policy on its spec, and for each task the program, the working
 * directory, the cgroup and the sandbox helper's argv (agent_sandbox.h).
 */
#include "agent_replica_internal.h"

#include "agent_env.h"

#include "cv_base.h"
#include "cv_io.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A user name or a numeric uid: its uid and group, or uid -1. */
static void lookup_user(const char *name, long *uid, long *gid)
{
    const struct passwd *pw = getpwnam(name);
    bool numeric = name[0] != '\0';
    for (const char *p = name; *p; p++)
        numeric = numeric && isdigit((unsigned char)*p);
    if (!pw && numeric)
        pw = getpwuid((uid_t)atol(name));
    *uid = pw ? (long)pw->pw_uid : numeric ? atol(name) : -1;
    *gid = pw ? (long)pw->pw_gid : *uid;
}

int cv__replica_confine_user(cv_replica_t *r, char *errstr, size_t errstr_size)
{
    const cv_sandbox_t *sb = r->h->sb;
    r->uid = r->gid = -1;
    if (!sb)
        return 0;
    int rc = cv_policy_check_spec(&sb->policy, &r->spec, errstr, errstr_size);
    long uid = sb->uid, gid = sb->gid;
    if (!rc && r->spec.user && r->spec.user[0]) {
        lookup_user(r->spec.user, &uid, &gid);
        rc = cv_policy_check_user(&sb->policy, r->spec.user, uid, sb->uid, sb->root, errstr,
                                  errstr_size);
    }
    if (!rc && sb->root) {
        r->uid = uid;
        r->gid = gid;
    }
    return rc;
}

void cv__replica_own(const cv_replica_t *r, const char *path)
{
    if (r->uid >= 0 && r->h->sb && r->h->sb->root && chown(path, (uid_t)r->uid, (gid_t)r->gid) != 0)
        cv_warn("replica %s: chown %s to uid %ld: %m", r->spec.rid, path, r->uid);
}

static bool below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The directories a task may work in, and those it sees inside the hidden
 * agent directory (its working directory when hidden, volumes, load file). */
typedef struct places {
    char own[PATH_MAX], load_dir[PATH_MAX];
    const char *roots[CV_POLICY_MAX_EXEC], *binds[CV_POLICY_MAX_EXEC];
    size_t nroots, nbinds;
} places_t;

static void places_of(const cv_replica_t *r, const char *wd, places_t *p)
{
    snprintf(p->own, sizeof(p->own), "%s/work/%s", r->h->dir, r->spec.name);
    p->roots[p->nroots++] = p->own;
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)r->volumes, name, v)
    {
        if (p->nroots < CV_POLICY_MAX_EXEC - 2) {
            p->roots[p->nroots++] = json_string_value(v);
            p->binds[p->nbinds++] = json_string_value(v);
        }
    }
    if (below(wd, r->h->sb->dir) || below(wd, "/tmp"))
        p->binds[p->nbinds++] = wd;
    if (r->load_file[0]) {
        snprintf(p->load_dir, sizeof(p->load_dir), "%s", r->load_file);
        char *slash = strrchr(p->load_dir, '/');
        if (slash)
            *slash = '\0';
        p->binds[p->nbinds++] = p->load_dir;
    }
}

/* The cgroup name of task i, or of the replica's health check command
 * (i == SIZE_MAX), which is confined like its first task. */
static void group_name(const cv_replica_t *r, size_t i, char *buf, size_t size)
{
    cv_cgroup_name(buf, size, r->spec.rid, i == SIZE_MAX ? "health-check" : r->spec.tasks[i].name);
}

int cv__replica_confine_task(cv_replica_t *r, size_t i, char *const *env, char *const *argv,
                             const char *wd, char ***wrapped, char *errstr, size_t errstr_size)
{
    const cv_sandbox_t *sb = r->h->sb;
    const cv_rtask_t *t = &r->spec.tasks[i == SIZE_MAX ? 0 : i];
    char program[PATH_MAX];
    int rc = cv_sandbox_resolve(argv[0], env, r->uid, r->gid, program, sizeof(program));
    /* CV_ENOENT: the program cannot be executed here, whoever retries. */
    if (rc == -EACCES && r->uid > 0)
        return cv_seterr(errstr, errstr_size, CV_ENOENT,
                         "exec %s: %s for uid %ld, the replica's user (a directory of its path "
                         "or the program is not open to it)",
                         argv[0], strerror(-rc), r->uid);
    if (rc)
        return cv_seterr(errstr, errstr_size, CV_ENOENT, "exec %s: %s", argv[0], strerror(-rc));
    places_t p = {.nroots = 0};
    places_of(r, wd, &p);
    rc = cv_policy_check_workdir(&sb->policy, t->name, wd, p.roots, p.nroots, errstr, errstr_size);
    rc = rc ? rc : cv_policy_check_exec(&sb->policy, t->name, program, errstr, errstr_size);
    if (rc)
        return rc;
    cv_cgroup_limits_t l;
    cv_cgroup_limits_of(t, sb->pids_default, &l);
    char cg[CV_CGROUP_MAX_PATHS][CV_CGROUP_PATH], name[512];
    const char *cgroups[CV_CGROUP_MAX_PATHS];
    size_t ncg = 0;
    group_name(r, i, name, sizeof(name));
    cv_cgroup_remove(sb->iso, sb->key, name); /* what an earlier start left */
    if (cv_cgroup_create(sb->iso, sb->key, name, &l, cg, &ncg, errstr, errstr_size) != 0)
        return CV_EFAILED;
    for (size_t k = 0; k < ncg; k++)
        cgroups[k] = cg[k];
    cv_sandbox_task_t st = {.program = program,
                            .argv = (const char *const *)argv,
                            .uid = r->uid,
                            .gid = r->gid,
                            .cgroups = cgroups,
                            .ncgroups = ncg,
                            .binds = p.binds,
                            .nbinds = p.nbinds,
                            .hide = sb->root,
                            .as_bytes = sb->iso == CV_ISO_RLIMITS ? l.memory_bytes : 0,
                            .nofile = t->nofile};
    *wrapped = cv_sandbox_argv(sb, &st);
    return *wrapped ? 0 : cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
}

bool cv__replica_release_task(cv_replica_t *r, size_t i)
{
    const cv_sandbox_t *sb = r->h->sb;
    if (!sb || sb->iso == CV_ISO_RLIMITS)
        return false;
    char name[512];
    group_name(r, i, name, sizeof(name));
    bool oom = cv_cgroup_oom_killed(sb->iso, sb->key, name);
    cv_cgroup_remove(sb->iso, sb->key, name);
    if (i == 0) {
        group_name(r, SIZE_MAX, name, sizeof(name));
        cv_cgroup_remove(sb->iso, sb->key, name);
    }
    return oom;
}
