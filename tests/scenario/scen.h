/*
 * scen — the deterministic scenario harness (modelled on Heat's convergence
 * simulator, heat/tests/convergence/framework).
 *
 * The workers' own step machines (STACK, CHECK and OBSERVE jobs,
 * engine/convergence) and the real Lua scripts on one real Redis; Kafka is
 * replaced by an in-memory bus whose delivery order, duplicates and losses
 * are drawn from a seeded PRNG. A job is a sequence of steps, each one
 * answer's commands or one of its messages; jobs in flight interleave
 * step by step in an order the PRNG chooses, and a job may be killed between
 * any two steps (its message stays in the bus, its lease expires later). The
 * same seed gives the same schedule: a violation prints a replay command.
 *
 * This header is internal to tests/scenario: the world, the bus, jobs, and
 * the functions each file of the harness provides.
 */
#ifndef SCEN_H
#define SCEN_H

#include "cv_contract.h"

#include <hiredis/hiredis.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------
 * PRNG (splitmix64): the only source of choices in a schedule.
 * ------------------------------------------------------------------------ */

typedef struct scen_rng {
    uint64_t s;
} scen_rng_t;

void scen_rng_seed(scen_rng_t *r, uint64_t seed);
uint64_t scen_rng_next(scen_rng_t *r);
/* Uniform in [0, n); n > 0. */
size_t scen_rng_below(scen_rng_t *r, size_t n);
/* True with probability `permille` / 1000. */
bool scen_rng_chance(scen_rng_t *r, unsigned permille);

/* ------------------------------------------------------------------------
 * Redis: one synchronous connection, scripts called by SHA.
 * ------------------------------------------------------------------------ */

int scen_redis_open(const char *socket_path, int port, char *errstr, size_t errstr_size);
void scen_redis_close(void);
redisContext *scen_redis(void);
/* Round trips made so far (for the rate summary). */
uint64_t scen_redis_round_trips(void);
void scen_count_round_trip(void);
/* The connection failed: the run ends (exit 3). */
void scen_redis_lost(const char *what) __attribute__((noreturn));
/* One command; the run ends when the connection is lost. */
redisReply *scen_cmd(int argc, const char **argv);
/* Several commands in one round trip; replies[i] for argv[i]. */
void scen_pipeline(int n, const int *argc, const char ***argv, redisReply **replies);

/* ------------------------------------------------------------------------
 * Scenarios: what a schedule submits, what the operator does, what is
 * expected at the end (scen_scenarios.c).
 * ------------------------------------------------------------------------ */

typedef enum {
    SCEN_OP_UPDATE, /* stack_begin UPDATE with `tpl` */
    SCEN_OP_DELETE, /* stack_begin DELETE */
} scen_operator_t;

typedef struct scen_def {
    const char *name;
    const char *summary;
    const char *create_tpl; /* JSON text */
    bool rollback;          /* stack created with rollback on */
    int nops;               /* operator actions after the create, in order */
    struct {
        scen_operator_t kind;
        const char *tpl;    /* UPDATE: JSON text */
        int max_delay;      /* begins after 0..max_delay deliveries since the previous */
        bool after_settled; /* waits for the previous traversal to settle */
    } ops[2];
    const char *expect;   /* terminal status */
    const char *replaced; /* a resource the last update must replace (after settled) */
    const char *kept;     /* resources it must keep (same version), comma-separated */
} scen_def_t;

extern const scen_def_t scen_defs[];
extern const size_t scen_ndefs;
extern const char scen_empty_tpl[];
const scen_def_t *scen_find(const char *name);

/* ------------------------------------------------------------------------
 * The world of one schedule: the bus, jobs in flight, faults, what was seen.
 * ------------------------------------------------------------------------ */

#define SCEN_MAX_TRAV 32

typedef struct scen_msg {
    char *bytes; /* cv_msg_encode'd */
    size_t len;
    bool observe;  /* topic converge.observe (else converge.check) */
    bool inflight; /* being handled by a job: not deliverable */
    uint64_t id;
} scen_msg_t;

typedef struct scen_job scen_job_t;
typedef struct cv_template cv_template_t;

typedef struct scen_fault {
    unsigned dup_permille;    /* a delivery leaves a copy behind */
    unsigned loss_permille;   /* a picked message is lost */
    unsigned kill_permille;   /* a job step is a crash instead */
    unsigned expire_permille; /* a dead job's lease runs out, per step */
    unsigned pause_permille;  /* a live job's lease runs out, per step: paused past it */
} scen_fault_t;

typedef enum {
    SCEN_SABOTAGE_NONE,
    SCEN_SABOTAGE_SYNC_POINT, /* drop one sync-point satisfaction */
    SCEN_SABOTAGE_RECORD,     /* corrupt one record's status at the end */
    SCEN_SABOTAGE_LEDGER,     /* count one create twice at the end */
    SCEN_SABOTAGE_ORDER,      /* an event out of dependency order at the end */
} scen_sabotage_t;

