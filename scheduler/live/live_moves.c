/*
 * live_moves — the moves of a constraint check or balancing pass made
 * desired state (docs/crm.md "Moves"): grouped by service, each service's
 * moves written into its record by svc_move.lua under the manager's lease
 * value (refused, FENCED, once the lease is another's: the rest is then
 * dropped), then the service reconciled at once, so its reconcile starts
 * the move (and writes its moving / moved events) without waiting for the
 * next placement pass. One service at a time, like the placement pass.
 */
#include "live_internal.h"

#include "cv_base.h"
#include "cv_contract.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct moves_pass {
    cv_worker_t *w;
    char lease[128];
    cv__live_go_on_fn go_on;
    cv__live_pass_cb cb;
    void *arg;
    json_t *by_svc; /* svc -> [move, ...] */
    void *iter;     /* the service whose moves are written next */
    int written;
    bool fenced;
} moves_pass_t;

static void write_next(moves_pass_t *m);

static void pass_end(moves_pass_t *m)
{
    cv__live_pass_cb cb = m->cb;
    void *arg = m->arg;
    int n = m->fenced ? -1 : m->written;
    json_decref(m->by_svc);
    free(m);
    cb(arg, n);
}

static const char *current_svc(const moves_pass_t *m)
{
    return json_object_iter_key(m->iter);
}

static void on_reconciled(void *arg, int rc, const char *err)
{
    moves_pass_t *m = arg;
    if (rc && rc != CV_EVALIDATE && rc != CV_ENOENT)
        cv_warn("crm: reconcile of service %s after its moves: %s", current_svc(m), err);
    m->iter = json_object_iter_next(m->by_svc, m->iter);
    write_next(m);
}

static void on_moved(cv_redis_t *redis, redisReply *rep, void *ud)
{
    (void)redis;
    moves_pass_t *m = ud;
    const char *svc = current_svc(m);
    switch (cv_reply_answer(CV_SCRIPT_SVC_MOVE, rep)) {
    case CV_ANSWER_OK: {
        long long n = cv_reply_int(rep, CV_SVC_MOVE_R_WRITTEN);
        size_t planned = json_array_size(json_object_iter_value(m->iter));
        if ((size_t)n < planned)
            cv_info("crm: service %s: %zu of its %zu moves skipped (the replica is no longer on "
                    "the node planned on, or already moving)",
                    svc, planned - (size_t)n, planned);
        m->written += (int)n;
        cv_metrics_add(CV_METRIC_MOVES, (uint64_t)n);
        if (n > 0) {
            cv_live_reconcile(m->w, svc, on_reconciled, m);
            return;
        }
        break;
    }
    case CV_ANSWER_FENCED:
        cv_warn("crm: moves of service %s refused: the lease is %s, not %s (fenced)", svc,
                cv_reply_str(rep, CV_SVC_MOVE_R_HOLDER)[0] ? cv_reply_str(rep, CV_SVC_MOVE_R_HOLDER)
                                                           : "free",
                m->lease);
        m->fenced = true;
        pass_end(m);
        return;
    case CV_ANSWER_GONE:
        break;
    default:
        cv_warn("crm: moves of service %s: %s", svc,
                rep && rep->type == REDIS_REPLY_ERROR ? rep->str : "Redis did not answer");
        pass_end(m);
        return;
    }
    m->iter = json_object_iter_next(m->by_svc, m->iter);
    write_next(m);
}

static void write_next(moves_pass_t *m)
{
    if (!m->iter || !m->go_on(m->arg)) {
        pass_end(m);
        return;
    }
    const char *svc = current_svc(m);
    char key[CV_KEY_MAX], lease[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, svc);
    cv_key(lease, sizeof(lease), CV_KEY_CRM, NULL, 0, NULL);
    char *moves = json_dumps(json_object_iter_value(m->iter), JSON_COMPACT);
    cv_svc_move_keys_t keys = {.svc = key, .lease = lease};
    cv_svc_move_args_t args = {.lease_value = m->lease, .moves = moves ? moves : "[]"};
    int err =
        cv_redis_call(m->w->redis, CV_SCRIPT_SVC_MOVE, keys.v, args.v, 0, NULL, NULL, on_moved, m);
    free(moves);
    if (err)
        pass_end(m);
}

void cv__live_moves_apply(cv_worker_t *w, const char *lease_value, const json_t *moves,
                          cv__live_go_on_fn go_on, cv__live_pass_cb cb, void *arg)
{
    moves_pass_t *m = calloc(1, sizeof(*m));
    if (!m) {
        cb(arg, 0);
        return;
    }
    m->w = w;
    snprintf(m->lease, sizeof(m->lease), "%s", lease_value);
    m->go_on = go_on;
    m->cb = cb;
    m->arg = arg;
    m->by_svc = json_object();
    size_t i;
    json_t *mv;
    json_array_foreach(moves, i, mv)
    {
        const char *svc = json_string_value(json_object_get(mv, "svc"));
        if (!svc)
            continue;
        json_t *list = json_object_get(m->by_svc, svc);
        if (!list) {
            list = json_array();
            json_object_set_new(m->by_svc, svc, list);
        }
        json_array_append_new(
            list, json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?}", "index", json_object_get(mv, "index"),
                            "from", json_object_get(mv, "from"), "to", json_object_get(mv, "to"),
                            "reason", json_object_get(mv, "reason"), "detail",
                            json_object_get(mv, "detail")));
    }
    m->iter = json_object_iter(m->by_svc);
    write_next(m);
}
