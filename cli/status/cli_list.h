/*
 * cli_list — what `convergectl list` decides without Redis: which stacks a
 * filter keeps (--status, --name, --nested) and the order they are listed
 * in (each nested stack under its parent). Pure.
 */
#ifndef CLI_LIST_H
#define CLI_LIST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cli_list_filter {
    json_t *statuses; /* upper-case statuses or states; empty: any */
    char *name;       /* a shell pattern (fnmatch) the name must match; NULL: any */
    bool nested;      /* nested stacks are listed too */
} cli_list_filter_t;

void cli_list_filter_init(cli_list_filter_t *f);
void cli_list_filter_free(cli_list_filter_t *f);

/* Adds what one --status gave: "S" or "S1,S2,...", each a stack status
 * (CREATE_COMPLETE: an action of cv_trav_kind_name and a state) or a state
 * alone (IN_PROGRESS, COMPLETE, FAILED: any action), in any case. 0, or -1
 * with `errstr` naming the word that is neither. */
int cli_list_filter_add_status(cli_list_filter_t *f, const char *arg, char *errstr,
                               size_t errstr_size);

/* Sets the --name pattern: 0, or -1 when it is empty. */
int cli_list_filter_set_name(cli_list_filter_t *f, const char *pattern, char *errstr,
                             size_t errstr_size);

/* Whether the stack `row` ({"name", "status", "depth": 0 for a top-level
 * stack}) is listed: it exists (a status that is not DELETE_COMPLETE: a
 * stack whose delete completed is gone), is top-level unless nested stacks
 * are asked for, and matches every filter given. */
bool cli_list_filter_match(const cli_list_filter_t *f, const json_t *row);

/* The rows ({"id", "name", "parent": parent id or ""}) in listing order:
 * stacks whose parent is not among the rows by name, each followed by its
 * children by name, depth first. A new array holding the same rows. */
json_t *cli_list_order(const json_t *rows);

/* A listing row ({"name", "id", "status", "reason", "traversal", "done",
 * "total", "created", "updated", "age" (seconds since created, at `now`),
 * "depth", "parent", "parent_resource"}) from the fields of a stack hash
 * (an object of strings, as Redis holds them). */
json_t *cli_list_row(const char *id, const json_t *rec, double now);

/* ---- nested stacks by name ----
 *
 * A nested stack is named by the worker that creates it (checkjob_nested.c)
 * as Heat names it: "PARENT-RESOURCE-ID12", its parent's name, the
 * parent's resource and the first 12 characters of its id; `list --nested`
 * prints that name. Only top-level names are indexed (the `stacks` hash),
 * so a nested name is found from its top stack down, level by level. */

/* The lengths of the beginnings of `name` that end before one of its '-'
 * (shortest first): where a top-level stack's name may end. At most `max`
 * of them in `ends`; their number. */
size_t cli_list_name_prefixes(const char *name, size_t *ends, size_t max);

/* Whether a stack called `ancestor` may have `name` below it: `name` is
 * `ancestor`, '-', and more. */
bool cli_list_name_below(const char *name, const char *ancestor);

#endif
