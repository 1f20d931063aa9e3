/*
 * CHECK jobs, as engine/engine_check.c runs them: check_begin.lua (lease and
 * load), the real decision (cv_check_decide), the type's operation the
 * outcome names (engine_converge.c), then one of: the fenced write
 * (check_finish.lua) and the OBSERVE job; node_done.lua and the successors;
 * node_failed.lua and maybe a rollback; the lease released. Each script
 * call is a step of its own.
 */
#include "scen_job.h"

#include "cv_str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PC_RECORD = 1, PC_DONE = 2, PC_FAILED = 3, PC_REPUBLISH = 4 };

/* The lease a check job asks for: long, since the harness expires the
 * leases of killed jobs itself. */
#define LEASE_MS 600000

static void load(scen_job_t *j, const redisReply *r)
{
    const char *rdef = cv_reply_str(r, CV_CHECK_BEGIN_R_RDEF);
    j->rdef = rdef[0] ? json_loads(rdef, 0, NULL) : NULL;
    j->params = json_loads(cv_reply_str(r, CV_CHECK_BEGIN_R_PARAMS), 0, NULL);
    cv_record_parse(&j->rec, cv_reply_at(r, CV_CHECK_BEGIN_R_RECORD));
    j->have_rec = true;
    json_t *raw = cv_reply_to_object(cv_reply_at(r, CV_CHECK_BEGIN_R_SP));
    j->sp = json_object();
    const char *pred;
    json_t *v;
    json_object_foreach(raw, pred, v)
    {
        json_t *d = json_loads(json_string_value(v), 0, NULL);
        json_object_set_new(j->sp, pred, d ? d : json_object());
    }
    json_decref(raw);
    j->graph_entry = strdup(cv_reply_str(r, CV_CHECK_BEGIN_R_GRAPH_ENTRY));
    if (j->params)
        cv_record_pseudo_params(j->params, j->msg.stack,
                                cv_reply_str(r, CV_CHECK_BEGIN_R_STACK_NAME));
    const char *files = cv_reply_str(r, CV_CHECK_BEGIN_R_FILES);
    j->files = files[0] ? json_loads(files, 0, NULL) : NULL;
}

/* engine_converge.c: the type's operations on the versions the outcome
 * names; non-zero when one fails (the reason in j->st). */
static int remove_replaced(scen_job_t *j, json_t *entry)
{
    const cv_rtype_t *type = cv_rtype_lookup(json_string_value(json_object_get(entry, "type")));
    cv_version_t v = {.stack = j->msg.stack,
                      .resource = j->msg.resource,
                      .uuid = json_string_value(json_object_get(entry, "uuid")),
                      .physical_id = json_string_value(json_object_get(entry, "physical_id")),
                      .props = json_object_get(entry, "props"),
                      .data = json_object_get(entry, "data"),
                      .attrs = json_object_get(entry, "attrs"),
                      .started = j->rec.started};
    cv_rstate_t st;
    cv_record_state(&st, &v, SCEN_NOW);
    int rc = type->remove(&st);
    if (rc == 0)
        json_object_set(entry, "data", st.data);
    cv_record_state_clear(&st);
    return rc;
}

static int act(scen_job_t *j)
{
    size_t i;
    json_t *index;
    json_array_foreach(j->out.deletes, i, index)
    {
        if (remove_replaced(j, json_array_get(j->out.old, (size_t)json_integer_value(index))))
            return -1;
    }
    cv_version_t v = {.stack = j->msg.stack,
                      .resource = j->msg.resource,
                      .uuid = j->out.uuid,
                      .physical_id = j->rec.physical_id,
                      .props = j->rec.props,
                      .data = j->rec.data,
                      .attrs = j->rec.attrs,
                      .started = j->rec.started};
    const cv_rtype_t *type = j->out.type;
    switch (j->out.kind) {
    case CV_CHECK_CREATE:
    case CV_CHECK_REPLACE:
        v.physical_id = NULL;
        v.data = v.attrs = NULL;
        v.props = j->out.props;
        cv_record_state(&j->st, &v, SCEN_NOW);
        j->have_st = true;
        return type->create(&j->st);
    case CV_CHECK_UPDATE:
        v.props = j->out.props;
        cv_record_state(&j->st, &v, SCEN_NOW);
        j->have_st = true;
        j->st.old_props = j->rec.props;
        return type->update(&j->st);
    case CV_CHECK_DELETE_CURRENT:
        cv_record_state(&j->st, &v, SCEN_NOW);
        j->have_st = true;
        return type->remove(&j->st);
    default:
        return 0;
    }
}

