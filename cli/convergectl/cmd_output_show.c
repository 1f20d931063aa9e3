/*
 * convergectl output-show: one output of a stack, or all of them — Heat's
 * `openstack stack output show` (its messages for the arguments and for an
 * unknown output). The outputs are those of the stored template, each with
 * its description and the value resolved when the last traversal ended.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include <stdio.h>
#include <string.h>

const char cli_output_show_usage[] =
    "usage: convergectl output-show NAME|ID OUTPUT [-o json]\n"
    "       convergectl output-show NAME|ID --all [-o json]\n"
    "\n"
    "Shows the output OUTPUT of the stack NAME (or of the stack with id ID: a\n"
    "nested stack), or with --all every output of its template, in template\n"
    "order: its key, its description (Heat's \"No description given\" when it has\n"
    "none) and its value as resolved when the stack's last traversal completed\n"
    "(null while none has, or when it could not be resolved). Exits 2 when there\n"
    "is no such stack or output.\n"
    "\n"
    "  --all                every output\n"
    "  -o, --output FORMAT  text (default) or json: {\"output_key\",\n"
    "                       \"output_value\", \"description\"}; with --all a list of them\n"
    "  -h, --help           show this help\n";

static const cli_opt_t output_show_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_ALL_OPT,
                                             CLI_OPTS_END};

/* Heat's: an output without a description reads "No description given". */
static json_t *output_doc(const char *key, const json_t *def, const json_t *values)
{
    const char *description = json_string_value(json_object_get(def, "description"));
    json_t *value = json_object_get(values, key);
    return json_pack("{s:s, s:O, s:s}", "output_key", key, "output_value",
                     value ? value : json_null(), "description",
                     description ? description : "No description given");
}

static void print_text(const json_t *doc)
{
    static const char *const fields[] = {"output_key", "description", "output_value", NULL};
    cli_show_fields(doc, fields);
}

static int show(cli_t *cli, const cli_show_args_t *a)
{
    char id[CV_ID_MAX];
    int rc = cli_stack_resolve(cli, a->name, id);
    if (rc)
        return rc;
    cli_stack_t s;
    cli_def_t d;
    bool found = false;
    memset(&d, 0, sizeof(d));
    rc = cli_stack_read(cli, id, &s, &found);
    if (rc == CLI_OK && !found)
        rc = cli_fail(CLI_USAGE, "stack %s (%s) has no status record", a->name, id);
    if (rc == CLI_OK)
        rc = cli_def_read(cli, a->name, id, &d);
    json_t *outputs = json_object_get(d.tree, "outputs");
    json_t *docs = json_array();
    if (rc == CLI_OK && a->word && !json_object_get(outputs, a->word))
        rc = cli_fail(CLI_USAGE, "Specified output key %s not found.", a->word);
    const char *key;
    json_t *def;
    json_object_foreach(rc == CLI_OK && json_is_object(outputs) ? outputs : NULL, key, def)
    {
        if (a->all || strcmp(key, a->word) == 0)
            json_array_append_new(docs, output_doc(key, def, s.outputs));
    }
    size_t i;
    json_t *doc;
    if (rc == CLI_OK && a->json)
        cli_print_json(a->all ? docs : json_array_get(docs, 0));
    else if (rc == CLI_OK)
        json_array_foreach(docs, i, doc)
        {
            printf("%s", i ? "\n" : "");
            print_text(doc);
        }
    json_decref(docs);
    cli_def_free(&d);
    cli_stack_free(&s);
    return rc;
}

int cli_cmd_output_show(cli_t *cli, int argc, char **argv)
{
    cli_show_args_t a;
    int rc = cli_show_parse(cli, argc, argv, output_show_opts, cli_output_show_usage, 2, NULL, &a);
    if (rc == CLI_HELP)
        return CLI_OK;
    if (rc == CLI_OK && !a.all && !a.word)
        rc = cli_usage_error(a.cmd, "Either <OUTPUT NAME> or --all must be specified.");
    if (rc == CLI_OK && a.all && a.word)
        rc = cli_usage_error(a.cmd, "Cannot specify both <OUTPUT NAME> and --all.");
    return rc == CLI_OK ? show(cli, &a) : rc;
}
