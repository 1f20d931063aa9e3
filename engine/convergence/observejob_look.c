/*
 * The looks of the OBSERVE step machine (cv_observejob.h): what the types
 * need read first — the resource a waiting type watches (signal_watch.lua,
 * which also registers this version as its waiter, so that a signal has
 * the observers look at once), the status of nested versions' child
 * stacks, the cluster state of Converge::Service versions — one read after
 * the other; then each version's type is asked and the decision taken on
 * what they answered.
 */
#include "cv__observejob.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool cleanup_look(const cv_observejob_t *o)
{
    return o->msg.phase == CV_PHASE_CLEANUP && !o->msg.watch;
}

/* ------------------------------------------------------------------------
 * Looking
 * ------------------------------------------------------------------------ */

/* One version the type is asked about, and what it answered. */
typedef struct looker {
    cv_rstate_t st;
    bool asked;
} looker_t;

/* Asks the version's type, handing a nested version the child stack read. */
static void ask(const cv_observejob_t *o, looker_t *l, cv_look_t *look, const char *type_name,
                const cv_version_t *v, double now)
{
    const cv_rtype_t *type = cv_rtype_lookup(type_name);
    if (!type)
        return; /* the decision fails it */
    cv_record_state(&l->st, v, now);
    const char *pid = v->physical_id ? v->physical_id : "";
    const json_t *snap = json_object_get(o->children, pid);
    if (snap)
        json_object_set(l->st.data, "child", (json_t *)snap);
    if (o->watched && v->props && type->watches) /* the current version of an update node */
        json_object_set(l->st.data, "watched", o->watched);
    const json_t *cluster = json_object_get(o->services, pid);
    if (cluster && cv_service_is(type_name))
        json_object_set(l->st.data, "cluster", (json_t *)cluster);
    l->asked = true;
    look->observed = type->observe(&l->st, cv_observe_action(&o->msg, &o->rec));
    look->retry_at = l->st.retry_at;
    look->reason = l->st.reason;
    look->attrs = l->st.attrs;
    look->data = l->st.data;
}

static void look_at_current(const cv_observejob_t *o, looker_t *l, cv_look_t *look, double now)
{
    const cv_record_t *rec = &o->rec;
    bool cleanup = cleanup_look(o);
    if (!cv_observe_wants_look(&o->msg, rec->status))
        return;
    cv_version_t v = {.stack = o->msg.stack,
                      .resource = o->msg.resource,
                      .uuid = cleanup ? NULL : rec->uuid,
                      .physical_id = rec->physical_id,
                      .props = cleanup ? NULL : rec->props,
                      .data = rec->data,
                      .attrs = cleanup ? NULL : rec->attrs,
                      .started = rec->started};
    ask(o, l, look, rec->type, &v, now);
}

static void look_at_old(const cv_observejob_t *o, const json_t *entry, looker_t *l, cv_look_t *look,
                        double now)
{
    if (!cv_observe_wants_look(&o->msg, json_string_value(json_object_get(entry, "status"))))
        return;
    cv_version_t v = {.stack = o->msg.stack,
                      .resource = o->msg.resource,
                      .physical_id = json_string_value(json_object_get(entry, "physical_id")),
                      .data = json_object_get(entry, "data"),
                      .started = json_number_value(json_object_get(entry, "started"))};
    ask(o, l, look, json_string_value(json_object_get(entry, "type")), &v, now);
}

/* Looks at every version the node watches, then settles. */
static const cv_flow_t *look(cv_observejob_t *o, double now)
{
    size_t nold = cleanup_look(o) ? json_array_size(o->rec.old) : 0;
    looker_t current = {0}, *old = calloc(nold + 1, sizeof(*old));
    cv_look_t *old_looks = calloc(nold + 1, sizeof(*old_looks));
    if (!old || !old_looks) {
        free(old);
        free(old_looks);
        return cv__observejob_end(o, CV_FLOW_RETRY);
    }
    cv_observe_looks_t looks = {.old = old_looks, .nold = nold};
    look_at_current(o, &current, &looks.current, now);
    for (size_t i = 0; i < nold; i++)
        look_at_old(o, json_array_get(o->rec.old, i), &old[i], &old_looks[i], now);
    cv_observe_decide(&o->msg, &o->rec, &looks, now, &o->out);
    cv_record_state_clear(&current.st);
    for (size_t i = 0; i < nold; i++)
        cv_record_state_clear(&old[i].st);
    free(old);
    free(old_looks);
    return cv__observejob_settle(o);
}

