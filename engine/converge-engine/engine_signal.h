/*
 * engine_signal — what the SIGNAL job's two files share: the job, and the
 * steps between the types' signal operations and the fenced write
 * (engine_signal_pass.c: signals passed on to another resource and the
 * update traversal a signal asks for).
 */
#ifndef CV_ENGINE_SIGNAL_H
#define CV_ENGINE_SIGNAL_H

#include "cv_convergence.h"
#include "cv_io.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdbool.h>

typedef struct signal_job {
    cv_jobrun_t run; /* first: the job, its lifecycle and its retries */
    char token[160];
    cv_lease_keeper_t *keeper; /* renews the lease while it is held */
    cv_record_t rec;
    cv_rstate_t st;   /* the version the signals were applied to */
    json_t *applied;  /* {"id", "state", "status", "reason"} per signal */
    bool changed;     /* some signal was applied: the record's data changed */
    int publishing;   /* OBSERVE jobs not yet acknowledged */
    json_t *forwards; /* {"id", "ref", "details"}: signals to pass on */
    size_t forwarded; /* how many of them are in Redis and published */
    bool converge;    /* a signal asked for an update traversal */
} signal_job_t;

/* Takes what the type's operation left in st->data for signal `id`
 * ("forward", "converge") out of it into the job. */
void cv__signal_pass_take(signal_job_t *s, cv_rstate_t *st, const char *id);

/* Passes the signals on, begins the traversal asked for, then finishes
 * (cv__signal_finish); a step that fails retries the job. */
void cv__signal_pass_on(signal_job_t *s);

/* Drops what an attempt collected. */
void cv__signal_pass_reset(signal_job_t *s);

/* The fenced write of the job's applied signals (signal_finish.lua). */
void cv__signal_finish(signal_job_t *s);

#endif
