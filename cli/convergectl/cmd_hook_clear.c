/*
 * convergectl hook-clear: clears the hook (Heat's breakpoint) a resource
 * waits on, as `openstack stack hook clear` does, so that its action and
 * the traversal go on. The clear is one script (hook_clear.lua, which a
 * signal {"unset_hook": HOOK} runs too); the CHECK job it asks for is
 * published after, and the reaper publishes it again should this process
 * die in between.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_hook_clear_usage[] =
    "usage: convergectl hook-clear NAME RESOURCE [--hook HOOK]\n"
    "\n"
    "Clears the hook that RESOURCE of the stack NAME waits on: the environment's\n"
    "resource_registry stopped it before an action (hooks: pre-create, pre-update,\n"
    "pre-delete) and `status` lists it under waiting hooks. The event 'Hook HOOK is\n"
    "cleared' is written and the action goes on. A resource of a nested stack is\n"
    "named by its path, PARENT_RESOURCE/RESOURCE. Prints 'stack NAME: RESOURCE: hook\n"
    "HOOK cleared'.\n"
    "\n"
    "  --hook HOOK   the hook to clear (default: the one the resource waits on);\n"
    "                refused (exit 2), as Heat refuses it, when the resource does not\n"
    "                wait on it\n"
    "  -h, --help    show this help\n";

enum { OPT_HOOK = 200 };

static const cli_opt_t hook_clear_opts[] = {
    CLI_HELP_OPT, {OPT_HOOK, "--hook", NULL, true}, CLI_OPTS_END};

typedef struct hook_clear {
    const char *words[2]; /* NAME, RESOURCE */
    const char *hook;     /* "" : whichever is waited on */
} hook_clear_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    hook_clear_t *h = ctx;
    if (id == CLI_ARG_WORD)
        return cli_take_word(a, h->words, 2);
    static const char *const valid[] = {"pre-create",  "pre-update",  "pre-delete",
                                        "post-create", "post-update", "post-delete"};
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
        if (strcmp(a->arg, valid[i]) == 0) {
            h->hook = a->arg;
            return CLI_OK;
        }
    return cli_usage_error(a->cmd, "Invalid hook type \"%s\" for resource", a->arg);
}

/* The stack and resource a path names: every segment but the last is a
 * resource whose physical resource is a nested stack. */
static int follow_path(cli_t *cli, char *id, const char *path, const char **resource)
{
    const char *seg = path, *slash;
    while ((slash = strchr(seg, '/')) != NULL) {
        char name[CV_NAME_MAX], key[CV_KEY_MAX];
        snprintf(name, sizeof(name), "%.*s", (int)(slash - seg), seg);
        cv_key(key, sizeof(key), CV_KEY_RES, id, 0, name);
        const char *argv[] = {"HGET", key, "physical_id"};
        redisReply *r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, argv, NULL);
        if (!r)
            return CLI_SERVICE;
        bool found = r->type == REDIS_REPLY_STRING && r->len > 0 && r->len < CV_ID_MAX;
        if (found)
            snprintf(id, CV_ID_MAX, "%s", r->str);
        freeReplyObject(r);
        if (!found)
            return cli_fail(CLI_USAGE, "%s: resource '%s' has no nested stack", path, name);
        seg = slash + 1;
    }
    *resource = seg;
    return CLI_OK;
}

static int clear(cli_t *cli, const hook_clear_t *h)
{
    char id[CV_ID_MAX], cleared[32];
    const char *resource = NULL;
    int rc = cli_redis_connect(cli);
    rc = rc ? rc : cli_stack_resolve(cli, h->words[0], id);
    rc = rc ? rc : follow_path(cli, id, h->words[1], &resource);
    rc = rc ? rc : cli_hook_clear(cli, id, resource, h->hook, cleared, sizeof(cleared));
    if (rc == CLI_OK)
        printf("stack %s: %s: hook %s cleared\n", h->words[0], h->words[1], cleared);
    return rc;
}

int cli_cmd_hook_clear(cli_t *cli, int argc, char **argv)
{
    hook_clear_t h = {.words = {NULL, NULL}, .hook = ""};
    int rc = cli_parse_args(argc, argv, "hook-clear", hook_clear_opts, apply_opt, &h);
    if (rc == CLI_HELP) {
        fputs(cli_hook_clear_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK && (!h.words[0] || !h.words[1]))
        rc = cli_usage_error("hook-clear", "a stack name and a resource are needed");
    return rc == CLI_OK ? clear(cli, &h) : rc;
}
