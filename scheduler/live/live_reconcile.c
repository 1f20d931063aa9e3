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
    json_t *plan;
    char last[512]; /* why the last commit lost */
} reconcile_t;

static void attempt(reconcile_t *rc);

static void done(reconcile_t *rc, int code, const char *err)
{
    json_decref(rc->plan);
    rc->cb(rc->arg, code, err ? err : "");
    free(rc);
}

/* What the plan means for the caller once committed (or with nothing to
 * commit): a rejected service is CV_EVALIDATE with why. */
static void done_with_plan(reconcile_t *rc)
{
    const json_t *rejected = json_object_get(rc->plan, "rejected");
    if (json_is_object(rejected)) {
        char err[1024];
        snprintf(err, sizeof(err), "service %s rejected: %s",
                 json_string_value(json_object_get(rc->plan, "resource")),
                 json_string_value(json_object_get(rejected, "description")));
        done(rc, CV_EVALIDATE, err);
        return;
    }
    done(rc, 0, "");
}

/* ---------------------------------------------------------------- events */

static void add_events(reconcile_t *rc)
{
    const char *stack = json_string_value(json_object_get(rc->plan, "stack"));
    const char *resource = json_string_value(json_object_get(rc->plan, "resource"));
    if (!stack || !stack[0])
        return;
    char key[CV_KEY_MAX], now[32];
    cv_key(key, sizeof(key), CV_KEY_EVENTS, stack, 0, NULL);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(now, sizeof(now), "%lld.%03ld", (long long)ts.tv_sec, ts.tv_nsec / 1000000);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(rc->plan, "events"), i, e)
    {
        const char *argv[] = {"XADD",        key,
                              "MAXLEN",      "~",
                              "200000",      "*",
                              "time",        now,
                              "resource",    resource,
                              "physical_id", json_string_value(json_object_get(e, "physical_id")),
                              "action",      json_string_value(json_object_get(e, "action")),
                              "status",      json_string_value(json_object_get(e, "status")),
                              "reason",      json_string_value(json_object_get(e, "reason")),
                              "traversal",   "",
                              "worker",      rc->w->id};
        cv_redis_argv(rc->w->redis, (int)(sizeof(argv) / sizeof(argv[0])), argv, NULL, NULL, NULL);
        cv_info("live: %s: %s", rc->svc, json_string_value(json_object_get(e, "reason")));
    }
}

/* ---------------------------------------------------------------- commit */

/* converge_placements_total: the replicas a committed plan assigned. */
static void count_placements(const json_t *plan)
{
    size_t i;
    const json_t *op;
    json_array_foreach(json_object_get(plan, "ops"), i, op)
    {
        if (json_is_string(json_object_get(op, "op")) &&
            strcmp(json_string_value(json_object_get(op, "op")), "assign") == 0)
            cv_metrics_add(CV_METRIC_PLACEMENTS, 1);
    }
}

static void on_commit(cv_redis_t *r, redisReply *rep, void *ud)
{
    reconcile_t *rc = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_SVC_COMMIT, rep);
    switch (answer) {
    case CV_ANSWER_OK:
        count_placements(rc->plan);
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
    json_decref(rc->plan);
    rc->plan = NULL;
    attempt(rc);
}

static char *dump(const json_t *v)
{
    return json_is_null(v) || !v ? strdup("") : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* The operations as svc_commit.lua reads them, with their nodes' assign keys. */
static int op_lines(const json_t *ops, char ***keys, char ***args)
{
    size_t n = json_array_size(ops);
    *keys = calloc(n + 1, sizeof(char *));
    *args = calloc(n + 1, sizeof(char *));
    if (!*keys || !*args)
        return CV_ENOMEM;
    size_t i;
    json_t *op;
    json_array_foreach(ops, i, op)
    {
        const char *node = json_string_value(json_object_get(op, "node"));
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_ASSIGN, NULL, 0, node);
        (*keys)[i] = strdup(key);
        char *spec = json_object_get(op, "spec") ? dump(json_object_get(op, "spec")) : NULL;
        if (asprintf(&(*args)[i], "%s\t%s\t%s%s%s", json_string_value(json_object_get(op, "op")),
                     node, json_string_value(json_object_get(op, "rid")), spec ? "\t" : "",
                     spec ? spec : "") < 0)
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

static void commit(reconcile_t *rc)
{
    const json_t *p = rc->plan;
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
    snprintf(gen, sizeof(gen), "%lld", (long long)json_integer_value(json_object_get(p, "gen")));
    cv_reconcile_health_source(source, sizeof(source), rc->svc);
    char *placement = dump(json_object_get(p, "placement"));
    char *unplaced = dump(json_object_get(p, "unplaced"));
    char *blocklist = dump(json_object_get(p, "blocklist"));
    char *failures = dump(json_object_get(p, "failures"));
    char *rejected = dump(json_object_get(p, "rejected"));
    char *health = dump(json_object_get(p, "health"));
    char *moves = dump(json_object_get(p, "moves"));
    char *rollout = dump(json_object_get(p, "rollout"));
    char *gave_up = dump(json_object_get(p, "gave_up"));
    char *blocked = dump(json_object_get(p, "blocked"));
    const json_t *ops = json_object_get(p, "ops");
    size_t nops = json_array_size(ops);
    char **op_keys = NULL, **op_args = NULL;
    int err = op_lines(ops, &op_keys, &op_args);
    cv_svc_commit_keys_t keys = {.svc = k[0],
                                 .services = k[1],
                                 .nodes = k[2],
                                 .settings = k[3],
                                 .health = k[4],
                                 .load = k[5]};
    cv_svc_commit_args_t args = {
        .svc_id = rc->svc,
        .gen = gen,
        .placement = placement,
        .unplaced = unplaced,
        .blocklist = blocklist,
        .failures = failures,
        .rejected = rejected,
        .health = health,
        .remove = json_is_true(json_object_get(p, "remove")) ? "1" : "0",
        .alive_prefix = alive,
        .node_prefix = node,
        .notify_prefix = notify,
        .health_source = source,
        .moves = moves,
        .rollout = rollout,
        .gave_up = gave_up,
        .blocked = blocked,
    };
    if (!err)
        err = cv_redis_call(rc->w->redis, CV_SCRIPT_SVC_COMMIT, keys.v, args.v, nops,
                            (const char *const *)op_keys, (const char *const *)op_args, on_commit,
                            rc);
    free_lines(op_keys, nops);
    free_lines(op_args, nops);
    free(placement);
    free(unplaced);
    free(blocklist);
    free(failures);
    free(rejected);
    free(health);
    free(moves);
    free(rollout);
    free(gave_up);
    free(blocked);
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
    rc->plan = cv_reconcile(model, rc->svc, errstr, sizeof(errstr));
    json_decref(model);
    if (!rc->plan) {
        bool gone = strstr(errstr, "is not in the cluster") != NULL;
        done(rc, gone ? CV_ENOENT : CV_EVALIDATE, errstr);
        return;
    }
    if (!json_is_true(json_object_get(rc->plan, "changed")))
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
