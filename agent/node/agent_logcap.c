#include "agent_logcap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int cv_logcap_due(off_t size, size_t cap)
{
    return cap > 0 && size > (off_t)cap;
}

/* Copies `from` (read from its start) into a new `to`. */
static int copy_into(int from, const char *to)
{
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0)
        return -errno;
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(from, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n) {
            rc = -EIO;
            break;
        }
    if (n < 0)
        rc = -errno;
    close(out);
    return rc;
}

int cv_logcap_rotate(const char *path, size_t cap)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT ? 0 : -errno;
    if (!cv_logcap_due(st.st_size, cap))
        return 0;
    int in = open(path, O_RDWR | O_CLOEXEC);
    if (in < 0)
        return -errno;
    char old[4096];
    snprintf(old, sizeof(old), "%s.1", path);
    int rc = copy_into(in, old);
    if (rc == 0 && ftruncate(in, 0) != 0)
        rc = -errno;
    close(in);
    return rc == 0 ? 1 : rc;
}
