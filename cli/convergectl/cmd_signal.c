/*
 * convergectl signal: sends a signal to a resource, as `openstack stack
 * resource signal` does. The checks Heat's resource_signal makes come
 * first (the stack and the resource exist, the resource is not being
 * deleted, its type takes signals, the type accepts the data), so that a
 * signal refused is refused here, with exit 2 and Heat's message. An
 * accepted signal is stored in Redis (signal_send.lua) and then its SIGNAL
 * job is published; the command answers 0 only once Kafka acknowledged the
 * job. The engines apply it (engine/converge-engine/engine_signal.c); a signal sent again
 * with the same --id changes nothing.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"
#include "cv_io.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_signal_usage[] =
    "usage: convergectl signal NAME RESOURCE [--data JSON] [--id ID]\n"
    "\n"
    "Sends a signal to the resource RESOURCE of the stack NAME (a stack name or id),\n"
    "as 'openstack stack resource signal' does. The signal is stored in Redis and\n"
    "queued for the engines before the command returns; they apply it in the\n"
    "order signals arrived. An OS::Heat::WaitConditionHandle takes Heat's data:\n"
    "{\"status\": \"SUCCESS\" or \"FAILURE\", \"reason\": ..., \"data\": ..., \"id\": ...},\n"
    "each field optional (a SUCCESS numbered by its arrival by default). The\n"
    "handle's curl_cli attribute is this command for the handle, so that a line\n"
    "written for Heat's ('<curl_cli> --data-binary '{\"status\": \"SUCCESS\"}'') works.\n"
    "Data {\"unset_hook\": HOOK} clears the hook RESOURCE is paused on instead, as\n"
    "`convergectl hook-clear` does (exit 2 when it is not paused on HOOK).\n"
    "An OS::Heat::ScalingPolicy takes any data and scales its AutoScalingGroup (its\n"
    "signal_url attribute is this command for the policy).\n"
    "\n"
    "  --data JSON         the signal's data (default: none);\n"
    "                      --data-binary is the same option\n"
    "  --id ID             the signal's id, 1-63 of [A-Za-z0-9_.:-] (default: a new\n"
    "                      random one); sending a signal again with its id changes\n"
    "                      nothing, so a send that failed can be retried safely\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 accepted; 2 no such stack or resource, the resource is being\n"
    "deleted, its type takes no signals (\"signal is not supported for resource.\")\n"
    "or refuses the data; 3 Redis or Kafka unreachable or failing.\n";

enum { OPT_DATA = 100, OPT_DATA_BINARY, OPT_ID };

static const cli_opt_t signal_opts[] = {CLI_HELP_OPT,
                                        {OPT_DATA, "--data", NULL, true},
                                        {OPT_DATA_BINARY, "--data-binary", NULL, true},
                                        {OPT_ID, "--id", NULL, true},
                                        CLI_OPTS_END};

typedef struct signal_args {
    const char *words[2]; /* NAME, RESOURCE */
    const char *data;     /* as given; NULL: none */
    const char *id;       /* NULL: a random one */
} signal_args_t;

static bool valid_signal_id(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n >= CV_ID_MAX)
        return false;
    for (const char *p = id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("_.:-", *p)))
            return false;
    return true;
}

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    signal_args_t *out = ctx;
    if (id == CLI_ARG_WORD)
        return cli_take_word(a, out->words, 2);
    if (id == OPT_DATA || id == OPT_DATA_BINARY)
        out->data = a->arg;
    if (id == OPT_ID && !valid_signal_id(a->arg))
        return cli_usage_error(a->cmd, "--id: expected 1-63 of [A-Za-z0-9_.:-], not '%s'", a->arg);
    if (id == OPT_ID)
        out->id = a->arg;
    return CLI_OK;
}

/* ---- the checks Heat's resource_signal makes ---- */

/* The stack NAME names: the id of a stack (a handle's curl_cli names its
 * stack by id), a name, or a nested stack's name (cli_stack_find_nested). */
static int find_stack(cli_t *cli, const char *name, char id[CV_ID_MAX])
{
    if (cli_valid_id(name)) {
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_STACK, name, 0, NULL);
        const char *argv[] = {"EXISTS", key};
        redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 2, argv, NULL);
        if (!r)
            return CLI_SERVICE;
        bool exists = r->integer == 1;
        freeReplyObject(r);
        if (exists) {
            snprintf(id, CV_ID_MAX, "%s", name);
            return CLI_OK;
        }
    }
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACKS, NULL, 0, NULL);
    const char *argv[] = {"HGET", key, name};
    redisReply *r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    bool named = r->type == REDIS_REPLY_STRING && cli_valid_id(r->str);
    snprintf(id, CV_ID_MAX, "%s", named ? r->str : "");
    freeReplyObject(r);
    int rc = named ? CLI_OK : cli_stack_find_nested(cli, name, id);
    if (rc == CLI_OK && !id[0])
        rc = cli_fail(CLI_USAGE, "The Stack (%s) could not be found.", name);
    return rc;
}

