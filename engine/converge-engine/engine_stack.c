/*
 * STACK jobs: expand a traversal. The stored template is turned into the
 * traversal graph; each resource's definition and each node's graph entry
 * are written to draft keys of this expansion, which stack_expanded.lua puts
 * in place under the traversal id unless another expansion of the same
 * traversal did first; then the roots get their check jobs. A redelivered
 * or duplicated job thus never changes a graph jobs already run on: it only
 * publishes the roots of the graph that stands again, which the check
 * handler tolerates, so the handler is idempotent.
 */
#include "engine.h"

#include "cv_hot.h"
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_convergence.h"
#include "cv_io.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HSET_BATCH 500
#define DRAFT_TTL_S "3600" /* drafts of an expansion that died are dropped */
/* Root jobs of one expansion handed to Kafka and not yet acknowledged: the
 * rest wait here, so that a burst of big expansions is never a burst of
 * messages queued in this process (each ~350 bytes in librdkafka). */
#define ROOTS_IN_FLIGHT 4096
/* Expansions running at once in one engine: each holds its template and
 * graph, and a 1,000-member group begins 1,000 of them together. */
#define EXPANSIONS_MAX 2

enum { RDEF, GRAPH };

typedef struct expand {
    cv_jobrun_t run; /* first: the state is freed through it */
    cv_template_t *tpl;
    json_t *env;   /* the stack's environment (cv_env.h) */
    bool nested;   /* a nested stack: its parameters are its parent's properties */
    json_t *tree;  /* the stored template: the types as declared */
    json_t *index; /* resources with records: name -> dependencies (JSON text) */
    cv_graph_t *graph;
    char draft[2][CV_KEY_MAX]; /* this expansion's rdef and graph hashes */
    char **roots;              /* the root nodes whose jobs are to be published */
    size_t nroots, next_root;
    /* The roots' lane: the STACK job's, unless the traversal is too big
     * for the express lane (CV_EXPRESS_NODES_MAX); all below them follow. */
    bool express;
    int pending; /* root messages not yet acknowledged */
    int rc;
    cv_gate_waiter_t waiter; /* a place among EXPANSIONS_MAX of its lane */
} expand_t;

/* Per lane: an express stack's expansion never waits behind a big one's. */
static cv_gate_t gates[2] = {CV_GATE_INIT(EXPANSIONS_MAX), CV_GATE_INIT(EXPANSIONS_MAX)};

static cv_gate_t *gate_of(expand_t *x)
{
    return &gates[x->run.msg.express ? 1 : 0];
}

static void expand_admitted(cv_gate_waiter_t *w)
{
    expand_t *x = (expand_t *)((char *)w - offsetof(expand_t, waiter));
    cv_jobrun_start(&x->run); /* hands it back when the worker is stopping */
}

static void free_roots(expand_t *x)
{
    for (size_t i = 0; i < x->nroots; i++)
        free(x->roots[i]);
    free(x->roots);
    x->roots = NULL;
    x->nroots = x->next_root = 0;
}

/* What one attempt loaded: dropped before a retry and at the end. */
static void expand_reset(cv_jobrun_t *run)
{
    expand_t *x = (expand_t *)run;
    cv_template_free(x->tpl);
    cv_graph_free(x->graph);
    json_decref(x->index);
    json_decref(x->env);
    json_decref(x->tree);
    x->tree = NULL;
    x->tpl = NULL;
    x->graph = NULL;
    x->index = NULL;
    x->env = NULL;
    free_roots(x);
    x->pending = 0;
    x->rc = 0;
    cv_gate_leave(gate_of(x), &x->waiter);
}

static void expand_end(expand_t *x)
{
    cv_jobrun_end(&x->run);
}

/* Transient failure (Redis or Kafka away): try the whole job again later;
 * one that keeps failing while both answer is given up (cv_poison). */
static void expand_retry(expand_t *x)
{
    cv_jobrun_retry(&x->run);
}

static void publish_more(expand_t *x);

static void on_root_delivered(void *ud, int err)
{
    expand_t *x = ud;
    if (err)
        x->rc = err;
    x->pending--;
    publish_more(x);
}

