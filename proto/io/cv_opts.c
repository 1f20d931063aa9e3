#include "cv_opts.h"

#include "cv_base.h"
#include "cv_keyfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cv_opts_kafka_key_is_secret(const char *key, size_t keylen)
{
    /* Every librdkafka 2.0 property it marks sensitive, by the words in
     * their names, so that a property added later is covered too. */
    static const char *const words[] = {"password", "secret", "ssl.key.pem", "ssl_key",
                                        "sasl.oauthbearer.config"};
    char k[128];
    snprintf(k, sizeof(k), "%.*s", (int)keylen, key);
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strstr(k, words[i]))
            return true;
    return false;
}

int cv_opts_add_kafka(cv_opts_t *o, const char *list, char *errstr, size_t errstr_size)
{
    const char *p = list;
    bool after_secret = false;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n > 0) {
            /* An item without '=' right after a secret is most likely the
             * rest of a password that held a comma: not echoed. */
            if (!memchr(p, '=', n) && after_secret)
                return cv_seterr(errstr, errstr_size, CV_EINVAL,
                                 "bad Kafka option after a secret setting: expected key=value "
                                 "(a password with a comma must come from "
                                 "CONVERGE_KAFKA_PASSWORD_FILE)");
            if (!memchr(p, '=', n))
                return cv_seterr(errstr, errstr_size, CV_EINVAL,
                                 "bad Kafka option \"%.*s\": expected key=value", (int)n, p);
            after_secret = cv_opts_kafka_key_is_secret(p, (size_t)((char *)memchr(p, '=', n) - p));
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

int cv_opts_read_secret(const char *service, const char *path, char *out, size_t out_size,
                        char *errstr, size_t errstr_size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "cannot read the %s password file %s: %s",
                         service, path, strerror(errno));
    char line[512];
    bool got = out_size + 2 <= sizeof(line) && fgets(line, (int)out_size + 2, f) != NULL;
    fclose(f);
    size_t n = got ? strcspn(line, "\r\n") : 0;
    if (n == 0 || n >= out_size)
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "the %s password file %s does not start with a password of 1 to %zu "
                         "bytes",
                         service, path, out_size - 1);
    memcpy(out, line, n);
    out[n] = '\0';
    return 0;
}

int cv_opts_read_kafka_password(cv_opts_t *o, const char *path, char *errstr, size_t errstr_size)
{
    return cv_opts_read_secret("Kafka", path, o->kafka_pass, sizeof(o->kafka_pass), errstr,
                               errstr_size);
}

int cv_opts_from_env(cv_opts_t *o, char *errstr, size_t errstr_size)
{
    memset(o, 0, sizeof(*o));
    const char *redis = getenv("CONVERGE_REDIS");
    const char *kafka = getenv("CONVERGE_KAFKA");
    const char *kopts = getenv("CONVERGE_KAFKA_OPTS");
    const char *prefix = getenv("CONVERGE_PREFIX");
    const char *pass_file = getenv("CONVERGE_REDIS_PASSWORD_FILE");
    const char *kafka_pass_file = getenv("CONVERGE_KAFKA_PASSWORD_FILE");
    const char *redis_map = getenv("CONVERGE_REDIS_ADDRESS_MAP");
    const char *key_file = getenv("CONVERGE_SECRET_KEY_FILE");
    int rc = pass_file && *pass_file
                 ? cv_opts_read_redis_password(o, pass_file, errstr, errstr_size)
                 : 0;
    if (!rc && kafka_pass_file && *kafka_pass_file)
        rc = cv_opts_read_kafka_password(o, kafka_pass_file, errstr, errstr_size);
    if (!rc && key_file && *key_file)
        rc = cv_keyfile_load(key_file, errstr, errstr_size);
    if (!rc && redis_map)
        rc = cv_opts_set_redis_map(o, redis_map, errstr, errstr_size);
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
    memset(o->kafka_pass, 0, sizeof(o->kafka_pass));
}
