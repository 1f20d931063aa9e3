/*
 * One schedule (scen_schedule.c): the driver loop of a scenario for one
 * seed. Each step picks, with the world's PRNG, a deliverable message
 * (delivered, lost, or delivered leaving a copy behind) or a job in flight
 * (its next step, its death, or — in schedules with pauses — its lease
 * running out under it); the operator's update or delete begins after a
 * drawn number of deliveries or once the stack settled. When nothing can
 * happen, dead jobs' leases run out and the reaper (stall threshold 0)
 * re-queues lost work; if it finds nothing while the stack is in progress
 * the schedule is stuck; past MAX_STEPS it is a livelock. The invariants
 * are checked at the end (scen_invariants.c).
 */
#include "scen.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 20000 /* a schedule longer than this is a livelock */
#define IDLE_REAPS 3    /* reaper passes finding nothing before "stuck" */

/* ---- what every definition of a scenario depends on ---- */

static cv_template_t *parse_tpl(const char *text)
{
    json_t *root = json_loads(text, 0, NULL);
    cv_template_t *tpl = NULL;
    char err[512];
    if (!root || cv_template_from_json(root, "template", NULL, &tpl, err, sizeof(err)) != 0) {
        fprintf(stderr, "scenario_runner: a scenario template does not parse: %s\n",
                root ? err : "not JSON");
        exit(2);
    }
    json_decref(root);
    return tpl;
}

static void add_edges(scen_world_t *w, const char *text)
{
    if (!text)
        return;
    cv_template_t *tpl = parse_tpl(text);
    for (size_t i = 0; i < tpl->nresources; i++)
        for (size_t d = 0; d < tpl->resources[i].ndepends; d++) {
            bool known = false;
            for (size_t e = 0; e < w->nedges && !known; e++)
                known = strcmp(w->edges[e][0], tpl->resources[i].name) == 0 &&
                        strcmp(w->edges[e][1], tpl->resources[i].depends[d]) == 0;
            if (known)
                continue;
            w->edges = realloc(w->edges, (w->nedges + 1) * sizeof(*w->edges));
            snprintf(w->edges[w->nedges][0], CV_NAME_MAX, "%s", tpl->resources[i].name);
            snprintf(w->edges[w->nedges][1], CV_NAME_MAX, "%s", tpl->resources[i].depends[d]);
            w->nedges++;
        }
    cv_template_free(tpl);
}

/* ---- traversals ---- */

void scen_note_traversal(scen_world_t *w, uint64_t trav, int kind)
{
    if (trav >= SCEN_MAX_TRAV) {
        scen_violation(w, "more than %d traversals", SCEN_MAX_TRAV - 1);
        return;
    }
    w->seen.trav_began[trav] = w->step + 1;
    if (trav > w->seen.ntrav)
        w->seen.ntrav = trav;
    if (kind == CV_TRAV_DELETE)
        return;
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_DEF, w->stack, 0, NULL);
    const char *argv[] = {"HGET", key, "template"};
    redisReply *r = scen_cmd(3, argv);
    if (r->type == REDIS_REPLY_STRING) {
        cv_template_free(w->seen.trav_tpl[trav]);
        w->seen.trav_tpl[trav] = parse_tpl(r->str);
    }
    freeReplyObject(r);
}

static const char *stack_status(scen_world_t *w, char *buf, size_t size)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACK, w->stack, 0, NULL);
    const char *argv[] = {"HGET", key, "status"};
    redisReply *r = scen_cmd(3, argv);
    snprintf(buf, size, "%s", r->type == REDIS_REPLY_STRING ? r->str : "");
    freeReplyObject(r);
    return buf;
}

/* The versions of every record, before an update that must replace one. */
static json_t *record_uuids(scen_world_t *w)
{
    char pattern[CV_KEY_MAX], prefix[CV_KEY_MAX];
    cv_key(pattern, sizeof(pattern), CV_KEY_RES, w->stack, 0, "*");
    size_t plen = cv_key_prefix(prefix, sizeof(prefix), CV_KEY_RES, w->stack, 0);
    const char *keys[] = {"KEYS", pattern};
    redisReply *r = scen_cmd(2, keys);
    json_t *uuids = json_object();
    for (size_t i = 0; i < r->elements; i++) {
        const char *argv[] = {"HGET", r->element[i]->str, "uuid"};
        redisReply *u = scen_cmd(3, argv);
        if (u->type == REDIS_REPLY_STRING)
            json_object_set_new(uuids, r->element[i]->str + plen, json_string(u->str));
        freeReplyObject(u);
    }
    freeReplyObject(r);
    return uuids;
}

/* The operator's next action: an update or a delete (the CLI's stack_begin
 * and STACK job). */
