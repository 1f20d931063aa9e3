/*
 * convergectl replicas STACK [SERVICE]: the replicas of a stack's
 * Converge::Service resources, where the placement put them and what their
 * agents report. A service resource's physical id is its service id
 * (docs/services.md); its {cluster}:svc:<svc> record has the placement and
 * the nodes' {cluster}:report:<node> hashes the processes.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include <stdio.h>
#include <string.h>

const char cli_replicas_usage[] =
    "usage: convergectl replicas STACK [SERVICE] [-o json]\n"
    "\n"
    "Lists the replicas of the Converge::Service resources of the stack STACK\n"
    "(a name, or the id of a nested stack), or of its resource SERVICE only:\n"
    "service, index, name, node, role (instance, primary, secondary), status\n"
    "(what the node's agent reports: starting, running, healthy, unhealthy,\n"
    "backoff, failed, stopping, stopped; 'assigned' before its first report,\n"
    "'node_down' while the node is down, 'outdated' while the agent still runs\n"
    "an older process spec, 'unplaced' when no node can take it, with\n"
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
        rc = cli_live_stack_services(cli, p->words[0], id, p->words[1], &services);
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
