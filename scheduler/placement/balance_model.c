/*
 * balance_model — the model of one pass, built from the live model
 * (cv_reconcile.h's, with services.<svc>.loads): the cluster as the
 * reconcile loads it (cv__rc_manifest, so nodes mean what they mean to
 * placement: capacities from the description or its node type, status
 * from the heartbeat and admin state), every placed replica with its
 * effective load per metric, the services with their placement
 * constraints, domains and move cost, and which services are related.
 *
 * A replica's load for a metric is, first found: the load reported for it
 * (services.<svc>.loads[index]), its agent's report "load", the spec's
 * declared primaryLoad (secondaryLoad for a secondary). A node's load is
 * the sum over every replica it runs, the old replica of a move under way
 * included.
 */
#include "balance_internal.h"

#include "cv_base.h"
#include "cv_pcexpr.h"
#include "reconcile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- small helpers */

static int metric_index(bl_model_t *m, const char *name, bool add)
{
    for (size_t i = 0; i < m->nmetrics; i++)
        if (strcmp(m->metric[i], name) == 0)
            return (int)i;
    if (!add || m->nmetrics == CV_MAX_METRICS || !name[0] || strlen(name) >= CV_METRIC_NAME_MAX)
        return BL_NONE;
    snprintf(m->metric[m->nmetrics], CV_METRIC_NAME_MAX, "%s", name);
    return (int)m->nmetrics++;
}

static int type_index(bl_model_t *m, const char *type)
{
    for (size_t i = 0; type && i < m->ntypes; i++)
        if (strcmp(m->types[i], type) == 0)
            return (int)i;
    return BL_NONE;
}

static void node_drop(bl_node_t *n, int r)
{
    for (size_t i = 0; i < n->reps.n; i++)
        if (n->reps.v[i] == r) {
            n->reps.v[i] = n->reps.v[--n->reps.n];
            return;
        }
}

/* ---------------------------------------------------------------- the cluster */

static int load_cluster(bl_model_t *m, char *errstr, size_t errstr_size)
{
    rc_ctx_t x;
    memset(&x, 0, sizeof(x));
    x.model = m->model;
    x.svc = ""; /* no service's own loads are left out */
    x.nodes = json_object_get(m->model, "nodes");
    x.now = m->now;
    if (json_object_size(x.nodes) == 0)
        return 0;
    json_t *manifest = cv__rc_manifest(&x);
    int rc = cv_cluster_load(manifest, "cluster", &m->c, errstr, errstr_size);
    json_decref(manifest);
    return rc;
}

/* Dense ids for every FD prefix at every level, then every UD. */
static void index_domains(bl_model_t *m)
{
    size_t depth = 0;
    for (size_t i = 0; i < m->nnodes; i++)
        if (m->nodes[i].cn->fd_depth > depth)
            depth = m->nodes[i].cn->fd_depth;
    m->ndomlevels = depth + 1;
    json_t *ids = json_object();
    for (size_t i = 0; i < m->nnodes; i++) {
        const cv_node_t *cn = m->nodes[i].cn;
        m->nodes[i].dom = calloc(m->ndomlevels, sizeof(int));
        char key[1024] = "";
        for (size_t l = 0; l < m->ndomlevels; l++) {
            size_t len = strlen(key);
            if (l == depth)
                snprintf(key, sizeof(key), "ud\t%s", cn->upgrade_domain ? cn->upgrade_domain : "");
            else if (l < cn->fd_depth) /* a shorter path keeps its deepest domain below */
                snprintf(key + len, sizeof(key) - len, "/%s", cn->fd_path[l]);
            char lk[1100];
            snprintf(lk, sizeof(lk), "%zu\t%s", l, key);
            json_t *id = json_object_get(ids, lk);
            if (!id) {
                id = json_integer((json_int_t)json_object_size(ids));
                json_object_set_new(ids, lk, id);
                cv_vec_push(&m->domlevel, (int)l);
            }
            m->nodes[i].dom[l] = (int)json_integer_value(id);
        }
    }
    m->ndomains = json_object_size(ids);
    json_decref(ids);
    m->levdom = calloc(m->ndomains + 1, sizeof(int));
    m->levstart = calloc(m->ndomlevels + 1, sizeof(size_t));
    size_t at = 0;
    for (size_t l = 0; l < m->ndomlevels; l++) {
        m->levstart[l] = at;
        for (size_t d = 0; d < m->ndomains; d++)
            if ((size_t)m->domlevel.v[d] == l)
                m->levdom[at++] = (int)d;
    }
    m->levstart[m->ndomlevels] = at;
}

