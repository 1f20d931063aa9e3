/*
 * convergectl upgrade: an update whose services roll out one upgrade
 * domain at a time (docs/crm.md "Upgrades by upgrade domain"). The options
 * and validation are update's; the stack's `upgrade` field (stack_begin.lua)
 * tells the engine to write the services' specs with
 * updatePolicy.byUpgradeDomain, and a plain update switches it off again.
 */
#include "cli_commands.h"

const char cli_upgrade_usage[] =
    "usage: convergectl upgrade NAME [TEMPLATE] [update options]\n"
    "\n"
    "Updates the stack NAME as 'convergectl update' does (the same options), but\n"
    "the processes of its Converge::Service resources are replaced one upgrade\n"
    "domain at a time, in the domains' order: the replicas on the nodes of one\n"
    "domain are renewed on their nodes (a stateful one stops, then starts again\n"
    "on the same node), and the next domain waits until they are healthy (the\n"
    "service's update_policy gives the deadline, rollback and manual mode; its\n"
    "defaults without one). The cluster resource manager does not balance a\n"
    "service while it upgrades. 'convergectl rollout status NAME SERVICE' shows\n"
    "the current domain; pause, resume and rollback work as for any rollout.\n"
    "The next 'convergectl update' of the stack updates as its policies say.\n"
    "\n"
    "Exit status: as 'convergectl update'.\n";

int cli_cmd_upgrade(cli_t *cli, int argc, char **argv)
{
    return cli_update_run(cli, argc, argv, true);
}
