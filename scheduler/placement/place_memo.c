/*
 * place_memo — what a placer remembers about placement constraints.
 *
 * A constraint is a function of a node's properties, and a large cluster
 * has far fewer distinct property sets than nodes (a few node types, a few
 * zones): nodes are grouped into classes of equal properties, NodeName
 * aside, and a constraint is evaluated once per class. Each constraint the
 * placer meets gets an entry: the up nodes it admits (the sampler draws
 * from them), their properties (the Mesos constraints' eligible nodes) and
 * its strict spread set. A constraint that names NodeName is evaluated per
 * node: there the class would not hold.
 */
#include "place_internal.h"

#include "cv_base.h"
#include "cv_pcexpr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- classes */

typedef struct class_slot {
    char *key; /* the properties, NodeName removed, as sorted compact JSON */
    uint32_t id;
} class_slot_t;

static uint64_t text_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
    return h;
}

/* A tag and a number: "s12:", "i-5". */
static void put_number(cv_buf_t *b, char tag, long long v, bool colon)
{
    char text[32], *end = text + sizeof(text), *at = end;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    if (colon)
        *--at = ':';
    do
        *--at = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *--at = '-';
    *--at = tag;
    cv_buf_add(b, at, (size_t)(end - at));
}

/* One value as typed text: a tag, and the length before any text. */
static void put_value(cv_buf_t *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        put_number(b, 's', (long long)json_string_length(v), true);
        cv_buf_add(b, json_string_value(v), json_string_length(v));
        return;
    case JSON_INTEGER:
        put_number(b, 'i', (long long)json_integer_value(v), false);
        return;
    case JSON_REAL:
        cv_buf_printf(b, "r%.17g", json_real_value(v));
        return;
    case JSON_TRUE:
        cv_buf_putc(b, 't');
        return;
    case JSON_FALSE:
        cv_buf_putc(b, 'f');
        return;
    case JSON_NULL:
        cv_buf_putc(b, 'n');
        return;
    default: {
        char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        if (!text) {
            b->failed = true; /* out of memory all the same */
            return;
        }
        size_t len = strlen(text);
        put_number(b, 'j', (long long)len, true);
        cv_buf_add(b, text, len);
        free(text);
        return;
    }
    }
}

/* The properties but NodeName, in the object's own order, every text
 * prefixed by its length: equal keys mean equal properties. Equal
 * properties written in another order only make one class more, which
 * costs an evaluation, never a wrong answer. NULL when out of memory. */
static char *class_key(const json_t *props)
{
    cv_buf_t b = {0};
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)props, key, value)
    {
        if (strcmp(key, "NodeName") == 0)
            continue;
        size_t klen = strlen(key);
        put_number(&b, 'k', (long long)klen, true);
        cv_buf_add(&b, key, klen);
        put_value(&b, value);
    }
    return cv_buf_take(&b);
}

/* The class of one node: the slot of an equal key, or a new one. */
static int class_of(class_slot_t *slots, size_t mask, char *key, size_t *nclasses, uint32_t *id)
{
    size_t i = text_hash(key) & mask;
    while (slots[i].key && strcmp(slots[i].key, key) != 0)
        i = (i + 1) & mask;
    if (slots[i].key) {
        free(key);
        *id = slots[i].id;
        return 0;
    }
    slots[i] = (class_slot_t){key, (uint32_t)*nclasses};
    *id = (uint32_t)(*nclasses)++;
    return 0;
}

int cv__place_classes(cv_placer_t *p)
{
    const cv_cluster_t *c = p->c;
    size_t size = 16;
    while (size < 2 * c->nnodes + 2)
        size *= 2;
    class_slot_t *slots = calloc(size, sizeof(*slots));
    p->node_class = malloc((c->nnodes + 1) * sizeof(uint32_t));
    int rc = slots && p->node_class ? 0 : CV_ENOMEM;
    p->nclasses = 0;
    for (size_t n = 0; rc == 0 && n < c->nnodes; n++) {
        char *key = class_key(c->nodes[n].props);
        rc = key ? class_of(slots, size - 1, key, &p->nclasses, &p->node_class[n]) : CV_ENOMEM;
    }
    for (size_t i = 0; slots && i < size; i++)
        free(slots[i].key);
    free(slots);
    if (rc) {
        free(p->node_class);
        p->node_class = NULL;
    }
    return rc;
}

