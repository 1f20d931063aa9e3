/*
 * converge-web — the read-only web console: an HTTP server on a libuv loop
 * serving the console's pages (embedded) and a JSON API over the status
 * keys (docs/web.md). It reads Redis and never writes it.
 */
#include "cv_console.h"

#include "cv_status.h"

#include "cv_io.h"
#include "cv_contract.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_LISTEN "127.0.0.1:8080"

static const char usage[] =
    "usage: converge-web [--redis URL] [--prefix P] [--listen HOST:PORT]\n"
    "                    [--token-file PATH] [--insecure] [--convergectl PATH]\n"
    "                    [--log-format text|json] [--log-level LEVEL]\n"
    "\n"
    "Serves Converge's read-only web console: pages for the stacks, a stack's\n"
    "dependency graph (live while it converges), the cluster map, a service and\n"
    "the dead letters, and the JSON API they read (docs/web.md). Reads Redis,\n"
    "never writes it.\n"
    "\n"
    "  --redis URL         Redis, redis://[USER@]HOST:PORT/DB or\n"
    "                      redis+cluster://HOST:PORT,... (default $CONVERGE_REDIS,\n"
    "                      else redis://127.0.0.1:6379/0; password: first line of\n"
    "                      $CONVERGE_REDIS_PASSWORD_FILE)\n"
    "  --prefix P          prefix of every Redis key (default $CONVERGE_PREFIX, else cv:)\n"
    "  --listen HOST:PORT  where to serve (default " DEFAULT_LISTEN "; port 0: a free\n"
    "                      one, printed on stdout as \"listening on HOST:PORT\")\n"
    "  --token-file PATH   a bearer token (the file's first line): every request must\n"
    "                      then carry \"Authorization: Bearer TOKEN\" or ?token=TOKEN;\n"
    "                      open the console once as http://HOST:PORT/?token=TOKEN;\n"
    "                      required to listen on an address other than loopback\n"
    "  --insecure          listen on a non-loopback address without a token: anyone\n"
    "                      who reaches it reads every stack\n"
    "  --convergectl PATH  the convergectl that lists the dead letters from Kafka\n"
    "                      (default: the one beside converge-web; it reads\n"
    "                      $CONVERGE_KAFKA and $CONVERGE_KAFKA_OPTS)\n"
    "  --log-format F      text (default) or json: one JSON object a line, keys time,\n"
    "                      level, process, id, msg ($CONVERGE_LOG_FORMAT)\n"
    "  --log-level L       debug, info (default), warn or error ($CONVERGE_LOG_LEVEL)\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 stopped by SIGINT or SIGTERM; 2 bad option; 3 cannot listen.\n";

typedef struct web_args {
    const char *listen;
    const char *token_file;
    const char *convergectl;
    bool insecure;
    cv_log_opts_t log;
} web_args_t;

enum {
    OPT_REDIS = 10,
    OPT_PREFIX,
    OPT_LISTEN,
    OPT_TOKEN_FILE,
    OPT_CONVERGECTL,
    OPT_INSECURE,
    OPT_LOG_FORMAT,
    OPT_LOG_LEVEL
};

static const cli_opt_t web_opts[] = {
    CLI_HELP_OPT,
    {OPT_REDIS, "--redis", NULL, true},
    {OPT_PREFIX, "--prefix", NULL, true},
    {OPT_LISTEN, "--listen", NULL, true},
    {OPT_TOKEN_FILE, "--token-file", NULL, true},
    {OPT_CONVERGECTL, "--convergectl", NULL, true},
    {OPT_INSECURE, "--insecure", NULL, false},
    {OPT_LOG_FORMAT, "--log-format", NULL, true},
    {OPT_LOG_LEVEL, "--log-level", NULL, true},
    CLI_OPTS_END,
};

typedef struct parse_ctx {
    cli_t *cli;
    web_args_t *args;
} parse_ctx_t;

static int bad(const char *fmt, const char *what, const char *why)
{
    fprintf(stderr, "converge-web: ");
    fprintf(stderr, fmt, what, why);
    fprintf(stderr, "\nTry 'converge-web --help'.\n");
    return CLI_USAGE;
}

static int apply(const cli_args_t *a, int id, void *ctx)
{
    parse_ctx_t *p = ctx;
    char err[512];
    switch (id) {
    case OPT_REDIS:
        return cv_opts_set_redis(&p->cli->opts, a->arg, err, sizeof(err))
                   ? bad("--redis %s: %s", a->arg, err)
                   : CLI_OK;
    case OPT_PREFIX:
        snprintf(p->cli->opts.prefix, sizeof(p->cli->opts.prefix), "%s", a->arg);
        return cv_keys_set_prefix(a->arg) ? bad("--prefix %s: %s", a->arg, "too long") : CLI_OK;
    case OPT_LISTEN:
        p->args->listen = a->arg;
        return CLI_OK;
    case OPT_TOKEN_FILE:
        p->args->token_file = a->arg;
        return CLI_OK;
    case OPT_CONVERGECTL:
        p->args->convergectl = a->arg;
        return CLI_OK;
    case OPT_INSECURE:
        p->args->insecure = true;
        return CLI_OK;
    case OPT_LOG_FORMAT:
    case OPT_LOG_LEVEL:
        return cv_log_opts_set(&p->args->log, id == OPT_LOG_FORMAT ? "log-format" : "log-level",
                               a->arg, err, sizeof(err))
                   ? bad("%s%s", err, "")
                   : CLI_OK;
    default:
        return bad("unexpected argument '%s'%s", a->arg, "");
    }
}

