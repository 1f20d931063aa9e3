/*
 * cv_progress — how a finished graph node moves its traversal forward.
 *
 * One atomic script marks the node done (fenced by the record version) and
 * adds it to each successor's sync point; every successor whose set became
 * complete gets its check job; when the last node is done the stack's
 * outputs are resolved and it becomes <ACTION>_COMPLETE. A node that fails
 * fails its traversal. The callback runs once every message it published
 * is acknowledged by Kafka, so the caller may then commit its own offset.
 * A failure of a stack that asked for rollback starts the rollback traversal
 * before the callback runs.
 */
#ifndef CV_PROGRESS_H
#define CV_PROGRESS_H

#include "cv_msg.h"
#include "cv_worker.h"

/* rc: 0 progressed; CV_ESTALE (superseded or settled: nothing to do);
 * CV_EFENCED (the record moved on); CV_EREDIS / CV_EKAFKA (retry the job). */
typedef void (*cv_progress_cb)(void *ud, int rc);

/* Every string left NULL counts as "" (keep, none, any). */
typedef struct cv_node_done {
    const cv_msg_t *job;     /* stack, traversal, resource, phase */
    const char *graph_entry; /* the node's entry in the traversal graph (JSON) */
    const char *version;     /* expected record version; "" for any */
    const char *status;      /* new resource status; "" unchanged; "DELETED" removes */
    const char *attrs;       /* "" keeps */
    const char *data;        /* type-private data; "" keeps */
    const char *reason;
    const char *pass; /* JSON passed to successors: {"id":..,"attrs":{..}} */
    const char *physical_id;
    const char *action;      /* for the event: CREATE / DELETE / ... */
    const char *old;         /* replaced versions json; "" keeps */
    const char *events;      /* extra events json list; "" none */
    const char *lease_token; /* the caller's lease, released atomically; "" none */
    /* The caller has no job that would run this again should it die before
     * the successors' jobs are published (an engine: the CHECK job that
     * finds the node done must publish them). The node is in the traversal's
     * publishing set from the write until they are. */
    bool publishing;
} cv_node_done_t;

int cv_progress_node_done(cv_worker_t *w, const cv_node_done_t *d, cv_progress_cb cb, void *ud);

typedef struct cv_node_failed {
    const cv_msg_t *job;
    const char *version;
    const char *status; /* e.g. CREATE_FAILED */
    const char *reason; /* the resource's reason */
    const char *physical_id;
    const char *action;
} cv_node_failed_t;

int cv_progress_node_failed(cv_worker_t *w, const cv_node_failed_t *f, cv_progress_cb cb, void *ud);

/* Starts a new traversal of `kind` (CV_TRAV_DELETE or CV_TRAV_ROLLBACK) and
 * publishes its STACK job. */
int cv_progress_start_traversal(cv_worker_t *w, const char *stack, int kind, cv_progress_cb cb,
                                void *ud);

/* A traversal a worker begins: what stack_begin.lua takes (JSON texts; ""
 * keeps what is stored). Nested stacks are begun this way by their parent. */
typedef struct cv_stack_begin {
    int kind;          /* CV_TRAV_* */
    const char *stack; /* id */
    const char *name;  /* CREATE */
    const char *tpl, *params, *files, *fname;
    const char *parent; /* CREATE of a nested stack: {"stack","resource","depth"} */
    const char *token;  /* a repeat with the same token begins nothing new */
} cv_stack_begin_t;

/* rc: 0 begun (or begun already with this token) and its STACK job
 * acknowledged; CV_ENOENT no such stack; CV_EEXIST (CREATE of an existing
 * stack under another token); CV_EREDIS / CV_EKAFKA transient. */
typedef void (*cv_begin_cb)(void *ud, int rc, uint64_t traversal);

int cv_progress_begin_stack(cv_worker_t *w, const cv_stack_begin_t *b, cv_begin_cb cb, void *ud);

/* stack_finish.lua: a stack still in progress on `traversal` becomes
 * <ACTION>_<status> (status "COMPLETE" or "FAILED") with reason and
 * outputs (a JSON object text); its reply (lua header) goes to cb. Returns
 * 0, or CV_EREDIS when not connected (cb is then not called). */
int cv_progress_stack_status(cv_worker_t *w, const char *stack, uint64_t traversal,
                             const char *status, const char *reason, const char *outputs,
                             cv_redis_cb cb, void *ud);

/* Ends a traversal whose every node is done (also used for empty stacks). */
int cv_progress_finish_stack(cv_worker_t *w, const char *stack, uint64_t traversal,
                             cv_progress_cb cb, void *ud);

#endif