/* A type operation that failed fails the node (engine_converge.c fail_action). */
static void fail_action(scen_job_t *j)
{
    char why[512], action[16];
    snprintf(why, sizeof(why), "%s", j->have_st ? j->st.reason : "");
    snprintf(action, sizeof(action), "%s", j->out.action[0] ? j->out.action : "DELETE");
    cv_check_outcome_clear(&j->out);
    j->out.kind = CV_CHECK_FAIL;
    snprintf(j->out.status, sizeof(j->out.status), "%s_FAILED", action);
    snprintf(j->out.action, sizeof(j->out.action), "%s", action);
    snprintf(j->out.reason, sizeof(j->out.reason), "resources.%s: %s", j->msg.resource, why);
    j->pc = PC_FAILED;
}

static void decided(scen_world_t *w, scen_job_t *j)
{
    scen_trace(w, "  %c/%s t%llu decided %s %s", j->msg.phase ? 'c' : 'u', j->msg.resource,
               (unsigned long long)j->msg.traversal, cv_check_kind_name(j->out.kind),
               j->out.status);
    switch (j->out.kind) {
    case CV_CHECK_CREATE:
    case CV_CHECK_REPLACE:
    case CV_CHECK_UPDATE:
    case CV_CHECK_DELETE_CURRENT:
    case CV_CHECK_DELETE_REPLACED:
        if (act(j) != 0)
            fail_action(j);
        else
            j->pc = PC_RECORD;
        break;
    case CV_CHECK_ADOPT:
    case CV_CHECK_OBSERVE_AGAIN:
    case CV_CHECK_OBSERVE_DELETES:
        scen_op_publish_observe(j, j->out.version);
        scen_op_release(j);
        j->pc = PC_END;
        break;
    case CV_CHECK_DONE:
    case CV_CHECK_RETAIN_CURRENT:
    case CV_CHECK_NOTHING:
        j->pc = PC_DONE;
        break;
    case CV_CHECK_END:
        scen_op_release(j);
        j->pc = PC_END;
        break;
    case CV_CHECK_FAIL:
        j->pc = PC_FAILED;
        break;
    }
}

