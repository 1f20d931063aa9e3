/*
 * The in-memory bus that replaces Kafka: a multiset of encoded messages.
 *
 * Messages go through the real codecs (cv_msg_encode on publish,
 * cv_msg_decode on delivery), so a field the codec drops is a field the
 * harness loses too. Which message is delivered next, whether a delivery
 * leaves a copy behind (duplicate) and whether a message is lost are the
 * driver's choices (scenario_runner.c); the bus only holds them. A message
 * being handled is in flight: not deliverable until its job ends (removed)
 * or dies (deliverable again: at-least-once).
 */
#include "scen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scen_trace(scen_world_t *w, const char *fmt, ...)
{
    if (!w->trace)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("  [%5llu] ", (unsigned long long)w->step);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
}

static const char *describe(const cv_msg_t *m, char *buf, size_t size)
{
    unsigned long long t = (unsigned long long)m->traversal;
    char phase = m->phase == CV_PHASE_CLEANUP ? 'c' : 'u';
    if (m->type == CV_MSG_STACK)
        snprintf(buf, size, "STACK t%llu %s", t, cv_trav_kind_name(m->kind));
    else if (m->type == CV_MSG_OBSERVE)
        snprintf(buf, size, "OBSERVE t%llu %c/%s v%llu", t, phase, m->resource,
                 (unsigned long long)m->version);
    else
        snprintf(buf, size, "%s t%llu %c/%s", cv_msg_type_name(m->type), t, phase, m->resource);
    return buf;
}

const char *scen_msg_describe(const scen_msg_t *sm, char *buf, size_t size)
{
    cv_msg_t m;
    char err[128];
    if (cv_msg_decode(sm->bytes, sm->len, &m, err, sizeof(err)) != 0) {
        snprintf(buf, size, "undecodable (%s)", err);
        return buf;
    }
    return describe(&m, buf, size);
}

/* Appends a message (the bytes are the bus's from now on). */
static void append(scen_world_t *w, char *bytes, size_t len, bool observe)
{
    if (w->nmsgs == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->msgs = realloc(w->msgs, w->cap * sizeof(*w->msgs));
        if (!w->msgs)
            abort();
    }
    scen_msg_t *sm = &w->msgs[w->nmsgs++];
    sm->bytes = bytes;
    sm->len = len;
    sm->observe = observe;
    sm->inflight = false;
    sm->id = ++w->next_msg_id;
}

static void publish_one(scen_world_t *w, const cv_msg_t *m, bool observe)
{
    char *bytes = NULL;
    size_t len = 0;
    if (cv_msg_encode(m, &bytes, &len) != 0) {
        fprintf(stderr, "scenario_runner: cv_msg_encode failed\n");
        abort();
    }
    append(w, bytes, len, observe);
    char d[CV_NAME_MAX + 64];
    scen_trace(w, "publish %s", describe(m, d, sizeof(d)));
}

/* A CHECK message of several nodes (cv_msg_t.nodes, as the workers batch
 * them) goes on the bus as one message per node: a job of the harness is
 * one node's, and losses and duplicates then strike each node alone. */
void scen_bus_publish(scen_world_t *w, const cv_msg_t *m, bool observe)
{
    cv_msg_t one;
    if (m->type != CV_MSG_CHECK || m->nodes_len == 0) {
        publish_one(w, m, observe);
        return;
    }
    for (size_t pos = 0; cv_msg_next_node(m, &pos, &one);)
        publish_one(w, &one, observe);
}

size_t scen_bus_find(const scen_world_t *w, uint64_t id)
{
    for (size_t i = 0; i < w->nmsgs; i++)
        if (w->msgs[i].id == id)
            return i;
    return (size_t)-1;
}

void scen_bus_remove(scen_world_t *w, uint64_t id)
{
    size_t i = scen_bus_find(w, id);
    if (i == (size_t)-1)
        return;
    free(w->msgs[i].bytes);
    w->msgs[i] = w->msgs[--w->nmsgs];
}

void scen_bus_copy(scen_world_t *w, uint64_t id)
{
    size_t i = scen_bus_find(w, id);
    if (i == (size_t)-1)
        return;
    size_t len = w->msgs[i].len;
    char *bytes = malloc(len);
    if (!bytes)
        abort();
    memcpy(bytes, w->msgs[i].bytes, len);
    append(w, bytes, len, w->msgs[i].observe);
}

size_t scen_bus_deliverable(const scen_world_t *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->nmsgs; i++)
        n += !w->msgs[i].inflight;
    return n;
}

/* The k-th deliverable message's index. */
size_t scen_bus_nth_deliverable(const scen_world_t *w, size_t k)
{
    for (size_t i = 0; i < w->nmsgs; i++)
        if (!w->msgs[i].inflight && k-- == 0)
            return i;
    return (size_t)-1;
}

void scen_bus_clear(scen_world_t *w)
{
    for (size_t i = 0; i < w->nmsgs; i++)
        free(w->msgs[i].bytes);
    w->nmsgs = 0;
}
