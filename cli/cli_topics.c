/*
 * Converge's Kafka topics as `convergectl topics` judges them
 * (cli_topics.h): a metadata snapshot checked against what was asked, and
 * the replication a new topic gets.
 */
#include "cli_topics.h"

#include "cv_kafka.h"

#include <stdio.h>
#include <string.h>

const char *const cli_topic_names[CLI_TOPICS_COUNT] = {CV_TOPIC_CHECK, CV_TOPIC_OBSERVE,
                                                       CV_TOPIC_DEAD};

int cli_topics_default_replication(int brokers)
{
    if (brokers < 1)
        return 1;
    return brokers < 3 ? brokers : 3;
}

int cli_topics_default_min_insync(int replication_factor)
{
    return replication_factor >= 3 ? 2 : 1;
}

int cli_topics_create_partitions(const char *topic, int asked)
{
    if (strcmp(topic, CV_TOPIC_DEAD) == 0)
        return 1;
    return asked > 0 ? asked : CLI_TOPICS_DEFAULT_PARTITIONS;
}

int cli_topics_create_settings(const cli_topics_ask_t *ask, int brokers, cli_topics_create_t *out,
                               char *err, size_t errsize)
{
    int rf = ask->replication_factor > 0 ? ask->replication_factor
                                         : cli_topics_default_replication(brokers);
    if (rf > brokers) {
        snprintf(err, errsize,
                 "--replication-factor %d: the cluster has %d broker(s); a partition's replicas "
                 "live on different brokers",
                 rf, brokers);
        return -1;
    }
    int m = ask->min_insync > 0 ? ask->min_insync : cli_topics_default_min_insync(rf);
    if (m > rf) {
        snprintf(err, errsize,
                 "--min-insync-replicas %d is more than the replication factor %d: no write "
                 "with acks=all could ever succeed",
                 m, rf);
        return -1;
    }
    out->replication_factor = rf;
    out->min_insync = m;
    return 0;
}

static const cli_topic_md_t *find(const cli_topics_md_t *md, const char *name)
{
    for (size_t i = 0; i < md->ntopics; i++)
        if (strcmp(md->topics[i].name, name) == 0)
            return &md->topics[i];
    return NULL;
}

/* The first thing about an existing topic that is not as asked, in `row`:
 * the counts first, as only a person can change them; then leaders. */
static void check_existing(const cli_topic_md_t *t, const cli_topics_ask_t *ask,
                           cli_topic_row_t *row)
{
    char *why = row->problem;
    size_t size = sizeof(row->problem);
    int want = ask->partitions > 0 ? cli_topics_create_partitions(t->name, ask->partitions) : 0;
    row->exists = true;
    row->partitions = t->partitions;
    row->replication_factor = t->replication_factor;
    row->leaders = !t->error && t->partitions > 0 && t->leaderless == 0;
    row->differs = true;
    if (want > 0 && t->partitions > 0 && t->partitions != want) {
        snprintf(why, size, "%s has %d partitions, not %d; delete it to change the count", t->name,
                 t->partitions, want);
    } else if (ask->replication_factor > 0 && t->partitions > 0 &&
               t->replication_factor != ask->replication_factor) {
        snprintf(why, size,
                 "%s has replication factor %d, not %d; change it with "
                 "kafka-reassign-partitions.sh",
                 t->name, t->replication_factor, ask->replication_factor);
    } else {
        row->differs = false;
        if (t->error)
            snprintf(why, size, "%s: Kafka reports: %s", t->name, t->error);
        else if (t->partitions == 0)
            snprintf(why, size, "%s has no partitions", t->name);
        else if (t->leaderless > 0)
            snprintf(why, size, "%s: %d of its %d partitions have no leader", t->name,
                     t->leaderless, t->partitions);
    }
}

void cli_topics_check(const cli_topics_md_t *md, const cli_topics_ask_t *ask,
                      cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    for (size_t i = 0; i < CLI_TOPICS_COUNT; i++) {
        cli_topic_row_t *row = &rows[i];
        memset(row, 0, sizeof(*row));
        row->topic = cli_topic_names[i];
        const cli_topic_md_t *t = find(md, row->topic);
        if (t)
            check_existing(t, ask, row);
        else
            snprintf(row->problem, sizeof(row->problem),
                     "%s does not exist; convergectl topics --create creates it", row->topic);
    }
}

bool cli_topics_all_ok(const cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    for (size_t i = 0; i < CLI_TOPICS_COUNT; i++)
        if (rows[i].problem[0])
            return false;
    return true;
}

bool cli_topics_any_differ(const cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    for (size_t i = 0; i < CLI_TOPICS_COUNT; i++)
        if (rows[i].differs)
            return true;
    return false;
}

bool cli_topics_should_create(const cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    if (cli_topics_any_differ(rows))
        return false;
    for (size_t i = 0; i < CLI_TOPICS_COUNT; i++)
        if (!rows[i].exists)
            return true;
    return false;
}

bool cli_topics_all_led(const cli_topic_row_t rows[CLI_TOPICS_COUNT])
{
    for (size_t i = 0; i < CLI_TOPICS_COUNT; i++)
        if (!rows[i].exists || !rows[i].leaders)
            return false;
    return true;
}
