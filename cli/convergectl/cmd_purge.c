/*
 * convergectl purge: purges now the stacks deleted longer ago than a span,
 * as `heat-manage purge_deleted AGE` does; the engines' reaper does the
 * same by itself once a deleted stack is older than their
 * --deleted-retention-s.
 *
 * The deleted stacks are those noted in <prefix>deleted (the worker that
 * finished a delete, or the reaper, notes each). Each is purged as the
 * reaper purges one (engine/convergence/cv_purge.c): its retired traversals swept
 * in bounded batches (traversal_sweep.lua), then every key of it in one
 * script (stack_purge.lua), which alone decides, on Redis' clock, whether
 * the stack is still DELETE_COMPLETE and old enough; then the id leaves
 * <prefix>deleted and its parent's `children`.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_purge_usage[] =
    "usage: convergectl purge --older-than D\n"
    "\n"
    "Purges now every stack deleted longer than D ago: its definition, events,\n"
    "status record, ledger, children and every other key of it are removed, as\n"
    "heat-manage purge_deleted does. The engines purge a deleted stack by themselves\n"
    "once it is older than their --deleted-retention-s (default a day). Only a stack\n"
    "whose delete completed (DELETE_COMPLETE) is purged: never one in progress,\n"
    "live, begun again, or whose resources' leases are still held. Prints one line\n"
    "per stack purged, 'purged stack NAME (ID), deleted 2h05m ago', then how many.\n"
    "\n"
    "  --older-than D  the age past which a deleted stack goes: a whole number with\n"
    "                  s, m, h or d (30s, 15m, 2h, 7d, 1h30m); 0s purges every\n"
    "                  deleted stack\n"
    "  -h, --help      show this help\n";

enum { OPT_OLDER_THAN = 200 };
#define SWEEP_BATCH "500" /* graph entries per traversal_sweep.lua call */
#define PAGE 200          /* ids read from <prefix>deleted at once */

static const cli_opt_t purge_opts[] = {
    CLI_HELP_OPT, {OPT_OLDER_THAN, "--older-than", NULL, true}, CLI_OPTS_END};

typedef struct purge_args {
    const char *older_than;
    long long age;
} purge_args_t;

typedef struct purge_count {
    long purged, kept, skipped; /* skipped: still in <prefix>deleted, not purged now */
} purge_count_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    purge_args_t *p = ctx;
    if (id == CLI_ARG_WORD)
        return cli_usage_error(a->cmd, "unexpected argument \"%s\"", a->arg);
    p->older_than = a->arg;
    if (cli_parse_duration(a->arg, &p->age) != 0)
        return cli_usage_error(a->cmd,
                               "--older-than \"%s\": expected a whole number with s, m, h or d "
                               "(30s, 2h, 7d), at most 100 years",
                               a->arg);
    return CLI_OK;
}

/* '<prefix>{<id>}:': what the scripts append a key's kind to. */
static void stack_prefix(char *buf, size_t size, const char *id)
{
    cv_key(buf, size, CV_KEY_STACK, id, 0, NULL);
    buf[strlen(buf) - strlen("stack")] = '\0';
}

/* traversal_sweep.lua until no retired traversal of the stack is left. */
static int sweep(cli_t *cli, const char *id, const char *prefix)
{
    char gc[CV_KEY_MAX], traversal[24] = "", cursor[64] = "0";
    cv_key(gc, sizeof(gc), CV_KEY_GC, id, 0, NULL);
    for (;;) {
        cv_traversal_sweep_keys_t keys = {.gc = gc};
        cv_traversal_sweep_args_t args = {
            .stack_prefix = prefix, .traversal = traversal, .cursor = cursor, .count = SWEEP_BATCH};
        redisReply *r = cli_redis_check(cli,
                                        cv_redis_script_sync(cli->redis, CV_SCRIPT_TRAVERSAL_SWEEP,
                                                             keys.v, args.v, 0, NULL, NULL),
                                        CLI_R(REDIS_REPLY_ARRAY), "traversal_sweep");
        if (!r)
            return CLI_SERVICE;
        cv_answer_t answer = cv_reply_answer(CV_SCRIPT_TRAVERSAL_SWEEP, r);
        snprintf(traversal, sizeof(traversal), "%s",
                 cv_reply_str(r, CV_TRAVERSAL_SWEEP_R_TRAVERSAL));
        snprintf(cursor, sizeof(cursor), "%s", cv_reply_str(r, CV_TRAVERSAL_SWEEP_R_CURSOR));
        freeReplyObject(r);
        if (answer == CV_ANSWER_DONE)
            return CLI_OK;
        if (answer != CV_ANSWER_AGAIN)
            return cli_fail(CLI_SERVICE, "traversal_sweep of stack %s: unexpected answer", id);
    }
}

