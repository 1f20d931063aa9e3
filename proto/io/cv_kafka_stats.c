/*
 * Reading librdkafka's statistics (docs: STATISTICS.md of librdkafka): the
 * consumer lag per partition, for converge_kafka_consumer_lag. Parsing
 * only; the consumer receives the JSON on its loop.
 */
#include "cv_kafka_conf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

int cv__kafka_stats_lag(const char *json, size_t len, cv_kafka_lag_t *out, int max)
{
    json_t *root = json_loadb(json, len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return -1;
    }
    int n = 0;
    const char *topic, *partition;
    json_t *t, *p;
    json_object_foreach(json_object_get(root, "topics"), topic, t)
    {
        json_object_foreach(json_object_get(t, "partitions"), partition, p)
        {
            json_t *lag = json_object_get(p, "consumer_lag");
            long id = strtol(partition, NULL, 10);
            /* -1: the internal UA partition, or a partition not assigned here */
            if (n == max || id < 0 || !json_is_integer(lag) || json_integer_value(lag) < 0)
                continue;
            snprintf(out[n].topic, sizeof(out[n].topic), "%s", topic);
            out[n].partition = (int32_t)id;
            out[n].lag = json_integer_value(lag);
            n++;
        }
    }
    json_decref(root);
    return n;
}
