/*
 * cli_nodemap_internal — what the node rows (cli_nodemap.c) share with the
 * map drawing (cli_nodemap_draw.c). Not part of cli_nodemap.h's surface.
 */
#ifndef CLI_NODEMAP_INTERNAL_H
#define CLI_NODEMAP_INTERNAL_H

#include <jansson.h>

/* The string member `key` of `o`, or `fallback` when absent or empty. */
const char *cli__nodemap_str(const json_t *o, const char *key, const char *fallback);

/* Sorts an array of objects by their "name", in natural order (web-2
 * before web-10). */
void cli__nodemap_sort(json_t *list);

/* The metrics of a node row, those with a capacity or a load, as a sorted
 * array of {"name"}. */
json_t *cli__nodemap_metrics(const json_t *row);

/* A row's capacity of `metric` (-1: unlimited) and load of it. */
double cli__nodemap_capacity(const json_t *row, const char *metric);
double cli__nodemap_load(const json_t *row, const char *metric);

#endif