static void build_nodes(bl_model_t *m)
{
    const cv_cluster_t *c = m->c;
    m->nnodes = c ? c->nnodes : 0;
    m->nodes = calloc(m->nnodes + 1, sizeof(*m->nodes));
    m->types = calloc(m->nnodes + 1, sizeof(*m->types));
    for (size_t i = 0; i < m->nnodes; i++) {
        bl_node_t *n = &m->nodes[i];
        n->cn = &c->nodes[i];
        if (n->cn->type && type_index(m, n->cn->type) == BL_NONE)
            m->types[m->ntypes++] = n->cn->type;
        n->type = type_index(m, n->cn->type);
        n->up = n->cn->status == CV_NODE_UP;
        n->alive = n->cn->status != CV_NODE_DOWN;
        for (size_t k = 0; k < CV_MAX_METRICS; k++) {
            int64_t cap = k < c->nmetrics ? n->cn->capacity[k] : -1;
            double over = k < c->nmetrics ? c->metrics[k].overbook : 0;
            double buf = k < c->nmetrics ? c->metrics[k].buffer : 0;
            n->declared[k] = k < c->nmetrics ? (double)n->cn->load[k] : 0;
            n->total[k] = cap < 0 || over < 0 ? -1 : (double)cap * (1 + over);
            n->nonbuf[k] = cap < 0 ? -1 : (double)cap * (1 - buf);
        }
    }
    for (size_t k = 0; c && k < c->nmetrics; k++)
        metric_index(m, c->metrics[k].name, true);
    index_domains(m);
}

/* ---------------------------------------------------------------- services */

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* The move cost named `name` (Low when unknown), its canonical name into
 * *canon: a static string, since the spec it was read from does not outlive
 * the model. */
static double cost_of(const char *name, const char **canon)
{
    static const struct {
        const char *name;
        double cost;
    } costs[] = {{"Zero", BL_COST_ZERO},
                 {"Low", BL_COST_LOW},
                 {"Medium", BL_COST_MEDIUM},
                 {"High", BL_COST_HIGH}};
    for (size_t i = 0; name && i < sizeof(costs) / sizeof(costs[0]); i++)
        if (strcasecmp(name, costs[i].name) == 0) {
            *canon = costs[i].name;
            return costs[i].cost;
        }
    *canon = "Low";
    return BL_COST_LOW;
}

static bool rollout_running(const json_t *rollout)
{
    const char *st = str(rollout, "state");
    return st && (strcmp(st, "rolling") == 0 || strcmp(st, "paused") == 0 ||
                  strcmp(st, "rolling_back") == 0);
}

/* The placement constraint's nodes (and the domains holding one up),
 * shared by every service of the same constraint text. */
static int feasibility(bl_model_t *m, const cv_service_t *s)
{
    const char *text = s->placement && m->c->priorities.placement >= 0 ? s->placement_text : "";
    json_t *have = json_object_get(m->feas_cache, text);
    if (have)
        return (int)json_integer_value(have);
    uint8_t *f = calloc(m->nnodes + m->ndomains + 1, 1);
    if (!f || cv_vec_push(&m->feas_list, f) != 0) {
        free(f); /* out of memory: the service is never moved */
        return BL_NONE;
    }
    for (size_t i = 0; i < m->nnodes; i++) {
        f[i] = !text[0] || cv_pcexpr_match(s->placement, m->nodes[i].cn->props);
        for (size_t l = 0; f[i] && m->nodes[i].up && l < m->ndomlevels; l++)
            f[m->nnodes + (size_t)m->nodes[i].dom[l]] = 1;
    }
    json_object_set_new(m->feas_cache, text, json_integer((json_int_t)m->feas_list.n - 1));
    return (int)m->feas_list.n - 1;
}

static double num(const json_t *v, bool *ok)
{
    double d = 0;
    *ok = json_is_number(v);
    if (*ok)
        d = json_number_value(v);
    else if (json_is_string(v)) {
        char *end;
        d = strtod(json_string_value(v), &end);
        *ok = end != json_string_value(v) && !*end;
    }
    *ok = *ok && d >= 0;
    return d;
}

