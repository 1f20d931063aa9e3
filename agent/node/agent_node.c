#include "agent_node.h"

#include "agent_guard.h"

#include "agent_ports.h"
#include "agent_replica.h"
#include "agent_report.h"
#include "agent_state.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TICK_MS 250
#define TICKS_PER_SECOND 4

typedef struct entry {
    cv_replica_t *r;
    bool assigned;        /* in the last assignments read (or not yet read) */
    bool dirty;           /* its report changed since the last write */
    bool stopped_by_node; /* no longer assigned, or fenced */
    bool fenced;
    bool reported_stopped;
} entry_t;

struct cv_anode {
    uv_loop_t *loop;
    cv_redis_t *redis;
    cv_anode_conf_t conf;
    cv_rhost_t host;
    cv_ports_t ports;
    char k_nodes[CV_KEY_MAX], k_settings[CV_KEY_MAX], k_node[CV_KEY_MAX], k_alive[CV_KEY_MAX],
        k_assign[CV_KEY_MAX], k_report[CV_KEY_MAX], k_notify[CV_KEY_MAX], k_ledger[CV_KEY_MAX];
    CV_VEC(entry_t) entries;
    json_t *bad; /* rid -> report of an assigned spec that cannot be read */
    uv_timer_t hb_timer, tick_timer, flush_timer;
    unsigned ticks;
    int closing;    /* timers not yet closed, once freed */
    int unanswered; /* commands sent with a callback whose answer has not come */
    bool freed;     /* cv_anode_free was called: answers still due find it gone */
    double last_ok, started;
    /* Reads of the assignments asked and answered, and the first read
     * trusted since the fence lifted: answers come in the order asked. */
    unsigned long reads_sent, reads_answered, reads_trusted;
    bool fenced, swept, shutting, stop_replicas;
    void (*done)(void *ud);
    void *done_ud;
};

/* ------------------------------------------------------------------------ */
/* Entries                                                                  */
/* ------------------------------------------------------------------------ */

static entry_t *find(cv_anode_t *n, const char *rid)
{
    for (size_t i = 0; i < n->entries.n; i++)
        if (strcmp(cv_replica_rid(n->entries.v[i].r), rid) == 0)
            return &n->entries.v[i];
    return NULL;
}

static entry_t *find_replica(cv_anode_t *n, const cv_replica_t *r)
{
    for (size_t i = 0; i < n->entries.n; i++)
        if (n->entries.v[i].r == r)
            return &n->entries.v[i];
    return NULL;
}

static entry_t *add(cv_anode_t *n, cv_replica_t *r)
{
    if (cv_vec_push(&n->entries, (entry_t){.r = r, .assigned = true, .dirty = true}) != 0)
        return NULL;
    return &n->entries.v[n->entries.n - 1];
}

static void forget(cv_anode_t *n, entry_t *e)
{
    cv_replica_free(e->r, true);
    *e = n->entries.v[--n->entries.n];
}

/* ------------------------------------------------------------------------ */
/* Redis writes                                                             */
/* ------------------------------------------------------------------------ */

/* The node lives until its three timers are closed and every command it
 * sent has been answered: Redis, closing, still answers what was asked
 * before (or gives no reply when the connection goes), after the node was
 * freed. */
static void release(cv_anode_t *n)
{
    if (n->freed && n->closing == 0 && n->unanswered == 0)
        free(n);
}

typedef struct {
    cv_anode_t *n;
    cv_redis_cb cb;
} answer_t;

static void on_answer(cv_redis_t *r, redisReply *reply, void *ud)
{
    answer_t a = *(answer_t *)ud;
    free(ud);
    a.n->unanswered--;
    if (!a.n->freed)
        a.cb(r, reply, a.n);
    release(a.n);
}

static bool send_cmd(cv_anode_t *n, int argc, const char **argv, cv_redis_cb cb)
{
    answer_t *a = cb ? malloc(sizeof(*a)) : NULL;
    if (a)
        *a = (answer_t){.n = n, .cb = cb};
    if (!n->redis || (cb && !a) ||
        cv_redis_argv(n->redis, argc, argv, NULL, a ? on_answer : NULL, a) != 0) {
        free(a);
        cv_debug("node %s: Redis unreachable, %s not sent", n->conf.name, argv[0]);
        return false;
    }
    if (a)
        n->unanswered++;
    return true;
}

