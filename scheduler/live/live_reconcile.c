/*
 * live_reconcile — one reconcile of one service: read the live model, plan
 * (cv_reconcile), and when the plan changes anything commit it with
 * svc_commit.lua; a commit that lost to another (STALE, a node that went
 * down or filled up since the read: UNAVAILABLE, FULL) re-reads and
 * re-plans, CV_LIVE_ATTEMPTS times at most. After a commit the plan's
 * events go to the service's stack event stream — another slot than the
 * cluster's, hence a command of its own after the script (an event lost to
 * a crash in between is only a missing line; the state is committed).
 */
#include "live_internal.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct reconcile {
    cv_worker_t *w;
    char svc[256];
    cv_live_done_cb cb;
    void *arg;
    int attempts;
    cv_reconcile_plan_t plan; /* the last one made (empty before) */
    char last[512];           /* why the last commit lost */
} reconcile_t;

static void attempt(reconcile_t *rc);

static void done(reconcile_t *rc, int code, const char *err)
{
    cv_reconcile_plan_free(&rc->plan);
    rc->cb(rc->arg, code, err ? err : "");
    free(rc);
}

/* What the plan means for the caller once committed (or with nothing to
 * commit): a rejected service is CV_EVALIDATE with why. */
static void done_with_plan(reconcile_t *rc)
{
    if (rc->plan.rejected) {
        char err[1024];
        snprintf(err, sizeof(err), "service %s rejected: %s", rc->plan.resource, rc->plan.rejected);
        done(rc, CV_EVALIDATE, err);
        return;
    }
    done(rc, 0, "");
}

/* ---------------------------------------------------------------- events */

static void add_events(reconcile_t *rc)
{
    const char *stack = rc->plan.stack, *resource = rc->plan.resource;
    if (!stack[0])
        return;
    char key[CV_KEY_MAX], now[32];
    cv_key(key, sizeof(key), CV_KEY_EVENTS, stack, 0, NULL);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(now, sizeof(now), "%lld.%03ld", (long long)ts.tv_sec, ts.tv_nsec / 1000000);
    for (size_t i = 0; i < rc->plan.events.n; i++) {
        const cv_reconcile_event_t *e = &rc->plan.events.v[i];
        const char *argv[] = {
            "XADD",      key,       "MAXLEN",   "~",       "200000",      "*",
            "time",      now,       "resource", resource,  "physical_id", e->physical_id,
            "action",    e->action, "status",   e->status, "reason",      e->reason,
            "traversal", "",        "worker",   rc->w->id};
        cv_redis_argv(rc->w->redis, (int)(sizeof(argv) / sizeof(argv[0])), argv, NULL, NULL, NULL);
        cv_info("live: %s: %s", rc->svc, e->reason);
    }
}

/* ---------------------------------------------------------------- commit */

/* converge_placements_total: the replicas a committed plan assigned. */
static void count_placements(const cv_reconcile_plan_t *plan)
{
    for (size_t i = 0; i < plan->ops.n; i++)
        if (plan->ops.v[i].kind == CV_RECONCILE_ASSIGN)
            cv_metrics_add(CV_METRIC_PLACEMENTS, 1);
}

static void on_commit(cv_redis_t *r, redisReply *rep, void *ud)
{
    reconcile_t *rc = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_SVC_COMMIT, rep);
    switch (answer) {
    case CV_ANSWER_OK:
        count_placements(&rc->plan);
        add_events(rc);
        done_with_plan(rc);
        return;
    case CV_ANSWER_GONE:
        done(rc, 0, ""); /* deleted and removed meanwhile: nothing left to do */
        return;
    case CV_ANSWER_STALE:
        snprintf(rc->last, sizeof(rc->last), "the service changed (generation %s)",
                 cv_reply_str(rep, CV_SVC_COMMIT_R_CURRENT));
        break;
    case CV_ANSWER_UNAVAILABLE:
        snprintf(rc->last, sizeof(rc->last), "node %s is %s",
                 cv_reply_str(rep, CV_SVC_COMMIT_R_NODE), cv_reply_str(rep, CV_SVC_COMMIT_R_WHY));
        break;
    case CV_ANSWER_FULL:
        snprintf(rc->last, sizeof(rc->last), "node %s is full (%s)",
                 cv_reply_str(rep, CV_SVC_COMMIT_R_NODE),
                 cv_reply_str(rep, CV_SVC_COMMIT_R_METRIC));
        break;
    default:
        done(rc, CV_EREDIS,
             rep && rep->type == REDIS_REPLY_ERROR ? rep->str : "Redis: svc_commit failed");
        return;
    }
    cv_debug("live: %s: commit lost (%s); planning again", rc->svc, rc->last);
    cv_reconcile_plan_free(&rc->plan);
    attempt(rc);
}

/* A record document as svc_commit.lua reads it: compact JSON, "" for none. */
static char *dump(const json_t *v)
{
    return json_is_null(v) || !v ? strdup("") : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static const char *const op_names[] = {
    [CV_RECONCILE_ASSIGN] = "assign", [CV_RECONCILE_UNASSIGN] = "unassign"};

/* The operations as svc_commit.lua reads them ("op\tnode\trid[\tspec]"),
 * with their nodes' assign keys. */
static int op_lines(const cv_reconcile_ops_t *ops, char ***keys, char ***args)
{
    *keys = calloc(ops->n + 1, sizeof(char *));
    *args = calloc(ops->n + 1, sizeof(char *));
    if (!*keys || !*args)
        return CV_ENOMEM;
    for (size_t i = 0; i < ops->n; i++) {
        const cv_reconcile_op_t *op = &ops->v[i];
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_ASSIGN, NULL, 0, op->node);
        (*keys)[i] = strdup(key);
        char *spec = op->spec ? dump(op->spec) : NULL;
        if (asprintf(&(*args)[i], "%s\t%s\t%s%s%s", op_names[op->kind], op->node, op->rid,
                     spec ? "\t" : "", spec ? spec : "") < 0)
            (*args)[i] = NULL;
        free(spec);
        if (!(*keys)[i] || !(*args)[i])
            return CV_ENOMEM;
    }
    return 0;
}

