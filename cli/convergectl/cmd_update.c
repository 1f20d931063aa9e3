/*
 * convergectl update: hands a stack a new desired definition, in any state
 * (also while a create or update is still running: the new traversal
 * supersedes the running one, which stops at a safe point).
 *
 * Validation is submit's, plus Heat's update rules: with --existing the
 * stored template and parameters are the base the given ones patch, and
 * an immutable parameter may not change. Nothing is stored before all of it
 * passed and Kafka answered.
 */
#include "cli_commands.h"
#include "cv_status.h"
#include "cv_contract.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char cli_update_usage[] =
    "usage: convergectl update NAME|ID [TEMPLATE] [-P NAME=VALUE]...\n"
    "                          [--param-file ENV]...\n"
    "                          [--existing] [--enable-rollback | --disable-rollback]\n"
    "                          [--converge-drift | --no-converge-drift]\n"
    "                          [--wait] [--timeout SEC]\n"
    "\n"
    "Hands the stack NAME a new definition: TEMPLATE with the parameters given,\n"
    "validated as submit does. Allowed in any state, also while a create or update\n"
    "is in progress: the workers move to the newest definition. Unchanged resources\n"
    "are left alone, changed ones are updated in place or replaced (the new version\n"
    "is created before the old one is deleted), removed ones are deleted, dependents\n"
    "first. Prints 'stack NAME (ID) UPDATE_IN_PROGRESS'. A nested stack is updated\n"
    "through its top stack: naming one is refused (exit 2), naming the top stack.\n"
    "\n"
    "  -P, --parameter NAME=VALUE  a parameter value; the last one of a name wins\n"
    "  --param-file ENV            a Heat environment file (parameters,\n"
    "                              parameter_defaults, parameter_merge_strategies,\n"
    "                              resource_registry); repeatable, merged in order as\n"
    "                              Heat merges -e files; -P values override it. With\n"
    "                              --existing they apply over the stored environment;\n"
    "                              without, they replace it\n"
    "  --existing                  start from the stored definition: TEMPLATE may be\n"
    "                              omitted (the stored template is kept), and the\n"
    "                              stored parameter values are kept except those given\n"
    "                              (values of parameters TEMPLATE no longer declares\n"
    "                              are dropped); without it, parameters not given take\n"
    "                              their defaults\n"
    "  --enable-rollback           from now on, roll back to the last complete\n"
    "                              definition when an update fails\n"
    "  --disable-rollback          from now on, leave a failed update UPDATE_FAILED\n"
    "                              (without either, the stack's setting is kept)\n"
    "  --no-converge-drift         from now on, leave the stack's services as they\n"
    "                              drift once COMPLETE (replicas of lost nodes and\n"
    "                              replicas that gave up are not placed again until\n"
    "                              'convergectl converge NAME'); the agents' restart\n"
    "                              policies still apply\n"
    "  --converge-drift            from now on, converge the services' drift again\n"
    "                              (the default of a new stack)\n"
    "  --wait                      wait until the update settles; print its status,\n"
    "                              reason and outputs; exit 0 when UPDATE_COMPLETE,\n"
    "                              1 otherwise (also when rolled back: with rollback\n"
    "                              enabled a failure is followed through its\n"
    "                              rollback), 4 on timeout; when not complete, the\n"
    "                              resources that failed, each with its action and\n"
    "                              reason (secrets ******, as the readers show them)\n"
    "  --timeout SEC               how long --wait waits (default 600; 0: no limit)\n"
    "  -h, --help                  show this help\n"
    "\n"
    "A parameter declared immutable may not change its value (exit 2).\n";

enum {
    OPT_EXISTING = 200,
    OPT_ENABLE_ROLLBACK,
    OPT_DISABLE_ROLLBACK,
    OPT_CONVERGE_DRIFT,
    OPT_NO_CONVERGE_DRIFT
};

