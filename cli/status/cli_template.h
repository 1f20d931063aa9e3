/*
 * cli_template — reading a template and its parameters from the command
 * line (-P name=value, --param-file ENV: whole Heat environments, repeatable),
 * shared by validate, submit and update so that they accept exactly what
 * validate accepts.
 */
#ifndef CLI_TEMPLATE_H
#define CLI_TEMPLATE_H

#include <jansson.h>

#include "cli_common.h"
#include "cv_hot.h"

#define CLI_MAX_PARAM_FILES 16

/* Option ids of -P and --param-file (apart from those of cli_common.h). */
enum { CLI_OPT_PARAM = 100, CLI_OPT_PARAM_FILE };

#define CLI_TEMPLATE_OPTS                                                                          \
    {CLI_OPT_PARAM, "--parameter", "-P", true},                                                    \
    {                                                                                              \
        CLI_OPT_PARAM_FILE, "--param-file", NULL, true                                             \
    }

typedef struct cli_tpl_input {
    json_t *overrides; /* -P: name -> string; the last of a name wins */
    const char *param_files[CLI_MAX_PARAM_FILES];
    int nparam_files;
} cli_tpl_input_t;

/* The arguments submit and update share. */
typedef struct cli_tpl_args {
    const char *words[2]; /* NAME, TEMPLATE */
    cli_tpl_input_t in;
    bool wait;
    double timeout; /* --timeout: 600 unless given */
} cli_tpl_args_t;

void cli_tpl_args_init(cli_tpl_args_t *t);
void cli_tpl_args_free(cli_tpl_args_t *t);

/* Takes NAME, TEMPLATE (CLI_ARG_WORD), --wait, --timeout, -P or
 * --param-file (by id); CLI_OK or CLI_USAGE (reported). */
int cli_tpl_args_option(cli_tpl_args_t *t, const cli_args_t *a, int id);

typedef struct cli_loaded {
    json_t *env;        /* the merged environment, without `parameters`: what submit stores */
    json_t *tree;       /* the template file as loaded: what submit stores */
    json_t *files;      /* its template files: name -> tree (cli_files.h) */
    cv_template_t *tpl; /* the validated template */
} cli_loaded_t;

void cli_tpl_input_init(cli_tpl_input_t *in);
void cli_tpl_input_free(cli_tpl_input_t *in);

/* Takes -P / --param-file (by id); CLI_OK or CLI_USAGE. */
int cli_tpl_input_option(cli_tpl_input_t *in, const cli_args_t *a, int id);

/*
 * The environment given: the --param-file files merged in order onto
 * `base` (NULL: an empty one), as Heat merges repeated -e files, against the
 * parameters the template declares (`decls`, its parameters section; see
 * cv_env_merge), the template files their registries map types to read into
 * `files` (keyed for the template `tpl_path`; NULL: relative to each
 * environment file). *env is the merged environment, *params the parameter
 * values given: its `parameters`, the -P values over them (new objects).
 * CLI_OK or CLI_USAGE (reported).
 */
int cli_tpl_input_env(const cli_tpl_input_t *in, const char *tpl_path, const json_t *decls,
                      const json_t *base, json_t *files, json_t **env, json_t **params);

/* Reads the limits the engines published in Redis (<prefix>limits), which
 * every later check of a template holds to (an environment variable may
 * only lower one). Quiet: when Redis cannot be reached or nothing is
 * published, the local defaults and environment apply. CLI_OK. */
int cli_template_fetch_limits(cli_t *cli);

/* Reads and parses the template file `path` into a new tree, unvalidated.
 * CLI_OK or CLI_USAGE (reported, naming the file and the place). */
int cli_template_read(const char *path, json_t **tree);

/* Validates `tree` with its template `files` (may be NULL), its
 * environment `env` (may be NULL) and the parameter values a user `given`,
 * to which env's parameter_defaults are added (out->tree and out->files take
 * new references, out->env a copy that lists the names given, CV_ENV_GIVEN);
 * `fname` names the template in messages. CLI_OK or CLI_USAGE (reported). */
int cli_template_check(json_t *tree, json_t *files, const json_t *env, const char *fname,
                       const json_t *given, cli_loaded_t *out);

/* Reads `path` and its template files and validates them with the
 * parameters given (as cli_tpl_input_params). CLI_OK, or CLI_USAGE with the
 * problem (naming the file) reported. */
int cli_template_load(const char *path, const cli_tpl_input_t *in, cli_loaded_t *out);
void cli_loaded_free(cli_loaded_t *l);

/* Reads a whole file into a new NUL-terminated buffer; NULL with the reason
 * reported. */
char *cli_read_file(const char *path, size_t *len);

#endif
