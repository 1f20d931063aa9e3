/*
 * Ending a traversal: resolve the stack's outputs against the records of the
 * resources they reference, set <ACTION>_COMPLETE, free the name after a
 * delete (and note the stack for its purge), and sweep the traversal's
 * graph, sync points and done set (cv_purge). A
 * traversal that finds records made behind its back (stack_finish.lua
 * AGAIN) is re-run instead: the script began another traversal of the same
 * kind, whose STACK job is published here. One that finds an older
 * traversal's action still to be recorded (BUSY) stays in progress, and the
 * reaper ends it once the stack's progress stalled.
 * Work here is O(outputs) once per traversal, never per resource; the sweep's
 * O(graph size) runs in bounded batches after the job.
 */
#include "cv_progress.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_purge.h"
#include "cv_reaper.h"
#include "cv_record.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct finish_ctx {
    cv_worker_t *w;
    char stack[CV_ID_MAX];
    uint64_t traversal;
    cv_progress_cb cb;
    void *ud;
    char action[16];
    char name[CV_NAME_MAX];
    json_t *outputs;   /* template outputs section */
    json_t *params;    /* resolved parameters */
    json_t *resources; /* name -> {"id":.., "attrs":{..}} of referenced resources */
    size_t pending;
    int rc;
} finish_ctx_t;

static void finish_free(finish_ctx_t *ctx, int rc)
{
    ctx->cb(ctx->ud, rc);
    json_decref(ctx->outputs);
    json_decref(ctx->params);
    json_decref(ctx->resources);
    free(ctx);
}

/* The ended (or re-run) traversal's bookkeeping is garbage: stack_finish.lua
 * listed it in the stack's gc set, and the sweep removes it in bounded
 * batches after this job is done (the reaper sweeps again should this
 * worker die first). */
static void collect_garbage(finish_ctx_t *ctx)
{
    cv_purge_sweep(ctx->w, ctx->stack, NULL, NULL);
    finish_free(ctx, ctx->rc);
}

/* The re-run's STACK job is acknowledged: the superseded traversal's keys
 * are garbage. */
static void on_rerun_published(void *ud, int err)
{
    finish_ctx_t *ctx = ud;
    if (err) {
        finish_free(ctx, CV_EKAFKA);
        return;
    }
    ctx->rc = 0;
    collect_garbage(ctx);
}

/* stack_finish.lua began the re-run itself, in the step that found the
 * records (so it can never supersede a traversal begun meanwhile); what is
 * left is its STACK job. Lost (this worker dies, Kafka refuses it), the
 * stack is <ACTION>_IN_PROGRESS and never expanded, and the reaper
 * re-queues it. */
static int publish_rerun(finish_ctx_t *ctx, uint64_t traversal)
{
    int kind = cv_trav_kind_parse(ctx->action);
    if (kind < 0)
        return CV_EINVAL;
    cv_info("stack %s: records made behind the back of %s traversal %llu; running it again "
            "(traversal %llu)",
            ctx->stack, ctx->action, (unsigned long long)ctx->traversal,
            (unsigned long long)traversal);
    cv_reaper_watch(ctx->w, ctx->stack);
    /* The bulk lane, as the reaper's: who began the stack is not known here. */
    return cv_worker_publish_stack(ctx->w, ctx->stack, kind, traversal, false, on_rerun_published,
                                   ctx);
}

static void on_stack_finish(cv_redis_t *r, redisReply *rep, void *ud)
{
    finish_ctx_t *ctx = ud;
    (void)r;
    cv_answer_t answer = cv_reply_answer(CV_SCRIPT_STACK_FINISH, rep);
    if (!rep || rep->type == REDIS_REPLY_ERROR) {
        finish_free(ctx, CV_EREDIS);
        return;
    }
    if (answer == CV_ANSWER_AGAIN) {
        /* Records appeared behind the traversal's back: its re-run's graph
         * has their cleanup nodes. */
        if (publish_rerun(ctx, (uint64_t)cv_reply_int(rep, CV_STACK_FINISH_R_RERUN_TRAVERSAL)) != 0)
            finish_free(ctx, CV_EKAFKA);
        return;
    }
    if (answer == CV_ANSWER_BUSY) {
        /* Ended again by the reaper once that action is recorded. */
        cv_info("stack %s: %s traversal %llu waits for an older action on %s to be recorded",
                ctx->stack, ctx->action, (unsigned long long)ctx->traversal,
                cv_reply_str(rep, CV_STACK_FINISH_R_BUSY_RESOURCE));
        finish_free(ctx, 0);
        return;
    }
    if (answer != CV_ANSWER_OK) {
        finish_free(ctx, CV_ESTALE);
        return;
    }
    cv_info("stack %s (%s) %s_COMPLETE, traversal %llu", ctx->name, ctx->stack, ctx->action,
            (unsigned long long)ctx->traversal);
    /* Compare-and-delete: the name may be another stack's by now. The
     * reaper frees it should this be lost, and notes the stack deleted (to
     * be purged after the retention) as this does. */
    if (strcmp(ctx->action, "DELETE") == 0) {
        cv_purge_note_deleted(ctx->w, ctx->stack);
        cv_reaper_unname(ctx->w, ctx->name, ctx->stack);
    }
    ctx->rc = 0;
    collect_garbage(ctx);
}

