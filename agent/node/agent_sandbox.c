#include "agent_sandbox.h"

#include "agent_state.h"

#include "cv_base.h"
#include "cv_io.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------------------ */
/* In the agent                                                             */
/* ------------------------------------------------------------------------ */

static int replica_user(cv_sandbox_t *sb, const char *user, char *errstr, size_t errstr_size)
{
    const struct passwd *pw = getpwnam(user);
    if (!pw && strcmp(user, CV_SANDBOX_DEFAULT_USER) == 0) {
        /* A machine set up before the user existed: nobody, with a warning
         * (uid 65534 even where no passwd entry names it: a minimal image). */
        cv_warn("no user %s (deploy/local/setup.sh creates it): replicas run as nobody", user);
        pw = getpwnam("nobody");
        if (!pw) {
            sb->uid = sb->gid = 65534;
            snprintf(sb->user, sizeof(sb->user), "65534");
            return 0;
        }
    }
    if (!pw)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "--replica-user %s: no such user", user);
    if (pw->pw_uid == 0)
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "--replica-user %s: the replica user must not be root (a service may "
                         "ask for root where the agent has --allow root)",
                         user);
    sb->uid = (long)pw->pw_uid;
    sb->gid = (long)pw->pw_gid;
    snprintf(sb->user, sizeof(sb->user), "%s", pw->pw_name);
    return 0;
}

int cv_sandbox_init(cv_sandbox_t *sb, const char *dir, const char *node, const char *user,
                    bool rlimits_only, char *errstr, size_t errstr_size)
{
    sb->root = geteuid() == 0;
    if (!realpath(dir, sb->dir))
        snprintf(sb->dir, sizeof(sb->dir), "%s", dir);
    chmod(sb->dir, 0700);
    if (sb->root) {
        int rc =
            replica_user(sb, user && user[0] ? user : CV_SANDBOX_DEFAULT_USER, errstr, errstr_size);
        if (rc)
            return rc;
    } else {
        const struct passwd *pw = getpwuid(geteuid());
        sb->uid = (long)geteuid();
        sb->gid = (long)getegid();
        snprintf(sb->user, sizeof(sb->user), "%s", pw ? pw->pw_name : "?");
    }
    /* Node names repeat across deployments on one machine: the directory tells them apart. */
    char safe[96];
    size_t n = 0;
    for (const char *p = node; *p && n + 1 < sizeof(safe); p++)
        safe[n++] = (*p == '/' || *p == '.') ? '_' : *p;
    safe[n] = '\0';
    snprintf(sb->key, sizeof(sb->key), "%s-%08llx", safe,
             (unsigned long long)(cv_hash_str(sb->dir) & 0xffffffffULL));
    char why[512] = "--isolation rlimits";
    sb->iso = rlimits_only ? CV_ISO_RLIMITS : cv_cgroup_detect(sb->key, why, sizeof(why));
    char allowed[128];
    cv_policy_names(sb->policy.allow, allowed, sizeof(allowed));
    cv_info("replicas run as %s (uid %ld), isolation %s%s%s, allowed: %s", sb->user, sb->uid,
            cv_iso_name(sb->iso), sb->iso == CV_ISO_RLIMITS ? ": " : "",
            sb->iso == CV_ISO_RLIMITS ? why : "", allowed);
    return 0;
}

/* Whether uid/gid (its only group: the replica's supplementary groups are
 * dropped) may do `bit` (1 x, 2 w, 4 r) to what st describes. */
static bool permits(const struct stat *st, long uid, long gid, unsigned bit)
{
    if (uid == 0)
        return bit != 1 || S_ISDIR(st->st_mode) || (st->st_mode & 0111);
    unsigned shift = (long)st->st_uid == uid ? 6 : (long)st->st_gid == gid ? 3 : 0;
    return (st->st_mode >> shift) & bit;
}

/* Whether uid may reach and execute path by the mode bits alone: every
 * directory searchable, the file executable. */
static int executable_by_mode(const char *path, long uid, long gid)
{
    char prefix[PATH_MAX];
    struct stat st;
    for (const char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
        snprintf(prefix, sizeof(prefix), "%.*s", (int)(s - path), path);
        if (stat(prefix, &st) != 0)
            return -errno;
        if (!permits(&st, uid, gid, 1))
            return -EACCES;
    }
    if (stat(path, &st) != 0)
        return -errno;
    return S_ISREG(st.st_mode) && permits(&st, uid, gid, 1) ? 0 : -EACCES;
}

