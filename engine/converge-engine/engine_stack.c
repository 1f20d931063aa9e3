/*
 * STACK jobs, run: each is a step machine (cv_stackjob.h, in
 * engine/convergence) and this file its driver on the engine's loop
 * (cv_flowjob). What is the engine's own: the names of its expansions'
 * drafts, and the gate that lets only so many expansions hold their
 * template and graph at once.
 */
#include "engine.h"

#include "cv_convergence.h"
#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>

/* Expansions running at once in one engine: each holds its template and
 * graph, and a 1,000-member group begins 1,000 of them together. */
#define EXPANSIONS_MAX 2

/* Per lane: an express stack's expansion never waits behind a big one's. */
static cv_gate_t gates[2] = {CV_GATE_INIT(EXPANSIONS_MAX), CV_GATE_INIT(EXPANSIONS_MAX)};

static const cv_flow_t *stack_start(void *machine)
{
    return cv_stackjob_start(machine);
}

static const cv_flow_t *stack_step(void *machine, const cv_flow_in_t *in)
{
    return cv_stackjob_step(machine, in);
}

static void stack_reset(void *machine)
{
    cv_stackjob_reset(machine);
}

/* A place before the job starts, kept until it ends. */
static cv_gate_t *stack_gate(cv_flowjob_t *fj, const cv_flow_in_t *in)
{
    return in ? NULL : &gates[fj->run.msg.express ? 1 : 0];
}

static const cv_flowjob_ops_t stack_ops = {
    .start = stack_start, .step = stack_step, .reset = stack_reset, .gate = stack_gate};

void cv__engine_stack_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    static unsigned long long seq;
    cv_flowjob_t *fj = cv_flowjob_new(w, job, m, &stack_ops, sizeof(cv_stackjob_t));
    if (!fj) {
        cv_worker_hand_back(w, job); /* redelivered */
        return;
    }
    /* "<worker>:<n>": an expansion's drafts are its own, on any worker. */
    char expansion[CV_ID_MAX + 24];
    snprintf(expansion, sizeof(expansion), "%s:%llu", w->id, ++seq);
    cv_stackjob_conf_t conf = {.worker = w->id, .expansion = expansion, .limits = &w->limits};
    cv_stackjob_init(fj->machine, m, &conf);
    cv_info("expanding stack %s traversal %llu (%s)", m->stack, (unsigned long long)m->traversal,
            cv_trav_kind_name(m->kind));
    cv_flowjob_start(fj);
}
