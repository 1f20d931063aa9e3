/*
 * The unauthenticated-connection check of cv_opts: a program about to reach
 * Redis without a password, or Kafka without SASL (nor a TLS client
 * certificate), says so once at start. Such a service lets anyone who
 * reaches its port read and change every stack, which deploy/local/up.sh no
 * longer sets up unless asked (--insecure); a deployment of one's own may
 * still be open by mistake, and this line is where its operator learns it.
 */
#include "cv_opts.h"

#include "cv_log.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The value of librdkafka setting key in o's pass-through list, or NULL
 * (the last one wins, as in librdkafka). */
static const char *kafka_setting(const cv_opts_t *o, const char *key)
{
    size_t n = strlen(key);
    const char *v = NULL;
    for (int i = 0; i < o->nkafka_opts; i++)
        if (strncmp(o->kafka_opts[i], key, n) == 0 && o->kafka_opts[i][n] == '=')
            v = o->kafka_opts[i] + n + 1;
    return v;
}

bool cv_opts_kafka_authenticated(const cv_opts_t *o)
{
    const char *proto = kafka_setting(o, "security.protocol");
    if (!proto)
        return false;
    if (strncasecmp(proto, "sasl_", 5) == 0)
        return true;
    /* TLS with a client certificate authenticates the client too. */
    return strcasecmp(proto, "ssl") == 0 &&
           (kafka_setting(o, "ssl.certificate.location") ||
            kafka_setting(o, "ssl.keystore.location") || kafka_setting(o, "ssl.certificate.pem"));
}

size_t cv_opts_unauthenticated(const cv_opts_t *o, bool kafka, char *out, size_t out_size)
{
    bool redis_open = o->redis_pass[0] == '\0';
    bool kafka_open = kafka && !cv_opts_kafka_authenticated(o);
    int n = 0;
    if (redis_open && kafka_open)
        n = snprintf(out, out_size, "Redis at %s (no password) and Kafka at %s (no SASL)",
                     o->redis_url, o->kafka);
    else if (redis_open)
        n = snprintf(out, out_size, "Redis at %s (no password)", o->redis_url);
    else if (kafka_open)
        n = snprintf(out, out_size, "Kafka at %s (no SASL)", o->kafka);
    else if (out_size)
        out[0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

void cv_opts_warn_unauthenticated(const cv_opts_t *o, bool kafka)
{
    char what[1200];
    if (cv_opts_unauthenticated(o, kafka, what, sizeof(what)))
        cv_warn("connecting without credentials to %s: anyone who reaches it can read and "
                "change every stack; give credentials (docs/security.md, \"Secure by default\")",
                what);
}
