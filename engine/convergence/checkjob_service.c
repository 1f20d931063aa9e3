/*
 * Converge::Service in the CHECK step machine: between the type's
 * operation and the write that records it (as child stacks are begun,
 * checkjob_nested.c), the service's spec goes into the cluster
 * (svc_put.lua) and the live engine reconciles it (a RECONCILE answer), so
 * a recorded action always has its service behind it; the observers then
 * watch the replicas.
 *
 * Create and update: the metrics are checked against the live cluster
 * first (an unknown one fails the resource, nothing written), and the
 * stack's `upgrade` field read with them (`convergectl upgrade`: the spec's
 * update goes by upgrade domain, docs/crm.md); a rejection by the live
 * engine (the service cannot fit) is noted in the version's data, which
 * its observer fails with that reason — the action is recorded, so the
 * stack's delete still finds the service. Delete (the current version, or
 * replaced ones): the service is marked deleting and reconciled; its
 * agents stop the processes.
 *
 * A crash anywhere here is retried by the job's redelivery: the version's
 * uuid names the same service, and svc_put.lua changes nothing for a spec
 * it holds already.
 */
#include "cv__checkjob.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *current_op(const cv_checkjob_t *j)
{
    return json_array_get(j->services, 0);
}

static const char *op_svc(const cv_checkjob_t *j)
{
    return json_string_value(json_object_get(current_op(j), "svc"));
}

static bool op_is_put(const cv_checkjob_t *j)
{
    return strcmp(json_string_value(json_object_get(current_op(j), "op")), "put") == 0;
}

static const cv_flow_t *op_done(cv_checkjob_t *j)
{
    json_array_remove(j->services, 0);
    return cv__checkjob_services(j);
}

static const cv_flow_t *fail_op(cv_checkjob_t *j, const char *why)
{
    char status[32], reason[CV_REASON_MAX + CV_NAME_MAX + 32];
    snprintf(status, sizeof(status), "%s_FAILED", j->out.action);
    snprintf(reason, sizeof(reason), "resources.%s: %s", j->msg.resource, why);
    return cv__checkjob_fail(j, status, j->out.action, reason);
}

/* ---- planning: which versions this action puts or deletes ---- */

static void add_op(cv_checkjob_t *j, const char *op, const char *svc)
{
    if (!svc || !svc[0])
        return;
    if (!j->services)
        j->services = json_array();
    json_array_append_new(j->services, json_pack("{s:s, s:s}", "op", op, "svc", svc));
}

void cv__checkjob_plan_services(cv_checkjob_t *j)
{
    const cv_check_outcome_t *o = &j->out;
    size_t i;
    const json_t *index;
    json_array_foreach(o->deletes, i, index)
    {
        const json_t *e = json_array_get(o->old, (size_t)json_integer_value(index));
        if (cv_service_is(json_string_value(json_object_get(e, "type"))))
            add_op(j, "delete", json_string_value(json_object_get(e, "physical_id")));
    }
    if (!cv_service_is(o->type_name))
        return;
    switch (o->kind) {
    case CV_CHECK_CREATE:
    case CV_CHECK_REPLACE:
    case CV_CHECK_UPDATE:
        if (!o->external_id[0]) /* an adopted service is the cluster's as it is */
            add_op(j, "put", j->st.physical_id);
        break;
    case CV_CHECK_DELETE_CURRENT:
        add_op(j, "delete", j->in.rec.physical_id);
        break;
    default:
        break;
    }
}

/* ---- svc_put, then the reconcile ---- */

/* `spec` (JSON text, freed with the answer; "" for a delete) in state `state`. */
static const cv_flow_t *put(cv_checkjob_t *j, const char *spec, const char *state)
{
    cv_call_t *call = cv__flow_call(&j->buf, true);
    if (!call)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    cv_call_svc_put(call, op_svc(j), spec, state, j->msg.stack, j->in.stack_name, j->msg.resource);
    j->state = CV_CHECKJOB_SVC_PUT;
    return cv__checkjob_end(j, CV_FLOW_IO);
}

const cv_flow_t *cv__checkjob_svc_put(cv_checkjob_t *j, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    cv_answer_t answer = cv_resp_answer(CV_SCRIPT_SVC_PUT, rep);
    if (answer == CV_ANSWER_NONE) /* nothing to delete */
        return op_done(j);
    if (answer != CV_ANSWER_OK) {
        if (cv_resp_error(rep))
            cv__flow_log(&j->buf, CV_FLOW_WARN, "svc_put: %s", cv_resp_error(rep));
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    }
    j->buf.a.svc = op_svc(j);
    j->state = CV_CHECKJOB_RECONCILE;
    return cv__checkjob_end(j, CV_FLOW_RECONCILE);
}