/* Keeps ROOTS_IN_FLIGHT root jobs on their way, up to CV_MSG_NODES_MAX to
 * a message (cv_msg_batch_size), until every one is out; after a failure none more, and the
 * whole job is tried again. */
static void publish_more(expand_t *x)
{
    while (x->rc == 0 && x->next_root < x->nroots &&
           x->pending < ROOTS_IN_FLIGHT / CV_MSG_NODES_MAX) {
        size_t n = cv_msg_batch_size(x->nroots);
        if (n > x->nroots - x->next_root)
            n = x->nroots - x->next_root;
        x->pending++;
        if (cv_worker_publish_nodes(x->run.w, x->run.msg.stack, x->run.msg.traversal,
                                    (const char *const *)&x->roots[x->next_root], n, x->express,
                                    on_root_delivered, x) != 0) {
            x->pending--;
            x->rc = CV_EKAFKA;
        }
        x->next_root += n;
    }
    if (x->pending > 0 || (x->rc == 0 && x->next_root < x->nroots))
        return;
    if (x->rc)
        expand_retry(x);
    else
        expand_end(x);
}

/* Room for `n` root names; false when out of memory. */
static bool roots_alloc(expand_t *x, size_t n)
{
    x->roots = calloc(n ? n : 1, sizeof(*x->roots));
    return x->roots != NULL;
}

static bool root_add(expand_t *x, const char *node)
{
    char *copy = strdup(node);
    if (!copy)
        return false;
    x->roots[x->nroots++] = copy;
    return true;
}

/* Publishes the roots listed (`complete`: every name was copied). The
 * template and the graph are no longer needed: only the names are kept. */
static void publish_listed(expand_t *x, bool complete)
{
    if (!complete) {
        expand_retry(x);
        return;
    }
    cv_template_free(x->tpl);
    cv_graph_free(x->graph);
    x->tpl = NULL;
    x->graph = NULL;
    publish_more(x);
}

static void publish_roots(expand_t *x)
{
    size_t n = cv_graph_count(x->graph), nroots = 0, npreds;
    for (size_t i = 0; i < n; i++) {
        cv_graph_preds(x->graph, (int)i, &npreds);
        nroots += npreds == 0;
    }
    bool ok = roots_alloc(x, nroots);
    for (size_t i = 0; ok && i < n; i++) {
        cv_graph_preds(x->graph, (int)i, &npreds);
        if (npreds == 0)
            ok = root_add(x, cv_graph_name(x->graph, (int)i));
    }
    publish_listed(x, ok);
}

/* Another expansion of this traversal stands: its roots, as stack_expanded
 * listed them, get their jobs again (none: the graph is empty). */
static void publish_standing_roots(expand_t *x, const redisReply *rep)
{
    size_t first = CV_STACK_EXPANDED_R_DUP_FIRST_ROOT;
    bool ok = roots_alloc(x, rep->elements - first);
    for (size_t i = first; ok && i < rep->elements; i++)
        ok = root_add(x, cv_reply_str(rep, i));
    publish_listed(x, ok);
}

static void on_empty_finished(void *ud, int rc)
{
    expand_t *x = ud;
    if (rc == CV_EREDIS || rc == CV_EKAFKA)
        expand_retry(x);
    else
        expand_end(x);
}

static void on_expanded(cv_redis_t *r, redisReply *rep, void *ud)
{
    expand_t *x = ud;
    (void)r;
    if (!rep || rep->type == REDIS_REPLY_ERROR) {
        expand_retry(x);
        return;
    }
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_STACK_EXPANDED, rep);
    bool dup = answer == CV_ANSWER_DUP;
    if (answer != CV_ANSWER_OK && !dup) {
        cv_worker_count(x->run.w, CV_STAT_STALE, 1);
        expand_end(x);
        return;
    }
    cv_reaper_watch(x->run.w, x->run.msg.stack); /* nested stacks have no name to be found by */
    x->express = x->run.msg.express && cv_graph_count(x->graph) <= CV_EXPRESS_NODES_MAX;
    if (dup && rep->elements > CV_STACK_EXPANDED_R_DUP_FIRST_ROOT) {
        cv_worker_count(x->run.w, CV_STAT_STALE, 1);
        publish_standing_roots(x, rep);
        return;
    }
    if (dup || cv_graph_count(x->graph) == 0) {
        if (cv_flowrun_finish_stack(x->run.w, x->run.msg.stack, x->run.msg.traversal,
                                    on_empty_finished, x) != 0)
            expand_retry(x);
        return;
    }
    publish_roots(x);
}