/* A resource without a record: not in the stack at all, or not created yet. */
static int no_record(cli_t *cli, const char *name, const char *id, const char *resource)
{
    cli_def_t d;
    int rc = cli_def_read(cli, name, id, &d);
    if (rc == CLI_OK && cli_def_has_resource(&d, resource))
        rc = cli_fail(CLI_USAGE, "The Resource (%s) is not available.", resource);
    else if (rc == CLI_OK)
        rc = cli_fail(CLI_USAGE, "The Resource (%s) could not be found in Stack %s.", resource,
                      name);
    cli_def_free(&d);
    return rc;
}

/* Whether the type takes this signal, tried on a copy of the record's data
 * with the type's own pure operation: what the engine will do. */
static int check_signal(const redisReply *rec, const char *resource, const json_t *details)
{
    const char *type_name = rec->element[0]->type == REDIS_REPLY_STRING ? rec->element[0]->str : "";
    const char *action = rec->element[1]->type == REDIS_REPLY_STRING ? rec->element[1]->str : "";
    if (strcmp(action, "DELETE") == 0)
        return cli_fail(CLI_USAGE, "resources.%s: Signal resource during DELETE is not supported.",
                        resource);
    const cv_rtype_t *type = cv_rtype_lookup(type_name);
    if (!type || !type->signal)
        return cli_fail(CLI_USAGE, "resources.%s: signal is not supported for resource.", resource);
    cv_rstate_t st;
    memset(&st, 0, sizeof(st));
    st.resource_name = resource;
    json_t *data = rec->element[2]->type == REDIS_REPLY_STRING
                       ? json_loads(rec->element[2]->str, 0, NULL)
                       : NULL;
    st.data = json_is_object(data) ? data : json_object();
    if (st.data != data)
        json_decref(data);
    st.attrs = json_object();
    char err[512] = "";
    int rc = type->signal(&st, details, err, sizeof(err));
    json_decref(st.data);
    json_decref(st.attrs);
    return rc == 0 ? CLI_OK : cli_fail(CLI_USAGE, "%s", err);
}

/* ---- storing and queueing ---- */

static void random_id(char out[33])
{
    unsigned char b[16] = {0};
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(b, 1, sizeof(b), f) != sizeof(b)) {
        /* No randomness: time and pid still tell two sends apart. */
        snprintf(out, 33, "%016llx%08x", (unsigned long long)(cli_monotonic() * 1e6),
                 (unsigned)getpid());
    } else {
        for (size_t i = 0; i < sizeof(b); i++)
            snprintf(out + 2 * i, 3, "%02x", b[i]);
    }
    if (f)
        fclose(f);
}

/* signal_send: CLI_OK with *queue telling whether the job is still to be
 * published (a new signal, or one accepted before and still pending) and
 * *fresh whether this call stored it. */
static int store(cli_t *cli, const char *name, const char *id, const char *resource,
                 const char *signal_id, const char *details, bool *queue, bool *fresh)
{
    char k[3][CV_KEY_MAX];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, id, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_RES, id, 0, resource);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_SIGNALS, id, 0, resource);
    cv_signal_send_keys_t keys = {.stack = k[0], .res = k[1], .signals = k[2]};
    cv_signal_send_args_t args = {.id = signal_id, .details = details};
    redisReply *r = cli_redis_check(
        cli, cv_redis_script_sync(cli->redis, CV_SCRIPT_SIGNAL_SEND, keys.v, args.v, 0, NULL, NULL),
        CLI_R(REDIS_REPLY_ARRAY), "signal_send");
    if (!r)
        return cli_fail(CLI_SERVICE,
                        "the signal may or may not be stored; send it again with "
                        "--id %s",
                        signal_id);
    int rc = CLI_OK;
    switch (cv_reply_answer(CV_SCRIPT_SIGNAL_SEND, r)) {
    case CV_ANSWER_OK:
        *queue = *fresh = true;
        break;
    case CV_ANSWER_DUP:
        *queue = strcmp(cv_reply_str(r, CV_SIGNAL_SEND_R_STATE), "pending") == 0;
        printf("signal %s to %s of stack %s was accepted before (%s)\n", signal_id, resource, name,
               cv_reply_str(r, CV_SIGNAL_SEND_R_STATE));
        break;
    case CV_ANSWER_UNKNOWN:
        rc = cli_fail(CLI_USAGE, "The Stack (%s) could not be found.", name);
        break;
    case CV_ANSWER_GONE:
        rc = cli_fail(CLI_USAGE, "The Resource (%s) is not available.", resource);
        break;
    default:
        rc = cli_fail(CLI_SERVICE, "signal_send answered something unexpected");
    }
    freeReplyObject(r);
    return rc;
}

