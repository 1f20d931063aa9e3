/*
 * convergectl observe: asks the observers to look at a stack's resources
 * now. One OBSERVE job per resource that has a record, carrying the
 * record's version, so that an observation racing a newer action is
 * dropped by the observer (the version moved on). Versions are read with
 * pipelined HGETs, a batch at a time; jobs are acknowledged once, at the end.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIPELINE_BATCH 1000

const char cli_observe_usage[] =
    "usage: convergectl observe NAME [--resource R]\n"
    "\n"
    "Asks the observers to look at the resources of the stack NAME now and record\n"
    "what they see: one OBSERVE job for every resource that has a record (those\n"
    "of the current definition and those awaiting cleanup). Prints how many jobs\n"
    "were sent; does not wait for the observations.\n"
    "\n"
    "  --resource R   observe only R (exit 2 when the stack has no record of it)\n"
    "  -h, --help     show this help\n";

static const cli_opt_t observe_opts[] = {CLI_HELP_OPT, CLI_RESOURCE_OPT, CLI_OPTS_END};

/* The names of the resources that have a record (the index hash). */
static json_t *recorded_names(cli_t *cli, const char *id)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_INDEX, id, 0, NULL);
    const char *argv[] = {"HKEYS", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r)
        return NULL;
    json_t *names = json_array();
    for (size_t i = 0; i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING)
            json_array_append_new(names, json_stringn(r->element[i]->str, r->element[i]->len));
    freeReplyObject(r);
    return names;
}

/* --resource R: R alone, when it has a record; a usage error otherwise,
 * saying whether it is a resource of the stack at all. */
static int pick_resource(cli_t *cli, const cli_stack_t *s, const char *resource, json_t *names)
{
    for (size_t i = 0; i < json_array_size(names); i++) {
        if (strcmp(json_string_value(json_array_get(names, i)), resource) == 0) {
            json_array_clear(names);
            json_array_append_new(names, json_string(resource));
            return CLI_OK;
        }
    }
    cli_def_t d;
    int rc = cli_def_read(cli, s->name, s->id, &d);
    if (rc == CLI_OK && cli_def_has_resource(&d, resource))
        rc = cli_fail(CLI_USAGE, "resource '%s' of stack %s has no record yet: nothing to observe",
                      resource, s->name);
    else if (rc == CLI_OK)
        rc = cli_fail(CLI_USAGE, "stack %s has no resource '%s'", s->name, resource);
    cli_def_free(&d);
    return rc;
}

/* Reads the versions of names[from, from + n) and queues one job each;
 * *sent counts the jobs, *gone the records deleted meanwhile. */
static int observe_batch(cli_t *cli, const cli_stack_t *s, const json_t *names, size_t from,
                         size_t n, size_t *sent, size_t *gone)
{
    redisContext *conn = NULL;
    for (size_t i = from; i < from + n; i++) {
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_RES, s->id, 0, json_string_value(json_array_get(names, i)));
        const char *argv[] = {"HGET", key, "version"};
        /* the keys of one stack: one slot, one connection */
        conn = cv_redis_sync_context(cli->redis, key);
        if (!conn)
            return cli_fail(CLI_SERVICE, "%s", cv_redis_sync_error(cli->redis));
        if (redisAppendCommandArgv(conn, 3, argv, NULL) != REDIS_OK)
            return cli_fail(CLI_SERVICE, "out of memory queueing Redis commands");
    }
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = CV_MSG_OBSERVE;
    m.phase = CV_PHASE_UPDATE;
    m.express = json_array_size(names) <= CV_EXPRESS_NODES_MAX; /* a big stack's go in bulk */
    m.traversal = (uint64_t)s->traversal;
    snprintf(m.stack, sizeof(m.stack), "%s", s->id);
    int rc = CLI_OK;
    for (size_t i = from; i < from + n; i++) {
        void *reply = NULL;
        if (redisGetReply(conn, &reply) != REDIS_OK)
            reply = NULL;
        redisReply *r = cli_redis_check(cli, reply, CLI_R_STRING_OR_NIL, "HGET res version");
        if (!r)
            return CLI_SERVICE; /* the connection is dropped with the rest unread */
        if (rc == CLI_OK && r->type == REDIS_REPLY_NIL) {
            ++*gone;
        } else if (rc == CLI_OK) {
            snprintf(m.resource, sizeof(m.resource), "%s",
                     json_string_value(json_array_get(names, i)));
            m.version = strtoull(r->str, NULL, 10);
            rc = cli_publish_queue(cli, CV_TOPIC_OBSERVE, &m);
            *sent += rc == CLI_OK;
        }
        freeReplyObject(r);
    }
    return rc;
}

static int observe(cli_t *cli, const cli_stack_args_t *args)
{
    cli_stack_t s;
    json_t *names = NULL;
    size_t sent = 0, gone = 0;
    int rc = cli_stack_find(cli, args->name, &s);
    if (rc == CLI_OK && !(names = recorded_names(cli, s.id)))
        rc = CLI_SERVICE;
    if (rc == CLI_OK && args->resource)
        rc = pick_resource(cli, &s, args->resource, names);
    if (rc == CLI_OK)
        rc = cli_kafka_connect(cli);
    for (size_t at = 0; rc == CLI_OK && at < json_array_size(names); at += PIPELINE_BATCH) {
        size_t left = json_array_size(names) - at;
        rc = observe_batch(cli, &s, names, at, left < PIPELINE_BATCH ? left : PIPELINE_BATCH, &sent,
                           &gone);
    }
    if (rc == CLI_OK && sent > 0)
        rc = cli_publish_flush(cli, CV_TOPIC_OBSERVE);
    if (rc == CLI_OK) {
        printf("stack %s (%s): sent %zu OBSERVE job%s (traversal %lld)", s.name, s.id, sent,
               sent == 1 ? "" : "s", s.traversal);
        if (gone)
            printf("; %zu resource%s deleted meanwhile", gone, gone == 1 ? "" : "s");
        printf("\n");
    }
    json_decref(names);
    cli_stack_free(&s);
    return rc;
}

int cli_cmd_observe(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {observe_opts, cli_observe_usage, 0, observe};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}
