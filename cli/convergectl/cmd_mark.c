/*
 * convergectl mark-unhealthy: Heat's `openstack stack resource mark
 * unhealthy`. The resource becomes CHECK_FAILED, so the next traversal
 * replaces it; with --reset a CHECK_FAILED resource becomes CHECK_COMPLETE.
 * A create or update in flight is abandoned at once (a way out of an
 * action stuck forever): a newer traversal waiting for it checks the node
 * again, and when it was the current traversal's own action, that node
 * fails now, through an OBSERVE job that finds the mark.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An engine holds a lease for the milliseconds an action takes; a dead
 * engine's lease runs out within the lease time (5 s by default). */
#define BUSY_WAIT_S 15.0

#define HEAT_REASON "state changed by resource_mark_unhealthy api"

const char cli_mark_unhealthy_usage[] =
    "usage: convergectl mark-unhealthy NAME RESOURCE [--reason R] [--reset]\n"
    "\n"
    "Marks the resource RESOURCE of the stack NAME unhealthy, as Heat's\n"
    "'resource mark unhealthy': its status becomes CHECK_FAILED and the next\n"
    "update (or 'convergectl converge NAME') replaces it. A create or update of\n"
    "it still in progress is abandoned at once: a newer traversal waiting for it\n"
    "replaces or removes it without waiting, and when it was the current\n"
    "traversal's own action, that traversal fails (or rolls back).\n"
    "A resource being deleted is not marked (exit 2).\n"
    "\n"
    "  --reason R   the status reason (default: '" HEAT_REASON "')\n"
    "  --reset      mark a CHECK_FAILED resource healthy again: CHECK_COMPLETE\n"
    "  -h, --help   show this help\n";

enum { OPT_REASON = 200, OPT_RESET };

static const cli_opt_t mark_opts[] = {CLI_HELP_OPT,
                                      {OPT_REASON, "--reason", NULL, true},
                                      {OPT_RESET, "--reset", NULL, false},
                                      CLI_OPTS_END};

typedef struct mark_args {
    const char *words[2]; /* NAME, RESOURCE */
    const char *reason;
    bool reset;
} mark_args_t;

static int apply(const cli_args_t *a, int id, void *ctx)
{
    mark_args_t *m = ctx;
    switch (id) {
    case CLI_ARG_WORD:
        return cli_take_word(a, m->words, 2);
    case OPT_REASON:
        m->reason = a->arg;
        return CLI_OK;
    default: /* OPT_RESET */
        m->reset = true;
        return CLI_OK;
    }
}

/* The traversal's own action was abandoned: an OBSERVE job of that
 * traversal fails its node now rather than at its next look. */
static int observe_now(cli_t *cli, const cli_stack_t *s, const char *resource, const redisReply *r)
{
    const char *trav = cv_reply_str(r, CV_RESOURCE_MARK_R_OBSERVE_TRAVERSAL);
    if (!trav[0])
        return CLI_OK;
    cv_msg_t m = {.type = CV_MSG_OBSERVE, .phase = CV_PHASE_UPDATE, .express = 1};
    snprintf(m.stack, sizeof(m.stack), "%s", s->id);
    snprintf(m.resource, sizeof(m.resource), "%s", resource);
    m.traversal = strtoull(trav, NULL, 10);
    m.version = strtoull(cv_reply_str(r, CV_RESOURCE_MARK_R_VERSION), NULL, 10);
    int rc = cli_kafka_connect(cli);
    if (rc == CLI_OK)
        rc = cli_publish_queue(cli, CV_TOPIC_OBSERVE, &m);
    if (rc == CLI_OK)
        rc = cli_publish_flush(cli, CV_TOPIC_OBSERVE);
    return rc;
}

/* resource_mark.lua, again while an engine holds the lease. */
static redisReply *mark(cli_t *cli, const cli_stack_t *s, const mark_args_t *m)
{
    char res[CV_KEY_MAX], lease[CV_KEY_MAX], events[CV_KEY_MAX], counts[CV_KEY_MAX],
        stack[CV_KEY_MAX];
    cv_key(res, sizeof(res), CV_KEY_RES, s->id, 0, m->words[1]);
    cv_key(lease, sizeof(lease), CV_KEY_LEASE, s->id, 0, m->words[1]);
    cv_key(events, sizeof(events), CV_KEY_EVENTS, s->id, 0, NULL);
    cv_key(counts, sizeof(counts), CV_KEY_COUNTS, s->id, 0, NULL);
    cv_key(stack, sizeof(stack), CV_KEY_STACK, s->id, 0, NULL);
    cv_resource_mark_keys_t keys = {
        .res = res, .lease = lease, .events = events, .counts = counts, .stack = stack};
    cv_resource_mark_args_t args = {.mark = m->reset ? "0" : "1",
                                    .reason = m->reason ? m->reason : HEAT_REASON,
                                    .client = "convergectl",
                                    .resource = m->words[1]};
    double deadline = cli_monotonic() + BUSY_WAIT_S;
    for (;;) {
        redisReply *r = cv_redis_script_sync(cli->redis, CV_SCRIPT_RESOURCE_MARK, keys.v, args.v, 0,
                                             NULL, NULL);
        if (cv_reply_answer(CV_SCRIPT_RESOURCE_MARK, r) != CV_ANSWER_BUSY ||
            cli_monotonic() > deadline)
            return r;
        freeReplyObject(r);
        cli_sleep_ms(50);
    }
}

static int run(cli_t *cli, const mark_args_t *m)
{
    cli_stack_t s;
    int rc = cli_stack_find(cli, m->words[0], &s);
    redisReply *r = rc == CLI_OK ? mark(cli, &s, m) : NULL;
    if (rc == CLI_OK) {
        switch (cv_reply_answer(CV_SCRIPT_RESOURCE_MARK, r)) {
        case CV_ANSWER_OK:
            printf("stack %s (%s) resource %s %s\n", s.name, s.id, m->words[1],
                   cv_reply_str(r, CV_RESOURCE_MARK_R_STATUS));
            rc = observe_now(cli, &s, m->words[1], r);
            break;
        case CV_ANSWER_NONE:
            rc = cli_fail(CLI_USAGE, "stack %s has no resource %s", s.name, m->words[1]);
            break;
        case CV_ANSWER_DELETING:
            rc = cli_fail(CLI_USAGE, "resource %s of stack %s is being deleted: not marked",
                          m->words[1], s.name);
            break;
        case CV_ANSWER_BUSY:
            rc = cli_fail(CLI_SERVICE, "resource %s of stack %s stayed leased for %.0f s",
                          m->words[1], s.name, BUSY_WAIT_S);
            break;
        default:
            rc = cli_fail(CLI_SERVICE, "resource_mark: %s",
                          r && r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        }
    }
    if (r)
        freeReplyObject(r);
    cli_stack_free(&s);
    return rc;
}

int cli_cmd_mark_unhealthy(cli_t *cli, int argc, char **argv)
{
    mark_args_t m = {0};
    int rc = cli_parse_args(argc, argv, argv[0], mark_opts, apply, &m);
    if (rc == CLI_HELP) {
        fputs(cli_mark_unhealthy_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK && !m.words[1])
        rc = cli_usage_error(argv[0], "expected NAME and RESOURCE");
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    return rc == CLI_OK ? run(cli, &m) : rc;
}
