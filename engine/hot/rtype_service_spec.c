/*
 * rtype_service_spec — the service spec of a Converge::Service version
 * (docs/services.md "Service spec"), its process digest, its id, and the
 * check of its metrics against the live cluster.
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv_service.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv_service_id(char *out, size_t size, const char *stack, const char *resource,
                   const char *uuid)
{
    snprintf(out, size, "%s.%s.%.8s", stack, resource, uuid ? uuid : "");
}

bool cv_service_is(const char *type_name)
{
    return type_name && strcmp(type_name, CV_SERVICE_TYPE) == 0;
}

/* The property read as the spec holds it; NULL with errstr when it is
 * given and wrong, a new `dflt` (JSON text; NULL: none) when absent. */
static int prop(const json_t *props, const char *name, const char *dflt, json_t **out, char *errstr,
                size_t errstr_size)
{
    const json_t *v = json_object_get(props, name);
    *out = NULL;
    if (v && !json_is_null(v)) {
        *out = cv__service_prop(props, name, "properties", errstr, errstr_size);
        return *out ? 0 : CV_EVALIDATE;
    }
    if (dflt) {
        json_t *d = json_pack("{s:o}", name, json_loads(dflt, JSON_DECODE_ANY, NULL));
        *out = cv__service_prop(d, name, "properties", errstr, errstr_size);
        json_decref(d);
    }
    return 0;
}

/* The replica's processes: `tasks`, or `command` with env, workdir and
 * resources as one task named "main". */
static json_t *tasks_of(const json_t *props, char *errstr, size_t errstr_size)
{
    json_t *tasks, *command, *env, *workdir, *resources;
    if (prop(props, "tasks", NULL, &tasks, errstr, errstr_size) || tasks)
        return tasks;
    if (prop(props, "command", NULL, &command, errstr, errstr_size))
        return NULL;
    if (!command) {
        cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                  "properties: At least one of the following properties must be specified: "
                  "command, tasks.");
        return NULL;
    }
    int rc = prop(props, "env", "{}", &env, errstr, errstr_size);
    rc = rc ? rc : prop(props, "workdir", "\"\"", &workdir, errstr, errstr_size);
    rc = rc ? rc : prop(props, "resources", "{}", &resources, errstr, errstr_size);
    if (rc) {
        json_decref(command);
        json_decref(env);
        json_decref(workdir);
        return NULL;
    }
    return json_pack("[{s:s, s:o, s:o, s:o, s:o}]", "name", "main", "command", command, "env", env,
                     "workdir", workdir, "resources", resources);
}

static void digest_of(const json_t *process, char *out)
{
    char *text = json_dumps(process, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf(out, 17, "%016llx", (unsigned long long)cv_hash_str(text));
    free(text);
}

/* A tcp or http check without a port checks the first one (validation
 * made sure there is one). */
static void default_check_port(json_t *process)
{
    json_t *check = json_object_get(process, "health_check");
    const char *type = json_string_value(json_object_get(check, "type"));
    const json_t *first = json_array_get(json_object_get(process, "ports"), 0);
    if (type && strcmp(type, "command") != 0 && !json_object_get(check, "port") && first)
        json_object_set(check, "port", json_object_get(first, "name"));
}

/* The "process" object, its digest last. */
static json_t *process_of(const json_t *props, char *errstr, size_t errstr_size)
{
    static const struct {
        const char *name, *dflt;
    } parts[] = {{"ports", "[]"},          {"volumes", "[]"},     {"health_check", NULL},
                 {"restart_policy", "{}"}, {"kill_policy", "{}"}, {"user", NULL}};
    json_t *tasks = tasks_of(props, errstr, errstr_size);
    if (!tasks)
        return NULL;
    json_t *process = json_pack("{s:o}", "tasks", tasks);
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        json_t *v;
        if (prop(props, parts[i].name, parts[i].dflt, &v, errstr, errstr_size)) {
            json_decref(process);
            return NULL;
        }
        if (v)
            json_object_set_new(process, parts[i].name, v);
    }
    default_check_port(process);
    char digest[17];
    digest_of(process, digest);
    json_object_set_new(process, "digest", json_string(digest));
    return process;
}

int cv_service_digest(const json_t *props, char *out)
{
    char err[256];
    json_t *process = process_of(props, err, sizeof(err));
    if (!process)
        return CV_EVALIDATE;
    snprintf(out, 17, "%s", json_string_value(json_object_get(process, "digest")));
    json_decref(process);
    return 0;
}

/* The affinity parent as the live engine finds it: a resource name of the
 * same stack. A service id of this stack (what {get_resource: db} gives,
 * "<stack>.<resource>.<8 characters>") is its resource's name. */
static json_t *affinity_of(json_t *given, const char *svc)
{
    const char *v = json_string_value(given), *dot = strchr(svc, '.');
    size_t stack_len = dot ? (size_t)(dot - svc) + 1 : 0, len = strlen(v);
    if (stack_len && len > stack_len + 9 && strncmp(v, svc, stack_len) == 0 && v[len - 9] == '.') {
        json_t *name = json_stringn(v + stack_len, len - stack_len - 9);
        json_decref(given);
        return name;
    }
    return given;
}

