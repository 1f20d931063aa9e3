/*
 * convergectl submit: validates a template, stores the stack's definition
 * and publishes the one STACK job that makes a worker expand it.
 *
 * Nothing is stored before the template is valid and both services answer.
 * The stack is stored first and named after, so a name maps only to a stack
 * that exists or did (one gone was purged): a name left to a stack gone or
 * DELETE_COMPLETE is free, taken over here and freed by the reaper. Any
 * failure undoes everything stored, so there is never a stack that nobody
 * will work on.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_submit_usage[] =
    "usage: convergectl submit NAME TEMPLATE [-P NAME=VALUE]... [--param-file ENV]...\n"
    "                          [--enable-rollback | --disable-rollback]\n"
    "                          [--no-converge-drift]\n"
    "                          [--wait] [--timeout SEC]\n"
    "\n"
    "Creates the stack NAME from TEMPLATE: validates it as validate does, stores\n"
    "it and hands it to the workers. Prints 'stack NAME (ID) CREATE_IN_PROGRESS'.\n"
    "NAME is 1 to 255 characters of A-Z a-z 0-9 _ . - starting with a letter.\n"
    "\n"
    "  -P, --parameter NAME=VALUE  a parameter value; the last one of a name wins\n"
    "  --param-file ENV            a Heat environment file: parameters,\n"
    "                              parameter_defaults, parameter_merge_strategies,\n"
    "                              resource_registry (type -> type or template file,\n"
    "                              wildcards, per-resource sections with\n"
    "                              restricted_actions); repeatable, merged in order as\n"
    "                              Heat merges -e files; -P values override it\n"
    "  --enable-rollback           when the create fails, roll back: delete what was\n"
    "                              created (ROLLBACK_IN_PROGRESS, then ROLLBACK_COMPLETE\n"
    "                              or ROLLBACK_FAILED); off by default, as in Heat\n"
    "  --disable-rollback          leave a failed create CREATE_FAILED (the default;\n"
    "                              accepted as update accepts it, and as Heat's\n"
    "                              stack-create spells it)\n"
    "  --no-converge-drift         once COMPLETE, leave the stack's services as they\n"
    "                              drift: the observers' cluster loop does not place\n"
    "                              again replicas of lost nodes or replicas that gave\n"
    "                              up until 'convergectl converge NAME' (the agents'\n"
    "                              restart policies still apply); 'convergectl update\n"
    "                              NAME --existing --converge-drift' switches it on\n"
    "  --wait                      wait until the stack settles; print its status,\n"
    "                              reason and outputs; exit 0 when CREATE_COMPLETE,\n"
    "                              1 otherwise (also when rolled back: with\n"
    "                              --enable-rollback a failure is followed through\n"
    "                              its rollback), 4 on timeout; when not complete,\n"
    "                              the resources that failed, each with its action\n"
    "                              and reason (secrets ******, as readers show them)\n"
    "  --timeout SEC               how long --wait waits (default 600; 0: no limit)\n"
    "  -h, --help                  show this help\n";

enum { OPT_ENABLE_ROLLBACK = 200, OPT_DISABLE_ROLLBACK, OPT_NO_CONVERGE_DRIFT };

static const cli_opt_t submit_opts[] = {CLI_HELP_OPT,
                                        CLI_TEMPLATE_OPTS,
                                        CLI_WAIT_OPT,
                                        {OPT_ENABLE_ROLLBACK, "--enable-rollback", NULL, false},
                                        {OPT_DISABLE_ROLLBACK, "--disable-rollback", NULL, false},
                                        {OPT_NO_CONVERGE_DRIFT, "--no-converge-drift", NULL, false},
                                        CLI_TIMEOUT_OPT,
                                        CLI_OPTS_END};

typedef struct submit {
    cli_tpl_args_t args;
    const char *rollback; /* "1", "0", "" (not given: off, as in Heat) */
    bool no_drift;
    cli_loaded_t loaded;
    char id[CV_ID_MAX];
    uint64_t traversal;
} submit_t;

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */
/* ------------------------------------------------------------------------ */

static int check_words(const char *cmd, const submit_t *s)
{
    if (!s->args.words[0])
        return cli_usage_error(cmd, "no stack name given");
    if (!s->args.words[1])
        return cli_usage_error(cmd, "no template given");
    if (!cli_valid_name(s->args.words[0]))
        return cli_usage_error(cmd,
                               "invalid stack name '%s': 1 to 255 characters of A-Z a-z 0-9 _ . -, "
                               "starting with a letter",
                               s->args.words[0]);
    return CLI_OK;
}

