#include "cv_poison.h"

#include "cv_base.h"
#include "cv_io.h"
#include "cv_calls.h"

#include <stdio.h>
#include <stdlib.h>

bool cv_poison_retry(cv_worker_t *w, cv_retry_t *r, cv_job_t *job, const cv_msg_t *m,
                     void (*start)(void *arg), void *arg)
{
    cv_worker_count(w, CV_STAT_RETRIES, 1);
    unsigned delay = cv_worker_retry(w, r);
    if (delay) {
        cv_worker_later(w, delay, start, arg);
        return true;
    }
    cv_poison_give_up(w, job, m, r->failures);
    return false;
}

static void on_dead_delivered(void *ud, int err)
{
    (void)err; /* a failed dead letter is logged by the producer; the partition must move on */
    cv_job_finish(ud);
}

static void dead_letter_job(cv_worker_t *w, cv_job_t *job, const char *reason, cv_delivery_cb cb,
                            void *ud)
{
    size_t len;
    const void *payload = cv_job_payload(job, &len);
    cv_job_set_dead(job);
    cv_worker_dead_letter(w, payload, len, reason, cb, ud);
}

void cv_poison_unknown_stack(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    char reason[CV_REASON_MAX];
    snprintf(reason, sizeof(reason), "%s: unknown stack %s (%s job)", w->role, m->stack,
             cv_msg_type_name(m->type));
    dead_letter_job(w, job, reason, on_dead_delivered, job);
}

void cv_poison_unknown_node(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m)
{
    char reason[CV_REASON_MAX + CV_NAME_MAX];
    snprintf(reason, sizeof(reason), "%s: stack %s traversal %llu has no %s node for resource %s",
             w->role, m->stack, (unsigned long long)m->traversal, cv_phase_name(m->phase),
             m->resource);
    dead_letter_job(w, job, reason, on_dead_delivered, job);
}

/* ---- giving up ---- */

typedef struct give_up {
    cv_job_t *job;
    int pending; /* the dead letter and the stack's failure */
} give_up_t;

static void give_up_release(give_up_t *g)
{
    if (--g->pending > 0)
        return;
    cv_job_finish(g->job);
    free(g);
}

static void on_give_up_delivered(void *ud, int err)
{
    (void)err;
    give_up_release(ud);
}

static void on_stack_failed(cv_redis_t *r, redisReply *rep, void *ud)
{
    (void)r;
    (void)rep; /* STALE or SETTLED: the stack moved on, which is as good */
    give_up_release(ud);
}

void cv_poison_give_up(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m, unsigned failures)
{
    char what[CV_NAME_MAX + 32], stack_reason[CV_REASON_MAX], dead_reason[CV_REASON_MAX];
    if (m->type == CV_MSG_STACK)
        snprintf(what, sizeof(what), "the %s job", cv_msg_type_name(m->type));
    else
        snprintf(what, sizeof(what), "resources.%s: its %s job", m->resource,
                 cv_msg_type_name(m->type));
    snprintf(stack_reason, sizeof(stack_reason),
             "%s failed %u times (Redis or Kafka errors, see the log of %s) and was "
             "dead-lettered",
             what, failures, w->id);
    snprintf(dead_reason, sizeof(dead_reason), "%s: gave up: stack %.64s: %.400s", w->role,
             m->stack, stack_reason);
    cv_error("stack %s traversal %llu: %s", m->stack, (unsigned long long)m->traversal,
             stack_reason);
    cv_worker_count(w, CV_STAT_GAVE_UP, 1);
    give_up_t *g = malloc(sizeof(*g));
    if (!g) {
        dead_letter_job(w, job, dead_reason, on_dead_delivered, job);
        return;
    }
    *g = (give_up_t){job, 2};
    /* Only a stack still in progress on the job's traversal changes. */
    cv_call_t call;
    cv_call_stack_finish(&call, m->stack, m->traversal, "FAILED", stack_reason, "{}", w->id);
    if (cv_redis_call(w->redis, call.script, call.keys, call.args, 0, NULL, NULL, on_stack_failed,
                      g) != 0)
        give_up_release(g); /* not sent: Redis is away; the dead letter still says why */
    dead_letter_job(w, job, dead_reason, on_give_up_delivered, g);
}
