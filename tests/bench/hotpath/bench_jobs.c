/*
 * Hot-path benchmark, the jobs whole: a worker's step machine (cv_flow.h)
 * driven from the decoded message to its last answer, every reply written
 * in as Redis would answer (hiredis's replies, read as the workers read
 * them) and every published message encoded as the driver would — the pure
 * work a worker does per resource, steps and all (bench_hotpath.c measures
 * the pure functions one by one).
 *
 *   checkjob   a CHECK job of a resource the observers watch (a
 *              TestResource that takes 5 s): check_begin, the decision,
 *              the create, check_finish, the OBSERVE job
 *   settlejob  a CHECK job of an OS::Heat::None resource, which settles at
 *              once: check_begin, the decision, the create, the look,
 *              check_done, the successor's CHECK job
 *   observejob an OBSERVE job of that resource's create: observe_load, the
 *              decision, the type's look, node_done, the successor's job
 */
#include "bench_jobs.h"

#include "cv_convergence.h"
#include "cv_contract.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static const char NONE[] = "{\"type\": \"OS::Heat::None\", \"properties\": {}, "
                           "\"deletion_policy\": \"Delete\", \"metadata\": {}, \"depends\": "
                           "[\"parent\"]}";
static const char SLOW[] = "{\"type\": \"OS::Heat::TestResource\", \"properties\": "
                           "{\"wait_secs\": 5}, \"deletion_policy\": \"Delete\", \"metadata\": {}, "
                           "\"depends\": [\"parent\"]}";
static const char ENTRY[] = "{\"p\": [\"u/parent\"], \"s\": [[\"u/child\", 1]]}";
static const char *const SP[] = {"u/parent", "{\"id\": \"parent-id\", \"attrs\": {}}"};
static const char *const NEW[] = {"version", "0"};
static const char *const CREATING[] = {"status",    "CREATE_IN_PROGRESS",
                                       "action",    "CREATE",
                                       "type",      "OS::Heat::None",
                                       "uuid",      "0e4a6c1e-9bd5-4d5f-8c55-3c1f1b3e6a7d",
                                       "version",   "1",
                                       "policy",    "Delete",
                                       "props",     "{}",
                                       "attrs",     "{}",
                                       "data",      "{}",
                                       "old",       "[]",
                                       "traversal", "5",
                                       "started",   "1700000000.5"};

/* Replies over static strings, built before the measured loops, as
 * hiredis hands them over: each round reads them as the workers do
 * (cv_flowrun_resp). */
typedef struct reply {
    redisReply top;
    redisReply e[16];
    redisReply *ep[16];
    redisReply sub[2][32];
    redisReply *subp[2][32];
} reply_t;

static void str(redisReply *r, const char *s)
{
    *r = (redisReply){.type = REDIS_REPLY_STRING, .str = (char *)s, .len = strlen(s)};
}

static void integer(redisReply *r, long long v)
{
    *r = (redisReply){.type = REDIS_REPLY_INTEGER, .integer = v};
}

static void array(redisReply *r, redisReply **ptrs, redisReply *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ptrs[i] = &items[i];
    *r = (redisReply){.type = REDIS_REPLY_ARRAY, .element = ptrs, .elements = n};
}

static void flat(reply_t *r, redisReply *at, int k, const char *const *fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        str(&r->sub[k][i], fields[i]);
    array(at, r->subp[k], r->sub[k], n);
}

/* check_begin's OK for a resource defined by rdef, without a record. */
static void begin_ok(reply_t *r, const char *rdef)
{
    const char *s[] = {"OK", rdef, "{}", NULL, NULL, ENTRY, "web", "0", "", "CREATE", ""};
    for (size_t i = 0; i < 11; i++)
        if (s[i])
            str(&r->e[i], s[i]);
    flat(r, &r->e[CV_CHECK_BEGIN_R_RECORD], 0, NEW, 2);
    flat(r, &r->e[CV_CHECK_BEGIN_R_SP], 1, SP, 2);
    array(&r->top, r->ep, r->e, 11);
}

/* node_done's (or check_done's) OK: 1 of 2 done, the successor's set complete. */
static void done_ok(reply_t *r)
{
    str(&r->e[0], "OK");
    const long long v[] = {1, 1, 2, 1, 1, 0};
    for (size_t i = 0; i < 6; i++)
        integer(&r->e[1 + i], v[i]);
    array(&r->top, r->ep, r->e, 7);
}

typedef struct io {
    char *wire; /* the job as it comes from Kafka */
    size_t wire_len;
    reply_t first, second; /* the replies of its two round trips */
    cv_limits_t limits;
} io_t;

static const cv_flow_t *step(void *job, bool check, const redisReply *reply)
{
    cv_resp_t *view = cv_flowrun_resp(reply, false);
    const cv_resp_t *replies[] = {view};
    cv_flow_in_t in = {.now = 1700000001.0, .replies = replies, .nreplies = reply ? 1 : 0};
    const cv_flow_t *a = check ? cv_checkjob_step(job, &in) : cv_observejob_step(job, &in);
    free(view);
    return a;
}

