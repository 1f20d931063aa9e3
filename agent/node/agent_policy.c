#include "agent_policy.h"

#include "cv_base.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    unsigned bit;
} perms[] = {{"root", CV_ALLOW_ROOT},
             {"user", CV_ALLOW_USER},
             {"low-ports", CV_ALLOW_LOW_PORTS},
             {"workdir", CV_ALLOW_WORKDIR},
             {"env", CV_ALLOW_ENV}};

#define NPERMS (sizeof(perms) / sizeof(perms[0]))

int cv_policy_allow(cv_policy_t *p, const char *list, char *errstr, size_t errstr_size)
{
    const char *s = list;
    while (*s) {
        size_t n = strcspn(s, ",");
        bool known = false;
        if (n == 3 && strncmp(s, "all", 3) == 0) {
            for (size_t i = 0; i < NPERMS; i++)
                p->allow |= perms[i].bit;
            known = true;
        }
        for (size_t i = 0; i < NPERMS && !known; i++)
            if (strlen(perms[i].name) == n && strncmp(s, perms[i].name, n) == 0) {
                p->allow |= perms[i].bit;
                known = true;
            }
        if (!known)
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             "--allow '%.*s': expected root, user, low-ports, workdir, env or all",
                             (int)n, s);
        s += n;
        if (*s == ',')
            s++;
    }
    return 0;
}

int cv_policy_allow_exec(cv_policy_t *p, const char *path, char *errstr, size_t errstr_size)
{
    if (path[0] != '/' || strstr(path, "/../") || strstr(path, "/./"))
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "--allow-exec '%s': expected an absolute path without . or ..", path);
    if (p->nexec == CV_POLICY_MAX_EXEC)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "--allow-exec: more than %d",
                         CV_POLICY_MAX_EXEC);
    p->exec[p->nexec++] = path;
    return 0;
}

void cv_policy_names(unsigned allow, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NPERMS; i++)
        if (allow & perms[i].bit) {
            int w = snprintf(buf + n, size - n, "%s%s", n ? "," : "", perms[i].name);
            if (w < 0 || (size_t)w >= size - n)
                return;
            n += (size_t)w;
        }
    if (!n)
        snprintf(buf, size, "none");
}

bool cv_policy_env_dangerous(const char *name)
{
    return strncmp(name, "LD_", 3) == 0;
}

static int refuse_env(const cv_policy_t *p, const json_t *env, const char *where, char *errstr,
                      size_t errstr_size)
{
    const char *k;
    const json_t *v;
    if (p->allow & CV_ALLOW_ENV)
        return 0;
    json_object_foreach((json_t *)env, k, v)
    {
        (void)v;
        if (cv_policy_env_dangerous(k))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%senv %s: a variable that changes how programs are loaded: the "
                             "agent needs --allow env",
                             where, k);
    }
    return 0;
}

int cv_policy_check_spec(const cv_policy_t *p, const cv_rspec_t *s, char *errstr,
                         size_t errstr_size)
{
    for (size_t i = 0; i < s->nports; i++)
        if (s->ports[i].port > 0 && s->ports[i].port < 1024 && !(p->allow & CV_ALLOW_LOW_PORTS))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "port %s: host port %d is below 1024: the agent needs --allow "
                             "low-ports",
                             s->ports[i].name, s->ports[i].port);
    int rc = s->env ? refuse_env(p, s->env, "", errstr, errstr_size) : 0;
    for (size_t i = 0; i < s->ntasks && !rc; i++)
        if (s->tasks[i].env) {
            char where[160];
            snprintf(where, sizeof(where), "task %s: ", s->tasks[i].name);
            rc = refuse_env(p, s->tasks[i].env, where, errstr, errstr_size);
        }
    return rc;
}

int cv_policy_check_user(const cv_policy_t *p, const char *name, long uid, long default_uid,
                         bool can_switch, char *errstr, size_t errstr_size)
{
    if (!name || !name[0])
        return 0;
    if (uid < 0)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "user %s: no such user on this node",
                         name);
    if (uid == default_uid)
        return 0;
    if (!can_switch)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "user %s: the agent does not run as root: its replicas run as its own "
                         "user",
                         name);
    if (uid == 0 && !(p->allow & CV_ALLOW_ROOT))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "user %s: running a replica as root needs the agent's --allow root", name);
    if (uid != 0 && !(p->allow & (CV_ALLOW_USER | CV_ALLOW_ROOT)))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "user %s: a user other than the agent's replica user needs the agent's "
                         "--allow user",
                         name);
    return 0;
}

