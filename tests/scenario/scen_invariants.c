/*
 * The invariants checked at the end of every schedule: those of the chaos
 * suite (tests/chaos/check.jq), read from Redis the same way (records,
 * counts, index, ledger, events), plus what only the harness can see (the
 * schedule's own record of dead letters and superseded actions).
 *
 * Each check appends at most one finding; the first one is the schedule's
 * verdict. The expected definition is the one stored at the end (after a
 * rollback: the definition rolled back to), parsed with the real template
 * code; the harness also checks that it is the one it expected.
 */
#include "scen.h"

#include "cv_contract.h"
#include "cv_base.h"
#include "cv_hot.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct finding {
    char *why;
    size_t size;
    bool found;
} finding_t;

static void violation(finding_t *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void violation(finding_t *f, const char *fmt, ...)
{
    if (f->found)
        return;
    f->found = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->why, f->size, fmt, ap);
    va_end(ap);
}

/* ---- reading the stack ---- */

typedef struct event {
    char resource[CV_NAME_MAX];
    char action[16];
    char status[16];
    uint64_t traversal;
} event_t;

typedef struct snapshot {
    json_t *stack, *counts, *index, *ledger, *records; /* records: name -> hash */
    char *template_text;
    char *name_mapped;
    json_t *leases; /* lease keys left */
    event_t *events;
    size_t nevents;
} snapshot_t;

static json_t *hash_of(const redisReply *r)
{
    json_t *o = json_object();
    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2)
        json_object_set_new(o, r->element[i]->str, json_string(r->element[i + 1]->str));
    return o;
}

/* An entry with a `begun` field is a settled action's two events, its
 * IN_PROGRESS then its COMPLETE (docs/keyspace.md). */
static void read_events(snapshot_t *s, const redisReply *r)
{
    s->events = calloc(2 * r->elements + 1, sizeof(*s->events));
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *fields = r->element[i]->element[1];
        event_t *e = &s->events[s->nevents++];
        bool begun = false;
        for (size_t k = 0; k + 1 < fields->elements; k += 2) {
            const char *f = fields->element[k]->str, *v = fields->element[k + 1]->str;
            if (strcmp(f, "resource") == 0)
                snprintf(e->resource, sizeof(e->resource), "%s", v);
            else if (strcmp(f, "action") == 0)
                snprintf(e->action, sizeof(e->action), "%s", v);
            else if (strcmp(f, "status") == 0)
                snprintf(e->status, sizeof(e->status), "%s", v);
            else if (strcmp(f, "traversal") == 0)
                e->traversal = strtoull(v, NULL, 10);
            else if (strcmp(f, "begun") == 0)
                begun = true;
        }
        if (begun) {
            s->events[s->nevents] = *e;
            snprintf(e->status, sizeof(e->status), "IN_PROGRESS");
            s->nevents++;
        }
    }
}

