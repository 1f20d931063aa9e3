/*
 * Template and parameter input of validate and submit.
 */
#include "cli_template.h"

#include "cli_files.h"
#include "cli_secret.h"
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_tpl_input_init(cli_tpl_input_t *in)
{
    memset(in, 0, sizeof(*in));
    in->overrides = json_object();
}

void cli_tpl_input_free(cli_tpl_input_t *in)
{
    json_decref(in->overrides);
    in->overrides = NULL;
}

void cli_tpl_args_init(cli_tpl_args_t *t)
{
    memset(t, 0, sizeof(*t));
    t->timeout = 600;
    cli_tpl_input_init(&t->in);
}

void cli_tpl_args_free(cli_tpl_args_t *t)
{
    cli_tpl_input_free(&t->in);
}

int cli_tpl_args_option(cli_tpl_args_t *t, const cli_args_t *a, int id)
{
    switch (id) {
    case CLI_ARG_WORD:
        return cli_take_word(a, t->words, 2);
    case CLI_OPT_WAIT:
        t->wait = true;
        return CLI_OK;
    case CLI_OPT_TIMEOUT:
        return cli_parse_seconds(a, &t->timeout);
    default:
        return cli_tpl_input_option(&t->in, a, id);
    }
}

/* -P name=value: the value is a string; the template's declared type
 * converts it, as for Heat's -P. */
static int add_override(cli_tpl_input_t *in, const cli_args_t *a)
{
    const char *eq = strchr(a->arg, '=');
    if (!eq)
        return cli_usage_error(a->cmd, "%s '%s': expected NAME=VALUE", a->name, a->arg);
    if (eq == a->arg)
        return cli_usage_error(a->cmd, "%s '%s': the parameter name is empty", a->name, a->arg);
    char *name = strndup(a->arg, (size_t)(eq - a->arg));
    json_t *value = json_string(eq + 1);
    int rc = CLI_OK;
    if (!name || !value)
        rc = cli_usage_error(a->cmd, "%s '%s': the value is not valid UTF-8", a->name, a->arg);
    else
        json_object_set(in->overrides, name, value);
    json_decref(value);
    free(name);
    return rc;
}

