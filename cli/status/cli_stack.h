/*
 * cli_stack — a stack's status record as convergectl reads it (the `stack`
 * and `counts` hashes of docs/keyspace.md), how it is printed, and waiting
 * for a traversal to settle.
 */
#ifndef CLI_STACK_H
#define CLI_STACK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli_common.h"

typedef struct cli_stack {
    char id[CV_ID_MAX];
    char name[CV_NAME_MAX];
    char status[64]; /* "" when the record has none */
    char action[16]; /* CREATE, UPDATE, DELETE, ROLLBACK */
    bool rollback;   /* roll back when a create or update fails */
    char *reason;
    long long traversal, total, done;
    double created, updated;
    json_t *outputs;                   /* an object; {} when none */
    char parent[CV_ID_MAX];            /* a nested stack: its parent's id; else "" */
    char parent_resource[CV_NAME_MAX]; /* ...and the parent's resource it is */
} cli_stack_t;

/* Reads the stack hash of `id`: CLI_OK (with *found telling whether the
 * stack exists) or CLI_SERVICE. Free with cli_stack_free, found or not. */
int cli_stack_read(cli_t *cli, const char *id, cli_stack_t *s, bool *found);
void cli_stack_free(cli_stack_t *s);

/* The id of the stack `name_or_id` names, for every command that takes a
 * stack: a top-level stack's name, a stack id whose status record exists
 * (a nested stack's id is the physical id of its parent's resource), or a
 * nested stack's name as `list --nested` prints it. CLI_OK, CLI_USAGE
 * ("stack NAME not found") or CLI_SERVICE. (cli_stack_resolve.c) */
int cli_stack_resolve(cli_t *cli, const char *name_or_id, char id[CV_ID_MAX]);

/* The nested stack called `name` (as `list --nested` prints it), found
 * down from the top-level stacks whose names begin it, through the
 * children whose names begin it: its id, "" when there is none (not
 * reported). CLI_OK or CLI_SERVICE. */
int cli_stack_find_nested(cli_t *cli, const char *name, char id[CV_ID_MAX]);

/* The record of the top-level stack above stack `id` (its own when it is
 * top-level) in *top, to be freed with cli_stack_free in every case.
 * CLI_OK or CLI_SERVICE (a parent without a record, or a chain deeper than
 * templates nest). */
int cli_stack_top(cli_t *cli, const char *id, cli_stack_t *top);

/* CLI_OK when `s` is a top-level stack; for a nested one CLI_USAGE (or
 * CLI_SERVICE), saying that `verb` acts on its top stack, named as the
 * user named it (`given`). */
int cli_stack_refuse_nested(cli_t *cli, const cli_stack_t *s, const char *given, const char *verb);

/* cli_stack_resolve for the verbs that change a stack (delete, update):
 * a nested stack is its parent resource's to change, so it is refused
 * (cli_stack_refuse_nested). `name` gets the stack's own name (a stack
 * given by its id is changed under its name, which the workers release
 * when a delete completes). */
int cli_stack_resolve_top_level(cli_t *cli, const char *name_or_id, const char *verb,
                                char id[CV_ID_MAX], char name[CV_NAME_MAX]);

/* Finds the stack `name` (cli_stack_resolve) and reads its record: CLI_OK,
 * CLI_USAGE (no such stack, or it has no status record; reported) or
 * CLI_SERVICE. Free *s with cli_stack_free in every case. */
int cli_stack_find(cli_t *cli, const char *name, cli_stack_t *s);

/* stack_unname.lua: removes name -> id only while the name maps to id
 * (*removed, when not NULL, tells whether it did). CLI_OK or CLI_SERVICE. */
int cli_stack_unname(cli_t *cli, const char *name, const char *id, bool *removed);

/* The counts hash: resource status -> number; NULL on failure (reported). */
json_t *cli_stack_counts(cli_t *cli, const char *id);