static const cli_opt_t update_opts[] = {CLI_HELP_OPT,
                                        CLI_TEMPLATE_OPTS,
                                        {OPT_EXISTING, "--existing", NULL, false},
                                        {OPT_ENABLE_ROLLBACK, "--enable-rollback", NULL, false},
                                        {OPT_DISABLE_ROLLBACK, "--disable-rollback", NULL, false},
                                        {OPT_CONVERGE_DRIFT, "--converge-drift", NULL, false},
                                        {OPT_NO_CONVERGE_DRIFT, "--no-converge-drift", NULL, false},
                                        CLI_WAIT_OPT,
                                        CLI_TIMEOUT_OPT,
                                        CLI_OPTS_END};

typedef struct update {
    cli_tpl_args_t args; /* TEMPLATE NULL: the stored one */
    bool existing;
    const char *rollback; /* "1", "0", "" (keep) */
    const char *drift;    /* "1", "0", "" (keep) */
    const char *cmd;      /* update, upgrade */
    const char *upgrade;  /* "1": by upgrade domain (convergectl upgrade), "0" */
    json_t *given;        /* the parameter values given */
    json_t *env;          /* the environment: the files given merged (onto the stored one) */
    json_t *tree;         /* TEMPLATE as read; NULL when none */
    json_t *files;        /* its template files; NULL when no TEMPLATE */
    cli_def_t def;        /* the stored definition (--existing) */
    cli_loaded_t loaded;  /* the new definition, validated */
    char id[CV_ID_MAX];
    char name[CV_NAME_MAX]; /* the stack's own name (it may be given by its id) */
    uint64_t traversal;     /* the one begun */
} update_t;

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */
/* ------------------------------------------------------------------------ */

static int check_words(const char *cmd, const update_t *u)
{
    if (!u->args.words[0])
        return cli_usage_error(cmd, "no stack name given");
    if (!u->args.words[1] && !u->existing)
        return cli_usage_error(cmd, "no template given (--existing keeps the stored template)");
    return CLI_OK;
}

static int set_rollback(const cli_args_t *a, update_t *u, const char *flag)
{
    if (u->rollback[0] && strcmp(u->rollback, flag) != 0)
        return cli_usage_error(a->cmd, "--enable-rollback and --disable-rollback contradict "
                                       "each other");
    u->rollback = flag;
    return CLI_OK;
}

static int set_drift(const cli_args_t *a, update_t *u, const char *flag)
{
    if (u->drift[0] && strcmp(u->drift, flag) != 0)
        return cli_usage_error(a->cmd, "--converge-drift and --no-converge-drift contradict "
                                       "each other");
    u->drift = flag;
    return CLI_OK;
}

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    update_t *u = ctx;
    switch (id) {
    case OPT_EXISTING:
        u->existing = true;
        return CLI_OK;
    case OPT_ENABLE_ROLLBACK:
        return set_rollback(a, u, "1");
    case OPT_DISABLE_ROLLBACK:
        return set_rollback(a, u, "0");
    case OPT_CONVERGE_DRIFT:
        return set_drift(a, u, "1");
    case OPT_NO_CONVERGE_DRIFT:
        return set_drift(a, u, "0");
    default:
        return cli_tpl_args_option(&u->args, a, id);
    }
}

static int parse_args(int argc, char **argv, update_t *u)
{
    int rc = cli_parse_args(argc, argv, u->cmd, update_opts, apply_opt, u);
    return rc == CLI_OK ? check_words(u->cmd, u) : rc;
}

/* ------------------------------------------------------------------------ */
/* The new definition                                                       */
/* ------------------------------------------------------------------------ */

/* Whether the stored stack's user gave `name` (a stack stored before the
 * names were kept: every stored value counts as given). */
static bool given_before(const update_t *u, const char *name)
{
    const json_t *names = json_object_get(u->def.env, CV_ENV_GIVEN), *n;
    size_t i;
    if (!json_is_array(names))
        return true;
    json_array_foreach(names, i, n)
    {
        if (json_is_string(n) && strcmp(json_string_value(n), name) == 0)
            return true;
    }
    return false;
}

