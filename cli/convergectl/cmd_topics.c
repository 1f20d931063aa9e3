/*
 * convergectl topics: checks, and with --create creates, the Kafka topics
 * Converge uses, through the Admin API of librdkafka. What is wanted and
 * what is wrong is cli_topics.c's; this file talks to Kafka.
 *
 * Metadata is always asked for all topics, never for the three by name: a
 * broker that auto-creates topics would create a named one on the spot,
 * with its own defaults.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_io.h"

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METADATA_MS 5000
#define CREATE_MS 30000
#define LEADERS_S 30.0
#define RETRY_MS 200

const char cli_topics_usage[] =
    "usage: convergectl topics [--create] [--partitions N] [--replication-factor R]\n"
    "                          [--min-insync-replicas M] [-o json|text]\n"
    "\n"
    "Checks the Kafka topics Converge uses: converge.check and converge.observe\n"
    "(the workers' jobs), converge.check.express and converge.observe.express (the\n"
    "jobs of small stacks, taken first; N partitions each) and converge.dead (dead\n"
    "letters, 1 partition). Each must exist, with N partitions when --partitions is\n"
    "given, and every partition must have a leader. With --create, the missing ones\n"
    "are created first (existing ones are never changed; nothing is created when one\n"
    "has another partition count) and their leaders waited for (30 s at most). Run\n"
    "it once against a Kafka cluster of your own, before the workers.\n"
    "\n"
    "  --create                 create the topics that are missing\n"
    "  --partitions N           partitions of each job topic\n"
    "                           (default: any when checking, 8 when creating)\n"
    "  --replication-factor R   replicas of each partition of a new topic (default 3\n"
    "                           on a cluster of 3 brokers or more, else every broker)\n"
    "  --min-insync-replicas M  min.insync.replicas of a new topic (default 2 when\n"
    "                           R >= 3: a job acknowledged to a worker (acks=all)\n"
    "                           survives the loss of one broker; else 1)\n"
    "  -o, --output F           json or text (default text)\n"
    "  -h, --help               show this help\n"
    "\n"
    "Text: a line per topic. JSON: a list of {\"topic\", \"exists\", \"partitions\",\n"
    "\"replication_factor\", \"leaders\", \"created\"}.\n"
    "\n"
    "Exit status: 0 every topic as wanted; 2 usage error; 3 cannot reach Kafka or\n"
    "Kafka refused to create a topic; 4 a topic is missing, has another partition\n"
    "count, or has a partition without a leader (each named on stderr).\n";

enum { OPT_CREATE = 100, OPT_PARTITIONS, OPT_REPLICATION, OPT_MIN_INSYNC };

static const cli_opt_t topics_opts[] = {
    CLI_HELP_OPT,
    CLI_OUTPUT_OPT,
    {OPT_CREATE, "--create", NULL, false},
    {OPT_PARTITIONS, "--partitions", NULL, true},
    {OPT_REPLICATION, "--replication-factor", NULL, true},
    {OPT_MIN_INSYNC, "--min-insync-replicas", NULL, true},
    CLI_OPTS_END,
};

typedef struct topics_args {
    bool json, create;
    int partitions, replication, min_insync; /* 0: not given */
} topics_args_t;

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */
/* ------------------------------------------------------------------------ */

static int parse_count(const cli_args_t *a, const char *opt, int max, int *out)
{
    char *end;
    long v = a->arg[0] >= '0' && a->arg[0] <= '9' ? strtol(a->arg, &end, 10) : 0;
    if (v < 1 || v > max || *end)
        return cli_usage_error(a->cmd, "%s: expected a number from 1 to %d, not '%s'", opt, max,
                               a->arg);
    *out = (int)v;
    return CLI_OK;
}

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    topics_args_t *out = ctx;
    switch (id) {
    case CLI_ARG_WORD:
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
    case CLI_OPT_OUTPUT:
        return cli_parse_output(a, &out->json);
    case OPT_CREATE:
        out->create = true;
        return CLI_OK;
    case OPT_PARTITIONS:
        return parse_count(a, "--partitions", 10000, &out->partitions);
    case OPT_REPLICATION:
        return parse_count(a, "--replication-factor", 100, &out->replication);
    case OPT_MIN_INSYNC:
        return parse_count(a, "--min-insync-replicas", 100, &out->min_insync);
    default:
        return CLI_OK;
    }
}

