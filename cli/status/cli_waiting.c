/*
 * Why a stack is waiting: the analysis of what its traversal keeps.
 */
#include "cli_waiting.h"

#include "cli_duration.h"
#include "cli_output.h"
#include "cv_base.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The record                                                               */
/* ------------------------------------------------------------------------ */

static const char *field(const json_t *obj, const char *name)
{
    const char *s = json_string_value(json_object_get(obj, name));
    return s ? s : "";
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The record's stored JSON field `name` parsed (a new reference), or NULL. */
static json_t *stored_json(const json_t *record, const char *name)
{
    const char *text = field(record, name);
    return text[0] ? cli_json_parse(text, NULL) : NULL;
}

static bool is_stack_id(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]))
            return false;
    return true;
}

static void add_child_id(json_t *ids, const json_t *data)
{
    const char *id = json_string_value(json_object_get(data, "stack"));
    if (is_stack_id(id))
        json_array_append_new(ids, json_string(id));
}

json_t *cli_waiting_child_ids(const json_t *record)
{
    json_t *ids = json_array();
    json_t *data = stored_json(record, "data"), *old = stored_json(record, "old");
    add_child_id(ids, data);
    size_t i;
    json_t *v;
    json_array_foreach(old, i, v)
    {
        add_child_id(ids, json_object_get(v, "data"));
    }
    json_decref(data);
    json_decref(old);
    return ids;
}

const char *cli_waiting_resource(const char *node)
{
    return (node[0] == 'u' || node[0] == 'c') && node[1] == '/' ? node + 2 : node;
}

/* ------------------------------------------------------------------------ */
/* One action in progress                                                   */
/* ------------------------------------------------------------------------ */

/* The version of a resource an action is on: the record's own fields, or
 * those of a replaced version (an entry of `old`). */
typedef struct version {
    const char *action, *type, *physical_id;
    double started; /* 0: unknown */
    const json_t *data;
    long long traversal; /* that took the action; 0: unknown */
    bool replaced;
} version_t;

static double number_of(const json_t *v)
{
    if (json_is_number(v))
        return json_number_value(v);
    if (json_is_string(v))
        return strtod(json_string_value(v), NULL);
    return 0;
}

static void set_seconds(json_t *obj, const char *name, double secs)
{
    json_object_set_new(obj, name, json_real(round(secs * 1000) / 1000));
}

/* An action an older traversal began: an update or rollback lets it end
 * before it acts on the resource itself (Heat's retrigger), a delete or a
 * cancel stops it. Said in the reason. */
static void note_older(json_t *e, const version_t *v, const cli_wait_stack_t *s)
{
    json_object_set_new(e, "traversal", json_integer(v->traversal));
    if (v->traversal <= 0 || v->traversal >= s->traversal)
        return;
    char reason[768];
    snprintf(reason, sizeof(reason), "%s — an action of traversal %lld, which this traversal %s",
             json_string_value(json_object_get(e, "reason")), v->traversal,
             s->stops_older ? "stops" : "lets end before it acts");
    json_object_set_new(e, "reason", json_string(reason));
}

static json_t *entry_of(const cli_wait_node_t *n)
{
    return json_pack("{s:s, s:s}", "resource", cli_waiting_resource(n->node), "node", n->node);
}

/* The action's running time: "since" (Unix seconds) and "for". */
static void set_since(json_t *e, double started, double now)
{
    if (started > 0) {
        set_seconds(e, "since", started);
        set_seconds(e, "for", now - started);
    } else {
        json_object_set_new(e, "since", json_null());
        json_object_set_new(e, "for", json_null());
    }
}

/* The child stack a nested version waits for, named with its status. */
static void wait_child(json_t *e, const char *id, const json_t *children)
{
    const json_t *c = json_object_get(children, id);
    json_t *child = json_pack("{s:s}", "id", id);
    char reason[512];
    if (!json_is_true(json_object_get(c, "exists"))) {
        json_object_set_new(child, "exists", json_false());
        snprintf(reason, sizeof(reason), "waits for nested stack %s, which does not exist (yet)",
                 id);
    } else {
        json_object_set_new(child, "exists", json_true());
        json_object_set_new(child, "name", json_string(field(c, "name")));
        json_object_set_new(child, "status", json_string(field(c, "status")));
        json_object_set_new(child, "reason", json_string(field(c, "reason")));
        json_int_t done = json_integer_value(json_object_get(c, "done"));
        json_int_t total = json_integer_value(json_object_get(c, "total"));
        json_object_set_new(child, "done", json_integer(done));
        json_object_set_new(child, "total", json_integer(total));
        snprintf(reason, sizeof(reason),
                 "waits for nested stack %s (%s): %s, %lld/%lld done (see 'convergectl status %s')",
                 field(c, "name"), id, field(c, "status"), (long long)done, (long long)total, id);
    }
    json_object_set_new(e, "waiting_on", json_string("child_stack"));
    json_object_set_new(e, "child", child);
    json_object_set_new(e, "reason", json_string(reason));
}