static void on_report_written(cv_redis_t *r, redisReply *reply, void *ud)
{
    (void)r;
    (void)ud;
    if (reply && reply->type == REDIS_REPLY_ERROR)
        cv_warn("writing reports: %s", reply->str);
}

/* Writes the reports of the dirty replicas (all of them when `all`); on
 * the periodic write, forgets replicas stopped, reported and unassigned. */
static void flush(cv_anode_t *n, bool all)
{
    size_t max = 2 + 2 * (n->entries.n + json_object_size(n->bad));
    const char **argv = calloc(max, sizeof(char *));
    char **texts = calloc(max, sizeof(char *));
    const char **del = calloc(n->entries.n + 2, sizeof(char *));
    if (!argv || !texts || !del)
        goto out;
    int argc = 2, ndel = 2, ntexts = 0;
    argv[0] = "HSET";
    argv[1] = n->k_report;
    del[0] = "HDEL";
    del[1] = n->k_report;
    char **gone = calloc(n->entries.n + 1, sizeof(char *));
    size_t ngone = 0;
    for (size_t i = 0; i < n->entries.n; i++) {
        entry_t *e = &n->entries.v[i];
        bool stopped = cv_replica_stopped(e->r) && !e->assigned;
        if (all && stopped && e->reported_stopped && gone) {
            gone[ngone] = strdup(cv_replica_rid(e->r));
            del[ndel++] = gone[ngone++];
            continue;
        }
        if (!all && !e->dirty)
            continue;
        json_t *rep = cv_replica_report(e->r);
        texts[ntexts] = json_dumps(rep, JSON_COMPACT);
        json_decref(rep);
        argv[argc++] = cv_replica_rid(e->r);
        argv[argc++] = texts[ntexts++];
        e->dirty = false;
        if (stopped)
            e->reported_stopped = true;
    }
    const char *rid;
    json_t *rep;
    json_object_foreach(n->bad, rid, rep)
    {
        texts[ntexts] = json_dumps(rep, JSON_COMPACT);
        argv[argc++] = rid;
        argv[argc++] = texts[ntexts++];
    }
    if (argc > 2)
        send_cmd(n, argc, argv, on_report_written);
    if (ndel > 2 && n->redis && cv_redis_connected(n->redis)) {
        send_cmd(n, ndel, del, on_report_written);
        for (size_t i = 0; i < ngone; i++) {
            entry_t *e = find(n, gone[i]);
            if (e)
                forget(n, e);
        }
    }
    for (size_t i = 0; i < ngone; i++)
        free(gone[i]);
    free(gone);
    for (int i = 0; i < ntexts; i++)
        free(texts[i]);
out:
    free(argv);
    free(texts);
    free(del);
}

static void on_flush_timer(uv_timer_t *t)
{
    flush(t->data, false);
}

static void on_changed(void *ud, cv_replica_t *r)
{
    cv_anode_t *n = ud;
    entry_t *e = find_replica(n, r);
    if (e)
        e->dirty = true;
    if (!uv_is_active((uv_handle_t *)&n->flush_timer))
        uv_timer_start(&n->flush_timer, on_flush_timer, 0, 0);
}

static void on_restarted(void *ud, cv_replica_t *r, const char *reason)
{
    cv_anode_t *n = ud;
    const cv_rspec_t *s = cv_replica_spec(r);
    char key[CV_KEY_MAX], now[32];
    if (!s->stack[0])
        return;
    cv_key(key, sizeof(key), CV_KEY_EVENTS, s->stack, 0, NULL);
    snprintf(now, sizeof(now), "%.3f", cv_now());
    const char *argv[] = {"XADD",        key,
                          "MAXLEN",      "~",
                          "200000",      "*",
                          "time",        now,
                          "resource",    s->service,
                          "physical_id", s->name,
                          "action",      "CHECK",
                          "status",      "IN_PROGRESS",
                          "reason",      reason,
                          "traversal",   "",
                          "worker",      n->conf.agent_id};
    send_cmd(n, (int)(sizeof(argv) / sizeof(argv[0])), argv, on_report_written);
}

static void on_ledger(void *ud, cv_replica_t *r, const char *what)
{
    cv_anode_t *n = ud;
    char field[512];
    snprintf(field, sizeof(field), "%s:%s", what, cv_replica_rid(r));
    const char *argv[] = {"HINCRBY", n->k_ledger, field, "1"};
    send_cmd(n, 4, argv, on_report_written);
}

