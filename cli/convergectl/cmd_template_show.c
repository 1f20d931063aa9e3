/*
 * convergectl template-show: a stack's stored template — Heat's
 * `openstack stack template show`. It is stored as JSON, which is YAML
 * too and which submit and update accept as a template file.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include <stdio.h>
#include <string.h>

const char cli_template_show_usage[] =
    "usage: convergectl template-show NAME|ID [-o json]\n"
    "\n"
    "Prints the template of the stack NAME (or of the stack with id ID: a nested\n"
    "stack's own template) as stored: the definition of its current traversal\n"
    "(during a rollback, the last complete one it restores), in JSON — which is\n"
    "also YAML, and which submit and update accept as a template. Exits 2 when\n"
    "there is no such stack.\n"
    "\n"
    "\n"
    "A hidden parameter's default and every secret value the template holds\n"
    "(a nested stack's template carries its parent's) are shown as ******.\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: the same document\n" CLI_SHOW_SECRETS_USAGE
    "  -h, --help           show this help\n";

static const cli_opt_t template_show_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_SHOW_SECRETS_OPT,
                                               CLI_OPTS_END};

/* The template as a reader may see it (cli_secret.h). */
static int print_masked(cli_t *cli, const char *id, const cli_def_t *d)
{
    cli_secrets_t secrets;
    int rc = cli_secret_read(cli, id, d, &secrets);
    if (rc == CLI_OK) {
        json_t *shown = cli_secret_mask_template(&secrets, d->tree);
        cli_print_json(shown);
        json_decref(shown);
    }
    cli_secrets_free(&secrets);
    return rc;
}

static int show(cli_t *cli, const cli_show_args_t *a)
{
    char id[CV_ID_MAX];
    int rc = cli_stack_resolve(cli, a->name, id);
    if (rc)
        return rc;
    cli_def_t d;
    rc = cli_def_read(cli, a->name, id, &d);
    if (rc == CLI_OK && a->show_secrets)
        cli_print_json(d.tree);
    else if (rc == CLI_OK)
        rc = print_masked(cli, id, &d);
    cli_def_free(&d);
    return rc;
}

int cli_cmd_template_show(cli_t *cli, int argc, char **argv)
{
    cli_show_args_t a;
    int rc =
        cli_show_parse(cli, argc, argv, template_show_opts, cli_template_show_usage, 1, NULL, &a);
    if (rc == CLI_HELP)
        return CLI_OK;
    return rc == CLI_OK ? show(cli, &a) : rc;
}
