/*
 * Finding the stack a command names (cli_stack.h): a top-level stack by
 * its name, any stack by its id, a nested stack by the name the worker
 * that created it gave it (cli_list.h), found from its top stack down; and
 * the top stack above a nested one, which the verbs that change a stack
 * act on instead.
 */
#include "cli_list.h"
#include "cli_stack.h"

#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than templates may nest, in case a record points in a loop. */
#define NESTED_LEVELS (CV_TEMPLATE_MAX_DEPTH + 1)

/* Most '-' a name of CV_NAME_MAX characters can hold where a top-level
 * name may end. */
#define NAME_PREFIXES 128

/* The ids of the top-level stacks whose names begin `name` before a '-',
 * in one round trip. */
static int top_candidates(cli_t *cli, const char *name, json_t *ids)
{
    size_t ends[NAME_PREFIXES];
    size_t n = cli_list_name_prefixes(name, ends, NAME_PREFIXES);
    if (n == 0)
        return CLI_OK;
    char key[CV_KEY_MAX], prefixes[NAME_PREFIXES][CV_NAME_MAX];
    cli_redis_cmd_t cmds[NAME_PREFIXES];
    redisReply *replies[NAME_PREFIXES];
    cv_key(key, sizeof(key), CV_KEY_STACKS, NULL, 0, NULL);
    for (size_t i = 0; i < n; i++) {
        snprintf(prefixes[i], CV_NAME_MAX, "%.*s", (int)ends[i], name);
        cmds[i] = (cli_redis_cmd_t){3, {"HGET", key, prefixes[i]}};
    }
    if (cli_redis_pipeline(cli, n, cmds, CLI_R_STRING_OR_NIL, replies) != CLI_OK)
        return CLI_SERVICE;
    for (size_t i = 0; i < n; i++) {
        if (replies[i]->type == REDIS_REPLY_STRING && cli_valid_id(replies[i]->str))
            json_array_append_new(ids, json_string(replies[i]->str));
        freeReplyObject(replies[i]);
    }
    return CLI_OK;
}

/* One round trip: `verb` on the key of `kind` of each of `ids`, with up to
 * two more arguments (NULL: none). */
static int pipeline_ids(cli_t *cli, const json_t *ids, const char *verb, cv_key_kind_t kind,
                        const char *a1, const char *a2, unsigned types, redisReply **replies)
{
    size_t n = json_array_size(ids);
    cli_redis_cmd_t *cmds = calloc(n + 1, sizeof(*cmds));
    char(*keys)[CV_KEY_MAX] = calloc(n + 1, sizeof(*keys));
    int rc = cmds && keys ? CLI_OK : cli_fail(CLI_SERVICE, "out of memory reading nested stacks");
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        cv_key(keys[i], CV_KEY_MAX, kind, json_string_value(json_array_get(ids, i)), 0, NULL);
        cmds[i] = (cli_redis_cmd_t){2 + (a1 != NULL) + (a2 != NULL), {verb, keys[i], a1, a2}};
    }
    if (rc == CLI_OK)
        rc = cli_redis_pipeline(cli, n, cmds, types, replies);
    free(cmds);
    free(keys);
    return rc;
}

/* The children of the stacks `ids`, each once. */
static int children_of(cli_t *cli, const json_t *ids, json_t *out)
{
    size_t n = json_array_size(ids);
    redisReply **replies = calloc(n + 1, sizeof(*replies));
    int rc = replies ? pipeline_ids(cli, ids, "SMEMBERS", CV_KEY_CHILDREN, NULL, NULL,
                                    CLI_R(REDIS_REPLY_ARRAY), replies)
                     : cli_fail(CLI_SERVICE, "out of memory reading nested stacks");
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        for (size_t c = 0; c < replies[i]->elements; c++)
            if (replies[i]->element[c]->type == REDIS_REPLY_STRING &&
                cli_valid_id(replies[i]->element[c]->str))
                json_array_append_new(out, json_string(replies[i]->element[c]->str));
        freeReplyObject(replies[i]);
    }
    free(replies);
    return rc;
}

/* Of the stacks `ids`, those whose name is `name` (into `found`: an
 * existing one first, one whose delete completed after) and those whose
 * name `name` continues (into `below`). */