/* --existing, Heat's PATCH: the stored values the user gave, of the
 * parameters `tree` declares (pseudo parameters and parameters the template
 * dropped are not carried over), patched with the values given now. The
 * rest take the merged parameter_defaults or the template's defaults anew. */
static json_t *existing_params(const update_t *u, const json_t *tree)
{
    const json_t *declared = json_object_get(tree, "parameters");
    json_t *params = json_object();
    const char *name;
    json_t *value;
    json_object_foreach(u->def.params, name, value)
    {
        if (json_is_object(declared) && json_object_get(declared, name) && given_before(u, name))
            json_object_set(params, name, value);
    }
    json_object_update(params, u->given);
    return params;
}

/* The template validated the flag as a boolean (true, "yes", 1, ...). */
static bool is_immutable(const json_t *def)
{
    const json_t *flag = json_object_get(def, "immutable");
    if (json_is_true(flag) || (json_is_integer(flag) && json_integer_value(flag) == 1))
        return true;
    const char *text = json_string_value(flag);
    return text && (strcasecmp(text, "true") == 0 || strcasecmp(text, "yes") == 0 ||
                    strcasecmp(text, "on") == 0 || strcmp(text, "1") == 0 ||
                    strcasecmp(text, "t") == 0 || strcasecmp(text, "y") == 0);
}

/* Heat's rule: a parameter the new template declares immutable, which the
 * stack had, keeps its value. The message lists every one that changed. */
static int check_immutable(const update_t *u, const char *fname)
{
    const json_t *declared = json_object_get(u->loaded.tree, "parameters");
    const json_t *now = u->loaded.tpl->parameters;
    char changed[1024] = "";
    const char *name;
    json_t *def;
    json_object_foreach((json_t *)declared, name, def)
    {
        const json_t *before = json_object_get(u->def.params, name);
        if (!before || !is_immutable(def) || json_equal(before, json_object_get(now, name)))
            continue;
        size_t n = strlen(changed);
        snprintf(changed + n, sizeof(changed) - n, "%s%s", n ? ", " : "", name);
    }
    if (!changed[0])
        return CLI_OK;
    return cli_fail(CLI_USAGE,
                    "%s: parameters: The following parameters are immutable and may not be "
                    "updated: %s",
                    fname, changed);
}

/* The template to validate, and how messages name it. */
static const char *choose_template(update_t *u, json_t **tree)
{
    if (u->tree) {
        *tree = u->tree;
        return u->args.words[1];
    }
    *tree = u->def.tree;
    return u->def.fname[0] ? u->def.fname : "(stored template)";
}

/* Everything that needs the stored definition: --existing, immutability. */
static int validate_against_stored(cli_t *cli, update_t *u)
{
    int rc = cli_def_read(cli, u->args.words[0], u->id, &u->def);
    if (rc)
        return rc;
    if (u->def.masked)
        return cli_fail(CLI_USAGE,
                        "stack %s: its parameters are sealed with a key this client lacks; an "
                        "update needs the deployment's key file (CONVERGE_SECRET_KEY_FILE). "
                        "Nothing was changed",
                        u->args.words[0]);
    json_t *tree;
    const char *fname = choose_template(u, &tree);
    if (u->existing) {
        /* Heat's PATCH update: the environments given apply over the stored one. */
        json_t *files = u->tree ? u->files : u->def.files;
        rc = cli_tpl_input_env(&u->args.in, u->args.words[1], json_object_get(tree, "parameters"),
                               u->def.env, files, &u->env, &u->given);
        if (rc)
            return rc;
        json_t *params = existing_params(u, tree);
        rc = cli_template_check(tree, files, u->env, fname, params, &u->loaded);
        json_decref(params);
        if (rc)
            return rc;
    }
    return check_immutable(u, fname);
}

