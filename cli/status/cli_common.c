/*
 * Messages, option parsing and time helpers of convergectl
 * (connections are in cli_conn.c).
 */
#include "cli_common.h"
#include "cli_output.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */
/* ------------------------------------------------------------------------ */

/* Writes "convergectl: [CMD: ]MESSAGE" on stderr. A limit's hint is
 * phrased as what a user of convergectl can change (cli_limit_hints): the
 * template loader and the limits table name the workers' --max-* options,
 * which convergectl does not have. */
static void report(const char *cmd, const char *fmt, va_list ap)
{
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    char *said = msg ? cli_limit_hints(msg) : NULL;
    fputs("convergectl: ", stderr);
    if (cmd)
        fprintf(stderr, "%s: ", cmd);
    fputs(said ? said : msg ? msg : "(out of memory formatting a message)", stderr);
    fputc('\n', stderr);
    free(said);
    free(msg);
}

int cli_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(NULL, fmt, ap);
    va_end(ap);
    return code;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(cmd, fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'convergectl %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
    return CLI_USAGE;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

void cli_args_init(cli_args_t *a, int argc, char **argv, const char *cmd)
{
    memset(a, 0, sizeof(*a));
    a->argc = argc;
    a->argv = argv;
    a->i = 1;
    a->cmd = cmd;
}

/* Finds the option `word` names. For "--name=value" and "-Pvalue" the
 * attached value is returned in *attached. */
static const cli_opt_t *find_opt(const char *word, const cli_opt_t *opts, const char **attached)
{
    *attached = NULL;
    for (const cli_opt_t *o = opts; o->name; o++) {
        size_t n = strlen(o->name);
        if (strncmp(word, o->name, n) == 0 && (word[n] == '\0' || (o->has_arg && word[n] == '='))) {
            *attached = word[n] ? word + n + 1 : NULL;
            return o;
        }
        if (!o->alias)
            continue;
        n = strlen(o->alias);
        if (strncmp(word, o->alias, n) == 0 && (word[n] == '\0' || o->has_arg)) {
            *attached = word[n] ? word + n : NULL;
            return o;
        }
    }
    return NULL;
}

int cli_next(cli_args_t *a, const cli_opt_t *opts)
{
    if (a->i >= a->argc)
        return CLI_ARG_END;
    const char *word = a->argv[a->i++];
    if (!a->words_only && strcmp(word, "--") == 0) {
        a->words_only = true;
        return cli_next(a, opts);
    }
    if (a->words_only || word[0] != '-' || word[1] == '\0') {
        a->arg = word;
        return CLI_ARG_WORD;
    }
    a->name = word;
    const char *attached;
    const cli_opt_t *o = find_opt(word, opts, &attached);
    if (!o) {
        cli_usage_error(a->cmd, "unknown option '%s'", word);
        return CLI_ARG_BAD;
    }
    a->arg = NULL;
    if (o->has_arg) {
        if (attached) {
            a->arg = attached;
        } else if (a->i < a->argc) {
            a->arg = a->argv[a->i++];
        } else {
            cli_usage_error(a->cmd, "option '%s' needs a value", word);
            return CLI_ARG_BAD;
        }
    }
    return o->id;
}

int cli_take_word(const cli_args_t *a, const char **slots, int nslots)
{
    for (int i = 0; i < nslots; i++) {
        if (!slots[i]) {
            slots[i] = a->arg;
            return CLI_OK;
        }
    }
    return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
}

int cli_parse_output(const cli_args_t *a, bool *json)
{
    if (strcmp(a->arg, "json") == 0)
        *json = true;
    else if (strcmp(a->arg, "text") == 0)
        *json = false;
    else
        return cli_usage_error(a->cmd, "unknown output format '%s' (json or text)", a->arg);
    return CLI_OK;
}

int cli_parse_seconds(const cli_args_t *a, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(a->arg, &end);
    if (errno || end == a->arg || *end || !isfinite(v) || v < 0)
        return cli_usage_error(a->cmd, "%s: '%s' is not a number of seconds", a->name, a->arg);
    *out = v;
    return CLI_OK;
}

int cli_parse_args(int argc, char **argv, const char *cmd, const cli_opt_t *opts,
                   cli_apply_fn apply, void *ctx)
{
    cli_args_t a;
    cli_args_init(&a, argc, argv, cmd);
    for (;;) {
        int id = cli_next(&a, opts);
        if (id == CLI_ARG_END)
            return CLI_OK;
        if (id == CLI_ARG_BAD)
            return CLI_USAGE;
        if (id == CLI_OPT_HELP)
            return CLI_HELP;
        int rc = apply(&a, id, ctx);
        if (rc)
            return rc;
    }
}

static int apply_stack_opt(const cli_args_t *a, int id, void *ctx)
{
    cli_stack_args_t *out = ctx;
    switch (id) {
    case CLI_OPT_OUTPUT:
        return cli_parse_output(a, &out->json);
    case CLI_OPT_FOLLOW:
        out->follow = true;
        return CLI_OK;
    case CLI_OPT_WAIT:
        out->wait = true;
        return CLI_OK;
    case CLI_OPT_TIMEOUT:
        return cli_parse_seconds(a, &out->timeout);
    case CLI_OPT_RESOURCE:
        out->resource = a->arg;
        return CLI_OK;
    case CLI_OPT_SHOW_SECRETS:
        out->show_secrets = true;
        return CLI_OK;
    default:
        return cli_take_word(a, &out->name, 1);
    }
}

int cli_run_stack_cmd(cli_t *cli, int argc, char **argv, const cli_stack_cmd_t *c)
{
    cli_stack_args_t args = {.cmd = argv[0], .timeout = c->timeout};
    int rc = cli_parse_args(argc, argv, argv[0], c->opts, apply_stack_opt, &args);
    if (rc == CLI_HELP) {
        fputs(c->usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK && !args.name)
        rc = cli_usage_error(args.cmd, "no stack name given");
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    return rc == CLI_OK ? c->run(cli, &args) : rc;
}

const char *cli_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

bool cli_valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 255 || !isalpha((unsigned char)name[0]))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!isalnum(c) && c != '_' && c != '.' && c != '-')
            return false;
    }
    return true;
}

bool cli_valid_id(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= CV_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]))
            return false;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Time                                                                     */
/* ------------------------------------------------------------------------ */

double cli_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void cli_iso_time(double unix_seconds, char *buf, size_t size)
{
    long long ms = llround(unix_seconds * 1000.0);
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (ms < 0 || !gmtime_r(&secs, &tm)) {
        snprintf(buf, size, "-");
        return;
    }
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%03lldZ", date, ms % 1000);
}
