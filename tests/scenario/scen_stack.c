/*
 * STACK jobs, as engine/converge-engine/engine_stack.c expands a traversal: read the stored
 * definition (stack_definition.lua), parse it with the real template code,
 * build the graph with the real traversal code from the definition and the
 * index, write this expansion's drafts, put them in place
 * (stack_expanded.lua), publish the roots. Three steps and the publishes.
 *
 * Also the reaper (engine/convergence/cv_reaper.c) of the harness's one stack,
 * with a stall threshold of 0: run when nothing else can happen.
 */
#include "scen_job.h"

#include "cv_convergence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PC_WRITE_DRAFTS = 1, PC_EXPANDED = 2 };
enum { RDEF, GRAPH };

static void publish_roots(scen_job_t *j)
{
    size_t n = cv_graph_count(j->graph), npreds;
    for (size_t i = 0; i < n; i++) {
        cv_graph_preds(j->graph, (int)i, &npreds);
        if (npreds == 0)
            scen_op_publish_node(j, cv_graph_name(j->graph, (int)i));
    }
}

static scen_step_t read_definition(scen_world_t *w, scen_job_t *j)
{
    char k[3][CV_KEY_MAX];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, j->msg.stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_DEF, j->msg.stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_INDEX, j->msg.stack, 0, NULL);
    cv_stack_definition_keys_t keys = {.stack = k[0], .def = k[1], .index = k[2]};
    cv_stack_definition_args_t args = {.nil = NULL};
    redisReply *r = scen_call_row(CV_SCRIPT_STACK_DEFINITION, keys.v, args.v);
    const char *trav = cv_reply_str(r, CV_STACK_DEFINITION_R_TRAVERSAL);
    if (!cv_reply_str(r, CV_STACK_DEFINITION_R_ACTION)[0] && !trav[0]) {
        scen_violation(w, "STACK job t%llu dead-lettered: unknown stack",
                       (unsigned long long)j->msg.traversal);
        j->pc = PC_END;
    } else if (strtoull(trav, NULL, 10) != j->msg.traversal) {
        j->pc = PC_END; /* superseded */
    } else {
        char err[1024];
        json_t *tpl = json_loads(cv_reply_str(r, CV_STACK_DEFINITION_R_TEMPLATE), 0, NULL);
        json_t *params = json_loads(cv_reply_str(r, CV_STACK_DEFINITION_R_PARAMS), 0, NULL);
        json_t *files = json_loads(cv_reply_str(r, CV_STACK_DEFINITION_R_FILES), 0, NULL);
        cv_tpl_opts_t opts = {.files = files,
                              .depth = atoi(cv_reply_str(r, CV_STACK_DEFINITION_R_DEPTH))};
        if (!tpl || cv_template_from_json_opts(tpl, "template", params, &opts, &j->tpl, err,
                                               sizeof(err)) != 0) {
            scen_violation(w, "the stored template does not parse: %s", tpl ? err : "not JSON");
            j->pc = PC_END;
        } else {
            cv_resp_t *reply = cv_flowrun_resp(r, false);
            j->index = cv_resp_to_object(cv_resp_at(reply, CV_STACK_DEFINITION_R_INDEX));
            free(reply);
            j->graph = cv_expand_graph(j->msg.kind, j->tpl, j->index);
            snprintf(j->draft[RDEF], CV_KEY_MAX, "%s", "");
            char expansion[64];
            snprintf(expansion, sizeof(expansion), "%s", j->token);
            cv_key(j->draft[RDEF], CV_KEY_MAX, CV_KEY_RDEF_DRAFT, j->msg.stack, j->msg.traversal,
                   expansion);
            cv_key(j->draft[GRAPH], CV_KEY_MAX, CV_KEY_GRAPH_DRAFT, j->msg.stack, j->msg.traversal,
                   expansion);
            j->pc = PC_WRITE_DRAFTS;
        }
        json_decref(tpl);
        json_decref(params);
        json_decref(files);
    }
    freeReplyObject(r);
    return SCEN_STEP_MORE;
}

