/*
 * convergectl topics: checks, or with --create makes, the Kafka topics
 * Converge uses, through librdkafka's Admin API (CreateTopics) and the
 * cluster's metadata. What to create and what differs is decided by
 * cli_topics.h from a snapshot of the metadata; this file only talks to
 * Kafka and prints.
 *
 * The metadata is always asked for every topic, never for Converge's by
 * name: a broker with auto.create.topics.enable creates a topic that a
 * client merely asks about, with the broker's default partition count.
 */
#include "cli_commands.h"
#include "cli_output.h"
#include "cli_topics.h"

#include "cv_kafka.h"

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METADATA_MS 5000
#define CREATE_MS 15000
#define LEADERS_DEADLINE_S 30.0
#define LEADERS_POLL_MS 200

/* Topics not as asked: exit 4, the code of "not as it should be in time"
 * that scripts already test for. */
#define TOPICS_DIFFER CLI_TIMEOUT

const char cli_topics_usage[] =
    "usage: convergectl topics [--create] [--partitions N] [--replication-factor R]\n"
    "                          [--min-insync-replicas M] [-o json|text]\n"
    "\n"
    "Checks the Kafka topics Converge uses: converge.check and converge.observe\n"
    "(the jobs of the engines and observers) and converge.dead (dead letters, one\n"
    "partition). For each: whether it exists, its partition count, its replication\n"
    "factor (the replicas of partition 0) and whether every partition has a leader.\n"
    "\n"
    "With --create, creates those missing (never deletes nor alters one), then\n"
    "waits up to 30 s until every partition of the three has a leader, and prints\n"
    "the same report. Nothing is created when an existing topic differs from what\n"
    "was asked. Run it again: a topic that exists is left alone, so a second run is\n"
    "a no-op.\n"
    "\n"
    "  --create                  create the missing topics\n"
    "  --partitions N            partitions of converge.check and converge.observe\n"
    "                            (created with 8 when not given); when given, an\n"
    "                            existing topic with another count is an error\n"
    "                            (converge.dead: 1)\n"
    "  --replication-factor R    replicas of each partition (created with min(3,\n"
    "                            brokers) when not given); when given, an existing\n"
    "                            topic with another factor is an error\n"
    "  --min-insync-replicas M   min.insync.replicas of the topics created (default\n"
    "                            2 from a replication factor of 3, else 1: with\n"
    "                            the workers' acks=all, a job is acknowledged once\n"
    "                            2 replicas have it, so losing one broker loses no\n"
    "                            acknowledged job and the topic stays writable)\n"
    "  -o, --output F            json or text (default text)\n"
    "  -h, --help                show this help\n"
    "\n"
    "Text: a line per topic. JSON: a list of {\"topic\", \"partitions\",\n"
    "\"replication_factor\" (null when missing), \"leaders\", \"exists\", \"created\"}.\n"
    "What is not as asked is named on stderr.\n"
    "\n"
    "Exit status: 0 every topic exists (with the partitions and replication factor\n"
    "asked, where given) and every partition has a leader; 2 usage error, or a\n"
    "replication the cluster cannot meet; 3 cannot reach Kafka, or it refused to\n"
    "create a topic; 4 a topic is missing, differs, or has a partition without a\n"
    "leader.\n";

enum { OPT_CREATE = 50, OPT_PARTITIONS, OPT_REPLICATION, OPT_MIN_INSYNC };

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
    bool json;
    bool create;
    cli_topics_ask_t ask;
} topics_args_t;

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */
/* ------------------------------------------------------------------------ */

/* A count from 1 to `max` (Kafka's own limits: replicas are an int16). */
static int parse_count(const cli_args_t *a, long max, int *out)
{
    char *end = NULL;
    long v = 0;
    if (a->arg[0] >= '0' && a->arg[0] <= '9')
        v = strtol(a->arg, &end, 10);
    if (v < 1 || v > max || *end)
        return cli_usage_error(a->cmd, "%s: expected a number from 1 to %ld, not '%s'", a->name,
                               max, a->arg);
    *out = (int)v;
    return CLI_OK;
}

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    topics_args_t *out = ctx;
    switch (id) {
    case CLI_OPT_OUTPUT:
        return cli_parse_output(a, &out->json);
    case OPT_CREATE:
        out->create = true;
        return CLI_OK;
    case OPT_PARTITIONS:
        return parse_count(a, 1000000, &out->ask.partitions);
    case OPT_REPLICATION:
        return parse_count(a, 32767, &out->ask.replication_factor);
    case OPT_MIN_INSYNC:
        return parse_count(a, 32767, &out->ask.min_insync);
    default:
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
    }
}

