/*
 * convergectl health: the cluster's health reports ({cluster}:health,
 * docs/services.md), Error first.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

const char cli_health_usage[] =
    "usage: convergectl health [-o json]\n"
    "\n"
    "Shows the health reports of the cluster (Service Fabric's: capacity\n"
    "overruns, constraint and domain violations, unplaceable replicas,\n"
    "blocklisted nodes, crash loops, nodes down), sorted by state (Error,\n"
    "Warning, Ok), then source and property. A report whose time to live has\n"
    "passed is hidden when it is to be removed on expiry, and otherwise shown\n"
    "as an Error marked (expired), as Service Fabric does.\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: a list of {\"source\",\n"
    "                       \"property\", \"state\", \"description\", \"timeToLive\",\n"
    "                       \"removeWhenExpired\", \"time\", \"expired\"}\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 shown (whatever the states); 2 usage error; 3 cannot reach\n"
    "Redis.\n";

static const cli_opt_t health_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_OPTS_END};

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    if (id == CLI_OPT_OUTPUT)
        return cli_parse_output(a, ctx);
    return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
}

static int show(cli_t *cli, bool json)
{
    json_t *reports = NULL;
    int rc = cli_live_read_health(cli, &reports);
    if (rc != CLI_OK)
        return rc;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    json_t *rows = cli_health_rows(reports, now);
    if (json) {
        cli_print_json(rows);
    } else if (json_array_size(rows) == 0) {
        printf("No health reports.\n");
    } else {
        json_t *table = cli_health_table(rows, now);
        cli_print_table(table);
        json_decref(table);
    }
    json_decref(rows);
    json_decref(reports);
    return CLI_OK;
}

int cli_cmd_health(cli_t *cli, int argc, char **argv)
{
    bool json = false;
    int rc = cli_parse_args(argc, argv, "health", health_opts, apply_opt, &json);
    if (rc == CLI_HELP) {
        fputs(cli_health_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    return rc == CLI_OK ? show(cli, json) : rc;
}
