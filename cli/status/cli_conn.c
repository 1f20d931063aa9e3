/*
 * The connections of convergectl: one synchronous Redis context, one Kafka
 * producer without a loop. Every reply is checked here so that commands can
 * treat a non-NULL reply as well formed at the top level.
 */
#include "cli_common.h"
#include "cli_output.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KAFKA_CHECK_MS 5000
#define KAFKA_FLUSH_MS 10000

/* ------------------------------------------------------------------------ */
/* Redis                                                                    */
/* ------------------------------------------------------------------------ */

int cli_redis_connect(cli_t *cli)
{
    char err[512];
    cli->redis = cv_redis_sync_open(&cli->opts, NULL, err, sizeof(err));
    if (!cli->redis)
        return cli_fail(CLI_SERVICE, "%s", err);
    return CLI_OK;
}

static const char *reply_type_name(int type)
{
    switch (type) {
    case REDIS_REPLY_STRING:
        return "a string";
    case REDIS_REPLY_ARRAY:
        return "an array";
    case REDIS_REPLY_INTEGER:
        return "an integer";
    case REDIS_REPLY_NIL:
        return "nil";
    case REDIS_REPLY_STATUS:
        return "a status";
    default:
        return "an unexpected reply type";
    }
}

redisReply *cli_redis_check(cli_t *cli, redisReply *r, unsigned types, const char *what)
{
    const cv_opts_t *o = &cli->opts;
    if (!r) {
        cli_fail(CLI_SERVICE, "lost Redis at %s:%d during %s: %s", o->redis_host, o->redis_port,
                 what,
                 cv_redis_sync_error(cli->redis)[0] ? cv_redis_sync_error(cli->redis) : "no reply");
        return NULL;
    }
    if (types & CLI_R(r->type))
        return r;
    if (r->type == REDIS_REPLY_ERROR)
        cli_fail(CLI_SERVICE, "Redis at %s:%d refused %s: %s", o->redis_host, o->redis_port, what,
                 r->str);
    else
        cli_fail(CLI_SERVICE, "Redis at %s:%d answered %s to %s", o->redis_host, o->redis_port,
                 reply_type_name(r->type), what);
    freeReplyObject(r);
    return NULL;
}

/* cli_redis_check naming the request by its command and first argument. */
static redisReply *check_argv(cli_t *cli, redisReply *r, unsigned types, int argc,
                              const char *const *argv)
{
    char what[CV_KEY_MAX + 32];
    snprintf(what, sizeof(what), "%s %s", argv[0], argc > 1 ? argv[1] : "");
    return cli_redis_check(cli, r, types, what);
}

redisReply *cli_redis_argv(cli_t *cli, unsigned types, int argc, const char **argv,
                           const size_t *lens)
{
    return check_argv(cli, cv_redis_sync_argv(cli->redis, argc, argv, lens), types, argc, argv);
}

/* Appends each command on the connection serving its key, then reads one
 * reply per command appended, in order: each connection answers in the
 * order it was given, so reply i is the next one of command i's (NULL when
 * the connection failed). A command whose slot moved meanwhile (MOVED) is
 * sent again on its own. How many were appended. */
static size_t pipe_round_trip(cli_t *cli, size_t n, const cli_redis_cmd_t *cmds,
                              redisReply **replies)
{
    redisContext **via = calloc(n ? n : 1, sizeof(*via));
    size_t sent = 0;
    for (; via && sent < n; sent++) {
        cli_redis_cmd_t c = cmds[sent]; /* hiredis takes a non-const array */
        via[sent] = cv_redis_sync_context(cli->redis, c.argc > 1 ? c.argv[1] : NULL);
        if (!via[sent] || redisAppendCommandArgv(via[sent], c.argc, c.argv, NULL) != REDIS_OK)
            break;
    }
    for (size_t i = 0; i < sent; i++) {
        void *r = NULL;
        replies[i] = redisGetReply(via[i], &r) == REDIS_OK ? r : NULL;
        if (replies[i] && replies[i]->type == REDIS_REPLY_ERROR &&
            strncmp(replies[i]->str, "MOVED ", 6) == 0) {
            freeReplyObject(replies[i]);
            cli_redis_cmd_t c = cmds[i];
            replies[i] = cv_redis_sync_argv(cli->redis, c.argc, c.argv, NULL);
        }
    }
    free(via);
    return sent;
}

int cli_redis_pipeline(cli_t *cli, size_t n, const cli_redis_cmd_t *cmds, unsigned types,
                       redisReply **replies)
{
    size_t sent = pipe_round_trip(cli, n, cmds, replies);
    for (size_t i = sent; i < n; i++)
        replies[i] = NULL; /* not sent: reported as lost */
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        if (ok)
            replies[i] = check_argv(cli, replies[i], types, cmds[i].argc, cmds[i].argv);
        ok = ok && replies[i];
    }
    if (ok)
        return CLI_OK;
    for (size_t i = 0; i < n; i++) {
        freeReplyObject(replies[i]);
        replies[i] = NULL;
    }
    return CLI_SERVICE;
}

