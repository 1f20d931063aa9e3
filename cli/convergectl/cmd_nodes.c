/*
 * convergectl nodes: the cluster's nodes as the live model in Redis has
 * them (docs/services.md): a table, JSON, or the FD × UD map.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_nodes_usage[] =
    "usage: convergectl nodes [-o json] [--map]\n"
    "\n"
    "Lists the cluster's nodes (registered by their converge-agent): name, node\n"
    "type, fault domain (FD), upgrade domain (UD), status (up while the node's\n"
    "heartbeat lives, else down; '/disabled' or '/draining' when an operator\n"
    "said so with 'convergectl node'), the replicas assigned to it, the load per\n"
    "metric against the node's capacity (the load its agent measured, else the\n"
    "sum of the loads its replicas declare) and its placement properties.\n"
    "\n"
    "  --map                draw the FD x UD grid instead: each cell lists its\n"
    "                       nodes with status, replicas and a load bar per metric\n"
    "                       ([#####.....]  50% MemoryMB 512/1024); when a cell\n"
    "                       holds more than 4 nodes, one line per node (status,\n"
    "                       replica count, its most loaded metric's bar); colours\n"
    "                       when the output is a terminal (NO_COLOR turns them off)\n"
    "  -o, --output FORMAT  text (default) or json: a list of {\"name\", \"type\",\n"
    "                       \"fault_domain\", \"upgrade_domain\", \"status\": \"up\"|\"down\",\n"
    "                       \"admin\": \"enabled\"|\"disabled\"|\"draining\", \"properties\",\n"
    "                       \"capacities\": {metric: n}, \"load\": {metric: n},\n"
    "                       \"load_source\": \"measured\"|\"declared\", \"replicas\": count,\n"
    "                       \"replica_list\": [{\"rid\", \"name\", \"role\", \"state\"}],\n"
    "                       \"agent\": {\"agent\" (host:pid:started), \"address\", \"ports\",\n"
    "                       \"last_seen\", \"fence_ms\", \"heartbeat_ms\" (how long the\n"
    "                       heartbeat still lives), \"replica_user\" (the user replicas\n"
    "                       run as), \"allow\" (the agent's --allow permissions)},\n"
    "                       \"isolation\": how the agent confines replicas:\n"
    "                       \"cgroup-v1\", \"cgroup-v2\", \"rlimits\", \"simulated\" or\n"
    "                       \"unknown\" (docs/security.md); also the table's last column}\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 listed (also when there are no nodes); 2 usage error;\n"
    "3 cannot reach Redis.\n";

enum { OPT_MAP = 200 };

static const cli_opt_t nodes_opts[] = {
    CLI_HELP_OPT,
    CLI_OUTPUT_OPT,
    {OPT_MAP, "--map", NULL, false},
    CLI_OPTS_END,
};

typedef struct nodes_args {
    bool json, map;
} nodes_args_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    nodes_args_t *out = ctx;
    switch (id) {
    case CLI_OPT_OUTPUT:
        return cli_parse_output(a, &out->json);
    case OPT_MAP:
        out->map = true;
        return CLI_OK;
    default:
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
    }
}

static bool want_colour(void)
{
    const char *no = getenv("NO_COLOR");
    return isatty(STDOUT_FILENO) && !(no && no[0]);
}

/* Under the map: each metric's balance before and after the last
 * balancing pass, when the cluster resource manager wrote one. */
static int show_balance(cli_t *cli)
{
    json_t *raw = NULL;
    int rc = cli_live_read_crm(cli, &raw);
    if (rc != CLI_OK)
        return rc;
    json_t *doc = cli_crm_doc(raw);
    char *text = cli_crm_balance_text(doc, json_number_value(json_object_get(raw, "now")));
    if (text)
        fputs(text, stdout);
    free(text);
    json_decref(doc);
    json_decref(raw);
    return CLI_OK;
}

static int show(cli_t *cli, const nodes_args_t *p)
{
    json_t *model = NULL;
    int rc = cli_live_read(cli, CLI_LIVE_NODES, &model);
    if (rc != CLI_OK)
        return rc;
    json_t *rows = cli_nodes_rows(model);
    if (p->json) {
        cli_print_json(rows);
    } else if (p->map) {
        char *text = cli_nodes_map(rows, want_colour());
        if (text)
            fputs(text, stdout);
        else
            rc = cli_fail(CLI_SERVICE, "nodes: out of memory");
        free(text);
        if (rc == CLI_OK)
            rc = show_balance(cli);
    } else if (json_array_size(rows) == 0) {
        printf("No nodes: no converge-agent has registered one (deploy/local/up.sh --nodes N).\n");
    } else {
        json_t *table = cli_nodes_table(rows);
        cli_print_table(table);
        json_decref(table);
    }
    json_decref(rows);
    json_decref(model);
    return rc;
}

int cli_cmd_nodes(cli_t *cli, int argc, char **argv)
{
    nodes_args_t p = {false, false};
    int rc = cli_parse_args(argc, argv, "nodes", nodes_opts, apply_opt, &p);
    if (rc == CLI_HELP) {
        fputs(cli_nodes_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    return rc == CLI_OK ? show(cli, &p) : rc;
}