static void free_lines(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* The record's documents, as svc_commit.lua takes them. */
typedef struct docs {
    char *placement, *unplaced, *blocklist, *failures, *rejected, *health, *moves, *rollout,
        *gave_up, *blocked;
} docs_t;

static bool docs_dump(const cv_reconcile_record_t *r, docs_t *d)
{
    *d = (docs_t){dump(r->placement), dump(r->unplaced), dump(r->blocklist), dump(r->failures),
                  dump(r->rejected),  dump(r->health),   dump(r->moves),     dump(r->rollout),
                  dump(r->gave_up),   dump(r->blocked)};
    return d->placement && d->unplaced && d->blocklist && d->failures && d->rejected && d->health &&
           d->moves && d->rollout && d->gave_up && d->blocked;
}

static void docs_free(docs_t *d)
{
    char *all[] = {d->placement, d->unplaced, d->blocklist, d->failures, d->rejected,
                   d->health,    d->moves,    d->rollout,   d->gave_up,  d->blocked};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
}

static void commit(reconcile_t *rc)
{
    const cv_reconcile_plan_t *p = &rc->plan;
    char k[6][CV_KEY_MAX], alive[CV_KEY_MAX], node[CV_KEY_MAX], notify[CV_KEY_MAX], gen[32],
        source[512];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_SVC, NULL, 0, rc->svc);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_SERVICES, NULL, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_NODES, NULL, 0, NULL);
    cv_key(k[3], CV_KEY_MAX, CV_KEY_SETTINGS, NULL, 0, NULL);
    cv_key(k[4], CV_KEY_MAX, CV_KEY_HEALTH, NULL, 0, NULL);
    cv_key(k[5], CV_KEY_MAX, CV_KEY_LOAD, NULL, 0, rc->svc);
    cv_key_prefix(alive, sizeof(alive), CV_KEY_ALIVE, NULL, 0);
    cv_key_prefix(node, sizeof(node), CV_KEY_NODE, NULL, 0);
    cv_key_prefix(notify, sizeof(notify), CV_KEY_NOTIFY, NULL, 0);
    snprintf(gen, sizeof(gen), "%lld", (long long)p->gen);
    cv_reconcile_health_source(source, sizeof(source), rc->svc);
    docs_t d;
    char **op_keys = NULL, **op_args = NULL;
    int err = docs_dump(&p->record, &d) ? op_lines(&p->ops, &op_keys, &op_args) : CV_ENOMEM;
    cv_svc_commit_keys_t keys = {.svc = k[0],
                                 .services = k[1],
                                 .nodes = k[2],
                                 .settings = k[3],
                                 .health = k[4],
                                 .load = k[5]};
    cv_svc_commit_args_t args = {
        .svc_id = rc->svc,
        .gen = gen,
        .placement = d.placement,
        .unplaced = d.unplaced,
        .blocklist = d.blocklist,
        .failures = d.failures,
        .rejected = d.rejected,
        .health = d.health,
        .remove = p->remove ? "1" : "0",
        .alive_prefix = alive,
        .node_prefix = node,
        .notify_prefix = notify,
        .health_source = source,
        .moves = d.moves,
        .rollout = d.rollout,
        .gave_up = d.gave_up,
        .blocked = d.blocked,
    };
    if (!err)
        err = cv_redis_call(rc->w->redis, CV_SCRIPT_SVC_COMMIT, keys.v, args.v, p->ops.n,
                            (const char *const *)op_keys, (const char *const *)op_args, on_commit,
                            rc);
    free_lines(op_keys, p->ops.n);
    free_lines(op_args, p->ops.n);
    docs_free(&d);
    if (err)
        done(rc, err, err == CV_ENOMEM ? "out of memory" : "Redis: not connected");
}

/* ---------------------------------------------------------------- plan */

static void on_model(void *arg, json_t *model, int code, const char *err)
{
    reconcile_t *rc = arg;
    if (!model) {
        done(rc, code, err);
        return;
    }
    char errstr[1024] = "";
    code = cv_reconcile(model, rc->svc, &rc->plan, errstr, sizeof(errstr));
    json_decref(model);
    if (code) {
        /* A service gone from the cluster is for the caller to judge; any
         * other reason the planner cannot plan is the model's fault. */
        done(rc, code == CV_ENOENT ? CV_ENOENT : CV_EVALIDATE, errstr);
        return;
    }
    if (!rc->plan.changed)
        done_with_plan(rc);
    else
        commit(rc);
}

static void attempt(reconcile_t *rc)
{
    if (++rc->attempts > CV_LIVE_ATTEMPTS) {
        char err[1024];
        snprintf(err, sizeof(err), "service %s: %d commits lost in a row (last: %s); try again",
                 rc->svc, CV_LIVE_ATTEMPTS, rc->last);
        done(rc, CV_EBUSY, err);
        return;
    }
    cv__live_read(rc->w, on_model, rc);
}

void cv_live_reconcile(cv_worker_t *w, const char *svc, cv_live_done_cb cb, void *arg)
{
    reconcile_t *rc = calloc(1, sizeof(*rc));
    if (!rc) {
        cb(arg, CV_ENOMEM, "out of memory");
        return;
    }
    rc->w = w;
    snprintf(rc->svc, sizeof(rc->svc), "%s", svc);
    rc->cb = cb;
    rc->arg = arg;
    attempt(rc);
}
