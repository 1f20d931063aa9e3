/*
 * cli_waiting — why a stack in progress is waiting, worked out from what
 * its traversal keeps in Redis (docs/keyspace.md): the graph (each node's
 * number of predecessors), the done set, the sync points (predecessors
 * done so far), the leases and the resource records.
 *
 * For every node not done whose predecessors are all done:
 *   - its resource's lease is held: an engine is acting on it now, under
 *     that worker's lease;
 *   - else it is paused at a hook of the current traversal (the stack's
 *     hooks hash says so): it waits for the hook to be cleared;
 *   - else its action is recorded in progress (an update node's resource,
 *     a cleanup node's resource or replaced version being deleted): the
 *     observers are waiting for the type, and the record says on what (a
 *     TestResource's wait and the time left, a nested stack and its status,
 *     a WaitCondition's signals and its timeout, a service's replicas not
 *     yet healthy);
 *   - else it is ready but not taken: its CHECK job is published and no
 *     worker holds its lease yet.
 * A resource whose node still waits for predecessors counts as blocked,
 * unless its lease is held (an older traversal's action still running).
 * Before the traversal's graph stands the stack waits for its expansion;
 * once every node is done, for its end to be recorded. A stack whose
 * progress time has not moved for longer than a threshold is stalled.
 *
 * Pure: cli_waiting_io reads what this needs.
 */
#ifndef CLI_WAITING_H
#define CLI_WAITING_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The stack, from its status record. */
typedef struct cli_wait_stack {
    const char *name;      /* as commands name it: a name, or a nested stack's id */
    const char *status;    /* CREATE_IN_PROGRESS, ... */
    long long traversal;   /* the current traversal */
    long long expanded;    /* the traversal whose graph stands (0: none) */
    long long total, done; /* graph nodes */
    double progress;       /* when its work last moved, Unix seconds (0: never) */
    double updated;        /* when the traversal began */
    bool stops_older;      /* a delete or a cancel: it stops an older traversal's
                              action in flight instead of letting it end */
} cli_wait_stack_t;

/* One graph node of the current traversal, as read. */
typedef struct cli_wait_node {
    const char *node;       /* "u/web" (update) or "c/web" (cleanup) */
    long long preds;        /* predecessors, from its graph entry; < 0 unreadable */
    long long satisfied;    /* entries in its sync point */
    bool done;              /* in the done set */
    const char *lease;      /* the lease holder's token "<worker>:<n>"; NULL: free */
    long long lease_ttl_ms; /* the lease's PTTL */
    const json_t *record;   /* the resource's record: an object of the stored strings
                               (status, action, type, physical_id, traversal, started,
                               data, old); NULL when it has none */
    const json_t *children; /* the child stacks the record names (nested resources):
                               id -> {"exists": bool, "name", "status", "reason",
                               "done", "total"}; NULL: none read */
    const json_t *hook;     /* the resource's entry of the stack's hooks hash, parsed
                               ({"traversal", "waiting": hook, "since", ...}); NULL:
                               none */
    const json_t *watched;  /* a resource waiting for another's signals (a
                               WaitCondition): that one's record ({"name", "type",
                               "physical_id", "data"}, strings as stored); NULL: none */
    const json_t *replicas; /* a Converge::Service: its replica rows (cli_replview.h's
                               cli_replica_rows), NULL when none were read */
} cli_wait_node_t;

/* What the stack waits on, as the document `status -o json` shows under
 * "waiting" (fields in docs/keyspace.md and `status --help`). `now` is the
 * Redis server's time (the records' times are its own); a stack is stalled
 * when now - max(progress, updated) > stalled_after seconds. A new object;
 * the nodes are only read. */
json_t *cli_waiting_analyse(const cli_wait_stack_t *s, const cli_wait_node_t *nodes, size_t n,
                            double now, double stalled_after);

/* The resource a node acts on: "web" of "u/web". */
const char *cli_waiting_resource(const char *node);

/* The child stacks a record names: the "stack" of its data and of its
 * replaced versions' data, when a stack id. What cli_waiting_io reads as
 * the node's `children`. A new array of strings. */
json_t *cli_waiting_child_ids(const json_t *record);

/* Whether the record is of a resource that waits for another's signals (an
 * OS::Heat::WaitCondition); `ref` is then the physical id of the one it
 * waits for (its `handle` property), to be found among the resources it
 * depends on, as the observer finds it. What cli_waiting_io reads as the
 * node's `watched`. */
bool cli_waiting_watches(const json_t *record, char *ref, size_t size);

#endif
