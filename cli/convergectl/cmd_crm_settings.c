/*
 * convergectl crm settings: the cluster resource manager's settings set by
 * an operator ({cluster}:crm:settings, docs/crm.md "Settings"). The agents
 * write the cluster file's settings with every heartbeat; these are laid
 * over them, key by key of the `crm` object, so timers and thresholds change
 * on a running cluster without a new cluster file.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_placement.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_crm_settings_usage[] =
    "usage: convergectl crm settings [FILE | --clear] [-o json]\n"
    "\n"
    "Sets the cluster resource manager's settings from FILE (JSON or YAML: an\n"
    "object with the keys of the cluster file's `crm` object, Service Fabric's\n"
    "names: PLBRefreshGap, MinLoadBalancingInterval, MetricBalancingThresholds,\n"
    "nodeTypes, ...; docs/crm.md \"Settings\"). They are laid over the settings of\n"
    "the cluster file, key by key, and apply from the manager's next refresh.\n"
    "The whole file is checked first: a bad setting is named and nothing is\n"
    "stored. Without FILE, shows the settings set; --clear removes them.\n"
    "\n"
    "  --clear              remove the settings set with this command\n"
    "  -o, --output FORMAT  text (default) or json (the settings set, or null)\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 done; 2 usage error or a bad setting (nothing stored);\n"
    "3 cannot reach Redis.\n";

#define CMD "crm settings"

enum { OPT_CLEAR = 100 };

static const cli_opt_t settings_opts[] = {
    CLI_HELP_OPT, CLI_OUTPUT_OPT, {OPT_CLEAR, "--clear", NULL, false}, CLI_OPTS_END};

typedef struct settings_args {
    const char *file;
    bool clear, json;
} settings_args_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    settings_args_t *s = ctx;
    if (id == CLI_OPT_OUTPUT)
        return cli_parse_output(a, &s->json);
    if (id == OPT_CLEAR) {
        s->clear = true;
        return CLI_OK;
    }
    if (id == CLI_ARG_WORD && !s->file) {
        s->file = a->arg;
        return CLI_OK;
    }
    return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
}

/* The file's object, checked as the manager reads it; NULL after an error. */
static json_t *load_checked(const char *path)
{
    char err[1024];
    size_t len;
    char *text = cli_read_file(path, &len);
    if (!text)
        return NULL;
    json_t *obj = cv_yaml_load(text, len, path, err, sizeof(err));
    free(text);
    if (!obj) {
        cli_fail(CLI_USAGE, "%s", err);
        return NULL;
    }
    if (!json_is_object(obj)) {
        cli_fail(CLI_USAGE, "%s: expected an object of settings (the keys of `crm`)", path);
        json_decref(obj);
        return NULL;
    }
    json_t *wrapped = json_pack("{s:O}", "crm", obj);
    json_t *checked = cv_balance_settings(wrapped, err, sizeof(err));
    json_decref(wrapped);
    if (!checked) {
        cli_fail(CLI_USAGE, "%s: %s", path, err);
        json_decref(obj);
        return NULL;
    }
    json_decref(checked);
    return obj;
}

static int store(cli_t *cli, const char *key, const json_t *obj)
{
    char *text = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        return cli_fail(CLI_SERVICE, CMD ": out of memory");
    const char *argv[] = {"SET", key, text};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_STATUS), 3, argv, NULL);
    free(text);
    freeReplyObject(r);
    return r ? CLI_OK : CLI_SERVICE;
}

static int show(cli_t *cli, const char *key, bool json)
{
    const char *argv[] = {"GET", key};
    redisReply *r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 2, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    json_t *v = r->type == REDIS_REPLY_STRING ? json_loads(r->str, 0, NULL) : NULL;
    freeReplyObject(r);
    if (json)
        cli_print_json(v ? v : json_null());
    else if (v) {
        char *text = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS);
        printf("%s\n", text ? text : "{}");
        free(text);
    } else
        printf("No settings set with `convergectl crm settings`: the cluster file's apply\n");
    json_decref(v);
    return CLI_OK;
}

int cli_cmd_crm_settings(cli_t *cli, int argc, char **argv)
{
    settings_args_t s = {NULL, false, false};
    int rc = cli_parse_args(argc, argv, CMD, settings_opts, apply_opt, &s);
    if (rc == CLI_HELP) {
        fputs(cli_crm_settings_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK && s.clear && s.file)
        rc = cli_usage_error(CMD, "give FILE or --clear, not both");
    json_t *obj = NULL;
    if (rc == CLI_OK && s.file && !(obj = load_checked(s.file)))
        rc = CLI_USAGE;
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_CRM_SETTINGS, NULL, 0, NULL);
    if (rc == CLI_OK && s.clear) {
        const char *del[] = {"DEL", key};
        redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 2, del, NULL);
        rc = r ? CLI_OK : CLI_SERVICE;
        freeReplyObject(r);
    } else if (rc == CLI_OK && obj)
        rc = store(cli, key, obj);
    if (rc == CLI_OK)
        rc = show(cli, key, s.json);
    json_decref(obj);
    return rc;
}
