/*
 * converge-kafka-acl — grants Kafka ACLs, for deploy/local/up.sh
 * --kafka-sasl (deploy/lib/kafka_sasl.sh writes the rules). Kafka 4's jars
 * that the deployment runs hold no AclCommand (it moved to kafka-tools),
 * so the ACLs are made through librdkafka's admin API instead.
 *
 * usage: converge-kafka-acl < RULES
 * The brokers and the credentials come from the environment, as for every
 * Converge program: CONVERGE_KAFKA, CONVERGE_KAFKA_OPTS,
 * CONVERGE_KAFKA_PASSWORD_FILE (cv_opts.h). Each line of RULES allows one
 * operation, from any host:
 *
 *     PRINCIPAL RESOURCE PATTERN NAME OPERATION
 *     User:converge-worker topic literal converge.check write
 *
 * RESOURCE: topic, group or cluster (NAME kafka-cluster); PATTERN: literal
 * or prefixed; OPERATION: read, write, create, delete, alter, describe,
 * cluster_action, describe_configs, alter_configs, idempotent_write, all.
 * Blank lines and lines starting with # are skipped.
 * Exit status: 0 all granted; 2 a bad rule or setting; 3 Kafka refused or
 * could not be reached.
 */
#include "cv_io.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_RULES 128
#define ADMIN_TIMEOUT_MS 15000

typedef struct word {
    const char *name;
    int value;
} word_t;

static const word_t resources[] = {{"topic", RD_KAFKA_RESOURCE_TOPIC},
                                   {"group", RD_KAFKA_RESOURCE_GROUP},
                                   {"cluster", RD_KAFKA_RESOURCE_BROKER}, /* Kafka's CLUSTER */
                                   {NULL, 0}};
static const word_t patterns[] = {{"literal", RD_KAFKA_RESOURCE_PATTERN_LITERAL},
                                  {"prefixed", RD_KAFKA_RESOURCE_PATTERN_PREFIXED},
                                  {NULL, 0}};
static const word_t operations[] = {{"read", RD_KAFKA_ACL_OPERATION_READ},
                                    {"write", RD_KAFKA_ACL_OPERATION_WRITE},
                                    {"create", RD_KAFKA_ACL_OPERATION_CREATE},
                                    {"delete", RD_KAFKA_ACL_OPERATION_DELETE},
                                    {"alter", RD_KAFKA_ACL_OPERATION_ALTER},
                                    {"describe", RD_KAFKA_ACL_OPERATION_DESCRIBE},
                                    {"cluster_action", RD_KAFKA_ACL_OPERATION_CLUSTER_ACTION},
                                    {"describe_configs", RD_KAFKA_ACL_OPERATION_DESCRIBE_CONFIGS},
                                    {"alter_configs", RD_KAFKA_ACL_OPERATION_ALTER_CONFIGS},
                                    {"idempotent_write", RD_KAFKA_ACL_OPERATION_IDEMPOTENT_WRITE},
                                    {"all", RD_KAFKA_ACL_OPERATION_ALL},
                                    {NULL, 0}};

static int lookup(const word_t *words, const char *name)
{
    for (int i = 0; words[i].name; i++)
        if (strcasecmp(words[i].name, name) == 0)
            return words[i].value;
    return -1;
}

/* One rule line into an ACL binding; NULL with a message on a bad line. */
static rd_kafka_AclBinding_t *parse_rule(const char *line, int lineno)
{
    char principal[256], resource[32], pattern[32], name[256], operation[32], extra[2];
    char err[256];
    int n = sscanf(line, "%255s %31s %31s %255s %31s %1s", principal, resource, pattern, name,
                   operation, extra);
    int res = lookup(resources, resource), pat = lookup(patterns, pattern);
    int op = lookup(operations, operation);
    if (n != 5 || res < 0 || pat < 0 || op < 0) {
        fprintf(stderr,
                "converge-kafka-acl: line %d: expected PRINCIPAL topic|group|cluster "
                "literal|prefixed NAME OPERATION\n",
                lineno);
        return NULL;
    }
    rd_kafka_AclBinding_t *b = rd_kafka_AclBinding_new(
        (rd_kafka_ResourceType_t)res, name, (rd_kafka_ResourcePatternType_t)pat, principal, "*",
        (rd_kafka_AclOperation_t)op, RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW, err, sizeof(err));
    if (!b)
        fprintf(stderr, "converge-kafka-acl: line %d: %s\n", lineno, err);
    return b;
}

static int read_rules(rd_kafka_AclBinding_t **acls, int *nacls)
{
    char line[1024];
    int lineno = 0;
    *nacls = 0;
    while (fgets(line, sizeof(line), stdin)) {
        lineno++;
        const char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        if (*nacls == MAX_RULES) {
            fprintf(stderr, "converge-kafka-acl: more than %d rules\n", MAX_RULES);
            return 2;
        }
        if (!(acls[*nacls] = parse_rule(p, lineno)))
            return 2;
        (*nacls)++;
    }
    return 0;
}

/* Sends the bindings and reports each refusal; 0 or 3. */
static int create_acls(rd_kafka_t *rk, rd_kafka_AclBinding_t **acls, int nacls, const char *brokers)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATEACLS);
    char err[256];
    rd_kafka_AdminOptions_set_request_timeout(o, ADMIN_TIMEOUT_MS, err, sizeof(err));
    rd_kafka_CreateAcls(rk, acls, (size_t)nacls, o, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, ADMIN_TIMEOUT_MS + 5000);
    int rc = 0;
    if (!ev || rd_kafka_event_error(ev)) {
        fprintf(stderr, "converge-kafka-acl: Kafka at %s did not create the ACLs: %s\n", brokers,
                ev ? rd_kafka_event_error_string(ev) : "no answer");
        rc = 3;
    } else {
        size_t n = 0;
        const rd_kafka_acl_result_t **res =
            rd_kafka_CreateAcls_result_acls(rd_kafka_event_CreateAcls_result(ev), &n);
        for (size_t i = 0; i < n; i++) {
            const rd_kafka_error_t *e = rd_kafka_acl_result_error(res[i]);
            if (e) {
                fprintf(stderr, "converge-kafka-acl: rule %zu refused: %s\n", i + 1,
                        rd_kafka_error_string(e));
                rc = 3;
            }
        }
    }
    if (ev)
        rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_queue_destroy(q);
    return rc;
}

int main(void)
{
    cv_opts_t opts;
    char err[512];
    rd_kafka_AclBinding_t *acls[MAX_RULES];
    int nacls = 0;
    if (cv_opts_from_env(&opts, err, sizeof(err)) != 0) {
        fprintf(stderr, "converge-kafka-acl: %s\n", err);
        return 2;
    }
    int rc = read_rules(acls, &nacls);
    rd_kafka_conf_t *conf = rc ? NULL : cv__kafka_conf(&opts, NULL, err, sizeof(err));
    rd_kafka_t *rk = NULL;
    if (!rc && !conf) {
        fprintf(stderr, "converge-kafka-acl: %s\n", err);
        rc = 2;
    } else if (!rc && !(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err)))) {
        fprintf(stderr, "converge-kafka-acl: %s\n", err);
        rd_kafka_conf_destroy(conf);
        rc = 2;
    }
    if (!rc && nacls > 0)
        rc = create_acls(rk, acls, nacls, opts.kafka);
    if (rk)
        rd_kafka_destroy(rk);
    rd_kafka_AclBinding_destroy_array(acls, (size_t)nacls);
    cv_opts_free(&opts);
    return rc;
}