int cv_progress_stack_status(cv_worker_t *w, const char *stack, uint64_t traversal,
                             const char *status, const char *reason, const char *outputs,
                             cv_redis_cb cb, void *ud)
{
    char k[5][CV_KEY_MAX], trav[24], lease_prefix[CV_KEY_MAX], res_prefix[CV_KEY_MAX];
    snprintf(trav, sizeof(trav), "%llu", (unsigned long long)traversal);
    cv_stack_finish_keys_t keys = {
        .stack = k[0],
        .events = k[1],
        .def = k[2],
        .index = k[3],
        .graph = k[4],
    };
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_EVENTS, stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_DEF, stack, 0, NULL);
    cv_key(k[3], CV_KEY_MAX, CV_KEY_INDEX, stack, 0, NULL);
    cv_key(k[4], CV_KEY_MAX, CV_KEY_GRAPH, stack, traversal, NULL);
    cv_key_prefix(lease_prefix, sizeof(lease_prefix), CV_KEY_LEASE, stack, 0);
    cv_key_prefix(res_prefix, sizeof(res_prefix), CV_KEY_RES, stack, 0);
    cv_stack_finish_args_t args = {
        .traversal = trav,
        .status = status,
        .reason = reason,
        .outputs = outputs,
        .worker = w->id,
        .lease_prefix = lease_prefix,
        .res_prefix = res_prefix,
    };
    return cv_redis_call(w->redis, CV_SCRIPT_STACK_FINISH, keys.v, args.v, 0, NULL, NULL, cb, ud);
}

static void set_complete(finish_ctx_t *ctx, const char *outputs_json)
{
    char reason[64];
    snprintf(reason, sizeof(reason), "Stack %s completed successfully", ctx->action);
    if (cv_progress_stack_status(ctx->w, ctx->stack, ctx->traversal, "COMPLETE", reason,
                                 outputs_json, on_stack_finish, ctx) != 0)
        finish_free(ctx, CV_EREDIS);
}

static int lookup_resource(void *ud, const char *name, const char **physical_id,
                           const json_t **attributes)
{
    finish_ctx_t *ctx = ud;
    json_t *r = json_object_get(ctx->resources, name);
    if (!r)
        return CV_ENOENT;
    *physical_id = json_string_value(json_object_get(r, "id"));
    *attributes = json_object_get(r, "attrs");
    return 0;
}

/* Heat shows an output that cannot be resolved as null with an error; the
 * stack itself is still complete. */
static void resolve_outputs(finish_ctx_t *ctx)
{
    cv_resolve_ctx_t rctx = {ctx->params, lookup_resource, ctx};
    json_t *resolved = json_object();
    const char *name;
    json_t *out;
    json_object_foreach(ctx->outputs, name, out)
    {
        char err[512], where[CV_NAME_MAX + 32];
        snprintf(where, sizeof(where), "outputs.%s", name);
        json_t *v =
            cv_intrinsic_resolve(json_object_get(out, "value"), &rctx, where, err, sizeof(err));
        if (!v)
            cv_warn("stack %s: %s", ctx->name, err);
        json_object_set_new(resolved, name, v ? v : json_null());
    }
    char *text = json_dumps(resolved, JSON_COMPACT);
    json_decref(resolved);
    set_complete(ctx, text ? text : "{}");
    free(text);
}

static void on_resource_record(cv_redis_t *r, redisReply *rep, void *ud)
{
    finish_ctx_t *ctx = ud;
    (void)r;
    if (cv_reply_answer(CV_SCRIPT_RESOURCE_REF, rep) == CV_ANSWER_VALUE &&
        rep->elements == CV_RESOURCE_REF_R_TYPE + 1) {
        int sealed = 0;
        json_t *attrs =
            cv_unseal_loads(cv_reply_str(rep, CV_RESOURCE_REF_R_ATTRS), &sealed, NULL, 0);
        if (sealed)
            ctx->rc = sealed;
        if (!json_is_object(attrs)) {
            json_decref(attrs);
            attrs = json_object();
        }
        const char *name = cv_reply_str(rep, CV_RESOURCE_REF_R_NAME);
        const char *ref =
            cv_rtype_reference_id(cv_reply_str(rep, CV_RESOURCE_REF_R_TYPE), name,
                                  cv_reply_str(rep, CV_RESOURCE_REF_R_PHYSICAL_ID), attrs);
        json_object_set_new(ctx->resources, name,
                            json_pack("{s:s, s:o}", "id", ref, "attrs", attrs));
    } else {
        ctx->rc = CV_EREDIS;
    }
    if (--ctx->pending > 0)
        return;
    if (ctx->rc)
        finish_free(ctx, ctx->rc);
    else
        resolve_outputs(ctx);
}