/* ------------------------------------------------------------------------
 * Services: their cluster state is read first
 * ------------------------------------------------------------------------ */

/* The Converge::Service versions this job observes: svc id -> whether a
 * delete is observed (every node's reports are read then). */
static json_t *services_to_read(const cv_observejob_t *o)
{
    json_t *wants = json_object();
    if (cv_service_is(o->rec.type) && o->rec.physical_id[0] &&
        cv_observe_wants_look(&o->msg, o->rec.status))
        json_object_set_new(wants, o->rec.physical_id,
                            json_boolean(cv_observe_action(&o->msg, &o->rec) == CV_ACTION_DELETE));
    size_t i;
    const json_t *e;
    json_array_foreach(cleanup_look(o) ? o->rec.old : NULL, i, e)
    {
        const char *pid = json_string_value(json_object_get(e, "physical_id"));
        if (pid && pid[0] && cv_service_is(json_string_value(json_object_get(e, "type"))))
            json_object_set_new(wants, pid, json_true());
    }
    return wants;
}

static json_t *json_or(const char *text, json_t *dflt)
{
    json_t *v = json_loads(text, 0, NULL);
    if (!v)
        return dflt;
    json_decref(dflt);
    return v;
}

static json_t *nodes_of(const cv_resp_t *flat)
{
    json_t *nodes = json_object();
    for (size_t i = 0; i + 2 < cv_resp_count(flat); i += 3) {
        json_object_set_new(nodes, cv_resp_str(flat, i),
                            json_pack("{s:b, s:s}", "up",
                                      strcmp(cv_resp_str(flat, i + 1), "1") == 0, "address",
                                      cv_resp_str(flat, i + 2)));
    }
    return nodes;
}

/* rid -> report, each with the node that reported it added as "node". */
static json_t *reports_of(const cv_resp_t *flat)
{
    json_t *reports = json_object();
    for (size_t i = 0; i + 2 < cv_resp_count(flat); i += 3) {
        json_t *report = json_loads(cv_resp_str(flat, i + 2), 0, NULL);
        if (!json_is_object(report)) {
            json_decref(report);
            report = json_object();
        }
        json_object_set_new(report, "node", json_string(cv_resp_str(flat, i)));
        json_object_set_new(reports, cv_resp_str(flat, i + 1), report);
    }
    return reports;
}

/* Why the live engine rejected the service, or why it waits for nothing
 * but its blocklist: the text, or the description of the JSON object it
 * stores ({"reason", "description", ...}); "" when neither (absent, empty
 * or null). */
static json_t *why_of(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v)
        return json_string(text);
    const char *desc = json_string_value(json_object_get(v, "description"));
    if (!desc)
        desc = json_string_value(json_object_get(v, "reason"));
    json_t *why = json_string(json_is_string(v) ? json_string_value(v) : desc ? desc : "");
    json_decref(v);
    return why;
}

