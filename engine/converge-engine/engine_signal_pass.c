/*
 * SIGNAL jobs, the steps between the types' operations and the fenced
 * write: a signal passed on to another resource (a ScalingPolicy's to its
 * AutoScalingGroup) and the update traversal a signal asks for (the group
 * resized by one).
 *
 * Both happen while the signalled resource's lease is held and before its
 * signals are marked applied, so a worker dying in between leaves them
 * pending and the redelivered job does it all again:
 *
 * - a passed-on signal is stored in the target's signals hash by
 *   signal_forward.lua under an id derived from the sender and the
 *   signal's id (a repeat stores nothing), then the target's SIGNAL job is
 *   published; only once Kafka acknowledged it is the sender's signal
 *   marked applied;
 * - the update traversal (the stored definition again, as `convergectl
 *   converge`) is begun before the write of the group's new size, whose
 *   lease it holds: the traversal's CHECK of the group waits for the lease
 *   and so always sees the new size. A redelivery begins another traversal,
 *   which supersedes the first; converging twice changes nothing.
 */
#include "engine_signal.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_convergence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv__signal_pass_take(signal_job_t *s, cv_rstate_t *st, const char *id)
{
    json_t *fwd = json_object_get(st->data, "forward");
    if (json_is_object(fwd)) {
        if (!s->forwards)
            s->forwards = json_array();
        json_object_set_new(fwd, "id", json_string(id));
        json_array_append(s->forwards, fwd);
    }
    json_object_del(st->data, "forward");
    if (json_is_true(json_object_get(st->data, "converge")))
        s->converge = true;
    json_object_del(st->data, "converge");
}

void cv__signal_pass_reset(signal_job_t *s)
{
    json_decref(s->forwards);
    s->forwards = NULL;
    s->forwarded = 0;
    s->converge = false;
}

/* The sender's signal `id` refused after all: its target is not found. */
static void refuse(signal_job_t *s, const char *id, const char *reason)
{
    size_t i;
    json_t *a;
    json_array_foreach(s->applied, i, a)
    {
        if (strcmp(json_string_value(json_object_get(a, "id")), id) == 0) {
            json_object_set_new(a, "state", json_string("refused"));
            json_object_set_new(a, "status", json_string("FAILED"));
            json_object_set_new(a, "reason", json_string(reason));
        }
    }
}

/* The id of a passed-on signal: the same for the same sender and signal,
 * within a signal id's length. */
static void forward_id(char *out, size_t size, const char *sender, const char *id)
{
    uint64_t h = cv_hash_more(cv_hash_more(cv_hash_str(sender), "\n"), id);
    snprintf(out, size, "%s-%016llx", "fwd", (unsigned long long)h);
}

static void on_target_published(void *ud, int err)
{
    signal_job_t *s = ud;
    if (err) {
        cv_jobrun_retry(&s->run);
        return;
    }
    s->forwarded++;
    cv__signal_pass_on(s);
}

static void on_forwarded(cv_redis_t *r, redisReply *rep, void *ud)
{
    signal_job_t *s = ud;
    (void)r;
    if (cv_reply_answer(CV_SCRIPT_SIGNAL_FORWARD, rep) != CV_ANSWER_VALUE || rep->elements < 2) {
        cv_jobrun_retry(&s->run);
        return;
    }
    const json_t *fwd = json_array_get(s->forwards, s->forwarded);
    const char *target = cv_reply_str(rep, CV_SIGNAL_FORWARD_R_NAME);
    if (!target[0]) {
        char reason[CV_REASON_MAX];
        snprintf(reason, sizeof(reason), "Alarm %s could not find scaling group named \"%s\"",
                 s->run.msg.resource, json_string_value(json_object_get(fwd, "ref")));
        refuse(s, json_string_value(json_object_get(fwd, "id")), reason);
        s->forwarded++;
        cv__signal_pass_on(s);
        return;
    }
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = CV_MSG_SIGNAL;
    m.express = s->run.msg.express;
    snprintf(m.stack, sizeof(m.stack), "%s", s->run.msg.stack);
    snprintf(m.resource, sizeof(m.resource), "%s", target);
    forward_id(m.signal, sizeof(m.signal), s->run.msg.resource,
               json_string_value(json_object_get(fwd, "id")));
    if (cv_worker_publish(s->run.w, CV_TOPIC_CHECK, &m, on_target_published, s) != 0)
        cv_jobrun_retry(&s->run);
}