/* The driver publishes a message: encoded. */
static void publish(const cv_flow_t *a)
{
    for (size_t i = 0; i < a->nmsgs; i++) {
        char *buf = NULL;
        size_t len = 0;
        cv_msg_encode(&a->msgs[i], &buf, &len);
        free(buf);
    }
}

/* A CHECK job from its message to its end: whether it published one
 * message (the OBSERVE job, or the successor's CHECK job) and ended. */
static bool check_round(const io_t *io)
{
    cv_msg_t m;
    char err[128];
    if (cv_msg_decode(io->wire, io->wire_len, &m, err, sizeof(err)))
        return 0;
    cv_checkjob_t j;
    cv_checkjob_conf_t conf = {
        .worker = "engine-1", .token = "engine-1@1:42", .lease_ms = 5000, .limits = &io->limits};
    cv_checkjob_init(&j, &m, &conf);
    cv_checkjob_start(&j);
    step(&j, true, &io->first.top);
    const cv_flow_t *a = step(&j, true, &io->second.top);
    bool published = a->nmsgs == 1;
    publish(a);
    a = step(&j, true, NULL);
    bool done = published && a->kind == CV_FLOW_DONE;
    cv_checkjob_reset(&j);
    return done;
}

/* checkjob and settlejob run the same round over other replies; each has a
 * function of its own because hotpath.sh reads callgrind's count by name. */
NOINLINE size_t hot_checkjob(const io_t *io, size_t count)
{
    size_t done = 0;
    for (size_t i = 0; i < count; i++)
        done += check_round(io);
    return done;
}

NOINLINE size_t hot_settlejob(const io_t *io, size_t count)
{
    size_t settled = 0;
    for (size_t i = 0; i < count; i++)
        settled += check_round(io);
    return settled;
}

static bool observe_round(const io_t *io)
{
    cv_msg_t m;
    char err[128];
    if (cv_msg_decode(io->wire, io->wire_len, &m, err, sizeof(err)))
        return false;
    cv_observejob_t o;
    cv_observejob_init(&o, &m, "observer-1");
    cv_observejob_start(&o);
    step(&o, false, &io->first.top);
    const cv_flow_t *a = step(&o, false, &io->second.top);
    bool published = a->nmsgs == 1;
    publish(a);
    a = step(&o, false, NULL);
    bool done = published && a->kind == CV_FLOW_DONE;
    cv_observejob_reset(&o);
    return done;
}

NOINLINE size_t hot_observejob(const io_t *io, size_t count)
{
    size_t done = 0;
    for (size_t i = 0; i < count; i++)
        done += observe_round(io);
    return done;
}

static int wire(io_t *io, uint8_t type)
{
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = type;
    snprintf(m.stack, sizeof(m.stack), "%s", "9f3c2a1b-stack");
    snprintf(m.resource, sizeof(m.resource), "%s", "resource-000042");
    m.traversal = 5;
    m.version = type == CV_MSG_OBSERVE ? 1 : 0;
    cv_limits_init(&io->limits);
    return cv_msg_encode(&m, &io->wire, &io->wire_len);
}

int bench_jobs_run(const char *part, size_t count)
{
    io_t io;
    memset(&io, 0, sizeof(io));
    size_t n;
    if (strcmp(part, "checkjob") == 0) {
        wire(&io, CV_MSG_CHECK);
        begin_ok(&io.first, SLOW);
        str(&io.second.e[0], "OK");
        str(&io.second.e[1], "1");
        array(&io.second.top, io.second.ep, io.second.e, 2);
        n = hot_checkjob(&io, count);
        printf("checkjob: %zu rounds, %zu written and handed off\n", count, n);
    } else if (strcmp(part, "settlejob") == 0) {
        wire(&io, CV_MSG_CHECK);
        begin_ok(&io.first, NONE);
        done_ok(&io.second);
        n = hot_settlejob(&io, count);
        printf("settlejob: %zu rounds, %zu settled at once\n", count, n);
    } else if (strcmp(part, "observejob") == 0) {
        wire(&io, CV_MSG_OBSERVE);
        str(&io.first.e[0], "5");
        str(&io.first.e[1], "CREATE_IN_PROGRESS");
        flat(&io.first, &io.first.e[2], 0, CREATING, sizeof(CREATING) / sizeof(*CREATING));
        str(&io.first.e[3], ENTRY);
        array(&io.first.top, io.first.ep, io.first.e, 4);
        done_ok(&io.second);
        n = hot_observejob(&io, count);
        printf("observejob: %zu rounds, %zu complete\n", count, n);
    } else {
        return -1;
    }
    free(io.wire);
    return n == count ? 0 : 1;
}