/* The progress of the stack's nested stacks, all levels summed:
 * {"stacks": n, "resources": {STATUS: count}, "total": nodes, "done": nodes}
 * over the nested stacks that exist and are not DELETE_COMPLETE. NULL on
 * failure (reported). */
json_t *cli_stack_nested(cli_t *cli, const char *id);

/* The children set of the stack: nested stack id -> true, for every stack
 * its resources created. NULL on failure (reported). */
json_t *cli_stack_children(cli_t *cli, const char *id);

/* The nested stack a resource version is (template resources,
 * OS::Heat::Stack, groups): the "stack" of its data (an object) when the
 * stack's `children` has it; NULL when it is no nested resource. */
const char *cli_nested_stack_id(const json_t *data, const json_t *children);

/* Whether the traversal has ended: a status that is not *_IN_PROGRESS. */
bool cli_stack_settled(const cli_stack_t *s);

/* CLI_OK when the status is <action>_COMPLETE (any action when NULL),
 * CLI_FAILED otherwise. */
int cli_stack_outcome(const cli_stack_t *s, const char *action);

/* "stack NAME (id) STATUS" */
void cli_stack_print_line(const cli_stack_t *s);

/* The status line, the reason and the outputs: how a wait ends. */
void cli_stack_print_final(const cli_stack_t *s);

/* Output values as the human reads them: strings bare, the rest as JSON. */
void cli_print_outputs(const json_t *outputs, const char *indent);

/* Called at every poll of a wait with the current record (watch draws). */
typedef void (*cli_tick_fn)(const cli_stack_t *s, double elapsed, void *ud);

/* Polls the stack every 100 ms until its status is settled or `timeout`
 * seconds passed (0: no limit). A CREATE_FAILED or UPDATE_FAILED of a stack
 * with rollback enabled is not taken as settled at once: the workers start
 * the rollback right after the failure, so the wait gives them up to 10 s to
 * turn it into ROLLBACK_IN_PROGRESS (and then waits for that), and takes the
 * failure as final only when they did not. On CLI_OK *s holds the settled record;
 * otherwise CLI_TIMEOUT (not reported: *s is the last record, for
 * cli_stack_report_timeout), CLI_FAILED (the stack disappeared) or
 * CLI_SERVICE. *s is to be freed in every case. */
int cli_stack_wait(cli_t *cli, const char *id, double timeout, cli_tick_fn tick, void *ud,
                   cli_stack_t *s);

/* "timed out after N s: stack NAME (id) is still STATUS (done/total done)";
 * returns CLI_TIMEOUT. */
int cli_stack_report_timeout(const cli_stack_t *s, double timeout);

/* What --wait does: waits (cli_stack_wait), prints the final status, reason
 * and outputs, and returns CLI_OK when the stack ended <action>_COMPLETE,
 * CLI_FAILED otherwise (saying so when a rollback undid the change, and
 * printing the resources that failed in traversal `from`, the one the
 * command began, or later: cli_stack_print_failures), CLI_TIMEOUT
 * (reported) or CLI_SERVICE. */
int cli_stack_follow(cli_t *cli, const char *id, double timeout, const char *action, uint64_t from);

/* Prints "  failed resources:" and a line per resource of stack `s` that
 * failed in traversal `from` or later, with its latest failure and reason
 * ("    NAME  ACTION_FAILED: REASON"), its secrets masked as every reader
 * masks them (cli_secret_io.h); below a failed nested-stack resource, the
 * failures of its nested stack's last failed traversal
 * ("    NAME/CHILD  ..."), as Heat's `stack failures list` descends into
 * them; nothing when none failed. Read from the stacks' events, which
 * outlive a rollback that deleted the resources. CLI_OK or CLI_SERVICE
 * (reported). (cli_failures.c) */
int cli_stack_print_failures(cli_t *cli, const cli_stack_t *s, uint64_t from);

#endif
