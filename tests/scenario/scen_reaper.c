/*
 * The reaper of the harness's one stack (engine/convergence/cv_reaper.c)
 * with a stall threshold of 0, run when nothing else can happen: the real
 * stack_reap.lua and stack_reap_nodes.lua; what they ask for re-queued on
 * the bus; a traversal whose every node is done ended by the engine's own
 * step machine (cv_finishjob), run to its end at once; the name of a stack
 * gone or DELETE_COMPLETE freed (stack_unname.lua).
 */
#include "scen_job.h"

#include "cv_convergence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CHECK job of node `node` of traversal t, on the bus. */
static void requeue_node(scen_world_t *w, uint64_t t, const char *node)
{
    cv_msg_t m = {.type = CV_MSG_CHECK, .traversal = t};
    snprintf(m.stack, sizeof(m.stack), "%s", w->stack);
    if (cv_msg_set_node(&m, node, strlen(node)) == 0)
        scen_bus_publish(w, &m, false);
}

/* The OBSERVE job of an update whose action of traversal t is recorded in
 * progress (record version `version`). */
static void requeue_observe(scen_world_t *w, uint64_t t, const char *node, const char *version)
{
    cv_msg_t m = {.type = CV_MSG_OBSERVE, .traversal = t, .phase = CV_PHASE_UPDATE};
    snprintf(m.stack, sizeof(m.stack), "%s", w->stack);
    snprintf(m.resource, sizeof(m.resource), "%s", node + 2);
    m.version = strtoull(version, NULL, 10);
    scen_bus_publish(w, &m, true);
}

/* The stalled traversal's ready nodes, batch by batch; the number re-queued. */
static int reap_nodes(scen_world_t *w, const char *traversal)
{
    char k[4][CV_KEY_MAX], sp_prefix[CV_KEY_MAX], res_prefix[CV_KEY_MAX], cursor[24] = "0";
    uint64_t t = strtoull(traversal, NULL, 10);
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, w->stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_GRAPH, w->stack, t, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_DONE, w->stack, t, NULL);
    cv_key(k[3], CV_KEY_MAX, CV_KEY_HOOKS, w->stack, 0, NULL);
    cv_key_prefix(sp_prefix, sizeof(sp_prefix), CV_KEY_SP, w->stack, t);
    cv_key_prefix(res_prefix, sizeof(res_prefix), CV_KEY_RES, w->stack, 0);
    int requeued = 0;
    do {
        cv_stack_reap_nodes_keys_t keys = {
            .stack = k[0], .graph = k[1], .done = k[2], .hooks = k[3]};
        cv_stack_reap_nodes_args_t args = {.traversal = traversal,
                                           .cursor = cursor,
                                           .count = "256",
                                           .room = "1000",
                                           .sp_prefix = sp_prefix,
                                           .res_prefix = res_prefix};
        redisReply *r = scen_call_row(CV_SCRIPT_STACK_REAP_NODES, keys.v, args.v);
        if (cv_reply_answer(CV_SCRIPT_STACK_REAP_NODES, r) != CV_ANSWER_NODES) {
            freeReplyObject(r);
            return requeued;
        }
        snprintf(cursor, sizeof(cursor), "%s", cv_reply_str(r, CV_STACK_REAP_NODES_R_CURSOR));
        for (size_t i = 0;
             CV_STACK_REAP_NODES_R_NODE(i, CV_STACK_REAP_NODES_N_VERSION) < r->elements; i++) {
            const char *kind =
                cv_reply_str(r, CV_STACK_REAP_NODES_R_NODE(i, CV_STACK_REAP_NODES_N_KIND));
            const char *node =
                cv_reply_str(r, CV_STACK_REAP_NODES_R_NODE(i, CV_STACK_REAP_NODES_N_NODE));
            if (strlen(node) < 3)
                continue;
            if (strcmp(kind, "OBSERVE") == 0)
                requeue_observe(
                    w, t, node,
                    cv_reply_str(r, CV_STACK_REAP_NODES_R_NODE(i, CV_STACK_REAP_NODES_N_VERSION)));
            else
                requeue_node(w, t, node);
            requeued++;
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return requeued;
}

/* The traversal's end, as the engine's reaper runs it (cv_flowrun_finish_stack). */
static void finish(scen_world_t *w, uint64_t traversal)
{
    scen_job_t *j = scen_job_finish(w, traversal);
    while (scen_job_step(w, j) == SCEN_STEP_MORE)
        ;
    scen_job_free(j);
}

int scen_reap(scen_world_t *w, bool *settled)
{
    *settled = false;
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACK, w->stack, 0, NULL);
    cv_stack_reap_keys_t keys = {.stack = key};
    cv_stack_reap_args_t args = {.stall_ms = "0"};
    redisReply *r = scen_call_row(CV_SCRIPT_STACK_REAP, keys.v, args.v);
    cv_answer_t a = cv_reply_answer(CV_SCRIPT_STACK_REAP, r);
    w->reaps++;
    int did = 0;
    switch (a) {
    case CV_ANSWER_STACK: {
        cv_msg_t s = {.type = CV_MSG_STACK,
                      .traversal = strtoull(cv_reply_str(r, CV_STACK_REAP_R_TRAVERSAL), NULL, 10)};
        snprintf(s.stack, sizeof(s.stack), "%s", w->stack);
        int kind = cv_trav_kind_parse(cv_reply_str(r, CV_STACK_REAP_R_ACTION));
        s.kind = (uint8_t)(kind < 0 ? 0 : kind);
        scen_bus_publish(w, &s, false);
        did = 1;
        break;
    }
    case CV_ANSWER_FINISH:
        finish(w, strtoull(cv_reply_str(r, CV_STACK_REAP_R_TRAVERSAL), NULL, 10));
        did = 1;
        break;
    case CV_ANSWER_STALLED:
        did = reap_nodes(w, cv_reply_str(r, CV_STACK_REAP_R_TRAVERSAL)) > 0;
        break;
    case CV_ANSWER_GONE:
    case CV_ANSWER_SETTLED:
        /* cv_reaper.c frees_name: its pass over the names (HSCAN) */
        if (a == CV_ANSWER_GONE ||
            strcmp(cv_reply_str(r, CV_STACK_REAP_R_STATUS), "DELETE_COMPLETE") == 0)
            scen_unname(w);
        *settled = true;
        break;
    default:
        scen_violation(w, "stack_reap answered %s",
                       r->type == REDIS_REPLY_ERROR ? r->str : cv_answer_name(a));
        break;
    }
    freeReplyObject(r);
    scen_trace(w, "reaper: %s", cv_answer_name(a));
    return did;
}
