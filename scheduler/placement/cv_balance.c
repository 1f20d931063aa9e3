/*
 * cv_balance — one pass of the cluster resource manager's planner: build
 * the pass's model (balance_model.c), measure the balance
 * (balance_score.c), run the phase — the constraint check
 * (balance_constraint.c) or balancing (balance_search.c) — measure again
 * for "after", and say why nothing moved when something is out of balance.
 * The settings are balance_settings.c's.
 */
#include "balance_internal.h"

#include <stdio.h>

json_t *cv_balance(const json_t *model, cv_balance_phase_t phase, const json_t *state, char *errstr,
                   size_t errstr_size)
{
    bl_model_t m;
    if (cv__bl_model_build(&m, model, state, errstr, errstr_size)) {
        cv__bl_model_free(&m);
        return NULL;
    }
    cv__bl_stats(&m, false);
    if (phase == CV_BALANCE_CONSTRAINT)
        cv__bl_constraint(&m);
    else
        cv__bl_balance(&m);
    cv__bl_stats(&m, true);
    /* below an activity threshold is balancing's reason, not the constraint check's */
    const char *quiet = phase == CV_BALANCE_BALANCING && m.quiet[0] ? m.quiet : NULL;
    const char *why = json_array_size(m.moves) ? NULL : m.why[0] ? m.why : quiet;
    json_t *new_state = cv__bl_state_write(&m, state, phase);
    json_t *result = json_pack("{s:s, s:O, s:o, s:i, s:s?, s:o}", "phase",
                               phase == CV_BALANCE_CONSTRAINT ? "constraint" : "balancing", "moves",
                               m.moves, "imbalance", cv__bl_imbalance(&m), "throttled",
                               (int)m.throttled, "why", why, "state", new_state);
    cv__bl_model_free(&m);
    if (!result)
        snprintf(errstr, errstr_size, "out of memory");
    return result;
}
