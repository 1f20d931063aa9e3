/*
 * cli_secret_io — reading what a stack's readers must hide (cli_secret.h)
 * from Redis: the stack's definition, the records of its resources whose
 * type keeps secret attributes (OS::Heat::RandomString), and the same of
 * every stack above it, since a nested stack's parameters and properties
 * are filled with its parent's values.
 *
 * --show-secrets skips all of it. Who may pass it is who may read the
 * stack's keys in Redis at all (docs/security.md "Secrets"): the masking
 * keeps secrets out of terminals, logs of commands, the console and what
 * is pasted from them, not from a principal that holds the deployment's
 * credentials.
 */
#ifndef CLI_SECRET_IO_H
#define CLI_SECRET_IO_H

#include "cli_common.h"
#include "cli_secret.h"
#include "cli_traversal.h"

/* Reads the secrets of stack `id`, whose definition `d` the caller read
 * (cli_def_read), into `out` (cli_secrets_init'ed by this call; free it
 * with cli_secrets_free in every case). CLI_OK or CLI_SERVICE (reported):
 * a reader that cannot tell what is secret shows nothing. */
int cli_secret_read(cli_t *cli, const char *id, const cli_def_t *d, cli_secrets_t *out);

/* The same, reading the definition itself. */
int cli_secret_read_stack(cli_t *cli, const char *name, const char *id, cli_secrets_t *out);

/* Replaces *reason (malloc'ed) with the same text, the secrets of stack
 * `id` masked: the reason a --wait or watch ends with. CLI_OK or
 * CLI_SERVICE (reported; *reason kept). */
int cli_secret_mask_reason(cli_t *cli, const char *id, char **reason);

/* Masks, in place, the reasons of stack listing rows (cli_list_row's, of
 * `convergectl list` and the console's /api/stacks) with each stack's
 * secrets. Only a failure's reason quotes values (a property refused with
 * its value), so only a stack whose status failed costs a read. CLI_OK or
 * CLI_SERVICE (reported). */
int cli_secret_mask_list(cli_t *cli, json_t *rows);

/* The option every masking reader takes. */
#define CLI_SHOW_SECRETS_USAGE                                                                     \
    "      --show-secrets   show hidden parameters, RandomString values and\n"                     \
    "                       other secrets instead of ****** (docs/security.md)\n"

#endif
