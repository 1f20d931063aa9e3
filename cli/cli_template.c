/*
 * Template and parameter input of validate and submit.
 */
#include "cli_template.h"

#include "cli_files.h"
#include "cv_limits.h"

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
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *bigger = realloc(buf, 2 * cap + 1);
        if (!bigger)
            free(buf);
        buf = bigger;
        cap *= 2;
    }
    int err = ferror(f) ? errno : (buf ? 0 : ENOMEM);
    fclose(f);
    if (err) {
        free(buf);
        cli_fail(CLI_USAGE, "cannot read %s: %s", path, strerror(err));
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int cli_tpl_input_params(const cli_tpl_input_t *in, json_t **out, json_t **defaults)
{
    json_t *params = json_object(), *defs = json_object();
    for (int i = 0; i < in->nparam_files; i++) {
        size_t len;
        char *text = cli_read_file(in->param_files[i], &len), err[1024];
        if (!text) {
            json_decref(params);
            json_decref(defs);
            return CLI_USAGE;
        }
        int rc = cv_env_load(text, len, in->param_files[i], params, defs, err, sizeof(err));
        free(text);
        if (rc) {
            json_decref(params);
            json_decref(defs);
            return cli_fail(CLI_USAGE, "%s", err);
        }
    }
    json_object_update(params, in->overrides);
    *out = params;
    *defaults = defs;
    return CLI_OK;
}

/* The input limits (proto/cv_limits.h) as the environment sets them. */
static int load_limits(cv_limits_t *l)
{
    char err[256];
    cv_limits_init(l);
    return cv_limits_from_env(l, err, sizeof(err)) ? cli_fail(CLI_USAGE, "%s", err) : CLI_OK;
}

int cli_template_read(const char *path, json_t **tree)
{
    size_t len;
    cv_limits_t limits;
    char *text = cli_read_file(path, &len), err[2048];
    if (!text)
        return CLI_USAGE;
    if (load_limits(&limits) != CLI_OK ||
        (cv_limits_check(&limits, CV_LIMIT_TEMPLATE_BYTES, len, path, err, sizeof(err)) &&
         cli_fail(CLI_USAGE, "%s", err))) {
        free(text);
        return CLI_USAGE;
    }
    *tree = cv_yaml_load(text, len, path, err, sizeof(err));
    free(text);
    return *tree ? CLI_OK : cli_fail(CLI_USAGE, "%s", err);
}

int cli_template_check(json_t *tree, json_t *files, const char *fname, const json_t *params,
                       cli_loaded_t *out)
{
    char err[2048];
    memset(out, 0, sizeof(*out));
    cv_limits_t limits;
    if (load_limits(&limits) != CLI_OK)
        return CLI_USAGE;
    cv_tpl_opts_t opts = {.files = files, .max_depth = (int)limits.nesting_depth};
    if (cv_template_from_json_opts(tree, fname, params, &opts, &out->tpl, err, sizeof(err)) != 0)
        return cli_fail(CLI_USAGE, "%s", err);
    if (cv_limits_check(&limits, CV_LIMIT_RESOURCES, out->tpl->nresources, fname, err,
                        sizeof(err))) {
        cv_template_free(out->tpl);
        out->tpl = NULL;
        return cli_fail(CLI_USAGE, "%s", err);
    }
    out->tree = json_incref(tree);
    out->files = files ? json_incref(files) : json_object();
    return CLI_OK;
}

int cli_template_load(const char *path, const cli_tpl_input_t *in, cli_loaded_t *out)
{
    memset(out, 0, sizeof(*out));
    json_t *params = NULL, *defaults = NULL, *tree = NULL, *files = NULL;
    int rc = cli_tpl_input_params(in, &params, &defaults);
    if (rc == CLI_OK)
        rc = cli_template_read(path, &tree);
    if (rc == CLI_OK)
        rc = cli_files_collect(path, tree, &files);
    if (rc == CLI_OK) {
        cv_env_apply_defaults(params, defaults, tree);
        rc = cli_template_check(tree, files, path, params, out);
    }
    json_decref(params);
    json_decref(defaults);
    json_decref(tree);
    json_decref(files);
    return rc;
}

void cli_loaded_free(cli_loaded_t *l)
{
    json_decref(l->tree);
    json_decref(l->files);
    cv_template_free(l->tpl);
    l->tree = NULL;
    l->files = NULL;
    l->tpl = NULL;
}
