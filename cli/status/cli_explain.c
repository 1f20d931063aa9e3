/*
 * Explaining a live placement (cli_explain.h): the live model turned into
 * the placement library's inputs, cv_place run once with every live replica
 * kept and once per replica with the others kept.
 */
#include "cli_explain.h"

#include "cv_placement.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_or(const json_t *o, const char *key, const char *fallback)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && s[0] ? s : fallback;
}

static const json_t *at(const json_t *model, const char *part, const char *name)
{
    return json_object_get(json_object_get(model, part), name);
}

static void copy_keys(json_t *into, const json_t *from, const char *const *keys)
{
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(from, keys[i]);
        if (v && !json_is_null(v))
            json_object_set(into, keys[i], v);
    }
}

/* Whether `rid` is a replica id of service `svc` ("<svc>/<index>/<n>"). */
static bool rid_of(const char *rid, const char *svc)
{
    size_t n = strlen(svc);
    return strncmp(rid, svc, n) == 0 && rid[n] == '/';
}

/* ------------------------------------------------------------------------ */
/* The inputs of cv_place                                                   */
/* ------------------------------------------------------------------------ */

/* The declared load of the replicas of other services assigned to a node. */
static json_t *others_load(const json_t *assign, const char *svc)
{
    json_t *load = json_object();
    const char *rid, *metric;
    json_t *spec, *v;
    json_object_foreach((json_t *)assign, rid, spec)
    {
        if (rid_of(rid, svc))
            continue;
        json_object_foreach(json_object_get(spec, "load"), metric, v)
        {
            json_int_t have = json_integer_value(json_object_get(load, metric));
            if (json_is_integer(v) && json_integer_value(v) > 0)
                json_object_set_new(load, metric, json_integer(have + json_integer_value(v)));
        }
    }
    return load;
}

static const char *node_status(const json_t *model, const json_t *rec, const char *node)
{
    if (json_integer_value(at(model, "alive", node)) <= 0)
        return "down";
    const char *admin = str_or(at(model, "node", node), "admin", "enabled");
    const json_t *until = json_object_get(json_object_get(rec, "blocklist"), node);
    bool blocked = json_is_number(until) &&
                   json_number_value(until) > json_number_value(json_object_get(model, "now"));
    return strcmp(admin, "enabled") == 0 && !blocked ? "up" : "disabled";
}

static json_t *manifest_of(const json_t *model, const json_t *rec, const char *svc)
{
    static const char *const top[] = {"settings", "description", NULL};
    static const char *const node_keys[] = {"type",       "faultDomain", "upgradeDomain",
                                            "properties", "capacities",  NULL};
    const json_t *settings = json_object_get(model, "settings");
    json_t *manifest = json_object();
    if (json_is_object(settings) && !json_object_get(settings, "error"))
        copy_keys(manifest, settings, top);
    const json_t *t = json_object_get(settings, "nodeTypes");
    json_t *types = json_is_object(t) ? json_deep_copy(t) : json_object();
    json_t *nodes = json_array();
    const char *name;
    json_t *desc;
    json_object_foreach(json_object_get(model, "nodes"), name, desc)
    {
        if (json_object_get(desc, "error"))
            continue; /* unreadable: the engine cannot place on it either */
        json_t *entry = json_object();
        copy_keys(entry, desc, node_keys);
        const char *type = json_string_value(json_object_get(entry, "type"));
        if (type && !json_object_get(types, type))
            json_object_set_new(types, type, json_object());
        json_object_set_new(entry, "name", json_string(name));
        json_object_set_new(entry, "status", json_string(node_status(model, rec, name)));
        json_object_set_new(entry, "load", others_load(at(model, "assign", name), svc));
        json_array_append_new(nodes, entry);
    }
    json_object_set_new(manifest, "nodeTypes", types);
    json_object_set_new(manifest, "nodes", nodes);
    return manifest;
}

/* The service's live replicas but index `except` (-1: all) that sit on a
 * node the cluster knows, as a layout. */
static json_t *layout_of(const json_t *model, const json_t *desc, const json_t *placement,
                         long except)
{
    json_t *placements = json_array();
    json_int_t replicas = json_integer_value(json_object_get(desc, "replicas"));
    size_t i;
    json_t *p;
    json_array_foreach(placement, i, p)
    {
        json_int_t index = json_integer_value(json_object_get(p, "index"));
        const char *node = str_or(p, "node", "");
        const json_t *ndesc = at(model, "nodes", node);
        if (index == except || index < 0 || index >= replicas || !ndesc ||
            json_object_get(ndesc, "error"))
            continue;
        json_array_append_new(placements, json_pack("{s:I, s:s, s:s}", "replica", index, "role",
                                                    str_or(p, "role", "instance"), "node", node));
    }
    json_t *entry = json_deep_copy(desc);
    json_object_set_new(entry, "placements", placements);
    return json_pack("{s:[o]}", "services", entry);
}