/* The kernel's answer for uid: a child that becomes it asks access(). */
static int executable_by_kernel(const char *path, long uid, long gid)
{
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid((gid_t)gid) != 0 || setuid((uid_t)uid) != 0)
            _exit(2);
        _exit(access(path, X_OK) == 0 ? 0 : 1);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EACCES;
}

/* Whether uid can reach and execute path (absolute), as the kernel decides
 * for it. The mode bits answer most cases without a process; where they
 * refuse, an ACL may still allow (setup.sh lets the replica user through a
 * private folder above the checkout, such as /root), so the kernel is
 * asked. uid -1: the agent's own access(). */
static int executable_as(const char *path, long uid, long gid)
{
    if (uid < 0)
        return access(path, X_OK) == 0 ? 0 : -errno;
    int rc = executable_by_mode(path, uid, gid);
    return rc == -EACCES && geteuid() == 0 ? executable_by_kernel(path, uid, gid) : rc;
}

int cv_sandbox_resolve(const char *argv0, char *const *env, long uid, long gid, char *out,
                       size_t size)
{
    char full[PATH_MAX];
    if (strchr(argv0, '/')) {
        if (!realpath(argv0, full) || strlen(full) >= size)
            return -errno ? -errno : -ENAMETOOLONG;
        int rc = executable_as(argv0[0] == '/' ? argv0 : full, uid, gid);
        snprintf(out, size, "%s", full);
        return rc;
    }
    const char *path = "/usr/local/bin:/usr/bin:/bin";
    for (size_t i = 0; env && env[i]; i++)
        if (strncmp(env[i], "PATH=", 5) == 0)
            path = env[i] + 5;
    int rc = -ENOENT;
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(full, sizeof(full), "%.*s/%s", (int)(n ? n : 1), n ? path : ".", argv0);
        struct stat st;
        if (full[0] == '/' && stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            /* As execvp: a program this user cannot run is passed over. */
            if (executable_as(full, uid, gid) == 0 && realpath(full, out) && strlen(out) < size)
                return 0;
            rc = -EACCES;
        }
        path += n;
        if (*path == ':')
            path++;
    }
    return rc;
}

/* Appends "<prefix><value>" to v. */
static int push(char **v, size_t *n, const char *prefix, const char *value)
{
    size_t len = strlen(prefix) + strlen(value) + 1;
    v[*n] = malloc(len);
    if (!v[*n])
        return -1;
    snprintf(v[(*n)++], len, "%s%s", prefix, value);
    return 0;
}

static int push_num(char **v, size_t *n, const char *prefix, long long value)
{
    char num[32];
    snprintf(num, sizeof(num), "%lld", value);
    return push(v, n, prefix, num);
}

char **cv_sandbox_argv(const cv_sandbox_t *sb, const cv_sandbox_task_t *t)
{
    size_t argc = 0;
    while (t->argv[argc])
        argc++;
    size_t max = 12 + t->ncgroups + t->nbinds + argc;
    char **v = calloc(max + 1, sizeof(*v));
    size_t n = 0;
    int rc = v ? 0 : -1;
    rc = rc ? rc : push(v, &n, "", "/proc/self/exe");
    rc = rc ? rc : push(v, &n, "", "--sandbox-exec");
    rc = rc ? rc : push(v, &n, "exec=", t->program);
    if (t->uid >= 0) {
        rc = rc ? rc : push_num(v, &n, "uid=", t->uid);
        rc = rc ? rc : push_num(v, &n, "gid=", t->gid);
    }
    for (size_t i = 0; i < t->ncgroups; i++)
        rc = rc ? rc : push(v, &n, "cgroup=", t->cgroups[i]);
    if (t->hide) {
        rc = rc ? rc : push(v, &n, "hide=", sb->dir);
        for (size_t i = 0; i < t->nbinds; i++)
            rc = rc ? rc : push(v, &n, "bind=", t->binds[i]);
    }
    if (t->as_bytes > 0)
        rc = rc ? rc : push_num(v, &n, "as=", t->as_bytes);
    if (t->nofile > 0)
        rc = rc ? rc : push_num(v, &n, "nofile=", t->nofile);
    rc = rc ? rc : push(v, &n, "", "--");
    for (size_t i = 0; i < argc; i++)
        rc = rc ? rc : push(v, &n, "", t->argv[i]);
    if (rc) {
        for (size_t i = 0; v && i < n; i++)
            free(v[i]);
        free(v);
        return NULL;
    }
    return v;
}
