#include "cv_keyfile.h"

#include "cv_base.h"
#include "cv_log.h"
#include "cv_contract.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEYFILE_MAX 65536

static struct {
    char path[4096];
    struct stat st;
} loaded;

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The file's text (malloc'ed) and its stat, after the checks. */
static char *read_keyfile(const char *path, struct stat *st, char *errstr, size_t errstr_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        cv_seterr(errstr, errstr_size, CV_EINVAL, "cannot read the key file %s: %s", path,
                  strerror(errno));
        return NULL;
    }
    char *text = NULL;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))
        cv_seterr(errstr, errstr_size, CV_EINVAL, "the key file %s is not a regular file", path);
    else if (st->st_mode & 007)
        cv_seterr(errstr, errstr_size, CV_EINVAL,
                  "the key file %s can be read by others (mode %04o): chmod o-rwx it", path,
                  (unsigned)(st->st_mode & 07777));
    else if (st->st_size > KEYFILE_MAX)
        cv_seterr(errstr, errstr_size, CV_EINVAL, "the key file %s is over %d bytes", path,
                  KEYFILE_MAX);
    else if ((text = calloc(1, (size_t)st->st_size + 1)) != NULL) {
        ssize_t n = read(fd, text, (size_t)st->st_size);
        if (n != st->st_size) {
            cv_seterr(errstr, errstr_size, CV_EINVAL, "cannot read the key file %s", path);
            free(text);
            text = NULL;
        }
    }
    close(fd);
    return text;
}

int cv_keyfile_load(const char *path, char *errstr, size_t errstr_size)
{
    struct stat st;
    char *text = read_keyfile(path, &st, errstr, errstr_size);
    if (!text)
        return CV_EINVAL;
    char why[256];
    cv_keyring_t *ring = cv_keyring_parse(text, why, sizeof(why));
    memset(text, 0, (size_t)st.st_size);
    free(text);
    if (!ring)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "the key file %s: %s", path, why);
    cv_seal_use(ring);
    snprintf(loaded.path, sizeof(loaded.path), "%s", path);
    loaded.st = st;
    return 0;
}

int cv_keyfile_refresh(void)
{
    static bool missing; /* said once until the file is back */
    struct stat st;
    if (!loaded.path[0])
        return 0;
    if (stat(loaded.path, &st) != 0) {
        if (!missing)
            cv_warn("the key file %s: %s; keeping the keys read before", loaded.path,
                    strerror(errno));
        missing = true;
        return 0;
    }
    missing = false;
    if (same_file(&st, &loaded.st))
        return 0;
    char err[512];
    char path[sizeof(loaded.path)];
    snprintf(path, sizeof(path), "%s", loaded.path);
    if (cv_keyfile_load(path, err, sizeof(err)) != 0) {
        if (stat(path, &st) == 0)
            loaded.st = st; /* said once per change of the file */
        cv_warn("%s; keeping the keys read before", err);
        return 0;
    }
    cv_info("read the key file %s again: sealing with key %s", path,
            cv_keyring_current(cv_seal_ring()));
    return 1;
}
