/*
 * Reading the live cluster model (cli_live.h). Round trips: HGETALL nodes
 * and GET settings; the three hashes of every node at once; the heartbeat
 * TTLs at once; SMEMBERS services; the service hashes at once.
 */
#include "cli_live.h"
#include "cli_output.h"
#include "cli_traversal.h"

#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Commands per pipeline: bounds the memory of one round trip. */
#define BATCH 512

#define SERVICE_TYPE "Converge::Service"

/* The value `text` parsed as JSON, or {"error": ...} when it is not JSON
 * (or, with `want_object`, not an object). */
static json_t *parse_value(const char *text, size_t len, bool want_object)
{
    json_error_t e;
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY, &e);
    if (v && (!want_object || json_is_object(v)))
        return v;
    json_decref(v);
    json_t *snippet = cli_json_strn(text, len > 80 ? 80 : len);
    json_t *err = json_pack("{s:s++}", "error",
                            v ? "not a JSON object: " : "not JSON: ", json_string_value(snippet),
                            len > 80 ? "..." : "");
    json_decref(snippet);
    return err;
}

/* A hash reply as an object; the fields named in `json_fields` parsed. */
static json_t *hash_object(const redisReply *r, const char *const *json_fields)
{
    json_t *o = json_object();
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *f = r->element[i], *v = r->element[i + 1];
        bool parse = false;
        for (const char *const *jf = json_fields; jf && *jf && !parse; jf++)
            parse = strcmp(f->str, *jf) == 0;
        json_object_set_new(
            o, f->str, parse ? parse_value(v->str, v->len, false) : cli_json_strn(v->str, v->len));
    }
    return o;
}

/* A hash of JSON objects (assign, report, nodes): field -> parsed value. */
static json_t *hash_of_objects(const redisReply *r)
{
    json_t *o = json_object();
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        json_object_set_new(o, r->element[i]->str,
                            parse_value(r->element[i + 1]->str, r->element[i + 1]->len, true));
    return o;
}

/* ------------------------------------------------------------------------ */
/* Pipelines of one command per name                                        */
/* ------------------------------------------------------------------------ */

typedef void (*store_fn)(json_t *model, const char *name, int kind, const redisReply *r);

/* Sends `cmd` KEY(kind, name) for every name and every kind of `kinds`,
 * BATCH at a time, handing each reply to `store`. */
static int per_name(cli_t *cli, const json_t *names, const char *cmd, const cv_key_kind_t *kinds,
                    size_t nkinds, unsigned types, store_fn store, json_t *model)
{
    size_t total = json_array_size(names) * nkinds;
    cli_redis_cmd_t *cmds = calloc(BATCH, sizeof(*cmds));
    char(*keys)[CV_KEY_MAX] = calloc(BATCH, CV_KEY_MAX);
    redisReply **replies = calloc(BATCH, sizeof(*replies));
    int rc = cmds && keys && replies ? CLI_OK : cli_fail(CLI_SERVICE, "out of memory");
    for (size_t at = 0; rc == CLI_OK && at < total; at += BATCH) {
        size_t n = total - at < BATCH ? total - at : BATCH;
        for (size_t i = 0; i < n; i++) {
            const char *name = json_string_value(json_array_get(names, (at + i) / nkinds));
            cv_key(keys[i], CV_KEY_MAX, kinds[(at + i) % nkinds], NULL, 0, name);
            cmds[i] = (cli_redis_cmd_t){2, {cmd, keys[i]}};
        }
        rc = cli_redis_pipeline(cli, n, cmds, types, replies);
        if (rc != CLI_OK)
            break; /* the pipeline freed its replies */
        for (size_t i = 0; i < n; i++) {
            const char *name = json_string_value(json_array_get(names, (at + i) / nkinds));
            bool ok = replies[i]->type != REDIS_REPLY_ARRAY ||
                      cli_reply_is_hash(cli, replies[i], keys[i]);
            if (rc == CLI_OK && ok)
                store(model, name, (int)kinds[(at + i) % nkinds], replies[i]);
            rc = ok ? rc : CLI_SERVICE;
            freeReplyObject(replies[i]);
        }
    }
    free(cmds);
    free(keys);
    free(replies);
    return rc;
}

static void store_node_hash(json_t *model, const char *name, int kind, const redisReply *r)
{
    static const char *const node_json[] = {"load", NULL};
    const char *part = kind == CV_KEY_NODE ? "node" : kind == CV_KEY_ASSIGN ? "assign" : "report";
    json_t *v = kind == CV_KEY_NODE ? hash_object(r, node_json) : hash_of_objects(r);
    json_object_set_new(json_object_get(model, part), name, v);
}

