/*
 * cv_opts — where the services are: the options every Converge program
 * shares (--redis, --kafka, --kafka-opt, --prefix), with their defaults
 * from CONVERGE_REDIS, CONVERGE_KAFKA, CONVERGE_KAFKA_OPTS, CONVERGE_PREFIX.
 */
#ifndef CV_OPTS_H
#define CV_OPTS_H

#include <stddef.h>

#define CV_MAX_KAFKA_OPTS 64

typedef struct cv_opts {
    char redis_url[512];
    char redis_host[256];
    int redis_port;
    int redis_db;
    char kafka[512];
    int nkafka_opts;
    char *kafka_opts[CV_MAX_KAFKA_OPTS]; /* "key=value", owned */
    char prefix[64];
} cv_opts_t;

/* Fills defaults from the environment. Returns 0 or CV_EINVAL with errstr. */
int cv_opts_from_env(cv_opts_t *o, char *errstr, size_t errstr_size);

/* Parses "redis://host:port/db" (scheme optional, db optional). */
int cv_opts_set_redis(cv_opts_t *o, const char *url, char *errstr, size_t errstr_size);

/* Adds librdkafka settings from a "k=v,k=v" list (or one "k=v"). */
int cv_opts_add_kafka(cv_opts_t *o, const char *list, char *errstr, size_t errstr_size);

void cv_opts_free(cv_opts_t *o);

#endif