/* A group's update_policy walks its child one traversal per batch
 * (cv_rtype.h): between two, the child is complete and the pause runs. */
static void wait_walk(json_t *e, const json_t *walk)
{
    const char *status = json_string_value(json_object_get(json_object_get(e, "child"), "status"));
    size_t at = (size_t)json_integer_value(json_object_get(walk, "at"));
    size_t steps = (size_t)json_integer_value(json_object_get(walk, "steps"));
    if (!status || !cv_str_ends_with(status, "_COMPLETE") || at + 1 >= steps)
        return;
    char reason[512];
    snprintf(reason, sizeof(reason),
             "batch %zu of %zu done; the next begins pause_time (%g s) after it (update_policy)",
             at + 1, steps, json_number_value(json_object_get(walk, "pause")));
    json_object_set_new(e, "reason", json_string(reason));
}

/* A wait the type recorded in the version's data: {"wait": seconds} (a
 * TestResource's wait_secs; negative: until an update or a delete). */
static void wait_timed(json_t *e, const version_t *v, double now)
{
    double wait = number_of(json_object_get(v->data, "wait"));
    char reason[512], span[32], left[32];
    json_object_set_new(e, "waiting_on", json_string("type"));
    if (wait < 0) {
        json_object_set_new(e, "wait", json_real(wait));
        json_object_set_new(e, "left", json_null());
        snprintf(reason, sizeof(reason),
                 "the observer waits for %s: its %s waits forever (wait_secs < 0), until an "
                 "update or a delete",
                 v->type, v->action);
    } else {
        cli_format_duration(wait, span, sizeof(span));
        set_seconds(e, "wait", wait);
        if (v->started > 0) {
            double remaining = v->started + wait - now;
            set_seconds(e, "left", remaining);
            if (remaining >= 0) {
                cli_format_duration(remaining, left, sizeof(left));
                snprintf(reason, sizeof(reason),
                         "the observer waits for %s: its %s takes %s (%s left)", v->type, v->action,
                         span, left);
            } else {
                cli_format_duration(-remaining, left, sizeof(left));
                snprintf(reason, sizeof(reason),
                         "the observer waits for %s: its %s took %s (due %s ago: the next look "
                         "completes it)",
                         v->type, v->action, span, left);
            }
        } else {
            json_object_set_new(e, "left", json_null());
            snprintf(reason, sizeof(reason), "the observer waits for %s: its %s takes %s", v->type,
                     v->action, span);
        }
    }
    json_object_set_new(e, "reason", json_string(reason));
}

#define WAIT_CONDITION "OS::Heat::WaitCondition"

/* Paused at a hook of the current traversal (Heat's breakpoints), as the
 * stack's hooks hash says: Heat's event text, and how to clear it. */
static bool paused_at_hook(const cli_wait_node_t *n, const cli_wait_stack_t *s, double now,
                           json_t **out)
{
    const char *hook = json_string_value(json_object_get(n->hook, "waiting"));
    if (!hook || !hook[0] ||
        (long long)number_of(json_object_get(n->hook, "traversal")) != s->traversal)
        return false;
    const char *action = strncmp(hook, "pre-", 4) == 0 ? hook + 4 : hook;
    char upper[32], reason[512];
    size_t k = 0;
    for (; action[k] && k + 1 < sizeof(upper); k++)
        upper[k] = (char)toupper((unsigned char)action[k]);
    upper[k] = '\0';
    snprintf(reason, sizeof(reason),
             "%s paused until Hook %s is cleared ('convergectl hook-clear %s %s', or a signal "
             "{\"unset_hook\": \"%s\"})",
             upper, hook, s->name ? s->name : "STACK", cli_waiting_resource(n->node), hook);
    json_t *e = entry_of(n);
    json_object_set_new(e, "action", json_string(upper));
    set_since(e, number_of(json_object_get(n->hook, "since")), now);
    json_object_set_new(e, "waiting_on", json_string("hook"));
    json_object_set_new(e, "hook", json_string(hook));
    json_object_set_new(e, "reason", json_string(reason));
    *out = e;
    return true;
}