static int queue_job(cli_t *cli, const char *id, const char *resource, const char *signal_id)
{
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = CV_MSG_SIGNAL;
    m.express = 1;
    snprintf(m.stack, sizeof(m.stack), "%s", id);
    snprintf(m.resource, sizeof(m.resource), "%s", resource);
    snprintf(m.signal, sizeof(m.signal), "%s", signal_id);
    int rc = cli_kafka_connect(cli);
    if (rc == CLI_OK)
        rc = cli_publish_queue(cli, CV_TOPIC_CHECK, &m);
    if (rc == CLI_OK)
        rc = cli_publish_flush(cli, CV_TOPIC_CHECK);
    if (rc != CLI_OK)
        cli_fail(rc, "signal %s is stored but its job was not queued; send it again with --id %s",
                 signal_id, signal_id);
    return rc;
}

/* Heat's Resource.signal: {"unset_hook": HOOK} clears the hook (it must be
 * a hook type and set on the resource: _signal_check_hook) and reaches no
 * type. The clear is hook-clear's (cli_hooks.h): one script, then the
 * CHECK job that lets the resource go on. */
static int clear_hook(cli_t *cli, const char *name, const char *id, const char *resource,
                      const json_t *details)
{
    static const char *const types[] = {"pre-create",  "pre-update",  "pre-delete",
                                        "post-create", "post-update", "post-delete"};
    const char *hook = json_string_value(json_object_get(details, "unset_hook"));
    bool valid = false;
    for (size_t i = 0; hook && i < sizeof(types) / sizeof(types[0]); i++)
        valid = valid || strcmp(hook, types[i]) == 0;
    if (!valid) {
        char *shown = json_dumps(json_object_get(details, "unset_hook"), JSON_ENCODE_ANY);
        int rc = cli_fail(CLI_USAGE, "Invalid hook type \"%s\" for resource \"%s\"",
                          hook ? hook : (shown ? shown : "?"), resource);
        free(shown);
        return rc;
    }
    char cleared[32];
    int rc = cli_hook_clear(cli, id, resource, hook, cleared, sizeof(cleared));
    if (rc == CLI_OK)
        printf("signal cleared hook %s of %s of stack %s\n", cleared, resource, name);
    return rc;
}

static int send_signal(cli_t *cli, const signal_args_t *args, const json_t *details)
{
    const char *name = args->words[0], *resource = args->words[1];
    char id[CV_ID_MAX], signal_id[CV_ID_MAX];
    int rc = find_stack(cli, name, id);
    if (rc != CLI_OK)
        return rc;
    if (json_is_object(details) && json_object_get(details, "unset_hook"))
        return clear_hook(cli, name, id, resource, details);
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_RES, id, 0, resource);
    const char *argv[] = {"HMGET", key, "type", "action", "data", "status"};
    redisReply *rec = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 6, argv, NULL);
    if (!rec)
        return CLI_SERVICE;
    if (rec->elements != 4 || rec->element[3]->type != REDIS_REPLY_STRING)
        rc = no_record(cli, name, id, resource);
    else
        rc = check_signal(rec, resource, details);
    freeReplyObject(rec);
    if (rc != CLI_OK)
        return rc;
    if (args->id)
        snprintf(signal_id, sizeof(signal_id), "%s", args->id);
    else
        random_id(signal_id);
    char *text = json_dumps(details, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    if (!text)
        return cli_fail(CLI_SERVICE, "out of memory");
    bool queue = false, fresh = false;
    rc = store(cli, name, id, resource, signal_id, text, &queue, &fresh);
    free(text);
    if (rc == CLI_OK && queue)
        rc = queue_job(cli, id, resource, signal_id);
    if (rc == CLI_OK && fresh)
        printf("signal %s sent to %s of stack %s\n", signal_id, resource, name);
    return rc;
}

int cli_cmd_signal(cli_t *cli, int argc, char **argv)
{
    signal_args_t args = {{NULL, NULL}, NULL, NULL};
    int rc = cli_parse_args(argc, argv, "signal", signal_opts, apply_opt, &args);
    if (rc == CLI_HELP) {
        fputs(cli_signal_usage, stdout);
        return CLI_OK;
    }
    if (rc != CLI_OK)
        return rc;
    if (!args.words[1])
        return cli_usage_error("signal", "expected NAME and RESOURCE");
    json_error_t jerr;
    json_t *details = args.data ? json_loads(args.data, JSON_DECODE_ANY, &jerr) : json_null();
    if (!details)
        return cli_usage_error("signal", "--data: not JSON: %s (column %d)", jerr.text,
                               jerr.column);
    rc = cli_redis_connect(cli);
    if (rc == CLI_OK)
        rc = send_signal(cli, &args, details);
    json_decref(details);
    return rc;
}