int cli_tpl_input_option(cli_tpl_input_t *in, const cli_args_t *a, int id)
{
    if (id == CLI_OPT_PARAM)
        return add_override(in, a);
    if (in->nparam_files == CLI_MAX_PARAM_FILES)
        return cli_usage_error(a->cmd, "at most %d parameter files", CLI_MAX_PARAM_FILES);
    in->param_files[in->nparam_files++] = a->arg;
    return CLI_OK;
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_fail(CLI_USAGE, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    cv_buf_t text = {0};
    size_t n = 0;
    do { /* into the buffer itself, 64 KiB of room at a time */
        if (cv_buf_reserve(&text, 1 << 16) != 0)
            break;
        n = fread(text.data + text.len, 1, text.cap - text.len - 1, f);
        cv_buf_added(&text, n);
    } while (n > 0);
    int err = ferror(f) ? errno : text.failed ? ENOMEM : 0;
    fclose(f);
    if (err) {
        cv_buf_free(&text);
        cli_fail(CLI_USAGE, "cannot read %s: %s", path, strerror(err));
        return NULL;
    }
    *len = text.len;
    return cv_buf_take(&text);
}

/* The parameters an environment may set, as Heat's all_param_schemata:
 * those of every template among the stack's files, then the template's
 * own, which win. A default meant for a nested template is kept. */
static json_t *all_param_decls(const json_t *decls, const json_t *files)
{
    json_t *all = json_object();
    const char *name;
    const json_t *tree;
    json_object_foreach((json_t *)files, name, tree)
    {
        const json_t *params = json_object_get(tree, "parameters");
        if (json_is_object(params))
            json_object_update(all, (json_t *)params);
    }
    if (json_is_object(decls))
        json_object_update(all, (json_t *)decls);
    return all;
}

/* One environment file merged onto `env`, its registry's template files
 * read into `files` first, so that their parameters count as declared. */
static int merge_file(const char *env_path, const char *tpl_path, const json_t *decls,
                      json_t *files, json_t *env, json_t *strategies)
{
    size_t len;
    char *text = cli_read_file(env_path, &len), err[1024];
    if (!text)
        return CLI_USAGE;
    json_t *file = cv_env_read(text, len, env_path, err, sizeof(err));
    free(text);
    if (!file)
        return cli_fail(CLI_USAGE, "%s", err);
    int rc = cli_files_collect_registry(tpl_path, env_path,
                                        json_object_get(file, "resource_registry"), files);
    json_t *all = all_param_decls(decls, files);
    if (rc == CLI_OK && cv_env_merge(env, strategies, file, all, env_path, err, sizeof(err)))
        rc = cli_fail(CLI_USAGE, "%s", err);
    json_decref(all);
    json_decref(file);
    return rc;
}

int cli_tpl_input_env(const cli_tpl_input_t *in, const char *tpl_path, const json_t *decls,
                      const json_t *base, json_t *files, json_t **env, json_t **params)
{
    json_t *merged = base ? json_deep_copy(base) : json_object(), *strategies = json_object();
    int rc = CLI_OK;
    for (int i = 0; rc == CLI_OK && i < in->nparam_files; i++)
        rc = merge_file(in->param_files[i], tpl_path ? tpl_path : in->param_files[i], decls, files,
                        merged, strategies);
    json_decref(strategies);
    if (rc) {
        json_decref(merged);
        return rc;
    }
    const json_t *given = json_object_get(merged, "parameters");
    *params = json_is_object(given) ? json_deep_copy(given) : json_object();
    json_object_update(*params, in->overrides);
    *env = merged;
    return CLI_OK;
}

/* ---- the limits a template is checked against ---- */

/* What the engines published (cli_template_fetch_limits): the authority. */
static cv_limits_t published;
static bool have_published;

int cli_template_fetch_limits(cli_t *cli)
{
    char err[512], key[CV_KEY_MAX];
    /* Quietly: without Redis, validate still checks (against the local
     * limits), and submit and update report Redis when they need it. */
    cv_redis_sync_t *s = cv_redis_sync_open(&cli->opts, NULL, err, sizeof(err));
    if (!s)
        return CLI_OK;
    cv_limits_key(key, sizeof(key));
    const char *argv[] = {"HGETALL", key};
    redisReply *r = cv_redis_sync_argv(s, 2, argv, NULL);
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements >= 2) {
        cv_limits_init(&published);
        for (size_t i = 0; i + 1 < r->elements; i += 2)
            if (r->element[i]->type == REDIS_REPLY_STRING &&
                r->element[i + 1]->type == REDIS_REPLY_STRING)
                /* A limit this client does not know (a newer engine's) is
                 * the engine's to enforce. */
                (void)cv_limits_set(&published, r->element[i]->str, r->element[i + 1]->str, err,
                                    sizeof(err));
        have_published = true;
    }
    if (r)
        freeReplyObject(r);
    cv_redis_sync_close(s);
    return CLI_OK;
}

/* The input limits (proto/contract/cv_limits.h): the engines' when they published
 * them, which the environment may only lower; otherwise the defaults as
 * the environment sets them. */
static int load_limits(cv_limits_t *l)
{
    static bool warned;
    char err[256], ignored[256];
    if (!have_published) {
        cv_limits_init(l);
        return cv_limits_from_env(l, err, sizeof(err)) ? cli_fail(CLI_USAGE, "%s", err) : CLI_OK;
    }
    *l = published;
    if (cv_limits_lower_from_env(l, ignored, sizeof(ignored), err, sizeof(err)))
        return cli_fail(CLI_USAGE, "%s", err);
    if (ignored[0] && !warned)
        fprintf(stderr,
                "convergectl: warning: %s above the engines' limits: the engines' limits apply\n",
                ignored);
    warned = true;
    return CLI_OK;
}

/* What submit stores is held to --max-template-bytes too, as the engine
 * measures it: the template and its files as JSON. */
static int check_stored_size(const cv_limits_t *l, const json_t *tree, const json_t *files,
                             char *errstr, size_t errstr_size)
{
    char *text = json_dumps(tree, JSON_COMPACT);
    size_t len = text ? strlen(text) : 0;
    free(text);
    int rc = cv_template_limit_check(l, CV_LIMIT_TEMPLATE_BYTES, len, "stored template", errstr,
                                     errstr_size);
    text = files && !rc ? json_dumps(files, JSON_COMPACT) : NULL;
    len = text ? strlen(text) : 0;
    free(text);
    return rc ? rc
              : cv_template_limit_check(l, CV_LIMIT_TEMPLATE_BYTES, len, "stored template files",
                                        errstr, errstr_size);
}

