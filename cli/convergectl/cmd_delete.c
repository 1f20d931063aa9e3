/*
 * convergectl delete: starts a DELETE traversal of a stack and publishes
 * its STACK job; with --wait, follows it to DELETE_COMPLETE.
 *
 * The id is resolved once: when the delete completes the workers remove the
 * name, while the stack hash stays, so the wait polls by id.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"

#include <stdio.h>
#include <string.h>

const char cli_delete_usage[] =
    "usage: convergectl delete NAME|ID [--wait] [--timeout SEC]\n"
    "\n"
    "Deletes the stack NAME (or the stack with id ID): every resource is deleted,\n"
    "dependents first; the name is released when that completes. Prints 'stack\n"
    "NAME (ID) DELETE_IN_PROGRESS'. A nested stack is deleted with its parent\n"
    "resource, not on its own: naming one is refused (exit 2), with the command\n"
    "that deletes its top stack.\n"
    "\n"
    "  --wait         wait until the delete settles; exit 0 when DELETE_COMPLETE,\n"
    "                 1 when DELETE_FAILED (or superseded), 4 on timeout\n"
    "  --timeout SEC  how long --wait waits (default 600; 0: no limit)\n"
    "  -h, --help     show this help\n";

static const cli_opt_t delete_opts[] = {CLI_HELP_OPT, CLI_WAIT_OPT, CLI_TIMEOUT_OPT, CLI_OPTS_END};

/* Runs a command; whether its reply had one of `types` (kept in *out). */
static bool run(cli_t *cli, unsigned types, int argc, const char **argv, redisReply **out)
{
    redisReply *r = cli_redis_argv(cli, types, argc, argv, NULL);
    if (out)
        *out = r;
    else
        freeReplyObject(r);
    return r != NULL;
}

/* A name whose stack has no record is what a purge of the stack's keys
 * leaves (or a submit of an older convergectl, interrupted between
 * reserving the name and storing the stack; submit now stores first).
 * Release it, unless the name changed meanwhile (stack_unname.lua is a
 * compare-and-delete). The name and the record are in different Redis
 * Cluster slots, so no transaction can hold both; a record of this id
 * cannot come back, since an id is never reused. */
static int release_orphan_name(cli_t *cli, const char *name, const char *id)
{
    char skey[CV_KEY_MAX];
    cv_key(skey, sizeof(skey), CV_KEY_STACK, id, 0, NULL);
    const char *exists[] = {"EXISTS", skey};
    redisReply *e = NULL;
    if (!run(cli, CLI_R(REDIS_REPLY_INTEGER), 2, exists, &e))
        return CLI_SERVICE;
    bool orphan = e->integer == 0;
    freeReplyObject(e);
    bool released = false;
    if (orphan && cli_stack_unname(cli, name, id, &released) != CLI_OK)
        return CLI_SERVICE;
    if (!released)
        return cli_fail(CLI_USAGE, "stack %s changed while being deleted; try again", name);
    printf("stack %s (%s) had no status record (its submit was interrupted); its name is "
           "released\n",
           name, id);
    return CLI_OK;
}

/* stack_begin DELETE: *traversal is the new traversal; *orphan tells that
 * the stack has no record. */
static int begin_delete(cli_t *cli, const char *name, const char *id, uint64_t *traversal,
                        bool *orphan)
{
    cv_stack_begin_t b = {.kind = CV_TRAV_DELETE, .stack = id, .name = name, .rollback = "0"};
    redisReply *r = cli_begin_script(cli, &b);
    *orphan = r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "ENOENT", 6) == 0;
    if (!*orphan)
        return cli_begin_traversal(cli, r, traversal);
    freeReplyObject(r);
    return CLI_OK;
}

static int delete_stack(cli_t *cli, const cli_stack_args_t *args)
{
    char id[CV_ID_MAX], name[CV_NAME_MAX];
    uint64_t traversal = 0;
    bool orphan = false;
    int rc = cli_stack_resolve_top_level(cli, args->name, "delete", id, name);
    if (rc == CLI_OK)
        rc = cli_kafka_connect(cli);
    if (rc == CLI_OK)
        rc = begin_delete(cli, name, id, &traversal, &orphan);
    if (rc)
        return rc;
    if (orphan)
        return release_orphan_name(cli, name, id);
    if (cli_publish_stack(cli, id, traversal, CV_TRAV_DELETE) != CLI_OK)
        return cli_fail(CLI_SERVICE,
                        "stack %s is DELETE_IN_PROGRESS but no worker was told; run delete "
                        "again once Kafka is back",
                        name);
    printf("stack %s (%s) DELETE_IN_PROGRESS\n", name, id);
    fflush(stdout);
    return args->wait ? cli_stack_follow(cli, id, args->timeout, "DELETE", traversal) : CLI_OK;
}

int cli_cmd_delete(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {delete_opts, cli_delete_usage, 600, delete_stack};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}