/* ------------------------------------------------------------------------ */
/* Heartbeat and registration                                               */
/* ------------------------------------------------------------------------ */

static void on_heartbeat(cv_redis_t *r, redisReply *reply, void *ud)
{
    cv_anode_t *n = ud;
    (void)r;
    if (!reply || reply->type == REDIS_REPLY_ERROR)
        return;
    n->last_ok = cv_now();
    if (!n->conf.simulate)
        cv_guard_touch(n->conf.dir);
    if (n->fenced) {
        cv_info("node %s: Redis answers again: the fence is lifted", n->conf.name);
        n->fenced = false;
        /* Answers still due may have been computed before the cut (lost on
         * the way, delivered once it heals), older than the move of a
         * fenced replica: they would start it again beside its successor.
         * Only reads asked from now on count. */
        n->reads_trusted = n->reads_sent + 1;
        cv_anode_resync(n);
    }
}

static void heartbeat(cv_anode_t *n)
{
    char ttl[32], now[32], ports[32], fence[32], count[32];
    json_t *load = json_object();
    int running = 0;
    for (size_t i = 0; i < n->entries.n; i++) {
        cv_replica_add_load(n->entries.v[i].r, load);
        cv_replica_state_t st = cv_replica_state(n->entries.v[i].r);
        running += st == CV_RSTATE_RUNNING || st == CV_RSTATE_HEALTHY || st == CV_RSTATE_UNHEALTHY;
    }
    char *load_text = json_dumps(load, JSON_COMPACT);
    char *desc = json_dumps(n->conf.desc, JSON_COMPACT);
    json_decref(load);
    snprintf(ttl, sizeof(ttl), "%d", n->conf.heartbeat_ttl_ms);
    snprintf(now, sizeof(now), "%.3f", cv_now());
    snprintf(ports, sizeof(ports), "%d-%d", n->conf.port_lo, n->conf.port_hi);
    snprintf(fence, sizeof(fence), "%d", n->conf.fence_ms);
    snprintf(count, sizeof(count), "%d", running);
    char pid[32], started[32];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    snprintf(started, sizeof(started), "%.3f", n->started);
    const cv_sandbox_t *sb = n->conf.simulate ? NULL : n->conf.sb;
    const char *isolation = sb ? cv_iso_name(sb->iso) : "simulated";
    char allow[128] = "none";
    if (sb)
        cv_policy_names(sb->policy.allow, allow, sizeof(allow));
    const char *nodes[] = {"HSET", n->k_nodes, n->conf.name, desc ? desc : "{}"};
    const char *admin[] = {"HSETNX", n->k_node, "admin", "enabled"};
    const char *fields[] = {"HSET",         n->k_node,
                            "agent",        n->conf.agent_id,
                            "pid",          pid,
                            "started",      started,
                            "last_seen",    now,
                            "address",      n->conf.address,
                            "ports",        ports,
                            "fence_ms",     fence,
                            "load",         load_text ? load_text : "{}",
                            "replicas",     count,
                            "metrics",      cv_metrics_address(),
                            "isolation",    isolation,
                            "replica_user", n->conf.sb && !n->conf.simulate ? n->conf.sb->user : "",
                            "allow",        allow};
    const char *alive[] = {"SET", n->k_alive, n->conf.agent_id, "PX", ttl};
    send_cmd(n, 4, nodes, NULL);
    send_cmd(n, 4, admin, NULL);
    send_cmd(n, (int)(sizeof(fields) / sizeof(fields[0])), fields, NULL);
    if (n->conf.settings) {
        char *settings = json_dumps(n->conf.settings, JSON_COMPACT);
        const char *set[] = {"SET", n->k_settings, settings ? settings : "{}"};
        send_cmd(n, 3, set, NULL);
        free(settings);
    }
    send_cmd(n, 5, alive, on_heartbeat);
    free(load_text);
    free(desc);
}

static void on_hb_timer(uv_timer_t *t)
{
    heartbeat(t->data);
}

/* ------------------------------------------------------------------------ */
/* Assignments                                                              */
/* ------------------------------------------------------------------------ */

/* Stopped or failed by its restart policy: a verdict that a stop for the
 * agent's exit or a fence must not turn into "start it again". */
