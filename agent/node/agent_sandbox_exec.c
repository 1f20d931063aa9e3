/*
 * The sandbox helper: `converge-agent --sandbox-exec OPTIONS -- ARGV`, what
 * the spawned replica process runs before it becomes the replica's program
 * (agent_sandbox.h). Its stderr is the task's .err log: a failed step says
 * there why the task exited 126 (a step) or 127 (the exec).
 */
#include "agent_sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#define MAX_LIST 32

typedef struct opts {
    const char *program, *hide;
    long uid, gid;
    const char *cgroups[MAX_LIST], *binds[MAX_LIST];
    size_t ncgroups, nbinds;
    long long as_bytes;
    long nofile;
    char **argv;
} opts_t;

static int die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("converge-agent sandbox: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

static int parse(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->uid = o->gid = -1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            o->argv = argv + i + 1;
            return o->program && o->argv[0] ? 0 : -1;
        }
        if (strncmp(a, "exec=", 5) == 0)
            o->program = a + 5;
        else if (strncmp(a, "uid=", 4) == 0)
            o->uid = atol(a + 4);
        else if (strncmp(a, "gid=", 4) == 0)
            o->gid = atol(a + 4);
        else if (strncmp(a, "hide=", 5) == 0)
            o->hide = a + 5;
        else if (strncmp(a, "cgroup=", 7) == 0 && o->ncgroups < MAX_LIST)
            o->cgroups[o->ncgroups++] = a + 7;
        else if (strncmp(a, "bind=", 5) == 0 && o->nbinds < MAX_LIST)
            o->binds[o->nbinds++] = a + 5;
        else if (strncmp(a, "as=", 3) == 0)
            o->as_bytes = atoll(a + 3);
        else if (strncmp(a, "nofile=", 7) == 0)
            o->nofile = atol(a + 7);
        else
            return -1;
    }
    return -1;
}

static int join_cgroups(const opts_t *o)
{
    for (size_t i = 0; i < o->ncgroups; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/cgroup.procs", o->cgroups[i]);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "0", 1) != 1)
            return die(126, "joining the cgroup %s: %s", o->cgroups[i], strerror(errno));
        close(fd);
    }
    return 0;
}

/* mkdir -p with root-owned, traversable directories (inside our tmpfs). */
static void mkdirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0711);
            *p = '/';
        }
    mkdir(buf, 0711);
}

static int bind_back(const char *path, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    char parent[PATH_MAX], src[64];
    snprintf(parent, sizeof(parent), "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        mkdirs(parent);
    }
    if (S_ISDIR(st.st_mode))
        mkdir(path, 0711);
    else
        close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
    return mount(src, path, NULL, MS_BIND, NULL);
}

/* The replica's /tmp: what is in the host's /tmp stays readable (a program
 * or a file a service names may live there: a checkout under /tmp), what the
 * replica writes goes to an overlay layer of its own on a tmpfs, gone with
 * its namespace. The layer's tmpfs is mounted on the agent's directory,
 * which the caller then covers with another tmpfs, so it is seen by no one.
 * A kernel without overlayfs gets an empty private /tmp instead. */
