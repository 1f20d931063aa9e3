#include "cv_reaper.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_flowrun.h"
#include "cv_purge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACKS_PER_SCAN 100   /* stack ids read per HSCAN of <prefix>stacks */
#define ENTRIES_PER_CALL 256  /* graph entries one stack_reap_nodes.lua call looks at */
#define JOBS_PER_STACK 1000   /* jobs re-queued for one stack in one pass, at most */
#define NAMES_LOGGED 5        /* nodes named in the log line of a stack */
#define PURGES_PER_PASS "100" /* deleted stacks purged in one pass, at most */

struct cv_reaper {
    cv_worker_t *w;
    uv_timer_t timer;
    char lease_key[CV_KEY_MAX];
    char lease_ms[16], stall_ms[16];
    char cursor[24];      /* cursor of the scan under way */
    bool active;          /* scanning <prefix>active (after <prefix>stacks) */
    double named_scanned; /* when <prefix>stacks was last scanned */
    int pending;          /* stacks of the current batch still being reaped */
    bool busy;            /* a pass is under way */
    bool stopped, timer_closed;
};

/* The reaping of one stack: script calls over its graph, batch by batch. */
typedef struct stack_pass {
    cv_reaper_t *r;
    bool active; /* found in <prefix>active: forgotten there once settled */
    char id[CV_ID_MAX];
    char name[CV_NAME_MAX]; /* found in <prefix>stacks: freed once deleted */
    char traversal[24];
    char cursor[24];
    char stalled[24];
    unsigned checks, observes, pending;
    char names[NAMES_LOGGED * 64];
} stack_pass_t;

static void pass_next_batch(cv_reaper_t *r);
static void nodes_call(stack_pass_t *p);

static void maybe_free(cv_reaper_t *r)
{
    if (r->stopped && r->timer_closed && !r->busy)
        free(r);
}

static void pass_end(cv_reaper_t *r)
{
    r->busy = false;
    maybe_free(r);
}

/* ---- one stack ---- */

static void forget(cv_worker_t *w, const char *id)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_ACTIVE, NULL, 0, NULL);
    const char *argv[] = {"SREM", key, id};
    cv_redis_argv(w->redis, 3, argv, NULL, NULL, NULL);
}

static void stack_done(stack_pass_t *p)
{
    cv_reaper_t *r = p->r;
    if (p->checks + p->observes > 0) {
        cv_info("reaper: stack %s traversal %s made no progress for %s s; re-queued %u CHECK and "
                "%u OBSERVE jobs (%s%s)",
                p->id, p->traversal, p->stalled, p->checks, p->observes, p->names,
                p->checks + p->observes > NAMES_LOGGED ? ", ..." : "");
        cv_worker_count(r->w, CV_STAT_REAPED, p->checks + p->observes);
    }
    free(p);
    if (--r->pending == 0)
        pass_next_batch(r);
}

static void note_name(stack_pass_t *p, const char *node)
{
    if (p->checks + p->observes > NAMES_LOGGED)
        return;
    size_t n = strlen(p->names);
    snprintf(p->names + n, sizeof(p->names) - n, "%s%s", n ? ", " : "", node);
}

/* Not in progress (or gone): nothing to re-queue; a stack found in
 * <prefix>active is forgotten there (its retired traversals were swept
 * before its look: reap_stack). A deleted one is noted for its purge:
 * every stack that settles passes here, so the note is never lost for
 * good with the worker that finished the delete. */
static void settle(stack_pass_t *p, const char *status)
{
    if (status && strcmp(status, "DELETE_COMPLETE") == 0)
        cv_purge_note_deleted(p->r->w, p->id);
    if (p->active)
        forget(p->r->w, p->id);
    stack_done(p);
}

static void on_job_delivered(void *ud, int err)
{
    stack_pass_t *p = ud;
    (void)err; /* a lost re-queue is found again on the next stall */
    if (--p->pending > 0)
        return;
    bool more =
        strcmp(p->cursor, "0") != 0 && p->checks + p->observes < JOBS_PER_STACK && !p->r->stopped;
    if (more)
        nodes_call(p);
    else
        stack_done(p);
}