/* Removes the global traces of a stack purged or no longer deleted. */
static int forget(cli_t *cli, const char *id, const char *parent)
{
    char deleted[CV_KEY_MAX], children[CV_KEY_MAX];
    cv_key(deleted, sizeof(deleted), CV_KEY_DELETED, NULL, 0, NULL);
    const char *zrem[] = {"ZREM", deleted, id};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 3, zrem, NULL);
    if (!r)
        return CLI_SERVICE;
    freeReplyObject(r);
    if (!parent || !parent[0])
        return CLI_OK;
    cv_key(children, sizeof(children), CV_KEY_CHILDREN, parent, 0, NULL);
    const char *srem[] = {"SREM", children, id};
    r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 3, srem, NULL);
    freeReplyObject(r);
    return r ? CLI_OK : CLI_SERVICE;
}

/* What stack_purge.lua answered for one stack, told and counted. */
static int on_answer(cli_t *cli, const char *id, const redisReply *r, purge_count_t *n)
{
    char ago[32];
    switch (cv_reply_answer(CV_SCRIPT_STACK_PURGE, r)) {
    case CV_ANSWER_OK:
        cli_format_duration(atof(cv_reply_str(r, CV_STACK_PURGE_R_SINCE)), ago, sizeof(ago));
        printf("purged stack %s (%s), deleted %s ago\n", cv_reply_str(r, CV_STACK_PURGE_R_NAME), id,
               ago);
        n->purged++;
        return forget(cli, id, cv_reply_str(r, CV_STACK_PURGE_R_PARENT));
    case CV_ANSWER_GONE:
    case CV_ANSWER_LIVE:
        return forget(cli, id, NULL);
    case CV_ANSWER_BUSY:
        printf("kept stack %s: the lease of its resource %s is held\n", id,
               cv_reply_str(r, CV_STACK_PURGE_R_RESOURCE));
        n->kept++;
        break;
    case CV_ANSWER_YOUNG:
    case CV_ANSWER_AGAIN: /* a traversal retired since the sweep: the next purge */
        break;
    default:
        return cli_fail(CLI_SERVICE, "stack_purge of stack %s: unexpected answer", id);
    }
    n->skipped++;
    return CLI_OK;
}

static int purge_one(cli_t *cli, const char *id, const char *age, purge_count_t *n)
{
    char prefix[CV_KEY_MAX], stack[CV_KEY_MAX], def[CV_KEY_MAX], gc[CV_KEY_MAX];
    stack_prefix(prefix, sizeof(prefix), id);
    int rc = sweep(cli, id, prefix);
    if (rc)
        return rc;
    cv_key(stack, sizeof(stack), CV_KEY_STACK, id, 0, NULL);
    cv_key(def, sizeof(def), CV_KEY_DEF, id, 0, NULL);
    cv_key(gc, sizeof(gc), CV_KEY_GC, id, 0, NULL);
    cv_stack_purge_keys_t keys = {.stack = stack, .def = def, .gc = gc};
    cv_stack_purge_args_t args = {.age = age, .stack_prefix = prefix};
    redisReply *r = cli_redis_check(
        cli, cv_redis_script_sync(cli->redis, CV_SCRIPT_STACK_PURGE, keys.v, args.v, 0, NULL, NULL),
        CLI_R(REDIS_REPLY_ARRAY), "stack_purge");
    if (!r)
        return CLI_SERVICE;
    rc = on_answer(cli, id, r, n);
    freeReplyObject(r);
    return rc;
}

/* A page of <prefix>deleted past the ids kept there (those purged or no
 * longer deleted left it). */
static redisReply *next_page(cli_t *cli, long offset)
{
    char key[CV_KEY_MAX], from[24], count[16];
    cv_key(key, sizeof(key), CV_KEY_DELETED, NULL, 0, NULL);
    snprintf(from, sizeof(from), "%ld", offset);
    snprintf(count, sizeof(count), "%d", PAGE);
    const char *argv[] = {"ZRANGEBYSCORE", key, "-inf", "+inf", "LIMIT", from, count};
    return cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 7, argv, NULL);
}

static int purge(cli_t *cli, const purge_args_t *p)
{
    int rc = cli_redis_connect(cli);
    char age[24];
    snprintf(age, sizeof(age), "%lld", p->age);
    purge_count_t n = {0};
    while (rc == CLI_OK) {
        redisReply *page = next_page(cli, n.skipped);
        if (!page)
            return CLI_SERVICE;
        size_t got = page->elements;
        for (size_t i = 0; i < got && rc == CLI_OK; i++) {
            if (page->element[i]->type == REDIS_REPLY_STRING && cli_valid_id(page->element[i]->str))
                rc = purge_one(cli, page->element[i]->str, age, &n);
            else
                n.skipped++; /* not an id: nothing of ours to purge */
        }
        freeReplyObject(page);
        if (got < PAGE)
            break;
    }
    if (rc == CLI_OK)
        printf("%ld deleted stack%s purged%s\n", n.purged, n.purged == 1 ? "" : "s",
               n.kept ? " (some kept: leases held)" : "");
    return rc;
}

int cli_cmd_purge(cli_t *cli, int argc, char **argv)
{
    purge_args_t p = {0};
    int rc = cli_parse_args(argc, argv, "purge", purge_opts, apply_opt, &p);
    if (rc == CLI_HELP) {
        fputs(cli_purge_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK && !p.older_than)
        rc = cli_usage_error("purge", "--older-than D is needed (e.g. --older-than 7d)");
    return rc == CLI_OK ? purge(cli, &p) : rc;
}
