/*
 * convergectl replicas STACK [SERVICE]: the replicas of a stack's
 * Converge::Service resources, where the placement put them and what their
 * agents report. A service resource's physical id is its service id
 * (docs/services.md); its {cluster}:svc:<svc> record has the placement and
 * the nodes' {cluster}:report:<node> hashes the processes.
 */
#include "cli_commands.h"
#include "cli_live.h"
#include "cli_output.h"
#include "cli_replview.h"
#include "cli_stack.h"
#include "cli_traversal.h"

#include "cv_keys.h"

#include <stdio.h>
#include <string.h>

#define SERVICE_TYPE "Converge::Service"

const char cli_replicas_usage[] =
    "usage: convergectl replicas STACK [SERVICE] [-o json]\n"
    "\n"
    "Lists the replicas of the Converge::Service resources of the stack STACK\n"
    "(a name, or the id of a nested stack), or of its resource SERVICE only:\n"
    "service, index, name, node, role (instance, primary, secondary), status\n"
    "(what the node's agent reports: starting, running, healthy, unhealthy,\n"
    "backoff, failed, stopping, stopped; 'assigned' before its first report,\n"
    "'unknown' while the node is down, 'unplaced' when no node can take it, with\n"
    "the constraints that eliminated the nodes), pid, restarts, health (ok,\n"
    "failing, pending), since (how long it has been in that state) and endpoint\n"
    "(address:port of its first port).\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: a list of {\"service\", \"svc\",\n"
    "                       \"index\", \"name\", \"rid\", \"node\", \"role\", \"status\",\n"
    "                       \"pid\", \"restarts\", \"health\", \"since\" (Unix s),\n"
    "                       \"endpoint\", \"endpoints\": {port name: \"addr:port\"},\n"
    "                       \"reason\"}\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 listed; 2 usage error, unknown stack, or SERVICE is no\n"
    "Converge::Service resource of it; 3 cannot reach Redis.\n";

static const cli_opt_t replicas_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_OPTS_END};

typedef struct replicas_args {
    const char *words[2]; /* the stack, the service */
    bool json;
} replicas_args_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    replicas_args_t *out = ctx;
    if (id == CLI_ARG_WORD)
        return cli_take_word(a, out->words, 2);
    if (id == CLI_OPT_OUTPUT)
        return cli_parse_output(a, &out->json);
    return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
}

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
        rc = cli_fail(CLI_USAGE, "stack %s has no resource %s of type %s", name, only,
                      SERVICE_TYPE);
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

static int read_model(cli_t *cli, const json_t *services, json_t **model)
{
    int rc = cli_live_read(cli, CLI_LIVE_NODES, model);
    if (rc != CLI_OK)
        return rc;
    json_t *svcs = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(services, i, s)
    {
        json_array_append(svcs, json_object_get(s, "svc"));
    }
    rc = cli_live_read_services(cli, svcs, json_object_get(*model, "services"));
    json_decref(svcs);
    return rc;
}

static int list(cli_t *cli, const replicas_args_t *p)
{
    char id[CV_ID_MAX];
    json_t *services = NULL, *model = NULL;
    int rc = cli_stack_resolve(cli, p->words[0], id);
    if (rc == CLI_OK)
        rc = service_resources(cli, p->words[0], id, p->words[1], &services);
    if (rc == CLI_OK)
        rc = service_ids(cli, id, services);
    if (rc == CLI_OK)
        rc = read_model(cli, services, &model);
    if (rc == CLI_OK) {
        json_t *rows = cli_replica_rows(model, services);
        if (p->json) {
            cli_print_json(rows);
        } else if (json_array_size(rows) == 0) {
            printf("No replicas: stack %s has no %s placed yet.\n", p->words[0],
                   p->words[1] ? p->words[1] : "service");
        } else {
            json_t *table =
                cli_replica_table(rows, json_number_value(json_object_get(model, "now")));
            cli_print_table(table);
            json_decref(table);
        }
        json_decref(rows);
    }
    json_decref(model);
    json_decref(services);
    return rc;
}

int cli_cmd_replicas(cli_t *cli, int argc, char **argv)
{
    replicas_args_t p = {{NULL, NULL}, false};
    int rc = cli_parse_args(argc, argv, "replicas", replicas_opts, apply_opt, &p);
    if (rc == CLI_HELP) {
        fputs(cli_replicas_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK && !p.words[0])
        rc = cli_usage_error("replicas", "no stack name given");
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    return rc == CLI_OK ? list(cli, &p) : rc;
}
