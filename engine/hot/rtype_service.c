/*
 * Converge::Service — a replicated service whose replicas are processes on
 * the cluster's nodes (docs/services.md).
 *
 * One resource, not a nested stack: its physical id is its service id
 * (cv_service_id), the same for a retried create of the same version. The
 * operations here only say what the version is (data: "svc", "replicas",
 * "digest"); the engine writes the service's spec into the cluster and has
 * it placed (engine/convergence/checkjob_service.c), and observe() reads the cluster
 * snapshot the observer hands it (rtype_service_observe.c). Every
 * property can change in place: the live planner moves or replaces the
 * replicas that need it (a changed process digest replaces them all).
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv_service.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <string.h>

static const cv_prop_schema_t service_props[] = {
    {"replicas", CV_PROP_INTEGER, false, "1", true},
    {"command", CV_PROP_LIST, false, NULL, true},
    {"env", CV_PROP_MAP, false, NULL, true},
    {"workdir", CV_PROP_STRING, false, NULL, true},
    {"stateful", CV_PROP_BOOLEAN, false, "false", true},
    {"ports", CV_PROP_LIST, false, NULL, true},
    {"volumes", CV_PROP_LIST, false, NULL, true},
    {"resources", CV_PROP_MAP, false, NULL, true},
    {"metrics", CV_PROP_LIST, false, NULL, true},
    {"placement_constraints", CV_PROP_STRING, false, NULL, true},
    {"constraints", CV_PROP_ANY, false, NULL, true},
    {"spread", CV_PROP_ANY, false, NULL, true},
    {"affinity", CV_PROP_STRING, false, NULL, true},
    {"health_check", CV_PROP_MAP, false, NULL, true},
    {"restart_policy", CV_PROP_MAP, false, NULL, true},
    {"kill_policy", CV_PROP_MAP, false, NULL, true},
    {"tasks", CV_PROP_LIST, false, NULL, true},
    {"update_policy", CV_PROP_MAP, false, NULL, true},
    {"move_cost", CV_PROP_STRING, false, NULL, true},
    {"user", CV_PROP_STRING, false, NULL, true},
};

static const char *const service_attrs[] = {"service_id", "replicas", "endpoints", "port_endpoints",
                                            NULL};

/* The names of the ports, in order: the first one's is the endpoint. */
static json_t *port_names(const json_t *props)
{
    char err[256];
    json_t *ports = cv__service_prop(props, "ports", "properties", err, sizeof(err));
    json_t *names = json_array();
    size_t i;
    const json_t *p;
    json_array_foreach(ports, i, p)
    {
        json_array_append(names, json_object_get(p, "name"));
    }
    json_decref(ports);
    return names;
}

/* What observe() needs without the properties (a version being deleted
 * is observed without them). */
static int describe_version(cv_rstate_t *st)
{
    char digest[17] = "";
    if (cv_service_digest(st->props, digest) != 0) {
        snprintf(st->reason, sizeof(st->reason), "the process properties do not read");
        return CV_EVALIDATE;
    }
    const json_t *replicas = json_object_get(st->props, "replicas");
    json_object_set_new(st->data, "svc", json_string(st->physical_id));
    json_object_set_new(st->data, "replicas",
                        json_integer(json_is_integer(replicas) ? json_integer_value(replicas) : 1));
    json_object_set_new(st->data, "digest", json_string(digest));
    json_object_set_new(st->data, "ports", port_names(st->props));
    json_object_del(st->data, "rejected");
    json_object_set_new(st->attrs, "service_id", json_string(st->physical_id));
    if (!json_object_get(st->attrs, "replicas"))
        json_object_set_new(st->attrs, "replicas", json_array());
    if (!json_object_get(st->attrs, "endpoints"))
        json_object_set_new(st->attrs, "endpoints", json_array());
    if (!json_object_get(st->attrs, "port_endpoints"))
        json_object_set_new(st->attrs, "port_endpoints", json_object());
    return 0;
}

static int service_create(cv_rstate_t *st)
{
    cv_service_id(st->physical_id, sizeof(st->physical_id), st->stack_name, st->resource_name,
                  st->uuid);
    return describe_version(st);
}

static int service_update(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        cv_service_id(st->physical_id, sizeof(st->physical_id), st->stack_name, st->resource_name,
                      st->uuid);
    return describe_version(st);
}

/* The engine marks the service deleting; observe() waits for its replicas
 * to stop. */
static int service_remove(cv_rstate_t *st)
{
    if (!json_object_get(st->data, "svc"))
        json_object_set_new(st->data, "svc", json_string(st->physical_id));
    return 0;
}

const cv_rtype_t cv__rtype_service = {
    .name = CV_SERVICE_TYPE,
    .props = service_props,
    .nprops = sizeof(service_props) / sizeof(service_props[0]),
    .attrs = service_attrs,
    .validate = cv__service_validate,
    .create = service_create,
    .update = service_update,
    .remove = service_remove,
    .observe = cv__service_observe,
};
