/*
 * Converge::Service, engine side: between the type's operation and the
 * write that records it (as child stacks are begun, engine_nested.c), the
 * service's spec goes into the cluster (svc_put.lua) and the live engine
 * reconciles it (cv_live_reconcile), so a recorded action always has its
 * service behind it; the observers then watch the replicas.
 *
 * Create and update: the metrics are checked against the live cluster
 * first (an unknown one fails the resource, nothing written), and the
 * stack's `upgrade` field read with them (`convergectl upgrade`: the spec's
 * update goes by upgrade domain, docs/crm.md); a rejection
 * by the live engine (the service cannot fit) is noted in the version's
 * data, which its observer fails with that reason — the action is
 * recorded, so the stack's delete still finds the service. Delete (the
 * current version, or replaced ones): the service is marked deleting and
 * reconciled; its agents stop the processes.
 *
 * A crash anywhere here is retried by the job's redelivery: the version's
 * uuid names the same service, and svc_put.lua changes nothing for a spec
 * it holds already.
 */
#include "engine_check.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_live.h"
#include "cv_io.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void next_op(check_t *c);

static json_t *current_op(const check_t *c)
{
    return json_array_get(c->services, 0);
}

static void op_done(check_t *c)
{
    json_array_remove(c->services, 0);
    next_op(c);
}

static void fail_op(check_t *c, const char *why)
{
    char status[32], reason[CV_REASON_MAX + CV_NAME_MAX + 32];
    snprintf(status, sizeof(status), "%s_FAILED", c->out.action);
    snprintf(reason, sizeof(reason), "resources.%s: %s", c->run.msg.resource, why);
    cv__check_fail(c, status, c->out.action, reason);
}

/* ---- planning: which versions this action puts or deletes ---- */

static void add_op(check_t *c, const char *op, const char *svc)
{
    if (!svc || !svc[0])
        return;
    if (!c->services)
        c->services = json_array();
    json_array_append_new(c->services, json_pack("{s:s, s:s}", "op", op, "svc", svc));
}

void cv__service_plan(check_t *c)
{
    const cv_check_outcome_t *o = &c->out;
    size_t i;
    const json_t *index;
    json_array_foreach(o->deletes, i, index)
    {
        const json_t *e = json_array_get(o->old, (size_t)json_integer_value(index));
        if (cv_service_is(json_string_value(json_object_get(e, "type"))))
            add_op(c, "delete", json_string_value(json_object_get(e, "physical_id")));
    }
    if (!cv_service_is(o->type_name))
        return;
    switch (o->kind) {
    case CV_CHECK_CREATE:
    case CV_CHECK_REPLACE:
    case CV_CHECK_UPDATE:
        if (!o->external_id[0]) /* an adopted service is the cluster's as it is */
            add_op(c, "put", c->st.physical_id);
        break;
    case CV_CHECK_DELETE_CURRENT:
        add_op(c, "delete", c->in.rec.physical_id);
        break;
    default:
        break;
    }
}

/* ---- reconcile, then the next one ---- */

static void on_reconciled(void *arg, int rc, const char *err)
{
    check_t *c = arg;
    json_t *op = current_op(c);
    bool put = strcmp(json_string_value(json_object_get(op, "op")), "put") == 0;
    if (rc == CV_EVALIDATE && put) {
        cv_info("stack %s resource %s: service rejected: %s", c->run.msg.stack, c->run.msg.resource,
                err ? err : "");
        json_object_set_new(c->st.data, "rejected", json_string(err && err[0] ? err : "rejected"));
    } else if (rc != 0 && rc != CV_EVALIDATE) {
        cv_warn("stack %s resource %s: reconcile: %s", c->run.msg.stack, c->run.msg.resource,
                err ? err : cv_strerror(rc));
        cv__check_backoff(c);
        return;
    }
    op_done(c);
}

static void on_put(cv_redis_t *r, redisReply *rep, void *ud)
{
    check_t *c = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_SVC_PUT, rep);
    if (answer == CV_ANSWER_NONE) { /* nothing to delete */
        op_done(c);
        return;
    }
    if (answer != CV_ANSWER_OK) {
        if (rep && rep->type == REDIS_REPLY_ERROR)
            cv_warn("svc_put: %s", rep->str);
        cv__check_backoff(c);
        return;
    }
    const char *svc = json_string_value(json_object_get(current_op(c), "svc"));
    cv_live_reconcile(c->run.w, svc, on_reconciled, c);
}

static void put(check_t *c, const char *spec_text, const char *state)
{
    const char *svc = json_string_value(json_object_get(current_op(c), "svc"));
    char key[CV_KEY_MAX], services[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, svc);
    cv_key(services, sizeof(services), CV_KEY_SERVICES, NULL, 0, NULL);
    cv_svc_put_keys_t k = {.svc = key, .services = services};
    cv_svc_put_args_t a = {.svc_id = svc,
                           .spec = spec_text,
                           .state = state,
                           .stack = c->run.msg.stack,
                           .stack_name = c->in.stack_name,
                           .resource = c->run.msg.resource};
    if (cv_redis_call(c->run.w->redis, CV_SCRIPT_SVC_PUT, k.v, a.v, 0, NULL, NULL, on_put, c) != 0)
        cv__check_backoff(c);
}

/* ---- create / update: check, then put ---- */

