/*
 * cli_topics — what `convergectl topics` decides about the Kafka topics
 * Converge uses (converge.check, converge.observe, converge.dead), from a
 * snapshot of the cluster's metadata and without Kafka: whether each exists
 * as asked, what is to be created, and the replication settings a new topic
 * gets by default. Pure.
 */
#ifndef CLI_TOPICS_H
#define CLI_TOPICS_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_TOPICS_COUNT 3

/* The partitions of converge.check and converge.observe when not asked. */
#define CLI_TOPICS_DEFAULT_PARTITIONS 8

/* Converge's topics, in the order they are reported. */
extern const char *const cli_topic_names[CLI_TOPICS_COUNT];

/* One topic as the cluster's metadata lists it. */
typedef struct cli_topic_md {
    const char *name;
    int partitions;
    int replication_factor; /* replicas of partition 0; 0 without partitions */
    int leaderless;         /* partitions without a leader */
    const char *error;      /* the broker's error for the topic; NULL when none */
} cli_topic_md_t;

/* The metadata of every topic of the cluster (topics missing from it do not
 * exist). */
typedef struct cli_topics_md {
    int brokers;
    const cli_topic_md_t *topics;
    size_t ntopics;
} cli_topics_md_t;

/* What was asked; 0 where an option was not given. */
typedef struct cli_topics_ask {
    int partitions;         /* --partitions: of converge.check and converge.observe */
    int replication_factor; /* --replication-factor */
    int min_insync;         /* --min-insync-replicas */
} cli_topics_ask_t;

/* One line of the report. */
typedef struct cli_topic_row {
    const char *topic;
    bool exists;
    bool created; /* by this run */
    int partitions;
    int replication_factor;
    bool leaders;      /* every partition has a leader */
    bool differs;      /* exists with other partitions or replicas than asked */
    char problem[256]; /* what is not as asked, for a person; "" when all is */
} cli_topic_row_t;

/* The settings the missing topics are created with. */
typedef struct cli_topics_create {
    int replication_factor;
    int min_insync;
} cli_topics_create_t;

/* min(3, brokers), at least 1: three copies where the cluster has them. */
int cli_topics_default_replication(int brokers);

/* 2 from a replication factor of 3 on, else 1: with acks=all a write is
 * acknowledged once two replicas have it, so the loss of one broker loses
 * no acknowledged job and leaves the topic writable. */
int cli_topics_default_min_insync(int replication_factor);

/* The partitions `topic` is created with: 1 for converge.dead (its order is
 * the order of the dead letters), else `asked` or the default. */
int cli_topics_create_partitions(const char *topic, int asked);

/* The replication settings for the missing topics on a cluster of
 * `brokers`: 0, or -1 with `err` saying which option cannot be met. */
int cli_topics_create_settings(const cli_topics_ask_t *ask, int brokers, cli_topics_create_t *out,
                               char *err, size_t errsize);

/* The report of each of Converge's topics in `md`, checked against `ask`:
 * it must exist, have a leader for every partition, and where given the
 * partitions asked (1 for converge.dead) and the replication factor asked. */
void cli_topics_check(const cli_topics_md_t *md, const cli_topics_ask_t *ask,
                      cli_topic_row_t rows[CLI_TOPICS_COUNT]);

/* Whether every row is as asked. */
bool cli_topics_all_ok(const cli_topic_row_t rows[CLI_TOPICS_COUNT]);

/* Whether an existing topic has other partitions or replicas than asked:
 * only a person can change that. */
bool cli_topics_any_differ(const cli_topic_row_t rows[CLI_TOPICS_COUNT]);

/* Whether something is to be created: a topic is missing and none of those
 * that exist differs from what was asked (a wrong --partitions must not
 * leave half a set made). */
bool cli_topics_should_create(const cli_topic_row_t rows[CLI_TOPICS_COUNT]);

/* Whether every topic exists with a leader for each partition: what the
 * wait after creating them waits for. */
bool cli_topics_all_led(const cli_topic_row_t rows[CLI_TOPICS_COUNT]);

#endif
