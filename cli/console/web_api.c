/*
 * The stack documents of converge-web's API (web_api.h): the list, one
 * stack, its graph, resources and events. The cluster's are in
 * web_api_cluster.c. Every document that carries a stack's values has its
 * secrets masked (cli_secret.h): the console has no --show-secrets, its
 * viewers never see them; a stack's outputs show what they compute.
 */
#include "web_api.h"
#include "web_api_internal.h"

#include "cv_status.h"
#include "web_view.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STALLED_AFTER 60.0 /* seconds, as convergectl status's default */
#define EVENTS_MAX 1000    /* events in one answer; ?after= pages on */

json_t *web_api_error(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return json_pack("{s:o}", "error", cli_json_str(msg));
}

json_t *web__unavailable(int *status)
{
    *status = 503;
    return web_api_error("Redis did not answer as expected (converge-web's log says why)");
}

double web__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The id of the stack a path names: 0, or *status 404 / 503 with *err. */
int web__resolve(cli_t *cli, const char *stack, char id[CV_ID_MAX], int *status, json_t **err)
{
    int rc = cli_stack_resolve(cli, stack, id);
    if (rc == CLI_OK)
        return 0;
    if (rc == CLI_USAGE) {
        *status = 404;
        *err = web_api_error("stack %s not found", stack);
    } else {
        *err = web__unavailable(status);
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* /api/stacks                                                              */
/* ------------------------------------------------------------------------ */

/* `convergectl list -o json`'s row, and the state the page colours by. */
static json_t *list_row(const char *id, const json_t *rec, double now)
{
    json_t *row = cli_list_row(id, rec, now);
    json_object_set_new(row, "state", json_string(web_view_state(cli_field_str(rec, "status"))));
    return row;
}

/* ?status=S1,S2 and ?name=PATTERN as `convergectl list` reads them. */
static int list_filter(const char *query, cli_list_filter_t *f, char *errstr, size_t errstr_size)
{
    char value[512];
    if (cv_httpreq_param(query, "status", value, sizeof(value)) && value[0] &&
        cli_list_filter_add_status(f, value, errstr, errstr_size) != 0)
        return -1;
    if (cv_httpreq_param(query, "name", value, sizeof(value)) && value[0] &&
        cli_list_filter_set_name(f, value, errstr, errstr_size) != 0)
        return -1;
    return 0;
}

/* The stack hashes of the names in `names` (name -> id), one round trip. */
static json_t *read_list(cli_t *cli, const redisReply *names, const cli_list_filter_t *f)
{
    size_t n = names->elements / 2;
    cli_redis_cmd_t *cmds = calloc(n ? n : 1, sizeof(*cmds));
    redisReply **replies = calloc(n ? n : 1, sizeof(*replies));
    char(*keys)[CV_KEY_MAX] = calloc(n ? n : 1, sizeof(*keys));
    for (size_t i = 0; i < n; i++) {
        cv_key(keys[i], CV_KEY_MAX, CV_KEY_STACK, names->element[2 * i + 1]->str, 0, NULL);
        cmds[i] = (cli_redis_cmd_t){2, {"HGETALL", keys[i]}};
    }
    json_t *rows = NULL;
    if (n == 0 || cli_redis_pipeline(cli, n, cmds, CLI_R(REDIS_REPLY_ARRAY), replies) == CLI_OK) {
        rows = json_array();
        double now = web__now();
        for (size_t i = 0; i < n; i++) {
            json_t *rec = cli_reply_hash(replies[i]);
            json_t *row = list_row(names->element[2 * i + 1]->str, rec, now);
            if (json_object_size(rec) && cli_list_filter_match(f, row))
                json_array_append(rows, row);
            json_decref(row);
            json_decref(rec);
            freeReplyObject(replies[i]);
        }
    }
    free(keys);
    free(replies);
    free(cmds);
    return rows;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(cli_field_str(*(json_t *const *)a, "name"),
                  cli_field_str(*(json_t *const *)b, "name"));
}

static json_t *stacks(cli_t *cli, const char *query, int *status)
{
    cli_list_filter_t f;
    char err[256];
    cli_list_filter_init(&f);
    if (list_filter(query, &f, err, sizeof(err)) != 0) {
        cli_list_filter_free(&f);
        *status = 400;
        return web_api_error("%s", err);
    }
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACKS, NULL, 0, NULL);
    const char *argv[] = {"HGETALL", key};
    redisReply *names = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    json_t *rows = names && cli_reply_is_hash(cli, names, key) ? read_list(cli, names, &f) : NULL;
    if (names)
        freeReplyObject(names);
    cli_list_filter_free(&f);
    if (rows && cli_secret_mask_list(cli, rows) != CLI_OK) {
        json_decref(rows);
        rows = NULL;
    }
    if (!rows)
        return web__unavailable(status);
    size_t n = json_array_size(rows);
    json_t **v = calloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(rows, i));
    qsort(v, n, sizeof(*v), by_name);
    json_array_clear(rows);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(rows, v[i]);
    free(v);
    return json_pack("{s:o}", "stacks", rows);
}

