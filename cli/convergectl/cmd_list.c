/*
 * convergectl list: every stack with its status, progress and age.
 *
 * The stacks are indexed already: the names hash (`stacks`) holds every
 * top-level stack that exists, and each stack's `children` set the nested
 * stacks its resources created. So top-level stacks cost one HSCAN and a
 * pipelined read of their records; --nested walks the children sets a
 * level at a time (a few pipelined round trips per level, at most the
 * nesting depth). Which rows are shown and in what order is cli_list's.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCAN_COUNT "1000"
#define BATCH 1000
/* Deeper than templates may nest, in case a record points in a loop. */
#define LEVELS (CV_TEMPLATE_MAX_DEPTH + 1)

const char cli_list_usage[] =
    "usage: convergectl list [--status S]... [--name PATTERN] [--nested] [-o json]\n"
    "\n"
    "Lists every stack, by name: name, status, progress (graph nodes of its\n"
    "current traversal done/total) and age (since it was created). A stack whose\n"
    "delete completed is gone and not listed. Nested stacks (those of template\n"
    "resources, OS::Heat::Stack and resource groups) are listed only with\n"
    "--nested, each under its parent, by the name Heat gives it\n"
    "(PARENT-RESOURCE-<12 hex>), which every command that takes a stack accepts.\n"
    "\n"
    "  --status S           only stacks in status S: a status (CREATE_COMPLETE) or\n"
    "                       a state alone (IN_PROGRESS, COMPLETE, FAILED: any\n"
    "                       action), in any case; repeatable, or S1,S2: any of them\n"
    "  --name PATTERN       only stacks whose name matches PATTERN, a shell pattern\n"
    "                       ('web-*'; without wildcards the whole name)\n"
    "  --nested             nested stacks too (filters apply to each stack)\n"
    "  -o, --output FORMAT  text (default) or json: a list of {\"name\", \"id\",\n"
    "                       \"status\", \"reason\", \"traversal\", \"done\", \"total\",\n"
    "                       \"created\", \"updated\", \"age\" (seconds), \"depth\" (0: a\n"
    "                       top-level stack), \"parent\" (id), \"parent_resource\"}\n"
    "                       (text: NAME, ID, STATUS, PROGRESS, AGE and with --nested\n"
    "                       the parent's resource; nested names are indented)\n"
    "  -h, --help           show this help\n";

enum { OPT_STATUS = 200, OPT_NAME, OPT_NESTED };

static const cli_opt_t list_opts[] = {
    CLI_HELP_OPT,
    CLI_OUTPUT_OPT,
    {OPT_STATUS, "--status", NULL, true},
    {OPT_NAME, "--name", NULL, true},
    {OPT_NESTED, "--nested", NULL, false},
    CLI_OPTS_END,
};

typedef struct list_args {
    bool json;
    cli_list_filter_t filter;
} list_args_t;

static int apply(const cli_args_t *a, int id, void *ctx)
{
    list_args_t *l = ctx;
    char err[256];
    switch (id) {
    case CLI_OPT_OUTPUT:
        return cli_parse_output(a, &l->json);
    case OPT_STATUS:
        if (cli_list_filter_add_status(&l->filter, a->arg, err, sizeof(err)) != 0)
            return cli_usage_error(a->cmd, "--status: %s", err);
        return CLI_OK;
    case OPT_NAME:
        if (cli_list_filter_set_name(&l->filter, a->arg, err, sizeof(err)) != 0)
            return cli_usage_error(a->cmd, "--name: %s", err);
        return CLI_OK;
    case OPT_NESTED:
        l->filter.nested = true;
        return CLI_OK;
    default:
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
    }
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

/* The ids of the top-level stacks, from the names hash. */
static int read_names(cli_t *cli, json_t *ids)
{
    char key[CV_KEY_MAX], cursor[32] = "0";
    cv_key(key, sizeof(key), CV_KEY_STACKS, NULL, 0, NULL);
    do {
        const char *argv[] = {"HSCAN", key, cursor, "COUNT", SCAN_COUNT};
        redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 5, argv, NULL);
        if (!r)
            return CLI_SERVICE;
        bool ok = r->elements == 2 && r->element[0]->type == REDIS_REPLY_STRING &&
                  r->element[1]->type == REDIS_REPLY_ARRAY &&
                  cli_reply_is_hash(cli, r->element[1], key);
        if (ok) {
            snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
            const redisReply *pairs = r->element[1];
            for (size_t i = 1; i < pairs->elements; i += 2)
                if (cli_valid_id(pairs->element[i]->str))
                    json_array_append_new(ids, json_string(pairs->element[i]->str));
        }
        freeReplyObject(r);
        if (!ok)
            return cli_fail(CLI_SERVICE, "Redis answered HSCAN %s with an unexpected shape", key);
    } while (strcmp(cursor, "0") != 0);
    return CLI_OK;
}

