/*
 * convergectl rollout status|pause|resume|rollback NAME SERVICE: the rolling
 * update of a stack's Converge::Service resource (docs/crm.md "Rolling
 * updates"): the service record's `rollout`, which the live planner writes
 * and reads at every plan. The control words are written by rollout_ctl.lua;
 * this command moves no replica itself.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>
#include <string.h>

const char cli_rollout_usage[] =
    "usage: convergectl rollout status|pause|resume|rollback NAME SERVICE [-o json]\n"
    "\n"
    "The rolling update of the Converge::Service resource SERVICE of the stack\n"
    "NAME: a change of its processes under its update_policy, or by upgrade\n"
    "domain ('convergectl upgrade').\n"
    "  status    where it stands: from and to (process digests), state (rolling,\n"
    "            paused, failed, rolling_back, rolled_back, complete), step of\n"
    "            steps, the replicas of the step in flight, the current upgrade\n"
    "            domain, and why it waits or failed\n"
    "  pause     stop after the step in flight\n"
    "  resume    go on after a pause; in manual mode, allow one more step\n"
    "  rollback  roll the replaced replicas back to the old process spec\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: the rollout as stored\n"
    "                       (docs/crm.md), or null when there is none\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 done (status: also when there is no rolling update);\n"
    "1 pause, resume or rollback of a service without a rolling update or one\n"
    "that is over; 2 usage error, unknown stack or SERVICE is no\n"
    "Converge::Service resource of it; 3 cannot reach Redis.\n";

static const cli_opt_t rollout_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_OPTS_END};

typedef struct rollout_args {
    const char *words[3]; /* the action, the stack, the service */
    bool json;
} rollout_args_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    rollout_args_t *out = ctx;
    if (id == CLI_ARG_WORD)
        return cli_take_word(a, out->words, 3);
    if (id == CLI_OPT_OUTPUT)
        return cli_parse_output(a, &out->json);
    return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
}

/* The service id of SERVICE into svc (CV_KEY_MAX). */
static int service_id(cli_t *cli, const rollout_args_t *p, char *svc, size_t size)
{
    char id[CV_ID_MAX];
    json_t *services = NULL;
    int rc = cli_stack_resolve(cli, p->words[1], id);
    if (rc == CLI_OK)
        rc = cli_live_stack_services(cli, p->words[1], id, p->words[2], &services);
    if (rc == CLI_OK && json_array_size(services) == 0)
        rc = cli_fail(CLI_USAGE, "service %s of stack %s is not created yet", p->words[2],
                      p->words[1]);
    if (rc == CLI_OK)
        snprintf(svc, size, "%s",
                 json_string_value(json_object_get(json_array_get(services, 0), "svc")));
    json_decref(services);
    return rc;
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static void print_text(const rollout_args_t *p, const json_t *r)
{
    if (!json_is_object(r)) {
        printf("service %s of stack %s: no rolling update\n", p->words[2], p->words[1]);
        return;
    }
    printf("service %s of stack %s: rolling update %s -> %s\n", p->words[2], p->words[1],
           str(r, "from"), str(r, "to"));
    printf("  state:  %s, step %lld of %lld (%s, %s%s)\n", str(r, "state"),
           (long long)json_integer_value(json_object_get(r, "step")),
           (long long)json_integer_value(json_object_get(r, "steps")), str(r, "order"),
           str(r, "mode"),
           json_is_true(json_object_get(r, "by_upgrade_domain")) ? ", by upgrade domain" : "");
    if (json_is_true(json_object_get(r, "by_upgrade_domain"))) {
        printf("  domain: %s of", str(r, "domain")[0] ? str(r, "domain") : "-");
        size_t i;
        const json_t *d;
        json_array_foreach(json_object_get(r, "domains"), i, d)
        {
            printf(" %s", json_string_value(d));
        }
        printf("\n");
    }
    const json_t *batch = json_object_get(r, "batch");
    if (json_array_size(batch) > 0) {
        printf("  step:  ");
        size_t i;
        const json_t *item;
        json_array_foreach(batch, i, item)
        {
            printf(" %s-%lld on %s", p->words[2],
                   (long long)json_integer_value(json_object_get(item, "index")),
                   str(item, "node"));
        }
        printf("\n");
    }
    if (json_is_true(json_object_get(r, "pause")))
        printf("  pause asked: stops after the step in flight\n");
    if (str(r, "reason")[0])
        printf("  reason: %s\n", str(r, "reason"));
}

static int status(cli_t *cli, const rollout_args_t *p, const char *key)
{
    const char *argv[] = {"HGET", key, "rollout"};
    redisReply *rep = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, argv, NULL);
    if (!rep)
        return CLI_SERVICE;
    json_t *r = rep->type == REDIS_REPLY_STRING ? json_loads(rep->str, 0, NULL) : NULL;
    freeReplyObject(rep);
    if (p->json) {
        json_t *null = json_null();
        cli_print_json(r ? r : null);
        json_decref(null);
    } else {
        print_text(p, r);
    }
    json_decref(r);
    return CLI_OK;
}