/* ------------------------------------------------------------------------ */
/* /api/stacks/NAME                                                         */
/* ------------------------------------------------------------------------ */

/* What `convergectl status -o json` shows, but for the parameters and the
 * hooks (the page shows neither), with "state" added. */
static json_t *stack_doc(cli_t *cli, const char *stack, int *status)
{
    char id[CV_ID_MAX];
    json_t *err = NULL;
    if (web__resolve(cli, stack, id, status, &err) != 0)
        return err;
    cli_stack_t s;
    bool found = false;
    json_t *counts = NULL, *nested = NULL, *waiting = NULL, *doc = NULL;
    int rc = cli_stack_read(cli, id, &s, &found);
    if (rc == CLI_OK && !found) {
        cli_stack_free(&s);
        *status = 404;
        return web_api_error("stack %s (%s) has no status record", stack, id);
    }
    if (rc == CLI_OK && !(counts = cli_stack_counts(cli, id)))
        rc = CLI_SERVICE;
    if (rc == CLI_OK && !(nested = cli_stack_nested(cli, id)))
        rc = CLI_SERVICE;
    if (rc == CLI_OK && !cli_stack_settled(&s))
        rc = cli_waiting_read(cli, stack, id, STALLED_AFTER, &waiting);
    cli_secrets_t secrets;
    if (rc == CLI_OK)
        rc = cli_secret_read_stack(cli, s.name, id, &secrets);
    else
        cli_secrets_init(&secrets);
    if (rc == CLI_OK)
        doc = json_pack(
            "{s:s, s:s, s:s, s:s, s:o, s:I, s:O, s:I, s:I, s:O, s:f, s:f, s:b, s:s, s:s, s:O, "
            "s:b, s:O}",
            "name", s.name, "id", s.id, "status", s.status, "state", web_view_state(s.status),
            "reason", cli_json_str(s.reason), "traversal", (json_int_t)s.traversal, "resources",
            counts, "total", (json_int_t)s.total, "done", (json_int_t)s.done, "outputs", s.outputs,
            "created", s.created, "updated", s.updated, "rollback", s.rollback, "parent", s.parent,
            "parent_resource", s.parent_resource, "nested", nested, "stalled",
            json_is_true(json_object_get(waiting, "stalled")), "waiting",
            waiting ? waiting : json_null());
    static const char *const masked[] = {"reason", "waiting"};
    for (size_t i = 0; doc && i < sizeof(masked) / sizeof(masked[0]); i++)
        json_object_set_new(doc, masked[i],
                            cli_secret_mask(&secrets, json_object_get(doc, masked[i])));
    cli_secrets_free(&secrets);
    json_decref(counts);
    json_decref(nested);
    json_decref(waiting);
    cli_stack_free(&s);
    return doc ? doc : web__unavailable(status);
}

/* ------------------------------------------------------------------------ */
/* The graph                                                                */
/* ------------------------------------------------------------------------ */

/* The stored template's resources that run, [{"name", "type",
 * "declared_type", "depends"}] (the types as cli_def_resources gives them):
 * parsed with the stack's parameters, files and environment as the engine
 * does; when that fails (a template the engine would refuse now), the
 * resources without their dependencies. */
static json_t *graph_resources(const cli_def_t *d)
{
    cv_tpl_opts_t opts = {.files = d->files, .env = d->env, .params_later = 1};
    cv_template_t *tpl = NULL;
    char err[512];
    json_t *out = json_array();
    if (cv_template_from_json_opts(d->tree, d->fname ? d->fname : "template", d->params, &opts,
                                   &tpl, err, sizeof(err)) == 0) {
        for (size_t i = 0; i < tpl->nresources; i++) {
            json_t *deps = json_array();
            for (size_t j = 0; j < tpl->resources[i].ndepends; j++)
                json_array_append_new(deps, json_string(tpl->resources[i].depends[j]));
            json_array_append_new(out,
                                  json_pack("{s:s, s:s, s:s, s:o}", "name", tpl->resources[i].name,
                                            "type", tpl->resources[i].type, "declared_type",
                                            tpl->resources[i].declared_type, "depends", deps));
        }
        cv_template_free(tpl);
        return out;
    }
    json_t *res = cli_def_resources(d), *v;
    const char *name;
    json_object_foreach(res, name, v)
    {
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:[]}", "name", name, "type",
                                             cli_field_str(v, "type"), "declared_type",
                                             cli_field_str(v, "declared_type"), "depends"));
    }
    json_decref(res);
    return out;
}