static void snapshot_read(const scen_world_t *w, snapshot_t *s)
{
    char k[8][CV_KEY_MAX], pattern[CV_KEY_MAX], leases[CV_KEY_MAX];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, w->stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_COUNTS, w->stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_INDEX, w->stack, 0, NULL);
    cv_key(k[3], CV_KEY_MAX, CV_KEY_LEDGER, w->stack, 0, NULL);
    cv_key(k[4], CV_KEY_MAX, CV_KEY_DEF, w->stack, 0, NULL);
    cv_key(k[5], CV_KEY_MAX, CV_KEY_STACKS, NULL, 0, NULL);
    cv_key(k[6], CV_KEY_MAX, CV_KEY_EVENTS, w->stack, 0, NULL);
    cv_key(pattern, CV_KEY_MAX, CV_KEY_RES, w->stack, 0, "*");
    cv_key(leases, CV_KEY_MAX, CV_KEY_LEASE, w->stack, 0, "*");
    const char *a0[] = {"HGETALL", k[0]}, *a1[] = {"HGETALL", k[1]}, *a2[] = {"HGETALL", k[2]},
               *a3[] = {"HGETALL", k[3]}, *a4[] = {"HGET", k[4], "template"},
               *a5[] = {"HGET", k[5], w->name}, *a6[] = {"XRANGE", k[6], "-", "+"},
               *a7[] = {"KEYS", pattern}, *a8[] = {"KEYS", leases};
    const char **argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    int argc[] = {2, 2, 2, 2, 3, 3, 4, 2, 2};
    redisReply *rep[9];
    scen_pipeline(9, argc, argv, rep);
    s->leases = json_array();
    for (size_t i = 0; i < rep[8]->elements; i++)
        json_array_append_new(s->leases, json_string(rep[8]->element[i]->str));
    s->stack = hash_of(rep[0]);
    s->counts = hash_of(rep[1]);
    s->index = hash_of(rep[2]);
    s->ledger = hash_of(rep[3]);
    s->template_text = strdup(rep[4]->type == REDIS_REPLY_STRING ? rep[4]->str : "");
    s->name_mapped = strdup(rep[5]->type == REDIS_REPLY_STRING ? rep[5]->str : "");
    read_events(s, rep[6]);
    s->records = json_object();
    size_t nres = rep[7]->elements, prefix = strlen(pattern) - 1;
    if (nres > 0) {
        int *rc = malloc(nres * sizeof(int));
        const char ***rv = malloc(nres * sizeof(*rv));
        const char **pairs = malloc(2 * nres * sizeof(*pairs));
        redisReply **rr = malloc(nres * sizeof(*rr));
        for (size_t i = 0; i < nres; i++) {
            pairs[2 * i] = "HGETALL";
            pairs[2 * i + 1] = rep[7]->element[i]->str;
            rv[i] = &pairs[2 * i];
            rc[i] = 2;
        }
        scen_pipeline((int)nres, rc, rv, rr);
        for (size_t i = 0; i < nres; i++) {
            json_object_set_new(s->records, rep[7]->element[i]->str + prefix, hash_of(rr[i]));
            freeReplyObject(rr[i]);
        }
        free(rc);
        free(rv);
        free(pairs);
        free(rr);
    }
    for (int i = 0; i < 9; i++)
        freeReplyObject(rep[i]);
}

static void snapshot_free(snapshot_t *s)
{
    json_decref(s->stack);
    json_decref(s->counts);
    json_decref(s->index);
    json_decref(s->ledger);
    json_decref(s->records);
    json_decref(s->leases);
    free(s->template_text);
    free(s->name_mapped);
    free(s->events);
}

static const char *field(const json_t *hash, const char *name)
{
    const char *v = json_string_value(json_object_get(hash, name));
    return v ? v : "";
}

static long long number(const json_t *hash, const char *name)
{
    return strtoll(field(hash, name), NULL, 10);
}

static json_t *old_versions(const json_t *record)
{
    json_t *old = json_loads(field(record, "old"), 0, NULL);
    if (!json_is_array(old)) {
        json_decref(old);
        old = json_array();
    }
    return old;
}

/* ---- the checks ---- */

static void check_stack(const scen_world_t *w, const snapshot_t *s, const char *expect,
                        bool deleted, finding_t *f)
{
    const char *status = field(s->stack, "status");
    if (strcmp(status, expect) != 0)
        violation(f, "stack status %s, expected %s (reason: %s)", status[0] ? status : "(none)",
                  expect, field(s->stack, "reason"));
    if (number(s->stack, "done") != number(s->stack, "total"))
        violation(f, "stack progress done %lld != total %lld at %s", number(s->stack, "done"),
                  number(s->stack, "total"), status);
    if (deleted && s->name_mapped[0])
        violation(f, "the name %s still maps to the stack after DELETE_COMPLETE", w->name);
    if (!deleted && strcmp(s->name_mapped, w->stack) != 0)
        violation(f, "the name %s maps to \"%s\", not %s", w->name, s->name_mapped, w->stack);
}

