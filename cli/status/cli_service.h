/*
 * cli_service — the checks of Converge::Service resources that need the
 * live cluster, made by submit and update once Redis is reached (validate
 * contacts no service): every metric a service names must be known to the
 * cluster, as the engine checks again at create.
 */
#ifndef CLI_SERVICE_H
#define CLI_SERVICE_H

#include <jansson.h>

#include "cli_common.h"

/* Checks the literal metrics of every Converge::Service among the
 * resources of the template `tree` (`fname` names it in the message)
 * against {cluster}:settings and {cluster}:nodes. CLI_OK, CLI_USAGE with
 * "FILE: resources.R.properties.metrics[i].name: unknown metric ..."
 * reported, or CLI_SERVICE. */
int cli_service_check(cli_t *cli, const json_t *tree, const char *fname);

/* The same check against a cluster manifest (`validate --cluster`): its
 * `nodes` and the rest as the settings. CLI_OK or CLI_USAGE (reported). */
int cli_service_check_manifest(const json_t *tree, const char *fname, const json_t *manifest);

#endif
