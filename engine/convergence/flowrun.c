/*
 * cv_flowrun — answers carried out on a worker (cv_flowrun.h).
 */
#include "cv_flowrun.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"
#include "cv_finishjob.h"
#include "cv_poison.h"
#include "cv_progress.h"
#include "cv_purge.h"

#include <stdlib.h>
#include <string.h>

_Static_assert((int)CV_FLOW_INFO == (int)CV_LOG_INFO && (int)CV_FLOW_WARN == (int)CV_LOG_WARN &&
                   (int)CV_FLOW_ERROR == (int)CV_LOG_ERROR,
               "the flows' log levels are cv_log's");

/* ------------------------------------------------------------------------
 * Replies as data
 * ------------------------------------------------------------------------ */

static void measure(const redisReply *r, size_t *nodes, size_t *text)
{
    (*nodes)++;
    if (r->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < r->elements; i++)
            measure(r->element[i], nodes, text);
    else if (r->str)
        *text += r->len + 1;
}

/* Fills v from r; nested arrays take their elements from *next, strings
 * are copied to *text when text is not NULL. */
static void fill(cv_resp_t *v, const redisReply *r, cv_resp_t **next, char **text)
{
    memset(v, 0, sizeof(*v));
    switch (r->type) {
    case REDIS_REPLY_ARRAY:
        v->type = CV_RESP_ARRAY;
        v->elements = r->elements;
        v->element = *next;
        *next += r->elements;
        for (size_t i = 0; i < r->elements; i++)
            fill((cv_resp_t *)&v->element[i], r->element[i], next, text);
        return;
    case REDIS_REPLY_INTEGER:
        v->type = CV_RESP_INTEGER;
        v->integer = r->integer;
        return;
    case REDIS_REPLY_NIL:
        v->type = CV_RESP_NIL;
        return;
    case REDIS_REPLY_ERROR:
        v->type = CV_RESP_ERROR;
        break;
    default: /* strings, status, and the RESP3 scalars hiredis keeps as text */
        v->type = CV_RESP_STRING;
        break;
    }
    v->len = r->str ? r->len : 0;
    v->str = r->str ? r->str : "";
    if (text && r->str) {
        memcpy(*text, r->str, r->len);
        (*text)[r->len] = '\0';
        v->str = *text;
        *text += r->len + 1;
    }
}

cv_resp_t *cv_flowrun_resp(const redisReply *r, bool copy)
{
    if (!r)
        return NULL;
    size_t nodes = 0, text = 0;
    measure(r, &nodes, &text);
    cv_resp_t *v = malloc(nodes * sizeof(*v) + (copy ? text : 0));
    if (!v)
        return NULL;
    cv_resp_t *next = v + 1;
    char *strings = (char *)(v + nodes);
    fill(v, r, &next, copy ? &strings : NULL);
    return v;
}

/* ------------------------------------------------------------------------
 * Notes and commands
 * ------------------------------------------------------------------------ */

void cv_flowrun_notes(cv_worker_t *w, const cv_flow_t *a)
{
    static const cv_stat_t stats[CV_FLOW_COUNTERS] = {
        [CV_FLOW_STALE] = CV_STAT_STALE,
        [CV_FLOW_FENCED] = CV_STAT_FENCED,
        [CV_FLOW_ACTED] = CV_STAT_ACTED,
        [CV_FLOW_RETRIES] = CV_STAT_RETRIES,
    };
    for (size_t i = 0; i < a->nlogs; i++)
        cv_log(a->logs[i].level, "%s", a->logs[i].text);
    for (int c = 0; c < CV_FLOW_COUNTERS; c++) {
        if (!a->counts[c])
            continue;
        if (c == CV_FLOW_TAKEOVERS)
            cv_metrics_add(CV_METRIC_LEASE_TAKEOVERS, a->counts[c]);
        else
            cv_worker_count(w, stats[c], a->counts[c]);
    }
    if (a->sweep)
        cv_purge_sweep(w, a->sweep, NULL, NULL);
}

/* Sends one command; 0, or non-zero when it could not be (cb not called). */
static int send_cmd(cv_worker_t *w, const cv_flow_cmd_t *c, cv_redis_cb cb, void *ud)
{
    if (c->call)
        return cv_redis_call(w->redis, c->call->script, c->call->keys, c->call->args,
                             c->call->nextra, c->call->extra_keys, c->call->extra_args, cb, ud);
    return cv_redis_argv(w->redis, c->argc, (const char **)c->argv, NULL, cb, ud);
}

