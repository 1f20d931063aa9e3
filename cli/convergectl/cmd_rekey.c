/*
 * convergectl rekey: re-seals every value stored sealed (encryption at
 * rest, cv_seal.h) with the key file's current key, the step of a rotation
 * between putting the new key first in the key file and removing the old
 * one (docs/security.md "Encryption at rest").
 *
 * It first checks that every live worker seals with the current key (its
 * liveness record's `seal_key`): a worker still sealing with the old key
 * would write values that the old key's removal makes unreadable. Then it
 * scans every hash of every stack (`<prefix>{<id>}:*`, on each Redis
 * Cluster master) and rewrites each field holding a token of another key
 * with seal_swap.lua, a compare-and-set: a worker's write in between
 * already sealed with the current key, and stands. Fields a worker changed
 * meanwhile are read again, until none is left.
 */
#include "cli_commands.h"

#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_rekey_usage[] =
    "usage: convergectl rekey\n"
    "\n"
    "Re-seals every secret stored sealed in Redis (hidden parameters' values,\n"
    "resource properties and attributes: encryption at rest) with the first key of\n"
    "the key file CONVERGE_SECRET_KEY_FILE, so that the keys after it can be removed.\n"
    "Refuses, changing nothing, while a live worker seals with another key (workers\n"
    "read their key file within a second of a change; a worker's record shows its\n"
    "key in seal_key). Prints how many values were re-sealed in how many keys.\n"
    "Rotation (docs/security.md): put the new key first in the key file, run\n"
    "convergectl rekey, then remove the old key.\n"
    "\n"
    "  -h, --help      show this help\n";

#define MASTERS_MAX 64
#define SCAN_COUNT "500"

static const cli_opt_t rekey_opts[] = {CLI_HELP_OPT, CLI_OPTS_END};

typedef struct rekey_count {
    long values, keys, retried;
} rekey_count_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    (void)ctx;
    (void)id;
    return cli_usage_error(a->cmd, "unexpected argument \"%s\"", a->arg);
}

typedef int (*key_fn)(cli_t *cli, redisContext *c, const char *key, void *ud);

/* SCAN of one master for `pattern` (of `type`), calling fn for each key. */
static int scan_master(cli_t *cli, redisContext *c, const char *pattern, const char *type,
                       key_fn fn, void *ud)
{
    char cursor[32] = "0";
    do {
        redisReply *r =
            redisCommand(c, "SCAN %s MATCH %s COUNT %s TYPE %s", cursor, pattern, SCAN_COUNT, type);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING) {
            int rc = cli_fail(
                CLI_SERVICE, "SCAN %s: %s", pattern,
                r && r->type == REDIS_REPLY_ERROR ? r->str : (c->err ? c->errstr : "no reply"));
            if (r)
                freeReplyObject(r);
            return rc;
        }
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        const redisReply *keys = r->element[1];
        int rc = CLI_OK;
        for (size_t i = 0; rc == CLI_OK && i < keys->elements; i++)
            if (keys->element[i]->type == REDIS_REPLY_STRING)
                rc = fn(cli, c, keys->element[i]->str, ud);
        freeReplyObject(r);
        if (rc)
            return rc;
    } while (strcmp(cursor, "0") != 0);
    return CLI_OK;
}

static int scan_all(cli_t *cli, const char *pattern, const char *type, key_fn fn, void *ud)
{
    redisContext *masters[MASTERS_MAX];
    int n = cv_redis_sync_masters(cli->redis, masters, MASTERS_MAX);
    if (n < 0)
        return cli_fail(CLI_SERVICE, "redis: %s", cv_redis_sync_error(cli->redis));
    for (int i = 0; i < n; i++) {
        int rc = scan_master(cli, masters[i], pattern, type, fn, ud);
        if (rc)
            return rc;
    }
    return CLI_OK;
}

