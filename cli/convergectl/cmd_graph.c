/*
 * convergectl graph: a stack's dependency graph as Graphviz dot, or as SVG
 * drawn by Graphviz's `dot`. The resources and their dependencies come from
 * the stored template as it runs with the stored parameters and environment
 * (what the next traversal's graph is made of: a traversal's own graph keys
 * are gone once it completes), each resource's status from its record
 * (read with pipelined HGETs, a batch at a time). The drawing is
 * cli_graph's.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"
#include "cv_hot.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PIPELINE_BATCH 1000

extern char **environ;

const char cli_graph_usage[] =
    "usage: convergectl graph NAME|ID [-o dot|svg]\n"
    "\n"
    "Prints the dependency graph of the stack NAME (or of the stack with id ID:\n"
    "a nested stack) in Graphviz's language: one node per resource of its\n"
    "template, labelled with its name, type and status and filled by status\n"
    "(COMPLETE green, IN_PROGRESS yellow, FAILED red, INIT_COMPLETE - nothing\n"
    "done to it yet - grey); one edge A -> B for each resource B that A depends\n"
    "on (depends_on, get_resource, get_attr): arrows go from a resource to what\n"
    "it needs, drawn bottom to top so that what is created first is on top.\n"
    "Resources that left the template and await cleanup are not drawn.\n"
    "\n"
    "  -o, --output FORMAT  dot (default): the graph's text, for `dot -Tpng` and\n"
    "                       the like; svg: drawn by Graphviz's `dot -Tsvg`, which\n"
    "                       must be in PATH (Debian: apt-get install graphviz)\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 printed; 1 `dot` missing or failing; 2 usage error or no such\n"
    "stack; 3 Redis unreachable.\n"
    "\n"
    "  convergectl graph web -o svg > web.svg\n"
    "  convergectl graph web | dot -Tpng > web.png\n";

static const cli_opt_t graph_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_OPTS_END};

typedef struct graph_args {
    const char *name;
    bool svg;
} graph_args_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    graph_args_t *g = ctx;
    if (id == CLI_ARG_WORD)
        return cli_take_word(a, &g->name, 1);
    if (id != CLI_OPT_OUTPUT)
        return CLI_OK;
    if (strcmp(a->arg, "dot") != 0 && strcmp(a->arg, "svg") != 0)
        return cli_usage_error(a->cmd, "%s: expected dot or svg, not '%s'", a->name, a->arg);
    g->svg = strcmp(a->arg, "svg") == 0;
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* Reading the stack                                                        */
/* ------------------------------------------------------------------------ */

/* The stored template as it runs (cli_def_resources does the same). */
static int load_template(cli_t *cli, const char *name, const char *id, cv_template_t **out)
{
    cli_def_t d;
    int rc = cli_def_read(cli, name, id, &d);
    if (rc == CLI_OK) {
        cv_tpl_opts_t opts = {.files = d.files, .env = d.env};
        char err[512];
        if (cv_template_from_json_opts(d.tree, "template", d.params, &opts, out, err,
                                       sizeof(err)) != 0)
            rc = cli_fail(CLI_SERVICE, "stack %s (%s): the stored template does not parse: %s",
                          name, id, err);
    }
    cli_def_free(&d);
    return rc;
}

/* The status of resources [from, from + n) into statuses (JSON strings,
 * valid UTF-8 whatever the record holds). */
static int read_batch(cli_t *cli, const char *id, const cv_template_t *tpl, size_t from, size_t n,
                      json_t *statuses)
{
    char(*keys)[CV_KEY_MAX] = malloc(n * sizeof(*keys));
    cli_redis_cmd_t *cmds = malloc(n * sizeof(*cmds));
    redisReply **replies = calloc(n, sizeof(*replies));
    int rc = keys && cmds && replies ? CLI_OK : cli_fail(CLI_SERVICE, "out of memory");
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        cv_key(keys[i], CV_KEY_MAX, CV_KEY_RES, id, 0, tpl->resources[from + i].name);
        cmds[i] = (cli_redis_cmd_t){3, {"HGET", keys[i], "status"}};
    }
    if (rc == CLI_OK)
        rc = cli_redis_pipeline(cli, n, cmds, CLI_R_STRING_OR_NIL, replies);
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        const redisReply *r = replies[i];
        json_array_append_new(statuses, r->type == REDIS_REPLY_STRING && r->len
                                            ? cli_json_strn(r->str, r->len)
                                            : json_string("INIT_COMPLETE"));
        freeReplyObject(replies[i]);
    }
    free(keys);
    free(cmds);
    free(replies);
    return rc;
}

