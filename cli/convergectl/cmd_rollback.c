/*
 * convergectl rollback and cancel: start a ROLLBACK traversal, which
 * converges the stack back to the last definition that reached *_COMPLETE
 * (none: an empty one, so everything is deleted, as after a failed create).
 * cancel is rollback restricted to a stack whose update is in progress, as
 * Heat's cancel-update: the running update is superseded and undone.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"

#include <stdio.h>
#include <string.h>

const char cli_rollback_usage[] =
    "usage: convergectl rollback NAME [--wait] [--timeout SEC]\n"
    "\n"
    "Rolls the stack NAME back to the last definition that reached *_COMPLETE,\n"
    "whatever its state: resources are converged back to it, those it does not\n"
    "have are deleted (when no definition ever completed, every resource is).\n"
    "Whatever is in progress is superseded. Prints 'stack NAME (ID)\n"
    "ROLLBACK_IN_PROGRESS'. Refused for a stack being deleted or whose delete\n"
    "failed, and for a nested stack (exit 2: its top stack is named).\n"
    "\n"
    "  --wait         wait until the rollback settles; exit 0 when\n"
    "                 ROLLBACK_COMPLETE, 1 otherwise, 4 on timeout\n"
    "  --timeout SEC  how long --wait waits (default 600; 0: no limit)\n"
    "  -h, --help     show this help\n";

const char cli_cancel_usage[] =
    "usage: convergectl cancel NAME [--wait] [--timeout SEC]\n"
    "\n"
    "Cancels the update in progress of the stack NAME and rolls it back, as\n"
    "rollback does: to the last definition that reached *_COMPLETE. Only a stack\n"
    "that is UPDATE_IN_PROGRESS can be cancelled (otherwise exit 2), and no\n"
    "nested stack (exit 2: its top stack is named). Prints 'stack NAME (ID)\n"
    "ROLLBACK_IN_PROGRESS'.\n"
    "\n"
    "  --wait         wait until the rollback settles; exit 0 when\n"
    "                 ROLLBACK_COMPLETE, 1 otherwise, 4 on timeout\n"
    "  --timeout SEC  how long --wait waits (default 600; 0: no limit)\n"
    "  -h, --help     show this help\n";

static const cli_opt_t rollback_opts[] = {CLI_HELP_OPT, CLI_WAIT_OPT, CLI_TIMEOUT_OPT,
                                          CLI_OPTS_END};

/* When no definition ever completed, the rollback deletes everything:
 * worth saying before it starts. */
static int warn_when_nothing_completed(cli_t *cli, const cli_stack_t *s)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_DEF, s->id, 0, NULL);
    const char *argv[] = {"HEXISTS", key, "complete_template"};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 3, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    if (r->integer == 0)
        fprintf(stderr,
                "convergectl: no definition of stack %s ever reached *_COMPLETE: the rollback "
                "deletes every resource\n",
                s->name);
    freeReplyObject(r);
    return CLI_OK;
}

static int check_state(const char *cmd, const cli_stack_t *s)
{
    if (strcmp(cmd, "cancel") == 0 && strcmp(s->status, "UPDATE_IN_PROGRESS") != 0)
        return cli_fail(CLI_USAGE, "stack %s is %s: nothing to cancel", s->name,
                        s->status[0] ? s->status : "without status");
    if (strcmp(s->action, "DELETE") == 0)
        return cli_fail(CLI_USAGE,
                        "stack %s is %s: a delete is not rolled back ('convergectl delete %s' "
                        "deletes it again, 'convergectl update %s --existing' keeps it)",
                        s->name, s->status, s->name, s->name);
    return CLI_OK;
}

static int roll_back(cli_t *cli, const cli_stack_args_t *args)
{
    cli_stack_t s;
    int rc = cli_stack_find(cli, args->name, &s);
    if (rc == CLI_OK)
        rc = cli_stack_refuse_nested(cli, &s, args->name, args->cmd);
    if (rc == CLI_OK)
        rc = check_state(args->cmd, &s);
    if (rc == CLI_OK)
        rc = warn_when_nothing_completed(cli, &s);
    char retry[CV_NAME_MAX + 16];
    snprintf(retry, sizeof(retry), "rollback %s", s.name);
    uint64_t traversal = 0;
    cli_begin_t b = {.started = &traversal,
                     .retry = retry,
                     .name = s.name, /* its own name, though given by its id */
                     .id = s.id,
                     .kind = CV_TRAV_ROLLBACK,
                     .template_json = "",
                     .params_json = "",
                     .fname = "",
                     .rollback = "",
                     .cancel = strcmp(args->cmd, "cancel") == 0};
    if (rc == CLI_OK)
        rc = cli_traversal_start(cli, &b);
    if (rc == CLI_OK && args->wait)
        rc = cli_stack_follow(cli, s.id, args->timeout, "ROLLBACK", traversal);
    cli_stack_free(&s);
    return rc;
}

int cli_cmd_rollback(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {rollback_opts, cli_rollback_usage, 600, roll_back};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}

int cli_cmd_cancel(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {rollback_opts, cli_cancel_usage, 600, roll_back};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}
