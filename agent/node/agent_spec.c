#include "agent_spec.h"

#include "cv_base.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct rd {
    char *errstr;
    size_t errstr_size;
} rd_t;

static int bad(rd_t *r, const char *path, const char *what)
{
    return cv_seterr(r->errstr, r->errstr_size, CV_EVALIDATE, "replica spec: %s: %s", path, what);
}

static int str(rd_t *r, const json_t *obj, const char *key, bool required, const char **out)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return required ? bad(r, key, "required") : 0;
    if (!json_is_string(v))
        return bad(r, key, "expected a string");
    *out = json_string_value(v);
    return 0;
}

static int num(rd_t *r, const json_t *obj, const char *path, const char *key, double dflt,
               double *out)
{
    const json_t *v = json_object_get(obj, key);
    *out = dflt;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v) || json_number_value(v) < 0) {
        char p[128];
        snprintf(p, sizeof(p), "%s.%s", path, key);
        return bad(r, p, "expected a non-negative number");
    }
    *out = json_number_value(v);
    return 0;
}

/* A non-empty list of strings into a NULL-terminated vector. */
static int strv(rd_t *r, const json_t *v, const char *path, const char ***out, size_t *n)
{
    *out = NULL;
    if (!json_is_array(v) || json_array_size(v) == 0)
        return bad(r, path, "expected a non-empty list of strings");
    const char **argv = calloc(json_array_size(v) + 1, sizeof(*argv));
    if (!argv)
        return cv_seterr(r->errstr, r->errstr_size, CV_ENOMEM, "out of memory");
    for (size_t i = 0; i < json_array_size(v); i++) {
        argv[i] = json_string_value(json_array_get(v, i));
        if (!argv[i]) {
            free(argv);
            return bad(r, path, "expected a non-empty list of strings");
        }
    }
    *out = argv;
    if (n)
        *n = json_array_size(v);
    return 0;
}

static int task(rd_t *r, const json_t *t, size_t i, cv_rtask_t *out)
{
    char path[64];
    snprintf(path, sizeof(path), "tasks[%zu]", i);
    if (!json_is_object(t))
        return bad(r, path, "expected an object");
    out->name = json_string_value(json_object_get(t, "name"));
    if (!out->name || !out->name[0] || strchr(out->name, '/'))
        return bad(r, path, "name: expected a non-empty string without '/'");
    char cpath[80];
    snprintf(cpath, sizeof(cpath), "%s.command", path);
    int rc = strv(r, json_object_get(t, "command"), cpath, &out->argv, &out->argc);
    if (rc)
        return rc;
    out->env = json_object_get(t, "env");
    if (out->env && !json_is_object(out->env) && !json_is_null(out->env))
        return bad(r, path, "env: expected a map");
    out->workdir = json_string_value(json_object_get(t, "workdir"));
    const json_t *res = json_object_get(t, "resources");
    double mem = 0, nofile = 0, cpu = 0, pids = 0;
    if (res && json_is_object(res)) {
        rc = num(r, res, path, "memory_mb", 0, &mem);
        if (!rc)
            rc = num(r, res, path, "nofile", 0, &nofile);
        if (!rc)
            rc = num(r, res, path, "cpu", 0, &cpu);
        if (!rc)
            rc = num(r, res, path, "pids", 0, &pids);
    }
    out->memory_mb = (long)mem;
    out->nofile = (long)nofile;
    out->cpu = cpu;
    out->pids = (long)pids;
    return rc;
}