/* ------------------------------------------------------------------------ */
/* Metadata                                                                 */
/* ------------------------------------------------------------------------ */

/* The cluster's metadata and the view of it cli_topics.h reads (names and
 * errors point into `md`). */
typedef struct snapshot {
    const struct rd_kafka_metadata *md;
    cli_topic_md_t *topics;
    cli_topics_md_t view;
} snapshot_t;

static void snapshot_free(snapshot_t *s)
{
    if (s->md)
        rd_kafka_metadata_destroy(s->md);
    free(s->topics);
    memset(s, 0, sizeof(*s));
}

static void view_topic(const struct rd_kafka_metadata_topic *mt, cli_topic_md_t *t)
{
    t->name = mt->topic;
    t->partitions = mt->partition_cnt;
    t->replication_factor = 0;
    t->leaderless = 0;
    t->error = mt->err ? rd_kafka_err2str(mt->err) : NULL;
    for (int p = 0; p < mt->partition_cnt; p++) {
        if (mt->partitions[p].id == 0)
            t->replication_factor = mt->partitions[p].replica_cnt;
        if (mt->partitions[p].leader < 0)
            t->leaderless++;
    }
}

/* Every topic's metadata: CLI_OK or CLI_SERVICE (reported). A topic listed
 * with UNKNOWN_TOPIC_OR_PART does not exist and is left out. */
static int snapshot_take(cli_t *cli, rd_kafka_t *rk, snapshot_t *s)
{
    memset(s, 0, sizeof(*s));
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &s->md, METADATA_MS);
    if (err || !s->md || s->md->broker_cnt == 0) {
        snapshot_free(s);
        return cli_fail(CLI_SERVICE, "cannot reach Kafka at %s: %s", cli->opts.kafka,
                        err ? rd_kafka_err2str(err) : "no brokers");
    }
    s->topics = calloc((size_t)s->md->topic_cnt + 1, sizeof(*s->topics));
    if (!s->topics) {
        snapshot_free(s);
        return cli_fail(CLI_SERVICE, "out of memory reading Kafka's metadata");
    }
    for (int i = 0; i < s->md->topic_cnt; i++) {
        const struct rd_kafka_metadata_topic *mt = &s->md->topics[i];
        if (mt->err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
            view_topic(mt, &s->topics[s->view.ntopics++]);
    }
    s->view.brokers = s->md->broker_cnt;
    s->view.topics = s->topics;
    return CLI_OK;
}