/* DEL, HSET, EXPIRE of each draft, pipelined (engine_stack.c batches them
 * on one connection before stack_expanded, which sees them all). */
static scen_step_t write_drafts(scen_world_t *w, scen_job_t *j)
{
    (void)w;
    size_t nres = j->msg.kind == CV_TRAV_DELETE ? 0 : j->tpl->nresources;
    size_t nnodes = cv_graph_count(j->graph);
    const char **hset[2];
    char **owned = calloc(nres + nnodes + 1, sizeof(char *));
    size_t nowned = 0;
    int argc[6], n = 0;
    const char **argv[6];
    const char *del[2][2], *expire[2][3];
    for (int which = RDEF; which <= GRAPH; which++) {
        size_t count = which == RDEF ? nres : nnodes;
        del[which][0] = "DEL";
        del[which][1] = j->draft[which];
        argv[n] = del[which];
        argc[n++] = 2;
        hset[which] = calloc(2 + 2 * count, sizeof(char *));
        hset[which][0] = "HSET";
        hset[which][1] = j->draft[which];
        for (size_t i = 0; i < count; i++) {
            char *value;
            if (which == RDEF) {
                json_t *d = cv_expand_rdef(&j->tpl->resources[i]);
                value = json_dumps(d, JSON_COMPACT);
                json_decref(d);
                hset[which][2 + 2 * i] = j->tpl->resources[i].name;
            } else {
                value = cv_traversal_entry(j->graph, (int)i);
                hset[which][2 + 2 * i] = cv_graph_name(j->graph, (int)i);
            }
            owned[nowned++] = value;
            hset[which][3 + 2 * i] = value;
        }
        if (count > 0) {
            expire[which][0] = "EXPIRE";
            expire[which][1] = j->draft[which];
            expire[which][2] = "3600";
            argv[n] = hset[which];
            argc[n++] = (int)(2 + 2 * count);
            argv[n] = expire[which];
            argc[n++] = 3;
        }
    }
    redisReply *rep[6];
    scen_pipeline(n, argc, argv, rep);
    for (int i = 0; i < n; i++)
        freeReplyObject(rep[i]);
    for (size_t i = 0; i < nowned; i++)
        free(owned[i]);
    free(owned);
    free(hset[RDEF]);
    free(hset[GRAPH]);
    j->pc = PC_EXPANDED;
    return SCEN_STEP_MORE;
}

