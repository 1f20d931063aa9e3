/*
 * Clearing a hook: one script (hook_clear.lua), then the CHECK job it
 * names. Should this process die in between, the reaper publishes the job
 * again (the node is ready and not done).
 */
#include "cli_hooks.h"

#include "cli_stack.h"

#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int refuse(cli_t *cli, const char *id, const char *resource, const char *hook)
{
    cli_stack_t s;
    bool found = false;
    int rc = cli_stack_read(cli, id, &s, &found);
    if (rc == CLI_OK && hook[0])
        rc = cli_fail(CLI_USAGE,
                      "The \"%s\" hook is not defined on resource \"%s\" of Stack "
                      "\"%s\" [%s]",
                      hook, resource, found ? s.name : "", id);
    else if (rc == CLI_OK)
        rc = cli_fail(CLI_USAGE, "No hook is set on resource \"%s\" of Stack \"%s\" [%s]", resource,
                      found ? s.name : "", id);
    cli_stack_free(&s);
    return rc;
}

static int publish_check(cli_t *cli, const char *id, const char *traversal, const char *node)
{
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = CV_MSG_CHECK;
    m.express = 1;
    m.traversal = strtoull(traversal, NULL, 10);
    m.phase = node[0] == 'c' ? CV_PHASE_CLEANUP : CV_PHASE_UPDATE;
    snprintf(m.stack, sizeof(m.stack), "%s", id);
    snprintf(m.resource, sizeof(m.resource), "%s", strlen(node) > 2 ? node + 2 : "");
    int rc = cli_kafka_connect(cli);
    rc = rc ? rc : cli_publish_queue(cli, CV_TOPIC_CHECK, &m);
    return rc ? rc : cli_publish_flush(cli, CV_TOPIC_CHECK);
}

int cli_hook_clear(cli_t *cli, const char *id, const char *resource, const char *hook,
                   char *cleared, size_t size)
{
    char k[3][CV_KEY_MAX];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, id, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_HOOKS, id, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_EVENTS, id, 0, NULL);
    cv_hook_clear_keys_t keys = {.stack = k[0], .hooks = k[1], .events = k[2]};
    cv_hook_clear_args_t args = {.resource = resource, .hook = hook, .client = "convergectl"};
    redisReply *r = cli_redis_check(
        cli, cv_redis_script_sync(cli->redis, CV_SCRIPT_HOOK_CLEAR, keys.v, args.v, 0, NULL, NULL),
        CLI_R(REDIS_REPLY_ARRAY), "hook_clear");
    if (!r)
        return CLI_SERVICE;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_HOOK_CLEAR, r);
    if (answer == CV_ANSWER_NOHOOK) {
        freeReplyObject(r);
        return refuse(cli, id, resource, hook);
    }
    if (answer != CV_ANSWER_OK || r->elements <= CV_HOOK_CLEAR_R_CLEARED_HOOK) {
        freeReplyObject(r);
        return cli_fail(CLI_SERVICE, "hook_clear answered something unexpected");
    }
    snprintf(cleared, size, "%s", cv_reply_str(r, CV_HOOK_CLEAR_R_CLEARED_HOOK));
    int rc = publish_check(cli, id, cv_reply_str(r, CV_HOOK_CLEAR_R_TRAVERSAL),
                           cv_reply_str(r, CV_HOOK_CLEAR_R_NODE));
    freeReplyObject(r);
    if (rc)
        return cli_fail(rc, "the hook was cleared; its resource goes on once the reaper "
                            "publishes its job again");
    return CLI_OK;
}
