/*
 * cli_show — what the commands that show one thing of a stack share
 * (output-show, template-show, resource-show): their arguments
 * "COMMAND NAME|ID [WORD] [-o json] [--all]", and printing an object as
 * aligned "field: value" lines.
 */
#ifndef CLI_SHOW_H
#define CLI_SHOW_H

#include <jansson.h>
#include <stdbool.h>

#include "cli_common.h"

enum { CLI_OPT_ALL = 300 };

#define CLI_ALL_OPT                                                                                \
    {                                                                                              \
        CLI_OPT_ALL, "--all", NULL, false                                                          \
    }

typedef struct cli_show_args {
    const char *cmd;
    const char *name; /* the stack: a name or a stack id */
    const char *word; /* the second word (an output, a resource), or NULL */
    bool json;
    bool all;
    bool show_secrets; /* --show-secrets (CLI_SHOW_SECRETS_OPT) */
} cli_show_args_t;

/* Parses the arguments with `opts` (ids above and of cli_common.h); prints
 * `usage` on --help. Then checks that a stack was named, and, when
 * `word_needed` names the second word ("RESOURCE"), that it was given;
 * `words` is how many positional words the command takes (1 or 2).
 * CLI_OK (Redis connected), CLI_HELP, or the exit code of a reported
 * error. */
int cli_show_parse(cli_t *cli, int argc, char **argv, const cli_opt_t *opts, const char *usage,
                   int words, const char *word_needed, cli_show_args_t *out);

/* Prints the fields of `obj` named in `fields` (NULL-terminated) in that
 * order: "field:  value" aligned, strings bare and other scalars (and
 * empty lists and objects) as JSON; a list or object that is not empty as
 * indented JSON on the lines below its field. */
void cli_show_fields(const json_t *obj, const char *const *fields);

#endif