/* cv_place on fresh copies of the inputs (loading a layout adds its loads
 * to the cluster, so each run loads its own). */
static json_t *place(const json_t *manifest, const json_t *desc, const json_t *layout, char *errstr,
                     size_t errstr_size)
{
    cv_cluster_t *c = NULL;
    cv_service_t *s = NULL;
    cv_layout_t *l = NULL;
    json_t *result = NULL;
    if (cv_cluster_load(manifest, "the live cluster", &c, errstr, errstr_size) == 0 &&
        cv_service_load(desc, "the service spec", &s, errstr, errstr_size) == 0 &&
        cv_layout_load(layout, "the live placement", c, &l, errstr, errstr_size) == 0) {
        result = cv_place(c, s, l, CV_PLACE_NEW);
        if (!result)
            snprintf(errstr, errstr_size, "out of memory");
    }
    cv_layout_free(l);
    cv_service_free(s);
    cv_cluster_free(c);
    return result;
}

/* ------------------------------------------------------------------------ */
/* The explanation                                                          */
/* ------------------------------------------------------------------------ */

static const json_t *entry_for(const json_t *list, json_int_t index)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (json_integer_value(json_object_get(e, "replica")) == index)
            return e;
    }
    return NULL;
}

static const json_t *live_entry(const json_t *placement, json_int_t index)
{
    size_t i;
    json_t *p;
    json_array_foreach(placement, i, p)
    {
        if (json_integer_value(json_object_get(p, "index")) == index)
            return p;
    }
    return NULL;
}

/* Where cv_place puts replica `index` with the other live replicas kept. */
static json_t *replica_choice(const json_t *model, const json_t *manifest, const json_t *desc,
                              const json_t *placement, json_int_t index, char *errstr,
                              size_t errstr_size)
{
    json_t *layout = layout_of(model, desc, placement, (long)index);
    json_t *result = place(manifest, desc, layout, errstr, errstr_size);
    json_decref(layout);
    if (!result)
        return NULL;
    const json_t *live = live_entry(placement, index);
    const json_t *chosen = entry_for(json_object_get(result, "placements"), index);
    const json_t *unplaced = entry_for(json_object_get(result, "unplaced"), index);
    const char *node = live ? str_or(live, "node", NULL) : NULL;
    const char *choice = chosen ? str_or(chosen, "node", NULL) : NULL;
    json_t *r = json_pack("{s:I, s:o, s:o, s:o, s:b}", "index", index, "node",
                          node ? json_string(node) : json_null(), "role",
                          live ? json_string(str_or(live, "role", "instance")) : json_null(),
                          "choice", choice ? json_string(choice) : json_null(), "moves",
                          node && choice && strcmp(node, choice) != 0);
    if (unplaced)
        json_object_set(r, "eliminationSequence", json_object_get(unplaced, "eliminationSequence"));
    json_decref(result);
    return r;
}

