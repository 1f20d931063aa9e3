/*
 * SIGNAL jobs: apply the signals a resource was sent, as Heat's
 * resource_signal does, through the same durable path as every job.
 *
 * convergectl stored the signal (signal_send.lua) before publishing this
 * job, so the job only names the resource: under the resource's lease
 * (signal_begin.lua also loads the record and every pending signal, in
 * their order of arrival) each signal goes to the type's pure `signal`
 * operation, and one fenced write (signal_finish.lua) records the new data,
 * marks the signals applied or refused and adds their SIGNAL events. A
 * signal is applied once whatever happens: a duplicate or redelivered job
 * finds nothing pending, and a job that dies before its write leaves the
 * signals pending for the redelivery (its lease runs out).
 *
 * A signal can end a wait (a WaitCondition watching this handle): the
 * waiters signal_finish names, and this resource itself when its own
 * action is in progress, get an OBSERVE job at once instead of their next
 * look on the observer's timer.
 *
 * A signal can be passed on or ask for convergence (engine_signal_pass.c,
 * a ScalingPolicy and its AutoScalingGroup): both happen after the types'
 * operations and before the fenced write, while the lease is held.
 */
#include "engine.h"
#include "engine_signal.h"

#include "cv_base.h"
#include "cv_convergence.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void signal_reset(cv_jobrun_t *run)
{
    signal_job_t *s = (signal_job_t *)run;
    cv_lease_stop(s->keeper);
    s->keeper = NULL;
    cv_record_clear(&s->rec);
    s->changed = false;
    cv_record_state_clear(&s->st);
    json_decref(s->applied);
    s->applied = NULL;
    cv__signal_pass_reset(s);
}

/* ---- HOOKS: the one place a signal clears a hook ---- */

/*
 * Heat's Resource.signal: a signal whose data has "unset_hook" clears that
 * hook (as `convergectl hook-clear` does) and reaches no handle_signal.
 * `convergectl signal` clears it itself (cli_hook_clear: hook_clear.lua,
 * then the CHECK job) and stores no SIGNAL job for it; a SIGNAL job
 * carrying one was sent otherwise and is refused here, rather than taken
 * for a type's signal.
 */
static int unset_hook(const json_t *details, char *reason, size_t size)
{
    const json_t *hook = json_object_get(details, "unset_hook");
    snprintf(reason, size,
             "Clearing hook %s by a SIGNAL job is refused: convergectl signal clears it",
             json_is_string(hook) ? json_string_value(hook) : "(not a string)");
    return CV_EINVAL;
}

/* ---- applying one signal ---- */

/* Heat's checks, then the type's operation: 0 with the event's text in
 * `reason`, or a refusal with Heat's message. `st` changes only when 0. */
static int apply_one(const cv_record_t *rec, cv_rstate_t *st, const json_t *details, char *reason,
                     size_t size)
{
    if (json_is_object(details) && json_object_get(details, "unset_hook"))
        return unset_hook(details, reason, size);
    if (strcmp(rec->action, "DELETE") == 0) {
        snprintf(reason, size, "Cannot signal resource during DELETE");
        return CV_EINVAL;
    }
    const cv_rtype_t *type = cv_rtype_lookup(rec->type);
    if (!type || !type->signal) {
        snprintf(reason, size, "signal is not supported for resource.");
        return CV_EINVAL;
    }
    st->reason[0] = '\0';
    reason[0] = '\0';
    int rc = type->signal(st, details, reason, size);
    if (rc == 0)
        snprintf(reason, size, "%s", st->reason);
    else if (!reason[0])
        snprintf(reason, size, "signal refused: %s", cv_strerror(rc));
    return rc;
}

/* The state part of a status: COMPLETE of CREATE_COMPLETE, as Heat's
 * SIGNAL events carry the resource's status. */
static const char *state_of(const char *status)
{
    const char *us = strchr(status, '_');
    return us ? us + 1 : status;
}

/* Cuts a string truncated by snprintf back to its last whole UTF-8
 * character: a reason holding user text must stay valid JSON text, or its
 * signal could not be marked handled. */
