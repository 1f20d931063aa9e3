/*
 * convergectl events: a stack's events stream, oldest first, read in pages;
 * with --follow, new events as they come until the stack settles.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE "1000"
#define BLOCK_MS "500"

const char cli_events_usage[] =
    "usage: convergectl events NAME|ID [-o json] [--follow]\n"
    "\n"
    "Lists the events of the stack NAME (a nested stack's name as 'list --nested'\n"
    "prints it, or a stack's id ID: a nested stack's is the physical id of its\n"
    "parent's resource), oldest first, as 'TIME  RESOURCE  ACTION_STATUS  REASON'\n"
    "(TIME in ISO-8601 UTC).\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: a list of {\"time\", \"resource\",\n"
    "                       \"type\", \"physical_id\", \"action\", \"status\",\n"
    "                       \"reason\", \"traversal\", \"worker\"}; with --follow one\n"
    "                       object a line. \"type\" is the resource's type as the\n"
    "                       template wrote it (OS::Heat::Stack for the stack's own\n"
    "                       events; \"\" for events that name none)\n"
    "  -f, --follow         then print new events as they come, until the stack's\n"
    "                       status is no longer *_IN_PROGRESS\n"
    "\n"
    "Secret values in a reason or physical id (hidden parameters, RandomString\n"
    "values) are shown as ******.\n"
    "\n" CLI_SHOW_SECRETS_USAGE "  -h, --help           show this help\n";

static const cli_opt_t events_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_FOLLOW_OPT,
                                        CLI_SHOW_SECRETS_OPT, CLI_OPTS_END};

typedef struct reader {
    cli_t *cli;
    char key[CV_KEY_MAX];
    char last[48]; /* id of the last entry printed, "0-0" before any */
    bool json;
    bool lines;  /* JSON: one object per line (--follow), else one list */
    size_t seen; /* events printed */
    const char *name, *id;
    bool masking;          /* false with --show-secrets */
    cli_secrets_t secrets; /* what is masked (cli_secret.h), when masking */
    size_t secrets_seen;   /* `seen` when the secrets were read */
} reader_t;

/* ------------------------------------------------------------------------ */
/* Entries                                                                  */
/* ------------------------------------------------------------------------ */

static void print_text(const json_t *ev)
{
    char when[40], what[64];
    cli_iso_time(json_real_value(json_object_get(ev, "time")), when, sizeof(when));
    snprintf(what, sizeof(what), "%s_%s", json_string_value(json_object_get(ev, "action")),
             json_string_value(json_object_get(ev, "status")));
    printf("%s  %-20s  %-20s  %s\n", when, json_string_value(json_object_get(ev, "resource")), what,
           json_string_value(json_object_get(ev, "reason")));
}

static void print_entry(reader_t *rd, const json_t *ev)
{
    if (!rd->json) {
        print_text(ev);
    } else if (rd->lines) {
        cli_print_json_line(ev);
    } else {
        char *text = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(15));
        printf("%s  %s", rd->seen ? ",\n" : "[\n", text ? text : "{}");
        free(text);
    }
    rd->seen++;
}