static void store_alive(json_t *model, const char *name, int kind, const redisReply *r)
{
    (void)kind;
    long long ms = r->type == REDIS_REPLY_INTEGER && r->integer > 0 ? r->integer : 0;
    /* PTTL -1: a heartbeat without expiry still says the node is up. */
    if (r->type == REDIS_REPLY_INTEGER && r->integer == -1)
        ms = 1;
    json_object_set_new(json_object_get(model, "alive"), name, json_integer(ms));
}

static void store_service(json_t *model, const char *name, int kind, const redisReply *r)
{
    static const char *const svc_json[] = {"spec", "placement", "unplaced", "blocklist", NULL};
    (void)kind;
    if (r->elements > 0)
        json_object_set_new(json_object_get(model, "services"), name, hash_object(r, svc_json));
}

/* ------------------------------------------------------------------------ */
/* The model                                                                */
/* ------------------------------------------------------------------------ */

static int read_registry(cli_t *cli, json_t *model, json_t *names)
{
    char nodes_key[CV_KEY_MAX], settings_key[CV_KEY_MAX];
    cv_key(nodes_key, sizeof(nodes_key), CV_KEY_NODES, NULL, 0, NULL);
    cv_key(settings_key, sizeof(settings_key), CV_KEY_SETTINGS, NULL, 0, NULL);
    const char *hgetall[] = {"HGETALL", nodes_key}, *get[] = {"GET", settings_key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, hgetall, NULL);
    if (!r || !cli_reply_is_hash(cli, r, nodes_key)) {
        freeReplyObject(r);
        return CLI_SERVICE;
    }
    json_object_set_new(model, "nodes", hash_of_objects(r));
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        json_array_append_new(names, cli_json_strn(r->element[i]->str, r->element[i]->len));
    freeReplyObject(r);
    r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 2, get, NULL);
    if (!r)
        return CLI_SERVICE;
    json_object_set_new(model, "settings",
                        r->type == REDIS_REPLY_NIL ? json_null()
                                                   : parse_value(r->str, r->len, true));
    freeReplyObject(r);
    return CLI_OK;
}

int cli_live_read_services(cli_t *cli, const json_t *svcs, json_t *into)
{
    static const cv_key_kind_t kinds[] = {CV_KEY_SVC};
    json_t *model = json_pack("{s:O}", "services", into);
    int rc =
        per_name(cli, svcs, "HGETALL", kinds, 1, CLI_R(REDIS_REPLY_ARRAY), store_service, model);
    json_decref(model);
    return rc;
}

static int read_services(cli_t *cli, json_t *model)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_SERVICES, NULL, 0, NULL);
    const char *argv[] = {"SMEMBERS", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    json_t *svcs = json_array();
    for (size_t i = 0; i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING)
            json_array_append_new(svcs, cli_json_strn(r->element[i]->str, r->element[i]->len));
    freeReplyObject(r);
    int rc = cli_live_read_services(cli, svcs, json_object_get(model, "services"));
    json_decref(svcs);
    return rc;
}

int cli_live_read(cli_t *cli, unsigned what, json_t **out)
{
    static const cv_key_kind_t hashes[] = {CV_KEY_NODE, CV_KEY_ASSIGN, CV_KEY_REPORT};
    static const cv_key_kind_t alive[] = {CV_KEY_ALIVE};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_t *model = json_pack("{s:f, s:n, s:{}, s:{}, s:{}, s:{}, s:{}, s:{}}", "now",
                              (double)ts.tv_sec + ts.tv_nsec / 1e9, "settings", "nodes", "node",
                              "alive", "assign", "report", "services");
    json_t *names = json_array();
    int rc = CLI_OK;
    if (what & CLI_LIVE_NODES) {
        rc = read_registry(cli, model, names);
        if (rc == CLI_OK)
            rc = per_name(cli, names, "HGETALL", hashes, 3, CLI_R(REDIS_REPLY_ARRAY),
                          store_node_hash, model);
        if (rc == CLI_OK)
            rc = per_name(cli, names, "PTTL", alive, 1, CLI_R(REDIS_REPLY_INTEGER), store_alive,
                          model);
    }
    if (rc == CLI_OK && (what & CLI_LIVE_SERVICES))
        rc = read_services(cli, model);
    json_decref(names);
    if (rc == CLI_OK)
        *out = model;
    else
        json_decref(model);
    return rc;
}

