#include "cv_opts.h"

#include "cv_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cv_opts_add_kafka(cv_opts_t *o, const char *list, char *errstr, size_t errstr_size)
{
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n > 0) {
            if (!memchr(p, '=', n))
                return cv_seterr(errstr, errstr_size, CV_EINVAL,
                                 "bad Kafka option \"%.*s\": expected key=value", (int)n, p);
            if (o->nkafka_opts == CV_MAX_KAFKA_OPTS)
                return cv_seterr(errstr, errstr_size, CV_EINVAL, "too many Kafka options");
            o->kafka_opts[o->nkafka_opts++] = strndup(p, n);
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

int cv_opts_from_env(cv_opts_t *o, char *errstr, size_t errstr_size)
{
    memset(o, 0, sizeof(*o));
    const char *redis = getenv("CONVERGE_REDIS");
    const char *kafka = getenv("CONVERGE_KAFKA");
    const char *kopts = getenv("CONVERGE_KAFKA_OPTS");
    const char *prefix = getenv("CONVERGE_PREFIX");
    const char *pass_file = getenv("CONVERGE_REDIS_PASSWORD_FILE");
    int rc = pass_file && *pass_file
                 ? cv_opts_read_redis_password(o, pass_file, errstr, errstr_size)
                 : 0;
    if (rc)
        return rc;
    rc = cv_opts_set_redis(o, redis && *redis ? redis : "redis://127.0.0.1:6379/0", errstr,
                           errstr_size);
    if (rc)
        return rc;
    snprintf(o->kafka, sizeof(o->kafka), "%s", kafka && *kafka ? kafka : "127.0.0.1:9092");
    snprintf(o->prefix, sizeof(o->prefix), "%s", prefix && *prefix ? prefix : "cv:");
    return kopts ? cv_opts_add_kafka(o, kopts, errstr, errstr_size) : 0;
}

void cv_opts_free(cv_opts_t *o)
{
    for (int i = 0; i < o->nkafka_opts; i++)
        free(o->kafka_opts[i]);
    o->nkafka_opts = 0;
}
