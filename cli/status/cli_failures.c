/*
 * Why a --wait ended FAILED or rolled back (cli_stack_print_failures): the
 * resources that failed, read from the stack's events. A rollback of a
 * failed create deletes the resources that failed, and their records with
 * them; their events stay, each naming its traversal, so the failures of
 * the traversal the command began are found whatever followed it.
 */
#include "cli_output.h"
#include "cli_secret_io.h"
#include "cli_stack.h"

#include "cv_contract.h"
#include "cv_hot.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 1000
#define PAGE_TEXT "1000"
/* A stream keeps about --max-events-per-stack (1000) events, one page; with
 * 0 it keeps all, and a wait reads no more than this many pages of them. */
#define MAX_PAGES 1000

/* The fields of one XRANGE entry ([id, [field, value, ...]]) that
 * cli_failed_resources reads, when it is a failure (status FAILED); NULL
 * for any other entry. Only failures are kept, so that memory follows the
 * number of failures, not the stream's length. */
static json_t *failure_of(const redisReply *e)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_STRING || e->element[1]->type != REDIS_REPLY_ARRAY)
        return NULL;
    const redisReply *f = e->element[1];
    json_t *ev = json_object();
    for (size_t i = 0; i + 1 < f->elements; i += 2) {
        if (f->element[i]->type != REDIS_REPLY_STRING ||
            f->element[i + 1]->type != REDIS_REPLY_STRING)
            continue;
        const char *name = f->element[i]->str, *value = f->element[i + 1]->str;
        if (strcmp(name, "traversal") == 0)
            json_object_set_new(ev, name, json_integer(strtoll(value, NULL, 10)));
        else
            json_object_set_new(ev, name, cli_json_strn(value, f->element[i + 1]->len));
    }
    if (strcmp(cli_field_str(ev, "status"), "FAILED") == 0)
        return ev;
    json_decref(ev);
    return NULL;
}

/* One page from `start`: appends its failures to `failures`, sets `start`
 * to where the next page starts and *more when there may be one. XRANGE,
 * not XREVRANGE, which the deployment's client user may not run. */
static int read_page(cli_t *cli, const char *key, char *start, size_t startsz, json_t *failures,
                     bool *more)
{
    const char *argv[] = {"XRANGE", key, start, "+", "COUNT", PAGE_TEXT};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 6, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    for (size_t i = 0; i < r->elements; i++) {
        json_t *ev = failure_of(r->element[i]);
        if (ev)
            json_array_append_new(failures, ev);
        if (r->element[i]->type == REDIS_REPLY_ARRAY && r->element[i]->elements == 2 &&
            r->element[i]->element[0]->type == REDIS_REPLY_STRING)
            cli_stream_next_id(r->element[i]->element[0]->str, start, startsz);
    }
    *more = r->elements == PAGE;
    freeReplyObject(r);
    return CLI_OK;
}

/* The failure events of the stack, oldest first. */
static int read_failures(cli_t *cli, const char *id, json_t *failures)
{
    char key[CV_KEY_MAX], start[64] = "-";
    cv_key(key, sizeof(key), CV_KEY_EVENTS, id, 0, NULL);
    bool more = true;
    int rc = CLI_OK;
    for (int page = 0; rc == CLI_OK && more && page < MAX_PAGES; page++)
        rc = read_page(cli, key, start, sizeof(start), failures, &more);
    return rc;
}

/* Nested stacks below nested stacks: deeper than templates may nest, in
 * case records point in a loop. */
#define NESTED_LEVELS (CV_TEMPLATE_MAX_DEPTH + 1)

/* The nested stack a failed resource of stack `id` is, when it is one: the
 * physical id of its failure's event, if the stack's children have it
 * (events outlive the resource records a rollback deletes). "" if none. */
static const char *failed_child(const json_t *row, const json_t *children)
{
    const char *child = cli_field_str(row, "physical_id");
    return child[0] && json_object_get(children, child) ? child : "";
}