/* The loads of one layer (metric -> number) where no earlier layer set one. */
static void layer(bl_model_t *m, bl_service_t *sv, bl_replica_t *r, bool *set, const json_t *loads)
{
    const char *metric;
    const json_t *v;
    json_object_foreach((json_t *)loads, metric, v)
    {
        bool ok;
        double d = num(v, &ok);
        int k = strcmp(metric, "time") == 0 ? BL_NONE : metric_index(m, metric, true);
        if (!ok || k == BL_NONE || set[k])
            continue;
        set[k] = true;
        r->load[k] = d;
        sv->metric[k] = true;
        m->used[k] = true;
    }
}

static void replica_loads(bl_model_t *m, bl_service_t *sv, const json_t *spec, bl_replica_t *r,
                          const json_t *reported, const char *rid)
{
    bool set[CV_MAX_METRICS] = {false};
    char key[16];
    snprintf(key, sizeof(key), "%d", r->index);
    json_t *own = cv__rc_json(json_object_get(reported, key)); /* a hash field: JSON text */
    layer(m, sv, r, set, own);
    json_decref(own);
    const json_t *node =
        json_object_get(json_object_get(m->model, "nodes"), m->nodes[r->node].cn->name);
    json_t *report = cv__rc_json(json_object_get(json_object_get(node, "report"), rid ? rid : ""));
    layer(m, sv, r, set, json_object_get(report, "load"));
    json_decref(report);
    json_t *declared = json_object();
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(spec, "metrics"), i, e)
    {
        const char *name = str(e, "name");
        const json_t *v = json_object_get(e, r->secondary ? "secondaryLoad" : "primaryLoad");
        if (r->secondary && !v)
            v = json_object_get(e, "primaryLoad");
        if (name && v)
            json_object_set(declared, name, (json_t *)v);
    }
    layer(m, sv, r, set, declared);
    const char *metric;
    const json_t *v;
    json_object_foreach(declared, metric, v)
    {
        int k = metric_index(m, metric, false);
        bool ok;
        double d = num(v, &ok);
        if (k != BL_NONE && ok)
            r->declared[k] = d;
    }
    json_decref(declared);
}

static int add_replica(bl_model_t *m, int s, const json_t *spec, const json_t *entry,
                       const json_t *reported, bool movable, bool secondary)
{
    long node = cv_cluster_node(m->c, str(entry, "node") ? str(entry, "node") : "");
    if (node < 0)
        return BL_NONE;
    bl_replica_t *r = cv_vec_add(&m->reps);
    if (!r)
        return BL_NONE;
    r->svc = s;
    r->index = (int)json_integer_value(json_object_get(entry, "index"));
    r->node = (int)node;
    r->secondary = secondary;
    r->movable = movable;
    replica_loads(m, &m->svcs[s], spec, r, reported, str(entry, "rid"));
    for (size_t k = 0; k < m->nmetrics; k++)
        m->nodes[node].load[k] += r->load[k];
    cv_vec_push(&m->nodes[node].reps, (int)m->reps.n - 1);
    return (int)m->reps.n - 1;
}

static void load_service(bl_model_t *m, bl_service_t *sv, const json_t *rec)
{
    char err[512];
    const json_t *spec = json_object_get(rec, "spec");
    const json_t *n = json_object_get(spec, "replicas");
    int target = json_is_integer(n) ? (int)json_integer_value(n) : 1;
    const char *name = str(rec, "resource") ? str(rec, "resource") : sv->id;
    json_t *desc = cv_reconcile_service_desc(spec, name, target);
    if (json_is_object(spec) && target > 0 &&
        cv_service_load(desc, "spec", &sv->s, err, sizeof(err)) == 0)
        sv->s->replicas = target;
    json_decref(desc);
    sv->cost = cost_of(str(spec, "moveCost"), &sv->cost_name);
    const char *state = str(rec, "state");
    const json_t *rollout = json_object_get(rec, "rollout");
    sv->movable = sv->s && !(state && strcmp(state, "deleting") == 0) &&
                  !rollout_running(rollout) && !sv->s->affinity_service;
    if (rollout_running(rollout) && json_is_true(json_object_get(rollout, "by_upgrade_domain")))
        m->upgrade = true;
}

/* The record's JSON-holding strings parsed. */
static json_t *record(const json_t *v)
{
    static const char *const fields[] = {"spec", "placement", "moves", "rollout", "loads", NULL};
    json_t *rec = cv__rc_json(v);
    if (!json_is_object(rec)) {
        json_decref(rec);
        return NULL;
    }
    json_t *copy = json_copy(rec);
    json_decref(rec);
    for (size_t i = 0; fields[i]; i++) {
        json_t *f = json_object_get(copy, fields[i]);
        if (json_is_string(f))
            json_object_set_new(copy, fields[i], cv__rc_json(f));
    }
    return copy;
}