static void utf8_trim(char *s)
{
    size_t n = strlen(s), lead = n;
    while (lead > 0 && n - lead < 4 && ((unsigned char)s[lead - 1] & 0xC0) == 0x80)
        lead--;
    if (lead == 0)
        return;
    unsigned char c = (unsigned char)s[lead - 1];
    size_t want = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (n - (lead - 1) < want)
        s[lead - 1] = '\0';
}

/* Applies every pending signal of the reply in order; returns the list of
 * {"id", "state", "status", "reason"} that signal_finish records. */
static json_t *apply_all(signal_job_t *s, cv_rstate_t *st, const redisReply *rep)
{
    json_t *applied = json_array();
    for (size_t i = CV_SIGNAL_BEGIN_R_FIRST_SIGNAL; i + 1 < rep->elements;
         i += CV_SIGNAL_BEGIN_R_SIGNAL_STRIDE) {
        const char *id = cv_reply_str(rep, i);
        json_t *details = json_loads(cv_reply_str(rep, i + 1), JSON_DECODE_ANY, NULL);
        char reason[CV_REASON_MAX];
        int rc = details ? apply_one(&s->rec, st, details, reason, sizeof(reason))
                         : (snprintf(reason, sizeof(reason), "signal data is not JSON"), CV_EINVAL);
        json_decref(details);
        utf8_trim(reason);
        if (rc == 0) {
            s->changed = true;
            cv__signal_pass_take(s, st, id);
        } else {
            char logged[512];
            cv_str_redact_quoted(logged, sizeof(logged), reason);
            cv_warn("stack %s resource %s: signal %s refused: %s", s->run.msg.stack,
                    s->run.msg.resource, id, logged);
        }
        json_array_append_new(applied, json_pack("{s:s, s:s, s:s, s:s}", "id", id, "state",
                                                 rc == 0 ? "applied" : "refused", "status",
                                                 rc == 0 ? state_of(s->rec.status) : "FAILED",
                                                 "reason", reason));
    }
    return applied;
}

/* ---- looking at once ---- */

static void on_observe_delivered(void *ud, int err)
{
    signal_job_t *s = ud;
    if (err)
        cv_warn("stack %s resource %s: an OBSERVE job after a signal was not delivered; the "
                "observers look on their timer",
                s->run.msg.stack, s->run.msg.resource);
    if (--s->publishing == 0)
        cv_jobrun_end(&s->run);
}

static void publish_observe(signal_job_t *s, const char *resource, const char *traversal,
                            const char *version, const char *watch)
{
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = CV_MSG_OBSERVE;
    m.express = s->run.msg.express;
    snprintf(m.stack, sizeof(m.stack), "%s", s->run.msg.stack);
    snprintf(m.resource, sizeof(m.resource), "%s", resource);
    m.phase = CV_PHASE_UPDATE;
    m.traversal = strtoull(traversal, NULL, 10);
    m.version = strtoull(version, NULL, 10);
    m.watch = strcmp(watch, "1") == 0; /* a newer traversal watching an older action */
    s->publishing++;
    if (cv_worker_publish(s->run.w, CV_TOPIC_OBSERVE, &m, on_observe_delivered, s) != 0)
        s->publishing--;
}

static bool in_progress(const char *status)
{
    size_t n = strlen(status);
    return n > 12 && strcmp(status + n - 12, "_IN_PROGRESS") == 0;
}

/* The waiters still waiting, and this resource when its own action is in
 * progress (a type that waits for its own signals). */
static void look_now(signal_job_t *s, const redisReply *rep)
{
    s->publishing = 1; /* holds the job while publishing */
    if (s->changed) {
        if (in_progress(cv_reply_str(rep, CV_SIGNAL_FINISH_R_STATUS)))
            publish_observe(s, s->run.msg.resource, cv_reply_str(rep, CV_SIGNAL_FINISH_R_TRAVERSAL),
                            cv_reply_str(rep, CV_SIGNAL_FINISH_R_VERSION), "0");
        for (size_t i = CV_SIGNAL_FINISH_R_FIRST_WAITER; i + 3 < rep->elements;
             i += CV_SIGNAL_FINISH_R_WAITER_STRIDE)
            publish_observe(s, cv_reply_str(rep, i), cv_reply_str(rep, i + 1),
                            cv_reply_str(rep, i + 2), cv_reply_str(rep, i + 3));
    }
    if (--s->publishing == 0)
        cv_jobrun_end(&s->run);
}