/* HSET key f1 v1 f2 v2 ... in batches; replies are not awaited one by one:
 * commands on one connection run in order, so the stack_expanded script that
 * follows sees them all, and a lost connection fails that script too. */
typedef struct hset_batch {
    const char *argv[2 + 2 * HSET_BATCH];
    char *owned[2 * HSET_BATCH];
    int argc, nowned;
    char key[CV_KEY_MAX];
} hset_batch_t;

static void batch_flush(cv_worker_t *w, hset_batch_t *b)
{
    if (b->argc > 2) {
        const char *expire[] = {"EXPIRE", b->key, DRAFT_TTL_S};
        cv_redis_argv(w->redis, b->argc, b->argv, NULL, NULL, NULL);
        cv_redis_argv(w->redis, 3, expire, NULL, NULL, NULL);
    }
    for (int i = 0; i < b->nowned; i++)
        free(b->owned[i]);
    b->argc = 2;
    b->nowned = 0;
}

static void batch_add(cv_worker_t *w, hset_batch_t *b, const char *field, char *value)
{
    b->owned[b->nowned++] = value;
    b->argv[b->argc++] = field;
    b->argv[b->argc++] = value;
    if (b->argc == 2 + 2 * HSET_BATCH)
        batch_flush(w, b);
}

/* Starts an HSET of this expansion's draft `which`, emptied first: a retry
 * after a transient failure writes it again from scratch. */
static void batch_start(hset_batch_t *b, const expand_t *x, int which)
{
    snprintf(b->key, sizeof(b->key), "%s", x->draft[which]);
    const char *del[] = {"DEL", b->key};
    cv_redis_argv(x->run.w->redis, 2, del, NULL, NULL, NULL);
    b->argv[0] = "HSET";
    b->argv[1] = b->key;
    b->argc = 2;
    b->nowned = 0;
}

/* A group's member type as the registry maps it, written into the
 * definition's resource_def, so that the group knows its members' template
 * (their attributes) as it knows a member type given as a file. */
static void map_member_type(const json_t *registry, json_t *d)
{
    json_t *member = json_object_get(json_object_get(d, "properties"), "resource_def");
    const char *type = json_string_value(json_object_get(member, "type"));
    char mapped[512];
    if (!type)
        return;
    cv_env_resolve_type(registry, type, NULL, mapped, sizeof(mapped), NULL);
    if (strcmp(mapped, type) != 0)
        json_object_set_new(member, "type", json_string(mapped));
}

/* What the environment's registry says about a resource travels in its
 * definition, so that its CHECK jobs need nothing else: the actions an
 * update may not take and, for a resource that is a stack of its own, the
 * environment of that stack (Heat's child environment). */
static void add_environment(const expand_t *x, const cv_tpl_resource_t *res, json_t *d)
{
    const json_t *registry = json_object_get(x->env, "resource_registry");
    unsigned restricted = cv_env_restricted_actions(registry, res->name);
    if (restricted)
        json_object_set_new(d, "restricted_actions",
                            json_pack("{s:b, s:b}", "update", restricted & CV_ENV_RESTRICT_UPDATE,
                                      "replace", restricted & CV_ENV_RESTRICT_REPLACE));
    const cv_rtype_t *t = cv_rtype_lookup(res->type);
    if (!t || !t->nested || json_object_size(x->env) == 0)
        return;
    if (strcmp(res->type, "OS::Heat::ResourceGroup") == 0)
        map_member_type(registry, d);
    char mapped[512];
    json_t *via = NULL;
    const json_t *declared =
        json_object_get(json_object_get(json_object_get(x->tree, "resources"), res->name), "type");
    if (json_is_string(declared))
        cv_env_resolve_type(registry, json_string_value(declared), res->name, mapped,
                            sizeof(mapped), &via);
    json_object_set_new(d, "env", cv_env_child(x->env, res->name, via));
    json_decref(via);
}

