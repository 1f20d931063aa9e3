/*
 * The live-cluster checks of Converge::Service resources at submit and
 * update (cli_service.h): one round trip reads the cluster's settings and
 * nodes; the rule is the engine's (cv_service_unknown_metric).
 */
#include "cli_service.h"

#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <string.h>

/* {"metrics": [{"name"}, ...]}: the literal metric names of a service's
 * properties (one given by a function is checked by the engine). */
static json_t *named_metrics(const json_t *props)
{
    json_t *spec = json_pack("{s:[]}", "metrics");
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(props, "metrics"), i, m)
    {
        const json_t *name = json_object_get(m, "name");
        json_array_append_new(
            json_object_get(spec, "metrics"),
            json_pack("{s:s}", "name", json_is_string(name) ? json_string_value(name) : ""));
    }
    return spec;
}

static int check_one(const char *fname, const char *resource, const json_t *props,
                     const json_t *settings, const json_t *nodes)
{
    json_t *spec = named_metrics(props);
    const char *unknown = cv_service_unknown_metric(spec, settings, nodes);
    int rc = CLI_OK;
    size_t i;
    const json_t *m;
    json_array_foreach(unknown ? json_object_get(spec, "metrics") : NULL, i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        if (name[0] && strcmp(name, unknown) == 0) {
            rc = cli_fail(CLI_USAGE,
                          "%s: resources.%s.properties.metrics[%zu].name: unknown metric \"%s\": "
                          "no node or node type of the cluster has a capacity of that name",
                          fname, resource, i, name);
            break;
        }
    }
    json_decref(spec);
    return rc;
}

/* The cluster's settings (NULL: none) and node descriptions. */
static int read_cluster(cli_t *cli, json_t **settings, json_t **nodes)
{
    char skey[CV_KEY_MAX], nkey[CV_KEY_MAX];
    cv_key(skey, sizeof(skey), CV_KEY_SETTINGS, NULL, 0, NULL);
    cv_key(nkey, sizeof(nkey), CV_KEY_NODES, NULL, 0, NULL);
    cli_redis_cmd_t cmds[] = {{2, {"GET", skey}}, {2, {"HVALS", nkey}}};
    redisReply *replies[2];
    int rc =
        cli_redis_pipeline(cli, 2, cmds, CLI_R_STRING_OR_NIL | CLI_R(REDIS_REPLY_ARRAY), replies);
    if (rc != CLI_OK)
        return rc;
    *settings =
        replies[0]->type == REDIS_REPLY_STRING ? json_loads(replies[0]->str, 0, NULL) : NULL;
    *nodes = json_array();
    for (size_t i = 0; replies[1]->type == REDIS_REPLY_ARRAY && i < replies[1]->elements; i++) {
        const redisReply *e = replies[1]->element[i];
        json_t *n = e->type == REDIS_REPLY_STRING ? json_loads(e->str, 0, NULL) : NULL;
        if (n)
            json_array_append_new(*nodes, n);
    }
    freeReplyObject(replies[0]);
    freeReplyObject(replies[1]);
    return CLI_OK;
}

static bool has_service(const json_t *resources)
{
    const char *name;
    const json_t *r;
    json_object_foreach((json_t *)resources, name, r)
    {
        if (cv_service_is(json_string_value(json_object_get(r, "type"))))
            return true;
    }
    return false;
}

static int check_all(const json_t *tree, const char *fname, const json_t *settings,
                     const json_t *nodes)
{
    int rc = CLI_OK;
    const char *name;
    const json_t *r;
    json_object_foreach(json_object_get(tree, "resources"), name, r)
    {
        if (rc == CLI_OK && cv_service_is(json_string_value(json_object_get(r, "type"))))
            rc = check_one(fname, name, json_object_get(r, "properties"), settings, nodes);
    }
    return rc;
}

int cli_service_check(cli_t *cli, const json_t *tree, const char *fname)
{
    if (!has_service(json_object_get(tree, "resources")))
        return CLI_OK;
    json_t *settings = NULL, *nodes = NULL;
    int rc = read_cluster(cli, &settings, &nodes);
    if (rc == CLI_OK)
        rc = check_all(tree, fname, settings, nodes);
    json_decref(settings);
    json_decref(nodes);
    return rc;
}

int cli_service_check_manifest(const json_t *tree, const char *fname, const json_t *manifest)
{
    json_t *settings = json_deep_copy(manifest);
    json_object_del(settings, "nodes");
    json_t *nodes = json_object_get(manifest, "nodes");
    int rc = check_all(tree, fname, settings, json_is_array(nodes) ? nodes : NULL);
    json_decref(settings);
    return rc;
}
