/*
 * convergectl dead: lists the messages the workers dead-lettered to
 * converge.dead, with the reason each was refused.
 *
 * It reads the topic with a plain consumer that is assigned every partition
 * from the beginning and never subscribes or commits: listing dead letters
 * must not move any consumer group's offsets, nor join one. Reading stops
 * when every partition has reported its end (PARTITION_EOF).
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_base.h"
#include "cv_io.h"

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define METADATA_MS 5000
#define READ_DEADLINE_S 10.0
#define POLL_MS 200

const char cli_dead_usage[] =
    "usage: convergectl dead [-o json|text] [--limit N]\n"
    "\n"
    "Lists the messages the workers dead-lettered to the Kafka topic converge.dead\n"
    "(messages that do not decode, or that do not belong on the topic they were\n"
    "read from), oldest first, with the reason each was refused. Reads the whole\n"
    "topic without joining a consumer group or committing anything.\n"
    "\n"
    "Text: one line per message, \"PARTITION:OFFSET  REASON  (N bytes)\".\n"
    "JSON: a list of {\"partition\", \"offset\", \"reason\", \"original_base64\",\n"
    "\"original_len\"}, the original bytes as the worker read them. A message on\n"
    "converge.dead that is not itself a dead letter is listed with the reason\n"
    "\"undecodable dead letter: WHY\" and its own bytes as the original.\n"
    "\n"
    "  -o, --output F  json or text (default text)\n"
    "  --limit N       only the last N messages\n"
    "  -h, --help      show this help\n"
    "\n"
    "Exit status: 0 listed (also when there is none); 2 usage error; 3 cannot\n"
    "reach Kafka; 4 the end of every partition was not reached within 10 s.\n";

enum { OPT_LIMIT = 50 };

static const cli_opt_t dead_opts[] = {
    CLI_HELP_OPT,
    CLI_OUTPUT_OPT,
    {OPT_LIMIT, "--limit", NULL, true},
    CLI_OPTS_END,
};

typedef struct dead_args {
    bool json;
    bool limited;
    size_t limit;
} dead_args_t;

/* One message read from converge.dead. */
typedef struct dead_entry {
    int32_t partition;
    int64_t offset;
    int64_t timestamp; /* ms, or -1 where the broker keeps none (Kafka 0.9) */
    char *reason;
    char *original_base64;
    size_t original_len;
} dead_entry_t;

typedef CV_VEC(dead_entry_t) dead_list_t;

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */
/* ------------------------------------------------------------------------ */

static int parse_limit(const cli_args_t *a, dead_args_t *out)
{
    char *end;
    if (a->arg[0] < '0' || a->arg[0] > '9')
        return cli_usage_error(a->cmd, "--limit: expected a number >= 0, not '%s'", a->arg);
    unsigned long long v = strtoull(a->arg, &end, 10);
    if (*end)
        return cli_usage_error(a->cmd, "--limit: expected a number >= 0, not '%s'", a->arg);
    out->limited = true;
    out->limit = (size_t)v;
    return CLI_OK;
}

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    dead_args_t *out = ctx;
    if (id == CLI_ARG_WORD)
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
    if (id == CLI_OPT_OUTPUT)
        return cli_parse_output(a, &out->json);
    if (id == OPT_LIMIT)
        return parse_limit(a, out);
    return CLI_OK;
}

static int parse_args(int argc, char **argv, dead_args_t *out)
{
    return cli_parse_args(argc, argv, "dead", dead_opts, apply_opt, out);
}

/* ------------------------------------------------------------------------ */
/* Entries                                                                  */
/* ------------------------------------------------------------------------ */