bool cli_reply_is_hash(cli_t *cli, const redisReply *r, const char *key)
{
    bool ok = r->elements % 2 == 0;
    for (size_t i = 0; ok && i < r->elements; i++)
        ok = r->element[i]->type == REDIS_REPLY_STRING;
    if (!ok)
        cli_fail(CLI_SERVICE, "Redis at %s:%d answered a malformed HGETALL %s",
                 cli->opts.redis_host, cli->opts.redis_port, key);
    return ok;
}

int cli_key_exists(cli_t *cli, const char *key, bool *exists)
{
    const char *argv[] = {"EXISTS", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 2, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    *exists = r->integer == 1;
    freeReplyObject(r);
    return CLI_OK;
}

int cli_lookup(cli_t *cli, const char *name, char id[CV_ID_MAX])
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACKS, NULL, 0, NULL);
    const char *argv[] = {"HGET", key, name};
    redisReply *r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    int rc = CLI_OK;
    id[0] = '\0';
    if (r->type == REDIS_REPLY_NIL)
        rc = CLI_OK; /* no such name: the caller looks further */
    else if (!cli_valid_id(r->str))
        rc = cli_fail(CLI_SERVICE, "%s maps stack %s to a malformed id \"%.64s\"", key, name,
                      r->str);
    else
        snprintf(id, CV_ID_MAX, "%s", r->str);
    freeReplyObject(r);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Kafka                                                                    */
/* ------------------------------------------------------------------------ */

int cli_kafka_connect(cli_t *cli)
{
    char err[512];
    int rc = cv_producer_new(&cli->producer, NULL, &cli->opts, err, sizeof(err));
    if (rc) {
        cli->producer = NULL;
        return cli_fail(rc == CV_EINVAL ? CLI_USAGE : CLI_SERVICE, "%s", err);
    }
    if (cv_producer_check(cli->producer, cli->opts.kafka, KAFKA_CHECK_MS, err, sizeof(err)) != 0)
        return cli_fail(CLI_SERVICE, "%s", err);
    return CLI_OK;
}

/* Acknowledgements may come after a flush timed out (while the producer is
 * freed), so their counters live as long as the cli, not on the stack. */
static void on_delivery(void *ud, int err)
{
    cli_t *cli = ud;
    if (err)
        cli->refused++;
    else
        cli->acked++;
}

static int publish_failed(cli_t *cli, const char *topic, const char *why)
{
    return cli_fail(CLI_SERVICE, "cannot publish to Kafka at %s (topic %s): %s", cli->opts.kafka,
                    topic, why);
}

int cli_publish_queue(cli_t *cli, const char *topic, const cv_msg_t *m)
{
    char *buf = NULL, key[CV_ID_MAX + CV_NAME_MAX + 2];
    size_t len = 0, keylen = cv_msg_key(m, key, sizeof(key));
    int rc = cv_msg_encode(m, &buf, &len);
    if (rc)
        return cli_fail(CLI_SERVICE, "cannot encode the %s job: %s", cv_msg_type_name(m->type),
                        cv_strerror(rc));
    rc = cv_producer_send(cli->producer, cv_topic_lane(topic, m->express), key, keylen, buf, len,
                          on_delivery, cli);
    free(buf);
    if (rc)
        return publish_failed(cli, topic, cv_strerror(rc));
    cli->queued++;
    return CLI_OK;
}

int cli_publish_flush(cli_t *cli, const char *topic)
{
    int rc = cv_producer_flush(cli->producer, KAFKA_FLUSH_MS);
    size_t queued = cli->queued, acked = cli->acked, refused = cli->refused;
    cli->queued = cli->acked = cli->refused = 0;
    if (rc == 0 && acked == queued)
        return CLI_OK;
    char why[160];
    if (refused > 0)
        snprintf(why, sizeof(why), "%zu of %zu message(s) refused", refused, queued);
    else if (rc == CV_ETIMEDOUT || rc == 0)
        snprintf(why, sizeof(why), "%zu of %zu message(s) not acknowledged within %d s",
                 queued - acked, queued, KAFKA_FLUSH_MS / 1000);
    else
        snprintf(why, sizeof(why), "%s", cv_strerror(rc));
    return publish_failed(cli, topic, why);
}

int cli_publish_stack(cli_t *cli, const char *id, uint64_t traversal, cv_trav_kind_t kind)
{
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = CV_MSG_STACK;
    m.express = 1; /* a user's action: the expansion leaves the lane when the stack is big */
    snprintf(m.stack, sizeof(m.stack), "%s", id);
    m.traversal = traversal;
    m.kind = (uint8_t)kind;
    int rc = cli_publish_queue(cli, CV_TOPIC_CHECK, &m);
    return rc ? rc : cli_publish_flush(cli, CV_TOPIC_CHECK);
}

void cli_close(cli_t *cli)
{
    if (cli->producer)
        cv_producer_free(cli->producer);
    cv_redis_sync_close(cli->redis);
    cli->producer = NULL;
    cli->redis = NULL;
    cv_opts_free(&cli->opts);
}

json_t *cli_reply_hash(const redisReply *r)
{
    json_t *o = json_object();
    for (size_t i = 0; r && i + 1 < r->elements; i += 2)
        json_object_set_new(o, r->element[i]->str,
                            cli_json_strn(r->element[i + 1]->str, r->element[i + 1]->len));
    return o;
}