bool cli_waiting_watches(const json_t *record, char *ref, size_t size)
{
    if (strcmp(field(record, "type"), WAIT_CONDITION) != 0)
        return false;
    json_t *props = stored_json(record, "props");
    const char *handle = json_string_value(json_object_get(props, "handle"));
    bool named = handle && handle[0];
    if (named)
        snprintf(ref, size, "%s", handle);
    json_decref(props);
    return named;
}

/* A WaitCondition waits for `count` signals to its handle, at most
 * `timeout` seconds from its action's start (Heat's HeatWaitCondition). */
static void wait_signals(json_t *e, const version_t *v, const json_t *props, const json_t *watched,
                         double now)
{
    json_t *count = json_object_get(props, "count");
    long long wanted = count ? (long long)number_of(count) : 1;
    double timeout = number_of(json_object_get(props, "timeout"));
    json_t *data = stored_json(watched, "data");
    size_t got = json_array_size(json_object_get(data, "signals"));
    json_decref(data);
    const char *handle = field(watched, "name");
    char reason[512], left[32] = "";
    if (v->started > 0 && timeout > 0) {
        double remaining = v->started + timeout - now;
        set_seconds(e, "left", remaining);
        cli_format_duration(remaining > 0 ? remaining : 0, left, sizeof(left));
    } else {
        json_object_set_new(e, "left", json_null());
    }
    snprintf(reason, sizeof(reason),
             "waits for signals to its handle%s%s: %zu of %lld received%s%s%s",
             handle[0] ? " " : "", handle, got, wanted, left[0] ? " (times out in " : "", left,
             left[0] ? ")" : "");
    json_object_set_new(e, "waiting_on", json_string("signal"));
    json_object_set_new(e, "handle", json_string(handle));
    json_object_set_new(e, "signals", json_integer((json_int_t)got));
    json_object_set_new(e, "signals_wanted", json_integer(wanted));
    json_object_set_new(e, "reason", json_string(reason));
}

/* A Converge::Service waits for its replicas: how many are healthy, and
 * the first few that are not, with why (unplaced: the elimination
 * sequence in short; a report's reason; the node down). */
static void wait_replicas(json_t *e, const json_t *rows)
{
    enum { SHOWN = 3 };
    char reason[1024], rest[768] = "";
    size_t healthy = 0, shown = 0, len = 0, i;
    json_t *row, *waiting = json_array();
    json_array_foreach(rows, i, row)
    {
        const char *status = json_string_value(json_object_get(row, "status"));
        if (status && strcmp(status, "healthy") == 0) {
            healthy++;
            continue;
        }
        const char *why = json_string_value(json_object_get(row, "reason"));
        const char *node = json_string_value(json_object_get(row, "node"));
        json_array_append_new(waiting, json_pack("{s:O, s:s, s:s?, s:s?}", "name",
                                                 json_object_get(row, "name"), "status",
                                                 status ? status : "", "node", node, "reason",
                                                 why && why[0] ? why : NULL));
        if (shown++ < SHOWN && len < sizeof(rest))
            len += (size_t)snprintf(rest + len, sizeof(rest) - len, "; %s %s%s%s%s%s",
                                    json_string_value(json_object_get(row, "name")),
                                    status ? status : "", node ? " on " : "", node ? node : "",
                                    why && why[0] ? ": " : "", why && why[0] ? why : "");
    }
    if (shown > SHOWN && len < sizeof(rest))
        snprintf(rest + len, sizeof(rest) - len, "; and %zu more", shown - SHOWN);
    snprintf(reason, sizeof(reason), "waits for its replicas: %zu of %zu healthy%s", healthy,
             json_array_size(rows), rest);
    json_object_set_new(e, "waiting_on", json_string("replicas"));
    json_object_set_new(e, "replicas", waiting);
    json_object_set_new(e, "reason", json_string(reason));
}

