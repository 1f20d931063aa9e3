/*
 * live_read — the live model in two pipelined rounds: first the cluster's
 * indexes (TIME, the nodes hash, the settings with the operator's `crm
 * settings` laid over them, the services set, the health
 * reports), then per node its heartbeat, down mark, admin hash, assignments
 * and reports, and per service its record and the loads reported for its
 * replicas ({cluster}:load:<svc>, parsed: services.<svc>.loads, docs/crm.md
 * "Dynamic load"). Other values stay the strings Redis holds; the planner
 * parses the JSON ones. One reply lost (the connection
 * dropped) fails the read: a plan on a partial model could unassign what it
 * did not see.
 */
#include "live_internal.h"

#include "cv_base.h"
#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct read_state {
    cv_worker_t *w;
    cv__live_model_cb cb;
    void *arg;
    json_t *model;
    int pending;
    bool failed;
} read_state_t;

typedef enum {
    R_TIME,
    R_NODES,
    R_SETTINGS,
    R_CRM_SETTINGS,
    R_SERVICES,
    R_HEALTH,
    R_ALIVE,
    R_DOWN,
    R_NODE,
    R_ASSIGN,
    R_REPORT,
    R_SVC,
    R_LOAD
} read_kind_t;

typedef struct read_req {
    read_state_t *st;
    read_kind_t kind;
    char name[256];
} read_req_t;

json_t *cv__live_pairs(const redisReply *rep)
{
    json_t *obj = json_object();
    for (size_t i = 0; rep && rep->type == REDIS_REPLY_ARRAY && i + 1 < rep->elements; i += 2) {
        const redisReply *k = rep->element[i], *v = rep->element[i + 1];
        if (k->type == REDIS_REPLY_STRING && v->type == REDIS_REPLY_STRING)
            json_object_set_new(obj, k->str, json_stringn(v->str, v->len));
    }
    return obj;
}

static void second_round(read_state_t *st);

/* The settings an operator set ({cluster}:crm:settings, `convergectl crm
 * settings`) laid over the cluster file's `crm` object, key by key: the
 * model's settings become an object. Text that is not an object is left
 * out (the CLI stores only checked objects). */
static void lay_over_crm(json_t *model, const char *text)
{
    json_t *over = json_loads(text, 0, NULL);
    if (!json_is_object(over)) {
        json_decref(over);
        return;
    }
    const json_t *stored = json_object_get(model, "settings");
    json_t *settings = json_is_string(stored) ? json_loads(json_string_value(stored), 0, NULL)
                                              : json_deep_copy(stored);
    if (!json_is_object(settings)) {
        json_decref(settings);
        settings = json_object();
    }
    json_t *crm = json_object_get(settings, "crm");
    if (!json_is_object(crm)) {
        crm = json_object();
        json_object_set_new(settings, "crm", crm);
    }
    json_object_update(crm, over);
    json_decref(over);
    json_object_set_new(model, "settings", settings);
}

static void finish(read_state_t *st)
{
    if (st->failed) {
        json_decref(st->model);
        st->cb(st->arg, NULL, CV_EREDIS, "Redis: the live model could not be read");
    } else {
        st->cb(st->arg, st->model, 0, "");
    }
    free(st);
}

static json_t *node_obj(read_state_t *st, const char *node)
{
    json_t *nodes = json_object_get(st->model, "nodes");
    json_t *n = json_object_get(nodes, node);
    if (!n) {
        n = json_pack("{s:b, s:{}, s:{}}", "alive", 0, "assign", "report");
        json_object_set_new(nodes, node, n);
    }
    return n;
}

json_t *cv__live_loads(const redisReply *rep)
{
    json_t *pairs = cv__live_pairs(rep), *loads = json_object();
    const char *index;
    json_t *v;
    json_object_foreach(pairs, index, v)
    {
        json_t *parsed = json_loads(json_string_value(v), 0, NULL);
        json_t *clean = json_object();
        const char *metric;
        json_t *x;
        json_object_foreach(parsed, metric, x)
        {
            if (json_is_number(x))
                json_object_set(clean, metric, x);
        }
        json_decref(parsed);
        if (json_object_size(clean) > 0)
            json_object_set_new(loads, index, clean);
        else
            json_decref(clean);
    }
    json_decref(pairs);
    return loads;
}

