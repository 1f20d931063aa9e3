/*
 * cv_keys — the Redis keyspace (docs/keyspace.md is the operator's view).
 *
 * Every key starts with a prefix (default "cv:"). A stack's keys carry the
 * hash tag {<stack id>} so that every script touches one Redis Cluster slot.
 * Pure formatting: no I/O.
 */
#ifndef CV_KEYS_H
#define CV_KEYS_H

#include <stddef.h>
#include <stdint.h>

#define CV_KEY_MAX 512

/* Sets the prefix used by every key; returns CV_EINVAL if it is too long. */
int cv_keys_set_prefix(const char *prefix);
const char *cv_keys_prefix(void);

/* "<prefix>{<stack>}:<what>" for what in stack, def, events, counts. */
size_t cv_key_stack(char *buf, size_t size, const char *stack, const char *what);
/* "<prefix>{<stack>}:<what>:<name>" for what in res, lease. */
size_t cv_key_resource(char *buf, size_t size, const char *stack, const char *what,
                       const char *name);
/* "<prefix>{<stack>}:<what>:<traversal>" for what in rdef, graph, done. */
size_t cv_key_trav(char *buf, size_t size, const char *stack, const char *what, uint64_t trav);
/* "<prefix>{<stack>}:sp:<traversal>:<node>" */
size_t cv_key_syncpoint(char *buf, size_t size, const char *stack, uint64_t trav, const char *node);
/* "<prefix><what>" for global keys: "stacks", "worker:<id>". */
size_t cv_key_global(char *buf, size_t size, const char *what);

/* Graph-node names: "u/<resource>" (update) or "c/<resource>" (cleanup). */
size_t cv_node_name(char *buf, size_t size, int phase, const char *resource);

#endif