static void write_definitions(expand_t *x, hset_batch_t *b)
{
    batch_start(b, x, RDEF);
    /* A delete wants nothing: no resource has a definition in it. */
    size_t n = x->run.msg.kind == CV_TRAV_DELETE ? 0 : x->tpl->nresources;
    for (size_t i = 0; i < n; i++) {
        json_t *d = cv_expand_rdef(&x->tpl->resources[i]);
        add_environment(x, &x->tpl->resources[i], d);
        batch_add(x->run.w, b, x->tpl->resources[i].name, json_dumps(d, JSON_COMPACT));
        json_decref(d);
    }
    batch_flush(x->run.w, b);
}

/* The hooks that stop a node's action (engine_hooks.c) travel in its graph
 * entry ("h"): a delete traversal has no definitions to carry them. */
static char *graph_entry(const expand_t *x, int i)
{
    char *text = cv_traversal_entry(x->graph, i);
    const char *node = cv_graph_name(x->graph, i);
    const json_t *registry = json_object_get(x->env, "resource_registry");
    unsigned hooks = text && strlen(node) > 2 ? cv_env_hooks(registry, node + 2) : 0;
    hooks &=
        node[0] == 'c' ? CV_ENV_HOOK_PRE_DELETE : CV_ENV_HOOK_PRE_CREATE | CV_ENV_HOOK_PRE_UPDATE;
    if (!hooks)
        return text;
    json_t *entry = json_loads(text, 0, NULL);
    json_object_set_new(entry, "h", json_integer(hooks));
    char *with = entry ? json_dumps(entry, JSON_COMPACT) : NULL;
    json_decref(entry);
    if (!with)
        return text;
    free(text);
    return with;
}

static void write_graph(expand_t *x, hset_batch_t *b)
{
    batch_start(b, x, GRAPH);
    size_t n = cv_graph_count(x->graph);
    for (size_t i = 0; i < n; i++)
        batch_add(x->run.w, b, cv_graph_name(x->graph, (int)i), graph_entry(x, (int)i));
    batch_flush(x->run.w, b);
}

static int build_graph(expand_t *x)
{
    x->graph = cv_expand_graph(x->run.msg.kind, x->tpl, x->index);
    return x->graph ? 0 : CV_ENOMEM;
}

static void write_traversal(expand_t *x)
{
    hset_batch_t *b = calloc(1, sizeof(*b));
    if (!b) {
        expand_retry(x);
        return;
    }
    write_definitions(x, b);
    write_graph(x, b);
    free(b);
    char k[4][CV_KEY_MAX], trav[24], total[24];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, x->run.msg.stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_DEF, x->run.msg.stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_RDEF, x->run.msg.stack, x->run.msg.traversal, NULL);
    cv_key(k[3], CV_KEY_MAX, CV_KEY_GRAPH, x->run.msg.stack, x->run.msg.traversal, NULL);
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)x->run.msg.traversal);
    snprintf(total, sizeof(total), "%zu", cv_graph_count(x->graph));
    /* hidden ones sealed; all of a nested stack's, any of which may carry
     * a parent's secret (engine_nested.c seals them so) */
    char *params = cv_seal_members_dumps(x->tpl->parameters, x->nested ? NULL : x->tpl->hidden);
    cv_stack_expanded_keys_t keys = {
        .stack = k[0],
        .def = k[1],
        .rdef = k[2],
        .graph = k[3],
        .rdef_draft = x->draft[RDEF],
        .graph_draft = x->draft[GRAPH],
    };
    cv_stack_expanded_args_t args = {
        .traversal = trav,
        .nodes = total,
        .params = params ? params : "{}",
    };
    int rc = cv_redis_call(x->run.w->redis, CV_SCRIPT_STACK_EXPANDED, keys.v, args.v, 0, NULL, NULL,
                           on_expanded, x);
    free(params);
    if (rc != 0)
        expand_retry(x);
}