void cv_flowrun_send(cv_worker_t *w, const cv_flow_t *a)
{
    for (size_t i = 0; i < a->ncmds; i++)
        send_cmd(w, &a->cmds[i], NULL, NULL);
}

static const char *topic_of(const cv_msg_t *m)
{
    return m->type == CV_MSG_OBSERVE ? CV_TOPIC_OBSERVE : CV_TOPIC_CHECK;
}

/* ------------------------------------------------------------------------
 * IO: replies and acknowledgements gathered
 * ------------------------------------------------------------------------ */

typedef struct io io_t;
typedef struct slot {
    io_t *io;
    size_t i;
} slot_t;

struct io {
    cv_flowrun_cb cb;
    void *ud;
    int pending; /* replies and acknowledgements due, and one while sending */
    int published;
    size_t nreplies;
    cv_resp_t **replies; /* copies, in order */
    slot_t *slots;
};

static void io_release(io_t *io)
{
    if (--io->pending > 0)
        return;
    cv_flow_in_t in = {.now = cv_now(),
                       .replies = (const cv_resp_t *const *)io->replies,
                       .nreplies = io->nreplies,
                       .published = io->published};
    io->cb(io->ud, &in);
    for (size_t i = 0; i < io->nreplies; i++)
        free(io->replies[i]);
    free(io->replies);
    free(io->slots);
    free(io);
}

static void on_reply(cv_redis_t *r, redisReply *rep, void *ud)
{
    slot_t *s = ud;
    (void)r;
    s->io->replies[s->i] = cv_flowrun_resp(rep, true);
    io_release(s->io);
}

static void on_delivered(void *ud, int err)
{
    io_t *io = ud;
    if (err)
        io->published = CV_EKAFKA;
    io_release(io);
}

/* The common case, one reply and nothing else: handed over in hiredis's
 * callback, its strings not copied. */
typedef struct single {
    cv_flowrun_cb cb;
    void *ud;
} single_t;

static void on_single(cv_redis_t *r, redisReply *rep, void *ud)
{
    single_t s = *(single_t *)ud;
    (void)r;
    free(ud);
    cv_resp_t *v = cv_flowrun_resp(rep, false);
    const cv_resp_t *replies[] = {v};
    cv_flow_in_t in = {.now = cv_now(), .replies = replies, .nreplies = 1};
    s.cb(s.ud, &in);
    free(v);
}

static size_t awaited(const cv_flow_t *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->ncmds; i++)
        n += a->cmds[i].reply;
    return n;
}

/* One awaited command among those sent and forgotten, no message. */
static bool io_single(cv_worker_t *w, const cv_flow_t *a, cv_flowrun_cb cb, void *ud)
{
    single_t *s = malloc(sizeof(*s));
    if (!s)
        return false;
    *s = (single_t){cb, ud};
    bool sent = true;
    for (size_t i = 0; i < a->ncmds; i++) {
        if (!a->cmds[i].reply)
            send_cmd(w, &a->cmds[i], NULL, NULL);
        else if (send_cmd(w, &a->cmds[i], on_single, s) != 0)
            sent = false;
    }
    if (!sent) {
        free(s);
        const cv_resp_t *none[] = {NULL};
        cv_flow_in_t in = {.now = cv_now(), .replies = none, .nreplies = 1};
        cb(ud, &in);
    }
    return true;
}

void cv_flowrun_io(cv_worker_t *w, const cv_flow_t *a, cv_flowrun_cb cb, void *ud)
{
    size_t n = awaited(a);
    if (n == 1 && a->nmsgs == 0 && io_single(w, a, cb, ud))
        return;
    io_t *io = calloc(1, sizeof(*io));
    if (io) {
        io->replies = calloc(n + 1, sizeof(*io->replies));
        io->slots = calloc(n + 1, sizeof(*io->slots));
    }
    if (!io || !io->replies || !io->slots) {
        if (io) {
            free(io->replies);
            free(io->slots);
        }
        free(io);
        const cv_resp_t *none[1] = {NULL};
        cv_flow_in_t in = {.now = cv_now(), .replies = none, .nreplies = 0, .published = CV_ENOMEM};
        cb(ud, &in);
        return;
    }
    io->cb = cb;
    io->ud = ud;
    io->pending = 1;
    io->nreplies = n;
    for (size_t i = 0, k = 0; i < a->ncmds; i++) {
        if (!a->cmds[i].reply) {
            send_cmd(w, &a->cmds[i], NULL, NULL);
            continue;
        }
        io->slots[k] = (slot_t){io, k};
        if (send_cmd(w, &a->cmds[i], on_reply, &io->slots[k]) == 0)
            io->pending++;
        k++;
    }
    for (size_t i = 0; i < a->nmsgs; i++) {
        io->pending++;
        if (cv_worker_publish(w, topic_of(&a->msgs[i]), &a->msgs[i], on_delivered, io) != 0) {
            io->pending--;
            io->published = CV_EKAFKA;
        }
    }
    io_release(io); /* drops the count that kept it alive while sending */
}

