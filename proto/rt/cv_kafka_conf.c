#include "cv_kafka_conf.h"

#include "cv_error.h"

#include <stdio.h>
#include <string.h>

/* Our defaults first; the user's pass-through settings after, so they win. */
rd_kafka_conf_t *cv__kafka_conf(const cv_opts_t *opts, const char *const *defaults, char *errstr,
                                size_t errstr_size)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char err[512];
    if (rd_kafka_conf_set(conf, "bootstrap.servers", opts->kafka, err, sizeof(err)) !=
        RD_KAFKA_CONF_OK)
        goto fail;
    for (size_t i = 0; defaults && defaults[i]; i += 2)
        if (rd_kafka_conf_set(conf, defaults[i], defaults[i + 1], err, sizeof(err)) !=
            RD_KAFKA_CONF_OK)
            goto fail;
    for (int i = 0; i < opts->nkafka_opts; i++) {
        char key[256];
        const char *kv = opts->kafka_opts[i];
        const char *eq = strchr(kv, '=');
        snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
        if (rd_kafka_conf_set(conf, key, eq + 1, err, sizeof(err)) != RD_KAFKA_CONF_OK)
            goto fail;
    }
    return conf;
fail:
    cv_seterr(errstr, errstr_size, CV_EINVAL, "Kafka configuration: %s", err);
    rd_kafka_conf_destroy(conf);
    return NULL;
}
