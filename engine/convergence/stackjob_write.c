/*
 * The drafts of a STACK job's expansion (cv__stackjob.h): each resource's
 * definition, with what the environment's registry says about it, and
 * each graph node's entry, with the hooks that stop its action.
 */
#include "cv__stackjob.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_expand.h"
#include "cv_hot.h"
#include "cv_traversal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HSET_BATCH 500
#define DRAFT_TTL_S "3600" /* drafts of an expansion that died are dropped */

/* HSET key f1 v1 f2 v2 ... in batches of HSET_BATCH fields. */
typedef struct hset_batch {
    const char *argv[2 + 2 * HSET_BATCH];
    char *owned[HSET_BATCH];
    int argc, nowned;
    const char *key;
    int rc;
} hset_batch_t;

static void batch_flush(cv_flow_buf_t *b, hset_batch_t *h)
{
    if (h->argc > 2) {
        const char *expire[] = {"EXPIRE", h->key, DRAFT_TTL_S};
        h->rc |= cv__flow_argv(b, false, h->argc, h->argv);
        h->rc |= cv__flow_argv(b, false, 3, expire);
    }
    for (int i = 0; i < h->nowned; i++)
        free(h->owned[i]);
    h->argc = 2;
    h->nowned = 0;
}

/* Field `field` (kept by the caller) with `value` (taken). */
static void batch_add(cv_flow_buf_t *b, hset_batch_t *h, const char *field, char *value)
{
    if (!value) {
        h->rc = CV_ENOMEM;
        return;
    }
    h->owned[h->nowned++] = value;
    h->argv[h->argc++] = field;
    h->argv[h->argc++] = value;
    if (h->argc == 2 + 2 * HSET_BATCH)
        batch_flush(b, h);
}

/* Starts an HSET of draft `key`, emptied first: a retry after a transient
 * failure writes it again from scratch. */
static void batch_start(cv_flow_buf_t *b, hset_batch_t *h, const char *key)
{
    const char *del[] = {"DEL", key};
    h->rc |= cv__flow_argv(b, false, 2, del);
    h->argv[0] = "HSET";
    h->argv[1] = key;
    h->key = key;
    h->argc = 2;
    h->nowned = 0;
}

/* ---- the definitions ---- */

/* A group's member type as the registry maps it, written into the
 * resource_def of its properties (which the definition shares), so that
 * the group knows its members' template (their attributes) as it knows a
 * member type given as a file. */
static void map_member_type(const json_t *registry, json_t *props)
{
    json_t *member = json_object_get(props, "resource_def");
    const char *type = json_string_value(json_object_get(member, "type"));
    char mapped[512];
    if (!type)
        return;
    cv_env_resolve_type(registry, type, NULL, mapped, sizeof(mapped), NULL);
    if (strcmp(mapped, type) != 0)
        json_object_set_new(member, "type", json_string(mapped));
}

/* What the environment's registry says about a resource travels in its
 * definition, so that its CHECK jobs need nothing else: the actions an
 * update may not take and, for a resource that is a stack of its own, the
 * environment of that stack (Heat's child environment). */
static void add_environment(const cv_stackjob_t *x, const cv_tpl_resource_t *res, json_t *d)
{
    const json_t *registry = json_object_get(x->env, "resource_registry");
    unsigned restricted = cv_env_restricted_actions(registry, res->name);
    if (restricted)
        json_object_set_new(d, "restricted_actions",
                            json_pack("{s:b, s:b}", "update", restricted & CV_ENV_RESTRICT_UPDATE,
                                      "replace", restricted & CV_ENV_RESTRICT_REPLACE));
    const cv_rtype_t *t = cv_rtype_lookup(res->type);
    if (!t || !t->nested || json_object_size(x->env) == 0)
        return;
    if (strcmp(res->type, "OS::Heat::ResourceGroup") == 0)
        map_member_type(registry, res->properties);
    char mapped[512];
    json_t *via = NULL;
    const json_t *declared =
        json_object_get(json_object_get(json_object_get(x->tree, "resources"), res->name), "type");
    if (json_is_string(declared))
        cv_env_resolve_type(registry, json_string_value(declared), res->name, mapped,
                            sizeof(mapped), &via);
    json_object_set_new(d, "env", cv_env_child(x->env, res->name, via));
    json_decref(via);
}

static void write_definitions(cv_stackjob_t *x, hset_batch_t *h)
{
    batch_start(&x->buf, h, x->draft[CV_STACKJOB_RDEF]);
    /* A delete wants nothing: no resource has a definition in it. */
    size_t n = x->msg.kind == CV_TRAV_DELETE ? 0 : x->tpl->nresources;
    for (size_t i = 0; i < n; i++) {
        json_t *d = cv_expand_rdef(&x->tpl->resources[i]);
        add_environment(x, &x->tpl->resources[i], d);
        batch_add(&x->buf, h, x->tpl->resources[i].name, json_dumps(d, JSON_COMPACT));
        json_decref(d);
    }
    batch_flush(&x->buf, h);
}

/* ---- the graph ---- */

/* The hooks that stop a node's action (checkjob_hooks.c) travel in its
 * graph entry ("h"): a delete traversal has no definitions to carry them. */
static char *graph_entry(const cv_stackjob_t *x, int i)
{
    char *text = cv_traversal_entry(x->graph, i);
    const char *node = cv_graph_name(x->graph, i);
    const json_t *registry = json_object_get(x->env, "resource_registry");
    unsigned hooks = text && strlen(node) > 2 ? cv_env_hooks(registry, node + 2) : 0;
    hooks &=
        node[0] == 'c' ? CV_ENV_HOOK_PRE_DELETE : CV_ENV_HOOK_PRE_CREATE | CV_ENV_HOOK_PRE_UPDATE;
    if (!hooks)
        return text;
    json_t *entry = json_loads(text, 0, NULL);
    json_object_set_new(entry, "h", json_integer(hooks));
    char *with = entry ? json_dumps(entry, JSON_COMPACT) : NULL;
    json_decref(entry);
    if (!with)
        return text;
    free(text);
    return with;
}

static void write_graph(cv_stackjob_t *x, hset_batch_t *h)
{
    batch_start(&x->buf, h, x->draft[CV_STACKJOB_GRAPH]);
    size_t n = cv_graph_count(x->graph);
    for (size_t i = 0; i < n; i++)
        batch_add(&x->buf, h, cv_graph_name(x->graph, (int)i), graph_entry(x, (int)i));
    batch_flush(&x->buf, h);
}

int cv__stackjob_write_drafts(cv_stackjob_t *x)
{
    hset_batch_t *h = calloc(1, sizeof(*h));
    if (!h)
        return CV_ENOMEM;
    write_definitions(x, h);
    write_graph(x, h);
    int rc = h->rc ? CV_ENOMEM : 0;
    free(h);
    return rc;
}