static void publish_observe(stack_pass_t *p, const char *node, const char *version)
{
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = CV_MSG_OBSERVE;
    snprintf(m.stack, sizeof(m.stack), "%s", p->id);
    m.traversal = strtoull(p->traversal, NULL, 10);
    m.phase = CV_PHASE_UPDATE;
    snprintf(m.resource, sizeof(m.resource), "%s", node + 2);
    m.version = strtoull(version, NULL, 10);
    p->pending++;
    if (cv_worker_publish(p->r->w, CV_TOPIC_OBSERVE, &m, on_job_delivered, p) != 0)
        p->pending--;
}

static void publish_check(stack_pass_t *p, const char *node)
{
    p->pending++;
    if (cv_worker_publish_node(p->r->w, p->id, strtoull(p->traversal, NULL, 10), node, false,
                               on_job_delivered, p) != 0)
        p->pending--;
}

/* {'NODES', cursor, kind, node, version, ...} */
static void requeue_nodes(stack_pass_t *p, const redisReply *rep)
{
    snprintf(p->cursor, sizeof(p->cursor), "%s", cv_reply_str(rep, CV_STACK_REAP_NODES_R_CURSOR));
    p->pending = 1; /* held until every publish below is sent */
    for (size_t j = 0; CV_STACK_REAP_NODES_R_NODE(j, CV_STACK_REAP_NODES_N_VERSION) < rep->elements;
         j++) {
        const char *kind =
            cv_reply_str(rep, CV_STACK_REAP_NODES_R_NODE(j, CV_STACK_REAP_NODES_N_KIND));
        const char *node =
            cv_reply_str(rep, CV_STACK_REAP_NODES_R_NODE(j, CV_STACK_REAP_NODES_N_NODE));
        if (strlen(node) < 3)
            continue;
        note_name(p, node);
        /* The kind of job is data of the reply (a node's), not an answer. */
        if (strcmp(kind, "OBSERVE") == 0) {
            p->observes++;
            publish_observe(
                p, node,
                cv_reply_str(rep, CV_STACK_REAP_NODES_R_NODE(j, CV_STACK_REAP_NODES_N_VERSION)));
        } else {
            p->checks++;
            publish_check(p, node);
        }
    }
    on_job_delivered(p, 0);
}

static void on_stack_job_delivered(void *ud, int err)
{
    stack_pass_t *p = ud;
    if (!err)
        cv_worker_count(p->r->w, CV_STAT_REAPED, 1);
    stack_done(p);
}

static void requeue_stack_job(stack_pass_t *p, const char *traversal, const char *action)
{
    int kind = cv_trav_kind_parse(action);
    cv_info("reaper: stack %s traversal %s was never expanded; re-queued its STACK job (%s)", p->id,
            traversal, action);
    if (cv_worker_publish_stack(p->r->w, p->id, kind < 0 ? CV_TRAV_CREATE : kind,
                                strtoull(traversal, NULL, 10), false, on_stack_job_delivered,
                                p) != 0)
        stack_done(p);
}

static void on_finished(void *ud, int rc)
{
    (void)rc; /* a failure is found again on the next stall */
    stack_done(ud);
}

/* The answers both reap scripts give (their TRAVERSAL and ACTION
 * positions are the same); false for one that is not theirs. */
_Static_assert((int)CV_STACK_REAP_R_TRAVERSAL == (int)CV_STACK_REAP_NODES_R_TRAVERSAL &&
                   (int)CV_STACK_REAP_R_ACTION == (int)CV_STACK_REAP_NODES_R_ACTION,
               "stack_reap and stack_reap_nodes answer STACK and FINISH alike");

