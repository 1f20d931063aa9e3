/*
 * convergectl delete: starts a DELETE traversal of a stack and publishes
 * its STACK job; with --wait, follows it to DELETE_COMPLETE.
 *
 * The id is resolved once: when the delete completes the workers remove the
 * name, while the stack hash stays, so the wait polls by id.
 */
#include "cli_commands.h"
#include "cli_stack.h"
#include "cli_traversal.h"

#include "cv_keys.h"

#include <stdio.h>
#include <string.h>

const char cli_delete_usage[] =
    "usage: convergectl delete NAME [--wait] [--timeout SEC]\n"
    "\n"
    "Deletes the stack NAME: every resource is deleted, dependents first; the name\n"
    "is released when that completes. Prints 'stack NAME (ID) DELETE_IN_PROGRESS'.\n"
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
 * Release it, unless the name or the record changes meanwhile (WATCH
 * makes EXEC fail then). */
static int release_orphan_name(cli_t *cli, const char *name, const char *id)
{
    char names[CV_KEY_MAX], skey[CV_KEY_MAX];
    cv_key(names, sizeof(names), CV_KEY_STACKS, NULL, 0, NULL);
    cv_key(skey, sizeof(skey), CV_KEY_STACK, id, 0, NULL);
    const char *watch[] = {"WATCH", names, skey}, *get[] = {"HGET", names, name},
               *exists[] = {"EXISTS", skey}, *multi[] = {"MULTI"}, *hdel[] = {"HDEL", names, name},
               *exec[] = {"EXEC"};
    redisReply *g = NULL, *e = NULL, *x = NULL;
    bool ok = run(cli, CLI_R(REDIS_REPLY_STATUS), 3, watch, NULL) &&
              run(cli, CLI_R_STRING_OR_NIL, 3, get, &g) &&
              run(cli, CLI_R(REDIS_REPLY_INTEGER), 2, exists, &e);
    bool orphan = ok && g->type == REDIS_REPLY_STRING && strcmp(g->str, id) == 0 && e->integer == 0;
    if (orphan)
        ok = run(cli, CLI_R(REDIS_REPLY_STATUS), 1, multi, NULL) &&
             run(cli, CLI_R(REDIS_REPLY_STATUS), 3, hdel, NULL) &&
             run(cli, CLI_R(REDIS_REPLY_ARRAY) | CLI_R(REDIS_REPLY_NIL), 1, exec, &x);
    bool released = ok && orphan && x->type == REDIS_REPLY_ARRAY;
    freeReplyObject(g);
    freeReplyObject(e);
    freeReplyObject(x);
    if (!ok)
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
    char id[CV_ID_MAX];
    uint64_t traversal = 0;
    bool orphan = false;
    int rc = cli_lookup(cli, args->name, id);
    if (rc == CLI_OK)
        rc = cli_kafka_connect(cli);
    if (rc == CLI_OK)
        rc = begin_delete(cli, args->name, id, &traversal, &orphan);
    if (rc)
        return rc;
    if (orphan)
        return release_orphan_name(cli, args->name, id);
    if (cli_publish_stack(cli, id, traversal, CV_TRAV_DELETE) != CLI_OK)
        return cli_fail(CLI_SERVICE,
                        "stack %s is DELETE_IN_PROGRESS but no worker was told; run delete "
                        "again once Kafka is back",
                        args->name);
    printf("stack %s (%s) DELETE_IN_PROGRESS\n", args->name, id);
    fflush(stdout);
    return args->wait ? cli_stack_follow(cli, id, args->timeout, "DELETE") : CLI_OK;
}

int cli_cmd_delete(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {delete_opts, cli_delete_usage, 600, delete_stack};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}
