/*
 * convergectl — submits stacks to Converge and reports on them.
 *
 * Global options (where Redis and Kafka are, the key prefix), then one
 * command from the table below; each command parses its own options and
 * returns the exit code (cli_common.h).
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_command_t commands[] = {
    {"validate", "check a template and its parameters (no service contacted)", cli_validate_usage,
     cli_cmd_validate},
    {"submit", "create a stack from a template", cli_submit_usage, cli_cmd_submit},
    {"update", "give a stack a new definition (in any state)", cli_update_usage, cli_cmd_update},
    {"rollback", "roll a stack back to its last complete definition", cli_rollback_usage,
     cli_cmd_rollback},
    {"cancel", "cancel an update in progress and roll it back", cli_cancel_usage, cli_cmd_cancel},
    {"converge", "re-check a stack against its definition now", cli_converge_usage,
     cli_cmd_converge},
    {"observe", "have the observers look at a stack's resources now", cli_observe_usage,
     cli_cmd_observe},
    {"mark-unhealthy", "mark a resource CHECK_FAILED: the next update replaces it",
     cli_mark_unhealthy_usage, cli_cmd_mark_unhealthy},
    {"hook-clear", "clear the hook a resource waits on", cli_hook_clear_usage, cli_cmd_hook_clear},
    {"status", "show a stack's status, progress and outputs", cli_status_usage, cli_cmd_status},
    /* Read-side verbs. */
    {"list", "list the stacks, with status, progress and age", cli_list_usage, cli_cmd_list},
    {"output-show", "show one output of a stack (or all)", cli_output_show_usage,
     cli_cmd_output_show},
    {"template-show", "show a stack's stored template", cli_template_show_usage,
     cli_cmd_template_show},
    {"resource-show", "show one resource: properties, attributes, data, status",
     cli_resource_show_usage, cli_cmd_resource_show},
    {"resources", "list a stack's resources", cli_resources_usage, cli_cmd_resources},
    {"graph", "draw a stack's dependency graph (Graphviz dot or SVG)", cli_graph_usage,
     cli_cmd_graph},
    {"events", "list (and follow) a stack's events", cli_events_usage, cli_cmd_events},
    {"watch", "show a stack's progress until it settles", cli_watch_usage, cli_cmd_watch},
    {"delete", "delete a stack", cli_delete_usage, cli_cmd_delete},
    {"purge", "purge now the stacks deleted longer ago than a span", cli_purge_usage,
     cli_cmd_purge},
    {"rekey", "re-seal every stored secret with the key file's first key", cli_rekey_usage,
     cli_cmd_rekey},
    {"place", "dry-run placement of a service (no service contacted), or --explain a live one",
     cli_place_usage, cli_cmd_place},
    {"dead", "list the messages the workers dead-lettered, and why", cli_dead_usage, cli_cmd_dead},
    {"signal", "send a signal to a resource (wait condition handles)", cli_signal_usage,
     cli_cmd_signal},
    /* The cluster: nodes, replicas, health reports. */
    {"nodes", "list the cluster's nodes, or draw them (--map)", cli_nodes_usage, cli_cmd_nodes},
    {"node", "disable, enable or drain a node", cli_node_usage, cli_cmd_node},
    {"replicas", "list the replicas of a stack's services", cli_replicas_usage, cli_cmd_replicas},
    {"health", "show the cluster's health reports", cli_health_usage, cli_cmd_health},
    /* The cluster resource manager. */
    {"crm", "show the cluster resource manager: holder, phases, balance, moves", cli_crm_usage,
     cli_cmd_crm},
    {"report-load", "report a replica's load for its service's metrics", cli_report_load_usage,
     cli_cmd_report_load},
    {"rollout", "show, pause, resume or roll back a service's rolling update", cli_rollout_usage,
     cli_cmd_rollout},
    {"upgrade", "update a stack one upgrade domain at a time", cli_upgrade_usage, cli_cmd_upgrade},
    /* Kafka. */
    {"topics", "check, or --create, the Kafka topics Converge uses", cli_topics_usage,
     cli_cmd_topics},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_usage(void)
{
    printf("usage: convergectl [--redis URL] [--kafka BROKERS] [--kafka-opt K=V]... [--prefix P]\n"
           "                   COMMAND [ARGS]...\n"
           "\n"
           "Submits stacks to Converge and reports on them.\n"
           "\n"
           "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        printf("  %-14s %s\n", commands[i].name, commands[i].summary);
    printf("\n"
           "Global options:\n"
           "  --redis URL      Redis, redis://[USER@]HOST:PORT/DB\n"
           "                   (default $CONVERGE_REDIS, else redis://127.0.0.1:6379/0;\n"
           "                   password: first line of $CONVERGE_REDIS_PASSWORD_FILE; a\n"
           "                   cluster's announced addresses: $CONVERGE_REDIS_ADDRESS_MAP)\n"
           "  --kafka BROKERS  Kafka bootstrap brokers, HOST:PORT,...\n"
           "                   (default $CONVERGE_KAFKA, else 127.0.0.1:9092)\n"
           "  --kafka-opt K=V  a librdkafka setting; repeatable, after those of\n"
           "                   $CONVERGE_KAFKA_OPTS (comma-separated K=V)\n"
           "  --prefix P       prefix of every Redis key (default $CONVERGE_PREFIX, else cv:)\n"
           "  -h, --help       show this help\n"
           "\n"
           "A command's NAME is a stack's name (a nested stack's as 'list --nested'\n"
           "prints it, PARENT-RESOURCE-<12 hex>) or its id.\n"
           "\n"
           "Exit status: 0 success; 1 the stack ended FAILED or rolled back (place: a\n"
           "replica unplaced or the service rejected; node: no such node); 2 usage or\n"
           "validation error, or unknown stack (nothing stored); 3 cannot reach Redis or\n"
           "Kafka; 4 timed out.\n"
           "\n"
           "Run 'convergectl COMMAND --help' for the options of a command.\n");
}

static const cli_command_t *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

enum { OPT_REDIS, OPT_KAFKA, OPT_KAFKA_OPT, OPT_PREFIX, OPT_HELP };

static const cli_opt_t global_opts[] = {
    {OPT_REDIS, "--redis", NULL, true},         {OPT_KAFKA, "--kafka", NULL, true},
    {OPT_KAFKA_OPT, "--kafka-opt", NULL, true}, {OPT_PREFIX, "--prefix", NULL, true},
    {OPT_HELP, "--help", "-h", false},          {0, NULL, NULL, false},
};

/* librdkafka logs every failed broker connection on stderr, which would bury
 * the one line convergectl prints about it; quiet it by default, first, so
 * that a log_level in the environment or on the command line still wins. */
static int quiet_kafka_logs(cv_opts_t *o, char *errstr, size_t errstr_size)
{
    int n = o->nkafka_opts;
    int rc = cv_opts_add_kafka(o, "log_level=0", errstr, errstr_size);
    if (rc)
        return rc;
    char *quiet = o->kafka_opts[n];
    memmove(&o->kafka_opts[1], &o->kafka_opts[0], (size_t)n * sizeof(o->kafka_opts[0]));
    o->kafka_opts[0] = quiet;
    return 0;
}

static int apply_global(cli_t *cli, int id, const cli_args_t *a)
{
    char err[512];
    int rc = 0;
    switch (id) {
    case OPT_REDIS:
        rc = cv_opts_set_redis(&cli->opts, a->arg, err, sizeof(err));
        break;
    case OPT_KAFKA:
        if (!a->arg[0] || strlen(a->arg) >= sizeof(cli->opts.kafka))
            return cli_usage_error(NULL, "--kafka: expected HOST:PORT[,HOST:PORT...]");
        snprintf(cli->opts.kafka, sizeof(cli->opts.kafka), "%s", a->arg);
        break;
    case OPT_KAFKA_OPT:
        rc = cv_opts_add_kafka(&cli->opts, a->arg, err, sizeof(err));
        break;
    case OPT_PREFIX:
        if (strlen(a->arg) >= sizeof(cli->opts.prefix))
            return cli_usage_error(NULL, "--prefix: at most %zu characters",
                                   sizeof(cli->opts.prefix) - 1);
        snprintf(cli->opts.prefix, sizeof(cli->opts.prefix), "%s", a->arg);
        break;
    }
    return rc ? cli_usage_error(NULL, "%s", err) : CLI_OK;
}

/* Parses the global options up to the command; returns the index of the
 * command word in argv, 0 when --help was asked, or -CLI_USAGE. */
static int parse_global(cli_t *cli, int argc, char **argv)
{
    cli_args_t a;
    cli_args_init(&a, argc, argv, NULL);
    for (;;) {
        int id = cli_next(&a, global_opts);
        if (id == CLI_ARG_WORD)
            return a.i - 1;
        if (id == CLI_ARG_END)
            return -cli_usage_error(NULL, "no command given");
        if (id == CLI_ARG_BAD)
            return -CLI_USAGE;
        if (id == OPT_HELP)
            return 0;
        if (apply_global(cli, id, &a) != CLI_OK)
            return -CLI_USAGE;
    }
}

/* "help" and "help COMMAND" read like --help. */
static int run_help(int argc, char **argv)
{
    if (argc < 2) {
        print_usage();
        return CLI_OK;
    }
    const cli_command_t *cmd = find_command(argv[1]);
    if (!cmd)
        return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
    fputs(cmd->usage, stdout);
    return CLI_OK;
}

static int run(cli_t *cli, int argc, char **argv)
{
    char err[512];
    if (cv_opts_from_env(&cli->opts, err, sizeof(err)) != 0)
        return cli_usage_error(NULL, "%s", err);
    if (quiet_kafka_logs(&cli->opts, err, sizeof(err)) != 0)
        return cli_usage_error(NULL, "%s", err);
    int at = parse_global(cli, argc, argv);
    if (at == 0)
        print_usage();
    if (at <= 0)
        return -at;
    if (cv_keys_set_prefix(cli->opts.prefix) != 0)
        return cli_usage_error(NULL, "key prefix '%s' is too long", cli->opts.prefix);
    /* The events the CLI's scripts write keep the workers' bound. */
    const char *events_max = getenv("CONVERGE_MAX_EVENTS_PER_STACK");
    if (events_max && *events_max)
        cv_redis_set_events_max(strtol(events_max, NULL, 10));
    if (strcmp(argv[at], "help") == 0)
        return run_help(argc - at, argv + at);
    const cli_command_t *cmd = find_command(argv[at]);
    if (!cmd)
        return cli_usage_error(NULL, "unknown command '%s'", argv[at]);
    return cmd->run(cli, argc - at, argv + at);
}

int main(int argc, char **argv)
{
    cli_t cli;
    memset(&cli, 0, sizeof(cli));
    /* The library's warnings carry the detail behind a failure (why Kafka
     * refused a message); its progress logs are for workers. */
    cv_log_init("convergectl", CV_LOG_WARN);
    int rc = run(&cli, argc, argv);
    cli_close(&cli);
    return rc;
}
