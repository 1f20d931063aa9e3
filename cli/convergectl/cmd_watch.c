/*
 * convergectl watch: a stack's progress until it settles — one redrawn line
 * on a terminal, one line a second otherwise (logs, pipes).
 */
#include "cli_commands.h"
#include "cv_status.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BAR_WIDTH 20
#define LOG_INTERVAL 1.0 /* seconds between lines when not on a terminal */

const char cli_watch_usage[] =
    "usage: convergectl watch NAME [--timeout SEC]\n"
    "\n"
    "Shows the progress of the stack NAME until its status is no longer\n"
    "*_IN_PROGRESS:\n"
    "  [#####...............] done/total  NN.N res/s  elapsed 12.3s  STATUS\n"
    "redrawn in place on a terminal, one line a second otherwise; then the final\n"
    "status. Exits 0 when it ends *_COMPLETE, 1 when *_FAILED, 4 on timeout.\n"
    "\n"
    "  --timeout SEC  give up after SEC seconds (default 0: no limit)\n"
    "  -h, --help     show this help\n";

static const cli_opt_t watch_opts[] = {CLI_HELP_OPT, CLI_TIMEOUT_OPT, CLI_OPTS_END};

typedef struct view {
    bool tty;
    bool drawn;        /* a progress line is on the terminal, unterminated */
    double last_print; /* elapsed seconds at the last line (not on a terminal) */
    long long done0;   /* nodes done when the rate started counting */
    long long trav0;   /* ...in this traversal */
    double t0;         /* ...at this elapsed time */
    bool started;
} view_t;

static void format_bar(const cli_stack_t *s, char *bar)
{
    int fill =
        s->total > 0 ? (int)(BAR_WIDTH * (s->done > s->total ? s->total : s->done) / s->total) : 0;
    bar[0] = '[';
    for (int i = 0; i < BAR_WIDTH; i++)
        bar[1 + i] = i < fill ? '#' : '.';
    bar[BAR_WIDTH + 1] = ']';
    bar[BAR_WIDTH + 2] = '\0';
}

/* The rate counts nodes done while we watch, within one traversal. */
static double rate(view_t *v, const cli_stack_t *s, double elapsed)
{
    if (!v->started || s->traversal != v->trav0) {
        v->started = true;
        v->trav0 = s->traversal;
        v->done0 = s->done;
        v->t0 = elapsed;
    }
    return elapsed > v->t0 ? (double)(s->done - v->done0) / (elapsed - v->t0) : 0.0;
}

static void on_tick(const cli_stack_t *s, double elapsed, void *ud)
{
    view_t *v = ud;
    double per_second = rate(v, s, elapsed);
    bool settled = cli_stack_settled(s);
    if (!v->tty && !settled && v->last_print >= 0 && elapsed - v->last_print < LOG_INTERVAL)
        return;
    char bar[BAR_WIDTH + 3];
    format_bar(s, bar);
    printf("%s%s %lld/%lld  %.1f res/s  elapsed %.1fs  %s%s", v->tty ? "\r" : "", bar, s->done,
           s->total, per_second, elapsed, s->status, v->tty ? "\033[K" : "\n");
    fflush(stdout);
    v->drawn = v->tty;
    v->last_print = elapsed;
}

static int watch(cli_t *cli, const cli_stack_args_t *args)
{
    char id[CV_ID_MAX];
    int rc = cli_stack_resolve(cli, args->name, id);
    if (rc)
        return rc;
    view_t v = {.tty = isatty(STDOUT_FILENO) == 1, .last_print = -1};
    cli_stack_t s;
    rc = cli_stack_wait(cli, id, args->timeout, on_tick, &v, &s);
    if (v.drawn)
        printf("\n");
    if (rc == CLI_TIMEOUT)
        cli_stack_report_timeout(&s, args->timeout);
    if (rc == CLI_OK)
        rc = cli_secret_mask_reason(cli, id, &s.reason); /* docs/security.md "Secrets" */
    if (rc == CLI_OK) {
        cli_stack_print_final(&s);
        rc = cli_stack_outcome(&s, NULL);
    }
    cli_stack_free(&s);
    return rc;
}

int cli_cmd_watch(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {watch_opts, cli_watch_usage, 0, watch};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}