/* Why the observers have not completed the action yet. */
static void observed_reason(json_t *e, const version_t *v, const cli_wait_node_t *n, double now)
{
    const char *child = json_string_value(json_object_get(v->data, "stack"));
    if (!v->replaced && strcmp(v->type, WAIT_CONDITION) == 0 && v->action[0] &&
        strcmp(v->action, "DELETE") != 0) {
        json_t *props = stored_json(n->record, "props");
        wait_signals(e, v, props, n->watched, now);
        json_decref(props);
    } else if (is_stack_id(child)) {
        wait_child(e, child, n->children);
        wait_walk(e, json_object_get(v->data, "walk"));
    } else if (!v->replaced && n->replicas && json_array_size(n->replicas) > 0) {
        wait_replicas(e, n->replicas);
    } else if (json_is_number(json_object_get(v->data, "wait"))) {
        wait_timed(e, v, now);
    } else {
        char reason[512];
        snprintf(reason, sizeof(reason), "the observer waits for %s to report its %s complete",
                 v->type[0] ? v->type : "the type", v->action);
        json_object_set_new(e, "waiting_on", json_string("type"));
        json_object_set_new(e, "reason", json_string(reason));
    }
}

/* The version a node's action is on, when it is recorded in progress: the
 * record's for an update node or a cleanup of the resource itself; for a
 * cleanup of replaced versions, the one whose delete started first. */
static bool version_in_progress(const cli_wait_node_t *n, const json_t *data, const json_t *old,
                                version_t *v)
{
    const char *status = field(n->record, "status");
    bool cleanup = n->node[0] == 'c';
    memset(v, 0, sizeof(*v));
    if (cleanup ? strcmp(status, "DELETE_IN_PROGRESS") == 0 : ends_with(status, "_IN_PROGRESS")) {
        v->action = field(n->record, "action");
        v->type = field(n->record, "type");
        v->physical_id = field(n->record, "physical_id");
        v->started = strtod(field(n->record, "started"), NULL);
        v->traversal = strtoll(field(n->record, "traversal"), NULL, 10);
        v->data = data;
        return true;
    }
    if (!cleanup)
        return false;
    size_t i;
    json_t *o;
    json_array_foreach(old, i, o)
    {
        double started = number_of(json_object_get(o, "started"));
        if (strcmp(field(o, "status"), "DELETE_IN_PROGRESS") != 0 ||
            (v->replaced && started >= v->started))
            continue;
        v->action = "DELETE";
        v->type = field(o, "type");
        v->physical_id = field(o, "physical_id");
        v->started = started;
        v->data = json_object_get(o, "data");
        v->replaced = true;
    }
    return v->replaced;
}

static void set_version(json_t *e, const version_t *v)
{
    json_object_set_new(e, "action", json_string(v->action));
    json_object_set_new(e, "type", json_string(v->type));
    json_object_set_new(e, "physical_id", json_string(v->physical_id));
    json_object_set_new(e, "replaced", json_boolean(v->replaced));
}

/* The worker of a lease token "<worker>@<incarnation>:<n>" (a worker id has
 * no '@'), or "<worker>:<n>" as engines before incarnations wrote it. */
static json_t *worker_of(const char *token)
{
    const char *end = strchr(token, '@');
    if (!end)
        end = strrchr(token, ':');
    return json_stringn(token, end ? (size_t)(end - token) : strlen(token));
}

/* An engine holds the resource's lease: it is acting now. */
static json_t *leased(const cli_wait_node_t *n, const version_t *v, bool recorded, double now)
{
    json_t *e = entry_of(n);
    json_t *worker = worker_of(n->lease);
    if (recorded)
        set_version(e, v);
    else
        json_object_set_new(e, "action", json_string(""));
    set_since(e, recorded ? v->started : 0, now);
    char reason[512];
    snprintf(reason, sizeof(reason), "an engine is acting on it, under the lease of worker %s",
             json_string_value(worker));
    json_object_set_new(e, "waiting_on", json_string("lease"));
    json_object_set_new(e, "worker", worker);
    set_seconds(e, "lease_ttl", (double)n->lease_ttl_ms / 1000.0);
    json_object_set_new(e, "reason", json_string(reason));
    return e;
}

/* ------------------------------------------------------------------------ */
/* The stack                                                                */
/* ------------------------------------------------------------------------ */