static int read_statuses(cli_t *cli, const char *id, const cv_template_t *tpl, json_t *statuses)
{
    int rc = CLI_OK;
    for (size_t at = 0; rc == CLI_OK && at < tpl->nresources; at += PIPELINE_BATCH) {
        size_t left = tpl->nresources - at;
        rc = read_batch(cli, id, tpl, at, left < PIPELINE_BATCH ? left : PIPELINE_BATCH, statuses);
    }
    return rc;
}

/* The dot text of the stack: a malloc'd string, or NULL (reported). */
static char *draw(const char *title, const cv_template_t *tpl, const json_t *statuses)
{
    size_t n = tpl->nresources;
    cli_graph_node_t *nodes = calloc(n ? n : 1, sizeof(*nodes));
    if (!nodes) {
        cli_fail(CLI_SERVICE, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const cv_tpl_resource_t *r = &tpl->resources[i];
        nodes[i] =
            (cli_graph_node_t){r->name, r->type, json_string_value(json_array_get(statuses, i)),
                               (const char *const *)r->depends, r->ndepends};
    }
    char *dot = cli_graph_dot(title, nodes, n);
    free(nodes);
    if (!dot)
        cli_fail(CLI_SERVICE, "out of memory drawing the graph");
    return dot;
}

/* ------------------------------------------------------------------------ */
/* SVG through Graphviz                                                     */
/* ------------------------------------------------------------------------ */

/* Feeds `dot` to `dot -Tsvg`, whose output goes to ours. CLI_OK, or
 * CLI_FAILED (reported) when it cannot be run or fails. */
static int render_svg(const char *text)
{
    int fds[2];
    if (pipe(fds) != 0)
        return cli_fail(CLI_FAILED, "graph: cannot make a pipe: %s", strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    char *argv[] = {"dot", "-Tsvg", NULL};
    pid_t pid;
    fflush(stdout);
    int err = posix_spawnp(&pid, "dot", &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[0]);
    if (err != 0) {
        close(fds[1]);
        return cli_fail(CLI_FAILED,
                        "graph -o svg: cannot run Graphviz's dot (%s): install Graphviz "
                        "(Debian: apt-get install graphviz) or use -o dot",
                        strerror(err));
    }
    void (*was)(int) = signal(SIGPIPE, SIG_IGN); /* dot may exit before reading it all */
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fds[1], text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(fds[1]);
    signal(SIGPIPE, was);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return cli_fail(CLI_FAILED, "graph -o svg: dot -Tsvg failed (status %d)", status);
    return CLI_OK;
}

/* Reads the stack and prints its graph: the exit code. */
static int graph(cli_t *cli, const graph_args_t *g)
{
    char id[CV_ID_MAX];
    cv_template_t *tpl = NULL;
    int rc = cli_stack_resolve(cli, g->name, id);
    if (rc == CLI_OK)
        rc = load_template(cli, g->name, id, &tpl);
    if (rc != CLI_OK)
        return rc;
    json_t *statuses = json_array();
    char *dot = NULL;
    rc = read_statuses(cli, id, tpl, statuses);
    if (rc == CLI_OK && !(dot = draw(g->name, tpl, statuses)))
        rc = CLI_SERVICE;
    if (rc == CLI_OK && g->svg)
        rc = render_svg(dot);
    else if (rc == CLI_OK)
        fputs(dot, stdout);
    free(dot);
    json_decref(statuses);
    cv_template_free(tpl);
    return rc;
}

int cli_cmd_graph(cli_t *cli, int argc, char **argv)
{
    graph_args_t g = {0};
    int rc = cli_parse_args(argc, argv, argv[0], graph_opts, apply_opt, &g);
    if (rc == CLI_HELP) {
        fputs(cli_graph_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK && !g.name)
        rc = cli_usage_error(argv[0], "no stack name given");
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    return rc == CLI_OK ? graph(cli, &g) : rc;
}