/* One round trip: `verb` on the key of `kind` of each of ids[from, to). */
static int read_batch(cli_t *cli, const json_t *ids, size_t from, size_t to, const char *verb,
                      cv_key_kind_t kind, redisReply **replies)
{
    size_t n = to - from;
    cli_redis_cmd_t *cmds = calloc(n, sizeof(*cmds));
    char(*keys)[CV_KEY_MAX] = calloc(n, sizeof(*keys));
    int rc = cmds && keys ? CLI_OK : cli_fail(CLI_SERVICE, "out of memory listing stacks");
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        cv_key(keys[i], CV_KEY_MAX, kind, json_string_value(json_array_get(ids, from + i)), 0,
               NULL);
        cmds[i] = (cli_redis_cmd_t){2, {verb, keys[i]}};
    }
    if (rc == CLI_OK)
        rc = cli_redis_pipeline(cli, n, cmds, CLI_R(REDIS_REPLY_ARRAY), replies);
    for (size_t i = 0; rc == CLI_OK && i < n; i++)
        if (strcmp(verb, "HGETALL") == 0 && !cli_reply_is_hash(cli, replies[i], keys[i]))
            rc = CLI_SERVICE;
    for (size_t i = 0; rc != CLI_OK && cmds && i < n; i++) {
        freeReplyObject(replies[i]); /* none kept unless all are well formed */
        replies[i] = NULL;
    }
    free(cmds);
    free(keys);
    return rc;
}

/* Reads the records of `ids` into `rows` and, when `below` is not NULL,
 * the children of those that exist (and are not deleted) into it. */
static int read_level(cli_t *cli, const json_t *ids, double now, json_t *rows, json_t *below,
                      json_t *seen)
{
    size_t total = json_array_size(ids);
    redisReply **replies = calloc(BATCH, sizeof(*replies));
    int rc = replies ? CLI_OK : cli_fail(CLI_SERVICE, "out of memory listing stacks");
    json_t *parents = json_array();
    for (size_t at = 0; rc == CLI_OK && at < total; at += BATCH) {
        size_t end = at + BATCH < total ? at + BATCH : total;
        rc = read_batch(cli, ids, at, end, "HGETALL", CV_KEY_STACK, replies);
        for (size_t i = 0; rc == CLI_OK && i < end - at; i++) {
            const char *id = json_string_value(json_array_get(ids, at + i));
            json_t *rec = cli_reply_hash(replies[i]);
            const char *status = cli_field_str(rec, "status");
            if (status[0] && !json_object_get(seen, id)) {
                json_object_set_new(seen, id, json_true());
                json_array_append_new(rows, cli_list_row(id, rec, now));
                if (strcmp(status, "DELETE_COMPLETE") != 0)
                    json_array_append_new(parents, json_string(id));
            }
            json_decref(rec);
            freeReplyObject(replies[i]);
        }
    }
    for (size_t at = 0; below && rc == CLI_OK && at < json_array_size(parents); at += BATCH) {
        size_t end = at + BATCH < json_array_size(parents) ? at + BATCH : json_array_size(parents);
        rc = read_batch(cli, parents, at, end, "SMEMBERS", CV_KEY_CHILDREN, replies);
        for (size_t i = 0; rc == CLI_OK && i < end - at; i++) {
            for (size_t c = 0; c < replies[i]->elements; c++)
                if (replies[i]->element[c]->type == REDIS_REPLY_STRING &&
                    cli_valid_id(replies[i]->element[c]->str))
                    json_array_append_new(below, json_string(replies[i]->element[c]->str));
            freeReplyObject(replies[i]);
        }
    }
    json_decref(parents);
    free(replies);
    return rc;
}