static char *base64(const unsigned char *s, size_t len)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        unsigned b = (unsigned)s[i] << 16;
        if (i + 1 < len)
            b |= (unsigned)s[i + 1] << 8;
        if (i + 2 < len)
            b |= s[i + 2];
        *o++ = digits[(b >> 18) & 63];
        *o++ = digits[(b >> 12) & 63];
        *o++ = i + 1 < len ? digits[(b >> 6) & 63] : '=';
        *o++ = i + 2 < len ? digits[b & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* Decodes one message of converge.dead into an entry; one that is not a
 * well-formed DEAD message is kept too, its own bytes as the original, so
 * that nothing on the topic goes unlisted. */
static int add_entry(dead_list_t *l, const rd_kafka_message_t *rkm)
{
    if (cv_vec_reserve(l, 1) != 0)
        return cli_fail(CLI_SERVICE, "out of memory reading converge.dead");
    char err[256], reason[CV_REASON_MAX + 64];
    cv_msg_t m;
    const char *original = rkm->payload;
    size_t original_len = rkm->len;
    int rc = cv_msg_decode(rkm->payload, rkm->len, &m, err, sizeof(err));
    if (rc == 0 && m.type != CV_MSG_DEAD)
        snprintf(err, sizeof(err), "a %s message, not DEAD", cv_msg_type_name(m.type));
    if (rc == 0 && m.type == CV_MSG_DEAD) {
        snprintf(reason, sizeof(reason), "%s", m.reason);
        original = m.original;
        original_len = m.original_len;
    } else {
        snprintf(reason, sizeof(reason), "undecodable dead letter: %s", err);
    }
    dead_entry_t *e = &l->v[l->n];
    rd_kafka_timestamp_type_t tstype;
    e->partition = rkm->partition;
    e->offset = rkm->offset;
    e->timestamp = rd_kafka_message_timestamp(rkm, &tstype);
    if (tstype == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE)
        e->timestamp = -1;
    e->original_len = original_len;
    e->reason = strdup(reason);
    e->original_base64 = base64((const unsigned char *)original, original_len);
    if (!e->reason || !e->original_base64) {
        free(e->reason);
        free(e->original_base64);
        return cli_fail(CLI_SERVICE, "out of memory reading converge.dead");
    }
    l->n++;
    return CLI_OK;
}

/* Oldest first: by broker timestamp where Kafka keeps one (0.10+), then by
 * partition and offset, the only order Kafka 0.9 knows. */
static int entry_cmp(const void *pa, const void *pb)
{
    const dead_entry_t *a = pa, *b = pb;
    if (a->timestamp != b->timestamp)
        return a->timestamp < b->timestamp ? -1 : 1;
    if (a->partition != b->partition)
        return a->partition < b->partition ? -1 : 1;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static void free_list(dead_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].reason);
        free(l->v[i].original_base64);
    }
    cv_vec_free(l);
}

static void print_entries(const dead_list_t *l, size_t from, bool json)
{
    if (!json) {
        for (size_t i = from; i < l->n; i++)
            printf("%d:%lld  %s  (%zu bytes)\n", (int)l->v[i].partition, (long long)l->v[i].offset,
                   l->v[i].reason, l->v[i].original_len);
        return;
    }
    json_t *doc = json_array();
    for (size_t i = from; i < l->n; i++) {
        const dead_entry_t *e = &l->v[i];
        json_array_append_new(doc, json_pack("{s:i, s:I, s:o, s:s, s:I}", "partition",
                                             (int)e->partition, "offset", (json_int_t)e->offset,
                                             "reason", cli_json_str(e->reason), "original_base64",
                                             e->original_base64, "original_len",
                                             (json_int_t)e->original_len));
    }
    cli_print_json(doc);
    json_decref(doc);
}

/* ------------------------------------------------------------------------ */
/* Kafka                                                                    */
/* ------------------------------------------------------------------------ */

/* A consumer that can be assigned partitions: a group.id is required for
 * that, so a throwaway one is given, but it is never joined (no subscribe)
 * and nothing is ever committed. */
static int new_consumer(cli_t *cli, rd_kafka_t **out)
{
    char group[64], err[512];
    snprintf(group, sizeof(group), "convergectl-dead-%ld-%ld", (long)getpid(), (long)time(NULL));
    const char *const defaults[] = {"group.id",
                                    group,
                                    "enable.auto.commit",
                                    "false",
                                    "enable.auto.offset.store",
                                    "false",
                                    "enable.partition.eof",
                                    "true",
                                    NULL};
    rd_kafka_conf_t *conf = cv_kafka_conf_new(&cli->opts, defaults, err, sizeof(err));
    if (!conf)
        return cli_fail(CLI_USAGE, "%s", err);
    *out = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
    if (!*out) {
        rd_kafka_conf_destroy(conf);
        return cli_fail(CLI_SERVICE, "cannot create a Kafka consumer: %s", err);
    }
    return CLI_OK;
}

/* The partitions of converge.dead, to be read from the beginning; an empty
 * list when the topic does not exist yet (nothing was ever dead-lettered).
 * All topics are asked for, not converge.dead alone, so that asking does
 * not make a broker that auto-creates topics create it. */