const cv_flow_t *cv__checkjob_reconciled(cv_checkjob_t *j, const cv_flow_in_t *in)
{
    if (in->rc == CV_EVALIDATE && op_is_put(j)) {
        const char *why = in->why ? in->why : "";
        cv__flow_log(&j->buf, CV_FLOW_INFO, "stack %s resource %s: service rejected: %s",
                     j->msg.stack, j->msg.resource, why);
        json_object_set_new(j->st.data, "rejected", json_string(why[0] ? why : "rejected"));
    } else if (in->rc != 0 && in->rc != CV_EVALIDATE) {
        cv__flow_log(&j->buf, CV_FLOW_WARN, "stack %s resource %s: reconcile: %s", j->msg.stack,
                     j->msg.resource, in->why ? in->why : cv_strerror(in->rc));
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    }
    return op_done(j);
}

/* ---- create / update: the metrics checked against the cluster, then put ---- */

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

static const cv_flow_t *check_metrics(cv_checkjob_t *j, const json_t *settings, const json_t *nodes,
                                      bool upgrade)
{
    json_t *spec = json_object_get(current_op(j), "spec");
    if (upgrade)
        cv_service_by_upgrade_domain(spec);
    const char *unknown = cv_service_unknown_metric(spec, settings, nodes);
    if (unknown) {
        char why[CV_REASON_MAX];
        snprintf(why, sizeof(why),
                 "properties.metrics[%zu].name: unknown metric \"%s\": no node or node type of "
                 "the cluster has a capacity of that name",
                 metric_index(j->out.props, unknown), unknown);
        return fail_op(j, why);
    }
    char *text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text || !cv__flow_own(&j->buf, text))
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    json_object_set_new(j->st.data, "stack_name", json_string(j->in.stack_name));
    return put(j, text, "active");
}

static json_t *nodes_of(const cv_resp_t *rep)
{
    json_t *nodes = json_array();
    for (size_t i = 0; i < rep->elements; i++) {
        json_t *n = json_loads(cv_resp_str(rep, i), 0, NULL);
        if (n)
            json_array_append_new(nodes, n);
    }
    return nodes;
}

/* The cluster's settings and nodes, and whether the stack's update goes by
 * upgrade domain (its `upgrade` field: `convergectl upgrade`), read in one
 * round trip. */
const cv_flow_t *cv__checkjob_cluster_read(cv_checkjob_t *j, const cv_flow_in_t *in)
{
    const cv_resp_t *settings = cv_flow_reply(in, 0), *nodes = cv_flow_reply(in, 1),
                    *upgrade = cv_flow_reply(in, 2);
    if (!settings || settings->type == CV_RESP_ERROR || !nodes || nodes->type != CV_RESP_ARRAY ||
        !upgrade || upgrade->type == CV_RESP_ERROR)
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    json_t *s = settings->type == CV_RESP_STRING ? json_loads(settings->str, 0, NULL) : NULL;
    json_t *n = nodes_of(nodes);
    bool by_domain = upgrade->type == CV_RESP_STRING && strcmp(upgrade->str, "1") == 0;
    const cv_flow_t *a = check_metrics(j, s, n, by_domain);
    json_decref(s);
    json_decref(n);
    return a;
}

static const cv_flow_t *begin_put(cv_checkjob_t *j)
{
    char err[CV_REASON_MAX];
    json_t *spec = cv_service_spec(j->out.props, op_svc(j), j->msg.resource, err, sizeof(err));
    if (!spec)
        return fail_op(j, err);
    json_object_set_new(current_op(j), "spec", spec);
    char settings[CV_KEY_MAX], nodes[CV_KEY_MAX], stack[CV_KEY_MAX];
    cv_key(settings, sizeof(settings), CV_KEY_SETTINGS, NULL, 0, NULL);
    cv_key(nodes, sizeof(nodes), CV_KEY_NODES, NULL, 0, NULL);
    cv_key(stack, sizeof(stack), CV_KEY_STACK, j->msg.stack, 0, NULL);
    const char *get[] = {"GET", settings}, *hvals[] = {"HVALS", nodes},
               *hget[] = {"HGET", stack, "upgrade"};
    if (cv__flow_argv(&j->buf, true, 2, get) || cv__flow_argv(&j->buf, true, 2, hvals) ||
        cv__flow_argv(&j->buf, true, 3, hget))
        return cv__checkjob_end(j, CV_FLOW_RETRY);
    j->state = CV_CHECKJOB_CLUSTER;
    return cv__checkjob_end(j, CV_FLOW_IO);
}

const cv_flow_t *cv__checkjob_services(cv_checkjob_t *j)
{
    if (!current_op(j)) {
        json_decref(j->services);
        j->services = NULL;
        return cv__checkjob_record(j);
    }
    if (op_is_put(j))
        return begin_put(j);
    return put(j, "", "deleting");
}
