/*
 * cv_stackjob — a STACK job as a step machine: expand a traversal (cv_flow.h
 * says how a step machine is driven).
 *
 * The stored template (stack_definition.lua) is checked against the
 * worker's limits, parsed with the stack's environment and turned into the
 * traversal graph (cv_expand.h); each resource's definition and each
 * node's graph entry go to draft keys of this expansion, which
 * stack_expanded.lua puts in place under the traversal id unless another
 * expansion of the same traversal did first; then the roots get their
 * CHECK jobs, up to CV_MSG_NODES_MAX to a message and a bounded number of
 * messages at a time. A redelivered or duplicated job thus never changes a
 * graph jobs already run on: it only publishes the roots of the graph that
 * stands again, which the CHECK jobs tolerate. An empty graph, or one that
 * stands with no roots left, is ended at once (cv_progress); a definition
 * that does not expand fails the traversal with the parser's reason.
 * The engine runs these answers on Redis and Kafka, the scenario harness
 * over its seeded bus.
 */
#ifndef CV_STACKJOB_H
#define CV_STACKJOB_H

#include <jansson.h>

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_flow.h"
#include "cv_progress.h"
#include "cv_hot.h"

typedef struct cv_stackjob_conf {
    const char *worker;        /* the worker's id */
    const char *expansion;     /* names this expansion's drafts: "<worker>:<n>" */
    const cv_limits_t *limits; /* the worker's input limits, the authority */
} cv_stackjob_conf_t;

/* What the job waits for. */
typedef enum {
    CV_STACKJOB_DEFINITION, /* stack_definition's reply */
    CV_STACKJOB_FAILED,     /* stack_finish's reply: the traversal failed with the reason */
    CV_STACKJOB_EXPANDED,   /* stack_expanded's reply, the drafts written before */
    CV_STACKJOB_ROOTS,      /* a batch of the roots' jobs delivered */
    CV_STACKJOB_PROGRESS,   /* a traversal with nothing to walk ended (cv_progress) */
} cv_stackjob_state_t;

enum { CV_STACKJOB_RDEF, CV_STACKJOB_GRAPH };

typedef struct cv_stackjob {
    cv_stackjob_state_t state;
    cv_msg_t msg;
    char worker[CV_ID_MAX];
    const cv_limits_t *limits;
    char draft[2][CV_KEY_MAX]; /* this expansion's rdef and graph hashes */
    cv_template_t *tpl;
    json_t *env;   /* the stack's environment (cv_env.h) */
    bool nested;   /* a nested stack: its parameters are its parent's properties */
    json_t *tree;  /* the stored template: the types as declared */
    json_t *index; /* resources with records: name -> dependencies (JSON text) */
    cv_graph_t *graph;
    json_t *roots; /* the root nodes whose jobs are to be published */
    size_t next_root;
    /* The roots' lane: the STACK job's, unless the traversal is too big
     * for the express lane (CV_EXPRESS_NODES_MAX); all below them follow. */
    bool express;
    cv_progress_t progress;
    cv_flow_buf_t buf; /* the answer */
} cv_stackjob_t;

/* A job of STACK message m, nothing loaded. */
void cv_stackjob_init(cv_stackjob_t *x, const cv_msg_t *m, const cv_stackjob_conf_t *conf);

/* stack_definition, from nothing loaded. */
const cv_flow_t *cv_stackjob_start(cv_stackjob_t *x);

/* The next answer, given what the last one returned. */
const cv_flow_t *cv_stackjob_step(cv_stackjob_t *x, const cv_flow_in_t *in);

/* Drops what an attempt loaded: the job is as cv_stackjob_init left it. */
void cv_stackjob_reset(cv_stackjob_t *x);

const cv_msg_t *cv_stackjob_msg(const cv_stackjob_t *x);
cv_stackjob_state_t cv_stackjob_state(const cv_stackjob_t *x);

#endif
