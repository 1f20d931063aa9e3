#include "agent_cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ROOT "/sys/fs/cgroup"

static const char *const v1_controllers[] = {"memory", "cpu", "pids"};
#define NV1 (sizeof(v1_controllers) / sizeof(v1_controllers[0]))

/* How many hierarchies a group of `iso` spans: one per v1 controller, the
 * single v2 tree, none with rlimits only. */
static size_t hierarchies(cv_iso_t iso)
{
    return iso == CV_ISO_RLIMITS ? 0 : iso == CV_ISO_CGROUP_V2 ? 1 : NV1;
}

const char *cv_iso_name(cv_iso_t iso)
{
    return iso == CV_ISO_CGROUP_V1   ? "cgroup-v1"
           : iso == CV_ISO_CGROUP_V2 ? "cgroup-v2"
                                     : "rlimits";
}

void cv_cgroup_name(char *buf, size_t size, const char *rid, const char *task)
{
    size_t n = 0;
    for (const char *p = rid; *p && n + 1 < size; p++)
        buf[n++] = *p == '/' ? '+' : *p;
    buf[n] = '\0';
    snprintf(buf + n, size - n, ".%s", task);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int write_file(const char *dir, const char *file, const char *value)
{
    char path[CV_CGROUP_PATH + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t w = write(fd, value, strlen(value));
    int rc = w < 0 ? -errno : 0;
    close(fd);
    return rc;
}

static int mkdir_one(const char *path)
{
    return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

/* v2: a controller works in a group only when every ancestor enables it
 * for its children. */
static void v2_enable(const char *dir)
{
    static const char *const ctl[] = {"+memory", "+cpu", "+pids"};
    for (size_t i = 0; i < 3; i++)
        write_file(dir, "cgroup.subtree_control", ctl[i]);
}

static int parents(cv_iso_t iso, const char *key)
{
    char path[CV_CGROUP_PATH];
    int rc = 0;
    if (iso == CV_ISO_CGROUP_V2) {
        v2_enable(ROOT);
        rc = mkdir_one(ROOT "/converge");
        v2_enable(ROOT "/converge");
        snprintf(path, sizeof(path), ROOT "/converge/%s", key);
        rc = rc ? rc : mkdir_one(path);
        v2_enable(path);
        /* The node's replicas together weigh as much as many processes
         * outside (v2 has one hierarchy: a task cannot leave cpu alone). */
        write_file(ROOT "/converge", "cpu.weight", "10000");
        write_file(path, "cpu.weight", "10000");
        return rc;
    }
    for (size_t i = 0; i < NV1 && !rc; i++) {
        if (strcmp(v1_controllers[i], "pids") == 0 && !exists(ROOT "/pids/cgroup.procs"))
            continue;
        snprintf(path, sizeof(path), ROOT "/%s/converge", v1_controllers[i]);
        rc = mkdir_one(path);
        snprintf(path, sizeof(path), ROOT "/%s/converge/%s", v1_controllers[i], key);
        rc = rc ? rc : mkdir_one(path);
    }
    return rc;
}

cv_iso_t cv_cgroup_detect(const char *key, char *errstr, size_t errstr_size)
{
    cv_iso_t iso = CV_ISO_RLIMITS;
    if (geteuid() != 0) {
        snprintf(errstr, errstr_size, "the agent does not run as root");
        return iso;
    }
    if (exists(ROOT "/cgroup.controllers"))
        iso = CV_ISO_CGROUP_V2;
    else if (exists(ROOT "/memory/memory.limit_in_bytes") && exists(ROOT "/cpu/cpu.cfs_quota_us"))
        iso = CV_ISO_CGROUP_V1;
    if (iso == CV_ISO_RLIMITS) {
        snprintf(errstr, errstr_size, "no cgroup v2 hierarchy nor v1 memory and cpu controllers");
        return iso;
    }
    int rc = parents(iso, key);
    if (rc) {
        snprintf(errstr, errstr_size, "creating the agent's cgroup converge/%s: %s", key,
                 strerror(-rc));
        return CV_ISO_RLIMITS;
    }
    return iso;
}

static void group_path(char *buf, size_t size, cv_iso_t iso, const char *ctl, const char *key,
                       const char *name)
{
    if (iso == CV_ISO_CGROUP_V2)
        snprintf(buf, size, ROOT "/converge/%s/%s", key, name);
    else
        snprintf(buf, size, ROOT "/%s/converge/%s/%s", ctl, key, name);
}

int cv_cgroup_create(cv_iso_t iso, const char *key, const char *name, const cv_cgroup_limits_t *l,
                     char paths[][CV_CGROUP_PATH], size_t *npaths, char *errstr, size_t errstr_size)
{
    *npaths = 0;
    if (iso == CV_ISO_RLIMITS)
        return 0;
    parents(iso, key); /* gone if someone removed them meanwhile */
    for (size_t i = 0; i < hierarchies(iso); i++) {
        group_path(paths[*npaths], CV_CGROUP_PATH, iso, v1_controllers[i], key, name);
        if (iso == CV_ISO_CGROUP_V1 && strcmp(v1_controllers[i], "pids") == 0 &&
            !exists(ROOT "/pids/cgroup.procs"))
            continue; /* an old kernel without the pids controller */
        /* v1: a group of the cpu hierarchy shares one weight with all its
         * siblings' processes, so replicas in converge/ would together get
         * the share of one process of the machine: only a task with a cpu
         * limit leaves the root group. */
        if (iso == CV_ISO_CGROUP_V1 && strcmp(v1_controllers[i], "cpu") == 0 &&
            l->cpu_quota_us <= 0)
            continue;
        int rc = mkdir_one(paths[*npaths]);
        if (rc) {
            snprintf(errstr, errstr_size, "creating the cgroup %.400s: %s", paths[*npaths],
                     strerror(-rc));
            return rc;
        }
        (*npaths)++;
    }
    cv_cgroup_file_t files[8];
    size_t n = cv_limits_files(l, iso == CV_ISO_CGROUP_V2, files, 8);
    for (size_t i = 0; i < n; i++) {
        char dir[CV_CGROUP_PATH];
        group_path(dir, sizeof(dir), iso, files[i].controller, key, name);
        int rc = write_file(dir, files[i].file, files[i].value);
        if (rc && !files[i].optional &&
            !(rc == -ENOENT && strcmp(files[i].file, "pids.max") == 0)) {
            snprintf(errstr, errstr_size, "cgroup %.400s: writing %s to %s: %s", dir,
                     files[i].value, files[i].file, strerror(-rc));
            return rc;
        }
    }
    return 0;
}

static long long counter(const char *path, const char *key)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    char line[128];
    long long v = 0;
    size_t n = strlen(key);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, n) == 0 && line[n] == ' ')
            v = atoll(line + n + 1);
    fclose(f);
    return v;
}