static scen_step_t begin(scen_world_t *w, scen_job_t *j)
{
    cv_call_t call;
    cv_call_check_begin(&call, &j->msg, j->token, LEASE_MS);
    redisReply *r = scen_call(&call);
    cv_answer_t a = cv_reply_answer(CV_SCRIPT_CHECK_BEGIN, r);
    scen_step_t step = SCEN_STEP_MORE;
    switch (a) {
    case CV_ANSWER_BUSY:
        step = SCEN_STEP_RETRY; /* looked at again later */
        break;
    case CV_ANSWER_UNKNOWN:
    case CV_ANSWER_NONODE:
        scen_violation(w, "CHECK %c/%s t%llu dead-lettered: %s", j->msg.phase ? 'c' : 'u',
                       j->msg.resource, (unsigned long long)j->msg.traversal, cv_answer_name(a));
        j->pc = PC_END;
        break;
    case CV_ANSWER_DONE:
        if (r->elements > CV_CHECK_BEGIN_R_DONE_GRAPH_ENTRY) {
            /* Done by an engine that may have died before publishing. */
            j->graph_entry = strdup(cv_reply_str(r, CV_CHECK_BEGIN_R_DONE_GRAPH_ENTRY));
            j->pc = PC_REPUBLISH;
            scen_trace(w, "  %c/%s t%llu done by an engine that may have died: republish",
                       j->msg.phase ? 'c' : 'u', j->msg.resource,
                       (unsigned long long)j->msg.traversal);
        } else {
            j->pc = PC_END;
        }
        break;
    case CV_ANSWER_OK:
        j->leased = true;
        j->began_at = w->step;
        load(j, r);
        {
            const char *load_error = NULL;
            if (r->elements != CV_CHECK_BEGIN_R_OK_ELEMENTS)
                load_error = "malformed check_begin reply";
            else if (!j->params)
                load_error = "stored parameters are not JSON";
            cv_check_input_t in = {.job = &j->msg,
                                   .rec = &j->rec,
                                   .rdef = j->rdef,
                                   .params = j->params,
                                   .sp = j->sp,
                                   .files = j->files,
                                   .now = SCEN_NOW,
                                   .load_error = load_error};
            cv_check_decide(&in, &j->out);
            j->have_out = true;
        }
        decided(w, j);
        break;
    case CV_ANSWER_INVALID:
        scen_violation(w, "check_begin: %s",
                       r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        j->pc = PC_END;
        break;
    default: /* STALE, SETTLED */
        j->pc = PC_END;
        break;
    }
    freeReplyObject(r);
    return step;
}

static char *dump_or_empty(const json_t *v)
{
    return v ? json_dumps(v, JSON_COMPACT) : strdup("");
}

/* The resource's dependencies as recorded in the index, for cleanup order. */
static char *dependencies_of(const scen_job_t *j)
{
    json_t *deps = j->rdef ? json_object_get(j->rdef, "depends") : NULL;
    return deps ? json_dumps(deps, JSON_COMPACT) : strdup("[]");
}

static scen_step_t record(scen_world_t *w, scen_job_t *j)
{
    bool current = j->out.status[0] != '\0';
    char *props = json_dumps(j->out.props ? j->out.props : j->rec.props, JSON_COMPACT);
    char *attrs = json_dumps(j->have_st ? j->st.attrs : j->rec.attrs, JSON_COMPACT);
    char *data = json_dumps(j->have_st ? j->st.data : j->rec.data, JSON_COMPACT);
    char *deps = current && j->msg.phase == CV_PHASE_UPDATE ? dependencies_of(j) : strdup("");
    char *old = dump_or_empty(j->out.old), *events = dump_or_empty(j->out.events);
    const char *policy =
        j->rdef ? json_string_value(json_object_get(j->rdef, "deletion_policy")) : j->rec.policy;
    cv_check_finish_t f = {.job = &j->msg,
                           .version = j->rec.version,
                           .token = j->token,
                           .status = j->out.status,
                           .action = j->out.action,
                           .reason = j->out.reason,
                           .physical_id = j->have_st ? j->st.physical_id : "",
                           .uuid = j->out.uuid,
                           .type = j->out.type_name,
                           .props = props,
                           .attrs = attrs,
                           .data = data,
                           .event_status = current ? "IN_PROGRESS" : "",
                           .dependencies = deps,
                           .policy = policy ? policy : "Delete",
                           .old = old,
                           .events = events};
    cv_call_t call;
    cv_call_check_finish(&call, &f, j->worker);
    redisReply *r = scen_call(&call);
    cv_answer_t a = cv_reply_answer(CV_SCRIPT_CHECK_FINISH, r);
    j->leased = false; /* check_finish released it */
    if (a == CV_ANSWER_OK) {
        /* An action is started only by a job whose traversal was current
         * when it took the lease (check_begin): never one superseded. */
        uint64_t next = j->msg.traversal + 1;
        if (next < SCEN_MAX_TRAV && w->seen.trav_began[next] &&
            w->seen.trav_began[next] <= j->began_at)
            scen_violation(w, "%s of %s started for traversal %llu after %llu began", j->out.action,
                           j->msg.resource, (unsigned long long)j->msg.traversal,
                           (unsigned long long)next);
        scen_op_publish_observe(j, cv_reply_str(r, CV_CHECK_FINISH_R_VERSION));
    } else if (a != CV_ANSWER_FENCED) {
        scen_violation(w, "check_finish of %s: %s", j->msg.resource,
                       r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    }
    freeReplyObject(r);
    free(props);
    free(attrs);
    free(data);
    free(deps);
    free(old);
    free(events);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

static scen_step_t done(scen_world_t *w, scen_job_t *j)
{
    char *old = dump_or_empty(j->out.old), *events = dump_or_empty(j->out.events);
    cv_node_done_t d = {.job = &j->msg,
                        .graph_entry = j->graph_entry,
                        .version = j->rec.version,
                        .status = j->out.status,
                        .reason = j->out.reason,
                        .pass = j->out.pass,
                        .physical_id = j->rec.physical_id,
                        .action = j->out.action,
                        .old = old,
                        .events = events,
                        .lease_token = j->token,
                        .publishing = true};
    scen_node_done(w, j, &d);
    free(old);
    free(events);
    /* As the engine, release after node_done: a no-op when node_done
     * released it, but node_done answers FENCED before it releases. */
    scen_op_release(j);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

static scen_step_t republish(scen_world_t *w, scen_job_t *j)
{
    cv_node_done_t d = {.job = &j->msg, .graph_entry = j->graph_entry, .publishing = true};
    scen_node_done(w, j, &d);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

static scen_step_t failed(scen_world_t *w, scen_job_t *j)
{
    cv_node_failed_t f = {.job = &j->msg,
                          .version = j->rec.version,
                          .status = j->out.status,
                          .reason = j->out.reason,
                          .physical_id = j->rec.physical_id,
                          .action = j->out.action};
    scen_trace(w, "  node failed: %s", j->out.reason);
    scen_node_failed(w, j, &f);
    scen_op_release(j);
    j->pc = PC_END;
    return SCEN_STEP_MORE;
}

scen_step_t scen_check_step(scen_world_t *w, scen_job_t *j)
{
    switch (j->pc) {
    case PC_START:
        return begin(w, j);
    case PC_RECORD:
        return record(w, j);
    case PC_DONE:
        return done(w, j);
    case PC_REPUBLISH:
        return republish(w, j);
    default:
        return failed(w, j);
    }
}
