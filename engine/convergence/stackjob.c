/*
 * The STACK step machine's line (cv_stackjob.h): the stored definition
 * read and checked against the worker's limits, parsed, the graph built;
 * the drafts written and put in place; the roots' jobs published; or the
 * traversal ended at once, or failed with the parser's reason.
 */
#include "cv__stackjob.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_expand.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Root jobs of one expansion handed to Kafka and not yet acknowledged: the
 * rest wait here, so that a burst of big expansions is never a burst of
 * messages queued in the worker (each ~350 bytes in librdkafka). */
#define ROOTS_IN_FLIGHT 4096

static const cv_flow_t *end(cv_stackjob_t *x, cv_flow_kind_t kind)
{
    return cv__flow_end(&x->buf, kind);
}

/* ---- the roots ---- */

/* The next ROOTS_IN_FLIGHT root jobs, up to CV_MSG_NODES_MAX to a message
 * (cv_msg_batch_size); none left: the job is done. */
static const cv_flow_t *publish_more(cv_stackjob_t *x)
{
    size_t nroots = json_array_size(x->roots), per = cv_msg_batch_size(nroots);
    for (size_t msgs = 0; x->next_root < nroots && msgs < ROOTS_IN_FLIGHT / CV_MSG_NODES_MAX;
         msgs++) {
        const char *nodes[CV_MSG_NODES_MAX];
        size_t n = 0;
        for (; n < per && x->next_root < nroots; n++)
            nodes[n] = json_string_value(json_array_get(x->roots, x->next_root++));
        if (cv__flow_nodes(&x->buf, x->msg.stack, x->msg.traversal, nodes, n, x->express) != 0)
            return end(x, CV_FLOW_RETRY);
    }
    if (x->buf.a.nmsgs == 0)
        return end(x, CV_FLOW_DONE);
    x->state = CV_STACKJOB_ROOTS;
    return end(x, CV_FLOW_IO);
}

static const cv_flow_t *roots_delivered(cv_stackjob_t *x, const cv_flow_in_t *in)
{
    if (in->published) /* the whole job again: its roots are published again */
        return end(x, CV_FLOW_RETRY);
    return publish_more(x);
}

/* The roots listed are published; the template and the graph are no
 * longer needed: only the names are kept. */
static const cv_flow_t *publish_listed(cv_stackjob_t *x)
{
    cv_template_free(x->tpl);
    cv_graph_free(x->graph);
    x->tpl = NULL;
    x->graph = NULL;
    x->next_root = 0;
    return publish_more(x);
}

static const cv_flow_t *publish_roots(cv_stackjob_t *x)
{
    size_t n = cv_graph_count(x->graph), npreds;
    x->roots = json_array();
    for (size_t i = 0; i < n; i++) {
        cv_graph_preds(x->graph, (int)i, &npreds);
        if (npreds == 0)
            json_array_append_new(x->roots, json_string(cv_graph_name(x->graph, (int)i)));
    }
    return publish_listed(x);
}

/* Another expansion of this traversal stands: its roots, as stack_expanded
 * listed them, get their jobs again. */
static const cv_flow_t *publish_standing_roots(cv_stackjob_t *x, const cv_resp_t *rep)
{
    x->roots = json_array();
    for (size_t i = CV_STACK_EXPANDED_R_DUP_FIRST_ROOT; i < cv_resp_count(rep); i++)
        json_array_append_new(x->roots, json_string(cv_resp_str(rep, i)));
    return publish_listed(x);
}

/* ---- put in place ---- */

/* A traversal with nothing to walk is ended at once. */
static const cv_flow_t *finish(cv_stackjob_t *x)
{
    x->state = CV_STACKJOB_PROGRESS;
    return cv_progress_finish(&x->progress, &x->buf, x->msg.stack, x->msg.traversal, x->worker);
}

static const cv_flow_t *finished(cv_stackjob_t *x, const cv_flow_in_t *in)
{
    int rc = 0;
    const cv_flow_t *a = cv_progress_step(&x->progress, &x->buf, in, &rc);
    if (a)
        return a;
    return end(x, rc == CV_EREDIS || rc == CV_EKAFKA ? CV_FLOW_RETRY : CV_FLOW_DONE);
}