static bool on_common_answer(stack_pass_t *p, cv_answer_t answer, const redisReply *rep)
{
    switch (answer) {
    case CV_ANSWER_STACK:
        requeue_stack_job(p, cv_reply_str(rep, CV_STACK_REAP_R_TRAVERSAL),
                          cv_reply_str(rep, CV_STACK_REAP_R_ACTION));
        return true;
    case CV_ANSWER_FINISH: {
        const char *traversal = cv_reply_str(rep, CV_STACK_REAP_R_TRAVERSAL);
        cv_info("reaper: stack %s traversal %s has every node done; finishing it", p->id,
                traversal);
        if (cv_flowrun_finish_stack(p->r->w, p->id, strtoull(traversal, NULL, 10), on_finished,
                                    p) != 0)
            stack_done(p);
        return true;
    }
    case CV_ANSWER_GONE:
        settle(p, NULL);
        return true;
    case CV_ANSWER_SETTLED:
        settle(p, cv_reply_str(rep, CV_STACK_REAP_R_STATUS));
        return true;
    default:
        return false;
    }
}

/* ---- names of deleted stacks ---- */

typedef struct unname_ctx {
    stack_pass_t *p; /* NULL: the fast path after a delete, nobody waits */
    char name[CV_NAME_MAX];
    char id[CV_ID_MAX];
    char status[32]; /* the stack's, for settle */
} unname_ctx_t;

static void on_unnamed(cv_redis_t *redis, redisReply *rep, void *ud)
{
    unname_ctx_t *u = ud;
    (void)redis;
    if (u->p && cv_reply_answer(CV_SCRIPT_STACK_UNNAME, rep) == CV_ANSWER_VALUE &&
        rep->type == REDIS_REPLY_INTEGER && rep->integer == 1)
        cv_info("reaper: stack %s (%s) is deleted or gone; its name is free again", u->name, u->id);
    if (u->p)
        settle(u->p, u->status);
    free(u);
}

/* stack_unname.lua: the compare-and-delete of name -> stack; p (may be
 * NULL) is settled once it answered. Returns 0, or CV_ENOMEM / CV_EREDIS
 * (nothing sent, p untouched). */
static int unname(cv_worker_t *w, const char *name, const char *stack, stack_pass_t *p,
                  const char *status)
{
    unname_ctx_t *u = calloc(1, sizeof(*u));
    if (!u)
        return CV_ENOMEM;
    u->p = p;
    snprintf(u->status, sizeof(u->status), "%s", status);
    snprintf(u->name, sizeof(u->name), "%s", name);
    snprintf(u->id, sizeof(u->id), "%s", stack);
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACKS, NULL, 0, NULL);
    cv_stack_unname_keys_t keys = {.stacks = key};
    cv_stack_unname_args_t args = {.name = u->name, .id = u->id};
    int rc = cv_redis_call(w->redis, CV_SCRIPT_STACK_UNNAME, keys.v, args.v, 0, NULL, NULL,
                           on_unnamed, u);
    if (rc)
        free(u);
    return rc;
}

void cv_reaper_unname(cv_worker_t *w, const char *name, const char *stack)
{
    unname(w, name, stack, NULL, "");
}

/* A named stack that is gone (purged) or DELETE_COMPLETE keeps no name: the
 * worker that finished the delete frees it at once, but may die before. */
static bool frees_name(const stack_pass_t *p, cv_answer_t answer, const redisReply *rep)
{
    if (!p->name[0])
        return false;
    return answer == CV_ANSWER_GONE ||
           (answer == CV_ANSWER_SETTLED &&
            strcmp(cv_reply_str(rep, CV_STACK_REAP_R_STATUS), "DELETE_COMPLETE") == 0);
}

static void on_nodes(cv_redis_t *redis, redisReply *rep, void *ud)
{
    stack_pass_t *p = ud;
    (void)redis;
    if (rep && rep->type == REDIS_REPLY_ERROR)
        cv_warn("reaper: stack %s: %s", p->id, rep->str);
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_STACK_REAP_NODES, rep);
    if (answer == CV_ANSWER_NODES)
        requeue_nodes(p, rep);
    else if (!on_common_answer(p, answer, rep))
        stack_done(p); /* MOVING, or Redis failed: the next pass looks again */
}

/* One batch of the stalled traversal's graph: its keys, and the prefixes
 * of its nodes' sync points and records, are named here (cv_keys). */