/* A stored definition that no longer parses (e.g. written by another
 * version) fails the traversal with the parser's reason, never silently. */
static void on_fail_recorded(cv_redis_t *r, redisReply *rep, void *ud)
{
    (void)r;
    if (!rep || rep->type == REDIS_REPLY_ERROR)
        expand_retry(ud);
    else
        expand_end(ud);
}

static void fail_stack(expand_t *x, const char *reason)
{
    cv_error("stack %s: %s", x->run.msg.stack, reason);
    cv_call_t call;
    cv_call_stack_finish(&call, x->run.msg.stack, x->run.msg.traversal, "FAILED", reason, "{}",
                         x->run.w->id);
    if (cv_redis_call(x->run.w->redis, call.script, call.keys, call.args, 0, NULL, NULL,
                      on_fail_recorded, x) != 0)
        expand_retry(x);
}

/* The size of reply element `i` (0 when it is not a string). */
static size_t reply_len(const redisReply *rep, size_t i)
{
    const redisReply *e = cv_reply_at(rep, i);
    return e && e->type == REDIS_REPLY_STRING ? e->len : 0;
}

/*
 * The worker's limits are the authority, whatever the client checked: a
 * definition stored by a client (depth 0; a nested stack's definition is
 * this engine's own making) may not be larger than --max-template-bytes,
 * template and its files each, measured as stored, before it is parsed.
 */
static int check_stored_size(const expand_t *x, const redisReply *rep, int depth, char *err,
                             size_t errsz)
{
    const cv_limits_t *l = &x->run.w->limits;
    if (depth > 0 || x->run.msg.kind == CV_TRAV_DELETE) /* a delete must always be possible */
        return 0;
    int rc =
        cv_limits_check(l, CV_LIMIT_TEMPLATE_BYTES, reply_len(rep, CV_STACK_DEFINITION_R_TEMPLATE),
                        "stored template", err, errsz);
    return rc ? rc
              : cv_limits_check(l, CV_LIMIT_TEMPLATE_BYTES,
                                reply_len(rep, CV_STACK_DEFINITION_R_FILES),
                                "stored template files", err, errsz);
}

/* Counts what the stack expands into (cv_template_count) before anything
 * is written: a group of 10^9 fails here, after one multiplication. */
static int check_counts(const expand_t *x, const cv_tpl_opts_t *opts, char *err, size_t errsz)
{
    if (x->run.msg.kind == CV_TRAV_DELETE)
        return 0;
    cv_tpl_count_t count;
    return cv_template_count(x->tpl, x->tree, "template", opts, &x->run.w->limits, &count, err,
                             errsz);
}

