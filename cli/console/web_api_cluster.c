/*
 * The cluster documents of converge-web's API (web_api.h): the map of the
 * nodes, and one service (its replicas, why each is where it is, its
 * rollout) — the reads of `convergectl nodes`, `health`, `replicas`,
 * `place --explain` and `rollout status`, with their pure views.
 */
#include "web_api.h"
#include "web_api_internal.h"

#include "cv_status.h"
#include "web_view.h"

#include "cv_contract.h"

#include <string.h>

/* The services of the model, for links: [{"svc", "stack_name",
 * "resource", "state"}] by stack then resource. */
static json_t *service_list(const json_t *model)
{
    json_t *out = json_array(), *rec;
    const char *svc;
    json_object_foreach(json_object_get(model, "services"), svc, rec)
    {
        const char *stack = json_string_value(json_object_get(rec, "stack_name"));
        const char *res = json_string_value(json_object_get(rec, "resource"));
        const char *state = json_string_value(json_object_get(rec, "state"));
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s}", "svc", svc, "stack_name",
                                             stack ? stack : "", "resource", res ? res : "",
                                             "state", state ? state : ""));
    }
    return out;
}

json_t *web__cluster_doc(cli_t *cli, int *status)
{
    json_t *model = NULL, *reports = NULL;
    if (cli_live_read(cli, CLI_LIVE_NODES | CLI_LIVE_SERVICES, &model) != CLI_OK ||
        cli_live_read_health(cli, &reports) != CLI_OK) {
        json_decref(model);
        return web__unavailable(status);
    }
    double now = web__now();
    json_t *rows = cli_nodes_rows(model), *health = cli_health_rows(reports, now);
    json_t *doc = web_view_cluster(rows, json_object_get(model, "settings"), health);
    json_object_set_new(doc, "services", service_list(model));
    json_object_set_new(doc, "now", json_real(now));
    json_decref(rows);
    json_decref(health);
    json_decref(reports);
    json_decref(model);
    return doc;
}

/* The model with the nodes and the one service `svc`. */
static int read_model(cli_t *cli, const char *svc, json_t **model)
{
    int rc = cli_live_read(cli, CLI_LIVE_NODES, model);
    if (rc != CLI_OK)
        return rc;
    json_t *svcs = json_pack("[s]", svc);
    rc = cli_live_read_services(cli, svcs, json_object_get(*model, "services"));
    json_decref(svcs);
    return rc;
}

/* The service's rollout record (docs/crm.md "Rolling updates"), parsed;
 * null when none. */
static json_t *rollout_of(const json_t *model, const char *svc)
{
    json_t *rec = json_object_get(json_object_get(model, "services"), svc);
    const char *text = json_string_value(json_object_get(rec, "rollout"));
    json_t *r = text && text[0] ? json_loads(text, 0, NULL) : NULL;
    if (!r && json_is_object(json_object_get(rec, "rollout")))
        r = json_incref(json_object_get(rec, "rollout"));
    return r ? r : json_null();
}

json_t *web__service_doc(cli_t *cli, const char *stack, const char *service, int *status)
{
    char id[CV_ID_MAX];
    json_t *err = NULL, *services = NULL, *model = NULL;
    if (web__resolve(cli, stack, id, status, &err) != 0)
        return err;
    int rc = cli_live_stack_services(cli, stack, id, service, &services);
    if (rc == CLI_USAGE || (rc == CLI_OK && json_array_size(services) == 0)) {
        json_decref(services);
        *status = 404;
        return web_api_error(rc == CLI_USAGE ? "stack %s has no Converge::Service resource %s"
                                             : "service %s of stack %s is not created yet",
                             rc == CLI_USAGE ? stack : service, rc == CLI_USAGE ? service : stack);
    }
    const char *svc = json_string_value(json_object_get(json_array_get(services, 0), "svc"));
    if (rc == CLI_OK)
        rc = read_model(cli, svc, &model);
    if (rc != CLI_OK) {
        json_decref(services);
        json_decref(model);
        return web__unavailable(status);
    }
    char why[1024] = "";
    json_t *replicas = cli_replica_rows(model, services);
    json_t *explain = cli_explain(model, svc, why, sizeof(why));
    json_t *doc = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "stack", stack, "service", service,
                            "svc", svc, "replicas", replicas, "rollout", rollout_of(model, svc),
                            "explain", explain ? explain : json_null());
    if (!explain)
        json_object_set_new(doc, "explain_error", json_string(why));
    json_decref(services);
    json_decref(model);
    return doc;
}