static bool settled(const entry_t *e)
{
    cv_replica_state_t st = cv_replica_state(e->r);
    return (st == CV_RSTATE_STOPPED || st == CV_RSTATE_FAILED) && !cv_replica_has_processes(e->r);
}

static void stop_entry(entry_t *e, const char *why, bool now)
{
    e->stopped_by_node = true;
    cv_replica_stop(e->r, why, now);
}

static void assign_one(cv_anode_t *n, const char *rid, const char *text)
{
    entry_t *e = find(n, rid);
    if (e) {
        e->assigned = true;
        if (e->stopped_by_node && cv_replica_stopped(e->r) && !n->fenced) {
            e->stopped_by_node = e->fenced = e->reported_stopped = false;
            cv_replica_start(e->r);
        }
        return;
    }
    if (json_object_get(n->bad, rid))
        return;
    char err[512];
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    cv_rspec_t spec;
    int rc = j ? cv_rspec_parse(j, &spec, err, sizeof(err)) : -1;
    if (!j)
        snprintf(err, sizeof(err), "replica spec: not JSON: %s", jerr.text);
    json_decref(j);
    if (rc == 0 && strcmp(spec.rid, rid) != 0) {
        snprintf(err, sizeof(err), "replica spec: rid: '%s' is not its field's '%s'", spec.rid,
                 rid);
        cv_rspec_free(&spec);
        rc = -1;
    }
    if (rc) {
        cv_warn("node %s: replica %s: %s", n->conf.name, rid, err);
        cv_report_t bad = {.rid = rid,
                           .state = CV_RSTATE_FAILED,
                           .reason = err,
                           .address = n->conf.address,
                           .since = cv_now()};
        json_object_set_new(n->bad, rid, cv_report_json(&bad));
        on_changed(n, NULL);
        return;
    }
    cv_replica_t *r = cv_replica_new(&n->host, &spec);
    if (!r || !add(n, r)) {
        cv_error("node %s: out of memory", n->conf.name);
        return;
    }
    cv_info("node %s: replica %s (%s) assigned", n->conf.name, rid, cv_replica_spec(r)->name);
    cv_replica_start(r);
}

static void on_report_keys(cv_redis_t *r, redisReply *reply, void *ud)
{
    cv_anode_t *n = ud;
    (void)r;
    if (!reply || reply->type != REDIS_REPLY_ARRAY)
        return;
    for (size_t i = 0; i < reply->elements; i++) {
        const char *rid = reply->element[i]->str;
        if (rid && !find(n, rid) && !json_object_get(n->bad, rid)) {
            const char *argv[] = {"HDEL", n->k_report, rid};
            send_cmd(n, 3, argv, NULL);
        }
    }
}

static void on_assignments(cv_redis_t *r, redisReply *reply, void *ud)
{
    cv_anode_t *n = ud;
    (void)r;
    bool stale = ++n->reads_answered < n->reads_trusted;
    if (!reply || reply->type != REDIS_REPLY_ARRAY || n->shutting || stale)
        return;
    for (size_t i = 0; i < n->entries.n; i++)
        n->entries.v[i].assigned = false;
    json_t *assigned = json_object();
    for (size_t i = 0; i + 1 < reply->elements; i += 2) {
        const char *rid = reply->element[i]->str, *text = reply->element[i + 1]->str;
        if (!rid || !text)
            continue;
        json_object_set_new(assigned, rid, json_true());
        assign_one(n, rid, text);
    }
    for (size_t i = 0; i < n->entries.n; i++) {
        entry_t *e = &n->entries.v[i];
        if (!e->assigned && !e->stopped_by_node)
            stop_entry(e, "no longer assigned to this node", false);
    }
    const char *rid;
    json_t *rep;
    void *tmp;
    json_object_foreach_safe(n->bad, tmp, rid, rep)
    {
        if (json_object_get(assigned, rid))
            continue;
        const char *argv[] = {"HDEL", n->k_report, rid};
        send_cmd(n, 3, argv, NULL);
        json_object_del(n->bad, rid);
    }
    json_decref(assigned);
    if (!n->swept) {
        /* Reports a previous run left of replicas it no longer has. */
        n->swept = true;
        const char *argv[] = {"HKEYS", n->k_report};
        send_cmd(n, 2, argv, on_report_keys);
    }
}