static int parse_args(int argc, char **argv, topics_args_t *out)
{
    int rc = cli_parse_args(argc, argv, "topics", topics_opts, apply_opt, out);
    if (rc != CLI_OK)
        return rc;
    if (!out->create && (out->replication || out->min_insync))
        return cli_usage_error("topics", "--replication-factor and --min-insync-replicas are "
                                         "settings of new topics: give them with --create");
    if (out->replication && out->min_insync > out->replication)
        return cli_usage_error("topics", "--min-insync-replicas %d is more than the %d replicas",
                               out->min_insync, out->replication);
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* Kafka                                                                    */
/* ------------------------------------------------------------------------ */

/* Reads the metadata of all topics into `t`; the number of brokers in
 * *brokers. */
static int read_topics(cli_t *cli, rd_kafka_t *rk, cli_topic_t t[CLI_NTOPICS], int *brokers)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &md, METADATA_MS);
    if (err || !md || md->broker_cnt == 0) {
        if (md)
            rd_kafka_metadata_destroy(md);
        return cli_fail(CLI_SERVICE, "cannot reach Kafka at %s: %s", cli->opts.kafka,
                        err ? rd_kafka_err2str(err) : "no brokers");
    }
    *brokers = md->broker_cnt;
    for (int i = 0; i < CLI_NTOPICS; i++) {
        t[i].exists = false;
        for (int k = 0; k < md->topic_cnt; k++) {
            const struct rd_kafka_metadata_topic *mt = &md->topics[k];
            if (strcmp(mt->topic, t[i].name) != 0 || mt->err || mt->partition_cnt == 0)
                continue;
            t[i].exists = true;
            t[i].partitions = mt->partition_cnt;
            t[i].replicas = mt->partitions[0].replica_cnt;
            t[i].leaders = true;
            for (int p = 0; p < mt->partition_cnt; p++)
                if (mt->partitions[p].leader < 0)
                    t[i].leaders = false;
        }
    }
    rd_kafka_metadata_destroy(md);
    return CLI_OK;
}