static int control(cli_t *cli, const rollout_args_t *p, const char *key)
{
    cv_rollout_ctl_keys_t keys = {.svc = key};
    cv_rollout_ctl_args_t args = {.action = p->words[0]};
    redisReply *r = cli_redis_check(
        cli, cv_redis_script_sync(cli->redis, CV_SCRIPT_ROLLOUT_CTL, keys.v, args.v, 0, NULL, NULL),
        CLI_R(REDIS_REPLY_ARRAY), "rollout_ctl");
    if (!r)
        return CLI_SERVICE;
    int rc = CLI_OK;
    switch (cv_reply_answer(CV_SCRIPT_ROLLOUT_CTL, r)) {
    case CV_ANSWER_OK:
        printf("service %s of stack %s: rollout %s asked\n", p->words[2], p->words[1], p->words[0]);
        break;
    case CV_ANSWER_NONE:
        rc = cli_fail(CLI_FAILED, "service %s of stack %s has no rolling update", p->words[2],
                      p->words[1]);
        break;
    case CV_ANSWER_SETTLED:
        rc = cli_fail(CLI_FAILED, "the rolling update of service %s of stack %s is over (%s)",
                      p->words[2], p->words[1], cv_reply_str(r, CV_ROLLOUT_CTL_R_STATE));
        break;
    default:
        rc = cli_fail(CLI_SERVICE, "rollout_ctl: unexpected reply");
        break;
    }
    freeReplyObject(r);
    return rc;
}

int cli_cmd_rollout(cli_t *cli, int argc, char **argv)
{
    static const char *const actions[] = {"status", "pause", "resume", "rollback", NULL};
    rollout_args_t p = {{NULL, NULL, NULL}, false};
    int rc = cli_parse_args(argc, argv, "rollout", rollout_opts, apply_opt, &p);
    if (rc == CLI_HELP) {
        fputs(cli_rollout_usage, stdout);
        return CLI_OK;
    }
    if (rc != CLI_OK)
        return rc;
    if (!p.words[0] || !p.words[1] || !p.words[2])
        return cli_usage_error("rollout", "expected an action, a stack and a service: "
                                          "status|pause|resume|rollback NAME SERVICE");
    size_t k = 0;
    while (actions[k] && strcmp(actions[k], p.words[0]) != 0)
        k++;
    if (!actions[k])
        return cli_usage_error("rollout",
                               "unknown action '%s' (expected status, pause, resume or rollback)",
                               p.words[0]);
    char svc[CV_KEY_MAX], key[CV_KEY_MAX];
    rc = cli_redis_connect(cli);
    if (rc == CLI_OK)
        rc = service_id(cli, &p, svc, sizeof(svc));
    if (rc != CLI_OK)
        return rc;
    cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, svc);
    return k == 0 ? status(cli, &p, key) : control(cli, &p, key);
}