/* The set of resources the outputs reference, each once. */
static json_t *referenced_names(const json_t *outputs)
{
    json_t *refs = json_array(), *uniq = json_object();
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
    return uniq;
}

static void fetch_referenced(finish_ctx_t *ctx)
{
    json_t *names = referenced_names(ctx->outputs);
    ctx->pending = json_object_size(names);
    if (ctx->pending == 0) {
        json_decref(names);
        resolve_outputs(ctx);
        return;
    }
    const char *name;
    json_t *unused;
    json_object_foreach(names, name, unused)
    {
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_RES, ctx->stack, 0, name);
        cv_resource_ref_keys_t keys = {.res = key};
        cv_resource_ref_args_t args = {.resource = name};
        if (cv_redis_call(ctx->w->redis, CV_SCRIPT_RESOURCE_REF, keys.v, args.v, 0, NULL, NULL,
                          on_resource_record, ctx) != 0) {
            /* Not sent: count it as answered with an error. */
            ctx->rc = CV_EREDIS;
            if (--ctx->pending == 0) {
                json_decref(names);
                finish_free(ctx, ctx->rc);
                return;
            }
        }
    }
    json_decref(names);
}

/* The outputs as the template's conditions leave them for these
 * parameters (a disabled output is null, an `if` took its branch); the
 * section as written if the template no longer parses, which the
 * traversal's expansion has already reported. */
static json_t *outputs_that_run(const json_t *tpl, const json_t *params, redisReply *rep)
{
    json_t *files = json_loads(cv_reply_str(rep, CV_STACK_DEFINITION_R_FILES), 0, NULL);
    cv_tpl_opts_t opts = {.files = files,
                          .depth = atoi(cv_reply_str(rep, CV_STACK_DEFINITION_R_DEPTH))};
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

static void on_definition(cv_redis_t *r, redisReply *rep, void *ud)
{
    finish_ctx_t *ctx = ud;
    (void)r;
    if (cv_reply_answer(CV_SCRIPT_STACK_DEFINITION, rep) != CV_ANSWER_VALUE ||
        rep->elements != CV_STACK_DEFINITION_R_ENV + 1) {
        finish_free(ctx, CV_EREDIS);
        return;
    }
    const char *traversal = cv_reply_str(rep, CV_STACK_DEFINITION_R_TRAVERSAL);
    if (!traversal[0] || strtoull(traversal, NULL, 10) != ctx->traversal) {
        finish_free(ctx, CV_ESTALE);
        return;
    }
    snprintf(ctx->action, sizeof(ctx->action), "%s",
             cv_reply_str(rep, CV_STACK_DEFINITION_R_ACTION));
    snprintf(ctx->name, sizeof(ctx->name), "%s", cv_reply_str(rep, CV_STACK_DEFINITION_R_NAME));
    if (strcmp(ctx->action, "DELETE") == 0) {
        set_complete(ctx, "{}");
        return;
    }
    int sealed = 0;
    ctx->params =
        cv_unseal_loads(cv_reply_str(rep, CV_STACK_DEFINITION_R_PARAMS), &sealed, NULL, 0);
    if (sealed) {
        finish_free(ctx, sealed);
        return;
    }
    if (!json_is_object(ctx->params)) {
        json_decref(ctx->params);
        ctx->params = json_object();
    }
    json_t *tpl = json_loads(cv_reply_str(rep, CV_STACK_DEFINITION_R_TEMPLATE), 0, NULL);
    ctx->outputs = outputs_that_run(tpl, ctx->params, rep);
    json_decref(tpl);
    cv_record_pseudo_params(ctx->params, ctx->stack, ctx->name);
    ctx->resources = json_object();
    fetch_referenced(ctx);
}

int cv_progress_finish_stack(cv_worker_t *w, const char *stack, uint64_t traversal,
                             cv_progress_cb cb, void *ud)
{
    finish_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return CV_ENOMEM;
    ctx->w = w;
    snprintf(ctx->stack, sizeof(ctx->stack), "%s", stack);
    ctx->traversal = traversal;
    ctx->cb = cb;
    ctx->ud = ud;
    char k[3][CV_KEY_MAX];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_DEF, stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_INDEX, stack, 0, NULL);
    cv_stack_definition_keys_t keys = {.stack = k[0], .def = k[1], .index = k[2]};
    cv_stack_definition_args_t args = {.nil = NULL};
    int rc = cv_redis_call(w->redis, CV_SCRIPT_STACK_DEFINITION, keys.v, args.v, 0, NULL, NULL,
                           on_definition, ctx);
    if (rc)
        free(ctx);
    return rc;
}
