/*
 * cv_progress — the end of a traversal as steps (cv_progress.h): read the
 * definition, read the records its outputs reference, resolve the outputs
 * and write <ACTION>_COMPLETE (stack_finish.lua); or publish the re-run the
 * script began (AGAIN), or leave the traversal to the reaper (BUSY).
 */
#include "cv_progress.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_record.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the end waits for. */
enum {
    F_NONE,
    F_DEFINITION, /* stack_definition's reply */
    F_REFS,       /* resource_ref's replies, one per referenced resource */
    F_WRITE,      /* stack_finish's reply */
    F_RERUN,      /* the re-run's STACK job delivered */
};

static const cv_flow_t *over(cv_progress_t *p, int *rc, int outcome)
{
    *rc = outcome;
    cv__progress_finish_clear(p);
    return NULL;
}

const cv_flow_t *cv__progress_finish_start(cv_progress_t *p, cv_flow_buf_t *b, const char *stack,
                                           uint64_t traversal)
{
    cv__progress_finish_clear(p);
    cv_str_copy(p->fin.stack, sizeof(p->fin.stack), stack);
    p->fin.traversal = traversal;
    p->fin.state = F_DEFINITION;
    cv_call_t *call = cv__flow_call(b, true);
    if (!call) {
        p->fin.state = F_NONE;
        return cv__flow_end(b, CV_FLOW_RETRY);
    }
    cv_call_stack_definition(call, stack);
    return cv__flow_end(b, CV_FLOW_IO);
}

/* ---- the write ---- */

static const cv_flow_t *set_complete(cv_progress_t *p, cv_flow_buf_t *b, const char *outputs)
{
    char reason[64];
    snprintf(reason, sizeof(reason), "Stack %s completed successfully", p->fin.action);
    cv_call_t *call = cv__flow_call(b, true);
    if (!call)
        return NULL;
    cv_call_stack_finish(call, p->fin.stack, p->fin.traversal, "COMPLETE", cv__flow_keep(b, reason),
                         cv__flow_keep(b, outputs), p->worker);
    p->fin.state = F_WRITE;
    return cv__flow_end(b, CV_FLOW_IO);
}

/* stack_finish.lua began the re-run itself, in the step that found the
 * records (so it can never supersede a traversal begun meanwhile); what is
 * left is its STACK job. Lost (this worker dies, Kafka refuses it), the
 * stack is <ACTION>_IN_PROGRESS and never expanded, and the reaper
 * re-queues it. */
static const cv_flow_t *publish_rerun(cv_progress_t *p, cv_flow_buf_t *b, uint64_t traversal)
{
    int kind = cv_trav_kind_parse(p->fin.action);
    if (kind < 0)
        return NULL;
    cv__flow_log(b, CV_FLOW_INFO,
                 "stack %s: records made behind the back of %s traversal %llu; running it again "
                 "(traversal %llu)",
                 p->fin.stack, p->fin.action, (unsigned long long)p->fin.traversal,
                 (unsigned long long)traversal);
    cv__progress_watch(b, p->fin.stack);
    /* The bulk lane, as the reaper's: who began the stack is not known here. */
    cv_msg_t m = {.type = CV_MSG_STACK, .kind = (uint8_t)kind, .traversal = traversal};
    cv_str_copy(m.stack, sizeof(m.stack), p->fin.stack);
    if (cv__flow_msg(b, &m) != 0)
        return NULL;
    p->fin.state = F_RERUN;
    return cv__flow_end(b, CV_FLOW_IO);
}

/* The ended (or re-run) traversal's bookkeeping is garbage: stack_finish.lua
 * listed it in the stack's gc set, and the sweep removes it in bounded
 * batches after this job is done (the reaper sweeps again should this
 * worker die first). */
static const cv_flow_t *swept(cv_progress_t *p, cv_flow_buf_t *b, int *rc)
{
    b->a.sweep = cv__flow_keep(b, p->fin.stack);
    return over(p, rc, 0);
}

/* Compare-and-delete: the name may be another stack's by now. The reaper
 * frees it should this be lost, and notes the stack deleted (to be purged
 * after the retention) as this does. */
static void deleted(cv_progress_t *p, cv_flow_buf_t *b, double now)
{
    char key[CV_KEY_MAX], when[32];
    cv_key(key, sizeof(key), CV_KEY_DELETED, NULL, 0, NULL);
    snprintf(when, sizeof(when), "%.3f", now);
    const char *argv[] = {"ZADD", key, "NX", when, p->fin.stack};
    cv__flow_argv(b, false, 5, argv);
    cv_call_t *call = cv__flow_call(b, false);
    if (call)
        cv_call_stack_unname(call, cv__flow_keep(b, p->fin.name), cv__flow_keep(b, p->fin.stack));
}

