/*
 * convergectl crm: the cluster resource manager (docs/crm.md) as Redis
 * holds it — the lease {cluster}:crm says which process holds the role,
 * {cluster}:crm:status what it did last. The view is cli_crmview.h's.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_crm_usage[] =
    "usage: convergectl crm [-o json]\n"
    "       convergectl crm settings [FILE | --clear] [-o json]\n"
    "\n"
    "Shows the cluster resource manager (docs/crm.md): which process holds the\n"
    "role (the lease {cluster}:crm, '<worker id>:<epoch>') and for how long; the\n"
    "last run of each phase (refresh, placement, constraint check, balancing):\n"
    "how long ago, how many ms it took, how many moves it made; the balance of\n"
    "each metric per node type (or over the whole cluster) at the last balancing\n"
    "pass: most and least loaded node, their ratio against the balancing\n"
    "threshold, the activity threshold, the strategy (balance or defrag),\n"
    "whether it is imbalanced and the ratio once the pass's moves are made; the\n"
    "moves made and throttled in the current throttle window; and why nothing\n"
    "moved though something is out of balance. Fields of {cluster}:crm:status\n"
    "that cannot be read are named, never fatal. `crm settings` sets the\n"
    "manager's settings over the cluster file's (convergectl crm settings --help).\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: {\"holder\", \"epoch\", \"lease_ms\",\n"
    "                       \"status\" (false while no status was written),\n"
    "                       \"status_holder\", \"status_epoch\", \"since\", \"refresh\",\n"
    "                       \"placement\", \"constraint\", \"balancing\" ({\"at\", \"ms\",\n"
    "                       \"moves\"}), \"imbalance\", \"window\", \"why\", \"state\",\n"
    "                       \"errors\": {field: why it could not be read}}\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 shown (also when no process holds the role); 2 usage error;\n"
    "3 cannot reach Redis.\n";

static const cli_opt_t crm_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_OPTS_END};

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    if (id == CLI_OPT_OUTPUT)
        return cli_parse_output(a, ctx);
    return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
}

static int show(cli_t *cli, bool json)
{
    json_t *raw = NULL;
    int rc = cli_live_read_crm(cli, &raw);
    if (rc != CLI_OK)
        return rc;
    json_t *doc = cli_crm_doc(raw);
    if (json) {
        cli_print_json(doc);
    } else {
        char *text = cli_crm_text(doc, json_number_value(json_object_get(raw, "now")));
        if (text)
            fputs(text, stdout);
        else
            rc = cli_fail(CLI_SERVICE, "crm: out of memory");
        free(text);
    }
    json_decref(doc);
    json_decref(raw);
    return rc;
}

int cli_cmd_crm(cli_t *cli, int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "settings") == 0)
        return cli_cmd_crm_settings(cli, argc - 1, argv + 1);
    bool json = false;
    int rc = cli_parse_args(argc, argv, "crm", crm_opts, apply_opt, &json);
    if (rc == CLI_HELP) {
        fputs(cli_crm_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    return rc == CLI_OK ? show(cli, json) : rc;
}
