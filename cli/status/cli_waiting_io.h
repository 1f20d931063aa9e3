/*
 * cli_waiting_io — reads what "why is it waiting" needs (cli_waiting.h)
 * from Redis: the stack's progress fields and the server's time, then the
 * current traversal's graph and done set, the sync points and leases of the
 * nodes not done, and the records (and child stacks) of those that are
 * ready or leased. Only reads; a few pipelined round trips per 1000 nodes.
 */
#ifndef CLI_WAITING_IO_H
#define CLI_WAITING_IO_H

#include <jansson.h>

#include "cli_common.h"

/* Why the stack `id` (which commands name `name`: a name or the id) is
 * waiting: *out is cli_waiting_analyse's document, or NULL when the stack
 * is not in progress. CLI_OK or CLI_SERVICE (reported). */
int cli_waiting_read(cli_t *cli, const char *name, const char *id, double stalled_after,
                     json_t **out);

#endif