static const cv_flow_t *expanded(cv_stackjob_t *x, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    if (!rep || rep->type == CV_RESP_ERROR)
        return end(x, CV_FLOW_RETRY);
    cv_answer_t answer = cv_resp_answer(CV_SCRIPT_STACK_EXPANDED, rep);
    bool dup = answer == CV_ANSWER_DUP;
    if (answer != CV_ANSWER_OK && !dup) {
        cv__flow_count(&x->buf, CV_FLOW_STALE);
        return end(x, CV_FLOW_DONE);
    }
    cv__progress_watch(&x->buf, x->msg.stack); /* nested stacks have no name to be found by */
    x->express = x->msg.express && cv_graph_count(x->graph) <= CV_EXPRESS_NODES_MAX;
    if (dup && cv_resp_count(rep) > CV_STACK_EXPANDED_R_DUP_FIRST_ROOT) {
        cv__flow_count(&x->buf, CV_FLOW_STALE);
        return publish_standing_roots(x, rep);
    }
    if (dup || cv_graph_count(x->graph) == 0)
        return finish(x);
    return publish_roots(x);
}

/* The drafts, then stack_expanded: this expansion put in place unless
 * another of the same traversal was. */
static const cv_flow_t *write_traversal(cv_stackjob_t *x)
{
    if (cv__stackjob_write_drafts(x) != 0)
        return end(x, CV_FLOW_RETRY);
    /* hidden ones sealed; all of a nested stack's, any of which may carry
     * a parent's secret (checkjob_nested.c seals them so) */
    char *params = cv_seal_members_dumps(x->tpl->parameters, x->nested ? NULL : x->tpl->hidden);
    cv_call_t *call = cv__flow_call(&x->buf, true);
    if (!call || (params && !cv__flow_own(&x->buf, params)))
        return end(x, CV_FLOW_RETRY);
    cv_call_stack_expanded(call, &x->msg, x->draft[CV_STACKJOB_RDEF], x->draft[CV_STACKJOB_GRAPH],
                           cv_graph_count(x->graph), params ? params : "{}");
    x->state = CV_STACKJOB_EXPANDED;
    return end(x, CV_FLOW_IO);
}

/* ---- the definition ---- */

/* A stored definition that no longer parses (e.g. written by another
 * version), or that is beyond the limits, fails the traversal with the
 * reason, never silently. */
static const cv_flow_t *fail_stack(cv_stackjob_t *x, const char *reason)
{
    cv__flow_log(&x->buf, CV_FLOW_ERROR, "stack %s: %s", x->msg.stack, reason);
    cv_call_t *call = cv__flow_call(&x->buf, true);
    if (!call)
        return end(x, CV_FLOW_RETRY);
    cv_call_stack_finish(call, x->msg.stack, x->msg.traversal, "FAILED",
                         cv__flow_keep(&x->buf, reason), "{}", x->worker);
    x->state = CV_STACKJOB_FAILED;
    return end(x, CV_FLOW_IO);
}

static const cv_flow_t *fail_recorded(cv_stackjob_t *x, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    return end(x, !rep || rep->type == CV_RESP_ERROR ? CV_FLOW_RETRY : CV_FLOW_DONE);
}

/* The size of reply element `i` (0 when it is not a string). */
static size_t reply_len(const cv_resp_t *rep, size_t i)
{
    const cv_resp_t *e = cv_resp_at(rep, i);
    return e && e->type == CV_RESP_STRING ? e->len : 0;
}

/*
 * The worker's limits are the authority, whatever the client checked: a
 * definition stored by a client (depth 0; a nested stack's definition is
 * the engine's own making) may not be larger than --max-template-bytes,
 * template and its files each, measured as stored, before it is parsed.
 */
