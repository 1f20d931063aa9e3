/*
 * live_crm — the cluster resource manager (docs/crm.md): one observer at a
 * time holds its role (live_lease.c) and runs its phases on timers, one at
 * a time, in this order:
 *   refresh     every PLBRefreshGap: the live model read once, nodes
 *               marked down / back, health reports kept (live_nodes.c);
 *   placement   every MinPlacementInterval: every service reconciled
 *               (live_place.c);
 *   constraint  every MinConstraintCheckInterval: cv_balance's constraint
 *               check, its moves written and their services reconciled
 *               (live_moves.c);
 *   balancing   every MinLoadBalancingInterval: the same with balancing,
 *               paused while a service upgrades by upgrade domain; it
 *               runs right after a constraint check that moved nothing,
 *               in the same pass, so it may wait for the next check.
 * Each tick renews the lease (carrying the status fields that changed,
 * live_status.c) and, when the lease is ours and no pass is under way,
 * starts one pass: a refresh, then the first of the other phases that is
 * due, on the model the refresh read. A phase after placement waits for
 * the next refresh, so it plans on what placement did. The settings are
 * read from the model's cluster settings with every refresh.
 *
 * I/O and timing only: what moves is cv_balance's decision, what a
 * service's replicas become is cv_reconcile's.
 */
#include "live_internal.h"

#include "cv_placement.h"
#include "cv_base.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { P_REFRESH, P_PLACEMENT, P_CONSTRAINT, P_BALANCING, P__COUNT } phase_t;

static const char *const phase_names[P__COUNT] = {"refresh", "placement", "constraint",
                                                  "balancing"};
static const char *const phase_settings[P__COUNT] = {"PLBRefreshGap", "MinPlacementInterval",
                                                     "MinConstraintCheckInterval",
                                                     "MinLoadBalancingInterval"};
static const double phase_defaults[P__COUNT] = {0.1, 1, 1, 5};

/* The tick never waits longer than this, whatever PLBRefreshGap says: it
 * also renews the lease, which must not lapse between two ticks. */
#define TICK_MAX_MS 500

typedef struct crm {
    cv_worker_t *w;
    uv_timer_t timer;
    uint64_t tick_ms;
    cv__crm_lease_t lease;
    cv__crm_status_t status;
    json_t *settings;       /* cv_balance_settings of the cluster's settings */
    char settings_err[512]; /* the last bad settings reported, not to repeat it */
    char balance_err[512];  /* the planner's last error reported, likewise */
    json_t *state;          /* the planner's state (cv_balance.h) */
    bool ran[P__COUNT];
    uint64_t last[P__COUNT]; /* uv_now when each phase last started */
    /* the pass under way */
    bool busy;
    json_t *model;
    double now;       /* the model's time (Redis's clock) */
    uint64_t started; /* uv_hrtime when the phase started */
    phase_t phase;
    /* the throttle window: moves made and held back since `since` */
    double window_since;
    int window_moves, window_throttled;
    bool stopped, timer_closed;
} crm_t;

static void maybe_free(crm_t *c)
{
    if (c->stopped && c->timer_closed && !c->busy && !c->lease.calling) {
        cv__crm_status_free(&c->status);
        json_decref(c->settings);
        json_decref(c->state);
        free(c);
    }
}

static bool go_on(void *arg)
{
    const crm_t *c = arg;
    return !c->stopped && !c->w->stopping && c->lease.value[0];
}

static double elapsed_ms(const crm_t *c)
{
    return (double)(uv_hrtime() - c->started) / 1e6;
}

static double setting(const crm_t *c, const char *name, double dflt)
{
    const json_t *v = json_object_get(c->settings, name);
    return json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) : dflt;
}

static uint64_t interval_ms(const crm_t *c, phase_t p)
{
    return (uint64_t)(setting(c, phase_settings[p], phase_defaults[p]) * 1000);
}

static bool due(const crm_t *c, phase_t p)
{
    return !c->ran[p] || uv_now(c->w->loop) - c->last[p] >= interval_ms(c, p);
}

static void pass_end(crm_t *c)
{
    json_decref(c->model);
    c->model = NULL;
    c->busy = false;
    maybe_free(c);
}

static void start_phase(crm_t *c, phase_t p);

static void phase_done(crm_t *c, int moves)
{
    cv__crm_status_phase(&c->status, phase_names[c->phase], c->now, elapsed_ms(c), moves);
    if (c->phase == P_CONSTRAINT && moves == 0 && go_on(c) && due(c, P_BALANCING)) {
        start_phase(c, P_BALANCING);
        return;
    }
    pass_end(c);
}

/* ---------------------------------------------------------------- settings */

