#include "cli_topics.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_PARTITIONS 8

void cli_topics_init(cli_topic_t t[CLI_NTOPICS], const char *const names[CLI_NTOPICS],
                     int partitions)
{
    memset(t, 0, sizeof(*t) * CLI_NTOPICS);
    for (int i = 0; i < CLI_NTOPICS; i++) {
        bool dead = i == CLI_NTOPICS - 1;
        t[i].name = names[i];
        t[i].want = dead ? 0 : partitions;
        t[i].create = dead ? 1 : partitions > 0 ? partitions : DEFAULT_PARTITIONS;
    }
}

int cli_topics_default_replication(int brokers)
{
    return brokers >= 3 ? 3 : brokers > 0 ? brokers : 1;
}

int cli_topics_default_min_insync(int replication)
{
    return replication >= 3 ? 2 : 1;
}

bool cli_topics_any_differ(const cli_topic_t t[CLI_NTOPICS])
{
    for (int i = 0; i < CLI_NTOPICS; i++)
        if (t[i].exists && t[i].want > 0 && t[i].partitions != t[i].want)
            return true;
    return false;
}

const char *cli_topic_problem(const cli_topic_t *t, char *buf, size_t size)
{
    if (!t->exists)
        snprintf(buf, size, "%s does not exist; convergectl topics --create creates it", t->name);
    else if (t->want > 0 && t->partitions != t->want)
        snprintf(buf, size,
                 "%s has %d partition(s), not %d; Kafka cannot take partitions away: delete the "
                 "topic to change the count",
                 t->name, t->partitions, t->want);
    else if (!t->leaders)
        snprintf(buf, size, "%s has a partition without a leader", t->name);
    else
        return NULL;
    return buf;
}