static void add_service(bl_model_t *m, const char *id, const json_t *rec, json_t *parents)
{
    int s = (int)m->nsvcs++;
    bl_service_t *sv = &m->svcs[s];
    sv->id = id;
    load_service(m, sv, rec);
    if (sv->s && sv->s->affinity_service) {
        char key[512];
        snprintf(key, sizeof(key), "%s\t%s", str(rec, "stack") ? str(rec, "stack") : "",
                 sv->s->affinity_service);
        json_object_set_new(parents, key, json_true());
    }
    const json_t *moves = json_object_get(rec, "moves");
    const json_t *reported = json_object_get(rec, "loads");
    const json_t *spec = json_object_get(rec, "spec");
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(rec, "placement"), i, e)
    {
        char key[16];
        int index = (int)json_integer_value(json_object_get(e, "index"));
        const json_t *from = json_object_get(e, "from");
        snprintf(key, sizeof(key), "%d", index);
        bool movable = sv->movable && !json_object_get(moves, key) && !from &&
                       (!sv->s || index < sv->s->replicas);
        const char *role = str(e, "role");
        bool secondary = role && strcmp(role, "secondary") == 0;
        add_replica(m, s, spec, e, reported, movable, secondary);
        if (json_is_object(from)) { /* the old replica of a move under way still runs */
            json_t *old =
                json_pack("{s:i, s:O?, s:O?}", "index", index, "node",
                          json_object_get(from, "node"), "rid", json_object_get(from, "rid"));
            int r = add_replica(m, s, spec, old, reported, false, secondary);
            if (r != BL_NONE)
                m->reps.v[r].index = -1; /* not one of the service's replicas for its spread */
            json_decref(old);
        }
    }
}

