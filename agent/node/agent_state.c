#include "agent_state.h"

#include "cv_io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cv_mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(buf, 0700) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

void cv_state_path(char *buf, size_t size, const char *dir, const char *rid)
{
    int n = snprintf(buf, size, "%s/replicas/", dir);
    for (const char *p = rid; *p && n >= 0 && (size_t)n + 6 < size; p++)
        buf[n++] = *p == '/' ? '+' : *p;
    if (n >= 0 && (size_t)n + 6 < size)
        snprintf(buf + n, size - (size_t)n, ".json");
}

int cv_state_write(const char *dir, const char *rid, const json_t *state)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof(path), "%s/replicas", dir);
    int rc = cv_mkdirs(path);
    if (rc)
        return rc;
    cv_state_path(path, sizeof(path), dir, rid);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    /* 0600: a state file holds the replica's spec, its environment (secrets) included. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    rc = fchmod(fd, 0600) == 0 && json_dumpfd(state, fd, JSON_COMPACT) == 0 ? 0 : -EIO;
    if (!rc)
        fsync(fd);
    close(fd);
    if (rc)
        return rc;
    return rename(tmp, path) == 0 ? 0 : -errno;
}

void cv_state_remove(const char *dir, const char *rid)
{
    char path[4096];
    cv_state_path(path, sizeof(path), dir, rid);
    unlink(path);
}

json_t *cv_state_load_all(const char *dir)
{
    char path[4096];
    json_t *all = json_array();
    snprintf(path, sizeof(path), "%s/replicas", dir);
    DIR *d = opendir(path);
    if (!d)
        return all;
    chmod(path, 0700);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char file[4400];
        snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
        chmod(file, 0600); /* one written by an agent before 0600 */
        json_error_t err;
        json_t *s = json_load_file(file, 0, &err);
        if (!json_is_object(s) || !json_is_string(json_object_get(s, "rid"))) {
            cv_warn("ignoring the state file %s: %s", file, s ? "no rid" : err.text);
            json_decref(s);
            continue;
        }
        json_array_append_new(all, s);
    }
    closedir(d);
    return all;
}