/* How the service changes: `updatePolicy` (absent without update_policy)
 * and `moveCost` (docs/crm.md). */
static int describe_updates(json_t *spec, const json_t *props, char *errstr, size_t errstr_size)
{
    json_t *policy = NULL, *cost = NULL;
    int rc = prop(props, "update_policy", NULL, &policy, errstr, errstr_size);
    if (!rc && policy)
        json_object_set_new(spec, "updatePolicy", policy);
    rc = rc ? rc : prop(props, "move_cost", "\"Low\"", &cost, errstr, errstr_size);
    if (!rc)
        json_object_set_new(spec, "moveCost", cost);
    return rc;
}

/* The placement description's members that the properties give. */
static int describe(json_t *spec, const json_t *props, const char *svc, char *errstr,
                    size_t errstr_size)
{
    json_t *metrics = NULL, *placement = NULL, *constraints = NULL, *spread = NULL,
           *affinity = NULL;
    int rc = prop(props, "metrics", "[]", &metrics, errstr, errstr_size);
    if (!rc)
        json_object_set_new(spec, "metrics", metrics);
    rc = rc ? rc : prop(props, "placement_constraints", NULL, &placement, errstr, errstr_size);
    if (!rc && placement &&
        json_string_value(placement)[strspn(json_string_value(placement), " \t\r\n")] != '\0')
        json_object_set(spec, "placementConstraints", placement);
    json_decref(placement);
    rc = rc ? rc : prop(props, "constraints", NULL, &constraints, errstr, errstr_size);
    if (!rc && constraints)
        json_object_set_new(spec, "constraints", constraints);
    rc = rc ? rc : prop(props, "spread", "\"adaptive\"", &spread, errstr, errstr_size);
    if (!rc)
        json_object_update(spec, spread);
    json_decref(spread);
    rc = rc ? rc : prop(props, "affinity", NULL, &affinity, errstr, errstr_size);
    if (!rc && affinity)
        json_object_set_new(spec, "affinity",
                            json_pack("{s:o}", "service", affinity_of(affinity, svc)));
    return rc ? rc : describe_updates(spec, props, errstr, errstr_size);
}

json_t *cv_service_spec(const json_t *props, const char *svc, const char *resource, char *errstr,
                        size_t errstr_size)
{
    json_t *replicas, *stateful;
    if (prop(props, "replicas", "1", &replicas, errstr, errstr_size))
        return NULL;
    if (prop(props, "stateful", "false", &stateful, errstr, errstr_size)) {
        json_decref(replicas);
        return NULL;
    }
    json_t *spec = json_pack("{s:s, s:s, s:o, s:o}", "name", svc, "serviceType", resource,
                             "replicas", replicas, "stateful", stateful);
    json_t *process = NULL;
    if (describe(spec, props, svc, errstr, errstr_size) != 0 ||
        !(process = process_of(props, errstr, errstr_size))) {
        json_decref(spec);
        return NULL;
    }
    json_object_set_new(spec, "process", process);
    return spec;
}

void cv_service_by_upgrade_domain(json_t *spec)
{
    json_t *policy = json_object_get(spec, "updatePolicy");
    if (!json_is_object(policy)) {
        char err[256];
        json_t *props = json_pack("{s:{}}", "update_policy");
        policy = cv__service_prop(props, "update_policy", "properties", err, sizeof(err));
        json_decref(props);
        if (!policy)
            return;
        json_object_set_new(spec, "updatePolicy", policy);
    }
    json_object_set_new(policy, "byUpgradeDomain", json_true());
}

/* ---- metrics known to the live cluster ---- */

static bool in_capacities(const json_t *holder, const char *name)
{
    return json_object_get(json_object_get(holder, "capacities"), name) != NULL;
}

static bool known_metric(const char *name, const json_t *settings, const json_t *nodes)
{
    static const char *const builtin[] = {"PrimaryCount", "ReplicaCount", "Count"};
    for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
        if (strcmp(name, builtin[i]) == 0)
            return true;
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(settings, "metrics"), i, e)
    {
        const char *m = json_is_string(e) ? json_string_value(e)
                                          : json_string_value(json_object_get(e, "name"));
        if (m && strcmp(m, name) == 0)
            return true;
    }
    const char *key;
    json_t *type;
    json_object_foreach(json_object_get(settings, "nodeTypes"), key, type)
    {
        if (in_capacities(type, name))
            return true;
    }
    json_array_foreach(nodes, i, e)
    {
        if (in_capacities(e, name))
            return true;
    }
    const json_t *s = json_object_get(settings, "settings");
    return json_object_get(json_object_get(s, "nodeBufferPercentage"), name) ||
           json_object_get(json_object_get(s, "nodeOverbookingPercentage"), name);
}

const char *cv_service_unknown_metric(const json_t *spec, const json_t *settings,
                                      const json_t *nodes)
{
    if (!json_is_object(settings) && json_array_size(nodes) == 0)
        return NULL;
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(spec, "metrics"), i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        if (name && !known_metric(name, settings, nodes))
            return name;
    }
    return NULL;
}