/* ---- recording ---- */

static void on_finished(cv_redis_t *r, redisReply *rep, void *ud)
{
    signal_job_t *s = ud;
    (void)r;
    switch (cv_reply_answer(CV_SCRIPT_SIGNAL_FINISH, rep)) {
    case CV_ANSWER_OK:
        cv_worker_count(s->run.w, CV_STAT_ACTED, 1);
        cv_lease_stop(s->keeper); /* signal_finish released it */
        s->keeper = NULL;
        look_now(s, rep);
        return;
    case CV_ANSWER_FENCED:
        /* Someone wrote the record meanwhile: the signals are still
         * pending, and the job starts again from the record as it is. */
        cv_worker_count(s->run.w, CV_STAT_FENCED, 1);
        cv_jobrun_retry(&s->run);
        return;
    default:
        if (rep && rep->type == REDIS_REPLY_ERROR)
            cv_warn("signal_finish: %s", rep->str);
        cv_jobrun_retry(&s->run);
        return;
    }
}

void cv__signal_finish(signal_job_t *s)
{
    cv_rstate_t *st = &s->st;
    json_t *applied = s->applied;
    const cv_msg_t *m = &s->run.msg;
    char res[CV_KEY_MAX], lease[CV_KEY_MAX], events[CV_KEY_MAX], signals[CV_KEY_MAX],
        waiters[CV_KEY_MAX], stack[CV_KEY_MAX], res_prefix[CV_KEY_MAX];
    cv_key(res, sizeof(res), CV_KEY_RES, m->stack, 0, m->resource);
    cv_key(lease, sizeof(lease), CV_KEY_LEASE, m->stack, 0, m->resource);
    cv_key(events, sizeof(events), CV_KEY_EVENTS, m->stack, 0, NULL);
    cv_key(signals, sizeof(signals), CV_KEY_SIGNALS, m->stack, 0, m->resource);
    cv_key(waiters, sizeof(waiters), CV_KEY_WAITERS, m->stack, 0, m->resource);
    cv_key(stack, sizeof(stack), CV_KEY_STACK, m->stack, 0, NULL);
    cv_key_prefix(res_prefix, sizeof(res_prefix), CV_KEY_RES, m->stack, 0);
    char *data = s->changed ? json_dumps(st->data, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    char *attrs = s->changed ? cv_record_json_sealed(st->attrs) : NULL;
    char *list = json_dumps(applied, JSON_COMPACT);
    cv_signal_finish_keys_t k = {.res = res,
                                 .lease = lease,
                                 .events = events,
                                 .signals = signals,
                                 .waiters = waiters,
                                 .stack = stack};
    cv_signal_finish_args_t a = {.version = s->rec.version,
                                 .token = s->token,
                                 .data = data ? data : "",
                                 .attrs = attrs ? attrs : "",
                                 .applied = list ? list : "[]",
                                 .resource = m->resource,
                                 .worker = s->run.w->id,
                                 .res_prefix = res_prefix};
    int rc = (s->changed && (!data || !attrs)) || !list
                 ? CV_ENOMEM
                 : cv_redis_call(s->run.w->redis, CV_SCRIPT_SIGNAL_FINISH, k.v, a.v, 0, NULL, NULL,
                                 on_finished, s);
    free(data);
    free(attrs);
    free(list);
    if (rc != 0)
        cv_jobrun_retry(&s->run);
}

/* ---- loading under the lease ---- */

static void apply_and_finish(signal_job_t *s, const redisReply *rep)
{
    const cv_record_t *rec = &s->rec;
    cv_version_t v = {.stack = s->run.msg.stack,
                      .resource = s->run.msg.resource,
                      .uuid = rec->uuid,
                      .physical_id = rec->physical_id,
                      .props = rec->props,
                      .data = rec->data,
                      .attrs = rec->attrs,
                      .started = rec->started};
    cv_record_state(&s->st, &v, cv_now());
    s->st.status = rec->status;
    s->applied = apply_all(s, &s->st, rep);
    cv__signal_pass_on(s);
}

static void on_begin(cv_redis_t *r, redisReply *rep, void *ud)
{
    signal_job_t *s = ud;
    const cv_msg_t *m = &s->run.msg;
    (void)r;
    switch (cv_reply_answer(CV_SCRIPT_SIGNAL_BEGIN, rep)) {
    case CV_ANSWER_BUSY: {
        long long pttl = cv_reply_int(rep, CV_SIGNAL_BEGIN_R_BUSY_PTTL);
        cv_worker_count(s->run.w, CV_STAT_RETRIES, 1);
        cv_jobrun_later(&s->run, (unsigned)(pttl < 20 ? 20 : pttl > 250 ? 250 : pttl));
        return;
    }
    case CV_ANSWER_UNKNOWN:
    case CV_ANSWER_GONE:
        /* The stack or the resource went away after the signal was sent:
         * there is nothing left to signal. */
        cv_warn("stack %s resource %s: signal %s: the %s no longer exists", m->stack, m->resource,
                m->signal,
                cv_reply_answer(CV_SCRIPT_SIGNAL_BEGIN, rep) == CV_ANSWER_GONE ? "resource"
                                                                               : "stack");
        cv_jobrun_end(&s->run);
        return;
    case CV_ANSWER_DONE:
        cv_worker_count(s->run.w, CV_STAT_STALE, 1); /* applied by an earlier job */
        cv_jobrun_end(&s->run);
        return;
    case CV_ANSWER_OK:
        break;
    default:
        if (rep && rep->type == REDIS_REPLY_ERROR)
            cv_warn("signal_begin: %s", rep->str);
        cv_jobrun_retry(&s->run);
        return;
    }
    char lease[CV_KEY_MAX];
    cv_key(lease, sizeof(lease), CV_KEY_LEASE, m->stack, 0, m->resource);
    s->keeper = cv_lease_keep(s->run.w->loop, s->run.w->redis, lease, s->token,
                              (unsigned)s->run.w->lease_ms, &s->run.w->isolated);
    cv_resp_t *reply = cv_flowrun_resp(rep, false);
    int parsed = cv_record_parse(&s->rec, cv_resp_at(reply, CV_SIGNAL_BEGIN_R_RECORD));
    free(reply);
    if (parsed != 0) {
        cv_warn("stack %s resource %s: malformed signal_begin reply", m->stack, m->resource);
        cv_jobrun_retry(&s->run);
        return;
    }
    apply_and_finish(s, rep);
}

static void signal_start(cv_jobrun_t *run)
{
    signal_job_t *s = (signal_job_t *)run;
    const cv_msg_t *m = &run->msg;
    char stack[CV_KEY_MAX], res[CV_KEY_MAX], lease[CV_KEY_MAX], signals[CV_KEY_MAX], ms[24];
    cv_key(stack, sizeof(stack), CV_KEY_STACK, m->stack, 0, NULL);
    cv_key(res, sizeof(res), CV_KEY_RES, m->stack, 0, m->resource);
    cv_key(lease, sizeof(lease), CV_KEY_LEASE, m->stack, 0, m->resource);
    cv_key(signals, sizeof(signals), CV_KEY_SIGNALS, m->stack, 0, m->resource);
    snprintf(ms, sizeof(ms), "%u", (unsigned)run->w->lease_ms);
    cv_signal_begin_keys_t k = {.stack = stack, .res = res, .lease = lease, .signals = signals};
    cv_signal_begin_args_t a = {.token = s->token, .lease_ms = ms};
    if (cv_redis_call(run->w->redis, CV_SCRIPT_SIGNAL_BEGIN, k.v, a.v, 0, NULL, NULL, on_begin,
                      s) != 0)
        cv_jobrun_retry(run);
}

void cv__engine_signal_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    static unsigned long long seq;
    signal_job_t *s = calloc(1, sizeof(*s));
    cv_jobrun_init(&s->run, w, job, m, signal_start, signal_reset);
    /* The token names the holder, so an operator reading a lease sees who,
     * and a successor of this process with the same id sees it is gone. */
    snprintf(s->token, sizeof(s->token), "%s:s%llu", w->holder, ++seq);
    cv_jobrun_start(&s->run);
}
