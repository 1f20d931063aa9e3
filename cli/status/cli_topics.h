/*
 * cli_topics — what `convergectl topics` decides, without Kafka: the topics
 * Converge needs, what a cluster's metadata says of each, what is wrong with
 * one, and the replication defaults for a cluster of a given size.
 */
#ifndef CLI_TOPICS_H
#define CLI_TOPICS_H

#include <stdbool.h>
#include <stddef.h>

enum { CLI_NTOPICS = 5 };

/* One of the topics, as wanted and as found. */
typedef struct cli_topic {
    const char *name;
    int want;    /* partitions it must have; 0: any count */
    int create;  /* partitions it is created with */
    bool exists; /* in the metadata */
    int partitions;
    int replicas; /* of its first partition */
    bool leaders; /* every partition has a leader */
    bool created; /* by this run */
} cli_topic_t;

/* The topics `names`: the four job topics (converge.check,
 * converge.observe and their express twins) with `partitions` each (0 when
 * not asked: any count is accepted, 8 when created), then the dead letters
 * (converge.dead, last) with 1. */
void cli_topics_init(cli_topic_t t[CLI_NTOPICS], const char *const names[CLI_NTOPICS],
                     int partitions);

/* The replication factor a topic gets on a cluster of `brokers`: 3 when it
 * has three brokers or more, else all of them. */
int cli_topics_default_replication(int brokers);

/* min.insync.replicas for that factor: 2 of 3 (an acknowledged message,
 * acks=all, survives the loss of one broker), else 1. */
int cli_topics_default_min_insync(int replication);

/* Whether a topic exists with another partition count than wanted: only
 * a person can change that (Kafka cannot take partitions away), so
 * --create makes nothing then, rather than half a set. */
bool cli_topics_any_differ(const cli_topic_t t[CLI_NTOPICS]);

/* What is wrong with `t` (written to buf), or NULL when it is as wanted. */
const char *cli_topic_problem(const cli_topic_t *t, char *buf, size_t size);

#endif
