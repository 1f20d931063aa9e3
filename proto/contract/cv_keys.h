/*
 * cv_keys — the Redis keyspace: the one owner of every key name
 * (docs/keyspace.md is the operator's view of the same table, and
 * tests/unit/contract/test_keys.c fails when a kind is missing from it).
 *
 * Every key starts with a prefix (default "cv:"). A stack's keys carry the
 * hash tag {<stack>} so that every script touches one Redis Cluster slot.
 * Each kind's pattern is also its format: <stack> is the stack id,
 * <traversal> the traversal number, and the one other placeholder (a
 * resource, a node, a worker, an expansion) is the name argument.
 * Pure formatting: no I/O.
 */
#ifndef CV_KEYS_H
#define CV_KEYS_H

#include <stddef.h>
#include <stdint.h>

#define CV_KEY_MAX 512

/* XX(KIND, pattern after the prefix) */
#define CV_KEY_KIND_MAP(XX)                                                                        \
    XX(STACKS, "stacks")                                                                           \
    XX(ACTIVE, "active")                                                                           \
    XX(REAPER, "reaper")                                                                           \
    XX(DELETED, "deleted")                                                                         \
    XX(LIMITS, "limits")                                                                           \
    XX(WORKER, "worker:<worker>")                                                                  \
    XX(STACK, "{<stack>}:stack")                                                                   \
    XX(DEF, "{<stack>}:def")                                                                       \
    XX(EVENTS, "{<stack>}:events")                                                                 \
    XX(COUNTS, "{<stack>}:counts")                                                                 \
    XX(INDEX, "{<stack>}:index")                                                                   \
    XX(LEDGER, "{<stack>}:ledger")                                                                 \
    XX(CHILDREN, "{<stack>}:children")                                                             \
    XX(HOOKS, "{<stack>}:hooks")                                                                   \
    XX(GC, "{<stack>}:gc")                                                                         \
    XX(RES, "{<stack>}:res:<resource>")                                                            \
    XX(LEASE, "{<stack>}:lease:<resource>")                                                        \
    XX(SIGNALS, "{<stack>}:signals:<resource>")                                                    \
    XX(WAITERS, "{<stack>}:waiters:<resource>")                                                    \
    XX(RDEF, "{<stack>}:rdef:<traversal>")                                                         \
    XX(GRAPH, "{<stack>}:graph:<traversal>")                                                       \
    XX(DONE, "{<stack>}:done:<traversal>")                                                         \
    XX(PUBLISHING, "{<stack>}:publishing:<traversal>")                                             \
    XX(SP, "{<stack>}:sp:<traversal>:<node>")                                                      \
    XX(RDEF_DRAFT, "{<stack>}:rdef:<traversal>:draft:<expansion>")                                 \
    XX(GRAPH_DRAFT, "{<stack>}:graph:<traversal>:draft:<expansion>")                               \
    /* The cluster (docs/services.md): one hash tag, so every cluster script is one slot. */       \
    XX(NODES, "{cluster}:nodes")                                                                   \
    XX(SETTINGS, "{cluster}:settings")                                                             \
    XX(NODE, "{cluster}:node:<node>")                                                              \
    XX(ALIVE, "{cluster}:alive:<node>")                                                            \
    XX(DOWN, "{cluster}:down:<node>")                                                              \
    XX(ASSIGN, "{cluster}:assign:<node>")                                                          \
    XX(REPORT, "{cluster}:report:<node>")                                                          \
    XX(NOTIFY, "{cluster}:notify:<node>")                                                          \
    XX(SERVICES, "{cluster}:services")                                                             \
    XX(SVC, "{cluster}:svc:<svc>")                                                                 \
    XX(HEALTH, "{cluster}:health")                                                                 \
    XX(CLEDGER, "{cluster}:ledger")                                                                \
    XX(CRM, "{cluster}:crm")                                                                       \
    XX(CRM_STATUS, "{cluster}:crm:status")                                                         \
    XX(CRM_SETTINGS, "{cluster}:crm:settings")                                                     \
    XX(LOAD, "{cluster}:load:<svc>")

typedef enum {
#define CV_KEY_KIND_ENUM(kind, pattern) CV_KEY_##kind,
    CV_KEY_KIND_MAP(CV_KEY_KIND_ENUM)
#undef CV_KEY_KIND_ENUM
        CV_KEY__COUNT
} cv_key_kind_t;

/* Sets the prefix used by every key; returns CV_EINVAL if it is too long. */
int cv_keys_set_prefix(const char *prefix);
const char *cv_keys_prefix(void);

/* The kind's pattern, without the prefix: "{<stack>}:res:<resource>". */
const char *cv_key_pattern(cv_key_kind_t kind);

/* Writes the key of `kind` into buf: the prefix, then the pattern with
 * stack, traversal and name in place (each ignored where the pattern has
 * no place for it). Returns the length written (truncated to fit). */
size_t cv_key(char *buf, size_t size, cv_key_kind_t kind, const char *stack, uint64_t traversal,
              const char *name);

/* The key of `kind` up to its name: "cv:{s}:res:", "cv:{s}:sp:7:". For a
 * script that appends a member's name itself (stack_reap_nodes.lua); the
 * whole key is then exactly what cv_key makes of that name. */
size_t cv_key_prefix(char *buf, size_t size, cv_key_kind_t kind, const char *stack,
                     uint64_t traversal);

/* Graph-node names: "u/<resource>" (update) or "c/<resource>" (cleanup). */
size_t cv_node_name(char *buf, size_t size, int phase, const char *resource);

#endif
