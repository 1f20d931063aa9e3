/*
 * Reading the cluster state of Converge::Service versions for their
 * observation: one svc_look.lua per service (the {cluster} slot), all sent
 * in one loop turn and so pipelined, each reply turned into the snapshot
 * cv_service.h describes, which the type's observe() decides from.
 */
#include "observer.h"

#include "cv_contract.h"

#include <stdlib.h>
#include <string.h>

static json_t *json_or(const char *text, json_t *dflt)
{
    json_t *v = json_loads(text, 0, NULL);
    if (!v)
        return dflt;
    json_decref(dflt);
    return v;
}

static json_t *nodes_of(const redisReply *flat)
{
    json_t *nodes = json_object();
    for (size_t i = 0; flat && flat->type == REDIS_REPLY_ARRAY && i + 2 < flat->elements; i += 3) {
        json_object_set_new(nodes, cv_reply_str(flat, i),
                            json_pack("{s:b, s:s}", "up",
                                      strcmp(cv_reply_str(flat, i + 1), "1") == 0, "address",
                                      cv_reply_str(flat, i + 2)));
    }
    return nodes;
}

/* rid -> report, each with the node that reported it added as "node". */
static json_t *reports_of(const redisReply *flat)
{
    json_t *reports = json_object();
    for (size_t i = 0; flat && flat->type == REDIS_REPLY_ARRAY && i + 2 < flat->elements; i += 3) {
        json_t *report = json_loads(cv_reply_str(flat, i + 2), 0, NULL);
        if (!json_is_object(report)) {
            json_decref(report);
            report = json_object();
        }
        json_object_set_new(report, "node", json_string(cv_reply_str(flat, i)));
        json_object_set_new(reports, cv_reply_str(flat, i + 1), report);
    }
    return reports;
}

/* Why the live engine rejected the service, or why it waits for nothing
 * but its blocklist: the text, or the description of the JSON object it
 * stores ({"reason", "description", ...}); "" when neither (absent, empty
 * or null). */
static json_t *why_of(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v)
        return json_string(text);
    const char *desc = json_string_value(json_object_get(v, "description"));
    if (!desc)
        desc = json_string_value(json_object_get(v, "reason"));
    json_t *why = json_string(json_is_string(v) ? json_string_value(v) : desc ? desc : "");
    json_decref(v);
    return why;
}

static json_t *snapshot(const redisReply *rep)
{
    const char *state = cv_reply_str(rep, CV_SVC_LOOK_R_STATE);
    return json_pack("{s:b, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "exists",
                     state[0] != '\0', "state", state, "gen",
                     (json_int_t)strtoll(cv_reply_str(rep, CV_SVC_LOOK_R_GEN), NULL, 10),
                     "placement", json_or(cv_reply_str(rep, CV_SVC_LOOK_R_PLACEMENT), json_array()),
                     "unplaced", json_or(cv_reply_str(rep, CV_SVC_LOOK_R_UNPLACED), json_array()),
                     "rejected", why_of(cv_reply_str(rep, CV_SVC_LOOK_R_REJECTED)), "blocked",
                     why_of(cv_reply_str(rep, CV_SVC_LOOK_R_BLOCKED)), "nodes",
                     nodes_of(cv_reply_at(rep, CV_SVC_LOOK_R_NODES)), "reports",
                     reports_of(cv_reply_at(rep, CV_SVC_LOOK_R_REPORTS)), "rollout",
                     json_or(cv_reply_str(rep, CV_SVC_LOOK_R_ROLLOUT), json_null()));
}

static void on_reply(cv_redis_t *r, redisReply *rep, void *ud)
{
    (void)r;
    bool ok = rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == CV_SVC_LOOK_R_BLOCKED + 1;
    cv__gather_put(ud, ok ? snapshot(rep) : NULL);
}

static void send_look(cv_worker_t *w, cv__gather_t *g, const char *svc, bool all)
{
    cv__gather_req_t *req = cv__gather_request(g, svc);
    if (!req)
        return;
    char key[CV_KEY_MAX], nodes[CV_KEY_MAX], node[CV_KEY_MAX], alive[CV_KEY_MAX],
        report[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, svc);
    cv_key(nodes, sizeof(nodes), CV_KEY_NODES, NULL, 0, NULL);
    cv_key_prefix(node, sizeof(node), CV_KEY_NODE, NULL, 0);
    cv_key_prefix(alive, sizeof(alive), CV_KEY_ALIVE, NULL, 0);
    cv_key_prefix(report, sizeof(report), CV_KEY_REPORT, NULL, 0);
    cv_svc_look_keys_t k = {.svc = key, .nodes = nodes};
    cv_svc_look_args_t a = {.svc_id = cv__gather_name(req),
                            .node_prefix = node,
                            .alive_prefix = alive,
                            .report_prefix = report,
                            .all = all ? "1" : "0"};
    if (cv_redis_call(w->redis, CV_SCRIPT_SVC_LOOK, k.v, a.v, 0, NULL, NULL, on_reply, req) != 0)
        cv__gather_put(req, NULL);
}

int cv__observer_read_services(cv_worker_t *w, const json_t *wants, cv_services_cb cb, void *ud)
{
    cv__gather_t *g = cv__gather_new(cb, ud);
    if (!g)
        return -1;
    const char *svc;
    const json_t *all;
    json_object_foreach((json_t *)wants, svc, all)
    {
        send_look(w, g, svc, json_is_true(all));
    }
    cv__gather_sent(g); /* drops the count that kept it alive while sending */
    return 0;
}