static scen_step_t expanded(scen_world_t *w, scen_job_t *j)
{
    char k[4][CV_KEY_MAX], trav[24], total[24];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, j->msg.stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_DEF, j->msg.stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_RDEF, j->msg.stack, j->msg.traversal, NULL);
    cv_key(k[3], CV_KEY_MAX, CV_KEY_GRAPH, j->msg.stack, j->msg.traversal, NULL);
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)j->msg.traversal);
    snprintf(total, sizeof(total), "%zu", cv_graph_count(j->graph));
    char *params = json_dumps(j->tpl->parameters, JSON_COMPACT);
    cv_stack_expanded_keys_t keys = {.stack = k[0],
                                     .def = k[1],
                                     .rdef = k[2],
                                     .graph = k[3],
                                     .rdef_draft = j->draft[RDEF],
                                     .graph_draft = j->draft[GRAPH]};
    cv_stack_expanded_args_t args = {
        .traversal = trav, .nodes = total, .params = params ? params : "{}"};
    redisReply *r = scen_call_row(CV_SCRIPT_STACK_EXPANDED, keys.v, args.v);
    free(params);
    cv_answer_t a = cv_reply_answer(CV_SCRIPT_STACK_EXPANDED, r);
    if (a == CV_ANSWER_INVALID)
        scen_violation(w, "stack_expanded: %s",
                       r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    bool dup = a == CV_ANSWER_DUP;
    if (a == CV_ANSWER_OK && j->msg.traversal < SCEN_MAX_TRAV) {
        /* The graph that stands for this traversal (the invariants ask
         * which cleanup nodes it had). */
        json_t *nodes = json_array();
        for (size_t i = 0; i < cv_graph_count(j->graph); i++)
            json_array_append_new(nodes, json_string(cv_graph_name(j->graph, (int)i)));
        json_decref(w->seen.trav_nodes[j->msg.traversal]);
        w->seen.trav_nodes[j->msg.traversal] = nodes;
    }
    if (dup && r->elements > CV_STACK_EXPANDED_R_DUP_FIRST_ROOT) {
        for (size_t i = CV_STACK_EXPANDED_R_DUP_FIRST_ROOT; i < r->elements; i++)
            scen_op_publish_node(j, cv_reply_str(r, i));
    } else if (dup || (a == CV_ANSWER_OK && cv_graph_count(j->graph) == 0)) {
        scen_op_finish(j);
    } else if (a == CV_ANSWER_OK) {
        scen_trace(w, "expanded traversal %llu: %zu nodes", (unsigned long long)j->msg.traversal,
                   cv_graph_count(j->graph));
        publish_roots(j);
    }
    freeReplyObject(r);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

scen_step_t scen_stack_step(scen_world_t *w, scen_job_t *j)
{
    switch (j->pc) {
    case PC_START:
        return read_definition(w, j);
    case PC_WRITE_DRAFTS:
        return write_drafts(w, j);
    default:
        return expanded(w, j);
    }
}

/* ---- the reaper ---- */

static void reap_nodes(scen_world_t *w, scen_job_t *j, const char *traversal)
{
    char k[4][CV_KEY_MAX], sp_prefix[CV_KEY_MAX], res_prefix[CV_KEY_MAX], cursor[24] = "0";
    uint64_t t = strtoull(traversal, NULL, 10);
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, w->stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_GRAPH, w->stack, t, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_DONE, w->stack, t, NULL);
    cv_key(k[3], CV_KEY_MAX, CV_KEY_HOOKS, w->stack, 0, NULL);
    cv_key_prefix(sp_prefix, sizeof(sp_prefix), CV_KEY_SP, w->stack, t);
    cv_key_prefix(res_prefix, sizeof(res_prefix), CV_KEY_RES, w->stack, 0);
    j->msg.traversal = t;
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
            return;
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
            if (strcmp(kind, "OBSERVE") == 0) {
                snprintf(j->msg.resource, sizeof(j->msg.resource), "%s", node + 2);
                j->msg.phase = CV_PHASE_UPDATE;
                scen_op_publish_observe(
                    j,
                    cv_reply_str(r, CV_STACK_REAP_NODES_R_NODE(i, CV_STACK_REAP_NODES_N_VERSION)),
                    false);
            } else {
                scen_op_publish_node(j, node);
            }
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
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
    cv_msg_t m = {.type = CV_MSG_CHECK};
    snprintf(m.stack, sizeof(m.stack), "%s", w->stack);
    scen_job_t *j = scen_job_start(w, 0, &m);
    w->reaps++;
    switch (a) {
    case CV_ANSWER_STACK: {
        cv_msg_t s = {.type = CV_MSG_STACK,
                      .traversal = strtoull(cv_reply_str(r, CV_STACK_REAP_R_TRAVERSAL), NULL, 10)};
        snprintf(s.stack, sizeof(s.stack), "%s", w->stack);
        int kind = cv_trav_kind_parse(cv_reply_str(r, CV_STACK_REAP_R_ACTION));
        s.kind = (uint8_t)(kind < 0 ? 0 : kind);
        scen_op_t op = {.kind = OP_PUBLISH, .msg = s};
        scen_op_push(j, &op);
        break;
    }
    case CV_ANSWER_FINISH:
        j->msg.traversal = strtoull(cv_reply_str(r, CV_STACK_REAP_R_TRAVERSAL), NULL, 10);
        scen_op_finish(j);
        break;
    case CV_ANSWER_STALLED:
        reap_nodes(w, j, cv_reply_str(r, CV_STACK_REAP_R_TRAVERSAL));
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
    scen_trace(w, "reaper: %s, %zu ops", cv_answer_name(a), j->nops);
    int did = j->nops > 0;
    j->pc = PC_END;
    while (j->nops > 0)
        scen_job_step(w, j);
    scen_job_free(j);
    return did;
}