/* Services sharing a metric are related, transitively: a union-find. */
static int root(int *parent, int i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

static void relate(bl_model_t *m)
{
    int *parent = malloc((m->nsvcs + 1) * sizeof(int));
    int first[CV_MAX_METRICS];
    for (size_t k = 0; k < CV_MAX_METRICS; k++)
        first[k] = BL_NONE;
    for (size_t s = 0; s < m->nsvcs; s++) {
        parent[s] = (int)s;
        for (size_t k = 0; k < m->nmetrics; k++) {
            if (!m->svcs[s].metric[k])
                continue;
            if (first[k] == BL_NONE)
                first[k] = (int)s;
            else
                parent[root(parent, (int)s)] = root(parent, first[k]);
        }
    }
    for (size_t s = 0; s < m->nsvcs; s++)
        m->svcs[s].group = root(parent, (int)s);
    free(parent);
}

static void spread_init(bl_model_t *m)
{
    for (size_t s = 0; s < m->nsvcs; s++) {
        bl_service_t *sv = &m->svcs[s];
        sv->domcnt = calloc(m->ndomains + 1, sizeof(int));
        sv->inv = calloc(m->ndomains + 1, 1);
        int f = sv->s ? feasibility(m, sv->s) : BL_NONE;
        if (f != BL_NONE) {
            sv->feas = m->feas_list.v[f];
            memcpy(sv->inv, sv->feas + m->nnodes, m->ndomains);
        }
    }
    for (size_t r = 0; r < m->reps.n; r++) {
        const bl_replica_t *rp = &m->reps.v[r];
        bl_service_t *sv = &m->svcs[rp->svc];
        if (rp->index < 0)
            continue;
        cv_vec_push(&sv->reps, (int)r);
        for (size_t l = 0; l < m->ndomlevels; l++) {
            int d = m->nodes[rp->node].dom[l];
            sv->domcnt[d]++;
            sv->inv[d] = 1;
        }
    }
}

static void build_services(bl_model_t *m)
{
    const json_t *services = json_object_get(m->model, "services");
    m->svcs = calloc(json_object_size(services) + 1, sizeof(*m->svcs));
    json_t *parents = json_object(), *recs = json_array();
    const char *id;
    const json_t *v;
    json_object_foreach((json_t *)services, id, v)
    {
        json_t *rec = record(v);
        if (!rec)
            continue;
        json_array_append_new(recs, rec);
        add_service(m, id, rec, parents);
    }
    /* an affinity parent stays where its children follow it */
    size_t i = 0;
    json_object_foreach((json_t *)services, id, v)
    {
        if (i >= m->nsvcs || strcmp(m->svcs[i].id, id) != 0)
            continue;
        const json_t *rec = json_array_get(recs, i);
        char key[512];
        snprintf(key, sizeof(key), "%s\t%s", str(rec, "stack") ? str(rec, "stack") : "",
                 str(rec, "resource") ? str(rec, "resource") : "");
        if (json_object_get(parents, key))
            m->svcs[i].movable = false;
        i++;
    }
    for (size_t r = 0; r < m->reps.n; r++)
        if (!m->svcs[m->reps.v[r].svc].movable)
            m->reps.v[r].movable = false;
    json_decref(parents);
    json_decref(recs);
    relate(m);
    spread_init(m);
}

/* ---------------------------------------------------------------- the pass's model */

int cv__bl_model_build(bl_model_t *m, const json_t *model, const json_t *state, char *errstr,
                       size_t errstr_size)
{
    memset(m, 0, sizeof(*m));
    m->model = model;
    m->now = json_number_value(json_object_get(model, "now"));
    m->moves = json_array();
    m->feas_cache = json_object();
    json_t *settings = cv__rc_json(json_object_get(model, "settings"));
    m->settings = cv_balance_settings(settings, errstr, errstr_size);
    json_decref(settings);
    if (!m->settings)
        return CV_EVALIDATE;
    int rc = load_cluster(m, errstr, errstr_size);
    if (rc)
        return rc;
    build_nodes(m);
    const char *metric;
    json_t *e;
    json_object_foreach(json_object_get(m->settings, "metrics"), metric, e)
    {
        int k = metric_index(m, metric, true);
        if (k != BL_NONE)
            m->used[k] = true;
    }
    if (m->nnodes)
        build_services(m);
    m->per_type = cv__bl_setting(m->settings, "SeparateBalancingStrategyPerNodeType") != 0;
    cv__bl_state_read(m, state);
    return 0;
}

void cv__bl_model_free(bl_model_t *m)
{
    for (size_t i = 0; i < m->nnodes; i++) {
        free(m->nodes[i].dom);
        cv_vec_free(&m->nodes[i].reps);
    }
    for (size_t s = 0; s < m->nsvcs; s++) {
        cv_service_free(m->svcs[s].s);
        free(m->svcs[s].domcnt);
        free(m->svcs[s].inv);
        cv_vec_free(&m->svcs[s].reps);
    }
    for (size_t f = 0; f < m->feas_list.n; f++)
        free(m->feas_list.v[f]);
    for (size_t s = 0; s < m->nscopes; s++)
        json_decref(m->scopes[s].entries);
    cv_vec_free(&m->feas_list);
    free(m->scopes);
    free(m->svcs);
    cv_vec_free(&m->reps);
    free(m->nodes);
    free(m->types);
    cv_vec_free(&m->domlevel);
    free(m->levdom);
    free(m->levstart);
    json_decref(m->feas_cache);
    json_decref(m->moves);
    json_decref(m->state);
    json_decref(m->settings);
    cv_cluster_free(m->c);
}

/* ---------------------------------------------------------------- moves */

void cv__bl_apply(bl_model_t *m, int r, int to)
{
    bl_replica_t *rp = &m->reps.v[r];
    bl_node_t *a = &m->nodes[rp->node], *b = &m->nodes[to];
    bl_service_t *sv = &m->svcs[rp->svc];
    for (size_t k = 0; k < m->nmetrics; k++) {
        a->load[k] -= rp->load[k];
        b->load[k] += rp->load[k];
        a->declared[k] -= rp->declared[k];
        b->declared[k] += rp->declared[k];
    }
    for (size_t l = 0; l < m->ndomlevels; l++) {
        sv->domcnt[a->dom[l]]--;
        sv->domcnt[b->dom[l]]++;
    }
    node_drop(a, r);
    cv_vec_push(&b->reps, r);
    rp->node = to;
    rp->moved = true;
}

void cv__bl_record(bl_model_t *m, int r, int from, int to, const char *reason, const char *detail)
{
    const bl_replica_t *rp = &m->reps.v[r];
    json_array_append_new(m->moves,
                          json_pack("{s:s, s:i, s:s, s:s, s:s, s:s}", "svc", m->svcs[rp->svc].id,
                                    "index", rp->index, "from", m->nodes[from].cn->name, "to",
                                    m->nodes[to].cn->name, "reason", reason, "detail", detail));
}