/* As update's: the two flags may repeat but not contradict each other. */
static int set_rollback(const cli_args_t *a, submit_t *s, const char *flag)
{
    if (s->rollback[0] && strcmp(s->rollback, flag) != 0)
        return cli_usage_error(a->cmd, "--enable-rollback and --disable-rollback contradict "
                                       "each other");
    s->rollback = flag;
    return CLI_OK;
}

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    submit_t *s = ctx;
    if (id == OPT_ENABLE_ROLLBACK)
        return set_rollback(a, s, "1");
    if (id == OPT_DISABLE_ROLLBACK)
        return set_rollback(a, s, "0");
    if (id == OPT_NO_CONVERGE_DRIFT)
        s->no_drift = true;
    else
        return cli_tpl_args_option(&s->args, a, id);
    return CLI_OK;
}

static int parse_args(int argc, char **argv, submit_t *s)
{
    int rc = cli_parse_args(argc, argv, "submit", submit_opts, apply_opt, s);
    return rc == CLI_OK ? check_words("submit", s) : rc;
}

/* ------------------------------------------------------------------------ */
/* Storing                                                                  */
/* ------------------------------------------------------------------------ */

/* 16 lowercase hex characters from the kernel's random source. */
static int new_stack_id(char id[CV_ID_MAX])
{
    unsigned char raw[8];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, raw, sizeof(raw));
    int err = errno;
    if (fd >= 0)
        close(fd);
    if (n != (ssize_t)sizeof(raw))
        return cli_fail(CLI_SERVICE, "cannot read /dev/urandom: %s",
                        n < 0 ? strerror(err) : "short read");
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(id + 2 * i, 3, "%02x", raw[i]);
    return CLI_OK;
}

/* HSETNX of name -> id; *claimed whether it was set. */
static int set_name(cli_t *cli, const char *name, const char *id, bool *claimed)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACKS, NULL, 0, NULL);
    const char *argv[] = {"HSETNX", key, name, id};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 4, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    *claimed = r->integer == 1;
    freeReplyObject(r);
    return CLI_OK;
}

/* Whether the name maps to a stack gone or DELETE_COMPLETE (the worker
 * that finished its delete died before freeing the name, or it was purged);
 * that stack's id in old. */
static int name_is_left_over(cli_t *cli, const char *name, char old[CV_ID_MAX], bool *left)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACKS, NULL, 0, NULL);
    const char *get[] = {"HGET", key, name};
    redisReply *r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, get, NULL);
    if (!r)
        return CLI_SERVICE;
    /* Unmapped meanwhile: nothing to free, HSETNX again. */
    *left = r->type == REDIS_REPLY_NIL;
    bool valid = r->type == REDIS_REPLY_STRING && cli_valid_id(r->str);
    snprintf(old, CV_ID_MAX, "%s", valid ? r->str : "");
    freeReplyObject(r);
    if (!valid)
        return CLI_OK;
    cv_key(key, sizeof(key), CV_KEY_STACK, old, 0, NULL);
    const char *status[] = {"HGET", key, "status"};
    r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, status, NULL);
    if (!r)
        return CLI_SERVICE;
    *left = r->type == REDIS_REPLY_NIL || strcmp(r->str, "DELETE_COMPLETE") == 0;
    freeReplyObject(r);
    return CLI_OK;
}

/* Maps the name to the new stack: HSETNX; a name left over to a stack gone
 * or deleted is freed with a compare-and-delete (stack_unname.lua) and
 * HSETNX tried once more, so of two submits racing for it one gets it. */
static int claim_name(cli_t *cli, const submit_t *s)
{
    const char *name = s->args.words[0];
    for (int attempt = 0; attempt < 2; attempt++) {
        bool claimed = false, left = false;
        char old[CV_ID_MAX];
        if (set_name(cli, name, s->id, &claimed) != CLI_OK)
            return CLI_SERVICE;
        if (claimed)
            return CLI_OK;
        if (attempt > 0)
            break;
        if (name_is_left_over(cli, name, old, &left) != CLI_OK)
            return CLI_SERVICE;
        if (!left)
            break;
        if (old[0] && cli_stack_unname(cli, name, old, NULL) != CLI_OK)
            return CLI_SERVICE;
    }
    return cli_fail(CLI_USAGE, "stack %s already exists", name);
}

/* Runs stack_begin CREATE; *ours tells whether the stack's keys are ours
 * to remove on failure (not when the id belongs to an existing stack). */