void cv_anode_resync(cv_anode_t *n)
{
    if (n->shutting)
        return;
    const char *argv[] = {"HGETALL", n->k_assign};
    if (send_cmd(n, 2, argv, on_assignments))
        n->reads_sent++;
}

/* ------------------------------------------------------------------------ */
/* Ticks, fence                                                             */
/* ------------------------------------------------------------------------ */

static void fence(cv_anode_t *n)
{
    double away_ms = (cv_now() - n->last_ok) * 1000;
    if (n->fenced || away_ms <= n->conf.fence_ms)
        return;
    n->fenced = true;
    char why[160];
    snprintf(why, sizeof(why), "fenced: Redis unreachable for %.0f ms (fence %d ms)", away_ms,
             n->conf.fence_ms);
    cv_warn("node %s: %s: stopping its stateful replicas", n->conf.name, why);
    for (size_t i = 0; i < n->entries.n; i++) {
        entry_t *e = &n->entries.v[i];
        if (cv_replica_spec(e->r)->stateful && !settled(e)) {
            e->fenced = true;
            stop_entry(e, why, true); /* no grace: it may run elsewhere soon */
        }
    }
}

/* While a stateful replica runs here, its fence guard runs too. */
static void guard_stateful(const cv_anode_t *n)
{
    for (size_t i = 0; !n->conf.simulate && i < n->entries.n; i++) {
        const entry_t *e = &n->entries.v[i];
        if (cv_replica_spec(e->r)->stateful && cv_replica_has_processes(e->r)) {
            cv_guard_ensure(n->conf.dir, n->conf.fence_ms);
            return;
        }
    }
}

static bool all_stopped(const cv_anode_t *n)
{
    for (size_t i = 0; i < n->entries.n; i++)
        if (cv_replica_has_processes(n->entries.v[i].r))
            return false;
    return true;
}

static void finish_shutdown(cv_anode_t *n)
{
    uv_timer_stop(&n->tick_timer);
    uv_timer_stop(&n->hb_timer);
    uv_timer_stop(&n->flush_timer);
    if (n->done) {
        void (*done)(void *) = n->done;
        n->done = NULL;
        done(n->done_ud);
    }
}

static void on_tick(uv_timer_t *t)
{
    cv_anode_t *n = t->data;
    bool full = ++n->ticks % TICKS_PER_SECOND == 0;
    for (size_t i = 0; i < n->entries.n; i++)
        cv_replica_tick(n->entries.v[i].r, full);
    if (n->shutting) {
        if (all_stopped(n)) {
            flush(n, false);
            finish_shutdown(n);
        }
        return;
    }
    fence(n);
    if (full) {
        guard_stateful(n);
        flush(n, true);
        cv_anode_resync(n);
    }
}

/* ------------------------------------------------------------------------ */
/* The node                                                                 */
/* ------------------------------------------------------------------------ */

/* Groups of replicas no state file names: their processes are orphans. */
static void sweep_cgroups(cv_anode_t *n)
{
    const cv_sandbox_t *sb = n->host.sb;
    const char **rids = sb ? calloc(n->entries.n + 1, sizeof(*rids)) : NULL;
    if (!rids)
        return;
    for (size_t i = 0; i < n->entries.n; i++)
        rids[i] = cv_replica_rid(n->entries.v[i].r);
    cv_cgroup_sweep(sb->iso, sb->key, rids, n->entries.n);
    free(rids);
}

/* What the previous agent run left in the state files: re-adopted. */
static void readopt(cv_anode_t *n)
{
    json_t *states = cv_state_load_all(n->conf.dir);
    size_t i;
    json_t *st;
    json_array_foreach(states, i, st)
    {
        char err[512];
        cv_rspec_t spec;
        if (cv_rspec_parse(json_object_get(st, "spec"), &spec, err, sizeof(err)) != 0) {
            cv_warn("node %s: state file of %s: %s", n->conf.name,
                    json_string_value(json_object_get(st, "rid")), err);
            continue;
        }
        cv_replica_t *r = cv_replica_new(&n->host, &spec);
        entry_t *e = r ? add(n, r) : NULL;
        if (!e)
            continue;
        cv_replica_adopt(r, st);
        /* Stopped for good by the previous run: the assignments say whether
         * it starts again (fenced, or stopped with the agent) or goes. */
        e->stopped_by_node = cv_replica_stopped(r);
    }
    json_decref(states);
    sweep_cgroups(n);
}

