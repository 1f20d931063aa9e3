/*
 * balance_state — what the manager remembers between passes (docs/crm.md,
 * {cluster}:crm:status "state"):
 *   {"window": {"since": Unix s, "moves": n},        the global throttle's window
 *    "services": {"<svc>": {"since", "moves"}},      each service's window
 *    "nodeTypes": {"<type>": {"balanced": Unix s}},  last balancing per node type
 *    "balanced": Unix s, "constrained": Unix s}      last pass of each phase
 * A window starts with the first balancing move after the previous one
 * ended (its counting interval passed). The throttles count and hold back
 * balancing moves only: a constraint fix is never throttled (Service
 * Fabric's GlobalMovementThrottleThreshold and
 * MovementPerPartitionThrottleThreshold are the balancing phase's).
 */
#include "balance_internal.h"

#include <stdio.h>

static bool in_window(const json_t *w, double now, double interval, int64_t *moves)
{
    const json_t *since = json_object_get(w, "since");
    if (!json_is_number(since) || now - json_number_value(since) >= interval)
        return false;
    *moves = json_integer_value(json_object_get(w, "moves"));
    return true;
}

void cv__bl_state_read(bl_model_t *m, const json_t *state)
{
    m->old_state = state;
    double thr = cv__bl_setting(m->settings, "GlobalMovementThrottleThreshold");
    double iv = cv__bl_setting(m->settings, "GlobalMovementThrottleCountingInterval");
    int64_t used = 0;
    in_window(json_object_get(state, "window"), m->now, iv, &used);
    m->global_budget = thr <= 0 ? -1 : (int64_t)thr - used < 0 ? 0 : (int64_t)thr - used;
    m->svc_threshold =
        (int64_t)cv__bl_setting(m->settings, "MovementPerPartitionThrottleThreshold");
    double siv = cv__bl_setting(m->settings, "MovementPerPartitionThrottleCountingInterval");
    const json_t *svcs = json_object_get(state, "services");
    for (size_t s = 0; s < m->nsvcs; s++) {
        int64_t n = 0;
        if (in_window(json_object_get(svcs, m->svcs[s].id), m->now, siv, &n))
            m->svcs[s].moves = (int)n;
    }
}

void cv__bl_state_pause(bl_model_t *m)
{
    const json_t *types = json_object_get(m->settings, "nodeTypes");
    const json_t *last = json_object_get(m->old_state, "nodeTypes");
    for (size_t s = 0; m->per_type && s < m->nscopes; s++) {
        bl_scope_t *sc = &m->scopes[s];
        if (!sc->type)
            continue;
        const json_t *iv =
            json_object_get(json_object_get(types, sc->type), "MinLoadBalancingInterval");
        double interval =
            iv ? json_number_value(iv) : cv__bl_setting(m->settings, "MinLoadBalancingInterval");
        const json_t *at = json_object_get(json_object_get(last, sc->type), "balanced");
        sc->paused = json_is_number(at) && m->now - json_number_value(at) < interval;
    }
}

/* A window {"since", "moves"} with `n` more moves. */
static json_t *window_add(const json_t *old, double now, double interval, int n)
{
    int64_t moves = 0;
    if (in_window(old, now, interval, &moves))
        return json_pack("{s:O, s:I}", "since", json_object_get(old, "since"), "moves",
                         (json_int_t)(moves + n));
    return json_pack("{s:f, s:i}", "since", now, "moves", n);
}

json_t *cv__bl_state_write(bl_model_t *m, const json_t *state, cv_balance_phase_t phase)
{
    json_t *out = json_is_object(state) ? json_deep_copy(state) : json_object();
    double now = m->now;
    json_object_set_new(out, phase == CV_BALANCE_BALANCING ? "balanced" : "constrained",
                        json_real(now));
    if (phase != CV_BALANCE_BALANCING)
        return out;
    double iv = cv__bl_setting(m->settings, "GlobalMovementThrottleCountingInterval");
    double siv = cv__bl_setting(m->settings, "MovementPerPartitionThrottleCountingInterval");
    const json_t *w = json_object_get(state, "window");
    int64_t ignored;
    if (m->pass_moves > 0 || in_window(w, now, iv, &ignored))
        json_object_set_new(out, "window", window_add(w, now, iv, m->pass_moves));
    else
        json_object_del(out, "window");
    /* services: keep the windows still open, add this pass's moves */
    json_t *svcs = json_object();
    const char *id;
    json_t *v;
    json_object_foreach(json_object_get(state, "services"), id, v)
    {
        if (in_window(v, now, siv, &ignored))
            json_object_set(svcs, id, v);
    }
    for (size_t s = 0; s < m->nsvcs; s++)
        if (m->svcs[s].pass_moves > 0)
            json_object_set_new(
                svcs, m->svcs[s].id,
                window_add(json_object_get(svcs, m->svcs[s].id), now, siv, m->svcs[s].pass_moves));
    json_object_set_new(out, "services", svcs);
    json_t *types = json_object_get(out, "nodeTypes");
    if (!json_is_object(types)) {
        types = json_object();
        json_object_set_new(out, "nodeTypes", types);
    }
    for (size_t s = 0; s < m->nscopes; s++)
        if (m->scopes[s].balanced && m->scopes[s].type)
            json_object_set_new(types, m->scopes[s].type, json_pack("{s:f}", "balanced", now));
    return out;
}