static int match_level(cli_t *cli, const json_t *ids, const char *name, json_t *found,
                       json_t *below)
{
    size_t n = json_array_size(ids);
    redisReply **replies = calloc(n + 1, sizeof(*replies));
    int rc = replies ? pipeline_ids(cli, ids, "HMGET", CV_KEY_STACK, "name", "status",
                                    CLI_R(REDIS_REPLY_ARRAY), replies)
                     : cli_fail(CLI_SERVICE, "out of memory reading nested stacks");
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        const redisReply *r = replies[i];
        bool named = r->elements == 2 && r->element[0]->type == REDIS_REPLY_STRING;
        bool gone = named && r->element[1]->type == REDIS_REPLY_STRING &&
                    strcmp(r->element[1]->str, "DELETE_COMPLETE") == 0;
        json_t *id = json_array_get(ids, i);
        if (named && strcmp(r->element[0]->str, name) == 0)
            json_array_insert(found, gone ? json_array_size(found) : 0, id);
        else if (named && !gone && cli_list_name_below(name, r->element[0]->str))
            json_array_append(below, id);
        freeReplyObject(replies[i]);
    }
    free(replies);
    return rc;
}

int cli_stack_find_nested(cli_t *cli, const char *name, char id[CV_ID_MAX])
{
    json_t *level = json_array(), *found = json_array();
    int rc = top_candidates(cli, name, level);
    id[0] = '\0';
    for (int d = 0; rc == CLI_OK && d < NESTED_LEVELS && json_array_size(level) > 0 &&
                    json_array_size(found) == 0;
         d++) {
        json_t *children = json_array(), *below = json_array();
        rc = children_of(cli, level, children);
        if (rc == CLI_OK && json_array_size(children) > 0)
            rc = match_level(cli, children, name, found, below);
        json_decref(children);
        json_decref(level);
        level = below;
    }
    if (json_array_size(found) > 0)
        snprintf(id, CV_ID_MAX, "%s", json_string_value(json_array_get(found, 0)));
    json_decref(level);
    json_decref(found);
    return rc;
}

int cli_stack_resolve(cli_t *cli, const char *name_or_id, char id[CV_ID_MAX])
{
    int rc = cli_lookup(cli, name_or_id, id);
    if (rc || id[0])
        return rc;
    bool exists = false;
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACK, name_or_id, 0, NULL);
    rc = cli_valid_id(name_or_id) ? cli_key_exists(cli, key, &exists) : CLI_OK;
    if (rc == CLI_OK && exists) {
        snprintf(id, CV_ID_MAX, "%s", name_or_id);
        return CLI_OK;
    }
    if (rc == CLI_OK)
        rc = cli_stack_find_nested(cli, name_or_id, id);
    if (rc == CLI_OK && !id[0])
        rc = cli_fail(CLI_USAGE, "stack %s not found", name_or_id);
    return rc;
}

int cli_stack_top(cli_t *cli, const char *id, cli_stack_t *top)
{
    bool found = false;
    int rc = cli_stack_read(cli, id, top, &found);
    for (int d = 0; rc == CLI_OK && found && top->parent[0] && d < NESTED_LEVELS * 2; d++) {
        char parent[CV_ID_MAX];
        memcpy(parent, top->parent, CV_ID_MAX);
        cli_stack_free(top);
        rc = cli_stack_read(cli, parent, top, &found);
    }
    if (rc == CLI_OK && (!found || top->parent[0]))
        rc = cli_fail(CLI_SERVICE,
                      "the stacks above stack %s cannot be read: a parent "
                      "has no record, or they nest deeper than any template may",
                      id);
    return rc;
}

int cli_stack_refuse_nested(cli_t *cli, const cli_stack_t *s, const char *given, const char *verb)
{
    if (!s->parent[0])
        return CLI_OK;
    cli_stack_t top, parent;
    bool found = false;
    int rc = cli_stack_top(cli, s->id, &top);
    if (rc == CLI_OK)
        rc = cli_stack_read(cli, s->parent, &parent, &found);
    else
        memset(&parent, 0, sizeof(parent));
    if (rc == CLI_OK)
        rc = cli_fail(CLI_USAGE,
                      "stack %s is a nested stack (resource %s of stack %s), which its parent "
                      "resource owns; %s its top stack instead: convergectl %s %s",
                      given, s->parent_resource, found && parent.name[0] ? parent.name : s->parent,
                      verb, verb, top.name);
    cli_stack_free(&parent);
    cli_stack_free(&top);
    return rc;
}

int cli_stack_resolve_top_level(cli_t *cli, const char *name_or_id, const char *verb,
                                char id[CV_ID_MAX], char name[CV_NAME_MAX])
{
    cli_stack_t s;
    bool found = false;
    int rc = cli_stack_resolve(cli, name_or_id, id);
    if (rc)
        return rc;
    rc = cli_stack_read(cli, id, &s, &found);
    if (rc == CLI_OK && found)
        rc = cli_stack_refuse_nested(cli, &s, name_or_id, verb);
    snprintf(name, CV_NAME_MAX, "%s", found && s.name[0] ? s.name : name_or_id);
    cli_stack_free(&s);
    return rc;
}