int cli_template_read(const char *path, json_t **tree)
{
    size_t len;
    cv_limits_t limits;
    char *text = cli_read_file(path, &len), err[2048];
    if (!text)
        return CLI_USAGE;
    if (load_limits(&limits) != CLI_OK ||
        (cv_template_limit_check(&limits, CV_LIMIT_TEMPLATE_BYTES, len, path, err, sizeof(err)) &&
         cli_fail(CLI_USAGE, "%s", err))) {
        free(text);
        return CLI_USAGE;
    }
    *tree = cv_yaml_load(text, len, path, err, sizeof(err));
    free(text);
    return *tree ? CLI_OK : cli_fail(CLI_USAGE, "%s", err);
}

/* Refuses the template with `err`, hidden parameters' values masked: a
 * refusal may quote the value it refused ("expected integer, got \"...\""),
 * and submit's output ends in terminals and CI logs as every reader's does. */
static int refuse(const json_t *tree, const json_t *params, const json_t *env, const char *err)
{
    cli_secrets_t s;
    cli_secrets_init(&s);
    cli_secret_learn_def(&s, tree, params, env, false);
    char *masked = cli_secret_mask_text(&s, err);
    int rc = cli_fail(CLI_USAGE, "%s", masked ? masked : err);
    free(masked);
    cli_secrets_free(&s);
    return rc;
}

static int check_with(json_t *tree, json_t *files, const json_t *env, const char *fname,
                      const json_t *params, cli_loaded_t *out)
{
    char err[2048];
    memset(out, 0, sizeof(*out));
    cv_limits_t limits;
    if (load_limits(&limits) != CLI_OK)
        return CLI_USAGE;
    cv_tpl_opts_t opts = {.files = files, .max_depth = (int)limits.nesting_depth, .env = env};
    if (cv_template_from_json_opts(tree, fname, params, &opts, &out->tpl, err, sizeof(err)) != 0)
        return refuse(tree, params, env, err);
    cv_tpl_count_t count;
    if (cv_template_count(out->tpl, tree, fname, &opts, &limits, &count, err, sizeof(err)) ||
        check_stored_size(&limits, tree, files, err, sizeof(err))) {
        cv_template_free(out->tpl);
        out->tpl = NULL;
        return cli_fail(CLI_USAGE, "%s", err);
    }
    out->tree = json_incref(tree);
    out->files = files ? json_incref(files) : json_object();
    out->env = env ? json_deep_copy(env) : json_object();
    /* What is stored: the values given are the stack's `params`. */
    json_object_del(out->env, "parameters");
    return CLI_OK;
}

/* The names of `given` as the stored environment lists them
 * (CV_ENV_GIVEN). */
static json_t *given_names(const json_t *given)
{
    json_t *names = json_array();
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)given, name, v)
    {
        json_array_append_new(names, json_string(name));
    }
    return names;
}

int cli_template_check(json_t *tree, json_t *files, const json_t *env, const char *fname,
                       const json_t *given, cli_loaded_t *out)
{
    json_t *params = json_deep_copy(given);
    if (!params)
        return cli_fail(CLI_USAGE, "out of memory");
    cv_env_apply_defaults(params, json_object_get(env, "parameter_defaults"), tree);
    int rc = check_with(tree, files, env, fname, params, out);
    json_decref(params);
    if (rc == CLI_OK)
        json_object_set_new(out->env, CV_ENV_GIVEN, given_names(given));
    return rc;
}

int cli_template_load(const char *path, const cli_tpl_input_t *in, cli_loaded_t *out)
{
    memset(out, 0, sizeof(*out));
    json_t *params = NULL, *env = NULL, *tree = NULL, *files = NULL;
    int rc = cli_template_read(path, &tree);
    if (rc == CLI_OK)
        rc = cli_files_collect(path, tree, &files);
    if (rc == CLI_OK)
        rc = cli_tpl_input_env(in, path, json_object_get(tree, "parameters"), NULL, files, &env,
                               &params);
    if (rc == CLI_OK)
        rc = cli_template_check(tree, files, env, path, params, out);
    json_decref(params);
    json_decref(env);
    json_decref(tree);
    json_decref(files);
    return rc;
}

void cli_loaded_free(cli_loaded_t *l)
{
    json_decref(l->env);
    l->env = NULL;
    json_decref(l->tree);
    json_decref(l->files);
    cv_template_free(l->tpl);
    l->tree = NULL;
    l->files = NULL;
    l->tpl = NULL;
}