static void nodes_call(stack_pass_t *p)
{
    char k[4][CV_KEY_MAX], sp_prefix[CV_KEY_MAX], res_prefix[CV_KEY_MAX], room[16], batch[16];
    uint64_t traversal = strtoull(p->traversal, NULL, 10);
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, p->id, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_GRAPH, p->id, traversal, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_DONE, p->id, traversal, NULL);
    cv_key(k[3], CV_KEY_MAX, CV_KEY_HOOKS, p->id, 0, NULL);
    cv_key_prefix(sp_prefix, sizeof(sp_prefix), CV_KEY_SP, p->id, traversal);
    cv_key_prefix(res_prefix, sizeof(res_prefix), CV_KEY_RES, p->id, 0);
    snprintf(room, sizeof(room), "%u", JOBS_PER_STACK - (p->checks + p->observes));
    snprintf(batch, sizeof(batch), "%d", ENTRIES_PER_CALL);
    cv_stack_reap_nodes_keys_t keys = {.stack = k[0], .graph = k[1], .done = k[2], .hooks = k[3]};
    cv_stack_reap_nodes_args_t args = {
        .traversal = p->traversal,
        .cursor = p->cursor,
        .count = batch,
        .room = room,
        .sp_prefix = sp_prefix,
        .res_prefix = res_prefix,
    };
    if (cv_redis_call(p->r->w->redis, CV_SCRIPT_STACK_REAP_NODES, keys.v, args.v, 0, NULL, NULL,
                      on_nodes, p) != 0)
        stack_done(p);
}

static void on_reap(cv_redis_t *redis, redisReply *rep, void *ud)
{
    stack_pass_t *p = ud;
    (void)redis;
    if (rep && rep->type == REDIS_REPLY_ERROR)
        cv_warn("reaper: stack %s: %s", p->id, rep->str);
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_STACK_REAP, rep);
    if (answer == CV_ANSWER_STALLED) {
        snprintf(p->traversal, sizeof(p->traversal), "%s",
                 cv_reply_str(rep, CV_STACK_REAP_R_TRAVERSAL));
        snprintf(p->stalled, sizeof(p->stalled), "%s",
                 cv_reply_str(rep, CV_STACK_REAP_R_STALLED_SECONDS));
        nodes_call(p);
    } else if (frees_name(p, answer, rep)) {
        const char *status =
            answer == CV_ANSWER_SETTLED ? cv_reply_str(rep, CV_STACK_REAP_R_STATUS) : "";
        if (unname(p->r->w, p->name, p->id, p, status) != 0)
            settle(p, status);
    } else if (!on_common_answer(p, answer, rep)) {
        stack_done(p); /* MOVING, or Redis failed: the next pass looks again */
    }
}

/* The first call checks the stall and, when the stack stalled, tells its
 * traversal (the keys of the batches that follow). */
static void stack_call(stack_pass_t *p)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACK, p->id, 0, NULL);
    cv_stack_reap_keys_t keys = {.stack = key};
    cv_stack_reap_args_t args = {.stall_ms = p->r->stall_ms};
    if (cv_redis_call(p->r->w->redis, CV_SCRIPT_STACK_REAP, keys.v, args.v, 0, NULL, NULL, on_reap,
                      p) != 0)
        stack_done(p);
}

/* A stack the reaper watches has its retired traversals swept before it
 * is looked at, so that it is forgotten only once they are (settle). */
static void on_swept(void *ud, int rc, cv_answer_t answer)
{
    stack_pass_t *p = ud;
    (void)answer;
    if (rc) /* Redis failed: not forgotten, swept again on the next pass */
        p->active = false;
    stack_call(p);
}

/* name: the stack's name when found in <prefix>stacks, else NULL. */
static void reap_stack(cv_reaper_t *r, const char *id, const char *name)
{
    stack_pass_t *p = calloc(1, sizeof(*p));
    if (!p)
        return;
    p->r = r;
    p->active = r->active;
    snprintf(p->id, sizeof(p->id), "%s", id);
    snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
    snprintf(p->cursor, sizeof(p->cursor), "0");
    r->pending++;
    if (!p->active || cv_purge_sweep(r->w, p->id, on_swept, p) != 0)
        stack_call(p);
}

/* ---- a pass over every stack ---- */

static void scan(cv_reaper_t *r);

/* A batch of stack ids: HSCAN of <prefix>stacks gives name, id pairs,
 * SSCAN of <prefix>active the ids alone. */
