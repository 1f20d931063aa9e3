/*
 * cli_noderow — reading a node row's fields: shared by the node map (cli_nodemap.c),
 * its drawing (cli_nodemap_draw.c) and the console's node views.
 */
#ifndef CLI_NODEROW_H
#define CLI_NODEROW_H

#include <jansson.h>

/* The string member `key` of `o`, or `fallback` when absent or empty. */
const char *cli_noderow_str(const json_t *o, const char *key, const char *fallback);

/* Sorts an array of objects by their "name", in natural order (web-2
 * before web-10). */
void cli_noderow_sort(json_t *list);

/* The metrics of a node row, those with a capacity or a load, as a sorted
 * array of {"name"}. */
json_t *cli_noderow_metrics(const json_t *row);

/* A row's capacity of `metric` (-1: unlimited) and load of it. */
double cli_noderow_capacity(const json_t *row, const char *metric);
double cli_noderow_load(const json_t *row, const char *metric);

#endif