/* A service's cluster state as cv_service.h describes it, or NULL. */
static json_t *service_snapshot(const cv_resp_t *rep)
{
    if (cv_resp_count(rep) != CV_SVC_LOOK_R_BLOCKED + 1)
        return NULL;
    const char *state = cv_resp_str(rep, CV_SVC_LOOK_R_STATE);
    return json_pack("{s:b, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "exists",
                     state[0] != '\0', "state", state, "gen",
                     (json_int_t)strtoll(cv_resp_str(rep, CV_SVC_LOOK_R_GEN), NULL, 10),
                     "placement", json_or(cv_resp_str(rep, CV_SVC_LOOK_R_PLACEMENT), json_array()),
                     "unplaced", json_or(cv_resp_str(rep, CV_SVC_LOOK_R_UNPLACED), json_array()),
                     "rejected", why_of(cv_resp_str(rep, CV_SVC_LOOK_R_REJECTED)), "blocked",
                     why_of(cv_resp_str(rep, CV_SVC_LOOK_R_BLOCKED)), "nodes",
                     nodes_of(cv_resp_at(rep, CV_SVC_LOOK_R_NODES)), "reports",
                     reports_of(cv_resp_at(rep, CV_SVC_LOOK_R_REPORTS)), "rollout",
                     json_or(cv_resp_str(rep, CV_SVC_LOOK_R_ROLLOUT), json_null()));
}

/* The replies of the reads under way, each made a snapshot under the name
 * it was read for; NULL when any read failed. */
static json_t *snapshots(const cv_observejob_t *o, const cv_flow_in_t *in,
                         json_t *(*snapshot)(const cv_resp_t *))
{
    json_t *all = json_object();
    for (size_t i = 0; i < json_array_size(o->reading); i++) {
        json_t *snap = snapshot(cv_flow_reply(in, i));
        if (!snap) {
            json_decref(all);
            return NULL;
        }
        json_object_set_new(all, json_string_value(json_array_get(o->reading, i)), snap);
    }
    return all;
}

const cv_flow_t *cv__observejob_services(cv_observejob_t *o, const cv_flow_in_t *in)
{
    o->services = snapshots(o, in, service_snapshot);
    if (!o->services)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    return look(o, in->now);
}

/* Notes that the next read is of `name`; the name, kept until the reads
 * are answered. */
static const char *reading(cv_observejob_t *o, const char *name)
{
    json_array_append_new(o->reading, json_string(name));
    return json_string_value(json_array_get(o->reading, json_array_size(o->reading) - 1));
}

static void start_reading(cv_observejob_t *o)
{
    json_decref(o->reading);
    o->reading = json_array();
}

/* One svc_look.lua per service (the {cluster} slot), in one round trip. */
static const cv_flow_t *read_services_then_look(cv_observejob_t *o, double now)
{
    json_t *wants = services_to_read(o);
    if (json_object_size(wants) == 0) {
        json_decref(wants);
        return look(o, now);
    }
    start_reading(o);
    const char *svc;
    const json_t *all;
    bool made = true;
    json_object_foreach(wants, svc, all)
    {
        cv_call_t *call = cv__flow_call(&o->buf, true);
        if (!call) {
            made = false;
            break;
        }
        cv_call_svc_look(call, reading(o, svc), json_is_true(all));
    }
    json_decref(wants);
    if (!made)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    o->state = CV_OBSERVEJOB_SERVICES;
    return cv__observejob_end(o, CV_FLOW_IO);
}

/* ------------------------------------------------------------------------
 * Nested versions: their child stacks are read first
 * ------------------------------------------------------------------------ */

static bool is_nested(const char *type_name)
{
    const cv_rtype_t *t = cv_rtype_lookup(type_name);
    return t && t->nested;
}

/* The child stacks the versions this job observes are waiting on. */
static json_t *children_to_read(const cv_observejob_t *o)
{
    json_t *ids = json_array();
    if (is_nested(o->rec.type))
        json_array_append_new(ids, json_string(o->rec.physical_id));
    size_t i;
    const json_t *e;
    json_array_foreach(o->rec.old, i, e)
    {
        const char *pid = json_string_value(json_object_get(e, "physical_id"));
        if (pid && is_nested(json_string_value(json_object_get(e, "type"))))
            json_array_append_new(ids, json_string(pid));
    }
    return ids;
}

static const char *const CHILD_FIELDS[] = {"status",  "traversal", "reason",
                                           "outputs", "reruns",    "updated"};

