/*
 * The reads behind "why is it waiting".
 */
#include "cli_waiting_io.h"

#include "cli_live.h"
#include "cli_replview.h"
#include "cli_waiting.h"

#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 500 /* nodes per round trip */

#define ANY_REPLY                                                                                  \
    (CLI_R(REDIS_REPLY_ARRAY) | CLI_R(REDIS_REPLY_STRING) | CLI_R(REDIS_REPLY_NIL) |               \
     CLI_R(REDIS_REPLY_INTEGER))

/* Up to 2 commands per node of a batch, their keys and replies. */
typedef struct batch {
    size_t n;
    cli_redis_cmd_t cmds[2 * BATCH];
    char keys[2 * BATCH][CV_KEY_MAX];
    redisReply *replies[2 * BATCH];
} batch_t;

static void batch_add(batch_t *b, const char *verb, cv_key_kind_t kind, const char *id,
                      uint64_t traversal, const char *name)
{
    cv_key(b->keys[b->n], CV_KEY_MAX, kind, id, traversal, name);
    b->cmds[b->n] = (cli_redis_cmd_t){2, {verb, b->keys[b->n]}};
    b->n++;
}

static int batch_run(cli_t *cli, batch_t *b)
{
    return cli_redis_pipeline(cli, b->n, b->cmds, ANY_REPLY, b->replies);
}

static void batch_clear(batch_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        freeReplyObject(b->replies[i]);
    b->n = 0;
}

/* A reply of the type expected, else reported. */
static bool expect(cli_t *cli, const batch_t *b, size_t i, int type)
{
    const redisReply *r = b->replies[i];
    if (r->type == type || (type == REDIS_REPLY_STRING && r->type == REDIS_REPLY_NIL))
        return true;
    cli_fail(CLI_SERVICE, "Redis at %s:%d answered %s %s with an unexpected type",
             cli->opts.redis_host, cli->opts.redis_port, b->cmds[i].argv[0], b->keys[i]);
    return false;
}

/* ------------------------------------------------------------------------ */
/* The stack and the clock                                                  */
/* ------------------------------------------------------------------------ */

typedef struct reading {
    cli_t *cli;
    const char *id;
    const char *name; /* as the command was given it */
    cli_wait_stack_t stack;
    char status[64];
    double now;
    redisReply *graph, *done; /* HGETALL graph, SMEMBERS done */
    json_t *done_set;         /* node -> true */
    cli_wait_node_t *nodes;
    size_t n;
    json_t *hold; /* what the nodes point into: records, tokens, children */
    batch_t *b;
} reading_t;

static const char *elem(const redisReply *r, size_t i)
{
    return i < r->elements && r->element[i]->type == REDIS_REPLY_STRING ? r->element[i]->str : "";
}

static int read_stack(reading_t *rd)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACK, rd->id, 0, NULL);
    const char *argv[] = {"HMGET", key,    "status",   "traversal", "expanded",
                          "total", "done", "progress", "updated"};
    redisReply *r = cli_redis_argv(rd->cli, CLI_R(REDIS_REPLY_ARRAY), 9, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    snprintf(rd->status, sizeof(rd->status), "%s", elem(r, 0));
    rd->stack = (cli_wait_stack_t){.name = rd->name,
                                   .status = rd->status,
                                   .traversal = strtoll(elem(r, 1), NULL, 10),
                                   .expanded = strtoll(elem(r, 2), NULL, 10),
                                   .total = strtoll(elem(r, 3), NULL, 10),
                                   .done = strtoll(elem(r, 4), NULL, 10),
                                   .progress = strtod(elem(r, 5), NULL),
                                   .updated = strtod(elem(r, 6), NULL)};
    /* A delete, or the rollback of a cancel (its traversal in `cancel`). */
    rd->stack.stops_older = strncmp(rd->status, "DELETE_", 7) == 0 ||
                            (elem(r, 7)[0] && strtoll(elem(r, 7), NULL, 10) == rd->stack.traversal);
    freeReplyObject(r);
    return CLI_OK;
}