static int check_stored_size(const cv_stackjob_t *x, const cv_resp_t *rep, int depth, char *errstr,
                             size_t errstr_size)
{
    if (depth > 0 || x->msg.kind == CV_TRAV_DELETE) /* a delete must always be possible */
        return 0;
    int rc = cv_limits_check(x->limits, CV_LIMIT_TEMPLATE_BYTES,
                             reply_len(rep, CV_STACK_DEFINITION_R_TEMPLATE), "stored template",
                             errstr, errstr_size);
    return rc ? rc
              : cv_limits_check(x->limits, CV_LIMIT_TEMPLATE_BYTES,
                                reply_len(rep, CV_STACK_DEFINITION_R_FILES),
                                "stored template files", errstr, errstr_size);
}

/* Counts what the stack expands into (cv_template_count) before anything
 * is written: a group of 10^9 fails here, after one multiplication. */
static int check_counts(const cv_stackjob_t *x, const cv_tpl_opts_t *opts, char *errstr,
                        size_t errstr_size)
{
    if (x->msg.kind == CV_TRAV_DELETE)
        return 0;
    cv_tpl_count_t count;
    return cv_template_count(x->tpl, x->tree, "template", opts, x->limits, &count, errstr,
                             errstr_size);
}

/* The stack's environment as stored; an empty one when none. */
static json_t *environment(const cv_resp_t *rep)
{
    json_t *env = json_loads(cv_resp_str(rep, CV_STACK_DEFINITION_R_ENV), 0, NULL);
    if (json_is_object(env))
        return env;
    json_decref(env);
    return json_object();
}

/* Parses the stored template into x->tpl (x->tree the tree as stored):
 * 0, or non-zero with the reason in errstr. params: the stored parameters,
 * sealed ones opened. */
static int parse(cv_stackjob_t *x, const cv_resp_t *rep, json_t *params, int depth, char *errstr,
                 size_t errstr_size)
{
    json_t *tpl = json_loads(cv_resp_str(rep, CV_STACK_DEFINITION_R_TEMPLATE), 0, NULL);
    json_t *files = json_loads(cv_resp_str(rep, CV_STACK_DEFINITION_R_FILES), 0, NULL);
    x->env = environment(rep);
    /* Heat's precedence: parameters given, then parameter_defaults, then the
     * template's defaults; a nested stack's given ones are its properties. */
    if (params && tpl)
        cv_env_apply_defaults(params, json_object_get(x->env, "parameter_defaults"), tpl);
    cv_tpl_opts_t opts = {.files = files,
                          .depth = depth,
                          .max_depth = (int)x->limits->nesting_depth,
                          .env = x->env,
                          /* a delete must always be possible, also of a
                           * definition that no longer validates */
                          .no_eval = x->msg.kind == CV_TRAV_DELETE};
    int rc = tpl ? cv_template_from_json_opts(tpl, "template", params, &opts, &x->tpl, errstr,
                                              errstr_size)
                 : cv_seterr(errstr, errstr_size, CV_EPARSE, "stored template is not JSON");
    x->tree = tpl;
    if (rc == 0)
        rc = check_counts(x, &opts, errstr, errstr_size);
    json_decref(files);
    return rc;
}

