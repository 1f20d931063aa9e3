/*
 * Hot-path benchmark: the pure work a worker does per resource, run in a
 * loop so that `valgrind --tool=callgrind` can count its instructions
 * (tests/bench/hotpath.sh). Instruction counts do not depend on a noisy
 * machine, so a change to the hot path shows as a number that moved.
 *
 *   bench_hotpath PART COUNT
 *
 * PART is one of:
 *   codec      a CHECK and an OBSERVE message encoded and decoded
 *   check      what an engine does with a CHECK job of an OS::Heat::None
 *              resource: the job decoded, check_begin's call built, the
 *              record and definition parsed, the decision (CREATE), the
 *              type's create, check_finish's call built, the OBSERVE job
 *              encoded
 *   observe    what an observer does with that OBSERVE job: decoded, the
 *              record parsed, the decision before and after the look
 *              (COMPLETE), node_done's call built, the child's CHECK job
 *              encoded
 *   settle     what an engine does with that CHECK job now that the
 *              resource settles at once (it replaces check + observe for
 *              such types): decoded, check_begin's call built, the load
 *              parsed, the decision, the type's create, the observer's
 *              decision taken in place (cv_check_settled), check_done's
 *              call built, the child's CHECK job encoded
 *   syncpoint  a two-parent sync point satisfied by both, and the
 *              decision to publish
 * and the jobs whole, as step machines (bench_jobs.c): checkjob,
 * settlejob, observejob.
 * Each PART runs COUNT times in a function named hot_<part>, which the
 * script measures alone (--toggle-collect). Prints the outcome of the last
 * round, so that a broken path shows as a wrong kind, not as a fast one.
 */
#include "bench_jobs.h"
#include "cv_convergence.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static const char RDEF[] = "{\"type\": \"OS::Heat::None\", \"properties\": {}, "
                           "\"deletion_policy\": \"Delete\", \"metadata\": {}, \"depends\": "
                           "[\"parent\"]}";