static void check_records(const snapshot_t *s, const cv_template_t *tpl, finding_t *f)
{
    size_t n = tpl ? tpl->nresources : 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = tpl->resources[i].name;
        const json_t *rec = json_object_get(s->records, name);
        if (!rec)
            violation(f, "resource %s of the final definition has no record", name);
        else if (!cv_str_ends_with(field(rec, "status"), "_COMPLETE") ||
                 cv_str_starts_with(field(rec, "status"), "DELETE"))
            violation(f, "resource %s is %s, not complete", name, field(rec, "status"));
        if (!json_object_get(s->index, name))
            violation(f, "resource %s is missing from the index", name);
    }
    const char *name;
    json_t *rec;
    json_t *histogram = json_object();
    json_object_foreach(s->records, name, rec)
    {
        bool unwanted = !tpl || !cv_template_resource(tpl, name);
        if (unwanted) {
            violation(f, "record of %s, which is not in the final definition (status %s)", name,
                      field(rec, "status")[0] ? field(rec, "status") : "none: stray fields");
        }
        json_t *old = old_versions(rec);
        if (json_array_size(old) > 0)
            violation(f, "resource %s still has %zu replaced versions", name, json_array_size(old));
        json_decref(old);
        const char *st = field(rec, "status");
        if (st[0])
            json_object_set_new(
                histogram, st,
                json_integer(json_integer_value(json_object_get(histogram, st)) + 1));
    }
    json_t *v;
    json_object_foreach(s->index, name, v)
    {
        if (!json_object_get(s->records, name))
            violation(f, "index entry %s has no record", name);
    }
    json_object_foreach(s->counts, name, v)
    {
        long long counted = strtoll(json_string_value(v), NULL, 10);
        if (counted != json_integer_value(json_object_get(histogram, name)))
            violation(f, "status counts drift: %s counted %lld, records %lld", name, counted,
                      (long long)json_integer_value(json_object_get(histogram, name)));
    }
    json_object_foreach(histogram, name, v)
    {
        if (!json_object_get(s->counts, name))
            violation(f, "status counts drift: %s not counted, records %lld", name,
                      (long long)json_integer_value(v));
    }
    json_decref(histogram);
}

/* Every version current or replaced was created exactly once; nothing was
 * deleted twice, nor deleted while current; every version created is
 * current, replaced, or deleted. */
static void check_ledger(const snapshot_t *s, bool deleted, finding_t *f)
{
    json_t *live = json_object();
    const char *name, *key;
    json_t *rec, *count;
    json_object_foreach(s->records, name, rec)
    {
        if (field(rec, "uuid")[0])
            json_object_set_new(live, field(rec, "uuid"), json_string("current"));
        json_t *old = old_versions(rec);
        size_t i;
        json_t *e;
        json_array_foreach(old, i, e)
        {
            const char *u = json_string_value(json_object_get(e, "uuid"));
            if (u)
                json_object_set_new(live, u, json_string("replaced"));
        }
        json_decref(old);
    }
    long long creates = 0, deletes = 0;
    json_object_foreach(s->ledger, key, count)
    {
        long long n = strtoll(json_string_value(count), NULL, 10);
        bool create = cv_str_starts_with(key, "create:");
        const char *uuid = key + 7;
        char other[64];
        snprintf(other, sizeof(other), "%s:%s", create ? "delete" : "create", uuid);
        long long m = strtoll(field(s->ledger, other), NULL, 10);
        if (create) {
            creates += n;
            if (n != 1)
                violation(f, "ledger: version %s created %lld times", uuid, n);
            if (!json_object_get(live, uuid) && m == 0)
                violation(f, "ledger: version %s created, neither current nor deleted (leaked)",
                          uuid);
        } else {
            deletes += n;
            if (n > 1)
                violation(f, "ledger: version %s deleted %lld times", uuid, n);
            if (m == 0)
                violation(f, "ledger: version %s deleted but never created", uuid);
            const char *what = json_string_value(json_object_get(live, uuid));
            if (what && strcmp(what, "current") == 0)
                violation(f, "ledger: current version %s was deleted", uuid);
        }
    }
    json_object_foreach(live, key, count)
    {
        char k[64];
        snprintf(k, sizeof(k), "create:%s", key);
        if (strtoll(field(s->ledger, k), NULL, 10) != 1)
            violation(f, "ledger: %s version %s created %lld times, expected once",
                      json_string_value(count), key, strtoll(field(s->ledger, k), NULL, 10));
    }
    if (deleted && creates != deletes)
        violation(f, "ledger: %lld creates but %lld deletes after delete", creates, deletes);
    json_decref(live);
}

static long first_event(const snapshot_t *s, uint64_t trav, const char *resource, bool deletes,
                        const char *status)
{
    for (size_t i = 0; i < s->nevents; i++) {
        const event_t *e = &s->events[i];
        if (e->traversal == trav && strcmp(e->resource, resource) == 0 &&
            strcmp(e->status, status) == 0 && (strcmp(e->action, "DELETE") == 0) == deletes)
            return (long)i;
    }
    return -1;
}