static const cv_flow_t *written(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in, int *rc)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    if (!rep || rep->type == CV_RESP_ERROR)
        return over(p, rc, CV_EREDIS);
    cv_answer_t answer = cv_resp_answer(CV_SCRIPT_STACK_FINISH, rep);
    if (answer == CV_ANSWER_AGAIN) {
        /* Records appeared behind the traversal's back: its re-run's graph
         * has their cleanup nodes. */
        const cv_flow_t *a =
            publish_rerun(p, b, (uint64_t)cv_resp_int(rep, CV_STACK_FINISH_R_RERUN_TRAVERSAL));
        return a ? a : over(p, rc, CV_EKAFKA);
    }
    if (answer == CV_ANSWER_BUSY) {
        /* Ended again by the reaper once that action is recorded. */
        cv__flow_log(b, CV_FLOW_INFO,
                     "stack %s: %s traversal %llu waits for an older action on %s to be recorded",
                     p->fin.stack, p->fin.action, (unsigned long long)p->fin.traversal,
                     cv_resp_str(rep, CV_STACK_FINISH_R_BUSY_RESOURCE));
        return over(p, rc, 0);
    }
    if (answer != CV_ANSWER_OK)
        return over(p, rc, CV_ESTALE);
    cv__flow_log(b, CV_FLOW_INFO, "stack %s (%s) %s_COMPLETE, traversal %llu", p->fin.name,
                 p->fin.stack, p->fin.action, (unsigned long long)p->fin.traversal);
    if (strcmp(p->fin.action, "DELETE") == 0)
        deleted(p, b, in->now);
    return swept(p, b, rc);
}

/* ---- the outputs ---- */

static int lookup_resource(void *ud, const char *name, const char **physical_id,
                           const json_t **attributes)
{
    cv_progress_t *p = ud;
    json_t *r = json_object_get(p->fin.resources, name);
    if (!r)
        return CV_ENOENT;
    *physical_id = json_string_value(json_object_get(r, "id"));
    *attributes = json_object_get(r, "attrs");
    return 0;
}

/* Heat shows an output that cannot be resolved as null with an error; the
 * stack itself is still complete. */
static const cv_flow_t *resolve_outputs(cv_progress_t *p, cv_flow_buf_t *b)
{
    cv_resolve_ctx_t rctx = {p->fin.params, lookup_resource, p};
    json_t *resolved = json_object();
    const char *name;
    json_t *out;
    json_object_foreach(p->fin.outputs, name, out)
    {
        char err[512], where[CV_NAME_MAX + 32];
        snprintf(where, sizeof(where), "outputs.%s", name);
        json_t *v =
            cv_intrinsic_resolve(json_object_get(out, "value"), &rctx, where, err, sizeof(err));
        if (!v)
            cv__flow_log(b, CV_FLOW_WARN, "stack %s: %s", p->fin.name, err);
        json_object_set_new(resolved, name, v ? v : json_null());
    }
    char *text = json_dumps(resolved, JSON_COMPACT);
    json_decref(resolved);
    const cv_flow_t *a = set_complete(p, b, text ? text : "{}");
    free(text);
    return a;
}

/* One resource_ref reply: the resource as references resolve to it, or
 * non-zero. */
static int take_record(cv_progress_t *p, const cv_resp_t *rep)
{
    if (cv_resp_answer(CV_SCRIPT_RESOURCE_REF, rep) != CV_ANSWER_VALUE ||
        cv_resp_count(rep) != CV_RESOURCE_REF_R_TYPE + 1)
        return CV_EREDIS;
    int sealed = 0;
    json_t *attrs = cv_unseal_loads(cv_resp_str(rep, CV_RESOURCE_REF_R_ATTRS), &sealed, NULL, 0);
    if (!json_is_object(attrs)) {
        json_decref(attrs);
        attrs = json_object();
    }
    const char *name = cv_resp_str(rep, CV_RESOURCE_REF_R_NAME);
    const char *ref = cv_rtype_reference_id(cv_resp_str(rep, CV_RESOURCE_REF_R_TYPE), name,
                                            cv_resp_str(rep, CV_RESOURCE_REF_R_PHYSICAL_ID), attrs);
    json_object_set_new(p->fin.resources, name, json_pack("{s:s, s:o}", "id", ref, "attrs", attrs));
    return sealed;
}

static const cv_flow_t *records_read(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in,
                                     int *rc)
{
    int failed = 0;
    for (size_t i = 0; i < json_array_size(p->fin.names); i++) {
        int r = take_record(p, cv_flow_reply(in, i));
        if (r)
            failed = r;
    }
    if (failed)
        return over(p, rc, failed);
    const cv_flow_t *a = resolve_outputs(p, b);
    return a ? a : over(p, rc, CV_ENOMEM);
}

/* The set of resources the outputs reference, each once. */
static json_t *referenced_names(const json_t *outputs)
{
    json_t *refs = json_array(), *uniq = json_object(), *names = json_array();
    const char *name;
    json_t *out;
    json_object_foreach((json_t *)outputs, name, out)
    {
        cv_intrinsic_references(json_object_get(out, "value"), refs);
    }
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        json_object_set(uniq, json_string_value(ref), json_true());
    }
    json_decref(refs);
    json_object_foreach(uniq, name, out)
    {
        json_array_append_new(names, json_string(name));
    }
    json_decref(uniq);
    return names;
}