typedef struct scen_seen {
    uint64_t trav_began[SCEN_MAX_TRAV];     /* step at which traversal t began */
    cv_template_t *trav_tpl[SCEN_MAX_TRAV]; /* its definition (NULL: delete) */
    json_t *trav_nodes[SCEN_MAX_TRAV];      /* its graph's nodes, once expanded */
    uint64_t ntrav;
    char violation[512]; /* the first violation seen during the run */
} scen_seen_t;

/* The engine processes jobs run in, by worker id (w0, w1, w2). */
enum { SCEN_WORKERS = 3 };

typedef struct scen_world {
    const scen_def_t *def;
    uint64_t seed;
    scen_rng_t rng;
    scen_fault_t fault;
    char stack[CV_ID_MAX];
    char name[64];
    const char *expect;     /* terminal status */
    const char *expect_tpl; /* the definition stored at the end (not for delete) */
    /* the bus */
    scen_msg_t *msgs;
    size_t nmsgs, cap;
    uint64_t next_msg_id;
    /* jobs in flight */
    scen_job_t **jobs;
    size_t njobs, jobcap;
    /* The incarnation of each worker id: a killed job's worker restarts at
     * once with its id and the next incarnation, whose jobs take over the
     * leases of the earlier ones (lib.lua lease_holder_gone). The jobs of
     * the earlier one live on in the harness: as if the premise of unique
     * ids were broken, fencing must keep their writes out. */
    unsigned incarnation[SCEN_WORKERS];
    /* leases of killed jobs: key, token; expired later */
    char (*dead)[2][512];
    size_t ndead, deadcap;
    /* dependency edges of every definition: child, parent */
    char (*edges)[2][CV_NAME_MAX];
    size_t nedges;
    json_t *uuids_before; /* name -> uuid when the last update began after settling */
    /* counters */
    uint64_t step, deliveries, kills, losses, dups, reaps, expiries, pauses, takeovers,
        jobs_started;
    bool trace;
    scen_seen_t seen;
    scen_sabotage_t sabotage;
    bool sabotaged;
} scen_world_t;

void scen_trace(scen_world_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A violation seen while the schedule runs (the first one is kept). */
void scen_violation(scen_world_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The bus (scen_bus.c). */
void scen_bus_publish(scen_world_t *w, const cv_msg_t *m, bool observe);
size_t scen_bus_find(const scen_world_t *w, uint64_t id);
void scen_bus_remove(scen_world_t *w, uint64_t id);
void scen_bus_copy(scen_world_t *w, uint64_t id);
size_t scen_bus_deliverable(const scen_world_t *w);
size_t scen_bus_nth_deliverable(const scen_world_t *w, size_t k);
const char *scen_msg_describe(const scen_msg_t *sm, char *buf, size_t size);
void scen_bus_clear(scen_world_t *w);

/* Jobs: the workers' step machines (scen_jobs.c), driven by scen_flow.c. */
typedef enum {
    SCEN_STEP_MORE,  /* more steps to go */
    SCEN_STEP_DONE,  /* finished: the message is committed */
    SCEN_STEP_RETRY, /* handed back: the message is delivered again later */
} scen_step_t;

scen_job_t *scen_job_start(scen_world_t *w, uint64_t msg_id, const cv_msg_t *m);
scen_step_t scen_job_step(scen_world_t *w, scen_job_t *j);
uint64_t scen_job_msg(const scen_job_t *j);
/* The lease key a job holds right now ("" none), and its token. */
const char *scen_job_lease(const scen_job_t *j, const char **token);
/* The worker a job runs in: its index in scen_world_t.incarnation. */
unsigned scen_job_worker(const scen_job_t *j);
void scen_job_free(scen_job_t *j);

/* stack_begin of `kind` by the operator and its STACK job on the bus.
 * Returns the traversal. */
uint64_t scen_begin(scen_world_t *w, int kind, const char *tpl, const char *rollback);
/* Notes that traversal `trav` of `kind` began now (scenario_runner.c). */
void scen_note_traversal(scen_world_t *w, uint64_t trav, int kind);

/* The reaper, stall threshold 0 (scen_reaper.c). Returns 1 when it
 * re-queued or finished something; *settled when the stack is not in
 * progress. A stack gone or DELETE_COMPLETE has its name freed. */
int scen_reap(scen_world_t *w, bool *settled);
/* stack_unname.lua: frees the stack's name if it still maps to the stack
 * (scen_jobs.c). */
void scen_unname(scen_world_t *w);

/* Runs one schedule of `def` for `seed` into w (free it with
 * scen_world_free), then checks the invariants: scen_check's answer. */
int scen_run_schedule(const scen_def_t *def, uint64_t seed, bool trace, scen_sabotage_t sabotage,
                      scen_world_t *w, char *errstr, size_t errstr_size);
void scen_world_free(scen_world_t *w);

/* The invariants at the end of a schedule (scen_invariants.c): 0 when they
 * hold, -1 with the first violation in errstr. */
int scen_check(scen_world_t *w, char *errstr, size_t errstr_size);

#endif