bool cv_cgroup_oom_killed(cv_iso_t iso, const char *key, const char *name)
{
    char dir[CV_CGROUP_PATH], path[CV_CGROUP_PATH + 32];
    if (iso == CV_ISO_RLIMITS)
        return false;
    group_path(dir, sizeof(dir), iso, "memory", key, name);
    snprintf(path, sizeof(path), "%s/%s", dir,
             iso == CV_ISO_CGROUP_V2 ? "memory.events" : "memory.oom_control");
    return counter(path, "oom_kill") > 0;
}

/* SIGKILL to every process of the group: none survives its replica. */
static void kill_members(const char *dir)
{
    char path[CV_CGROUP_PATH + 32];
    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    long pid;
    while (fscanf(f, "%ld", &pid) == 1)
        if (pid > 0)
            kill((pid_t)pid, SIGKILL);
    fclose(f);
}

void cv_cgroup_remove(cv_iso_t iso, const char *key, const char *name)
{
    for (size_t i = 0; i < hierarchies(iso); i++) {
        char dir[CV_CGROUP_PATH];
        group_path(dir, sizeof(dir), iso, v1_controllers[i], key, name);
        if (!exists(dir))
            continue;
        kill_members(dir);
        /* The killed leave the group as they are reaped: a short wait. */
        for (int tries = 0; tries < 20 && rmdir(dir) != 0 && errno == EBUSY; tries++) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

/* Whether name is "<one of the rids, '/' as '+'>.<task>". */
static bool kept(const char *name, const char *const *rids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char prefix[512];
        cv_cgroup_name(prefix, sizeof(prefix), rids[i], "");
        if (strncmp(name, prefix, strlen(prefix)) == 0)
            return true;
    }
    return false;
}

void cv_cgroup_sweep(cv_iso_t iso, const char *key, const char *const *rids, size_t n)
{
    for (size_t i = 0; i < hierarchies(iso); i++) {
        char dir[CV_CGROUP_PATH];
        group_path(dir, sizeof(dir), iso, v1_controllers[i], key, "");
        DIR *d = opendir(dir);
        const struct dirent *e;
        while (d && (e = readdir(d)) != NULL)
            if (e->d_type == DT_DIR && e->d_name[0] != '.' && !kept(e->d_name, rids, n))
                cv_cgroup_remove(iso, key, e->d_name);
        if (d)
            closedir(d);
    }
}

void cv_cgroup_leave(cv_iso_t iso, const char *key)
{
    for (size_t i = 0; i < hierarchies(iso); i++) {
        char dir[CV_CGROUP_PATH];
        group_path(dir, sizeof(dir), iso, v1_controllers[i], key, "");
        rmdir(dir); /* EBUSY while replicas run in it: they outlive the agent */
    }
}