static int tasks(rd_t *r, cv_rspec_t *s)
{
    const json_t *v = json_object_get(s->json, "tasks");
    if (!json_is_array(v) || json_array_size(v) == 0)
        return bad(r, "tasks", "expected a non-empty list");
    s->ntasks = json_array_size(v);
    s->tasks = calloc(s->ntasks, sizeof(*s->tasks));
    if (!s->tasks)
        return cv_seterr(r->errstr, r->errstr_size, CV_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->ntasks; i++) {
        int rc = task(r, json_array_get(v, i), i, &s->tasks[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static int ports(rd_t *r, cv_rspec_t *s)
{
    const json_t *v = json_object_get(s->json, "ports");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return bad(r, "ports", "expected a list");
    s->nports = json_array_size(v);
    s->ports = calloc(s->nports + 1, sizeof(*s->ports));
    if (!s->ports)
        return cv_seterr(r->errstr, r->errstr_size, CV_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->nports; i++) {
        const json_t *p = json_array_get(v, i);
        const json_t *port = json_object_get(p, "port");
        char path[32];
        snprintf(path, sizeof(path), "ports[%zu]", i);
        s->ports[i].name = json_string_value(json_object_get(p, "name"));
        if (!s->ports[i].name || !s->ports[i].name[0])
            return bad(r, path, "name: expected a non-empty string");
        if (port && !json_is_null(port) &&
            (!json_is_integer(port) || json_integer_value(port) < 0 ||
             json_integer_value(port) > 65535))
            return bad(r, path, "port: expected an integer from 0 to 65535");
        s->ports[i].port = port ? (int)json_integer_value(port) : 0;
    }
    return 0;
}

static int volumes(rd_t *r, cv_rspec_t *s)
{
    const json_t *v = json_object_get(s->json, "volumes");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return bad(r, "volumes", "expected a list");
    s->nvolumes = json_array_size(v);
    s->volumes = calloc(s->nvolumes + 1, sizeof(*s->volumes));
    if (!s->volumes)
        return cv_seterr(r->errstr, r->errstr_size, CV_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->nvolumes; i++) {
        const json_t *vol = json_array_get(v, i);
        const char *name = json_string_value(json_object_get(vol, "name"));
        char path[32];
        snprintf(path, sizeof(path), "volumes[%zu]", i);
        if (!name || !name[0] || strchr(name, '/') || strcmp(name, "..") == 0)
            return bad(r, path, "name: expected a non-empty string without '/'");
        s->volumes[i].name = name;
        s->volumes[i].path = json_string_value(json_object_get(vol, "path"));
    }
    return 0;
}

static int health(rd_t *r, cv_rspec_t *s)
{
    static const char *const kinds[] = {"", "command", "tcp", "http"};
    const json_t *h = json_object_get(s->json, "health_check");
    cv_rhealth_t *out = &s->health;
    out->retries = 3;
    if (!h || json_is_null(h))
        return 0;
    if (!json_is_object(h))
        return bad(r, "health_check", "expected an object");
    const char *type = json_string_value(json_object_get(h, "type"));
    for (int k = 1; type && k < 4; k++)
        if (strcmp(type, kinds[k]) == 0)
            out->kind = (cv_health_kind_t)k;
    if (out->kind == CV_HEALTH_NONE)
        return bad(r, "health_check.type", "expected command, tcp or http");
    double retries;
    int rc = num(r, h, "health_check", "interval", 1, &out->interval);
    if (!rc)
        rc = num(r, h, "health_check", "timeout", 1, &out->timeout);
    if (!rc)
        rc = num(r, h, "health_check", "grace_period", 0, &out->grace_period);
    if (!rc)
        rc = num(r, h, "health_check", "retries", 3, &retries);
    if (rc)
        return rc;
    out->retries = retries < 1 ? 1 : (int)retries;
    if (out->interval < 0.05)
        out->interval = 0.05;
    if (out->kind == CV_HEALTH_COMMAND)
        return strv(r, json_object_get(h, "command"), "health_check.command", &out->argv, NULL);
    out->port = json_string_value(json_object_get(h, "port"));
    out->path = json_string_value(json_object_get(h, "path"));
    if (!out->path)
        out->path = "/";
    for (size_t i = 0; out->port && i < s->nports; i++)
        if (strcmp(s->ports[i].name, out->port) == 0)
            return 0;
    if (!out->port && s->nports > 0) {
        out->port = s->ports[0].name;
        return 0;
    }
    return bad(r, "health_check.port", "expected the name of one of the replica's ports");
}

int cv_signal_number(const char *name)
{
    static const struct {
        const char *name;
        int sig;
    } sigs[] = {{"TERM", SIGTERM}, {"INT", SIGINT},   {"KILL", SIGKILL}, {"HUP", SIGHUP},
                {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
    if (strncasecmp(name, "SIG", 3) == 0)
        name += 3;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        if (strcasecmp(name, sigs[i].name) == 0)
            return sigs[i].sig;
    char *end;
    long n = strtol(name, &end, 10);
    return end != name && !*end && n > 0 && n < 65 ? (int)n : -1;
}

static int kill_policy(rd_t *r, cv_rspec_t *s)
{
    const json_t *k = json_object_get(s->json, "kill_policy");
    s->kill_signal = SIGTERM;
    if (!k || json_is_null(k)) {
        s->kill_grace = 5;
        return 0;
    }
    int rc = num(r, k, "kill_policy", "grace_period", 5, &s->kill_grace);
    const char *sig = json_string_value(json_object_get(k, "signal"));
    if (!rc && sig && (s->kill_signal = cv_signal_number(sig)) < 0)
        return bad(r, "kill_policy.signal", "unknown signal");
    return rc;
}

static int header(rd_t *r, cv_rspec_t *s)
{
    const json_t *j = s->json;
    int rc = str(r, j, "rid", true, &s->rid);
    if (!rc)
        rc = str(r, j, "name", true, &s->name);
    if (!rc)
        rc = str(r, j, "svc", false, &s->svc);
    if (!rc)
        rc = str(r, j, "stack", false, &s->stack);
    if (!rc)
        rc = str(r, j, "stack_name", false, &s->stack_name);
    if (!rc)
        rc = str(r, j, "service", false, &s->service);
    if (!rc)
        rc = str(r, j, "role", false, &s->role);
    if (!rc)
        rc = str(r, j, "digest", false, &s->digest);
    if (!rc)
        rc = str(r, j, "user", false, &s->user);
    if (rc)
        return rc;
    const json_t *index = json_object_get(j, "index");
    if (index && !json_is_integer(index))
        return bad(r, "index", "expected an integer");
    s->index = (int)json_integer_value(index);
    s->stateful = json_is_true(json_object_get(j, "stateful"));
    s->env = json_object_get(j, "env");
    s->load = json_object_get(j, "load");
    if (!s->svc)
        s->svc = "";
    if (!s->stack)
        s->stack = "";
    if (!s->stack_name)
        s->stack_name = s->stack;
    if (!s->service)
        s->service = s->name;
    if (!s->role)
        s->role = "instance";
    if (!s->digest)
        s->digest = "";
    return 0;
}

int cv_rspec_parse(json_t *json, cv_rspec_t *out, char *errstr, size_t errstr_size)
{
    rd_t r = {errstr, errstr_size};
    memset(out, 0, sizeof(*out));
    out->json = json_incref(json);
    int rc = json_is_object(json) ? 0 : bad(&r, "(spec)", "expected an object");
    if (!rc)
        rc = header(&r, out);
    if (!rc)
        rc = tasks(&r, out);
    if (!rc)
        rc = ports(&r, out);
    if (!rc)
        rc = volumes(&r, out);
    if (!rc)
        rc = health(&r, out);
    if (!rc)
        rc = cv_restart_parse(json_object_get(json, "restart_policy"), "restart_policy",
                              &out->restart, errstr, errstr_size);
    if (!rc)
        rc = kill_policy(&r, out);
    if (rc)
        cv_rspec_free(out);
    return rc;
}

void cv_rspec_free(cv_rspec_t *s)
{
    for (size_t i = 0; s->tasks && i < s->ntasks; i++)
        free(s->tasks[i].argv);
    free(s->tasks);
    free(s->ports);
    free(s->volumes);
    free(s->health.argv);
    json_decref(s->json);
    memset(s, 0, sizeof(*s));
}