static void operate(scen_world_t *w, int *next_op, uint64_t *op_at)
{
    const scen_def_t *d = w->def;
    int i = (*next_op)++;
    char status[48];
    stack_status(w, status, sizeof(status));
    if (d->ops[i].kind == SCEN_OP_UPDATE) {
        if (d->rollback)
            /* Rollback returns to the last complete definition: the create's,
             * when it completed before this update, else none at all. */
            w->expect_tpl = strstr(status, "_COMPLETE") ? d->create_tpl : scen_empty_tpl;
        else
            w->expect_tpl = d->ops[i].tpl;
        if ((d->replaced || d->kept) && d->ops[i].after_settled) {
            json_decref(w->uuids_before);
            w->uuids_before = record_uuids(w);
        }
        scen_trace(w, "operator: update (stack %s)", status);
        scen_begin(w, CV_TRAV_UPDATE, d->ops[i].tpl, NULL);
    } else {
        scen_trace(w, "operator: delete (stack %s)", status);
        scen_begin(w, CV_TRAV_DELETE, NULL, NULL);
    }
    if (*next_op < d->nops)
        *op_at = w->deliveries + scen_rng_below(&w->rng, (size_t)d->ops[*next_op].max_delay + 1);
}

/* ---- one schedule ---- */

void scen_world_free(scen_world_t *w)
{
    for (size_t i = 0; i < w->njobs; i++)
        scen_job_free(w->jobs[i]);
    free(w->jobs);
    scen_bus_clear(w);
    free(w->msgs);
    free(w->dead);
    free(w->edges);
    json_decref(w->uuids_before);
    for (size_t t = 0; t < SCEN_MAX_TRAV; t++) {
        cv_template_free(w->seen.trav_tpl[t]);
        json_decref(w->seen.trav_nodes[t]);
    }
}

static void expire_lease(scen_world_t *w, size_t i)
{
    /* PX expiry of a dead holder's lease: gone only if still its token. */
    const char *get[] = {"GET", w->dead[i][0]};
    redisReply *r = scen_cmd(2, get);
    if (r->type == REDIS_REPLY_STRING && strcmp(r->str, w->dead[i][1]) == 0) {
        const char *del[] = {"DEL", w->dead[i][0]};
        freeReplyObject(scen_cmd(2, del));
        scen_trace(w, "lease %s of dead job %s expires", w->dead[i][0], w->dead[i][1]);
    }
    freeReplyObject(r);
    memcpy(w->dead[i], w->dead[--w->ndead], sizeof(w->dead[i]));
    w->expiries++;
}

static void remove_job(scen_world_t *w, size_t k)
{
    scen_job_free(w->jobs[k]);
    w->jobs[k] = w->jobs[--w->njobs];
}

/* A worker paused past its lease (GC, a stopped VM): the lease runs out
 * while the job lives on; its later writes must be fenced. */
static void pause_one(scen_world_t *w)
{
    size_t start = scen_rng_below(&w->rng, w->njobs);
    for (size_t n = 0; n < w->njobs; n++) {
        const char *token, *lease = scen_job_lease(w->jobs[(start + n) % w->njobs], &token);
        if (!lease[0])
            continue;
        const char *get[] = {"GET", lease};
        redisReply *r = scen_cmd(2, get);
        if (r->type == REDIS_REPLY_STRING && strcmp(r->str, token) == 0) {
            const char *del[] = {"DEL", lease};
            freeReplyObject(scen_cmd(2, del));
            scen_trace(w, "job %s is paused past its lease %s", token, lease);
            w->pauses++;
        }
        freeReplyObject(r);
        return;
    }
}

static void kill_job(scen_world_t *w, size_t k)
{
    scen_job_t *j = w->jobs[k];
    size_t i = scen_bus_find(w, scen_job_msg(j));
    if (i != (size_t)-1)
        w->msgs[i].inflight = false; /* redelivered: its offset was never committed */
    const char *token, *lease = scen_job_lease(j, &token);
    if (lease[0]) {
        if (w->ndead == w->deadcap) {
            w->deadcap = w->deadcap ? 2 * w->deadcap : 8;
            w->dead = realloc(w->dead, w->deadcap * sizeof(*w->dead));
        }
        snprintf(w->dead[w->ndead][0], 512, "%s", lease);
        snprintf(w->dead[w->ndead][1], 512, "%s", token);
        w->ndead++;
    }
    unsigned worker = scen_job_worker(j);
    scen_trace(w, "kill the job of message %llu%s; w%u restarts as incarnation %u",
               (unsigned long long)scen_job_msg(j), lease[0] ? " (holding its lease)" : "", worker,
               w->incarnation[worker] + 1);
    w->incarnation[worker]++;
    w->kills++;
    remove_job(w, k);
}