static int collect(cli_t *cli, const char *id, const char *name, long long from, const char *prefix,
                   int depth, json_t *rows);

/* The failures of the nested stack `child`, of its last failed traversal,
 * named below `path` ("web/vm"). */
static int collect_child(cli_t *cli, const char *child, const char *path, int depth, json_t *rows)
{
    cli_stack_t s;
    bool found = false;
    char below[CV_NAME_MAX * 4];
    int rc = cli_stack_read(cli, child, &s, &found);
    snprintf(below, sizeof(below), "%.*s/", (int)sizeof(below) - 2, path);
    if (rc == CLI_OK && found)
        rc = collect(cli, child, s.name, -1, below, depth + 1, rows);
    cli_stack_free(&s);
    return rc;
}

/* Appends to `rows` the failed resources of stack `id` (called `name`) of
 * traversal `from` and later (cli_failed_resources), each {"path" (its
 * name after `prefix`), "action", "reason", "stack"}, each followed by the
 * failures of the nested stack it is, as Heat's `stack failures list`
 * descends into nested stacks. */
static int collect(cli_t *cli, const char *id, const char *name, long long from, const char *prefix,
                   int depth, json_t *rows)
{
    json_t *events = json_array(), *failed = NULL, *children = NULL;
    int rc = read_failures(cli, id, events);
    if (rc == CLI_OK)
        failed = cli_failed_resources(events, from, name);
    if (rc == CLI_OK && json_array_size(failed) > 0 && !(children = cli_stack_children(cli, id)))
        rc = CLI_SERVICE;
    size_t i;
    json_t *row;
    json_array_foreach(failed, i, row)
    {
        if (rc != CLI_OK)
            break;
        char path[CV_NAME_MAX * 4];
        snprintf(path, sizeof(path), "%s%s", prefix, cli_field_str(row, "resource"));
        json_array_append_new(rows, json_pack("{s:s, s:O, s:O, s:s}", "path", path, "action",
                                              json_object_get(row, "action"), "reason",
                                              json_object_get(row, "reason"), "stack", id));
        const char *child = failed_child(row, children);
        if (child[0] && depth < NESTED_LEVELS)
            rc = collect_child(cli, child, path, depth, rows);
    }
    json_decref(children);
    json_decref(failed);
    json_decref(events);
    return rc;
}

/* "    PATH  ACTION_FAILED: REASON", the reason's secrets masked as its
 * stack's readers mask them (cli_secret_mask_reason) and its limit hints
 * phrased for a user of convergectl. */
static int print_failure(cli_t *cli, const json_t *row, int width)
{
    char *reason = strdup(cli_field_str(row, "reason"));
    int rc = reason ? cli_secret_mask_reason(cli, cli_field_str(row, "stack"), &reason)
                    : cli_fail(CLI_SERVICE, "out of memory reading failures");
    char *said = rc == CLI_OK ? cli_limit_hints(reason) : NULL;
    if (rc == CLI_OK)
        printf("    %-*s  %s_FAILED: %s\n", width, cli_field_str(row, "path"),
               cli_field_str(row, "action"), said ? said : reason);
    free(said);
    free(reason);
    return rc;
}

int cli_stack_print_failures(cli_t *cli, const cli_stack_t *s, uint64_t from)
{
    json_t *rows = json_array();
    int rc = collect(cli, s->id, s->name, (long long)from, "", 0, rows);
    size_t i;
    json_t *row;
    int width = 0;
    json_array_foreach(rows, i, row)
    {
        int n = (int)strlen(cli_field_str(row, "path"));
        width = n > width ? n : width;
    }
    if (rc == CLI_OK && json_array_size(rows) > 0)
        printf("  failed resources:\n");
    json_array_foreach(rows, i, row)
    {
        if (rc == CLI_OK)
            rc = print_failure(cli, row, width);
    }
    json_decref(rows);
    return rc;
}
