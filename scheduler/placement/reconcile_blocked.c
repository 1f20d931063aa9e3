/*
 * reconcile_blocked — a service that every node it may run on has given
 * up on. A node whose restart policy gave up on the service's replicas is
 * blocklisted for it (reconcile_keep.c); once every eligible node is, an
 * index that waits for a node waits for nothing but the blocklist to
 * expire, which takes minutes and ends in the same failure. That is not a
 * wait for capacity: the plan says so in `blocked`, with the blocklist and
 * the reason each agent gave up (the start error), and the observer fails
 * the resource with it (docs/services.md "Life cycle").
 *
 * Eligible: a node usable now (known, alive, enabled) that the service's
 * placement constraint and, with no replica placed, its Mesos constraints
 * allow — the nodes its replicas could go on but for the blocklist. One
 * eligible node not blocklisted (even full) keeps the service waiting, and
 * so does a cluster with no eligible node at all (it waits for one).
 */
#include "reconcile_internal.h"

#include "cv_mesos.h"
#include "cv_pcexpr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How many nodes the description names before "and N more". */
#define BLOCKED_NODES_NAMED 8

void cv__rc_note_eligible(rc_ctx_t *x, const cv_cluster_t *c)
{
    bool constrained = c->priorities.placement >= 0;
    const json_t **usable = calloc(c->nnodes + 1, sizeof(*usable));
    size_t nusable = 0;
    for (size_t i = 0; usable && i < c->nnodes; i++) {
        rc_node_state_t st = cv__rc_node(x, c->nodes[i].name);
        if (st.known && st.alive && strcmp(st.admin, "enabled") == 0)
            usable[nusable++] = c->nodes[i].props;
    }
    for (size_t i = 0; usable && i < c->nnodes; i++) {
        const cv_node_t *node = &c->nodes[i];
        rc_node_state_t st = cv__rc_node(x, node->name);
        if (!st.known || !st.alive || strcmp(st.admin, "enabled") != 0)
            continue;
        cv_mesos_ctx_t alone = {node->props, NULL, 0, x->target, usable, nusable};
        if (constrained && x->s->placement && !cv_pcexpr_match(x->s->placement, node->props))
            continue;
        if (constrained && x->s->constraints && !cv_mconstraint_allows(x->s->constraints, &alone))
            continue;
        json_object_set_new(x->eligible, node->name, json_true());
    }
    free(usable);
}

static bool blocklisted(const rc_ctx_t *x, const char *node)
{
    return json_number_value(json_object_get(x->blocklist, node)) > x->now;
}

static bool every_eligible_blocklisted(const rc_ctx_t *x)
{
    const char *node;
    json_t *v;
    json_object_foreach(x->eligible, node, v)
    {
        if (!blocklisted(x, node))
            return false;
    }
    return json_object_size(x->eligible) > 0;
}

static const char *reason_on(const rc_ctx_t *x, const char *node)
{
    const char *why =
        json_string_value(json_object_get(json_object_get(x->gave_up, node), "reason"));
    return why && why[0] ? why : "no reason recorded";
}

/* "2024-05-01T10:20:03Z" */
static void utc_text(double unix_s, char *buf, size_t size)
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, size, "%.0f", unix_s);
}

/* "n1 until 2024-05-01T10:20:03Z, n2 until ..." (the first few). */
static size_t node_list(const rc_ctx_t *x, char *buf, size_t size)
{
    size_t len = 0, named = 0;
    const char *node;
    json_t *v;
    buf[0] = '\0';
    json_object_foreach(x->eligible, node, v)
    {
        char until[32];
        if (len >= size)
            break;
        if (named == BLOCKED_NODES_NAMED) {
            len += (size_t)snprintf(buf + len, size - len, ", and %zu more",
                                    json_object_size(x->eligible) - named);
            break;
        }
        utc_text(json_number_value(json_object_get(x->blocklist, node)), until, sizeof(until));
        len += (size_t)snprintf(buf + len, size - len, "%s%s until %s", named ? ", " : "", node,
                                until);
        named++;
    }
    return len;
}

/* The start errors: one when every node gave the same ("exec /x: No such
 * file or directory; ..."), else each node's ("on n1: ...; on n2: ..."). */
static void reasons(const rc_ctx_t *x, char *buf, size_t size)
{
    const char *first = NULL, *node;
    bool same = true;
    json_t *v;
    json_object_foreach(x->eligible, node, v)
    {
        const char *why = reason_on(x, node);
        same = same && (!first || strcmp(first, why) == 0);
        first = first ? first : why;
    }
    if (same) {
        snprintf(buf, size, "%s", first ? first : "");
        return;
    }
    size_t len = 0;
    buf[0] = '\0';
    json_object_foreach(x->eligible, node, v)
    {
        if (len >= size)
            break;
        len += (size_t)snprintf(buf + len, size - len, "%son %s: %s", len ? "; " : "", node,
                                reason_on(x, node));
    }
}

void cv__rc_blocked(rc_ctx_t *x)
{
    if (x->deleting || x->rejected || json_array_size(x->unplaced) == 0 ||
        !every_eligible_blocklisted(x))
        return;
    char nodes[1024], why[1536], text[3072];
    node_list(x, nodes, sizeof(nodes));
    reasons(x, why, sizeof(why));
    snprintf(text, sizeof(text),
             "every eligible node is blocklisted (%s): the restart policy gave up there: %s", nodes,
             why);
    json_t *each = json_object();
    const char *node;
    json_t *v;
    json_object_foreach(x->eligible, node, v)
    {
        json_object_set_new(each, node,
                            json_pack("{s:O, s:s}", "until", json_object_get(x->blocklist, node),
                                      "reason", reason_on(x, node)));
    }
    x->blocked = json_pack("{s:s, s:s, s:o}", "reason", "AllEligibleNodesBlocklisted",
                           "description", text, "nodes", each);
}