static bool ready(const cli_wait_node_t *n)
{
    return n->preds >= 0 && (n->preds == 0 || n->satisfied >= n->preds);
}

/* Sorts in_action by how long each has been running (longest first, the
 * unknown last), then by resource name; `ready` by resource name. */
static int by_since(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    const json_t *sx = json_object_get(x, "since"), *sy = json_object_get(y, "since");
    if (json_is_number(sx) != json_is_number(sy))
        return json_is_number(sx) ? -1 : 1;
    if (json_is_number(sx) && json_number_value(sx) != json_number_value(sy))
        return json_number_value(sx) < json_number_value(sy) ? -1 : 1;
    int c = strcmp(field(x, "resource"), field(y, "resource"));
    return c ? c : strcmp(field(x, "node"), field(y, "node"));
}

static int by_resource(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    int c = strcmp(field(x, "resource"), field(y, "resource"));
    return c ? c : strcmp(field(x, "node"), field(y, "node"));
}

static json_t *sorted(json_t *list, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(list);
    json_t **v = calloc(n ? n : 1, sizeof(*v));
    if (!v)
        return list;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(list, i));
    qsort(v, n, sizeof(*v), cmp);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, v[i]);
    free(v);
    json_decref(list);
    return out;
}

/* Sorts each node into in_action, ready or blocked. */
static void classify(const cli_wait_node_t *n, const cli_wait_stack_t *s, double now,
                     json_t *in_action, json_t *ready_list, long long *blocked)
{
    if (n->done)
        return;
    json_t *data = stored_json(n->record, "data"), *old = stored_json(n->record, "old");
    version_t v;
    memset(&v, 0, sizeof(v));
    bool recorded = n->record && version_in_progress(n, data, old, &v);
    json_t *hooked = NULL;
    if (n->lease) {
        json_array_append_new(in_action, leased(n, &v, recorded, now));
    } else if (!ready(n)) {
        (*blocked)++;
    } else if (paused_at_hook(n, s, now, &hooked)) {
        json_array_append_new(in_action, hooked);
    } else if (recorded) {
        json_t *e = entry_of(n);
        set_version(e, &v);
        set_since(e, v.started, now);
        observed_reason(e, &v, n, now);
        note_older(e, &v, s);
        json_array_append_new(in_action, e);
    } else {
        json_t *e = entry_of(n);
        json_object_set_new(e, "reason",
                            json_string("ready: its CHECK job is published, no worker holds its "
                                        "lease yet"));
        json_array_append_new(ready_list, e);
    }
    json_decref(data);
    json_decref(old);
}

static void stack_phase(json_t *doc, const cli_wait_stack_t *s)
{
    const char *phase, *reason;
    if (s->expanded != s->traversal) {
        phase = "expanding";
        reason = "the traversal's graph is not written yet: its STACK job is published, an "
                 "engine is to expand it";
    } else if (s->done >= s->total) {
        phase = "finishing";
        reason = "every node is done: the traversal's end is to be recorded (or waits for an "
                 "older action still to be recorded)";
    } else {
        phase = "acting";
        reason = "";
    }
    json_object_set_new(doc, "phase", json_string(phase));
    json_object_set_new(doc, "reason", json_string(reason));
}

json_t *cli_waiting_analyse(const cli_wait_stack_t *s, const cli_wait_node_t *nodes, size_t n,
                            double now, double stalled_after)
{
    json_t *doc = json_object();
    stack_phase(doc, s);
    double last = s->progress > s->updated ? s->progress : s->updated;
    double idle = last > 0 ? now - last : 0;
    set_seconds(doc, "idle", idle > 0 ? idle : 0);
    json_object_set_new(doc, "stalled", json_boolean(last > 0 && idle > stalled_after));
    set_seconds(doc, "stalled_after", stalled_after);
    json_t *in_action = json_array(), *ready_list = json_array();
    long long blocked = 0;
    for (size_t i = 0; s->expanded == s->traversal && i < n; i++)
        classify(&nodes[i], s, now, in_action, ready_list, &blocked);
    json_object_set_new(doc, "in_action", sorted(in_action, by_since));
    json_object_set_new(doc, "ready", sorted(ready_list, by_resource));
    json_object_set_new(doc, "blocked", json_integer(blocked));
    return doc;
}