static int begin_stack(cli_t *cli, submit_t *s, bool *ours)
{
    char *tpl = json_dumps(s->loaded.tree, JSON_COMPACT);
    char *params = cv_seal_members_dumps(s->loaded.tpl->parameters, s->loaded.tpl->hidden);
    char *files = json_dumps(s->loaded.files, JSON_COMPACT);
    char *env = json_dumps(s->loaded.env, JSON_COMPACT);
    if (!tpl || !params || !files || !env) {
        free(env);
        free(tpl);
        free(params);
        free(files);
        *ours = false;
        return cli_fail(CLI_SERVICE, "out of memory encoding the template");
    }
    cv_stack_begin_t b = {.kind = CV_TRAV_CREATE,
                          .stack = s->id,
                          .name = s->args.words[0],
                          .tpl = tpl,
                          .params = params,
                          .files = files,
                          .env = env,
                          .fname = cli_base_name(s->args.words[1]),
                          .rollback = strcmp(s->rollback, "1") == 0 ? "1" : "0",
                          .drift = s->no_drift ? "0" : "1"};
    redisReply *r = cli_begin_script(cli, &b);
    free(tpl);
    free(params);
    free(files);
    free(env);
    *ours = !(r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "EEXIST", 6) == 0);
    return cli_begin_traversal(cli, r, &s->traversal);
}

/* Removes what submit stored (the stack's keys; the name, while it maps
 * to this stack); returns whether it could. */
static bool undo(cli_t *cli, const submit_t *s, bool remove_keys, bool named)
{
    static const cv_key_kind_t kinds[] = {CV_KEY_STACK, CV_KEY_DEF,   CV_KEY_EVENTS, CV_KEY_COUNTS,
                                          CV_KEY_RDEF,  CV_KEY_GRAPH, CV_KEY_DONE};
    char k[7][CV_KEY_MAX];
    for (size_t i = 0; i < 7; i++)
        cv_key(k[i], CV_KEY_MAX, kinds[i], s->id, s->traversal, NULL);
    const char *del[] = {"DEL", k[0], k[1], k[2], k[3], k[4], k[5], k[6]};
    redisReply *r = NULL;
    if (remove_keys) {
        r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 8, del, NULL);
        if (!r)
            return false;
        freeReplyObject(r);
    }
    return !named || cli_stack_unname(cli, s->args.words[0], s->id, NULL) == CLI_OK;
}

/* Store, name, publish; undo when naming, storing or publishing fails. */
static int create_stack(cli_t *cli, submit_t *s)
{
    int rc = new_stack_id(s->id);
    if (rc)
        return rc;
    bool ours = true, named = false;
    rc = begin_stack(cli, s, &ours);
    if (rc == CLI_OK) {
        rc = claim_name(cli, s);
        if (rc == CLI_USAGE) {
            undo(cli, s, true, false); /* the name is another stack's: drop ours */
            return rc;
        }
        named = rc == CLI_OK;
    }
    if (rc == CLI_OK)
        rc = cli_publish_stack(cli, s->id, s->traversal, CV_TRAV_CREATE);
    if (rc && undo(cli, s, ours, named))
        return cli_fail(rc, "stack %s was not created; nothing of it is left stored",
                        s->args.words[0]);
    if (rc)
        return cli_fail(rc,
                        "stack %s was not created, but what was stored of it could not be "
                        "removed; run 'convergectl delete %s' once Redis and Kafka are back",
                        s->args.words[0], s->args.words[0]);
    printf("stack %s (%s) CREATE_IN_PROGRESS\n", s->args.words[0], s->id);
    fflush(stdout);
    return CLI_OK;
}

int cli_cmd_submit(cli_t *cli, int argc, char **argv)
{
    submit_t s;
    memset(&s, 0, sizeof(s));
    s.rollback = "";
    cli_tpl_args_init(&s.args);
    int rc = parse_args(argc, argv, &s);
    if (rc == CLI_HELP) {
        fputs(cli_submit_usage, stdout);
        rc = CLI_OK;
    } else if (rc == CLI_OK) {
        rc = cli_template_fetch_limits(cli);
        if (rc == CLI_OK)
            rc = cli_template_load(s.args.words[1], &s.args.in, &s.loaded);
        if (rc == CLI_OK)
            rc = cli_redis_connect(cli);
        if (rc == CLI_OK)
            rc = cli_service_check(cli, s.loaded.tree, s.args.words[1]);
        if (rc == CLI_OK)
            rc = cli_kafka_connect(cli);
        if (rc == CLI_OK)
            rc = create_stack(cli, &s);
        if (rc == CLI_OK && s.args.wait)
            rc = cli_stack_follow(cli, s.id, s.args.timeout, "CREATE", s.traversal);
    }
    cli_loaded_free(&s.loaded);
    cli_tpl_args_free(&s.args);
    return rc;
}