static int private_tmp(const opts_t *o)
{
    char upper[PATH_MAX], work[PATH_MAX], opts[3 * PATH_MAX];
    if (mount("tmpfs", o->hide, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0)
        return die(126, "a tmpfs for /tmp's layer: %s", strerror(errno));
    snprintf(upper, sizeof(upper), "%s/tmp-layer", o->hide);
    snprintf(work, sizeof(work), "%s/tmp-work", o->hide);
    if (mkdir(upper, 01777) != 0 || chmod(upper, 01777) != 0 || mkdir(work, 0700) != 0)
        return die(126, "/tmp's layer: %s", strerror(errno));
    snprintf(opts, sizeof(opts), "lowerdir=/tmp,upperdir=%s,workdir=%s", upper, work);
    if (mount("overlay", "/tmp", "overlay", MS_NOSUID | MS_NODEV, opts) == 0)
        return 0;
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
        return die(126, "a private /tmp: %s", strerror(errno));
    mkdirs(o->hide); /* gone with the host's /tmp when it was below it */
    return 0;
}

/* In the replica's overlay of /tmp, every folder above `path` may be entered
 * (o+x): a folder of the host's /tmp that is private to its owner, as
 * mktemp -d makes them, would otherwise keep the replica from its own paths
 * below it. The change is the overlay's (copied up), never the host's. */
static void enterable_in_tmp(const char *path)
{
    char prefix[PATH_MAX];
    struct stat st;
    if (strncmp(path, "/tmp/", 5) != 0)
        return;
    for (const char *p = strchr(path + 5, '/'); p; p = strchr(p + 1, '/')) {
        snprintf(prefix, sizeof(prefix), "%.*s", (int)(p - path), path);
        if (stat(prefix, &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH))
            chmod(prefix, (st.st_mode & 07777) | S_IXOTH);
    }
}

/* /tmp private (private_tmp), the agent's directory an empty tmpfs but for
 * the replica's own paths. Without a mount namespace (a container that
 * refuses it) the replica runs without: the agent's directory stays 0700
 * root. */
static int private_mounts(const opts_t *o)
{
    int fds[MAX_LIST];
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = '\0';
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        die(0, "no private mounts (%s): /tmp is shared", strerror(errno));
        return 0;
    }
    /* Opened in the new namespace (a bind's source must be one of its
     * mounts), before the tmpfs mounts cover them. */
    for (size_t i = 0; i < o->nbinds; i++)
        fds[i] = open(o->binds[i], O_PATH | O_CLOEXEC);
    mkdirs(o->hide);
    int rc = private_tmp(o);
    if (rc)
        return rc;
    enterable_in_tmp(o->hide);
    for (size_t i = 0; i < o->nbinds; i++)
        enterable_in_tmp(o->binds[i]);
    if (mount("tmpfs", o->hide, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0711") != 0)
        return die(126, "hiding %s: %s", o->hide, strerror(errno));
    for (size_t i = 0; i < o->nbinds; i++)
        if (fds[i] >= 0 && bind_back(o->binds[i], fds[i]) != 0)
            return die(126, "binding %s: %s", o->binds[i], strerror(errno));
    if (cwd[0] && chdir(cwd) != 0)
        return die(126, "chdir %s: %s", cwd, strerror(errno));
    return 0;
}

static int limits(const opts_t *o)
{
    if (o->as_bytes > 0) {
        struct rlimit rl = {(rlim_t)o->as_bytes, (rlim_t)o->as_bytes};
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            return die(126, "RLIMIT_AS: %s", strerror(errno));
    }
    if (o->nofile > 0) {
        struct rlimit rl = {(rlim_t)o->nofile, (rlim_t)o->nofile};
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            return die(126, "RLIMIT_NOFILE: %s", strerror(errno));
    }
    return 0;
}

/* The agent's descriptors (its Redis connection) are not the replica's. */
static void close_inherited(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int self = dirfd(d);
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        if (fd > 2 && fd != self)
            close(fd);
    }
    closedir(d);
}

static int drop_user(const opts_t *o)
{
    if (o->uid < 0 || geteuid() != 0)
        return 0;
    if (setgroups(0, NULL) != 0 || setgid((gid_t)o->gid) != 0 || setuid((uid_t)o->uid) != 0)
        return die(126, "becoming uid %ld gid %ld: %s", o->uid, o->gid, strerror(errno));
    if (o->uid != 0 && setuid(0) == 0)
        return die(126, "uid %ld could become root again", o->uid);
    return 0;
}

int cv_sandbox_main(int argc, char **argv)
{
    opts_t o;
    if (parse(argc, argv, &o) != 0)
        return die(126, "usage: converge-agent --sandbox-exec exec=PROGRAM [OPTIONS] -- ARGV");
    umask(022); /* the agent's is 077: the paths made inside must be traversable */
    int rc = join_cgroups(&o);
    if (!rc && o.hide && geteuid() == 0)
        rc = private_mounts(&o);
    rc = rc ? rc : limits(&o);
    if (rc)
        return rc;
    close_inherited();
    rc = drop_user(&o);
    if (rc)
        return rc;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return die(126, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
    execve(o.program, o.argv, environ);
    return die(127, "exec %s: %s", o.program, strerror(errno));
}
