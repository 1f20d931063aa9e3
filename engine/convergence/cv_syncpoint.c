/*
 * cv_syncpoint — when a graph node's job is published, and an in-memory
 * sync point with the Redis one's set semantics.
 */
#include "cv_syncpoint.h"

#include "cv_base.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * The add that completes the set publishes: with exact predecessor sets that
 * is the add taking `satisfied` to `required`, and a later add (a name the
 * node does not wait for) never publishes a second time. A redelivery
 * publishes again whenever the set is complete, because the delivery that
 * completed it may have died before publishing; the duplicate job that can
 * result is harmless. A successor already done never gets its job again:
 * that bounds the duplicates a redelivery makes to the frontier of the
 * traversal instead of cascading through everything done after it.
 */
bool cv_sp_should_publish(const cv_sp_answer_t *ans, bool redelivery)
{
    if (ans->satisfied < ans->required || ans->node_done)
        return false;
    if (redelivery)
        return true;
    return ans->added && ans->satisfied - 1 < ans->required;
}

/* ---------------------------------------------------------------- the in-memory set */

typedef struct sp_entry {
    char *pred;
    char *data;
} sp_entry_t;

/* Entries in arrival order, indexed by an open-addressing table of entry
 * numbers: a node of a 100k-member group has 100k predecessors. */
struct cv_syncpoint {
    size_t required;
    sp_entry_t *entries;
    size_t n, cap;
    size_t *slots; /* entry index + 1; 0 is empty */
    size_t nslots;
};

cv_syncpoint_t *cv_sp_new(size_t required)
{
    cv_syncpoint_t *sp = calloc(1, sizeof(*sp));
    if (sp)
        sp->required = required;
    return sp;
}

void cv_sp_free(cv_syncpoint_t *sp)
{
    if (!sp)
        return;
    for (size_t i = 0; i < sp->n; i++) {
        free(sp->entries[i].pred);
        free(sp->entries[i].data);
    }
    free(sp->entries);
    free(sp->slots);
    free(sp);
}

/* The slot holding `pred`, or the empty slot where it belongs. */
static size_t find_slot(const cv_syncpoint_t *sp, const char *pred)
{
    size_t mask = sp->nslots - 1;
    size_t i = (size_t)cv_hash_str(pred) & mask;
    while (sp->slots[i] && strcmp(sp->entries[sp->slots[i] - 1].pred, pred) != 0)
        i = (i + 1) & mask;
    return i;
}

/* Keeps the table at most half full, and room for one more entry. */
static int reserve(cv_syncpoint_t *sp)
{
    if (sp->n == sp->cap) {
        size_t cap = sp->cap ? sp->cap * 2 : 4;
        sp_entry_t *entries = realloc(sp->entries, cap * sizeof(*entries));
        if (!entries)
            return CV_ENOMEM;
        sp->entries = entries;
        sp->cap = cap;
    }
    if (2 * (sp->n + 1) <= sp->nslots)
        return 0;
    size_t nslots = sp->nslots ? sp->nslots * 2 : 8;
    size_t *old = sp->slots, old_n = sp->nslots;
    sp->slots = calloc(nslots, sizeof(*sp->slots));
    if (!sp->slots) {
        sp->slots = old;
        return CV_ENOMEM;
    }
    sp->nslots = nslots;
    for (size_t i = 0; i < old_n; i++)
        if (old[i])
            sp->slots[find_slot(sp, sp->entries[old[i] - 1].pred)] = old[i];
    free(old);
    return 0;
}

int cv_sp_satisfy(cv_syncpoint_t *sp, const char *pred, const char *data, cv_sp_answer_t *ans)
{
    int rc = reserve(sp);
    if (rc != 0)
        return rc;
    size_t slot = find_slot(sp, pred);
    bool added = sp->slots[slot] == 0;
    if (added) {
        char *p = strdup(pred), *d = strdup(data ? data : "");
        if (!p || !d) {
            free(p);
            free(d);
            return CV_ENOMEM;
        }
        sp->entries[sp->n].pred = p;
        sp->entries[sp->n].data = d;
        sp->slots[slot] = ++sp->n;
    }
    ans->required = sp->required;
    ans->satisfied = sp->n;
    ans->added = added;
    ans->node_done = false; /* a set alone does not know; the caller may say */
    return 0;
}

const char *cv_sp_data(const cv_syncpoint_t *sp, const char *pred)
{
    if (sp->nslots == 0)
        return NULL;
    size_t slot = find_slot(sp, pred);
    return sp->slots[slot] ? sp->entries[sp->slots[slot] - 1].data : NULL;
}

/* A node without predecessors (required == 0) is complete at once. */
bool cv_sp_complete(const cv_syncpoint_t *sp)
{
    return sp->n >= sp->required;
}