static const char SP[] = "{\"u/parent\": {\"id\": \"parent-id\", \"attrs\": {}}}";
static const char ENTRY[] = "{\"p\": [\"u/parent\"], \"s\": [[\"u/child\", 1]]}";
static const char *const FIELDS_NEW[] = {"version", "0"};
static const char *const FIELDS_CREATING[] = {"status",    "CREATE_IN_PROGRESS",
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

/* A flat HGETALL-like reply over static strings. */
typedef struct flat {
    cv_resp_t top;
    cv_resp_t items[32];
} flat_t;

static void flat_init(flat_t *f, const char *const *fields, size_t n)
{
    memset(f, 0, sizeof(*f));
    f->top.type = CV_RESP_ARRAY;
    f->top.elements = n;
    f->top.element = f->items;
    for (size_t i = 0; i < n; i++) {
        f->items[i].type = CV_RESP_STRING;
        f->items[i].str = fields[i];
        f->items[i].len = strlen(fields[i]);
    }
}

static cv_msg_t job(uint8_t type, const char *resource)
{
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = type;
    snprintf(m.stack, sizeof(m.stack), "%s", "9f3c2a1b-stack");
    snprintf(m.resource, sizeof(m.resource), "%s", resource);
    m.traversal = 5;
    m.version = 1;
    return m;
}

/* ---- codec ---- */

static int codec_round(void)
{
    int bad = 0;
    for (uint8_t type = CV_MSG_CHECK; type <= CV_MSG_OBSERVE; type++) {
        cv_msg_t in = job(type, "resource-000042"), out;
        char *buf = NULL, err[128];
        size_t len = 0;
        bad |= cv_msg_encode(&in, &buf, &len);
        bad |= cv_msg_decode(buf, len, &out, err, sizeof(err));
        bad |= strcmp(out.resource, in.resource) != 0;
        free(buf);
    }
    return bad;
}

NOINLINE int hot_codec(size_t count)
{
    int bad = 0;
    for (size_t i = 0; i < count; i++)
        bad |= codec_round();
    return bad;
}

/* ---- check ---- */

typedef struct check_io {
    char *wire; /* the CHECK job as it comes from Kafka */
    size_t wire_len;
    flat_t fresh; /* check_begin's answer: no record yet */
} check_io_t;

static cv_check_kind_t check_round(const check_io_t *io)
{
    cv_msg_t m;
    char err[128];
    if (cv_msg_decode(io->wire, io->wire_len, &m, err, sizeof(err)))
        return CV_CHECK_FAIL;
    cv_call_t begin;
    cv_call_check_begin(&begin, &m, "engine-1@1:42", 5000);
    cv_call_free(&begin);

    cv_record_t rec;
    cv_record_parse(&rec, &io->fresh.top);
    cv_rdef_t rdef;
    cv_rdef_decode(&rdef, RDEF, NULL, 0);
    json_t *sp = json_loads(SP, 0, NULL), *params = json_object();
    cv_check_input_t in = {.job = &m,
                           .rec = &rec,
                           .rdef = &rdef,
                           .params = params,
                           .sp = sp,
                           .now = 1700000000.0,
                           .stack_action = "CREATE"};
    cv_check_outcome_t out;
    cv_check_decide(&in, &out);
    cv_check_kind_t kind = out.kind;

    cv_rstate_t st = {.uuid = out.uuid,
                      .props = out.props,
                      .now = in.now,
                      .data = json_object(),
                      .attrs = json_object()};
    if (out.type && out.type->create)
        out.type->create(&st);
    char *props = json_dumps(out.props, JSON_COMPACT), *attrs = json_dumps(st.attrs, JSON_COMPACT),
         *data = json_dumps(st.data, JSON_COMPACT);
    cv_check_finish_t f = {.job = &m,
                           .version = rec.version,
                           .token = "engine-1@1:42",
                           .status = out.status,
                           .action = out.action,
                           .uuid = out.uuid,
                           .type = out.type_name,
                           .props = props,
                           .attrs = attrs,
                           .data = data,
                           .event_status = out.status,
                           .physical_id = st.physical_id,
                           .policy = "Delete"};
    cv_call_t finish;
    cv_call_check_finish(&finish, &f, "engine-1");
    cv_call_free(&finish);

    cv_msg_t obs = m;
    obs.type = CV_MSG_OBSERVE;
    obs.version = 1;
    char *buf = NULL;
    size_t len = 0;
    cv_msg_encode(&obs, &buf, &len);

    free(buf);
    free(props);
    free(attrs);
    free(data);
    cv_record_state_clear(&st);
    cv_check_outcome_clear(&out);
    cv_record_clear(&rec);
    cv_rdef_clear(&rdef);
    json_decref(sp);
    json_decref(params);
    return kind;
}

NOINLINE cv_check_kind_t hot_check(const check_io_t *io, size_t count)
{
    cv_check_kind_t kind = CV_CHECK_FAIL;
    for (size_t i = 0; i < count; i++)
        kind = check_round(io);
    return kind;
}

/* ---- settle: the CHECK of a resource that settles at once ---- */

static bool settle_round(const check_io_t *io)
{
    cv_msg_t m;
    char err[128];
    if (cv_msg_decode(io->wire, io->wire_len, &m, err, sizeof(err)))
        return false;
    cv_call_t begin;
    cv_call_check_begin(&begin, &m, "engine-1@1:42", 5000);
    cv_call_free(&begin);

    cv_check_loaded_t l = {.params = json_object(),
                           .sp = json_loads(SP, 0, NULL),
                           .graph_entry = strdup(ENTRY),
                           .stack_action = "CREATE"};
    cv_rdef_decode(&l.rdef, RDEF, NULL, 0);
    cv_record_parse(&l.rec, &io->fresh.top);
    cv_check_input_t in = cv_check_input(&l, &m, 1700000000.0, NULL);
    cv_check_outcome_t out;
    cv_check_decide(&in, &out);
    cv_rstate_t st;
    memset(&st, 0, sizeof(st));
    bool settled = false;
    if (cv_check_act(&m, &l.rec, &out, in.now, &st, NULL, NULL) == 0) {
        cv_observe_outcome_t seen;
        settled = cv_check_settled(&m, &l, &out, &st, in.now, &seen);
        cv_check_finish_t f;
        cv_check_written_t written;
        cv_check_finish_of(&f, &written, &m, &l, &out, &st, "engine-1@1:42");
        cv_node_done_t d = cv_observe_done_of(&m, &seen, l.graph_entry, st.physical_id);
        d.publishing = true;
        cv_call_t call;
        if (settled && cv_call_check_done(&call, &f, &d, "engine-1") == 0) {
            cv_msg_t child = m;
            snprintf(child.resource, sizeof(child.resource), "%s", call.extra_args[0] + 2);
            char *buf = NULL;
            size_t len = 0;
            cv_msg_encode(&child, &buf, &len);
            free(buf);
            cv_call_free(&call);
        }
        cv_check_written_clear(&written);
        cv_observe_outcome_clear(&seen);
    }
    cv_record_state_clear(&st);
    cv_check_outcome_clear(&out);
    cv_check_loaded_clear(&l);
    return settled;
}

NOINLINE size_t hot_settle(const check_io_t *io, size_t count)
{
    size_t settled = 0;
    for (size_t i = 0; i < count; i++)
        settled += settle_round(io);
    return settled;
}

/* ---- observe ---- */

typedef struct observe_io {
    char *wire;
    size_t wire_len;
    flat_t creating; /* observe_load's answer: the record check_finish wrote */
} observe_io_t;

static cv_observe_kind_t observe_round(const observe_io_t *io)
{
    cv_msg_t m;
    char err[128];
    if (cv_msg_decode(io->wire, io->wire_len, &m, err, sizeof(err)))
        return CV_OBSERVE_FAILED;
    cv_record_t rec;
    cv_record_parse(&rec, &io->creating.top);
    cv_observe_outcome_t first, out;
    cv_observe_decide(&m, &rec, NULL, 1700000001.0, &first);
    cv_observe_looks_t looks = {
        .current = {.observed = CV_OBSERVED_COMPLETE, .attrs = rec.attrs, .data = rec.data}};
    cv_observe_decide(&m, &rec, &looks, 1700000001.0, &out);
    cv_observe_kind_t kind = first.kind == CV_OBSERVE_LOOK ? out.kind : first.kind;

    cv_node_done_t d = {.job = &m,
                        .graph_entry = ENTRY,
                        .version = out.version,
                        .status = out.status,
                        .attrs = out.attrs,
                        .data = out.data,
                        .pass = out.pass,
                        .physical_id = rec.physical_id,
                        .action = out.action,
                        .old = out.old,
                        .events = out.events};
    cv_call_t done;
    if (cv_call_node_done(&done, &d, "observer-1") == 0)
        cv_call_free(&done);

    cv_msg_t child = job(CV_MSG_CHECK, "child-000043");
    char *buf = NULL;
    size_t len = 0;
    cv_msg_encode(&child, &buf, &len);

    free(buf);
    cv_observe_outcome_clear(&first);
    cv_observe_outcome_clear(&out);
    cv_record_clear(&rec);
    return kind;
}

NOINLINE cv_observe_kind_t hot_observe(const observe_io_t *io, size_t count)
{
    cv_observe_kind_t kind = CV_OBSERVE_FAILED;
    for (size_t i = 0; i < count; i++)
        kind = observe_round(io);
    return kind;
}

/* ---- syncpoint ---- */

NOINLINE size_t hot_syncpoint(size_t count)
{
    size_t published = 0;
    for (size_t i = 0; i < count; i++) {
        cv_syncpoint_t *sp = cv_sp_new(2);
        cv_sp_answer_t ans;
        for (int p = 0; p < 2 && sp; p++) {
            if (cv_sp_satisfy(sp, p ? "u/b" : "u/a", "{\"id\": \"x\"}", &ans) == 0)
                published += cv_sp_should_publish(&ans, false);
        }
        cv_sp_free(sp);
    }
    return published;
}

/* ---- main ---- */

static int run(const char *part, size_t count)
{
    if (strcmp(part, "codec") == 0) {
        int bad = hot_codec(count);
        printf("codec: %zu rounds, %s\n", count, bad ? "BROKEN" : "ok");
        return bad;
    }
    if (strcmp(part, "check") == 0) {
        check_io_t io;
        cv_msg_t m = job(CV_MSG_CHECK, "resource-000042");
        flat_init(&io.fresh, FIELDS_NEW, sizeof(FIELDS_NEW) / sizeof(*FIELDS_NEW));
        if (cv_msg_encode(&m, &io.wire, &io.wire_len))
            return 1;
        cv_check_kind_t k = hot_check(&io, count);
        free(io.wire);
        printf("check: %zu rounds, decision %s\n", count, cv_check_kind_name(k));
        return k != CV_CHECK_CREATE;
    }
    if (strcmp(part, "settle") == 0) {
        check_io_t io;
        cv_msg_t m = job(CV_MSG_CHECK, "resource-000042");
        flat_init(&io.fresh, FIELDS_NEW, sizeof(FIELDS_NEW) / sizeof(*FIELDS_NEW));
        if (cv_msg_encode(&m, &io.wire, &io.wire_len))
            return 1;
        size_t n = hot_settle(&io, count);
        free(io.wire);
        printf("settle: %zu rounds, %zu settled at once\n", count, n);
        return n != count;
    }
    if (strcmp(part, "observe") == 0) {
        observe_io_t io;
        cv_msg_t m = job(CV_MSG_OBSERVE, "resource-000042");
        flat_init(&io.creating, FIELDS_CREATING,
                  sizeof(FIELDS_CREATING) / sizeof(*FIELDS_CREATING));
        if (cv_msg_encode(&m, &io.wire, &io.wire_len))
            return 1;
        cv_observe_kind_t k = hot_observe(&io, count);
        free(io.wire);
        printf("observe: %zu rounds, decision %s\n", count, cv_observe_kind_name(k));
        return k != CV_OBSERVE_COMPLETE;
    }
    if (strcmp(part, "syncpoint") == 0) {
        size_t n = hot_syncpoint(count);
        printf("syncpoint: %zu rounds, %zu published\n", count, n);
        return n != count;
    }
    int rc = bench_jobs_run(part, count);
    if (rc >= 0)
        return rc;
    fprintf(stderr,
            "bench_hotpath: unknown part \"%s\" (codec, check, settle, observe, syncpoint, "
            "checkjob, settlejob, observejob)\n",
            part);
    return 2;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    unsigned long long count = argc == 3 ? strtoull(argv[2], &end, 10) : 0;
    if (argc != 3 || !end || *end || count == 0) {
        fprintf(
            stderr,
            "usage: %s codec|check|settle|observe|syncpoint|checkjob|settlejob|observejob COUNT\n",
            argv[0]);
        return 2;
    }
    json_object_seed(1); /* the same hash tables every run: instruction counts repeat */
    return run(argv[1], (size_t)count);
}