/* The server's time, read last: no record read before it is from later. */
static int read_time(reading_t *rd)
{
    const char *argv[] = {"TIME"};
    redisReply *r = cli_redis_argv(rd->cli, CLI_R(REDIS_REPLY_ARRAY), 1, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    rd->now = strtod(elem(r, 0), NULL) + strtod(elem(r, 1), NULL) / 1e6;
    freeReplyObject(r);
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* The graph                                                                */
/* ------------------------------------------------------------------------ */

static long long preds_of(const char *entry)
{
    json_t *e = json_loads(entry, 0, NULL);
    json_t *p = json_object_get(e, "p");
    long long n = json_is_integer(p) ? (long long)json_integer_value(p) : -1;
    json_decref(e);
    return n;
}

static int read_graph(reading_t *rd)
{
    batch_t *b = rd->b;
    uint64_t t = (uint64_t)rd->stack.traversal;
    batch_add(b, "HGETALL", CV_KEY_GRAPH, rd->id, t, NULL);
    batch_add(b, "SMEMBERS", CV_KEY_DONE, rd->id, t, NULL);
    int rc = batch_run(rd->cli, b);
    if (rc)
        return rc;
    bool ok = expect(rd->cli, b, 0, REDIS_REPLY_ARRAY) && expect(rd->cli, b, 1, REDIS_REPLY_ARRAY);
    if (ok && !cli_reply_is_hash(rd->cli, b->replies[0], b->keys[0]))
        ok = false;
    rd->graph = b->replies[0];
    rd->done = b->replies[1];
    b->n = 0; /* the replies are rd's now */
    if (!ok)
        return CLI_SERVICE;
    for (size_t i = 0; i < rd->done->elements; i++)
        json_object_set_new(rd->done_set, elem(rd->done, i), json_true());
    rd->n = rd->graph->elements / 2;
    rd->nodes = calloc(rd->n ? rd->n : 1, sizeof(*rd->nodes));
    if (!rd->nodes)
        return cli_fail(CLI_SERVICE, "out of memory reading the graph of stack %s", rd->id);
    for (size_t i = 0; i < rd->n; i++) {
        cli_wait_node_t *n = &rd->nodes[i];
        n->node = rd->graph->element[2 * i]->str;
        n->preds = preds_of(rd->graph->element[2 * i + 1]->str);
        n->done = json_object_get(rd->done_set, n->node) != NULL;
    }
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* The nodes not done                                                       */
/* ------------------------------------------------------------------------ */

/* Keeps a copy of a string reply for the nodes to point into. */
static const char *hold_str(reading_t *rd, const redisReply *r)
{
    json_t *s = json_stringn(r->str, r->len);
    if (!s)
        return NULL;
    json_array_append_new(rd->hold, s);
    return json_string_value(s);
}

/* Sync point sizes and lease holders of nodes [from, to). */
static int read_progress(reading_t *rd, size_t from, size_t to)
{
    batch_t *b = rd->b;
    uint64_t t = (uint64_t)rd->stack.traversal;
    for (size_t i = from; i < to; i++) {
        const cli_wait_node_t *n = &rd->nodes[i];
        if (n->done)
            continue;
        batch_add(b, "HLEN", CV_KEY_SP, rd->id, t, n->node);
        batch_add(b, "GET", CV_KEY_LEASE, rd->id, 0, cli_waiting_resource(n->node));
    }
    int rc = batch_run(rd->cli, b);
    size_t at = 0;
    for (size_t i = from; rc == CLI_OK && i < to; i++) {
        cli_wait_node_t *n = &rd->nodes[i];
        if (n->done)
            continue;
        if (!expect(rd->cli, b, at, REDIS_REPLY_INTEGER) ||
            !expect(rd->cli, b, at + 1, REDIS_REPLY_STRING)) {
            rc = CLI_SERVICE;
            break;
        }
        n->satisfied = b->replies[at]->integer;
        if (b->replies[at + 1]->type == REDIS_REPLY_STRING)
            n->lease = hold_str(rd, b->replies[at + 1]);
        at += 2;
    }
    batch_clear(b);
    return rc;
}

/* Whether a node is one whose record tells why it waits. */
static bool at_frontier(const cli_wait_node_t *n)
{
    return !n->done && (n->lease || (n->preds >= 0 && n->satisfied >= n->preds));
}

/* The record as an object of its string fields. */
static json_t *record_of(const redisReply *r)
{
    json_t *rec = json_object();
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        json_object_set_new(rec, r->element[i]->str,
                            json_stringn(r->element[i + 1]->str, r->element[i + 1]->len));
    return rec;
}

/* Records and lease times of the frontier nodes in [from, to). */
static int read_records(reading_t *rd, size_t from, size_t to)
{
    batch_t *b = rd->b;
    for (size_t i = from; i < to; i++) {
        const cli_wait_node_t *n = &rd->nodes[i];
        if (!at_frontier(n))
            continue;
        batch_add(b, "HGETALL", CV_KEY_RES, rd->id, 0, cli_waiting_resource(n->node));
        batch_add(b, "PTTL", CV_KEY_LEASE, rd->id, 0, cli_waiting_resource(n->node));
    }
    int rc = batch_run(rd->cli, b);
    size_t at = 0;
    for (size_t i = from; rc == CLI_OK && i < to; i++) {
        cli_wait_node_t *n = &rd->nodes[i];
        if (!at_frontier(n))
            continue;
        if (!expect(rd->cli, b, at, REDIS_REPLY_ARRAY) ||
            !cli_reply_is_hash(rd->cli, b->replies[at], b->keys[at]) ||
            !expect(rd->cli, b, at + 1, REDIS_REPLY_INTEGER)) {
            rc = CLI_SERVICE;
            break;
        }
        if (b->replies[at]->elements > 0) {
            json_t *rec = record_of(b->replies[at]);
            json_array_append_new(rd->hold, rec);
            n->record = rec;
        }
        n->lease_ttl_ms = b->replies[at + 1]->integer;
        at += 2;
    }
    batch_clear(b);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Child stacks                                                             */
/* ------------------------------------------------------------------------ */

static json_t *child_of(const redisReply *r)
{
    if (r->elements == 0)
        return json_pack("{s:b}", "exists", 0);
    json_t *c = json_pack("{s:b}", "exists", 1);
    static const char *const names[] = {"name", "status", "reason"};
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const char *f = r->element[i]->str;
        const redisReply *v = r->element[i + 1];
        for (size_t k = 0; k < 3; k++)
            if (strcmp(f, names[k]) == 0)
                json_object_set_new(c, f, json_stringn(v->str, v->len));
        if (strcmp(f, "done") == 0 || strcmp(f, "total") == 0)
            json_object_set_new(c, f, json_integer(strtoll(v->str, NULL, 10)));
    }
    return c;
}

/* The stack hashes of the children the frontier's records name, in
 * batches; each node's `children` is the one map of them all. */
static int read_children(reading_t *rd)
{
    json_t *ids = json_array(), *children = json_object();
    json_array_append_new(rd->hold, children);
    for (size_t i = 0; i < rd->n; i++) {
        json_t *more = rd->nodes[i].record ? cli_waiting_child_ids(rd->nodes[i].record) : NULL;
        json_array_extend(ids, more);
        json_decref(more);
        rd->nodes[i].children = children;
    }
    int rc = CLI_OK;
    batch_t *b = rd->b;
    for (size_t at = 0; rc == CLI_OK && at < json_array_size(ids); at += BATCH) {
        size_t end = at + BATCH < json_array_size(ids) ? at + BATCH : json_array_size(ids);
        for (size_t i = at; i < end; i++)
            batch_add(b, "HGETALL", CV_KEY_STACK, json_string_value(json_array_get(ids, i)), 0,
                      NULL);
        rc = batch_run(rd->cli, b);
        for (size_t i = 0; rc == CLI_OK && i < b->n; i++) {
            if (!expect(rd->cli, b, i, REDIS_REPLY_ARRAY) ||
                !cli_reply_is_hash(rd->cli, b->replies[i], b->keys[i]))
                rc = CLI_SERVICE;
            else
                json_object_set_new(children, json_string_value(json_array_get(ids, at + i)),
                                    child_of(b->replies[i]));
        }
        batch_clear(b);
    }
    json_decref(ids);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* What a waiting resource waits for                                        */
/* ------------------------------------------------------------------------ */

/* HGETALL of `key` as an object of its string fields; NULL on failure. */
static json_t *read_hash(cli_t *cli, const char *key)
{
    const char *argv[] = {"HGETALL", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    json_t *obj = r && cli_reply_is_hash(cli, r, key) ? record_of(r) : NULL;
    freeReplyObject(r);
    return obj;
}

/* The resource among those `n`'s recorded version depends on (the index)
 * whose physical id is `ref`, as the observer finds a WaitCondition's
 * handle: its record with its name, or nothing found. */
static int read_watched_one(reading_t *rd, cli_wait_node_t *n, const char *ref)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_INDEX, rd->id, 0, NULL);
    const char *argv[] = {"HGET", key, cli_waiting_resource(n->node)};
    redisReply *r = cli_redis_argv(rd->cli, CLI_R_STRING_OR_NIL, 3, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    json_t *deps = r->type == REDIS_REPLY_STRING ? json_loads(r->str, 0, NULL) : NULL;
    freeReplyObject(r);
    int rc = CLI_OK;
    size_t i;
    json_t *dep;
    json_array_foreach(deps, i, dep)
    {
        if (!json_is_string(dep))
            continue;
        cv_key(key, sizeof(key), CV_KEY_RES, rd->id, 0, json_string_value(dep));
        json_t *rec = read_hash(rd->cli, key);
        if (!rec) {
            rc = CLI_SERVICE;
            break;
        }
        const char *pid = json_string_value(json_object_get(rec, "physical_id"));
        if (pid && strcmp(pid, ref) == 0) {
            json_object_set(rec, "name", dep);
            json_array_append(rd->hold, rec);
            n->watched = rec;
        }
        json_decref(rec);
        if (n->watched)
            break;
    }
    json_decref(deps);
    return rc;
}

/* The records that waiting resources (WaitConditions) watch. Few nodes
 * are such, so one round trip each is cheap. */
static int read_watched(reading_t *rd)
{
    int rc = CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < rd->n; i++) {
        char ref[CV_ID_MAX * 8];
        if (rd->nodes[i].record && cli_waiting_watches(rd->nodes[i].record, ref, sizeof(ref)))
            rc = read_watched_one(rd, &rd->nodes[i], ref);
    }
    return rc;
}

/*
 * HOOKS: the stack's hooks hash ({<stack>}:hooks, resource -> JSON
 * {"traversal", "waiting": hook, "since", ...}, written by hook_wait.lua)
 * says which resources are paused at a hook. Its key kind is looked up here
 * by its pattern; CV_KEY_HOOKS names the same key and could replace the
 * lookup. Without the key kind no resource is paused at a hook.
 */
static int hooks_kind(void)
{
    for (int k = 0; k < CV_KEY__COUNT; k++)
        if (strcmp(cv_key_pattern((cv_key_kind_t)k), "{<stack>}:hooks") == 0)
            return k;
    return -1;
}

static int read_hooks(reading_t *rd)
{
    int kind = hooks_kind();
    if (kind < 0)
        return CLI_OK;
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), (cv_key_kind_t)kind, rd->id, 0, NULL);
    json_t *hooks = read_hash(rd->cli, key);
    if (!hooks)
        return CLI_SERVICE;
    json_array_append_new(rd->hold, hooks);
    for (size_t i = 0; i < rd->n; i++) {
        const char *text =
            json_string_value(json_object_get(hooks, cli_waiting_resource(rd->nodes[i].node)));
        json_t *entry = text ? json_loads(text, 0, NULL) : NULL;
        if (entry) {
            json_array_append_new(rd->hold, entry);
            rd->nodes[i].hook = entry;
        }
    }
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* All of it                                                                */
/* ------------------------------------------------------------------------ */

/* The reads are not one snapshot: a node whose sync point filled after
 * the done set was read may be done by now. The frontier's nodes are looked
 * up in the done set again, last, so that none done shows as waiting. */
static int recheck_done(reading_t *rd, size_t from, size_t to)
{
    batch_t *b = rd->b;
    uint64_t t = (uint64_t)rd->stack.traversal;
    for (size_t i = from; i < to; i++) {
        if (!at_frontier(&rd->nodes[i]))
            continue;
        cv_key(b->keys[b->n], CV_KEY_MAX, CV_KEY_DONE, rd->id, t, NULL);
        b->cmds[b->n] = (cli_redis_cmd_t){3, {"SISMEMBER", b->keys[b->n], rd->nodes[i].node}};
        b->n++;
    }
    int rc = batch_run(rd->cli, b);
    size_t at = 0;
    for (size_t i = from; rc == CLI_OK && i < to; i++) {
        if (!at_frontier(&rd->nodes[i]))
            continue;
        if (!expect(rd->cli, b, at, REDIS_REPLY_INTEGER)) {
            rc = CLI_SERVICE;
            break;
        }
        rd->nodes[i].done = b->replies[at++]->integer == 1;
    }
    batch_clear(b);
    return rc;
}

/* The replicas of the frontier's Converge::Service resources, read with
 * the live model once (only when the stack has such a resource waiting). */
static int read_replicas(reading_t *rd)
{
    json_t *svcs = json_array();
    for (size_t i = 0; i < rd->n; i++) {
        const json_t *rec = rd->nodes[i].record;
        const char *type = json_string_value(json_object_get(rec, "type"));
        const char *svc = json_string_value(json_object_get(rec, "physical_id"));
        if (type && strcmp(type, CV_SERVICE_TYPE) == 0 && svc && svc[0])
            json_array_append_new(svcs, json_string(svc));
    }
    json_t *model = NULL;
    int rc = json_array_size(svcs) ? cli_live_read(rd->cli, CLI_LIVE_NODES, &model) : CLI_OK;
    if (model) {
        json_object_set_new(model, "services", json_object());
        rc = cli_live_read_services(rd->cli, svcs, json_object_get(model, "services"));
        json_array_append_new(rd->hold, model);
    }
    for (size_t i = 0; rc == CLI_OK && model && i < rd->n; i++) {
        const json_t *rec = rd->nodes[i].record;
        const char *type = json_string_value(json_object_get(rec, "type"));
        const char *svc = json_string_value(json_object_get(rec, "physical_id"));
        if (!type || strcmp(type, CV_SERVICE_TYPE) != 0 || !svc || !svc[0])
            continue;
        json_t *which = json_pack("[{s:s, s:s}]", "resource",
                                  cli_waiting_resource(rd->nodes[i].node), "svc", svc);
        json_t *rows = cli_replica_rows(model, which);
        json_decref(which);
        if (rows)
            json_array_append_new(rd->hold, rows);
        rd->nodes[i].replicas = rows;
    }
    json_decref(svcs);
    return rc;
}

static int read_nodes(reading_t *rd)
{
    int rc = read_graph(rd);
    for (size_t at = 0; rc == CLI_OK && at < rd->n; at += BATCH) {
        size_t end = at + BATCH < rd->n ? at + BATCH : rd->n;
        rc = read_progress(rd, at, end);
        if (rc == CLI_OK)
            rc = read_records(rd, at, end);
    }
    if (rc == CLI_OK)
        rc = read_children(rd);
    if (rc == CLI_OK)
        rc = read_watched(rd);
    if (rc == CLI_OK)
        rc = read_hooks(rd);
    if (rc == CLI_OK)
        rc = read_replicas(rd);
    for (size_t at = 0; rc == CLI_OK && at < rd->n; at += 2 * BATCH) {
        size_t end = at + 2 * BATCH < rd->n ? at + 2 * BATCH : rd->n;
        rc = recheck_done(rd, at, end);
    }
    return rc;
}

static bool in_progress(const char *status)
{
    size_t n = strlen(status), m = strlen("_IN_PROGRESS");
    return n > m && strcmp(status + n - m, "_IN_PROGRESS") == 0;
}

int cli_waiting_read(cli_t *cli, const char *name, const char *id, double stalled_after,
                     json_t **out)
{
    *out = NULL;
    reading_t rd = {
        .cli = cli, .id = id, .name = name, .done_set = json_object(), .hold = json_array()};
    rd.b = calloc(1, sizeof(*rd.b));
    int rc = rd.b ? read_stack(&rd) : cli_fail(CLI_SERVICE, "out of memory");
    bool expanded = rd.stack.traversal > 0 && rd.stack.expanded == rd.stack.traversal;
    if (rc == CLI_OK && in_progress(rd.status) && expanded)
        rc = read_nodes(&rd);
    if (rc == CLI_OK)
        rc = read_time(&rd);
    if (rc == CLI_OK && in_progress(rd.status))
        *out = cli_waiting_analyse(&rd.stack, rd.nodes, rd.n, rd.now, stalled_after);
    if (rd.b)
        batch_clear(rd.b);
    free(rd.b);
    free(rd.nodes);
    freeReplyObject(rd.graph);
    freeReplyObject(rd.done);
    json_decref(rd.done_set);
    json_decref(rd.hold);
    return rc;
}
