/*
 * cv_flow — the job flows as step machines: what a step answers and what
 * the next one is given.
 *
 * A job (cv_checkjob.h, cv_observejob.h, cv_stackjob.h) is a value whose
 * state is explicit; its step function takes what the last answer returned
 * and gives the next answer: send these Redis commands, publish these
 * messages, have the live engine reconcile a service, try again later,
 * done. Nothing here does I/O or reads the clock: the workers
 * (cv_flowrun.h) carry the answers out on Redis and Kafka, the scenario
 * harness over its seeded bus and its Redis, a unit test by writing the
 * replies. One answer at a time: the next step comes once everything the
 * answer waits for is back, as Heat's check_resource handles one graph node
 * and Nomad's scheduler hands its plan to an applier.
 *
 * An answer (and every string it points to) belongs to its job and stays
 * valid until the job's next step, reset or clear.
 */
#ifndef CV_FLOW_H
#define CV_FLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "cv_calls.h"
#include "cv_contract.h"
#include "cv_resp.h"

/* One Redis command: a script call (cv_calls) or a plain command. */
typedef struct cv_flow_cmd {
    cv_call_t *call; /* NULL: argv */
    int argc;
    const char *const *argv;
    /* Its reply is given to the next step (in the order of the commands
     * that want one); otherwise it is sent and forgotten. */
    bool reply;
} cv_flow_cmd_t;

#define CV_FLOW_KIND_MAP(XX)                                                                       \
    XX(IO)            /* send `cmds` in order and publish `msgs`; step again when all are back */  \
    XX(RECONCILE)     /* the live engine reconciles service `svc` (after `cmds`); step again */    \
    XX(LATER)         /* start the job again from nothing after `delay_ms` */                      \
    XX(RETRY)         /* a transient failure: again from nothing after a backoff, given up after   \
                         too many (cv_poison) */                                                   \
    XX(DONE)          /* finished: the job's message may be committed */                           \
    XX(UNKNOWN_STACK) /* its stack does not exist: dead-lettered */                                \
    XX(UNKNOWN_NODE)  /* its node is not its traversal's: dead-lettered */

typedef enum {
#define CV_FLOW_KIND_ENUM(name) CV_FLOW_##name,
    CV_FLOW_KIND_MAP(CV_FLOW_KIND_ENUM)
#undef CV_FLOW_KIND_ENUM
} cv_flow_kind_t;

/* The worker's counters an answer adds to (the driver's CV_STAT_*). */
typedef enum {
    CV_FLOW_STALE,     /* a job of a superseded or settled traversal, or a duplicate */
    CV_FLOW_FENCED,    /* a write refused by the fencing version */
    CV_FLOW_ACTED,     /* an action taken */
    CV_FLOW_RETRIES,   /* a job retried after a busy lease */
    CV_FLOW_TAKEOVERS, /* a lease taken over from an earlier incarnation */
    CV_FLOW_COUNTERS
} cv_flow_counter_t;

/* The levels of cv_log (CV_LOG_INFO ...): a line the driver logs. */
typedef struct cv_flow_log {
    int level;
    char *text;
} cv_flow_log_t;

typedef struct cv_flow {
    cv_flow_kind_t kind;
    /* Sent first, in order, whatever the kind; for IO and RECONCILE the
     * replies of those that want one go to the next step. */
    cv_flow_cmd_t *cmds;
    size_t ncmds;
    /* IO: published (CHECK, STACK jobs to converge.check; OBSERVE jobs to
     * converge.observe; the express twin when `express`). */
    cv_msg_t *msgs;
    size_t nmsgs;
    unsigned delay_ms; /* LATER */
    const char *svc;   /* RECONCILE */
    /* What the driver does before anything else: log, count, and sweep the
     * retired traversals of `sweep` (cv_purge_sweep; NULL none). */
    cv_flow_log_t *logs;
    size_t nlogs;
    unsigned counts[CV_FLOW_COUNTERS];
    const char *sweep;
} cv_flow_t;

/* What the last answer returned, for the next step. */
typedef struct cv_flow_in {
    double now; /* the clock, Unix seconds */
    /* IO, RECONCILE: the replies of the commands that wanted one, in order;
     * an entry NULL: that command failed (no connection). */
    const cv_resp_t *const *replies;
    size_t nreplies;
    /* IO: 0 when every message was acknowledged, else a CV_E* (CV_EKAFKA). */
    int published;
    /* RECONCILE: the live engine's result and, when it refused, why. */
    int rc;
    const char *why;
} cv_flow_in_t;

/* Reply i of `in`, or NULL. */
const cv_resp_t *cv_flow_reply(const cv_flow_in_t *in, size_t i);

const char *cv_flow_kind_name(cv_flow_kind_t kind);

/* ------------------------------------------------------------------------
 * Where a job builds its answers (internal to the flows): the answer and
 * the storage its commands, messages and lines are in, freed when the next
 * answer begins.
 * ------------------------------------------------------------------------ */

typedef struct cv_flow_buf {
    cv_flow_t a;
    size_t cmdcap, msgcap, logcap;
    void **owned; /* what the answer refers to: freed by the next begin */
    size_t nowned, ownedcap;
    cv_call_t **calls; /* calls made here, freed (cv_call_free) by the next begin */
    size_t ncalls, callcap;
} cv_flow_buf_t;

/* Drops the last answer and starts an empty one (kind DONE). */
void cv__flow_begin(cv_flow_buf_t *b);
/* Frees everything; the buffer may be used again. */
void cv__flow_clear(cv_flow_buf_t *b);

/* Sets the answer's kind; returns the answer. */
const cv_flow_t *cv__flow_end(cv_flow_buf_t *b, cv_flow_kind_t kind);
const cv_flow_t *cv__flow_later(cv_flow_buf_t *b, unsigned delay_ms);

/* A script call of the answer, to be built into the call returned (freed
 * with the answer); NULL when out of memory. */
cv_call_t *cv__flow_call(cv_flow_buf_t *b, bool reply);
/* A call the job owns itself (it reads the call after the reply). */
int cv__flow_call_of(cv_flow_buf_t *b, cv_call_t *call, bool reply);
/* A plain command (the strings are copied). */
int cv__flow_argv(cv_flow_buf_t *b, bool reply, int argc, const char *const *argv);
/* A message to publish (its `nodes` are copied). */
int cv__flow_msg(cv_flow_buf_t *b, const cv_msg_t *m);
/* The CHECK jobs of n (1 to CV_MSG_NODES_MAX) nodes of one traversal, in
 * one message (cv_msg_t.nodes). CV_EINVAL for a name that is no node's. */
int cv__flow_nodes(cv_flow_buf_t *b, const char *stack, uint64_t traversal,
                   const char *const *nodes, size_t n, bool express);
/* A line to log (printf format). */
void cv__flow_log(cv_flow_buf_t *b, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cv__flow_count(cv_flow_buf_t *b, cv_flow_counter_t c);
/* A copy of s, freed with the answer. */
const char *cv__flow_keep(cv_flow_buf_t *b, const char *s);
/* Frees p (malloc'd) with the answer; returns p, or NULL (p freed) when
 * out of memory. */
void *cv__flow_own(cv_flow_buf_t *b, void *p);

/* The levels of cv_log.h, which the flows do not include. */
enum { CV_FLOW_INFO = 1, CV_FLOW_WARN = 2, CV_FLOW_ERROR = 3 };

#endif