static int store_and_publish(cli_t *cli, update_t *u)
{
    char *tpl = json_dumps(u->loaded.tree, JSON_COMPACT);
    char *params = cv_seal_members_dumps(u->loaded.tpl->parameters, u->loaded.tpl->hidden);
    char *files = json_dumps(u->loaded.files, JSON_COMPACT);
    char *env = json_dumps(u->loaded.env, JSON_COMPACT);
    char retry[CV_NAME_MAX + 32];
    snprintf(retry, sizeof(retry), "update %s --existing", u->args.words[0]);
    cli_begin_t b = {.started = &u->traversal,
                     .retry = retry,
                     .name = u->args.words[0],
                     .id = u->id,
                     .kind = CV_TRAV_UPDATE,
                     .template_json = tpl,
                     .params_json = params,
                     .files_json = files,
                     .env_json = env,
                     .fname = u->args.words[1] ? cli_base_name(u->args.words[1]) : u->def.fname,
                     .rollback = u->rollback,
                     .drift = u->drift,
                     .upgrade = u->upgrade};
    int rc = tpl && params && files && env
                 ? cli_traversal_start(cli, &b)
                 : cli_fail(CLI_SERVICE, "out of memory encoding the template");
    free(env);
    free(tpl);
    free(params);
    free(files);
    return rc;
}

/* Validation that needs no service first, then the stack, then the rest. */
static int update(cli_t *cli, update_t *u)
{
    int rc = cli_template_fetch_limits(cli);
    if (u->args.words[1])
        rc = cli_template_read(u->args.words[1], &u->tree);
    if (rc == CLI_OK && u->args.words[1])
        rc = cli_files_collect(u->args.words[1], u->tree, &u->files);
    if (rc == CLI_OK && !u->existing)
        rc =
            cli_tpl_input_env(&u->args.in, u->args.words[1], json_object_get(u->tree, "parameters"),
                              NULL, u->files, &u->env, &u->given);
    if (rc == CLI_OK && !u->existing)
        rc = cli_template_check(u->tree, u->files, u->env, u->args.words[1], u->given, &u->loaded);
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    if (rc == CLI_OK && u->tree)
        rc = cli_service_check(cli, u->tree, u->args.words[1]);
    if (rc == CLI_OK)
        rc = cli_stack_resolve_top_level(cli, u->args.words[0], u->cmd, u->id, u->name);
    if (rc == CLI_OK)
        u->args.words[0] = u->name;
    if (rc == CLI_OK)
        rc = validate_against_stored(cli, u);
    if (rc == CLI_OK)
        rc = store_and_publish(cli, u);
    if (rc == CLI_OK && u->args.wait)
        rc = cli_stack_follow(cli, u->id, u->args.timeout, "UPDATE", u->traversal);
    return rc;
}

int cli_update_run(cli_t *cli, int argc, char **argv, bool by_upgrade_domain)
{
    update_t u;
    memset(&u, 0, sizeof(u));
    u.rollback = "";
    u.drift = "";
    u.cmd = by_upgrade_domain ? "upgrade" : "update";
    u.upgrade = by_upgrade_domain ? "1" : "0";
    cli_tpl_args_init(&u.args);
    int rc = parse_args(argc, argv, &u);
    if (rc == CLI_HELP) {
        fputs(by_upgrade_domain ? cli_upgrade_usage : cli_update_usage, stdout);
        rc = CLI_OK;
    } else if (rc == CLI_OK) {
        rc = update(cli, &u);
    }
    cli_loaded_free(&u.loaded);
    cli_def_free(&u.def);
    json_decref(u.tree);
    json_decref(u.files);
    json_decref(u.given);
    json_decref(u.env);
    cli_tpl_args_free(&u.args);
    return rc;
}

int cli_cmd_update(cli_t *cli, int argc, char **argv)
{
    return cli_update_run(cli, argc, argv, false);
}