int cli_live_read_crm(cli_t *cli, json_t **out)
{
    char lease[CV_KEY_MAX], status[CV_KEY_MAX];
    cv_key(lease, sizeof(lease), CV_KEY_CRM, NULL, 0, NULL);
    cv_key(status, sizeof(status), CV_KEY_CRM_STATUS, NULL, 0, NULL);
    const cli_redis_cmd_t cmds[] = {
        {2, {"GET", lease}}, {2, {"PTTL", lease}}, {2, {"HGETALL", status}}};
    redisReply *r[3];
    int rc = cli_redis_pipeline(
        cli, 3, cmds, CLI_R_STRING_OR_NIL | CLI_R(REDIS_REPLY_INTEGER) | CLI_R(REDIS_REPLY_ARRAY),
        r);
    if (rc != CLI_OK)
        return rc;
    bool ok = (r[0]->type == REDIS_REPLY_STRING || r[0]->type == REDIS_REPLY_NIL) &&
              r[1]->type == REDIS_REPLY_INTEGER && r[2]->type == REDIS_REPLY_ARRAY &&
              cli_reply_is_hash(cli, r[2], status);
    if (!ok && r[2]->type == REDIS_REPLY_ARRAY)
        rc = CLI_SERVICE; /* cli_reply_is_hash reported it */
    else if (!ok)
        rc = cli_fail(CLI_SERVICE, "reading %s and %s: unexpected reply types", lease, status);
    if (rc == CLI_OK) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        json_t *fields = json_object();
        for (size_t i = 0; i + 1 < r[2]->elements; i += 2)
            json_object_set_new(
                fields, r[2]->element[i]->str,
                cli_json_strn(r[2]->element[i + 1]->str, r[2]->element[i + 1]->len));
        *out = json_pack(
            "{s:f, s:o, s:I, s:o}", "now", (double)ts.tv_sec + ts.tv_nsec / 1e9, "lease",
            r[0]->type == REDIS_REPLY_STRING ? cli_json_strn(r[0]->str, r[0]->len) : json_null(),
            "lease_ms", (json_int_t)(r[1]->integer > 0 ? r[1]->integer : 0), "status", fields);
    }
    for (int i = 0; i < 3; i++)
        freeReplyObject(r[i]);
    return rc;
}

int cli_live_read_health(cli_t *cli, json_t **out)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_HEALTH, NULL, 0, NULL);
    const char *argv[] = {"HGETALL", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r || !cli_reply_is_hash(cli, r, key)) {
        freeReplyObject(r);
        return CLI_SERVICE;
    }
    *out = hash_of_objects(r);
    freeReplyObject(r);
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* The services of a stack                                                  */
/* ------------------------------------------------------------------------ */

/* The stack's Converge::Service resources (only `only` when not NULL) as
 * [{"resource"}], in template order. */
static int service_resources(cli_t *cli, const char *name, const char *id, const char *only,
                             json_t **out)
{
    cli_def_t d;
    int rc = cli_def_read(cli, name, id, &d);
    json_t *resources = rc == CLI_OK ? cli_def_resources(&d) : NULL;
    cli_def_free(&d);
    if (rc != CLI_OK)
        return rc;
    json_t *list = json_array();
    const char *res;
    json_t *def;
    json_object_foreach(resources, res, def)
    {
        const char *type = json_string_value(json_object_get(def, "type"));
        if (type && strcmp(type, SERVICE_TYPE) == 0 && (!only || strcmp(only, res) == 0))
            json_array_append_new(list, json_pack("{s:s}", "resource", res));
    }
    if (only && json_array_size(list) == 0)
        rc =
            cli_fail(CLI_USAGE, "stack %s has no resource %s of type %s", name, only, SERVICE_TYPE);
    json_decref(resources);
    if (rc == CLI_OK)
        *out = list;
    else
        json_decref(list);
    return rc;
}

/* Adds "svc" (the physical id) to each entry; entries not created yet
 * have none and are dropped. */
static int service_ids(cli_t *cli, const char *id, json_t *list)
{
    size_t n = json_array_size(list);
    json_t *kept = json_array();
    int rc = CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        json_t *e = json_array_get(list, i);
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_RES, id, 0,
               json_string_value(json_object_get(e, "resource")));
        const char *argv[] = {"HGET", key, "physical_id"};
        redisReply *r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, argv, NULL);
        if (!r) {
            rc = CLI_SERVICE;
            break;
        }
        if (r->type == REDIS_REPLY_STRING && r->len > 0) {
            json_object_set_new(e, "svc", cli_json_strn(r->str, r->len));
            json_array_append(kept, e);
        }
        freeReplyObject(r);
    }
    json_array_clear(list);
    json_array_extend(list, kept);
    json_decref(kept);
    return rc;
}

int cli_live_stack_services(cli_t *cli, const char *name, const char *id, const char *only,
                            json_t **out)
{
    *out = NULL;
    int rc = service_resources(cli, name, id, only, out);
    if (rc == CLI_OK && (rc = service_ids(cli, id, *out)) != CLI_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}