/* Per traversal: a resource's create or update starts after every parent
 * (in that traversal's definition) completed; a resource's delete starts
 * after every dependent (in any definition of the schedule) was deleted. */
static void check_order(const scen_world_t *w, const snapshot_t *s, finding_t *f)
{
    for (uint64_t t = 1; t < SCEN_MAX_TRAV && t <= w->seen.ntrav; t++) {
        const cv_template_t *tpl = w->seen.trav_tpl[t];
        for (size_t i = 0; tpl && i < tpl->nresources; i++) {
            const cv_tpl_resource_t *c = &tpl->resources[i];
            long ci = first_event(s, t, c->name, false, "IN_PROGRESS");
            for (size_t d = 0; ci >= 0 && d < c->ndepends; d++) {
                long pc = first_event(s, t, c->depends[d], false, "COMPLETE");
                if (pc > ci)
                    violation(f,
                              "traversal %llu: %s started (event %ld) before its parent %s "
                              "completed (event %ld)",
                              (unsigned long long)t, c->name, ci, c->depends[d], pc);
            }
        }
        for (size_t e = 0; e < w->edges.n; e++) {
            const char *child = w->edges.v[e].child, *parent = w->edges.v[e].parent;
            long pi = first_event(s, t, parent, true, "IN_PROGRESS");
            long cc = first_event(s, t, child, true, "COMPLETE");
            if (pi >= 0 && cc > pi)
                violation(f,
                          "traversal %llu: delete of %s started (event %ld) before its "
                          "dependent %s was deleted (event %ld)",
                          (unsigned long long)t, parent, pi, child, cc);
        }
    }
}

int scen_check(scen_world_t *w, char *errstr, size_t errstr_size)
{
    finding_t f = {errstr, errstr_size, false};
    errstr[0] = '\0';
    if (w->seen.violation[0])
        violation(&f, "%s", w->seen.violation);
    snapshot_t s = {0};
    snapshot_read(w, &s);
    bool deleted = strcmp(w->expect, "DELETE_COMPLETE") == 0;
    check_stack(w, &s, w->expect, deleted, &f);
    cv_template_t *tpl = NULL;
    if (!deleted) {
        json_t *root = json_loads(s.template_text, 0, NULL);
        char err[512];
        if (!root || cv_template_from_json(root, "template", NULL, &tpl, err, sizeof(err)) != 0)
            violation(&f, "the stored definition does not parse: %s", root ? err : "not JSON");
        json_decref(root);
        json_t *got = json_loads(s.template_text, 0, NULL);
        json_t *want = json_loads(w->expect_tpl, 0, NULL);
        if (!json_equal(json_object_get(got, "resources"), json_object_get(want, "resources")))
            violation(&f, "the stored definition is not the expected one (%.60s...)",
                      s.template_text);
        json_decref(got);
        json_decref(want);
    }
    check_records(&s, tpl, &f);
    check_ledger(&s, deleted, &f);
    /* Every job ended and every dead job's lease ran out: any lease left
     * was never released by a job that ended. */
    if (json_array_size(s.leases) > 0)
        violation(&f, "%zu leases still held after every job ended, e.g. %s",
                  json_array_size(s.leases), json_string_value(json_array_get(s.leases, 0)));
    check_order(w, &s, &f);
    if (!deleted && w->def->replaced && w->uuids_before) {
        const json_t *rec = json_object_get(s.records, w->def->replaced);
        const char *was = json_string_value(json_object_get(w->uuids_before, w->def->replaced));
        if (rec && was && strcmp(field(rec, "uuid"), was) == 0)
            violation(&f, "%s was not replaced (same version %s)", w->def->replaced, was);
    }
    if (!deleted && w->def->kept && w->uuids_before) {
        const char *replaced = w->def->replaced ? w->def->replaced : "";
        const char *name;
        json_t *uuid;
        json_object_foreach(w->uuids_before, name, uuid)
        {
            const json_t *r = json_object_get(s.records, name);
            if (r && strcmp(name, replaced) != 0 && strstr(w->def->kept, name) != NULL &&
                strcmp(field(r, "uuid"), json_string_value(uuid)) != 0)
                violation(&f, "%s got a new version, expected an update in place or none", name);
        }
    }
    cv_template_free(tpl);
    snapshot_free(&s);
    return f.found ? -1 : 0;
}
