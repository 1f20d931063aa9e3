/*
 * cv_opts — where the services are: the options every Converge program
 * shares (--redis, --kafka, --kafka-opt, --prefix), with their defaults
 * from CONVERGE_REDIS, CONVERGE_KAFKA, CONVERGE_KAFKA_OPTS, CONVERGE_PREFIX.
 *
 * Redis credentials come from the URL (redis://user:pass@host:port/db, user
 * and password percent-decoded) or from CONVERGE_REDIS_PASSWORD_FILE, whose
 * first line is the password; the file wins over a password in the URL, so
 * that a deployment can keep every secret off command lines and out of the
 * environment. The password lives only in redis_pass: redis_url holds the
 * redacted form (redis://user:***@host:port/db) and is what may be printed.
 *
 * Kafka's SASL password likewise comes from CONVERGE_KAFKA_PASSWORD_FILE
 * (first line): it is set as librdkafka's sasl.password after every
 * pass-through setting, so it wins over a sasl.password in
 * CONVERGE_KAFKA_OPTS / --kafka-opt, and never needs a command line.
 *
 * CONVERGE_REDIS_ADDRESS_MAP ("announced=reached,...", host:port each) maps
 * the addresses a Redis Cluster announces (CLUSTER SLOTS, MOVED, ASK) to the
 * ones this client must connect to instead: a node behind NAT, or reached
 * through a local TLS sidecar (docs/security.md). Seeds are not mapped.
 *
 * CONVERGE_SECRET_KEY_FILE names the key file of encryption at rest
 * (cv_keyfile.h): read here, so every program seals and opens with it.
 *
 * A program that would reach Redis without a password or Kafka without SASL
 * warns once at start (cv_opts_warn_unauthenticated, docs/security.md
 * "Secure by default").
 */
#ifndef CV_OPTS_H
#define CV_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#define CV_MAX_KAFKA_OPTS 64
#define CV_REDIS_SEEDS_MAX 16
#define CV_REDIS_MAP_MAX 32

typedef struct cv_redis_addr {
    char host[256];
    int port;
} cv_redis_addr_t;

/* An address a Redis Cluster announces, and the one to connect to instead. */
typedef struct cv_redis_addr_map {
    cv_redis_addr_t announced;
    cv_redis_addr_t reached;
} cv_redis_addr_map_t;

typedef struct cv_opts {
    char redis_url[512];  /* redacted: safe to print */
    char redis_host[256]; /* a cluster's: its first seed */
    int redis_port;
    int redis_db;
    /* redis+cluster://h1:p1,h2:p2: a Redis Cluster, found through these
     * seeds (any one that answers tells the whole slot map) */
    bool redis_cluster;
    int nredis_seeds;
    cv_redis_addr_t redis_seeds[CV_REDIS_SEEDS_MAX];
    char redis_user[128]; /* "" for Redis's default user */
    char redis_pass[256]; /* "" for no AUTH */
    bool redis_pass_from_file;
    int nredis_map;
    cv_redis_addr_map_t redis_map[CV_REDIS_MAP_MAX];
    char kafka[512];
    int nkafka_opts;
    char *kafka_opts[CV_MAX_KAFKA_OPTS]; /* "key=value", owned */
    char kafka_pass[256];                /* "" unless read from a file */
    char prefix[64];
} cv_opts_t;

/* Fills defaults from the environment. Returns 0 or CV_EINVAL with errstr. */
int cv_opts_from_env(cv_opts_t *o, char *errstr, size_t errstr_size);

/* Parses "redis://[user[:pass]@]host:port/db" (scheme, credentials and db
 * optional), or "redis+cluster://[user[:pass]@]host:port,host:port,..."
 * (a Redis Cluster: database 0 only). A password read from the password
 * file is kept. */
int cv_opts_set_redis(cv_opts_t *o, const char *url, char *errstr, size_t errstr_size);

/* Reads the password from the first line of path; it then wins over the URL's. */
int cv_opts_read_redis_password(cv_opts_t *o, const char *path, char *errstr, size_t errstr_size);

/* Parses CONVERGE_REDIS_ADDRESS_MAP's "host:port=host:port[,...]" (the
 * announced address, then the reached one; ports required) into o's map,
 * replacing it; "" empties it. 0, or CV_EINVAL naming the bad entry. */
int cv_opts_set_redis_map(cv_opts_t *o, const char *spec, char *errstr, size_t errstr_size);

/* The address to connect to for one a Redis Cluster announced: its mapped
 * one, or itself when the map does not name it. */
void cv_opts_redis_route(const cv_opts_t *o, const char **host, int *port);

/* url with the password of its user part replaced by "***" (unchanged
 * when it has none). Always NUL-terminates out. */
void cv_opts_redact_url(const char *url, char *out, size_t out_size);

/* The user AUTH names: redis_user, or "default". */
const char *cv_opts_redis_user(const cv_opts_t *o);

/* The AUTH command to send first on every connection: fills argv and
 * returns its count (0: no password, nothing to send). "AUTH pass" for the
 * default user, so that a Redis without ACLs (before 6) accepts it too. */
int cv_opts_redis_auth_argv(const cv_opts_t *o, const char *argv[3]);

/* Adds librdkafka settings from a "k=v,k=v" list (or one "k=v"). */
int cv_opts_add_kafka(cv_opts_t *o, const char *list, char *errstr, size_t errstr_size);

/* Reads Kafka's SASL password from the first line of path. */
int cv_opts_read_kafka_password(cv_opts_t *o, const char *path, char *errstr, size_t errstr_size);

/* The first line of the password file `path` of `service` (for messages)
 * into out (1 to out_size - 1 bytes). 0, or CV_EINVAL with errstr. */
int cv_opts_read_secret(const char *service, const char *path, char *out, size_t out_size,
                        char *errstr, size_t errstr_size);

/* True for a librdkafka setting whose value is a secret (sasl.password,
 * ssl.key.password, ssl.keystore.password, ...): never printed. */
bool cv_opts_kafka_key_is_secret(const char *key, size_t keylen);

/* True when o's Kafka settings authenticate the client: security.protocol
 * SASL_PLAINTEXT or SASL_SSL, or SSL with a client certificate. */
bool cv_opts_kafka_authenticated(const cv_opts_t *o);

/* What o would reach without credentials, as one phrase into out ("Redis at
 * URL (no password) and Kafka at BROKERS (no SASL)"; Kafka only when kafka
 * is true); returns its length, 0 (out "") when everything authenticates. */
size_t cv_opts_unauthenticated(const cv_opts_t *o, bool kafka, char *out, size_t out_size);

/* Logs one warning naming what cv_opts_unauthenticated finds, if anything:
 * every program calls it once at start, after cv_log_start. */
void cv_opts_warn_unauthenticated(const cv_opts_t *o, bool kafka);

void cv_opts_free(cv_opts_t *o);

#endif
