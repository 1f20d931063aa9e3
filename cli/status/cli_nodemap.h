/*
 * cli_nodemap — what `convergectl nodes` shows, decided from the live model
 * (cli_live.h) without Redis: one row per node (status from the heartbeat
 * and the admin state, capacities from the node and its type, load
 * measured by the agent or else declared by the replicas assigned to it),
 * the text table, load bars, and the FD × UD map a person reads at a
 * glance. Pure.
 */
#ifndef CLI_NODEMAP_H
#define CLI_NODEMAP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The nodes of `model`, sorted by name, each
 * {"name", "type", "fault_domain", "upgrade_domain", "status": "up"|"down",
 *  "admin": "enabled"|"disabled"|"draining", "properties", "capacities":
 *  {metric: n}, "load": {metric: n}, "load_source": "measured"|"declared",
 *  "replicas": count, "replica_list": [{"rid", "name", "role", "state"}],
 *  "agent": {"agent", "address", "ports", "last_seen", "fence_ms" (as the
 *  agent wrote them, when it did), "heartbeat_ms": ms its heartbeat lives},
 *  "error": why the description is unreadable (only then)}.
 * A metric without capacity is unlimited (absent from "capacities"). */
json_t *cli_nodes_rows(const json_t *model);

/* "up", "down", "up/draining", "down/disabled": status and admin in one word. */
void cli_node_status_text(const json_t *row, char *buf, size_t size);

/* The table of `convergectl nodes` (header first, for cli_print_table):
 * NAME TYPE FD UD STATUS REPLICAS LOAD PROPERTIES, the load as
 * "MemoryMB 512/1024 cpu 1/4". */
json_t *cli_nodes_table(const json_t *rows);

/* A load bar: "[#####.....]  50% MemoryMB 512/1024" for `width` cells;
 * over capacity the bar is full and marked "!"; without a capacity
 * (capacity < 0) "MemoryMB 512 (no capacity)". */
void cli_load_bar(double load, double capacity, int width, const char *metric, char *buf,
                  size_t size);

/* The FD × UD grid of the nodes (rows from cli_nodes_rows): a summary line,
 * then one row per fault domain and one column per upgrade domain, each
 * cell listing its nodes with status, replicas and one load bar per metric.
 * With `colour`, ANSI colours mark status and load levels. A malloc'd
 * string. */
char *cli_nodes_map(const json_t *rows, bool colour);

#endif