static void apply_settings(crm_t *c, const json_t *model)
{
    /* text as Redis holds it, or an object once `crm settings` were laid over it */
    const json_t *stored = json_object_get(model, "settings");
    const char *text = json_string_value(stored);
    json_t *parsed = !json_is_string(stored) ? json_incref((json_t *)stored)
                     : text[0]               ? json_loads(text, 0, NULL)
                                             : NULL;
    if (!json_is_object(parsed)) {
        json_decref(parsed);
        parsed = json_object();
    }
    char err[512] = "";
    json_t *s = cv_balance_settings(parsed, err, sizeof(err));
    json_decref(parsed);
    if (!s) {
        if (strcmp(err, c->settings_err) != 0)
            cv_warn("crm: the cluster settings are not valid (%s): the manager keeps its "
                    "defaults",
                    err);
        snprintf(c->settings_err, sizeof(c->settings_err), "%s", err);
        json_t *none = json_object();
        s = cv_balance_settings(none, err, sizeof(err));
        json_decref(none);
    } else {
        c->settings_err[0] = '\0';
    }
    if (s) {
        json_decref(c->settings);
        c->settings = s;
    }
    uint64_t tick = interval_ms(c, P_REFRESH);
    tick = tick < 10 ? 10 : tick > TICK_MAX_MS ? TICK_MAX_MS : tick;
    if (tick != c->tick_ms) {
        c->tick_ms = tick;
        uv_timer_set_repeat(&c->timer, tick);
    }
}

/* ---------------------------------------------------------------- constraint check, balancing */

/* The service upgrading by upgrade domain, if one is: balancing waits for
 * it (docs/crm.md "Upgrades by upgrade domain"). */
static const char *upgrading(const json_t *model)
{
    const char *svc;
    json_t *v;
    json_object_foreach(json_object_get(model, "services"), svc, v)
    {
        const char *text = json_string_value(json_object_get(v, "rollout"));
        json_t *r = text ? json_loads(text, 0, NULL) : NULL;
        const char *state = json_string_value(json_object_get(r, "state"));
        bool busy = json_is_true(json_object_get(r, "by_upgrade_domain")) && state &&
                    strcmp(state, "complete") != 0 && strcmp(state, "rolled_back") != 0;
        json_decref(r);
        if (busy)
            return svc;
    }
    return NULL;
}

static void set_why(crm_t *c, const char *why)
{
    json_t *v = json_string(why ? why : "");
    cv__crm_status_set(&c->status, "why", v);
    json_decref(v);
}

/* Moves made and throttled in the current GlobalMovementThrottleCountingInterval. */
static void count_window(crm_t *c, int moves, int throttled)
{
    double interval = setting(c, "GlobalMovementThrottleCountingInterval", 600);
    if (c->window_since == 0 || c->now - c->window_since >= interval) {
        c->window_since = c->now;
        c->window_moves = c->window_throttled = 0;
    }
    c->window_moves += moves;
    c->window_throttled += throttled;
    json_t *w =
        json_pack("{s:f, s:f, s:i, s:i}", "since", (double)(long long)c->window_since, "interval",
                  interval, "moves", c->window_moves, "throttled", c->window_throttled);
    cv__crm_status_set(&c->status, "window", w);
    json_decref(w);
}

static void on_moves_written(void *arg, int written)
{
    crm_t *c = arg;
    if (written < 0) {
        cv__crm_lease_drop(&c->lease, "a move was refused by the lease's fencing");
        written = 0;
    }
    count_window(c, written, 0);
    phase_done(c, written);
}

static void log_moves(const json_t *moves)
{
    size_t i;
    json_t *m;
    json_array_foreach(moves, i, m)
    {
        const char *detail = json_string_value(json_object_get(m, "detail"));
        cv_info("crm: move replica %lld of service %s from %s to %s (%s%s%s)",
                (long long)json_integer_value(json_object_get(m, "index")),
                json_string_value(json_object_get(m, "svc")),
                json_string_value(json_object_get(m, "from")),
                json_string_value(json_object_get(m, "to")),
                json_string_value(json_object_get(m, "reason")), detail ? ": " : "",
                detail ? detail : "");
    }
}

static void run_balance(crm_t *c, cv_balance_phase_t phase)
{
    bool balancing = phase == CV_BALANCE_BALANCING;
    const char *svc = balancing ? upgrading(c->model) : NULL;
    if (svc) {
        char why[512];
        snprintf(why, sizeof(why),
                 "balancing is paused while service %s upgrades by upgrade domain", svc);
        set_why(c, why);
        phase_done(c, 0);
        return;
    }
    char err[1024] = "";
    json_t *r = cv_balance(c->model, phase, c->state, err, sizeof(err));
    if (!r) {
        if (strcmp(err, c->balance_err) != 0)
            cv_warn("crm: %s: %s", phase_names[c->phase], err);
        snprintf(c->balance_err, sizeof(c->balance_err), "%s", err);
        if (balancing)
            set_why(c, err);
        phase_done(c, 0);
        return;
    }
    c->balance_err[0] = '\0';
    json_t *state = json_object_get(r, "state");
    if (json_is_object(state)) {
        json_decref(c->state);
        c->state = json_incref(state);
        cv__crm_status_set(&c->status, "state", state);
    }
    if (balancing) {
        cv__crm_status_set(&c->status, "imbalance", json_object_get(r, "imbalance"));
        set_why(c, json_string_value(json_object_get(r, "why")));
    }
    int throttled = (int)json_integer_value(json_object_get(r, "throttled"));
    const json_t *moves = json_object_get(r, "moves");
    if (json_array_size(moves) == 0) {
        count_window(c, 0, throttled);
        json_decref(r);
        phase_done(c, 0);
        return;
    }
    count_window(c, 0, throttled);
    log_moves(moves);
    json_t *held = json_incref((json_t *)moves);
    json_decref(r);
    cv__live_moves_apply(c->w, c->lease.value, held, go_on, on_moves_written, c);
    json_decref(held);
}