static void deliver(scen_world_t *w, size_t i)
{
    char d[CV_NAME_MAX + 64];
    scen_msg_describe(&w->msgs[i], d, sizeof(d));
    if (scen_rng_chance(&w->rng, w->fault.loss_permille)) {
        scen_trace(w, "lose %s", d);
        w->losses++;
        scen_bus_remove(w, w->msgs[i].id);
        return;
    }
    uint64_t id = w->msgs[i].id;
    cv_msg_t m;
    char err[128];
    if (cv_msg_decode(w->msgs[i].bytes, w->msgs[i].len, &m, err, sizeof(err)) != 0) {
        scen_violation(w, "message %llu does not decode: %s", (unsigned long long)id, err);
        scen_bus_remove(w, id);
        return;
    }
    if (scen_rng_chance(&w->rng, w->fault.dup_permille)) {
        scen_trace(w, "duplicate %s", d);
        w->dups++;
        scen_bus_copy(w, id);
        i = scen_bus_find(w, id);
    }
    w->msgs[i].inflight = true;
    scen_trace(w, "deliver %s (message %llu)", d, (unsigned long long)id);
    w->deliveries++;
    if (w->njobs == w->jobcap) {
        w->jobcap = w->jobcap ? 2 * w->jobcap : 16;
        w->jobs = realloc(w->jobs, w->jobcap * sizeof(*w->jobs));
    }
    w->jobs[w->njobs++] = scen_job_start(w, id, &m);
}

static void advance(scen_world_t *w, size_t k)
{
    if (scen_rng_chance(&w->rng, w->fault.kill_permille)) {
        kill_job(w, k);
        return;
    }
    scen_job_t *j = w->jobs[k];
    scen_step_t r = scen_job_step(w, j);
    if (r == SCEN_STEP_MORE)
        return;
    uint64_t id = scen_job_msg(j);
    if (r == SCEN_STEP_DONE) {
        scen_bus_remove(w, id);
    } else {
        size_t i = scen_bus_find(w, id);
        if (i != (size_t)-1)
            w->msgs[i].inflight = false;
        scen_trace(w, "message %llu handed back", (unsigned long long)id);
        /* Time passes while it waits (for a lease, or for a look again). */
        if (w->ndead > 0 && scen_rng_chance(&w->rng, 500))
            expire_lease(w, scen_rng_below(&w->rng, w->ndead));
    }
    remove_job(w, k);
}

/* Nothing deliverable, no job in flight: leases run out, the operator acts,
 * or the reaper looks. Returns false when the schedule is over. */
static bool idle(scen_world_t *w, int *next_op, uint64_t *op_at, int *idle_reaps)
{
    while (w->ndead > 0)
        expire_lease(w, 0);
    const scen_def_t *d = w->def;
    char status[48];
    if (*next_op < d->nops && (!d->ops[*next_op].after_settled ||
                               !strstr(stack_status(w, status, sizeof(status)), "_IN_PROGRESS"))) {
        operate(w, next_op, op_at);
        return true;
    }
    bool settled;
    int did = scen_reap(w, &settled);
    if (settled)
        return false;
    if (did) {
        *idle_reaps = 0;
        return true;
    }
    if (++*idle_reaps >= IDLE_REAPS) {
        scen_violation(w, "stuck: the stack is %s and the reaper finds nothing to re-queue",
                       stack_status(w, status, sizeof(status)));
        return false;
    }
    return true;
}

static void draw_faults(scen_world_t *w)
{
    static const unsigned dup[] = {0, 100, 200}, loss[] = {0, 50, 100}, kill[] = {0, 30, 80};
    w->fault.dup_permille = dup[scen_rng_below(&w->rng, 3)];
    w->fault.loss_permille = loss[scen_rng_below(&w->rng, 3)];
    w->fault.kill_permille = kill[scen_rng_below(&w->rng, 3)];
    w->fault.expire_permille = 150;
    w->fault.pause_permille = scen_rng_chance(&w->rng, 250) ? 20 : 0;
}

static void sabotage_at_end(scen_world_t *w)
{
    char key[CV_KEY_MAX];
    if (w->sabotage == SCEN_SABOTAGE_RECORD) {
        cv_key(key, sizeof(key), CV_KEY_RES, w->stack, 0, "c");
        const char *argv[] = {"HSET", key, "status", "CREATE_FAILED"};
        freeReplyObject(scen_cmd(4, argv));
    } else if (w->sabotage == SCEN_SABOTAGE_LEDGER) {
        char res[CV_KEY_MAX], field[96];
        cv_key(res, sizeof(res), CV_KEY_RES, w->stack, 0, "a");
        const char *get[] = {"HGET", res, "uuid"};
        redisReply *u = scen_cmd(3, get);
        snprintf(field, sizeof(field), "create:%s", u->type == REDIS_REPLY_STRING ? u->str : "");
        freeReplyObject(u);
        cv_key(key, sizeof(key), CV_KEY_LEDGER, w->stack, 0, NULL);
        const char *argv[] = {"HINCRBY", key, field, "1"};
        freeReplyObject(scen_cmd(4, argv));
    }
}