static int dead_partitions(cli_t *cli, rd_kafka_t *rk, rd_kafka_topic_partition_list_t **out)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &md, METADATA_MS);
    if (err || !md || md->broker_cnt == 0) {
        if (md)
            rd_kafka_metadata_destroy(md);
        return cli_fail(CLI_SERVICE, "cannot reach Kafka at %s: %s", cli->opts.kafka,
                        err ? rd_kafka_err2str(err) : "no brokers");
    }
    int rc = CLI_OK;
    *out = rd_kafka_topic_partition_list_new(0);
    for (int t = 0; t < md->topic_cnt; t++) {
        const struct rd_kafka_metadata_topic *mt = &md->topics[t];
        if (strcmp(mt->topic, CV_TOPIC_DEAD) != 0)
            continue;
        if (mt->err && mt->err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
            rc = cli_fail(CLI_SERVICE, "Kafka at %s has no usable %s: %s", cli->opts.kafka,
                          CV_TOPIC_DEAD, rd_kafka_err2str(mt->err));
            break;
        }
        for (int p = 0; p < mt->partition_cnt; p++)
            rd_kafka_topic_partition_list_add(*out, CV_TOPIC_DEAD, mt->partitions[p].id)->offset =
                RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_metadata_destroy(md);
    return rc;
}

/* Reads every assigned partition up to its end, within the deadline. */
static int read_all(cli_t *cli, rd_kafka_t *rk, rd_kafka_topic_partition_list_t *parts,
                    dead_list_t *l)
{
    int left = parts->cnt;
    bool *at_end = calloc((size_t)parts->cnt + 1, sizeof(*at_end));
    char last_error[256] = "";
    if (!at_end)
        return cli_fail(CLI_SERVICE, "out of memory reading converge.dead");
    double deadline = cli_monotonic() + READ_DEADLINE_S;
    int rc = CLI_OK;
    while (rc == CLI_OK && left > 0) {
        double now = cli_monotonic();
        if (now >= deadline) {
            rc = cli_fail(CLI_TIMEOUT,
                          "read converge.dead at %s for %.0f s without reaching the end of %d of "
                          "its %d partition(s)%s%s",
                          cli->opts.kafka, READ_DEADLINE_S, left, parts->cnt,
                          last_error[0] ? "; last error: " : "", last_error);
            break;
        }
        int wait_ms = (int)((deadline - now) * 1000) + 1;
        rd_kafka_message_t *rkm = rd_kafka_consumer_poll(rk, wait_ms < POLL_MS ? wait_ms : POLL_MS);
        if (!rkm)
            continue;
        if (rkm->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            for (int i = 0; i < parts->cnt; i++) {
                if (parts->elems[i].partition == rkm->partition && !at_end[i]) {
                    at_end[i] = true;
                    left--;
                }
            }
        } else if (rkm->err) {
            snprintf(last_error, sizeof(last_error), "%s", rd_kafka_message_errstr(rkm));
        } else {
            rc = add_entry(l, rkm);
        }
        rd_kafka_message_destroy(rkm);
    }
    free(at_end);
    return rc;
}

static int list_dead(cli_t *cli, const dead_args_t *args)
{
    rd_kafka_t *rk = NULL;
    rd_kafka_topic_partition_list_t *parts = NULL;
    dead_list_t l = {0};
    int rc = new_consumer(cli, &rk);
    if (rc == CLI_OK)
        rc = dead_partitions(cli, rk, &parts);
    if (rc == CLI_OK && parts->cnt > 0) {
        rd_kafka_resp_err_t err = rd_kafka_assign(rk, parts);
        if (err)
            rc = cli_fail(CLI_SERVICE, "cannot read %s at %s: %s", CV_TOPIC_DEAD, cli->opts.kafka,
                          rd_kafka_err2str(err));
        else
            rc = read_all(cli, rk, parts, &l);
    }
    if (rc == CLI_OK) {
        if (l.n > 1)
            qsort(l.v, l.n, sizeof(*l.v), entry_cmp);
        size_t from = args->limited && args->limit < l.n ? l.n - args->limit : 0;
        print_entries(&l, from, args->json);
    }
    free_list(&l);
    if (parts)
        rd_kafka_topic_partition_list_destroy(parts);
    if (rk) {
        rd_kafka_assign(rk, NULL);
        rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    }
    return rc;
}

int cli_cmd_dead(cli_t *cli, int argc, char **argv)
{
    dead_args_t args = {0};
    int rc = parse_args(argc, argv, &args);
    if (rc == CLI_HELP) {
        fputs(cli_dead_usage, stdout);
        return CLI_OK;
    }
    return rc == CLI_OK ? list_dead(cli, &args) : rc;
}