/* ---------------------------------------------------------------- entries */

void cv__place_entry_free(pl_entry_t *e)
{
    free(e->text);
    free(e->nodes);
    free(e->eligible);
    if (e->inv) {
        cv__place_spread_free(e->inv);
        free(e->inv);
    }
    memset(e, 0, sizeof(*e));
}

/* Whether node `n` satisfies `s`'s constraint, through the class memo
 * (`verdict`: one per class, -1 unknown) when there is one. */
static bool admits(const cv_placer_t *p, const cv_service_t *s, int8_t *verdict, size_t n)
{
    const json_t *props = p->c->nodes[n].props;
    if (!verdict)
        return cv_pcexpr_match(s->placement, props);
    int8_t *v = &verdict[p->node_class[n]];
    if (*v < 0)
        *v = cv_pcexpr_match(s->placement, props);
    return *v == 1;
}

static int entry_build(cv_placer_t *p, pl_entry_t *e, const cv_service_t *s)
{
    const cv_cluster_t *c = p->c;
    bool by_class = s && !p->oneshot && !strstr(s->placement_text, "NodeName");
    if (by_class && !p->node_class && cv__place_classes(p))
        return CV_ENOMEM;
    int8_t *verdict = by_class ? malloc(p->nclasses + 1) : NULL;
    e->text = s ? strdup(s->placement_text) : NULL;
    e->nodes = malloc((c->nnodes + 1) * sizeof(uint32_t));
    e->eligible = malloc((c->nnodes + 1) * sizeof(*e->eligible));
    e->inv = calloc(1, sizeof(*e->inv));
    if ((by_class && !verdict) || (s && !e->text) || !e->nodes || !e->eligible || !e->inv ||
        cv__place_spread_init(e->inv, &p->ix)) {
        free(verdict);
        return CV_ENOMEM;
    }
    if (verdict)
        memset(verdict, -1, p->nclasses + 1);
    for (size_t n = 0; n < c->nnodes; n++) {
        if (s && !admits(p, s, verdict, n))
            continue;
        cv__place_spread_add_node(e->inv, &p->ix, n);
        if (c->nodes[n].status != CV_NODE_UP)
            continue;
        e->eligible[e->nnodes] = c->nodes[n].props;
        e->nodes[e->nnodes++] = (uint32_t)n;
    }
    cv__place_spread_count(e->inv, &p->ix);
    free(verdict);
    return 0;
}

const pl_entry_t *cv__place_entry(cv_placer_t *p, const cv_service_t *s)
{
    bool constrained = s && s->placement && cv__place_step_priority(p->c, PL_PLACEMENT) != PL_OFF &&
                       s->placement_text;
    if (!constrained) {
        if (!p->all.nodes && entry_build(p, &p->all, NULL)) {
            cv__place_entry_free(&p->all);
            return NULL;
        }
        return &p->all;
    }
    for (size_t i = 0; i < p->nmemo; i++)
        if (strcmp(p->memo[i].text, s->placement_text) == 0)
            return &p->memo[i];
    if (p->nmemo == PL_MEMO_MAX) {
        for (size_t i = 0; i < p->nmemo; i++)
            cv__place_entry_free(&p->memo[i]);
        p->nmemo = 0;
    }
    pl_entry_t *e = &p->memo[p->nmemo];
    if (entry_build(p, e, s)) {
        cv__place_entry_free(e);
        return NULL;
    }
    p->nmemo++;
    return e;
}