/* The records the outputs reference, read at once; none: resolved now. */
static const cv_flow_t *read_referenced(cv_progress_t *p, cv_flow_buf_t *b)
{
    p->fin.names = referenced_names(p->fin.outputs);
    if (json_array_size(p->fin.names) == 0)
        return resolve_outputs(p, b);
    size_t i;
    json_t *name;
    json_array_foreach(p->fin.names, i, name)
    {
        cv_call_t *call = cv__flow_call(b, true);
        if (!call)
            return NULL;
        cv_call_resource_ref(call, p->fin.stack, json_string_value(name));
    }
    p->fin.state = F_REFS;
    return cv__flow_end(b, CV_FLOW_IO);
}

/* The outputs as the template's conditions leave them for these
 * parameters (a disabled output is null, an `if` took its branch); the
 * section as written if the template no longer parses, which the
 * traversal's expansion has already reported. */
static json_t *outputs_that_run(const json_t *tpl, const json_t *params, const cv_resp_t *rep)
{
    json_t *files = json_loads(cv_resp_str(rep, CV_STACK_DEFINITION_R_FILES), 0, NULL);
    cv_tpl_opts_t opts = {.files = files,
                          .depth = atoi(cv_resp_str(rep, CV_STACK_DEFINITION_R_DEPTH))};
    cv_template_t *parsed = NULL;
    char err[512];
    json_t *outputs = NULL;
    if (tpl &&
        cv_template_from_json_opts(tpl, "template", params, &opts, &parsed, err, sizeof(err)) == 0)
        outputs = json_incref(parsed->outputs);
    else
        outputs = json_incref(json_object_get(tpl, "outputs"));
    cv_template_free(parsed);
    json_decref(files);
    if (!json_is_object(outputs)) {
        json_decref(outputs);
        outputs = json_object();
    }
    return outputs;
}

static const cv_flow_t *defined(cv_progress_t *p, cv_flow_buf_t *b, const cv_flow_in_t *in, int *rc)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    if (cv_resp_answer(CV_SCRIPT_STACK_DEFINITION, rep) != CV_ANSWER_VALUE ||
        cv_resp_count(rep) != CV_STACK_DEFINITION_R_ENV + 1)
        return over(p, rc, CV_EREDIS);
    const char *traversal = cv_resp_str(rep, CV_STACK_DEFINITION_R_TRAVERSAL);
    if (!traversal[0] || strtoull(traversal, NULL, 10) != p->fin.traversal)
        return over(p, rc, CV_ESTALE);
    cv_str_copy(p->fin.action, sizeof(p->fin.action),
                cv_resp_str(rep, CV_STACK_DEFINITION_R_ACTION));
    cv_str_copy(p->fin.name, sizeof(p->fin.name), cv_resp_str(rep, CV_STACK_DEFINITION_R_NAME));
    const cv_flow_t *a = NULL;
    if (strcmp(p->fin.action, "DELETE") == 0) {
        a = set_complete(p, b, "{}");
        return a ? a : over(p, rc, CV_ENOMEM);
    }
    int sealed = 0;
    p->fin.params =
        cv_unseal_loads(cv_resp_str(rep, CV_STACK_DEFINITION_R_PARAMS), &sealed, NULL, 0);
    if (sealed)
        return over(p, rc, sealed);
    if (!json_is_object(p->fin.params)) {
        json_decref(p->fin.params);
        p->fin.params = json_object();
    }
    json_t *tpl = json_loads(cv_resp_str(rep, CV_STACK_DEFINITION_R_TEMPLATE), 0, NULL);
    p->fin.outputs = outputs_that_run(tpl, p->fin.params, rep);
    json_decref(tpl);
    cv_record_pseudo_params(p->fin.params, p->fin.stack, p->fin.name);
    p->fin.resources = json_object();
    a = read_referenced(p, b);
    return a ? a : over(p, rc, CV_ENOMEM);
}

const cv_flow_t *cv__progress_finish_step(cv_progress_t *p, cv_flow_buf_t *b,
                                          const cv_flow_in_t *in, int *rc)
{
    switch (p->fin.state) {
    case F_DEFINITION:
        return defined(p, b, in, rc);
    case F_REFS:
        return records_read(p, b, in, rc);
    case F_WRITE:
        return written(p, b, in, rc);
    case F_RERUN:
        if (in->published)
            return over(p, rc, CV_EKAFKA);
        return swept(p, b, rc);
    default:
        return over(p, rc, CV_EINVAL);
    }
}

void cv__progress_finish_clear(cv_progress_t *p)
{
    json_decref(p->fin.outputs);
    json_decref(p->fin.params);
    json_decref(p->fin.resources);
    json_decref(p->fin.names);
    memset(&p->fin, 0, sizeof(p->fin));
}