/* The records (HGETALL res:<name>) of `resources`, name -> fields: one
 * round trip. NULL when Redis failed. */
static json_t *read_records(cli_t *cli, const char *id, const json_t *resources)
{
    size_t n = json_array_size(resources);
    if (n == 0)
        return json_object();
    cli_redis_cmd_t *cmds = calloc(n, sizeof(*cmds));
    redisReply **replies = calloc(n, sizeof(*replies));
    char(*keys)[CV_KEY_MAX] = calloc(n, sizeof(*keys));
    for (size_t i = 0; i < n; i++) {
        cv_key(keys[i], CV_KEY_MAX, CV_KEY_RES, id, 0,
               cli_field_str(json_array_get(resources, i), "name"));
        cmds[i] = (cli_redis_cmd_t){2, {"HGETALL", keys[i]}};
    }
    json_t *out = NULL;
    if (cli_redis_pipeline(cli, n, cmds, CLI_R(REDIS_REPLY_ARRAY), replies) == CLI_OK) {
        out = json_object();
        for (size_t i = 0; i < n; i++) {
            if (replies[i]->elements)
                json_object_set_new(out, cli_field_str(json_array_get(resources, i), "name"),
                                    cli_reply_hash(replies[i]));
            freeReplyObject(replies[i]);
        }
    }
    free(keys);
    free(replies);
    free(cmds);
    return out;
}

/* The stack's template resources, their records and its secrets, for the
 * graph and the resources table: 0, or -1 with *status and *err set.
 * `secrets` is cli_secrets_init'ed in every case. */
static int read_resources(cli_t *cli, const char *stack, char id[CV_ID_MAX], json_t **resources,
                          json_t **records, cli_secrets_t *secrets, int *status, json_t **err)
{
    cli_secrets_init(secrets);
    if (web__resolve(cli, stack, id, status, err) != 0)
        return -1;
    cli_def_t d;
    int rc = cli_def_read(cli, stack, id, &d);
    *resources = rc == CLI_OK ? graph_resources(&d) : NULL;
    if (*resources) {
        cli_secrets_free(secrets);
        if (cli_secret_read(cli, id, &d, secrets) != CLI_OK) {
            json_decref(*resources);
            *resources = NULL;
        }
    }
    cli_def_free(&d);
    *records = *resources ? read_records(cli, id, *resources) : NULL;
    if (*records)
        return 0;
    json_decref(*resources);
    *err = web__unavailable(status);
    return -1;
}

/* The graph's nodes with their reasons and physical ids masked. */
static void mask_nodes(const cli_secrets_t *secrets, json_t *graph)
{
    size_t i;
    json_t *node;
    json_array_foreach(json_object_get(graph, "nodes"), i, node)
    {
        cli_secret_mask_resource(secrets, cli_field_str(node, "name"), node);
    }
}

json_t *web_api_stack_graph(cli_t *cli, const char *stack, int *status)
{
    char id[CV_ID_MAX];
    json_t *resources, *records, *err = NULL;
    cli_secrets_t secrets;
    if (read_resources(cli, stack, id, &resources, &records, &secrets, status, &err) != 0) {
        cli_secrets_free(&secrets);
        json_decref(err);
        return NULL;
    }
    cli_stack_t s;
    bool found = false;
    json_t *doc = NULL;
    if (cli_stack_read(cli, id, &s, &found) == CLI_OK && found) {
        doc = web_view_graph(resources, records);
        mask_nodes(&secrets, doc);
        json_object_set_new(doc, "name", cli_json_str(s.name));
        json_object_set_new(doc, "id", cli_json_str(s.id));
        json_object_set_new(doc, "status", cli_json_str(s.status));
        json_object_set_new(doc, "state", json_string(web_view_state(s.status)));
        json_t *reason = cli_json_str(s.reason);
        json_object_set_new(doc, "reason", cli_secret_mask(&secrets, reason));
        json_decref(reason);
        json_object_set_new(doc, "done", json_integer(s.done));
        json_object_set_new(doc, "total", json_integer(s.total));
        json_object_set_new(doc, "traversal", json_integer(s.traversal));
    }
    *status = doc ? 200 : found ? 503 : 404;
    cli_secrets_free(&secrets);
    cli_stack_free(&s);
    json_decref(resources);
    json_decref(records);
    return doc;
}

/* ------------------------------------------------------------------------ */
/* Resources and events                                                     */
/* ------------------------------------------------------------------------ */

