#include "agent_proc.h"

#include "cv_base.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_closed(uv_handle_t *h)
{
    free(h);
}

void cv_proc_close(uv_process_t *p)
{
    if (p && !uv_is_closing((uv_handle_t *)p))
        uv_close((uv_handle_t *)p, on_closed);
}

int cv_proc_spawn(uv_loop_t *loop, const cv_spawn_t *s, uv_process_t **out, pid_t *pid,
                  char *errstr, size_t errstr_size)
{
    int fds[3] = {open("/dev/null", O_RDONLY | O_CLOEXEC),
                  open(s->out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600),
                  open(s->err_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)};
    int rc = 0;
    for (int i = 0; i < 3 && !rc; i++)
        if (fds[i] < 0)
            rc = -errno;
    if (rc) {
        cv_seterr(errstr, errstr_size, CV_EIO, "opening the log files in %s: %s", s->out_path,
                  strerror(-rc));
    } else {
        uv_stdio_container_t stdio[3];
        for (int i = 0; i < 3; i++) {
            stdio[i].flags = UV_INHERIT_FD;
            stdio[i].data.fd = fds[i];
        }
        uv_process_options_t o = {.exit_cb = s->on_exit,
                                  .file = s->argv[0],
                                  .args = (char **)s->argv,
                                  .env = s->env,
                                  .cwd = s->cwd,
                                  .flags = UV_PROCESS_DETACHED,
                                  .stdio_count = 3,
                                  .stdio = stdio};
        uv_process_t *p = calloc(1, sizeof(*p));
        if (!p)
            rc = -ENOMEM;
        else
            rc = uv_spawn(loop, p, &o);
        if (rc) {
            cv_seterr(errstr, errstr_size, CV_EFAILED, "exec %s: %s", s->argv[0], strerror(-rc));
            if (p)
                uv_close((uv_handle_t *)p, on_closed);
        } else {
            p->data = s->data;
            *out = p;
            *pid = p->pid;
        }
    }
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return rc;
}

void cv_proc_signal(pid_t pid, int sig)
{
    if (pid <= 0)
        return;
    if (kill(-pid, sig) != 0)
        kill(pid, sig);
}

/* The fields of /proc/<pid>/stat after the command (which may hold spaces
 * and parentheses): field 3 (state) is out[0]. */
static int stat_fields(pid_t pid, char *buf, size_t size, char **after)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *close = strrchr(buf, ')');
    if (!close || close[1] != ' ')
        return -1;
    *after = close + 2;
    return 0;
}

/* Field `field` (1-based, as proc(5) counts) of the stat line. */
static const char *field_at(char *after, int field)
{
    char *p = after;
    for (int f = 3; f < field && p; f++) {
        p = strchr(p, ' ');
        if (p)
            p++;
    }
    return p;
}

unsigned long long cv_proc_start_time(pid_t pid)
{
    char buf[1024], *after;
    if (pid <= 0 || stat_fields(pid, buf, sizeof(buf), &after) != 0 || after[0] == 'Z' ||
        after[0] == 'X')
        return 0;
    const char *st = field_at(after, 22);
    return st ? strtoull(st, NULL, 10) : 0;
}

bool cv_proc_alive(pid_t pid, unsigned long long start_time)
{
    unsigned long long now = cv_proc_start_time(pid);
    return now != 0 && now == start_time;
}

static double rss_of(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    double mb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0) {
            mb = strtod(line + 6, NULL) / 1024.0;
            break;
        }
    fclose(f);
    return mb < 0 ? 0 : mb;
}

int cv_proc_usage(pid_t pid, double *rss_mb, double *cpu_s)
{
    char buf[1024], *after;
    if (stat_fields(pid, buf, sizeof(buf), &after) != 0)
        return -1;
    const char *ut = field_at(after, 14), *st = field_at(after, 15);
    if (!ut || !st)
        return -1;
    double ticks = (double)sysconf(_SC_CLK_TCK);
    *cpu_s = (strtod(ut, NULL) + strtod(st, NULL)) / (ticks > 0 ? ticks : 100);
    *rss_mb = rss_of(pid);
    return *rss_mb < 0 ? -1 : 0;
}

void cv_proc_exit_text(char *buf, size_t size, int64_t status, int term_signal)
{
    if (term_signal)
        snprintf(buf, size, "signal %d", term_signal);
    else
        snprintf(buf, size, "exit %lld", (long long)status);
}