static void on_definition(cv_redis_t *r, redisReply *rep, void *ud)
{
    expand_t *x = ud;
    (void)r;
    if (cv_reply_answer(CV_SCRIPT_STACK_DEFINITION, rep) != CV_ANSWER_VALUE ||
        rep->elements != CV_STACK_DEFINITION_R_ENV + 1) {
        expand_retry(x);
        return;
    }
    const char *traversal = cv_reply_str(rep, CV_STACK_DEFINITION_R_TRAVERSAL);
    if (!cv_reply_str(rep, CV_STACK_DEFINITION_R_ACTION)[0] && !traversal[0]) {
        cv_poison_unknown_stack(x->run.w, x->run.job, &x->run.msg); /* no action, no traversal */
        cv_jobrun_drop(&x->run);
        return;
    }
    if (strtoull(traversal, NULL, 10) != x->run.msg.traversal) {
        cv_worker_count(x->run.w, CV_STAT_STALE, 1);
        expand_end(x);
        return;
    }
    char err[1024];
    int depth = atoi(cv_reply_str(rep, CV_STACK_DEFINITION_R_DEPTH));
    x->nested = depth > 0;
    if (check_stored_size(x, rep, depth, err, sizeof(err)) != 0) {
        fail_stack(x, err);
        return;
    }
    json_t *tpl = json_loads(cv_reply_str(rep, CV_STACK_DEFINITION_R_TEMPLATE), 0, NULL);
    int sealed = 0;
    json_t *params =
        cv_unseal_loads(cv_reply_str(rep, CV_STACK_DEFINITION_R_PARAMS), &sealed, err, sizeof(err));
    if (sealed) {
        /* this engine lacks the key: another one, or this one once its key
         * file holds it, expands the stack */
        cv_warn("stack %s: %s; retrying", x->run.msg.stack, err);
        json_decref(params);
        expand_retry(x);
        return;
    }
    if (params && !json_is_object(params)) {
        json_decref(params);
        params = NULL;
    }
    json_t *files = json_loads(cv_reply_str(rep, CV_STACK_DEFINITION_R_FILES), 0, NULL);
    x->env = json_loads(cv_reply_str(rep, CV_STACK_DEFINITION_R_ENV), 0, NULL);
    if (!json_is_object(x->env)) {
        json_decref(x->env);
        x->env = json_object();
    }
    /* Heat's precedence: parameters given, then parameter_defaults, then the
     * template's defaults; a nested stack's given ones are its properties. */
    if (params && tpl)
        cv_env_apply_defaults(params, json_object_get(x->env, "parameter_defaults"), tpl);
    cv_tpl_opts_t opts = {.files = files,
                          .depth = depth,
                          .max_depth = (int)x->run.w->limits.nesting_depth,
                          .env = x->env,
                          /* a delete must always be possible, also of a
                           * definition that no longer validates */
                          .no_eval = x->run.msg.kind == CV_TRAV_DELETE};
    int rc =
        tpl ? cv_template_from_json_opts(tpl, "template", params, &opts, &x->tpl, err, sizeof(err))
            : cv_seterr(err, sizeof(err), CV_EPARSE, "stored template is not JSON");
    x->tree = tpl;
    if (rc == 0)
        rc = check_counts(x, &opts, err, sizeof(err));
    json_decref(params);
    json_decref(files);
    if (rc) {
        fail_stack(x, err);
        return;
    }
    cv_resp_t *reply = cv_flowrun_resp(rep, false);
    x->index = cv_resp_to_object(cv_resp_at(reply, CV_STACK_DEFINITION_R_INDEX));
    free(reply);
    if (build_graph(x) != 0) {
        fail_stack(x, "out of memory building the traversal graph");
        return;
    }
    write_traversal(x);
}

static void expand_start(cv_jobrun_t *run)
{
    expand_t *x = (expand_t *)run;
    if (!cv_gate_enter(gate_of(x), &x->waiter))
        return;
    char k[3][CV_KEY_MAX];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, x->run.msg.stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_DEF, x->run.msg.stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_INDEX, x->run.msg.stack, 0, NULL);
    cv_stack_definition_keys_t keys = {.stack = k[0], .def = k[1], .index = k[2]};
    cv_stack_definition_args_t args = {.nil = NULL};
    if (cv_redis_call(x->run.w->redis, CV_SCRIPT_STACK_DEFINITION, keys.v, args.v, 0, NULL, NULL,
                      on_definition, x) != 0)
        expand_retry(x);
}

/* Draft keys share the stack's hash tag and name their expansion
 * ("<worker>:<n>"), so two expansions of one traversal (on any workers)
 * never write the same key. */
static void name_drafts(expand_t *x)
{
    static unsigned long long seq;
    char expansion[CV_ID_MAX + 24];
    snprintf(expansion, sizeof(expansion), "%s:%llu", x->run.w->id, ++seq);
    cv_key(x->draft[RDEF], CV_KEY_MAX, CV_KEY_RDEF_DRAFT, x->run.msg.stack, x->run.msg.traversal,
           expansion);
    cv_key(x->draft[GRAPH], CV_KEY_MAX, CV_KEY_GRAPH_DRAFT, x->run.msg.stack, x->run.msg.traversal,
           expansion);
}

void cv__engine_stack_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    expand_t *x = calloc(1, sizeof(*x));
    cv_jobrun_init(&x->run, w, job, m, expand_start, expand_reset);
    x->waiter.start = expand_admitted;
    name_drafts(x);
    cv_info("expanding stack %s traversal %llu (%s)", m->stack, (unsigned long long)m->traversal,
            cv_trav_kind_name(m->kind));
    cv_jobrun_start(&x->run);
}