static const cv_flow_t *defined(cv_stackjob_t *x, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    if (cv_resp_answer(CV_SCRIPT_STACK_DEFINITION, rep) != CV_ANSWER_VALUE ||
        cv_resp_count(rep) != CV_STACK_DEFINITION_R_ENV + 1)
        return end(x, CV_FLOW_RETRY);
    const char *traversal = cv_resp_str(rep, CV_STACK_DEFINITION_R_TRAVERSAL);
    if (!cv_resp_str(rep, CV_STACK_DEFINITION_R_ACTION)[0] && !traversal[0])
        return end(x, CV_FLOW_UNKNOWN_STACK); /* no action, no traversal */
    if (strtoull(traversal, NULL, 10) != x->msg.traversal) {
        cv__flow_count(&x->buf, CV_FLOW_STALE);
        return end(x, CV_FLOW_DONE);
    }
    char err[1024];
    int depth = atoi(cv_resp_str(rep, CV_STACK_DEFINITION_R_DEPTH));
    x->nested = depth > 0;
    if (check_stored_size(x, rep, depth, err, sizeof(err)) != 0)
        return fail_stack(x, err);
    int sealed = 0;
    json_t *params =
        cv_unseal_loads(cv_resp_str(rep, CV_STACK_DEFINITION_R_PARAMS), &sealed, err, sizeof(err));
    if (sealed) {
        /* this worker lacks the key: another one, or this one once its key
         * file holds it, expands the stack */
        cv__flow_log(&x->buf, CV_FLOW_WARN, "stack %s: %s; retrying", x->msg.stack, err);
        json_decref(params);
        return end(x, CV_FLOW_RETRY);
    }
    if (params && !json_is_object(params)) {
        json_decref(params);
        params = NULL;
    }
    int rc = parse(x, rep, params, depth, err, sizeof(err));
    json_decref(params);
    if (rc)
        return fail_stack(x, err);
    x->index = cv_resp_to_object(cv_resp_at(rep, CV_STACK_DEFINITION_R_INDEX));
    x->graph = cv_expand_graph(x->msg.kind, x->tpl, x->index);
    if (!x->graph)
        return fail_stack(x, "out of memory building the traversal graph");
    return write_traversal(x);
}

/* ------------------------------------------------------------------------
 * The machine
 * ------------------------------------------------------------------------ */

void cv_stackjob_init(cv_stackjob_t *x, const cv_msg_t *m, const cv_stackjob_conf_t *conf)
{
    memset(x, 0, sizeof(*x));
    x->msg = *m;
    cv_str_copy(x->worker, sizeof(x->worker), conf->worker);
    x->limits = conf->limits;
    /* Draft keys share the stack's hash tag and name their expansion, so
     * two expansions of one traversal (on any workers) never write the
     * same key. */
    cv_key(x->draft[CV_STACKJOB_RDEF], CV_KEY_MAX, CV_KEY_RDEF_DRAFT, m->stack, m->traversal,
           conf->expansion);
    cv_key(x->draft[CV_STACKJOB_GRAPH], CV_KEY_MAX, CV_KEY_GRAPH_DRAFT, m->stack, m->traversal,
           conf->expansion);
    cv__flow_begin(&x->buf);
}

const cv_flow_t *cv_stackjob_start(cv_stackjob_t *x)
{
    cv_stackjob_reset(x);
    cv_call_t *call = cv__flow_call(&x->buf, true);
    if (!call)
        return end(x, CV_FLOW_RETRY);
    cv_call_stack_definition(call, x->msg.stack);
    return end(x, CV_FLOW_IO);
}

const cv_flow_t *cv_stackjob_step(cv_stackjob_t *x, const cv_flow_in_t *in)
{
    cv__flow_begin(&x->buf); /* what the last answer referred to was sent with it */
    switch (x->state) {
    case CV_STACKJOB_DEFINITION:
        return defined(x, in);
    case CV_STACKJOB_FAILED:
        return fail_recorded(x, in);
    case CV_STACKJOB_EXPANDED:
        return expanded(x, in);
    case CV_STACKJOB_ROOTS:
        return roots_delivered(x, in);
    case CV_STACKJOB_PROGRESS:
        break;
    }
    return finished(x, in);
}

void cv_stackjob_reset(cv_stackjob_t *x)
{
    cv_template_free(x->tpl);
    cv_graph_free(x->graph);
    json_decref(x->index);
    json_decref(x->env);
    json_decref(x->tree);
    json_decref(x->roots);
    x->tpl = NULL;
    x->graph = NULL;
    x->index = x->env = x->tree = x->roots = NULL;
    x->next_root = 0;
    x->nested = x->express = false;
    cv_progress_clear(&x->progress);
    cv__flow_clear(&x->buf);
    cv__flow_begin(&x->buf);
    x->state = CV_STACKJOB_DEFINITION;
}

const cv_msg_t *cv_stackjob_msg(const cv_stackjob_t *x)
{
    return &x->msg;
}

cv_stackjob_state_t cv_stackjob_state(const cv_stackjob_t *x)
{
    return x->state;
}