static json_t *resource_row(const json_t *res, const json_t *rec)
{
    const char *status = cli_field_str(rec, "status");
    json_t *attrs = cli_json_parse(cli_field_str(rec, "attrs"), NULL);
    cv_rtype_attrs_shown(attrs);
    json_t *row = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:f}", "name", cli_field_str(res, "name"), "type",
        cli_reported_type(res, rec), "status", status[0] ? status : "INIT_COMPLETE", "state",
        web_view_state(status), "reason", cli_field_str(rec, "reason"), "physical_id",
        cli_field_str(rec, "physical_id"), "updated", cli_field_num(rec, "updated"));
    json_object_set_new(row, "attributes", attrs ? attrs : json_object());
    return row;
}

static json_t *resources_doc(cli_t *cli, const char *stack, int *status)
{
    char id[CV_ID_MAX];
    json_t *resources, *records, *err = NULL;
    cli_secrets_t secrets;
    if (read_resources(cli, stack, id, &resources, &records, &secrets, status, &err) != 0) {
        cli_secrets_free(&secrets);
        return err;
    }
    json_t *rows = json_array(), *res;
    size_t i;
    json_array_foreach(resources, i, res)
    {
        json_t *row = resource_row(res, json_object_get(records, cli_field_str(res, "name")));
        cli_secret_mask_resource(&secrets, cli_field_str(res, "name"), row);
        json_array_append_new(rows, row);
    }
    cli_secrets_free(&secrets);
    json_decref(resources);
    json_decref(records);
    return json_pack("{s:o}", "resources", rows);
}

/* A stream entry id "MS-SEQ". */
static bool valid_entry_id(const char *s)
{
    size_t ms = strspn(s, "0123456789");
    return ms > 0 && ms <= 20 && s[ms] == '-' && strspn(s + ms + 1, "0123456789") > 0 &&
           strspn(s + ms + 1, "0123456789") <= 20 &&
           s[ms + 1 + strspn(s + ms + 1, "0123456789")] == 0;
}

static json_t *events_doc(cli_t *cli, const char *stack, const char *query, int *status)
{
    char after[64] = "", start[72] = "-", id[CV_ID_MAX];
    if (cv_httpreq_param(query, "after", after, sizeof(after)) && after[0]) {
        if (!valid_entry_id(after)) {
            *status = 400;
            return web_api_error("after: expected an event id such as 1712345678901-0, got '%s'",
                                 after);
        }
        snprintf(start, sizeof(start), "(%s", after);
    }
    json_t *err = NULL;
    if (web__resolve(cli, stack, id, status, &err) != 0)
        return err;
    cli_secrets_t secrets;
    if (cli_secret_read_stack(cli, stack, id, &secrets) != CLI_OK) {
        cli_secrets_free(&secrets);
        return web__unavailable(status);
    }
    char key[CV_KEY_MAX], count[16];
    cv_key(key, sizeof(key), CV_KEY_EVENTS, id, 0, NULL);
    snprintf(count, sizeof(count), "%d", EVENTS_MAX);
    const char *argv[] = {"XRANGE", key, start, "+", "COUNT", count};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 6, argv, NULL);
    if (!r) {
        cli_secrets_free(&secrets);
        return web__unavailable(status);
    }
    json_t *events = json_array();
    for (size_t i = 0; i < r->elements; i++) {
        if (!cli_event_entry_ok(r->element[i]))
            continue;
        size_t from = json_array_size(events);
        cli_event_expand(r->element[i], true, events);
        for (size_t k = from; k < json_array_size(events); k++)
            cli_secret_mask_resource(&secrets, "", json_array_get(events, k));
    }
    cli_secrets_free(&secrets);
    bool more = r->elements == EVENTS_MAX;
    freeReplyObject(r);
    return json_pack("{s:o, s:b}", "events", events, "more", more);
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                 */
/* ------------------------------------------------------------------------ */

json_t *web_api_get(cli_t *cli, const web_route_t *route, const char *query, int *status)
{
    *status = 200;
    switch (route->kind) {
    case WEB_ROUTE_STACKS:
        return stacks(cli, query, status);
    case WEB_ROUTE_STACK:
        return stack_doc(cli, route->stack, status);
    case WEB_ROUTE_STACK_GRAPH: {
        json_t *doc = web_api_stack_graph(cli, route->stack, status);
        if (doc)
            return doc;
        return *status == 404 ? web_api_error("stack %s not found", route->stack)
                              : web__unavailable(status);
    }
    case WEB_ROUTE_STACK_RESOURCES:
        return resources_doc(cli, route->stack, status);
    case WEB_ROUTE_STACK_EVENTS:
        return events_doc(cli, route->stack, query, status);
    case WEB_ROUTE_CLUSTER:
        return web__cluster_doc(cli, status);
    case WEB_ROUTE_SERVICE:
        return web__service_doc(cli, route->stack, route->service, status);
    default:
        *status = 404;
        return web_api_error("no such API call");
    }
}