/* ------------------------------------------------------------------------
 * A job run by a step machine
 * ------------------------------------------------------------------------ */

static void run(cv_flowjob_t *fj, const cv_flow_t *a);

static void stop_renewing(cv_flowjob_t *fj)
{
    cv_lease_stop(fj->keeper);
    fj->keeper = NULL;
}

static void flowjob_reset(cv_jobrun_t *r)
{
    cv_flowjob_t *fj = (cv_flowjob_t *)r;
    stop_renewing(fj);
    if (fj->gate)
        cv_gate_leave(fj->gate, &fj->waiter);
    fj->gate = NULL;
    fj->ops->reset(fj->machine);
}

/* Not admitted: the job waits in line holding nothing. */
static bool admitted(cv_flowjob_t *fj, const cv_flow_in_t *in)
{
    cv_gate_t *g = fj->ops->gate ? fj->ops->gate(fj, in) : NULL;
    if (!g)
        return true;
    fj->gate = g;
    return cv_gate_enter(g, &fj->waiter);
}

static void flowjob_start(cv_jobrun_t *r)
{
    cv_flowjob_t *fj = (cv_flowjob_t *)r;
    if (!admitted(fj, NULL))
        return;
    run(fj, fj->ops->start(fj->machine));
}

static void on_admitted(cv_gate_waiter_t *w)
{
    cv_flowjob_t *fj = (cv_flowjob_t *)((char *)w - offsetof(cv_flowjob_t, waiter));
    fj->ops->reset(fj->machine);
    cv_jobrun_start(&fj->run); /* hands it back when the worker is stopping */
}

cv_flowjob_t *cv_flowjob_new(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m,
                             const cv_flowjob_ops_t *ops, size_t machine_size)
{
    size_t head = (sizeof(cv_flowjob_t) + 15) & ~(size_t)15;
    cv_flowjob_t *fj = calloc(1, head + machine_size);
    if (!fj)
        return NULL;
    cv_jobrun_init(&fj->run, w, job, m, flowjob_start, flowjob_reset);
    fj->ops = ops;
    fj->machine = (char *)fj + head;
    fj->waiter.start = on_admitted;
    return fj;
}

void cv_flowjob_start(cv_flowjob_t *fj)
{
    cv_jobrun_start(&fj->run);
}

/* The machine's lease renewed while it holds one, and only then. */
static void keep_lease(cv_flowjob_t *fj)
{
    const char *key = NULL, *token = NULL;
    bool held = fj->ops->lease && fj->ops->lease(fj->machine, &key, &token);
    cv_worker_t *w = fj->run.w;
    if (held && !fj->keeper)
        fj->keeper =
            cv_lease_keep(w->loop, w->redis, key, token, (unsigned)w->lease_ms, &w->isolated);
    else if (!held && fj->keeper)
        stop_renewing(fj);
}

static void on_io(void *ud, const cv_flow_in_t *in)
{
    cv_flowjob_feed(ud, in);
}

void cv_flowjob_send(cv_flowjob_t *fj, const cv_flow_t *a)
{
    cv_flowrun_io(fj->run.w, a, on_io, fj);
}

static void on_reconciled(void *ud, int rc, const char *why)
{
    const cv_resp_t *none[1] = {NULL};
    cv_flow_in_t in = {.now = cv_now(), .replies = none, .rc = rc, .why = why};
    cv_flowjob_feed(ud, &in);
}

static void reconcile(cv_flowjob_t *fj, const cv_flow_t *a)
{
    cv_flowrun_send(fj->run.w, a);
    if (fj->ops->reconcile)
        fj->ops->reconcile(fj->run.w, a->svc, on_reconciled, fj);
    else
        on_reconciled(fj, CV_EINVAL, "no live engine here");
}