static void on_stacks(cv_redis_t *redis, redisReply *rep, void *ud)
{
    cv_reaper_t *r = ud;
    (void)redis;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 || r->stopped) {
        pass_end(r);
        return;
    }
    snprintf(r->cursor, sizeof(r->cursor), "%s", cv_reply_str(rep, 0));
    const redisReply *ids = rep->element[1];
    r->pending = 1; /* held while the batch is being started */
    size_t first = r->active ? 0 : 1, step = r->active ? 1 : 2;
    for (size_t i = first; ids->type == REDIS_REPLY_ARRAY && i < ids->elements; i += step)
        if (ids->element[i]->type == REDIS_REPLY_STRING)
            reap_stack(r, ids->element[i]->str,
                       r->active || ids->element[i - 1]->type != REDIS_REPLY_STRING
                           ? NULL
                           : ids->element[i - 1]->str);
    if (--r->pending == 0)
        pass_next_batch(r);
}

/* ---- deleted stacks past their retention ---- */

static void on_purged(void *ud, int rc, cv_answer_t answer)
{
    cv_reaper_t *r = ud;
    (void)rc; /* a failure is tried again on the next pass */
    (void)answer;
    if (--r->pending == 0)
        pass_end(r);
}

/* Ids of <prefix>deleted noted before the retention began: each is purged
 * if stack_purge.lua, on Redis' clock, agrees it is old enough. */
static void on_deleted(cv_redis_t *redis, redisReply *rep, void *ud)
{
    cv_reaper_t *r = ud;
    (void)redis;
    r->pending = 1; /* held while the purges are being started */
    for (size_t i = 0; rep && rep->type == REDIS_REPLY_ARRAY && i < rep->elements && !r->stopped;
         i++) {
        if (rep->element[i]->type != REDIS_REPLY_STRING)
            continue;
        r->pending++;
        if (cv_purge_stack(r->w, rep->element[i]->str, r->w->deleted_retention_s, on_purged, r) !=
            0)
            r->pending--;
    }
    if (--r->pending == 0)
        pass_end(r);
}

static void purge_pass(cv_reaper_t *r)
{
    char key[CV_KEY_MAX], before[32];
    cv_key(key, sizeof(key), CV_KEY_DELETED, NULL, 0, NULL);
    snprintf(before, sizeof(before), "%.3f", cv_now() - r->w->deleted_retention_s);
    const char *argv[] = {"ZRANGEBYSCORE", key, "-inf", before, "LIMIT", "0", PURGES_PER_PASS};
    if (cv_redis_argv(r->w->redis, 7, argv, NULL, on_deleted, r) != 0)
        pass_end(r);
}

/* Next batch of the scan under way; then <prefix>active; then the purge of
 * deleted stacks; then the end. */
static void pass_next_batch(cv_reaper_t *r)
{
    if (!r->stopped && strcmp(r->cursor, "0") == 0 && !r->active) {
        r->active = true;
        scan(r);
        return;
    }
    if (r->stopped) {
        pass_end(r);
        return;
    }
    if (strcmp(r->cursor, "0") == 0) {
        purge_pass(r);
        return;
    }
    scan(r);
}

static void scan(cv_reaper_t *r)
{
    char key[CV_KEY_MAX], count[16];
    cv_key(key, sizeof(key), r->active ? CV_KEY_ACTIVE : CV_KEY_STACKS, NULL, 0, NULL);
    snprintf(count, sizeof(count), "%d", STACKS_PER_SCAN);
    const char *argv[] = {r->active ? "SSCAN" : "HSCAN", key, r->cursor, "COUNT", count};
    if (cv_redis_argv(r->w->redis, 5, argv, NULL, on_stacks, r) != 0)
        pass_end(r);
}

/* <prefix>active holds the stacks in progress (and those settled since the
 * last pass), so it is looked at every pass. Every stack that exists is in
 * <prefix>stacks; it is scanned once per stall threshold only, for a named
 * stack whose traversal was never expanded — which the threshold makes
 * wait that long anyway — and for names left to stacks gone or deleted,
 * so that completed stacks cost little. */
