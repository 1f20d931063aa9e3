/*
 * cli_common — what every convergectl command shares: the exit codes, error
 * and usage messages, the option parser, and the connections to Redis and
 * Kafka with checked replies.
 *
 * Every failure is reported here, once, on stderr as "convergectl: ...", and
 * turned into an exit code; commands only pass the code up. A Redis reply of
 * an unexpected type is such a failure (a message, never a crash).
 */
#ifndef CLI_COMMON_H
#define CLI_COMMON_H

#include <hiredis/hiredis.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cv_io.h"
#include "cv_contract.h"

/* The exit codes: the contract that scripts calling convergectl rely on. */
enum {
    CLI_OK = 0,
    CLI_FAILED = 1,  /* the stack ended FAILED (or not as asked) */
    CLI_USAGE = 2,   /* usage or validation error, unknown stack: nothing stored */
    CLI_SERVICE = 3, /* Redis or Kafka unreachable, or answering something unexpected */
    CLI_TIMEOUT = 4,
};

typedef struct cli {
    cv_opts_t opts;
    cv_redis_sync_t *redis;  /* NULL until cli_redis_connect */
    cv_producer_t *producer; /* NULL until cli_kafka_connect */
    size_t queued;           /* messages queued since the last flush... */
    size_t acked;            /* ...acknowledged by Kafka... */
    size_t refused;          /* ...or refused */
} cli_t;

/* One command: `run` gets argv[0] == the command's name. */
typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *usage; /* the whole --help text */
    int (*run)(cli_t *cli, int argc, char **argv);
} cli_command_t;

/* ---- messages ---- */

/* "convergectl: <message>" on stderr; returns `code` so callers can return it. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A usage error of `cmd` (NULL for the global options): the message and a
 * hint where to find help. Returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- options ---- */

typedef struct cli_opt {
    int id;            /* what cli_next returns for it; >= 0 */
    const char *name;  /* "--timeout" */
    const char *alias; /* "-P", or NULL */
    bool has_arg;
} cli_opt_t;

enum {
    CLI_ARG_END = -1,  /* no more arguments */
    CLI_ARG_WORD = -2, /* a positional argument, in args->arg */
    CLI_ARG_BAD = -3,  /* unknown option or missing value; already reported */
};

/* What a command's argument parser returns when --help was asked. */
#define CLI_HELP (-1)

/* Option ids every command may use (cli_template.h adds 100 and 101). */
enum {
    CLI_OPT_HELP = 0,
    CLI_OPT_OUTPUT,
    CLI_OPT_FOLLOW,
    CLI_OPT_WAIT,
    CLI_OPT_TIMEOUT,
    CLI_OPT_RESOURCE,
    CLI_OPT_SHOW_SECRETS, /* the masking readers (cli_secret_io.h) */
};

#define CLI_HELP_OPT                                                                               \
    {                                                                                              \
        CLI_OPT_HELP, "--help", "-h", false                                                        \
    }
#define CLI_OUTPUT_OPT                                                                             \
    {                                                                                              \
        CLI_OPT_OUTPUT, "--output", "-o", true                                                     \
    }
#define CLI_FOLLOW_OPT                                                                             \
    {                                                                                              \
        CLI_OPT_FOLLOW, "--follow", "-f", false                                                    \
    }
#define CLI_WAIT_OPT                                                                               \
    {                                                                                              \
        CLI_OPT_WAIT, "--wait", NULL, false                                                        \
    }
#define CLI_TIMEOUT_OPT                                                                            \
    {                                                                                              \
        CLI_OPT_TIMEOUT, "--timeout", NULL, true                                                   \
    }
#define CLI_RESOURCE_OPT                                                                           \
    {                                                                                              \
        CLI_OPT_RESOURCE, "--resource", NULL, true                                                 \
    }
#define CLI_SHOW_SECRETS_OPT                                                                       \
    {                                                                                              \
        CLI_OPT_SHOW_SECRETS, "--show-secrets", NULL, false                                        \
    }
#define CLI_OPTS_END                                                                               \
    {                                                                                              \
        0, NULL, NULL, false                                                                       \
    }

/* The arguments of the commands that name one stack. */
typedef struct cli_stack_args {
    const char *cmd; /* the command's name (argv[0]) */
    const char *name;
    bool json;
    bool follow;
    bool wait;
    double timeout;       /* seconds; 0: no limit */
    const char *resource; /* --resource; NULL when not given */
    bool show_secrets;    /* --show-secrets */
} cli_stack_args_t;

/* A command of the form "COMMAND NAME [options]" (option ids from the enum
 * above). */
typedef struct cli_stack_cmd {
    const cli_opt_t *opts;
    const char *usage; /* printed on --help */
    double timeout;    /* --timeout when not given */
    int (*run)(cli_t *cli, const cli_stack_args_t *args);
} cli_stack_cmd_t;

/* Parses the arguments, prints the usage on --help, connects to Redis and
 * runs the command: its exit code. */
int cli_run_stack_cmd(cli_t *cli, int argc, char **argv, const cli_stack_cmd_t *c);

typedef struct cli_args {
    int argc;
    char **argv;
    int i;
    bool words_only;  /* after "--" */
    const char *cmd;  /* for messages; NULL for the global options */
    const char *arg;  /* the option's value or the positional word */
    const char *name; /* the option as written, for messages */
} cli_args_t;