static int server_time(cli_t *cli, double *now)
{
    const char *argv[] = {"TIME"};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 1, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    bool ok = r->elements == 2 && r->element[0]->type == REDIS_REPLY_STRING &&
              r->element[1]->type == REDIS_REPLY_STRING;
    if (ok)
        *now = strtod(r->element[0]->str, NULL) + strtod(r->element[1]->str, NULL) / 1e6;
    freeReplyObject(r);
    return ok ? CLI_OK : cli_fail(CLI_SERVICE, "Redis answered TIME with an unexpected shape");
}

/* Every stack to consider: the top-level ones, and with `nested` those
 * below them, level by level. */
static int read_rows(cli_t *cli, bool nested, json_t *rows)
{
    double now = 0;
    json_t *level = json_array(), *seen = json_object();
    int rc = server_time(cli, &now);
    if (rc == CLI_OK)
        rc = read_names(cli, level);
    for (int d = 0; rc == CLI_OK && json_array_size(level) > 0 && d <= LEVELS; d++) {
        json_t *below = nested && d < LEVELS ? json_array() : NULL;
        rc = read_level(cli, level, now, rows, below, seen);
        json_decref(level);
        level = below ? below : json_array();
    }
    json_decref(level);
    json_decref(seen);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

static void print_text(const json_t *rows, bool nested)
{
    if (json_array_size(rows) == 0)
        return;
    json_t *table = json_array();
    json_t *header = json_pack("[sssss]", "NAME", "ID", "STATUS", "PROGRESS", "AGE");
    if (nested)
        json_array_append_new(header, json_string("PARENT RESOURCE"));
    json_array_append_new(table, header);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        char age[24];
        cli_format_duration(json_real_value(json_object_get(r, "age")), age, sizeof(age));
        json_int_t depth = json_integer_value(json_object_get(r, "depth"));
        json_t *line = json_array();
        json_array_append_new(
            line, json_sprintf("%*s%s", (int)(2 * depth), "", cli_field_str(r, "name")));
        json_array_append(line, json_object_get(r, "id"));
        json_array_append(line, json_object_get(r, "status"));
        json_array_append_new(
            line,
            json_sprintf("%lld/%lld", (long long)json_integer_value(json_object_get(r, "done")),
                         (long long)json_integer_value(json_object_get(r, "total"))));
        json_array_append_new(line, json_string(age));
        if (nested)
            json_array_append(line, json_object_get(r, "parent_resource"));
        json_array_append_new(table, line);
    }
    cli_print_table(table);
    json_decref(table);
}

static int list(cli_t *cli, const list_args_t *args)
{
    json_t *rows = json_array(), *kept = json_array(), *ordered = NULL;
    int rc = read_rows(cli, args->filter.nested, rows);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        if (cli_list_filter_match(&args->filter, r))
            json_array_append(kept, r);
    }
    if (rc == CLI_OK)
        rc = cli_secret_mask_list(cli, kept); /* docs/security.md "Secrets" */
    if (rc == CLI_OK)
        ordered = cli_list_order(kept);
    if (rc == CLI_OK && args->json)
        cli_print_json(ordered);
    else if (rc == CLI_OK)
        print_text(ordered, args->filter.nested);
    json_decref(rows);
    json_decref(kept);
    json_decref(ordered);
    return rc;
}

int cli_cmd_list(cli_t *cli, int argc, char **argv)
{
    list_args_t args = {.json = false};
    cli_list_filter_init(&args.filter);
    int rc = cli_parse_args(argc, argv, argv[0], list_opts, apply, &args);
    if (rc == CLI_HELP) {
        fputs(cli_list_usage, stdout);
        rc = CLI_OK;
    } else if (rc == CLI_OK) {
        rc = cli_redis_connect(cli);
        if (rc == CLI_OK)
            rc = list(cli, &args);
    }
    cli_list_filter_free(&args.filter);
    return rc;
}