static void pass_start(cv_reaper_t *r)
{
    double now = cv_now();
    snprintf(r->cursor, sizeof(r->cursor), "0");
    r->active = now - r->named_scanned < r->w->reap_stall_ms / 1000.0;
    if (!r->active)
        r->named_scanned = now;
    scan(r);
}

/* ---- the reaper's own lease ---- */

static void on_lease_renewed(cv_redis_t *redis, redisReply *rep, void *ud)
{
    cv_reaper_t *r = ud;
    (void)redis;
    bool renewed = cv_reply_answer(CV_SCRIPT_LEASE_RENEW, rep) == CV_ANSWER_VALUE &&
                   rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
    if (renewed && !r->stopped)
        pass_start(r);
    else
        pass_end(r);
}

/* SET NX PX took it, or we hold it already and extend it. */
static void on_lease_set(cv_redis_t *redis, redisReply *rep, void *ud)
{
    cv_reaper_t *r = ud;
    if (r->stopped || !rep) {
        pass_end(r);
        return;
    }
    if (rep->type == REDIS_REPLY_STATUS) {
        cv_debug("reaper: took the reaper lease");
        pass_start(r);
        return;
    }
    cv_lease_renew_keys_t keys = {.lease = r->lease_key};
    cv_lease_renew_args_t args = {.token = r->w->id, .lease_ms = r->lease_ms};
    if (cv_redis_call(redis, CV_SCRIPT_LEASE_RENEW, keys.v, args.v, 0, NULL, NULL, on_lease_renewed,
                      r) != 0)
        pass_end(r);
}

static void on_tick(uv_timer_t *t)
{
    cv_reaper_t *r = t->data;
    if (r->busy || r->w->stopping || r->w->isolated || !cv_redis_connected(r->w->redis))
        return;
    r->busy = true;
    const char *argv[] = {"SET", r->lease_key, r->w->id, "NX", "PX", r->lease_ms};
    if (cv_redis_argv(r->w->redis, 6, argv, NULL, on_lease_set, r) != 0)
        r->busy = false;
}

cv_reaper_t *cv_reaper_start(cv_worker_t *w)
{
    cv_reaper_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->w = w;
    cv_key(r->lease_key, sizeof(r->lease_key), CV_KEY_REAPER, NULL, 0, NULL);
    /* Held across a few passes, so that another engine takes over within
     * seconds of this one dying, and never while this one is alive. */
    snprintf(r->lease_ms, sizeof(r->lease_ms), "%d", 3 * w->reap_interval_ms);
    snprintf(r->stall_ms, sizeof(r->stall_ms), "%d", w->reap_stall_ms);
    uv_timer_init(w->loop, &r->timer);
    r->timer.data = r;
    uv_timer_start(&r->timer, on_tick, (uint64_t)w->reap_interval_ms,
                   (uint64_t)w->reap_interval_ms);
    return r;
}

static void on_timer_closed(uv_handle_t *h)
{
    cv_reaper_t *r = h->data;
    r->timer_closed = true;
    maybe_free(r);
}

void cv_reaper_stop(cv_reaper_t *r)
{
    if (!r)
        return;
    r->stopped = true;
    uv_timer_stop(&r->timer);
    uv_close((uv_handle_t *)&r->timer, on_timer_closed);
}

void cv_reaper_watch(cv_worker_t *w, const char *stack)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_ACTIVE, NULL, 0, NULL);
    const char *argv[] = {"SADD", key, stack};
    cv_redis_argv(w->redis, 3, argv, NULL, NULL, NULL);
}

/* ---- observers: an action being watched is progress ---- */

void cv_reaper_touch(cv_worker_t *w, const cv_msg_t *job)
{
    char key[CV_KEY_MAX], trav[24];
    cv_key(key, sizeof(key), CV_KEY_STACK, job->stack, 0, NULL);
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)job->traversal);
    cv_stack_touch_keys_t keys = {.stack = key};
    cv_stack_touch_args_t args = {.traversal = trav};
    cv_redis_call(w->redis, CV_SCRIPT_STACK_TOUCH, keys.v, args.v, 0, NULL, NULL, NULL, NULL);
}