/* Takes one option (id >= 0, value in a->arg) or positional word
 * (CLI_ARG_WORD) into `ctx`: CLI_OK or the exit code of a reported error. */
typedef int (*cli_apply_fn)(const cli_args_t *a, int id, void *ctx);

/* Parses argv[1..] with `opts`, giving every option and word but --help to
 * `apply`: CLI_OK at the end, CLI_HELP, or the first error (reported). */
int cli_parse_args(int argc, char **argv, const char *cmd, const cli_opt_t *opts,
                   cli_apply_fn apply, void *ctx);

/* Starts parsing argv[1..]: options and positional words may be mixed;
 * "--name value", "--name=value", "-P value" and "-Pvalue" are accepted. */
void cli_args_init(cli_args_t *a, int argc, char **argv, const char *cmd);

/* The next option's id (value in a->arg) or one of CLI_ARG_*. `opts` ends
 * with an entry whose name is NULL. */
int cli_next(cli_args_t *a, const cli_opt_t *opts);

/* Stores a positional word in the first of `slots` still NULL; a usage
 * error when every slot is taken. */
int cli_take_word(const cli_args_t *a, const char **slots, int nslots);

/* "-o json" / "-o text": sets *json, or reports a usage error. */
int cli_parse_output(const cli_args_t *a, bool *json);

/* A duration in seconds, >= 0 (0: no limit). */
int cli_parse_seconds(const cli_args_t *a, double *out);

/* The last component of `path` (all of it when it ends with '/'). */
const char *cli_base_name(const char *path);

/* Stack names: 1..255 of [A-Za-z0-9_.-], starting with a letter. */
bool cli_valid_name(const char *name);

/* ---- Redis ---- */

#define CLI_R(type) (1u << (type))
#define CLI_R_STRING_OR_NIL (CLI_R(REDIS_REPLY_STRING) | CLI_R(REDIS_REPLY_NIL))

/* Connects; CLI_OK or CLI_SERVICE ("cannot reach Redis at host:port: ..."). */
int cli_redis_connect(cli_t *cli);

/* Checks a reply: returns it when its type is in the mask `types`; otherwise
 * reports the problem (lost connection, error reply, unexpected type; `what`
 * names the request), frees it and returns NULL. */
redisReply *cli_redis_check(cli_t *cli, redisReply *r, unsigned types, const char *what);

/* A command as an argument vector (binary safe, lens may be NULL), checked. */
redisReply *cli_redis_argv(cli_t *cli, unsigned types, int argc, const char **argv,
                           const size_t *lens);

/* One command of a pipeline. */
typedef struct cli_redis_cmd {
    int argc;
    const char *argv[4];
} cli_redis_cmd_t;

/* Sends the `n` commands at once, then reads their replies: one round trip
 * instead of n. Every reply is read before any is checked, so that the
 * connection stays in step. CLI_OK with replies[i] the reply to cmds[i]
 * (of a type in `types`; free each), or CLI_SERVICE with the first problem
 * reported and no reply kept. */
int cli_redis_pipeline(cli_t *cli, size_t n, const cli_redis_cmd_t *cmds, unsigned types,
                       redisReply **replies);

/* Whether an array reply is field/value pairs of strings, as HGETALL of
 * `key` must answer; reports it when not. */
bool cli_reply_is_hash(cli_t *cli, const redisReply *r, const char *key);

/* The id of the stack called `name` in the names hash: CLI_OK (id "" when
 * no stack has that name) or CLI_SERVICE (reported). */
int cli_lookup(cli_t *cli, const char *name, char id[CV_ID_MAX]);

/* Whether `key` exists: CLI_OK or CLI_SERVICE (reported). */
int cli_key_exists(cli_t *cli, const char *key, bool *exists);

/* An HGETALL reply as {field: value}, values as valid UTF-8 strings
 * (NULL: {}). */
json_t *cli_reply_hash(const redisReply *r);

/* Whether `s` can be a stack id: what keys may safely embed. */
bool cli_valid_id(const char *s);

/* ---- Kafka ---- */

/* Creates the producer and asks the brokers for metadata (5 s):
 * CLI_OK or CLI_SERVICE ("cannot reach Kafka at ..."). */
int cli_kafka_connect(cli_t *cli);

/* Queues one message for `topic`; nothing is sure to be sent before
 * cli_publish_flush. CLI_OK or CLI_SERVICE (reported). */
int cli_publish_queue(cli_t *cli, const char *topic, const cv_msg_t *m);

/* Waits until Kafka acknowledged every message queued since the last flush
 * (10 s): CLI_OK, or CLI_SERVICE with how many were not acknowledged. */
int cli_publish_flush(cli_t *cli, const char *topic);

/* Publishes one STACK job (expand traversal `traversal` of stack `id`) to
 * converge.check and waits until Kafka acknowledged it (10 s). */
int cli_publish_stack(cli_t *cli, const char *id, uint64_t traversal, cv_trav_kind_t kind);

/* Frees the connections and options. */
void cli_close(cli_t *cli);

/* ---- time ---- */

/* Monotonic seconds, for deadlines and rates. */
double cli_monotonic(void);

/* Sleeps `ms` milliseconds (polling loops). */
void cli_sleep_ms(int ms);

/* "2024-05-01T12:00:00.123Z" from Unix seconds. */
void cli_iso_time(double unix_seconds, char *buf, size_t size);

#endif