static void store(read_state_t *st, read_kind_t kind, const char *name, const redisReply *rep)
{
    json_t *m = st->model;
    switch (kind) {
    case R_TIME:
        if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2)
            json_object_set_new(m, "now",
                                json_real(strtod(rep->element[0]->str, NULL) +
                                          strtod(rep->element[1]->str, NULL) / 1e6));
        break;
    case R_NODES: {
        json_t *descs = cv__live_pairs(rep);
        const char *node;
        json_t *d;
        json_object_foreach(descs, node, d)
        {
            json_object_set(node_obj(st, node), "description", d);
        }
        json_decref(descs);
        break;
    }
    case R_SETTINGS:
        if (rep->type == REDIS_REPLY_STRING)
            json_object_set_new(m, "settings", json_stringn(rep->str, rep->len));
        break;
    case R_CRM_SETTINGS: /* answered after R_SETTINGS: sent after it */
        if (rep->type == REDIS_REPLY_STRING)
            lay_over_crm(m, rep->str);
        break;
    case R_SERVICES:
        for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++)
            if (rep->element[i]->type == REDIS_REPLY_STRING)
                json_object_set_new(json_object_get(m, "services"), rep->element[i]->str,
                                    json_object());
        break;
    case R_HEALTH:
        json_object_set_new(m, "health", cv__live_pairs(rep));
        break;
    case R_ALIVE:
        json_object_set_new(node_obj(st, name), "alive",
                            json_boolean(rep->type == REDIS_REPLY_INTEGER && rep->integer == 1));
        break;
    case R_DOWN:
        if (rep->type == REDIS_REPLY_STRING)
            json_object_set_new(node_obj(st, name), "down_since",
                                json_real(strtod(rep->str, NULL)));
        break;
    case R_NODE: {
        json_t *h = cv__live_pairs(rep), *n = node_obj(st, name);
        json_object_set(n, "admin", json_object_get(h, "admin"));
        json_object_set(n, "fence_ms", json_object_get(h, "fence_ms"));
        json_object_set(n, "load", json_object_get(h, "load"));
        json_decref(h);
        break;
    }
    case R_ASSIGN:
        json_object_set_new(node_obj(st, name), "assign", cv__live_pairs(rep));
        break;
    case R_REPORT:
        json_object_set_new(node_obj(st, name), "report", cv__live_pairs(rep));
        break;
    case R_LOAD: {
        /* Replies come in order: the service's record is in the model
         * already, or the service is gone and its loads go with it. */
        json_t *svc = json_object_get(json_object_get(m, "services"), name);
        if (svc)
            json_object_set_new(svc, "loads", cv__live_loads(rep));
        break;
    }
    case R_SVC: {
        json_t *h = cv__live_pairs(rep);
        if (json_object_size(h) > 0)
            json_object_set_new(json_object_get(m, "services"), name, h);
        else {
            json_object_del(json_object_get(m, "services"), name);
            json_decref(h);
        }
        break;
    }
    }
}

static void on_reply(cv_redis_t *r, redisReply *rep, void *ud)
{
    read_req_t *q = ud;
    read_state_t *st = q->st;
    (void)r;
    if (!rep || rep->type == REDIS_REPLY_ERROR)
        st->failed = true;
    else
        store(st, q->kind, q->name, rep);
    bool first_round = q->kind <= R_HEALTH;
    free(q);
    if (--st->pending > 0)
        return;
    if (first_round && !st->failed)
        second_round(st);
    else
        finish(st);
}

static void send_cmd(read_state_t *st, read_kind_t kind, const char *name, int argc,
                     const char **argv)
{
    read_req_t *q = calloc(1, sizeof(*q));
    if (!q) {
        st->failed = true;
        return;
    }
    q->st = st;
    q->kind = kind;
    snprintf(q->name, sizeof(q->name), "%s", name ? name : "");
    st->pending++;
    if (cv_redis_argv(st->w->redis, argc, argv, NULL, on_reply, q) != 0) {
        st->pending--;
        st->failed = true;
        free(q);
    }
}

static void send_key(read_state_t *st, read_kind_t kind, const char *cmd, cv_key_kind_t key,
                     const char *name)
{
    char k[CV_KEY_MAX];
    cv_key(k, sizeof(k), key, NULL, 0, name);
    const char *argv[] = {cmd, k};
    send_cmd(st, kind, name, 2, argv);
}

static void second_round(read_state_t *st)
{
    st->pending = 1; /* held until every command is sent */
    const char *name;
    json_t *v;
    json_object_foreach(json_object_get(st->model, "nodes"), name, v)
    {
        send_key(st, R_ALIVE, "EXISTS", CV_KEY_ALIVE, name);
        send_key(st, R_DOWN, "GET", CV_KEY_DOWN, name);
        send_key(st, R_NODE, "HGETALL", CV_KEY_NODE, name);
        send_key(st, R_ASSIGN, "HGETALL", CV_KEY_ASSIGN, name);
        send_key(st, R_REPORT, "HGETALL", CV_KEY_REPORT, name);
    }
    json_object_foreach(json_object_get(st->model, "services"), name, v)
    {
        send_key(st, R_SVC, "HGETALL", CV_KEY_SVC, name);
        send_key(st, R_LOAD, "HGETALL", CV_KEY_LOAD, name);
    }
    if (--st->pending == 0)
        finish(st);
}

void cv__live_read(cv_worker_t *w, cv__live_model_cb cb, void *arg)
{
    read_state_t *st = calloc(1, sizeof(*st));
    if (!st) {
        cb(arg, NULL, CV_ENOMEM, "out of memory");
        return;
    }
    st->w = w;
    st->cb = cb;
    st->arg = arg;
    st->model = json_pack("{s:f, s:{}, s:{}, s:{}, s:{}}", "now", 0.0, "settings", "nodes",
                          "services", "health");
    st->pending = 1;
    const char *time_argv[] = {"TIME"};
    send_cmd(st, R_TIME, NULL, 1, time_argv);
    send_key(st, R_NODES, "HGETALL", CV_KEY_NODES, NULL);
    send_key(st, R_SETTINGS, "GET", CV_KEY_SETTINGS, NULL);
    send_key(st, R_CRM_SETTINGS, "GET", CV_KEY_CRM_SETTINGS, NULL);
    send_key(st, R_SERVICES, "SMEMBERS", CV_KEY_SERVICES, NULL);
    send_key(st, R_HEALTH, "HGETALL", CV_KEY_HEALTH, NULL);
    if (--st->pending > 0)
        return;
    if (st->failed)
        finish(st);
    else
        second_round(st);
}
