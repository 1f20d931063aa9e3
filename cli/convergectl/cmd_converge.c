/*
 * convergectl converge: re-checks a stack against its desired state now —
 * an UPDATE traversal with the stored definition unchanged. Resources whose
 * record matches the definition are no-ops; missing, failed or drifted ones
 * (as far as their record tells) are converged. Its services
 * (Converge::Service) are marked for one pass of the cluster loop, which
 * places again what drifted even when the stack does not converge drift
 * continuously (--no-converge-drift).
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

const char cli_converge_usage[] =
    "usage: convergectl converge NAME [--resource R] [--wait] [--timeout SEC]\n"
    "\n"
    "Re-checks the stack NAME against its stored definition now: an update to the\n"
    "same template and parameters. Unchanged resources are no-ops; missing and\n"
    "failed ones are converged (created, updated or replaced). Whatever is in\n"
    "progress is superseded. Its services (Converge::Service) get one pass of the\n"
    "cluster loop, which places again replicas of lost nodes and replicas that\n"
    "gave up (also for a stack submitted with --no-converge-drift).\n"
    "Prints 'stack NAME (ID) UPDATE_IN_PROGRESS'. Refused\n"
    "for a stack being deleted or whose delete failed, and for a nested stack\n"
    "(exit 2: its top stack is named).\n"
    "\n"
    "  --resource R   re-check the resource R (a resource of the stored template);\n"
    "                 the whole traversal runs all the same, every other unchanged\n"
    "                 resource being a no-op\n"
    "  --wait         wait until it settles; exit 0 when UPDATE_COMPLETE,\n"
    "                 1 otherwise, 4 on timeout\n"
    "  --timeout SEC  how long --wait waits (default 600; 0: no limit)\n"
    "  -h, --help     show this help\n";

static const cli_opt_t converge_opts[] = {CLI_HELP_OPT, CLI_RESOURCE_OPT, CLI_WAIT_OPT,
                                          CLI_TIMEOUT_OPT, CLI_OPTS_END};

static int check_request(const cli_stack_args_t *args, const cli_stack_t *s, const cli_def_t *d)
{
    if (strcmp(s->action, "DELETE") == 0)
        return cli_fail(CLI_USAGE,
                        "stack %s is %s: its desired state is deleted ('convergectl delete %s' "
                        "deletes it again, 'convergectl update %s --existing' keeps it)",
                        s->name, s->status, s->name, s->name);
    if (args->resource && !cli_def_has_resource(d, args->resource))
        return cli_fail(CLI_USAGE, "stack %s has no resource '%s' in its template", s->name,
                        args->resource);
    return CLI_OK;
}

/* Asks the cluster loop for one pass over each of the stack's services
 * (the service's `converge` field; cleared once reconciled). */
static int mark_services(cli_t *cli, const cli_stack_args_t *args, const char *id)
{
    json_t *svcs = NULL;
    int rc = cli_live_stack_services(cli, args->name, id, NULL, &svcs);
    size_t i;
    json_t *s;
    json_array_foreach(svcs, i, s)
    {
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, json_string_value(json_object_get(s, "svc")));
        const char *argv[] = {"HSET", key, "converge", "1"};
        redisReply *r =
            rc == CLI_OK ? cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 4, argv, NULL) : NULL;
        if (!r)
            rc = CLI_SERVICE;
        freeReplyObject(r);
    }
    json_decref(svcs);
    return rc;
}

static int converge(cli_t *cli, const cli_stack_args_t *args)
{
    cli_stack_t s;
    cli_def_t d = {0};
    int rc = cli_stack_find(cli, args->name, &s);
    if (rc == CLI_OK)
        rc = cli_stack_refuse_nested(cli, &s, args->name, "converge");
    if (rc == CLI_OK)
        rc = cli_def_read(cli, args->name, s.id, &d);
    if (rc == CLI_OK)
        rc = check_request(args, &s, &d);
    char retry[CV_NAME_MAX + 16];
    snprintf(retry, sizeof(retry), "converge %s", s.name);
    uint64_t traversal = 0;
    cli_begin_t b = {.started = &traversal,
                     .retry = retry,
                     .name = s.name, /* its own name, though given by its id */
                     .id = s.id,
                     .kind = CV_TRAV_UPDATE,
                     .template_json = d.template_text,
                     .params_json = d.params_text,
                     .fname = d.fname,
                     .rollback = ""};
    if (rc == CLI_OK)
        rc = mark_services(cli, args, s.id);
    if (rc == CLI_OK)
        rc = cli_traversal_start(cli, &b);
    if (rc == CLI_OK && args->wait)
        rc = cli_stack_follow(cli, s.id, args->timeout, "UPDATE", traversal);
    cli_def_free(&d);
    cli_stack_free(&s);
    return rc;
}

int cli_cmd_converge(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {converge_opts, cli_converge_usage, 600, converge};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}