/* ---------------------------------------------------------------- the pass */

static void on_placed(void *arg, int reconciled)
{
    (void)reconciled;
    phase_done(arg, 0);
}

static void start_phase(crm_t *c, phase_t p)
{
    c->phase = p;
    c->ran[p] = true;
    c->last[p] = uv_now(c->w->loop);
    c->started = uv_hrtime();
    switch (p) {
    case P_PLACEMENT:
        cv__live_place_all(c->w, c->model, go_on, on_placed, c);
        break;
    case P_CONSTRAINT:
        run_balance(c, CV_BALANCE_CONSTRAINT);
        break;
    case P_BALANCING:
        run_balance(c, CV_BALANCE_BALANCING);
        break;
    default:
        pass_end(c);
        break;
    }
}

static void on_model(void *arg, json_t *model, int rc, const char *err)
{
    crm_t *c = arg;
    if (!model) {
        cv_debug("crm: refresh: %s (%d)", err, rc);
        pass_end(c);
        return;
    }
    c->model = model;
    if (!go_on(c)) {
        pass_end(c);
        return;
    }
    c->now = json_number_value(json_object_get(model, "now"));
    apply_settings(c, model);
    cv__live_refresh_nodes(c->w, model);
    cv__crm_status_phase(&c->status, "refresh", c->now, elapsed_ms(c), 0);
    /* Balancing only ever follows a constraint check that moved nothing, on
     * the same model (phase_done): it never plans on a cluster with a
     * violation to fix, such as a load reported since the last check. */
    for (phase_t p = P_PLACEMENT; p < P_BALANCING; p++)
        if (due(c, p)) {
            start_phase(c, p);
            return;
        }
    pass_end(c);
}

/* ---------------------------------------------------------------- the tick */

static void on_lease(void *arg, bool held, bool taken, const char *state)
{
    crm_t *c = arg;
    if (taken) {
        /* A new holder runs every phase at once, with the planner's memory
         * its predecessor left in the status. */
        memset(c->ran, 0, sizeof(c->ran));
        json_decref(c->state);
        c->state = state[0] ? json_loads(state, 0, NULL) : NULL;
        if (!json_is_object(c->state)) {
            json_decref(c->state);
            c->state = json_object();
        }
        c->window_since = 0;
    }
    if (!held) {
        cv__crm_status_forget(&c->status);  /* written again whole by a next holding */
        cv_metrics_health_reports(0, 0, 0); /* counted by the holder alone */
    }
    if (!held || c->busy || c->stopped || c->w->stopping || !due(c, P_REFRESH)) {
        maybe_free(c);
        return;
    }
    c->busy = true;
    c->phase = P_REFRESH;
    c->ran[P_REFRESH] = true;
    c->last[P_REFRESH] = uv_now(c->w->loop);
    c->started = uv_hrtime();
    cv__live_read(c->w, on_model, c);
}

static void on_tick(uv_timer_t *t)
{
    crm_t *c = t->data;
    if (c->w->stopping || c->lease.calling || !cv_redis_connected(c->w->redis))
        return;
    char *fields = c->lease.value[0] ? cv__crm_status_take(&c->status) : NULL;
    if (cv__crm_lease_renew(&c->lease, fields, on_lease, c) != 0 && fields)
        cv__crm_status_forget(&c->status);
    free(fields);
}

void *cv_live_loop_start(cv_worker_t *w)
{
    crm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->w = w;
    cv__crm_lease_init(&c->lease, w);
    cv__crm_status_init(&c->status);
    c->state = json_object();
    c->tick_ms = (uint64_t)(phase_defaults[P_REFRESH] * 1000);
    uv_timer_init(w->loop, &c->timer);
    c->timer.data = c;
    uv_timer_start(&c->timer, on_tick, c->tick_ms, c->tick_ms);
    return c;
}

static void on_timer_closed(uv_handle_t *h)
{
    crm_t *c = h->data;
    c->timer_closed = true;
    maybe_free(c);
}

void cv_live_loop_stop(void *loop)
{
    crm_t *c = loop;
    if (!c)
        return;
    c->stopped = true;
    cv__crm_lease_release(&c->lease);
    uv_timer_stop(&c->timer);
    uv_close((uv_handle_t *)&c->timer, on_timer_closed);
}