static void run(cv_flowjob_t *fj, const cv_flow_t *a)
{
    cv_worker_t *w = fj->run.w;
    cv_flowrun_notes(w, a);
    keep_lease(fj);
    if (a->kind == CV_FLOW_IO) {
        if (!fj->ops->intercept || !fj->ops->intercept(fj, a))
            cv_flowjob_send(fj, a);
        return;
    }
    if (a->kind == CV_FLOW_RECONCILE) {
        reconcile(fj, a);
        return;
    }
    cv_flowrun_send(w, a);
    switch (a->kind) {
    case CV_FLOW_LATER:
        cv_jobrun_later(&fj->run, a->delay_ms);
        break;
    case CV_FLOW_RETRY:
        cv_jobrun_retry(&fj->run);
        break;
    case CV_FLOW_UNKNOWN_STACK:
        cv_poison_unknown_stack(w, fj->run.job, &fj->run.msg);
        cv_jobrun_drop(&fj->run);
        break;
    case CV_FLOW_UNKNOWN_NODE:
        cv_poison_unknown_node(w, fj->run.job, &fj->run.msg);
        cv_jobrun_drop(&fj->run);
        break;
    default: /* DONE */
        cv_jobrun_end(&fj->run);
        break;
    }
}

void cv_flowjob_feed(cv_flowjob_t *fj, const cv_flow_in_t *in)
{
    if (!admitted(fj, in))
        return;
    run(fj, fj->ops->step(fj->machine, in));
}

/* ------------------------------------------------------------------------
 * Traversals ended and begun for callers that are no step machine
 * ------------------------------------------------------------------------ */

/* A machine run to its end outside a job: a traversal's end
 * (cv_finishjob), or a begin (cv_progress). */
typedef struct moving {
    cv_worker_t *w;
    cv_finishjob_t fin; /* a traversal's end, when `begun` is NULL */
    cv_progress_t p;    /* a begin */
    cv_flow_buf_t b;
    cv_flowrun_done_cb done;
    cv_flowrun_begun_cb begun;
    void *ud;
} moving_t;

static void moving_on(moving_t *m, const cv_flow_t *a);

static void moving_over(moving_t *m, const cv_flow_t *last, int rc)
{
    cv_flowrun_notes(m->w, last);
    cv_flowrun_send(m->w, last);
    if (m->begun)
        m->begun(m->ud, rc, cv_progress_begun(&m->p));
    else
        m->done(m->ud, rc);
    cv_finishjob_reset(&m->fin);
    cv_progress_clear(&m->p);
    cv__flow_clear(&m->b);
    free(m);
}

static void on_moved(void *ud, const cv_flow_in_t *in)
{
    moving_t *m = ud;
    if (!m->begun) {
        moving_on(m, cv_finishjob_step(&m->fin, in));
        return;
    }
    int rc = 0;
    cv__flow_begin(&m->b);
    const cv_flow_t *a = cv_progress_step(&m->p, &m->b, in, &rc);
    if (a)
        moving_on(m, a);
    else
        moving_over(m, &m->b.a, rc);
}

static void moving_on(moving_t *m, const cv_flow_t *a)
{
    if (a->kind == CV_FLOW_IO) {
        cv_flowrun_notes(m->w, a);
        cv_flowrun_io(m->w, a, on_moved, m);
        return;
    }
    if (!m->begun) { /* the end is over */
        moving_over(m, a, cv_finishjob_rc(&m->fin));
        return;
    }
    /* Could not be built (out of memory): as a reply that never came. */
    cv_flowrun_notes(m->w, a);
    cv_flow_in_t in = {.now = cv_now(), .published = CV_ENOMEM};
    on_moved(m, &in);
}

static moving_t *moving_new(cv_worker_t *w, cv_flowrun_done_cb done, cv_flowrun_begun_cb begun,
                            void *ud)
{
    moving_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->w = w;
    m->done = done;
    m->begun = begun;
    m->ud = ud;
    cv__flow_begin(&m->b);
    return m;
}

int cv_flowrun_finish_stack(cv_worker_t *w, const char *stack, uint64_t traversal,
                            cv_flowrun_done_cb cb, void *ud)
{
    moving_t *m = moving_new(w, cb, NULL, ud);
    if (!m)
        return CV_ENOMEM;
    cv_finishjob_init(&m->fin, stack, traversal, w->id);
    moving_on(m, cv_finishjob_start(&m->fin));
    return 0;
}

int cv_flowrun_begin_stack(cv_worker_t *w, const cv_stack_begin_t *sb, bool express,
                           cv_flowrun_begun_cb cb, void *ud)
{
    moving_t *m = moving_new(w, NULL, cb, ud);
    if (!m)
        return CV_ENOMEM;
    moving_on(m, cv_progress_begin(&m->p, &m->b, sb, express, w->id));
    return 0;
}