/* Prints every entry of an XRANGE-shaped array; returns how many or -1. */
static long print_entries(reader_t *rd, const redisReply *entries)
{
    for (size_t i = 0; i < entries->elements; i++) {
        const redisReply *e = entries->element[i];
        if (!cli_event_entry_ok(e))
            return cli_fail(-1, "Redis at %s:%d holds a malformed entry in %s",
                            rd->cli->opts.redis_host, rd->cli->opts.redis_port, rd->key);
        json_t *evs = json_array();
        cli_event_expand(e, false, evs);
        size_t k;
        json_t *ev;
        json_array_foreach(evs, k, ev)
        {
            if (rd->masking)
                cli_secret_mask_resource(&rd->secrets, "", ev);
            print_entry(rd, ev);
        }
        json_decref(evs);
        snprintf(rd->last, sizeof(rd->last), "%s", e->element[0]->str);
    }
    return (long)entries->elements;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

static int read_existing(reader_t *rd)
{
    for (;;) {
        char start[48] = "-";
        if (rd->seen)
            cli_stream_next_id(rd->last, start, sizeof(start));
        const char *argv[] = {"XRANGE", rd->key, start, "+", "COUNT", PAGE};
        redisReply *r = cli_redis_argv(rd->cli, CLI_R(REDIS_REPLY_ARRAY), 6, argv, NULL);
        if (!r)
            return CLI_SERVICE;
        long n = print_entries(rd, r);
        freeReplyObject(r);
        if (n < 0)
            return CLI_SERVICE;
        if (n < atol(PAGE))
            return CLI_OK;
    }
}

/* One XREAD BLOCK: prints what came; *n is how many. */
static int read_new(reader_t *rd, long *n)
{
    const char *argv[] = {"XREAD", "COUNT", PAGE, "BLOCK", BLOCK_MS, "STREAMS", rd->key, rd->last};
    redisReply *r =
        cli_redis_argv(rd->cli, CLI_R(REDIS_REPLY_ARRAY) | CLI_R(REDIS_REPLY_NIL), 8, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    *n = 0;
    if (r->type == REDIS_REPLY_ARRAY) {
        const redisReply *s = r->elements == 1 ? r->element[0] : NULL;
        if (s && s->type == REDIS_REPLY_ARRAY && s->elements == 2 &&
            s->element[1]->type == REDIS_REPLY_ARRAY)
            *n = print_entries(rd, s->element[1]);
        else
            *n = cli_fail(-1, "Redis answered XREAD %s with an unexpected shape", rd->key);
    }
    freeReplyObject(r);
    fflush(stdout);
    return *n < 0 ? CLI_SERVICE : CLI_OK;
}

/* (Re)reads what is masked once events came since the last read: a
 * resource created meanwhile (a RandomString) may have added a secret. */
static int read_secrets(reader_t *rd, bool first)
{
    if (!rd->masking || (!first && rd->secrets_seen == rd->seen))
        return CLI_OK;
    rd->secrets_seen = rd->seen;
    cli_secrets_free(&rd->secrets);
    return cli_secret_read_stack(rd->cli, rd->name, rd->id, &rd->secrets);
}

/* New events until the stack is settled and a read brought nothing: the
 * status is read before each XREAD, so an event written before the stack
 * settled is always printed. */
static int follow(reader_t *rd, const char *id)
{
    for (;;) {
        cli_stack_t s;
        bool found = false;
        int rc = cli_stack_read(rd->cli, id, &s, &found);
        bool settled = cli_stack_settled(&s);
        cli_stack_free(&s);
        if (rc)
            return rc;
        if (!found)
            return cli_fail(CLI_FAILED, "stack %s no longer exists", id);
        long n = 0;
        rc = read_secrets(rd, false);
        if (rc == CLI_OK)
            rc = read_new(rd, &n);
        if (rc)
            return rc;
        if (n == 0 && settled)
            return CLI_OK;
    }
}

static int show(cli_t *cli, const cli_stack_args_t *args)
{
    char id[CV_ID_MAX];
    int rc = cli_stack_resolve(cli, args->name, id);
    if (rc)
        return rc;
    reader_t rd = {.cli = cli, .json = args->json, .lines = args->follow};
    rd.name = args->name;
    rd.id = id;
    rd.masking = !args->show_secrets;
    cli_secrets_init(&rd.secrets);
    snprintf(rd.last, sizeof(rd.last), "0-0");
    cv_key(rd.key, sizeof(rd.key), CV_KEY_EVENTS, id, 0, NULL);
    rc = read_secrets(&rd, true);
    if (rc == CLI_OK)
        rc = read_existing(&rd);
    if (rd.json && !rd.lines && rc == CLI_OK)
        printf(rd.seen ? "\n]\n" : "[]\n");
    fflush(stdout);
    if (rc == CLI_OK && args->follow)
        rc = follow(&rd, id);
    cli_secrets_free(&rd.secrets);
    return rc;
}

int cli_cmd_events(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {events_opts, cli_events_usage, 0, show};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}
