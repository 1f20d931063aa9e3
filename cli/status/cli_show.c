/*
 * Arguments and field printing of the show commands.
 */
#include "cli_show.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_show_parse(cli_t *cli, int argc, char **argv, const cli_opt_t *opts, const char *usage,
                   int words, const char *word_needed, cli_show_args_t *out)
{
    memset(out, 0, sizeof(*out));
    const char *slots[2] = {NULL, NULL};
    cli_args_t a;
    cli_args_init(&a, argc, argv, argv[0]);
    int rc = CLI_OK;
    for (;;) {
        int id = cli_next(&a, opts);
        if (id == CLI_ARG_END)
            break;
        if (id == CLI_ARG_BAD)
            return CLI_USAGE;
        if (id == CLI_OPT_HELP) {
            fputs(usage, stdout);
            return CLI_HELP;
        }
        if (id == CLI_OPT_OUTPUT)
            rc = cli_parse_output(&a, &out->json);
        else if (id == CLI_OPT_ALL)
            out->all = true;
        else if (id == CLI_OPT_SHOW_SECRETS)
            out->show_secrets = true;
        else
            rc = cli_take_word(&a, slots, words);
        if (rc)
            return rc;
    }
    out->cmd = argv[0];
    out->name = slots[0];
    out->word = slots[1];
    if (!out->name)
        return cli_usage_error(out->cmd, "no stack name given");
    if (word_needed && !out->word)
        return cli_usage_error(out->cmd, "no %s given", word_needed);
    return cli_redis_connect(cli);
}

static bool multi_line(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) > 0) ||
           (json_is_array(v) && json_array_size(v) > 0);
}

/* A value on the line of its field: a string bare, else compact JSON. */
static void print_inline(const json_t *v)
{
    if (json_is_string(v)) {
        printf("%s\n", json_string_value(v));
        return;
    }
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15) | JSON_COMPACT);
    printf("%s\n", text ? text : "null");
    free(text);
}

/* An object or list under its field, indented JSON. */
static void print_block(const json_t *v)
{
    char *text = json_dumps(v, JSON_REAL_PRECISION(15) | JSON_INDENT(2));
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        printf("  %.*s\n", (int)n, line);
        line = end ? end + 1 : line + n;
    }
    free(text);
}

void cli_show_fields(const json_t *obj, const char *const *fields)
{
    size_t width = 0;
    for (const char *const *f = fields; *f; f++)
        width = strlen(*f) > width ? strlen(*f) : width;
    for (const char *const *f = fields; *f; f++) {
        const json_t *v = json_object_get(obj, *f);
        if (multi_line(v)) {
            printf("%s:\n", *f);
            print_block(v);
        } else {
            printf("%s:%*s", *f, (int)(width - strlen(*f) + 2), "");
            print_inline(v);
        }
    }
}