static void forward_next(signal_job_t *s)
{
    const cv_msg_t *m = &s->run.msg;
    const json_t *fwd = json_array_get(s->forwards, s->forwarded);
    char index[CV_KEY_MAX], res_prefix[CV_KEY_MAX], sig_prefix[CV_KEY_MAX], id[CV_ID_MAX];
    cv_key(index, sizeof(index), CV_KEY_INDEX, m->stack, 0, NULL);
    cv_key_prefix(res_prefix, sizeof(res_prefix), CV_KEY_RES, m->stack, 0);
    cv_key_prefix(sig_prefix, sizeof(sig_prefix), CV_KEY_SIGNALS, m->stack, 0);
    forward_id(id, sizeof(id), m->resource, json_string_value(json_object_get(fwd, "id")));
    char *details = json_dumps(json_object_get(fwd, "details"), JSON_COMPACT);
    cv_signal_forward_keys_t k = {.index = index};
    cv_signal_forward_args_t a = {.resource = m->resource,
                                  .ref = json_string_value(json_object_get(fwd, "ref")),
                                  .id = id,
                                  .details = details ? details : "null",
                                  .res_prefix = res_prefix,
                                  .signals_prefix = sig_prefix};
    int rc = cv_redis_call(s->run.w->redis, CV_SCRIPT_SIGNAL_FORWARD, k.v, a.v, 0, NULL, NULL,
                           on_forwarded, s);
    free(details);
    if (rc != 0)
        cv_jobrun_retry(&s->run);
}

static void on_begun(void *ud, int rc, uint64_t traversal)
{
    signal_job_t *s = ud;
    if (rc == CV_EREDIS || rc == CV_EKAFKA || rc == CV_ENOMEM) {
        cv_jobrun_retry(&s->run);
        return;
    }
    if (rc == 0)
        cv_info("stack %s resource %s: a signal began update traversal %llu", s->run.msg.stack,
                s->run.msg.resource, (unsigned long long)traversal);
    cv__signal_finish(s);
}

/* The stack converged to its stored definition, as `convergectl converge`
 * — unless it is being deleted, which an update must not supersede (the
 * size stays recorded; nothing is left to resize). */
static void on_stack_action(cv_redis_t *r, redisReply *rep, void *ud)
{
    signal_job_t *s = ud;
    (void)r;
    if (!rep || (rep->type != REDIS_REPLY_STRING && rep->type != REDIS_REPLY_NIL)) {
        cv_jobrun_retry(&s->run);
        return;
    }
    if (rep->type == REDIS_REPLY_NIL || strcmp(rep->str, "DELETE") == 0) {
        cv__signal_finish(s);
        return;
    }
    cv_stack_begin_t b = {.kind = CV_TRAV_UPDATE, .stack = s->run.msg.stack};
    if (cv_flowrun_begin_stack(s->run.w, &b, s->run.msg.express, on_begun, s) != 0)
        cv_jobrun_retry(&s->run);
}

static void begin_update(signal_job_t *s)
{
    char stack[CV_KEY_MAX];
    cv_key(stack, sizeof(stack), CV_KEY_STACK, s->run.msg.stack, 0, NULL);
    const char *argv[] = {"HGET", stack, "action"};
    s->converge = false;
    if (cv_redis_argv(s->run.w->redis, 3, argv, NULL, on_stack_action, s) != 0)
        cv_jobrun_retry(&s->run);
}

void cv__signal_pass_on(signal_job_t *s)
{
    if (s->forwarded < json_array_size(s->forwards))
        forward_next(s);
    else if (s->converge)
        begin_update(s);
    else
        cv__signal_finish(s);
}
