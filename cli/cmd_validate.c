/*
 * convergectl validate: checks a template with its parameters exactly as
 * submit would, without contacting any service.
 */
#include "cli_commands.h"
#include "cli_template.h"

#include <jansson.h>
#include <stdio.h>

const char cli_validate_usage[] =
    "usage: convergectl validate TEMPLATE [-P NAME=VALUE]... [--param-file ENV]...\n"
    "\n"
    "Checks a template and its parameters as submit does, contacting no service.\n"
    "Prints 'TEMPLATE: valid (N resources, M parameters, K outputs)', or the first\n"
    "problem (naming the file, the place in it and the rule broken) and exits 2.\n"
    "\n"
    "  -P, --parameter NAME=VALUE  a parameter value (a string, converted to the\n"
    "                              declared type); the last one of a name wins\n"
    "  --param-file ENV            a Heat environment file (parameters,\n"
    "                              parameter_defaults, parameter_merge_strategies,\n"
    "                              resource_registry); repeatable, merged in order\n"
    "                              as Heat merges -e files; -P values override it\n"
    "  -h, --help                  show this help\n";

static const cli_opt_t validate_opts[] = {CLI_HELP_OPT, CLI_TEMPLATE_OPTS, CLI_OPTS_END};

typedef struct validate {
    const char *path;
    cli_tpl_input_t in;
} validate_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    validate_t *v = ctx;
    if (id == CLI_ARG_WORD)
        return cli_take_word(a, &v->path, 1);
    return cli_tpl_input_option(&v->in, a, id);
}

static int parse_args(int argc, char **argv, validate_t *v)
{
    int rc = cli_parse_args(argc, argv, "validate", validate_opts, apply_opt, v);
    return rc == CLI_OK && !v->path ? cli_usage_error("validate", "no template given") : rc;
}

int cli_cmd_validate(cli_t *cli, int argc, char **argv)
{
    (void)cli;
    validate_t v = {.path = NULL};
    cli_tpl_input_init(&v.in);
    int rc = parse_args(argc, argv, &v);
    if (rc == CLI_HELP) {
        fputs(cli_validate_usage, stdout);
        rc = CLI_OK;
    } else if (rc == CLI_OK) {
        cli_loaded_t t;
        rc = cli_template_load(v.path, &v.in, &t);
        if (rc == CLI_OK)
            printf("%s: valid (%zu resources, %zu parameters, %zu outputs)\n", v.path,
                   t.tpl->nresources, json_object_size(t.tpl->parameters),
                   json_object_size(t.tpl->outputs));
        cli_loaded_free(&t);
    }
    cli_tpl_input_free(&v.in);
    return rc;
}
