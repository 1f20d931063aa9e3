/*
 * cli_commands — the commands of convergectl, one file each (cmd_*.c).
 * `run` gets argv[0] == the command's name and returns the exit code;
 * `usage` is the whole text of COMMAND --help.
 */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

#include "cv_status.h"

extern const char cli_validate_usage[];
extern const char cli_submit_usage[];
extern const char cli_status_usage[];
extern const char cli_resources_usage[];
extern const char cli_events_usage[];
extern const char cli_watch_usage[];
extern const char cli_delete_usage[];
extern const char cli_place_usage[];
extern const char cli_update_usage[];
extern const char cli_rollback_usage[];
extern const char cli_cancel_usage[];
extern const char cli_converge_usage[];
extern const char cli_observe_usage[];
extern const char cli_dead_usage[];
extern const char cli_mark_unhealthy_usage[];
/* Read-side verbs: listing stacks, one output, template or resource. */
extern const char cli_list_usage[];
extern const char cli_output_show_usage[];
extern const char cli_template_show_usage[];
extern const char cli_resource_show_usage[];
extern const char cli_signal_usage[];
extern const char cli_hook_clear_usage[];
/* The cluster. */
extern const char cli_nodes_usage[];
extern const char cli_node_usage[];
extern const char cli_replicas_usage[];
extern const char cli_health_usage[];
/* The cluster resource manager. */
extern const char cli_crm_usage[];
extern const char cli_crm_settings_usage[];
extern const char cli_report_load_usage[];
extern const char cli_rollout_usage[];
extern const char cli_upgrade_usage[];
/* Kafka. */
extern const char cli_topics_usage[];
/* Drawing a stack. */
extern const char cli_graph_usage[];
/* Nothing kept forever: purging deleted stacks, re-sealing secrets. */
extern const char cli_purge_usage[];
extern const char cli_rekey_usage[];

int cli_cmd_validate(cli_t *cli, int argc, char **argv);
int cli_cmd_submit(cli_t *cli, int argc, char **argv);
int cli_cmd_status(cli_t *cli, int argc, char **argv);
int cli_cmd_resources(cli_t *cli, int argc, char **argv);
int cli_cmd_events(cli_t *cli, int argc, char **argv);
int cli_cmd_watch(cli_t *cli, int argc, char **argv);
int cli_cmd_delete(cli_t *cli, int argc, char **argv);
int cli_cmd_purge(cli_t *cli, int argc, char **argv);
int cli_cmd_rekey(cli_t *cli, int argc, char **argv);
int cli_cmd_place(cli_t *cli, int argc, char **argv);
int cli_cmd_update(cli_t *cli, int argc, char **argv);
int cli_cmd_rollback(cli_t *cli, int argc, char **argv);
int cli_cmd_cancel(cli_t *cli, int argc, char **argv);
int cli_cmd_converge(cli_t *cli, int argc, char **argv);
int cli_cmd_observe(cli_t *cli, int argc, char **argv);
int cli_cmd_dead(cli_t *cli, int argc, char **argv);
int cli_cmd_mark_unhealthy(cli_t *cli, int argc, char **argv);
/* Read-side verbs. */
int cli_cmd_list(cli_t *cli, int argc, char **argv);
int cli_cmd_output_show(cli_t *cli, int argc, char **argv);
int cli_cmd_template_show(cli_t *cli, int argc, char **argv);
int cli_cmd_resource_show(cli_t *cli, int argc, char **argv);
int cli_cmd_signal(cli_t *cli, int argc, char **argv);
int cli_cmd_hook_clear(cli_t *cli, int argc, char **argv);
/* The cluster. */
int cli_cmd_nodes(cli_t *cli, int argc, char **argv);
int cli_cmd_node(cli_t *cli, int argc, char **argv);
int cli_cmd_replicas(cli_t *cli, int argc, char **argv);
int cli_cmd_health(cli_t *cli, int argc, char **argv);
/* The cluster resource manager. */
int cli_cmd_crm(cli_t *cli, int argc, char **argv);
int cli_cmd_crm_settings(cli_t *cli, int argc, char **argv);
int cli_cmd_report_load(cli_t *cli, int argc, char **argv);
int cli_cmd_rollout(cli_t *cli, int argc, char **argv);
int cli_cmd_upgrade(cli_t *cli, int argc, char **argv);
/* Kafka. */
int cli_cmd_topics(cli_t *cli, int argc, char **argv);
/* Drawing a stack. */
int cli_cmd_graph(cli_t *cli, int argc, char **argv);
/* update, or with `by_upgrade_domain` upgrade: the same options, and the
 * update of the stack's services goes one upgrade domain at a time. */
int cli_update_run(cli_t *cli, int argc, char **argv, bool by_upgrade_domain);

#endif
