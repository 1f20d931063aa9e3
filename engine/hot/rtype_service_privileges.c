/*
 * What a Converge::Service asks of its nodes that needs privilege: the
 * properties a node agent refuses unless its operator allowed them
 * (docs/security.md "Replicas: what a submitter can do on a node"). The
 * agent is the authority; this is what `convergectl validate` warns about
 * beforehand, from the properties as written (values that are function
 * calls are not known yet and are not looked at). Pure logic.
 */
#include "cv_service.h"

#include <stdio.h>
#include <string.h>

typedef struct found {
    char (*out)[CV_SERVICE_WARNING_MAX];
    size_t n, max;
} found_t;

static void add(found_t *f, const char *path, const char *what, const char *perm)
{
    if (f->n < f->max)
        snprintf(f->out[f->n++], CV_SERVICE_WARNING_MAX,
                 "%s: %s: runs only on nodes whose agent has --allow %s", path, what, perm);
}

static void user_of(found_t *f, const json_t *props)
{
    const json_t *u = json_object_get(props, "user");
    char text[64] = "";
    if (json_is_string(u))
        snprintf(text, sizeof(text), "%s", json_string_value(u));
    else if (json_is_integer(u))
        snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(u));
    if (!text[0])
        return;
    if (strcmp(text, "root") == 0 || strcmp(text, "0") == 0)
        add(f, "user", text, "root");
    else
        add(f, "user", text, "user (or root), unless it is the agent's replica user");
}

static void ports_of(found_t *f, const json_t *props)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(props, "ports"), i, p)
    {
        json_int_t port = json_integer_value(json_object_get(p, "port"));
        if (port > 0 && port < 1024) {
            char path[64], what[64];
            snprintf(path, sizeof(path), "ports[%zu].port", i);
            snprintf(what, sizeof(what), "host port %lld is below 1024", (long long)port);
            add(f, path, what, "low-ports");
        }
    }
}

/* env and workdir of the service or of one task (`at` "" or "tasks[i]."). */
static void process_of(found_t *f, const json_t *obj, const char *at)
{
    char path[128];
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(obj, "env"), k, v)
    {
        (void)v;
        if (strncmp(k, "LD_", 3) == 0) {
            snprintf(path, sizeof(path), "%senv.%s", at, k);
            add(f, path, "a variable that changes how programs are loaded", "env");
        }
    }
    const char *wd = json_string_value(json_object_get(obj, "workdir"));
    if (wd && wd[0] == '/') {
        snprintf(path, sizeof(path), "%sworkdir", at);
        add(f, path, "an absolute path outside the replica's own directories", "workdir");
    }
}

size_t cv_service_privileges(const json_t *props, char (*out)[CV_SERVICE_WARNING_MAX], size_t max)
{
    found_t f = {out, 0, max};
    user_of(&f, props);
    ports_of(&f, props);
    process_of(&f, props, "");
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(props, "tasks"), i, t)
    {
        char at[32];
        snprintf(at, sizeof(at), "tasks[%zu].", i);
        process_of(&f, t, at);
    }
    return f.n;
}