cv_anode_t *cv_anode_new(uv_loop_t *loop, cv_redis_t *redis, const cv_anode_conf_t *conf)
{
    cv_anode_t *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    n->loop = loop;
    n->redis = redis;
    n->conf = *conf;
    n->bad = json_object();
    n->started = n->last_ok = cv_now();
    cv_ports_init(&n->ports, conf->port_lo, conf->port_hi);
    n->host = (cv_rhost_t){.loop = loop,
                           .dir = conf->dir,
                           .node = conf->name,
                           .address = conf->address,
                           .agent_id = conf->agent_id,
                           .ports = &n->ports,
                           .log_cap = conf->log_cap,
                           .reset_s = conf->reset_s,
                           .simulate = conf->simulate,
                           .sb = conf->simulate ? NULL : conf->sb,
                           .ud = n,
                           .changed = on_changed,
                           .restarted = on_restarted,
                           .ledger = on_ledger};
    cv_key(n->k_nodes, sizeof(n->k_nodes), CV_KEY_NODES, NULL, 0, NULL);
    cv_key(n->k_settings, sizeof(n->k_settings), CV_KEY_SETTINGS, NULL, 0, NULL);
    cv_key(n->k_node, sizeof(n->k_node), CV_KEY_NODE, NULL, 0, conf->name);
    cv_key(n->k_alive, sizeof(n->k_alive), CV_KEY_ALIVE, NULL, 0, conf->name);
    cv_key(n->k_assign, sizeof(n->k_assign), CV_KEY_ASSIGN, NULL, 0, conf->name);
    cv_key(n->k_report, sizeof(n->k_report), CV_KEY_REPORT, NULL, 0, conf->name);
    cv_key(n->k_notify, sizeof(n->k_notify), CV_KEY_NOTIFY, NULL, 0, conf->name);
    cv_key(n->k_ledger, sizeof(n->k_ledger), CV_KEY_CLEDGER, NULL, 0, NULL);
    uv_timer_init(loop, &n->hb_timer);
    uv_timer_init(loop, &n->tick_timer);
    uv_timer_init(loop, &n->flush_timer);
    n->hb_timer.data = n->tick_timer.data = n->flush_timer.data = n;
    if (!conf->simulate)
        readopt(n);
    return n;
}

void cv_anode_set_redis(cv_anode_t *n, cv_redis_t *redis)
{
    n->redis = redis;
    cv_anode_resync(n);
}

const char *cv_anode_channel(const cv_anode_t *n)
{
    return n->k_notify;
}

void cv_anode_start(cv_anode_t *n)
{
    int every = n->conf.heartbeat_ttl_ms / 4;
    uv_timer_start(&n->hb_timer, on_hb_timer, 0, (uint64_t)(every > 10 ? every : 10));
    uv_timer_start(&n->tick_timer, on_tick, TICK_MS, TICK_MS);
    cv_anode_resync(n);
}

void cv_anode_shutdown(cv_anode_t *n, bool stop_replicas, void (*done)(void *ud), void *ud)
{
    n->shutting = true;
    n->done = done;
    n->done_ud = ud;
    uv_timer_stop(&n->hb_timer);
    if (!stop_replicas) {
        flush(n, false);
        finish_shutdown(n);
        return;
    }
    for (size_t i = 0; i < n->entries.n; i++)
        if (!settled(&n->entries.v[i]))
            stop_entry(&n->entries.v[i], "the agent is stopping", false);
}

static void on_closed(uv_handle_t *h)
{
    cv_anode_t *n = h->data;
    n->closing--;
    release(n);
}

void cv_anode_free(cv_anode_t *n)
{
    /* Replicas are freed without their state files: they may still run. */
    for (size_t i = 0; i < n->entries.n; i++)
        cv_replica_free(n->entries.v[i].r, false);
    cv_vec_free(&n->entries);
    json_decref(n->bad);
    cv_ports_free(&n->ports);
    n->freed = true;
    n->closing = 3;
    uv_close((uv_handle_t *)&n->hb_timer, on_closed);
    uv_close((uv_handle_t *)&n->tick_timer, on_closed);
    uv_close((uv_handle_t *)&n->flush_timer, on_closed);
}