/* A live worker sealing with another key than ours is refused. */
static int check_worker(cli_t *cli, redisContext *c, const char *key, void *ud)
{
    (void)c;
    (void)ud;
    const char *argv[] = {"HGET", key, "seal_key"};
    redisReply *r =
        cli_redis_argv(cli, CLI_R(REDIS_REPLY_STRING) | CLI_R(REDIS_REPLY_NIL), 3, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    const char *ours = cv_keyring_current(cv_seal_ring());
    const char *theirs = r->type == REDIS_REPLY_STRING ? r->str : "";
    int rc = strcmp(theirs, ours) == 0 || r->type == REDIS_REPLY_NIL
                 ? CLI_OK
                 : cli_fail(CLI_FAILED,
                            "worker %s seals with %s%s, not with key %s (the first of the "
                            "key file): is its key file this one? Workers read theirs within "
                            "a second of a change. Nothing was re-sealed",
                            key, theirs[0] ? "key " : "no key", theirs, ours);
    freeReplyObject(r);
    return rc;
}

/* Re-seals the sealed values of one hash field by field. */
static int reseal_hash(cli_t *cli, redisContext *c, const char *key, void *ud)
{
    (void)c;
    rekey_count_t *n = ud;
    const char *argv[] = {"HGETALL", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    int rc = CLI_OK;
    bool changed = false;
    for (size_t i = 0; rc == CLI_OK && i + 1 < r->elements; i += 2) {
        const redisReply *f = r->element[i], *v = r->element[i + 1];
        char *fresh = NULL, why[512];
        if (v->type != REDIS_REPLY_STRING || !cv_sealed_in(v->str, v->len))
            continue;
        if (cv_reseal(v->str, v->len, &fresh, why, sizeof(why)) != 0) {
            rc = cli_fail(CLI_FAILED, "%s field %s: %s", key, f->str, why);
            break;
        }
        if (!fresh)
            continue;
        cv_seal_swap_keys_t k = {.hash = key};
        cv_seal_swap_args_t a = {.field = f->str, .expected = v->str, .value = fresh};
        redisReply *s = cli_redis_check(
            cli, cv_redis_script_sync(cli->redis, CV_SCRIPT_SEAL_SWAP, k.v, a.v, 0, NULL, NULL),
            CLI_R(REDIS_REPLY_INTEGER), "seal_swap");
        free(fresh);
        if (!s) {
            rc = CLI_SERVICE;
            break;
        }
        if (s->integer == 1) {
            n->values++;
            changed = true;
        } else {
            n->retried++; /* written meanwhile: the next pass reads it again */
        }
        freeReplyObject(s);
    }
    freeReplyObject(r);
    n->keys += changed;
    return rc;
}

static int rekey(cli_t *cli)
{
    if (!cv_seal_enabled())
        return cli_fail(CLI_USAGE, "rekey needs the key file: set CONVERGE_SECRET_KEY_FILE");
    int rc = cli_redis_connect(cli);
    if (rc)
        return rc;
    char workers[CV_KEY_MAX], stacks[CV_KEY_MAX];
    cv_key(workers, sizeof(workers), CV_KEY_WORKER, NULL, 0, "*");
    /* '<prefix>{*}:stack' made '<prefix>{*}:*': every key of every stack */
    cv_key(stacks, sizeof(stacks), CV_KEY_STACK, "*", 0, NULL);
    strcpy(stacks + strlen(stacks) - strlen("stack"), "*");
    rc = scan_all(cli, workers, "hash", check_worker, NULL);
    rekey_count_t total = {0};
    for (int pass = 0; rc == CLI_OK; pass++) {
        rekey_count_t n = {0};
        rc = scan_all(cli, stacks, "hash", reseal_hash, &n);
        total.values += n.values;
        total.keys += n.keys;
        if (rc || n.retried == 0)
            break;
        if (pass == 10)
            return cli_fail(CLI_FAILED, "%ld values kept changing under 10 passes: run rekey again",
                            n.retried);
    }
    if (rc == CLI_OK)
        printf("re-sealed %ld value%s in %ld key%s with key %s\n", total.values,
               total.values == 1 ? "" : "s", total.keys, total.keys == 1 ? "" : "s",
               cv_keyring_current(cv_seal_ring()));
    return rc;
}

int cli_cmd_rekey(cli_t *cli, int argc, char **argv)
{
    int rc = cli_parse_args(argc, argv, "rekey", rekey_opts, apply_opt, NULL);
    if (rc == CLI_HELP) {
        fputs(cli_rekey_usage, stdout);
        return CLI_OK;
    }
    return rc == CLI_OK ? rekey(cli) : rc;
}
