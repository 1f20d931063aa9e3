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
    "                              parameter_defaults); -P values override it\n"
    "  -h, --help                  show this help\n";

static const cli_opt_t validate_opts[] = {CLI_HELP_OPT, CLI_TEMPLATE_OPTS, CLI_OPTS_END};

static int parse_args(int argc, char **argv, const char **path, cli_tpl_input_t *in)
{
    cli_args_t a;
    cli_args_init(&a, argc, argv, "validate");
    for (;;) {
        int id = cli_next(&a, validate_opts), rc;
        switch (id) {
        case CLI_ARG_END:
            return *path ? CLI_OK : cli_usage_error(a.cmd, "no template given");
        case CLI_ARG_BAD:
            return CLI_USAGE;
        case CLI_OPT_HELP:
            return CLI_HELP;
        case CLI_ARG_WORD:
            rc = cli_take_word(&a, path, 1);
            break;
        default:
            rc = cli_tpl_input_option(in, &a, id);
        }
        if (rc)
            return rc;
    }
}

int cli_cmd_validate(cli_t *cli, int argc, char **argv)
{
    (void)cli;
    const char *path = NULL;
    cli_tpl_input_t in;
    cli_tpl_input_init(&in);
    int rc = parse_args(argc, argv, &path, &in);
    if (rc == CLI_HELP) {
        fputs(cli_validate_usage, stdout);
        rc = CLI_OK;
    } else if (rc == CLI_OK) {
        cli_loaded_t t;
        rc = cli_template_load(path, &in, &t);
        if (rc == CLI_OK)
            printf("%s: valid (%zu resources, %zu parameters, %zu outputs)\n", path,
                   t.tpl->nresources, json_object_size(t.tpl->parameters),
                   json_object_size(t.tpl->outputs));
        cli_loaded_free(&t);
    }
    cli_tpl_input_free(&in);
    return rc;
}