/* Whether `path` is `root` or below it (component-wise). */
static bool below(const char *path, const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool has_dotdot(const char *path)
{
    for (const char *s = path; (s = strstr(s, "..")) != NULL; s += 2)
        if ((s == path || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
            return true;
    return false;
}

int cv_policy_check_workdir(const cv_policy_t *p, const char *task, const char *workdir,
                            const char *const *roots, size_t nroots, char *errstr,
                            size_t errstr_size)
{
    if (workdir[0] != '/' || has_dotdot(workdir))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "task %s: workdir %s: expected an absolute path without '..'", task,
                         workdir);
    for (size_t i = 0; i < nroots; i++)
        if (below(workdir, roots[i]))
            return 0;
    if (p->allow & CV_ALLOW_WORKDIR)
        return 0;
    return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                     "task %s: workdir %s is outside the replica's own directories: the agent "
                     "needs --allow workdir",
                     task, workdir);
}

int cv_policy_check_exec(const cv_policy_t *p, const char *task, const char *program, char *errstr,
                         size_t errstr_size)
{
    if (p->nexec == 0)
        return 0;
    for (size_t i = 0; i < p->nexec; i++) {
        size_t n = strlen(p->exec[i]);
        if (p->exec[i][n - 1] == '/' ? strncmp(program, p->exec[i], n) == 0
                                     : strcmp(program, p->exec[i]) == 0)
            return 0;
    }
    return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                     "task %s: program %s is not on the agent's --allow-exec list", task, program);
}

void cv_cgroup_limits_of(const cv_rtask_t *t, long pids_default, cv_cgroup_limits_t *out)
{
    memset(out, 0, sizeof(*out));
    out->memory_bytes = (long long)t->memory_mb * 1024 * 1024;
    if (t->cpu > 0) {
        out->cpu_period_us = CV_CPU_PERIOD_US;
        double quota = t->cpu * (double)CV_CPU_PERIOD_US;
        /* The kernel refuses a quota under 1 ms. */
        out->cpu_quota_us = quota < 1000 ? 1000 : (long)(quota + 0.5);
    }
    out->pids_max = t->pids > 0 ? t->pids : pids_default;
}

static size_t add(cv_cgroup_file_t *out, size_t n, size_t max, const char *ctl, const char *file,
                  bool optional, long long value, long long period)
{
    if (n == max)
        return n;
    out[n].controller = ctl;
    out[n].file = file;
    out[n].optional = optional;
    if (period > 0)
        snprintf(out[n].value, sizeof(out[n].value), "%lld %lld", value, period);
    else
        snprintf(out[n].value, sizeof(out[n].value), "%lld", value);
    return n + 1;
}

size_t cv_limits_files(const cv_cgroup_limits_t *l, bool v2, cv_cgroup_file_t *out, size_t max)
{
    size_t n = 0;
    if (l->memory_bytes > 0 && v2) {
        n = add(out, n, max, "", "memory.max", false, l->memory_bytes, 0);
        n = add(out, n, max, "", "memory.swap.max", true, 0, 0);
    } else if (l->memory_bytes > 0) {
        n = add(out, n, max, "memory", "memory.limit_in_bytes", false, l->memory_bytes, 0);
        /* With swap accounting, memory plus swap gets the same limit: no swapping past it. */
        n = add(out, n, max, "memory", "memory.memsw.limit_in_bytes", true, l->memory_bytes, 0);
    }
    if (l->cpu_quota_us > 0 && v2)
        n = add(out, n, max, "", "cpu.max", false, l->cpu_quota_us, l->cpu_period_us);
    else if (l->cpu_quota_us > 0) {
        n = add(out, n, max, "cpu", "cpu.cfs_period_us", false, l->cpu_period_us, 0);
        n = add(out, n, max, "cpu", "cpu.cfs_quota_us", false, l->cpu_quota_us, 0);
    }
    if (l->pids_max > 0)
        n = add(out, n, max, v2 ? "" : "pids", "pids.max", false, l->pids_max, 0);
    return n;
}