/* An event out of dependency order before anything ran: c "started" in the
 * create traversal before its parent a completed. */
static void sabotage_at_start(scen_world_t *w)
{
    if (w->sabotage != SCEN_SABOTAGE_ORDER)
        return;
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_EVENTS, w->stack, 0, NULL);
    const char *argv[] = {"XADD",   key,      "*",           "resource",  "c", "action",
                          "CREATE", "status", "IN_PROGRESS", "traversal", "1"};
    freeReplyObject(scen_cmd(11, argv));
}

int scen_run_schedule(const scen_def_t *def, uint64_t seed, bool trace, scen_sabotage_t sabotage,
                      scen_world_t *w, char *errstr, size_t errstr_size)
{
    memset(w, 0, sizeof(*w));
    w->def = def;
    w->seed = seed;
    w->trace = trace;
    w->sabotage = sabotage;
    w->expect = def->expect;
    w->expect_tpl = def->nops > 0 && def->ops[def->nops - 1].tpl ? def->ops[def->nops - 1].tpl
                                                                 : def->create_tpl;
    scen_rng_seed(&w->rng, seed ^ cv_hash_str(def->name));
    draw_faults(w);
    snprintf(w->stack, sizeof(w->stack), "%016llx", (unsigned long long)scen_rng_next(&w->rng));
    snprintf(w->name, sizeof(w->name), "scen-%s-%llu", def->name, (unsigned long long)seed);
    add_edges(w, def->create_tpl);
    for (int i = 0; i < def->nops; i++)
        add_edges(w, def->ops[i].tpl);
    scen_trace(w, "schedule %s seed %llu: stack %s, faults dup %u‰ loss %u‰ kill %u‰ pause %u‰",
               def->name, (unsigned long long)seed, w->stack, w->fault.dup_permille,
               w->fault.loss_permille, w->fault.kill_permille, w->fault.pause_permille);

    /* A clean database (each process has its own), and the name reserved
     * as convergectl submit does. */
    char names[CV_KEY_MAX];
    cv_key(names, sizeof(names), CV_KEY_STACKS, NULL, 0, NULL);
    const char *flush[] = {"FLUSHDB"}, *reserve[] = {"HSETNX", names, w->name, w->stack};
    const char **argv[] = {flush, reserve};
    int argc[] = {1, 4};
    redisReply *rep[2];
    scen_pipeline(2, argc, argv, rep);
    freeReplyObject(rep[0]);
    freeReplyObject(rep[1]);
    sabotage_at_start(w);
    scen_begin(w, CV_TRAV_CREATE, def->create_tpl, def->rollback ? "1" : "0");

    int next_op = 0, idle_reaps = 0;
    uint64_t op_at = def->nops > 0 ? scen_rng_below(&w->rng, (size_t)def->ops[0].max_delay + 1) : 0;
    for (;;) {
        if (++w->step > MAX_STEPS) {
            scen_violation(w, "livelock: no end after %d steps (%llu deliveries)", MAX_STEPS,
                           (unsigned long long)w->deliveries);
            break;
        }
        if (next_op < def->nops && !def->ops[next_op].after_settled && w->deliveries >= op_at) {
            operate(w, &next_op, &op_at);
            continue;
        }
        if (w->ndead > 0 && scen_rng_chance(&w->rng, w->fault.expire_permille))
            expire_lease(w, scen_rng_below(&w->rng, w->ndead));
        if (w->njobs > 0 && scen_rng_chance(&w->rng, w->fault.pause_permille))
            pause_one(w);
        size_t nd = scen_bus_deliverable(w), nj = w->njobs;
        if (nd + nj == 0) {
            if (!idle(w, &next_op, &op_at, &idle_reaps))
                break;
            continue;
        }
        size_t k = scen_rng_below(&w->rng, nd + nj);
        if (k < nd)
            deliver(w, scen_bus_nth_deliverable(w, k));
        else
            advance(w, k - nd);
    }
    sabotage_at_end(w);
    int rc = scen_check(w, errstr, errstr_size);
    scen_trace(w, "end: %s", rc ? errstr : "every invariant holds");
    return rc;
}