/* A child stack's status as the nested types read it, or NULL. */
static json_t *child_snapshot(const cv_resp_t *rep)
{
    if (cv_resp_count(rep) != 6)
        return NULL;
    const char *status = cv_resp_str(rep, 0);
    json_t *outputs = json_loads(cv_resp_str(rep, 3), 0, NULL);
    return json_pack("{s:b, s:s, s:I, s:s, s:o, s:I, s:f}", "exists", status[0] != '\0', "status",
                     status, "traversal", (json_int_t)strtoll(cv_resp_str(rep, 1), NULL, 10),
                     "reason", cv_resp_str(rep, 2), "outputs", outputs ? outputs : json_object(),
                     "reruns", (json_int_t)strtoll(cv_resp_str(rep, 4), NULL, 10), "updated",
                     strtod(cv_resp_str(rep, 5), NULL));
}

const cv_flow_t *cv__observejob_children(cv_observejob_t *o, const cv_flow_in_t *in)
{
    o->children = snapshots(o, in, child_snapshot);
    if (!o->children)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    return read_services_then_look(o, in->now);
}

/* One HMGET per child (each in its own hash tag, so never one script), in
 * one round trip. */
static const cv_flow_t *read_children_then_look(cv_observejob_t *o, double now)
{
    json_t *ids = children_to_read(o);
    if (json_array_size(ids) == 0) {
        json_decref(ids);
        return read_services_then_look(o, now);
    }
    start_reading(o);
    size_t i;
    const json_t *id;
    int rc = 0;
    json_array_foreach(ids, i, id)
    {
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_STACK, reading(o, json_string_value(id)), 0, NULL);
        const char *argv[8] = {"HMGET", key};
        memcpy(argv + 2, CHILD_FIELDS, sizeof(CHILD_FIELDS));
        rc |= cv__flow_argv(&o->buf, true, 8, argv);
    }
    json_decref(ids);
    if (rc)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    o->state = CV_OBSERVEJOB_CHILDREN;
    return cv__observejob_end(o, CV_FLOW_IO);
}

/* ------------------------------------------------------------------------
 * Waiting types: the resource they watch is read first
 * ------------------------------------------------------------------------ */

const cv_flow_t *cv__observejob_watched(cv_observejob_t *o, const cv_flow_in_t *in)
{
    const cv_resp_t *rep = cv_flow_reply(in, 0);
    if (cv_resp_answer(CV_SCRIPT_SIGNAL_WATCH, rep) != CV_ANSWER_VALUE ||
        cv_resp_count(rep) != CV_SIGNAL_WATCH_R_DATA + 1)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    json_t *data = json_loads(cv_resp_str(rep, CV_SIGNAL_WATCH_R_DATA), 0, NULL);
    o->watched =
        json_pack("{s:s, s:s, s:o}", "name", cv_resp_str(rep, CV_SIGNAL_WATCH_R_NAME), "type",
                  cv_resp_str(rep, CV_SIGNAL_WATCH_R_TYPE), "data", data ? data : json_object());
    return read_children_then_look(o, in->now);
}

/* The reference a waiting type's current version watches, or NULL. */
static const char *watched_ref(const cv_observejob_t *o)
{
    const cv_rtype_t *type = cv_rtype_lookup(o->rec.type);
    if (!type || !type->watches || o->msg.phase != CV_PHASE_UPDATE)
        return NULL;
    return json_string_value(json_object_get(o->rec.props, type->watches));
}

const cv_flow_t *cv__observejob_read_then_look(cv_observejob_t *o, double now)
{
    const char *ref = watched_ref(o);
    if (!ref)
        return read_children_then_look(o, now);
    cv_call_t *call = cv__flow_call(&o->buf, true);
    if (!call)
        return cv__observejob_end(o, CV_FLOW_RETRY);
    cv_call_signal_watch(call, &o->msg, ref, o->rec.version);
    o->state = CV_OBSERVEJOB_WATCHED;
    return cv__observejob_end(o, CV_FLOW_IO);
}