static int create_result(cli_t *cli, rd_kafka_event_t *ev, cli_topic_t t[CLI_NTOPICS])
{
    if (rd_kafka_event_error(ev))
        return cli_fail(CLI_SERVICE, "Kafka at %s did not create the topics: %s", cli->opts.kafka,
                        rd_kafka_event_error_string(ev));
    size_t n = 0;
    const rd_kafka_topic_result_t **res =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
    for (size_t r = 0; r < n; r++) {
        rd_kafka_resp_err_t err = rd_kafka_topic_result_error(res[r]);
        const char *name = rd_kafka_topic_result_name(res[r]);
        if (err && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
            return cli_fail(CLI_SERVICE, "Kafka at %s refused to create %s: %s", cli->opts.kafka,
                            name, rd_kafka_topic_result_error_string(res[r]));
        for (int i = 0; i < CLI_NTOPICS && !err; i++)
            if (strcmp(t[i].name, name) == 0)
                t[i].created = true;
    }
    return CLI_OK;
}

/* Asks Kafka to create the topics that do not exist. A topic that another
 * client created meanwhile (TOPIC_ALREADY_EXISTS) is fine. */
static int create_missing(cli_t *cli, rd_kafka_t *rk, cli_topic_t t[CLI_NTOPICS], int rf,
                          int min_insync)
{
    rd_kafka_NewTopic_t *nt[CLI_NTOPICS];
    int n = 0, rc = CLI_OK;
    char err[512], isr[16];
    snprintf(isr, sizeof(isr), "%d", min_insync);
    for (int i = 0; i < CLI_NTOPICS && rc == CLI_OK; i++) {
        if (t[i].exists)
            continue;
        nt[n] = rd_kafka_NewTopic_new(t[i].name, t[i].create, rf, err, sizeof(err));
        if (!nt[n])
            rc = cli_fail(CLI_USAGE, "topic %s: %s", t[i].name, err);
        else if (rd_kafka_NewTopic_set_config(nt[n++], "min.insync.replicas", isr))
            rc = cli_fail(CLI_USAGE, "topic %s: cannot set min.insync.replicas", t[i].name);
    }
    if (rc == CLI_OK && n > 0) {
        rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
        rd_kafka_AdminOptions_set_request_timeout(o, CREATE_MS, err, sizeof(err));
        rd_kafka_AdminOptions_set_operation_timeout(o, CREATE_MS, err, sizeof(err));
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_CreateTopics(rk, nt, (size_t)n, o, q);
        rd_kafka_event_t *ev = rd_kafka_queue_poll(q, CREATE_MS + METADATA_MS);
        rc = ev ? create_result(cli, ev, t)
                : cli_fail(CLI_SERVICE, "Kafka at %s did not answer the creation of the topics",
                           cli->opts.kafka);
        if (ev)
            rd_kafka_event_destroy(ev);
        rd_kafka_queue_destroy(q);
        rd_kafka_AdminOptions_destroy(o);
    }
    rd_kafka_NewTopic_destroy_array(nt, (size_t)n);
    return rc;
}

/* A topic just created shows in the metadata, and gets its leaders, a
 * moment later; a partition count differs for good. */
static bool settling(const cli_topic_t t[CLI_NTOPICS])
{
    for (int i = 0; i < CLI_NTOPICS; i++)
        if (!t[i].exists || !t[i].leaders)
            return true;
    return false;
}

/* Reads the metadata until no topic is settling, LEADERS_S at most. */
static int await_leaders(cli_t *cli, rd_kafka_t *rk, cli_topic_t t[CLI_NTOPICS])
{
    double deadline = cli_monotonic() + LEADERS_S;
    int brokers, rc;
    while ((rc = read_topics(cli, rk, t, &brokers)) == CLI_OK && settling(t) &&
           cli_monotonic() < deadline)
        rd_kafka_poll(rk, RETRY_MS);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

static void print_topics(const cli_topic_t t[CLI_NTOPICS], bool json)
{
    if (json) {
        json_t *a = json_array();
        for (int i = 0; i < CLI_NTOPICS; i++)
            json_array_append_new(
                a, json_pack("{s:s, s:b, s:i, s:i, s:b, s:b}", "topic", t[i].name, "exists",
                             t[i].exists, "partitions", t[i].exists ? t[i].partitions : 0,
                             "replication_factor", t[i].exists ? t[i].replicas : 0, "leaders",
                             t[i].exists && t[i].leaders, "created", t[i].created));
        json_dumpf(a, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(a);
        return;
    }
    for (int i = 0; i < CLI_NTOPICS; i++) {
        if (!t[i].exists) {
            printf("%-25s missing\n", t[i].name);
            continue;
        }
        printf("%-25s %3d partition(s)  replication factor %d  %s%s\n", t[i].name, t[i].partitions,
               t[i].replicas, t[i].leaders ? "every partition led" : "a partition without a leader",
               t[i].created ? "  (created)" : "");
    }
}

/* Each problem on stderr; CLI_TIMEOUT when there is one. */
static int report_problems(const cli_topic_t t[CLI_NTOPICS])
{
    char buf[256];
    int rc = CLI_OK;
    for (int i = 0; i < CLI_NTOPICS; i++)
        if (cli_topic_problem(&t[i], buf, sizeof(buf)))
            rc = cli_fail(CLI_TIMEOUT, "%s", buf);
    return rc;
}

/* ------------------------------------------------------------------------ */

static int new_client(cli_t *cli, rd_kafka_t **out)
{
    char err[512];
    rd_kafka_conf_t *conf = cv_kafka_conf_new(&cli->opts, NULL, err, sizeof(err));
    if (!conf)
        return cli_fail(CLI_USAGE, "%s", err);
    *out = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (!*out) {
        rd_kafka_conf_destroy(conf);
        return cli_fail(CLI_SERVICE, "cannot create a Kafka client: %s", err);
    }
    return CLI_OK;
}

static int run_topics(cli_t *cli, const topics_args_t *args)
{
    static const char *const names[CLI_NTOPICS] = {CV_TOPIC_CHECK, CV_TOPIC_OBSERVE,
                                                   CV_TOPIC_CHECK_EXPRESS, CV_TOPIC_OBSERVE_EXPRESS,
                                                   CV_TOPIC_DEAD};
    cli_topic_t t[CLI_NTOPICS];
    cli_topics_init(t, names, args->partitions);
    rd_kafka_t *rk = NULL;
    int brokers = 0;
    int rc = new_client(cli, &rk);
    if (rc == CLI_OK)
        rc = read_topics(cli, rk, t, &brokers);
    if (rc == CLI_OK && args->create && !cli_topics_any_differ(t)) {
        int rf = args->replication ? args->replication : cli_topics_default_replication(brokers);
        int isr = args->min_insync ? args->min_insync : cli_topics_default_min_insync(rf);
        if (rf > brokers)
            rc = cli_fail(CLI_USAGE, "--replication-factor %d: Kafka at %s has %d broker(s)", rf,
                          cli->opts.kafka, brokers);
        else if (isr > rf)
            rc = cli_fail(CLI_USAGE, "--min-insync-replicas %d is more than the %d replicas", isr,
                          rf);
        if (rc == CLI_OK)
            rc = create_missing(cli, rk, t, rf, isr);
        if (rc == CLI_OK)
            rc = await_leaders(cli, rk, t);
    }
    if (rc == CLI_OK) {
        print_topics(t, args->json);
        rc = report_problems(t);
    }
    if (rk)
        rd_kafka_destroy(rk);
    return rc;
}

int cli_cmd_topics(cli_t *cli, int argc, char **argv)
{
    topics_args_t args = {0};
    int rc = parse_args(argc, argv, &args);
    if (rc == CLI_HELP) {
        fputs(cli_topics_usage, stdout);
        return CLI_OK;
    }
    return rc == CLI_OK ? run_topics(cli, &args) : rc;
}