json_t *cli_explain(const json_t *model, const char *svc, char *errstr, size_t errstr_size)
{
    const json_t *rec = at(model, "services", svc);
    const json_t *spec = json_object_get(rec, "spec");
    if (!rec) {
        snprintf(errstr, errstr_size, "service %s has no record in the cluster", svc);
        return NULL;
    }
    if (!json_is_object(spec) || json_object_get(spec, "error")) {
        snprintf(errstr, errstr_size, "service %s: its spec is unreadable (%s)", svc,
                 str_or(spec, "error", "missing"));
        return NULL;
    }
    const json_t *placement = json_object_get(rec, "placement");
    json_t *manifest = manifest_of(model, rec, svc),
           *desc = cv_reconcile_service_desc(
               spec, svc, (int)json_integer_value(json_object_get(spec, "replicas")));
    json_t *layout = layout_of(model, desc, placement, -1);
    /* A service scaled to 0 replicas has nothing to place (cv_service_load
     * wants at least one, and the description says so). */
    json_int_t n = json_integer_value(json_object_get(spec, "replicas"));
    json_t *check =
        n < 1 ? json_pack("{s:s, s:s, s:[], s:[], s:[], s:[], s:n}", "service", svc, "policy", "",
                          "placements", "unplaced", "health", "warnings", "rejected")
              : place(manifest, desc, layout, errstr, errstr_size);
    json_t *replicas = json_array(), *doc = NULL;
    for (json_int_t i = 0; check && i < n; i++) {
        json_t *r = replica_choice(model, manifest, desc, placement, i, errstr, errstr_size);
        if (!r)
            break;
        json_array_append_new(replicas, r);
    }
    if (check && (json_int_t)json_array_size(replicas) == (n > 0 ? n : 0)) {
        const json_t *rejected = json_object_get(rec, "rejected");
        doc = json_pack(
            "{s:s, s:s, s:s, s:s, s:O, s:o, s:o, s:O, s:O, s:O}", "svc", svc, "stack_name",
            str_or(rec, "stack_name", ""), "resource", str_or(rec, "resource", ""), "state",
            str_or(rec, "state", ""), "gen",
            json_object_get(rec, "gen") ? json_object_get(rec, "gen") : json_null(), "placement",
            json_is_array(placement) ? json_incref((json_t *)placement) : json_array(), "unplaced",
            json_is_array(json_object_get(rec, "unplaced"))
                ? json_incref(json_object_get(rec, "unplaced"))
                : json_array(),
            "rejected", rejected ? rejected : json_null(), "check", check, "replicas", replicas);
    }
    json_decref(check);
    json_decref(replicas);
    json_decref(layout);
    json_decref(desc);
    json_decref(manifest);
    return doc;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

static void print_sequence(FILE *f, const json_t *seq, const char *indent)
{
    size_t i, j;
    json_t *step, *node;
    json_array_foreach(seq, i, step)
    {
        const json_t *gone = json_object_get(step, "eliminated");
        fprintf(f, "%s%-20s eliminated %zu node(s)%s", indent, str_or(step, "constraint", "?"),
                json_array_size(gone), json_array_size(gone) ? ":" : "");
        json_array_foreach(gone, j, node)
        {
            fprintf(f, " %s", json_string_value(node));
        }
        fputc('\n', f);
    }
}

static void print_replicas(FILE *f, const json_t *doc)
{
    fprintf(f, "  %-6s %-16s %-10s %s\n", "INDEX", "NODE", "ROLE", "PLACED NOW ON (others kept)");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "replicas"), i, r)
    {
        const char *choice = str_or(r, "choice", NULL);
        fprintf(f, "  %-6lld %-16s %-10s %s%s\n",
                (long long)json_integer_value(json_object_get(r, "index")),
                str_or(r, "node", "(unplaced)"), str_or(r, "role", "-"),
                choice ? choice : "no node",
                json_is_true(json_object_get(r, "moves")) ? " (differs)" : "");
    }
    json_array_foreach(json_object_get(doc, "replicas"), i, r)
    {
        const json_t *seq = json_object_get(r, "eliminationSequence");
        if (!seq)
            continue;
        fprintf(f, "Replica %lld finds no node; elimination sequence:\n",
                (long long)json_integer_value(json_object_get(r, "index")));
        print_sequence(f, seq, "  ");
    }
}

static void print_list(FILE *f, const char *title, const json_t *list, const char *key)
{
    if (json_array_size(list) == 0)
        return;
    fprintf(f, "%s:\n", title);
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (json_is_string(e))
            fprintf(f, "  %s\n", json_string_value(e));
        else
            fprintf(f, "  %s %s: %s\n", str_or(e, "state", ""), str_or(e, "property", ""),
                    str_or(e, key, ""));
    }
}

char *cli_explain_text(const json_t *doc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    const json_t *check = json_object_get(doc, "check");
    fprintf(f,
            "Service %s of stack %s (%s): %zu replica(s) placed, state %s, generation %s,\n"
            "distribution %s\n",
            str_or(doc, "resource", "?"), str_or(doc, "stack_name", "?"), str_or(doc, "svc", "?"),
            json_array_size(json_object_get(doc, "placement")), str_or(doc, "state", "?"),
            str_or(doc, "gen", "?"), str_or(check, "policy", "?"));
    print_replicas(f, doc);
    size_t i;
    json_t *u;
    json_array_foreach(json_object_get(doc, "unplaced"), i, u)
    {
        /* The engine's own record, when it says more than cv_place now. */
        json_int_t index = json_integer_value(json_object_get(u, "index"));
        const json_t *now = NULL, *r;
        size_t j;
        json_array_foreach(json_object_get(doc, "replicas"), j, r)
        {
            if (json_integer_value(json_object_get(r, "index")) == index)
                now = json_object_get(r, "eliminationSequence");
        }
        const json_t *seq = json_object_get(u, "eliminationSequence");
        if (now && json_equal(now, seq))
            continue;
        fprintf(f, "The engine left replica %lld unplaced; its elimination sequence then:\n",
                (long long)index);
        print_sequence(f, seq, "  ");
    }
    print_list(f, "Health of the live placement", json_object_get(check, "health"), "description");
    print_list(f, "Warnings", json_object_get(check, "warnings"), "description");
    const json_t *rejected = json_object_get(doc, "rejected");
    if (rejected && !json_is_null(rejected)) {
        char *r = json_is_string(rejected) ? strdup(json_string_value(rejected))
                                           : json_dumps(rejected, JSON_COMPACT);
        fprintf(f, "Rejected: %s\n", r ? r : "");
        free(r);
    }
    fclose(f);
    return text;
}