/* convergectl beside this program (/proc/self/exe's directory). */
static void default_convergectl(char *out, size_t size)
{
    char self[PATH_MAX - 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    if (snprintf(out, size, "%s/convergectl", n > 0 ? self : ".") >= (int)size)
        snprintf(out, size, "convergectl");
}

static int setup(int argc, char **argv, cli_t *cli, web_server_t *s, web_args_t *args)
{
    char err[512];
    if (cv_opts_from_env(&cli->opts, err, sizeof(err)))
        return bad("%s%s", err, "");
    if (cv_keys_set_prefix(cli->opts.prefix))
        return bad("CONVERGE_PREFIX %s: %s", cli->opts.prefix, "too long");
    if (cv_log_opts_from_env(&args->log, err, sizeof(err)))
        return bad("%s%s", err, "");
    parse_ctx_t ctx = {cli, args};
    int rc = cli_parse_args(argc, argv, NULL, web_opts, apply, &ctx);
    if (rc == CLI_HELP) {
        fputs(usage, stdout);
        return CLI_HELP;
    }
    if (rc != CLI_OK)
        return CLI_USAGE;
    char host[256];
    int port;
    if (cv_httpreq_addr(args->listen, host, sizeof(host), &port, err, sizeof(err)))
        return bad("--listen %s: %s", args->listen, err);
    if (!args->token_file && !args->insecure && !cv_httpreq_host_is_loopback(host))
        return bad("--listen %s: %s", args->listen,
                   "not a loopback address, and no --token-file: anyone who reaches it would "
                   "read every stack. Give --token-file PATH (and put a TLS proxy in front), "
                   "listen on 127.0.0.1, or pass --insecure to serve it open anyway");
    if (args->token_file && cv_opts_read_secret("console token", args->token_file, s->token,
                                                sizeof(s->token), err, sizeof(err)))
        return bad("--token-file %s: %s", args->token_file, err);
    if (args->convergectl)
        snprintf(s->convergectl, sizeof(s->convergectl), "%s", args->convergectl);
    else
        default_convergectl(s->convergectl, sizeof(s->convergectl));
    return CLI_OK;
}

static uv_signal_t sigint, sigterm;
static cv_http_t *server;

static void on_signal(uv_signal_t *h, int signum)
{
    cv_info("signal %d: stopping", signum);
    web_stream_close_all();
    cv_http_close(server);
    uv_close((uv_handle_t *)&sigint, NULL);
    uv_close((uv_handle_t *)&sigterm, NULL);
    (void)h;
}

int main(int argc, char **argv)
{
    cli_t cli;
    memset(&cli, 0, sizeof(cli));
    web_server_t s = {.cli = &cli, .stream_interval_ms = 500};
    web_args_t args = {.listen = DEFAULT_LISTEN};
    cv_log_init("converge-web", CV_LOG_INFO);
    signal(SIGPIPE, SIG_IGN);
    int rc = setup(argc, argv, &cli, &s, &args);
    if (rc != CLI_OK) {
        cli_close(&cli);
        return rc == CLI_HELP ? 0 : CLI_USAGE;
    }
    cv_log_start("web", "converge-web", &args.log);
    cv_opts_warn_unauthenticated(&cli.opts, false);
    s.loop = uv_default_loop();
    s.reads = web_reads_new(s.loop, &cli);
    char err[512];
    if (cv_http_start(s.loop, args.listen, web_server_handle, &s, &server, err, sizeof(err))) {
        fprintf(stderr, "converge-web: %s\n", err);
        cli_close(&cli);
        return CLI_SERVICE;
    }
    char host[256];
    int port;
    cv_httpreq_addr(args.listen, host, sizeof(host), &port, err, sizeof(err));
    printf("listening on %s:%d\n", host, cv_http_port(server));
    fflush(stdout);
    cv_info("serving on %s:%d (Redis %s, prefix %s%s)", host, cv_http_port(server),
            cli.opts.redis_url, cli.opts.prefix, s.token[0] ? ", bearer token required" : "");
    if (args.insecure && !s.token[0] && !cv_httpreq_host_is_loopback(host))
        cv_warn("serving %s:%d without a token (--insecure): anyone who reaches it reads "
                "every stack",
                host, cv_http_port(server));
    uv_signal_init(s.loop, &sigint);
    uv_signal_init(s.loop, &sigterm);
    uv_signal_start(&sigint, on_signal, SIGINT);
    uv_signal_start(&sigterm, on_signal, SIGTERM);
    uv_run(s.loop, UV_RUN_DEFAULT); /* until the reads still out came back */
    uv_loop_close(s.loop);
    web_reads_free(s.reads);
    cli_close(&cli);
    return 0;
}