static void put_spec(check_t *c, json_t *spec)
{
    char *text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) {
        cv__check_backoff(c);
        return;
    }
    json_object_set_new(c->st.data, "stack_name", json_string(c->in.stack_name));
    put(c, text, "active");
    free(text);
}

/* The position of metric `name` in the properties, for the message. */
static size_t metric_index(const json_t *props, const char *name)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(props, "metrics"), i, m)
    {
        if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
            return i;
    }
    return 0;
}

static void check_metrics(check_t *c, const json_t *settings, const json_t *nodes, bool upgrade)
{
    json_t *op = current_op(c);
    json_t *spec = json_object_get(op, "spec");
    if (upgrade)
        cv_service_by_upgrade_domain(spec);
    const char *unknown = cv_service_unknown_metric(spec, settings, nodes);
    if (unknown) {
        char why[CV_REASON_MAX];
        snprintf(why, sizeof(why),
                 "properties.metrics[%zu].name: unknown metric \"%s\": no node or node type of "
                 "the cluster has a capacity of that name",
                 metric_index(c->out.props, unknown), unknown);
        fail_op(c, why);
        return;
    }
    put_spec(c, spec);
}

/* The cluster's settings and nodes, and whether the stack's update goes by
 * upgrade domain (its `upgrade` field: `convergectl upgrade`), read in one
 * loop turn. */
typedef struct cluster_read {
    check_t *c;
    json_t *settings, *nodes;
    int pending;
    bool failed, upgrade;
} cluster_read_t;

static void cluster_read_done(cluster_read_t *cr)
{
    if (--cr->pending > 0)
        return;
    if (cr->failed)
        cv__check_backoff(cr->c);
    else
        check_metrics(cr->c, cr->settings, cr->nodes, cr->upgrade);
    json_decref(cr->settings);
    json_decref(cr->nodes);
    free(cr);
}

static void on_settings(cv_redis_t *r, redisReply *rep, void *ud)
{
    cluster_read_t *cr = ud;
    (void)r;
    if (!rep || rep->type == REDIS_REPLY_ERROR)
        cr->failed = true;
    else if (rep->type == REDIS_REPLY_STRING)
        cr->settings = json_loads(rep->str, 0, NULL);
    cluster_read_done(cr);
}

static void on_nodes(cv_redis_t *r, redisReply *rep, void *ud)
{
    cluster_read_t *cr = ud;
    (void)r;
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        cr->failed = true;
    } else {
        cr->nodes = json_array();
        for (size_t i = 0; i < rep->elements; i++) {
            json_t *n = json_loads(cv_reply_str(rep, i), 0, NULL);
            if (n)
                json_array_append_new(cr->nodes, n);
        }
    }
    cluster_read_done(cr);
}

static void on_upgrade(cv_redis_t *r, redisReply *rep, void *ud)
{
    cluster_read_t *cr = ud;
    (void)r;
    if (!rep || rep->type == REDIS_REPLY_ERROR)
        cr->failed = true;
    else
        cr->upgrade = rep->type == REDIS_REPLY_STRING && strcmp(rep->str, "1") == 0;
    cluster_read_done(cr);
}

static void begin_put(check_t *c)
{
    json_t *op = current_op(c);
    char err[CV_REASON_MAX];
    json_t *spec = cv_service_spec(c->out.props, json_string_value(json_object_get(op, "svc")),
                                   c->run.msg.resource, err, sizeof(err));
    if (!spec) {
        fail_op(c, err);
        return;
    }
    json_object_set_new(op, "spec", spec);
    cluster_read_t *cr = calloc(1, sizeof(*cr));
    if (!cr) {
        cv__check_backoff(c);
        return;
    }
    char settings[CV_KEY_MAX], nodes[CV_KEY_MAX];
    cv_key(settings, sizeof(settings), CV_KEY_SETTINGS, NULL, 0, NULL);
    cv_key(nodes, sizeof(nodes), CV_KEY_NODES, NULL, 0, NULL);
    const char *get[] = {"GET", settings}, *hvals[] = {"HVALS", nodes};
    cr->c = c;
    cr->pending = 1;
    if (cv_redis_argv(c->run.w->redis, 2, get, NULL, on_settings, cr) == 0)
        cr->pending++;
    else
        cr->failed = true;
    if (cv_redis_argv(c->run.w->redis, 2, hvals, NULL, on_nodes, cr) == 0)
        cr->pending++;
    else
        cr->failed = true;
    char stack[CV_KEY_MAX];
    cv_key(stack, sizeof(stack), CV_KEY_STACK, c->run.msg.stack, 0, NULL);
    const char *hget[] = {"HGET", stack, "upgrade"};
    if (cv_redis_argv(c->run.w->redis, 3, hget, NULL, on_upgrade, cr) == 0)
        cr->pending++;
    else
        cr->failed = true;
    cluster_read_done(cr); /* drops the count that kept it alive while sending */
}

static void next_op(check_t *c)
{
    json_t *op = current_op(c);
    if (!op) {
        json_decref(c->services);
        c->services = NULL;
        cv__check_record(c);
        return;
    }
    if (strcmp(json_string_value(json_object_get(op, "op")), "put") == 0)
        begin_put(c);
    else
        put(c, "", "deleting");
}

void cv__service_begin(check_t *c)
{
    next_op(c);
}