/* Checks the topics against the cluster now; keeps the rows' created flags. */
static int check_now(cli_t *cli, rd_kafka_t *rk, const cli_topics_ask_t *ask, int *brokers,
                     cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    snapshot_t s;
    int rc = snapshot_take(cli, rk, &s);
    if (rc != CLI_OK)
        return rc;
    bool created[CLI_TOPICS_COUNT];
    for (size_t i = 0; i < CLI_TOPICS_COUNT; i++)
        created[i] = rows[i].created;
    cli_topics_check(&s.view, ask, rows);
    for (size_t i = 0; i < CLI_TOPICS_COUNT; i++)
        rows[i].created = created[i];
    *brokers = s.view.brokers;
    snapshot_free(&s);
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* Creating                                                                 */
/* ------------------------------------------------------------------------ */

/* Kafka refused the request itself as invalid: what was asked cannot be. */
static bool is_invalid_request(rd_kafka_resp_err_t err)
{
    return err == RD_KAFKA_RESP_ERR_INVALID_PARTITIONS ||
           err == RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR ||
           err == RD_KAFKA_RESP_ERR_INVALID_CONFIG || err == RD_KAFKA_RESP_ERR_POLICY_VIOLATION;
}

static rd_kafka_NewTopic_t *new_topic(const char *name, int partitions,
                                      const cli_topics_create_t *set, char *err, size_t errsize)
{
    char value[16];
    rd_kafka_NewTopic_t *nt =
        rd_kafka_NewTopic_new(name, partitions, set->replication_factor, err, errsize);
    if (!nt)
        return NULL;
    snprintf(value, sizeof(value), "%d", set->min_insync);
    rd_kafka_resp_err_t e = rd_kafka_NewTopic_set_config(nt, "min.insync.replicas", value);
    if (e) {
        snprintf(err, errsize, "min.insync.replicas=%s: %s", value, rd_kafka_err2str(e));
        rd_kafka_NewTopic_destroy(nt);
        return NULL;
    }
    return nt;
}

/* Marks the rows of the topics created; a topic that already exists (made
 * by someone else since the check) is success too. */
static int read_results(cli_t *cli, rd_kafka_event_t *ev, cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    size_t n = 0;
    const rd_kafka_topic_result_t **res =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
    int rc = CLI_OK;
    for (size_t r = 0; r < n; r++) {
        const char *name = rd_kafka_topic_result_name(res[r]);
        rd_kafka_resp_err_t err = rd_kafka_topic_result_error(res[r]);
        for (size_t i = 0; i < CLI_TOPICS_COUNT; i++)
            if (!err && strcmp(rows[i].topic, name) == 0)
                rows[i].created = true;
        if (err && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS && rc == CLI_OK) {
            const char *why = rd_kafka_topic_result_error_string(res[r]);
            rc = cli_fail(is_invalid_request(err) ? CLI_USAGE : CLI_SERVICE,
                          "Kafka at %s refused to create %s: %s", cli->opts.kafka, name,
                          why ? why : rd_kafka_err2str(err));
        }
    }
    return rc;
}

/* Sends one CreateTopics request for the `n` topics and reads its answer. */
static int create_request(cli_t *cli, rd_kafka_t *rk, rd_kafka_NewTopic_t **nts, size_t n,
                          cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    char err[512];
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    /* The broker answers once the controller has made the topics. */
    rd_kafka_AdminOptions_set_request_timeout(ao, CREATE_MS - 1000, err, sizeof(err));
    rd_kafka_AdminOptions_set_operation_timeout(ao, CREATE_MS - 2000, err, sizeof(err));
    rd_kafka_CreateTopics(rk, nts, n, ao, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, CREATE_MS);
    int rc;
    if (!ev)
        rc = cli_fail(CLI_SERVICE, "Kafka at %s did not answer the creation of topics within %d s",
                      cli->opts.kafka, CREATE_MS / 1000);
    else if (rd_kafka_event_error(ev))
        rc = cli_fail(CLI_SERVICE, "cannot create topics on Kafka at %s: %s", cli->opts.kafka,
                      rd_kafka_event_error_string(ev));
    else
        rc = read_results(cli, ev, rows);
    if (ev)
        rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_AdminOptions_destroy(ao);
    return rc;
}

static int create_missing(cli_t *cli, rd_kafka_t *rk, const topics_args_t *args, int brokers,
                          cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    char err[512];
    cli_topics_create_t set;
    if (cli_topics_create_settings(&args->ask, brokers, &set, err, sizeof(err)) != 0)
        return cli_usage_error("topics", "%s", err);
    rd_kafka_NewTopic_t *nts[CLI_TOPICS_COUNT];
    size_t n = 0;
    int rc = CLI_OK;
    for (size_t i = 0; i < CLI_TOPICS_COUNT && rc == CLI_OK; i++) {
        if (rows[i].exists)
            continue;
        int partitions = cli_topics_create_partitions(rows[i].topic, args->ask.partitions);
        nts[n] = new_topic(rows[i].topic, partitions, &set, err, sizeof(err));
        if (nts[n])
            n++;
        else
            rc = cli_fail(CLI_USAGE, "cannot describe topic %s: %s", rows[i].topic, err);
    }
    if (rc == CLI_OK)
        rc = create_request(cli, rk, nts, n, rows);
    rd_kafka_NewTopic_destroy_array(nts, n);
    return rc;
}

/* Re-reads the metadata until every topic is listed with a leader for each
 * partition, or the deadline; the rows say what was seen last. */
static int wait_for_leaders(cli_t *cli, rd_kafka_t *rk, const cli_topics_ask_t *ask,
                            cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    double deadline = cli_monotonic() + LEADERS_DEADLINE_S;
    int brokers;
    for (;;) {
        int rc = check_now(cli, rk, ask, &brokers, rows);
        if (rc != CLI_OK || cli_topics_all_led(rows) || cli_monotonic() >= deadline)
            return rc;
        cli_sleep_ms(LEADERS_POLL_MS);
    }
}

/* ------------------------------------------------------------------------ */
/* Report                                                                   */
/* ------------------------------------------------------------------------ */

static json_t *count_or_null(const cli_topic_row_t *row, int n)
{
    return row->exists ? json_integer(n) : json_null();
}

static void print_report(const cli_topic_row_t rows[CLI_TOPICS_COUNT], bool json)
{
    if (!json) {
        for (size_t i = 0; i < CLI_TOPICS_COUNT; i++) {
            const cli_topic_row_t *r = &rows[i];
            const char *state = r->created ? "created" : r->exists ? "exists" : "missing";
            if (r->exists)
                printf("%-17s %-8s  partitions %d  replication factor %d  leaders %s\n", r->topic,
                       state, r->partitions, r->replication_factor, r->leaders ? "yes" : "no");
            else
                printf("%-17s %s\n", r->topic, state);
        }
        return;
    }
    json_t *doc = json_array();
    for (size_t i = 0; i < CLI_TOPICS_COUNT; i++) {
        const cli_topic_row_t *r = &rows[i];
        json_array_append_new(
            doc, json_pack("{s:s, s:o, s:o, s:b, s:b, s:b}", "topic", r->topic, "partitions",
                           count_or_null(r, r->partitions), "replication_factor",
                           count_or_null(r, r->replication_factor), "leaders", r->leaders, "exists",
                           r->exists, "created", r->created));
    }
    cli_print_json(doc);
    json_decref(doc);
}

/* Names on stderr each topic that is not as asked: TOPICS_DIFFER, or
 * CLI_OK when there is none. */
static int report_problems(const cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    int rc = CLI_OK;
    for (size_t i = 0; i < CLI_TOPICS_COUNT; i++)
        if (rows[i].problem[0])
            rc = cli_fail(TOPICS_DIFFER, "%s", rows[i].problem);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */
/* ------------------------------------------------------------------------ */

/* A client handle for metadata and the Admin API (a producer that never
 * produces). */
static int new_admin(cli_t *cli, rd_kafka_t **out)
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
    rd_kafka_t *rk = NULL;
    cli_topic_row_t rows[CLI_TOPICS_COUNT];
    memset(rows, 0, sizeof(rows));
    int brokers = 0;
    int rc = new_admin(cli, &rk);
    if (rc == CLI_OK)
        rc = check_now(cli, rk, &args->ask, &brokers, rows);
    if (rc == CLI_OK && args->create && !cli_topics_any_differ(rows)) {
        if (cli_topics_should_create(rows))
            rc = create_missing(cli, rk, args, brokers, rows);
        if (rc == CLI_OK && !cli_topics_all_led(rows))
            rc = wait_for_leaders(cli, rk, &args->ask, rows);
    }
    if (rc == CLI_OK) {
        print_report(rows, args->json);
        rc = report_problems(rows);
    }
    if (rk)
        rd_kafka_destroy(rk);
    return rc;
}

int cli_cmd_topics(cli_t *cli, int argc, char **argv)
{
    topics_args_t args;
    memset(&args, 0, sizeof(args));
    int rc = cli_parse_args(argc, argv, "topics", topics_opts, apply_opt, &args);
    if (rc == CLI_HELP) {
        fputs(cli_topics_usage, stdout);
        return CLI_OK;
    }
    return rc == CLI_OK ? run_topics(cli, &args) : rc;
}
